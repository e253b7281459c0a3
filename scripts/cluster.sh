#!/usr/bin/env bash
# A real local Kubernetes control plane for tests: etcd, kube-apiserver,
# kube-controller-manager and kube-scheduler built from the Kubernetes v1.35
# Go modules (tests/cluster), with kwok standing in for kubelets. Every
# component listens on 127.0.0.1 and no address the cluster hands out (service
# IPs, node and pod IPs) is outside 127.0.0.0/8, so nothing leaves loopback.
#
# usage: scripts/cluster.sh up [DIR]     build what is missing, start, wait until
#                                        /readyz and one Node is Ready, then print
#                                        KUBECONFIG=<path> and AUDIT_LOG=<path>
#        scripts/cluster.sh down [DIR]   stop everything started in DIR, remove DIR
#        scripts/cluster.sh build        only build
# DIR defaults to target/cluster/state. Needs Go 1.26 or newer, openssl and curl.
# CHARTSEQ_CLUSTER_OWNER=PID makes `up` also stop the cluster once PID exits.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SRC="$ROOT/tests/cluster"
BIN="$ROOT/target/cluster/bin"
K8S_VERSION=v1.35.4
# Service cluster IPs: the API server accepts a loopback range, so even the
# `kubernetes` Service's own IP is on this machine.
SERVICE_CIDR=127.96.0.0/16
# kwok gives the node and its pods these addresses.
NODE_IP=127.0.0.2
POD_CIDR=127.64.0.0/16
NODE_NAME=kwok-node-0

die() {
  echo "cluster.sh: $*" >&2
  exit 1
}

# Only loopback is reachable, and a proxy from the environment would be asked
# to connect to 127.0.0.1 on our behalf: keep every client direct.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY
export NO_PROXY=127.0.0.0/8,localhost no_proxy=127.0.0.0/8,localhost

build() {
  command -v go >/dev/null 2>&1 || die "Go is needed to build the test cluster (1.26 or newer); none on PATH"
  local v
  v="$(go env GOVERSION)"
  case "$v" in
    go1.2[6-9]* | go1.[3-9][0-9]* | go[2-9]*) ;;
    *) die "Go 1.26 or newer is needed to build the test cluster, found $v" ;;
  esac
  mkdir -p "$BIN"
  local pkg=k8s.io/component-base/version
  local ldflags="-s -w -X $pkg.gitMajor=1 -X $pkg.gitMinor=35 -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitTreeState=clean"
  # nice: the control plane is a large build on a machine that builds other things.
  (cd "$SRC/etcd" && nice -n 19 go build -trimpath -o "$BIN/etcd" .) >&2 ||
    die "building etcd (tests/cluster/etcd) failed"
  (cd "$SRC/kwok" && nice -n 19 go build -trimpath -o "$BIN/kwok" .) >&2 ||
    die "building kwok (tests/cluster/kwok) failed"
  (cd "$SRC" && nice -n 19 go build -trimpath -ldflags "$ldflags" -o "$BIN/kubeplane" ./cmd/kubeplane) >&2 ||
    die "building the control plane (tests/cluster/cmd/kubeplane) failed"
  # The fault-injecting proxy the retry and watch tests put in front of the API server.
  (cd "$SRC" && nice -n 19 go build -trimpath -o "$BIN/faultproxy" ./cmd/faultproxy) >&2 ||
    die "building the fault proxy (tests/cluster/cmd/faultproxy) failed"
}

# group_alive PGID: whether a process of the group still runs. Zombies do
# not count: the component has exited, only its reaping (by whichever process
# adopted it) is pending, and `kill -0` would still succeed on it.
group_alive() {
  ps -e -o pgid=,stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { found = 1 } END { exit !found }'
}

# stop DIR NAME...: TERM the components' process groups together, KILL what
# is left after 10 seconds.
stop() {
  local dir="$1" name pid pids=() deadline
  shift
  for name in "$@"; do
    [ -f "$dir/run/$name.pid" ] && pids+=("$(cat "$dir/run/$name.pid")")
  done
  for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done
  deadline=$((SECONDS + 10))
  for pid in "${pids[@]}"; do
    while group_alive "$pid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
    if group_alive "$pid"; then kill -KILL -- "-$pid" 2>/dev/null || true; fi
  done
  for name in "$@"; do rm -f "$dir/run/$name.pid"; done
}

stop_all() {
  local dir="$1" pid
  # etcd last: a graceful etcd waits for its clients' watches to end, and the
  # API server's end only when the API server has stopped.
  stop "$dir" kwok kube-scheduler kube-controller-manager kube-apiserver
  stop "$dir" etcd
  if [ -f "$dir/run/watchdog.pid" ]; then
    pid="$(cat "$dir/run/watchdog.pid")"
    # The watchdog calls `down` itself; never signal the caller's own process.
    [ "$pid" = "$$" ] || kill -TERM "$pid" 2>/dev/null || true
    rm -f "$dir/run/watchdog.pid"
  fi
}

down() {
  local dir="$1"
  [ -d "$dir" ] || return 0
  [ -d "$dir/run" ] || [ -f "$dir/kubeconfig" ] ||
    die "$dir does not look like a test cluster's directory; not removing it"
  stop_all "$dir"
  rm -rf "$dir"
}

start() {
  local dir="$1" name="$2"
  shift 2
  setsid "$@" >"$dir/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$dir/run/$name.pid"
}

alive() {
  local dir="$1" name="$2"
  kill -0 "$(cat "$dir/run/$name.pid")" 2>/dev/null ||
    die "$name exited during start-up; last lines of $dir/logs/$name.log:
$(tail -n 20 "$dir/logs/$name.log")"
}

# wait_for DIR COMPONENT SECONDS WHAT COMMAND...: run COMMAND until it succeeds.
wait_for() {
  local dir="$1" name="$2" seconds="$3" what="$4"
  shift 4
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    alive "$dir" "$name"
    [ "$SECONDS" -lt "$deadline" ] ||
      die "$what not within ${seconds}s; last lines of $dir/logs/$name.log:
$(tail -n 20 "$dir/logs/$name.log")"
    sleep 0.2
  done
}

# cert NAME SUBJECT EXTENSIONS: a P-256 key and a certificate signed by the CA.
cert() {
  local pki="$1/pki" name="$2" subject="$3" ext="$4"
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$pki/$name.key" -subj "$subject" -out "$pki/$name.csr" 2>/dev/null
  printf '%b\n' "$ext" >"$pki/$name.ext"
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
    -CAcreateserial -days 7 -extfile "$pki/$name.ext" -out "$pki/$name.crt" 2>/dev/null
}

kubeconfig() {
  local dir="$1" name="$2" port="$3"
  cat >"$dir/$name" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: https://127.0.0.1:$port
    certificate-authority: $dir/pki/ca.crt
users:
- name: $4
  user:
    client-certificate: $dir/pki/$4.crt
    client-key: $dir/pki/$4.key
contexts:
- name: test
  context:
    cluster: test
    user: $4
current-context: test
EOF
}

pki() {
  local dir="$1" pki="$1/pki"
  mkdir -p "$pki"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 7 \
    -keyout "$pki/ca.key" -out "$pki/ca.crt" -subj "/CN=chartseq-test-ca" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null ||
    die "openssl could not make the test CA"
  cert "$dir" apiserver "/CN=kube-apiserver" \
    "subjectAltName=IP:127.0.0.1,IP:${SERVICE_CIDR%.0/*}.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature"
  local client="extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature"
  cert "$dir" admin "/O=system:masters/CN=chartseq-admin" "$client"
  cert "$dir" controller-manager "/CN=system:kube-controller-manager" "$client"
  cert "$dir" scheduler "/CN=system:kube-scheduler" "$client"
  # kwok writes node and pod status for every node it manages; its own name
  # keeps its writes apart from the tests' in the audit log.
  cert "$dir" kwok "/O=system:masters/CN=kwok" "$client"
  openssl ecparam -name prime256v1 -genkey -noout -out "$pki/service-account.key" 2>/dev/null
  openssl ec -in "$pki/service-account.key" -pubout -out "$pki/service-account.pub" 2>/dev/null
  [ -s "$pki/service-account.pub" ] || die "openssl could not make the service account key"
}

audit_policy() {
  # Metadata (who, what, which object, the response code and timing) of every
  # write, status subresource updates included; reads are not logged.
  cat >"$1/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
omitManagedFields: true
rules:
# The objects' bodies as stored after each status write of the workload
# controllers: the moment each became ready, on the API server's clock.
- level: RequestResponse
  verbs: [update, patch]
  resources:
  - group: apps
    resources: [deployments/status, statefulsets/status, daemonsets/status, replicasets/status]
  - group: batch
    resources: [jobs/status]
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None
EOF
}

STARTING=""
on_exit() {
  local status=$?
  if [ "$status" -ne 0 ] && [ -n "$STARTING" ]; then
    down "$STARTING"
  fi
}

up() {
  local dir="$1"
  if [ -d "$dir/run" ]; then
    die "a cluster already runs in $dir; run: scripts/cluster.sh down $dir"
  fi
  # `down` removes DIR whole: never adopt a directory that holds anything else.
  if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
    die "$dir is not empty; give an empty or new directory"
  fi
  command -v openssl >/dev/null 2>&1 || die "openssl is needed to make the test cluster's certificates"
  command -v curl >/dev/null 2>&1 || die "curl is needed to wait for the test cluster"
  build
  mkdir -p "$dir/run" "$dir/logs" "$dir/etcd"
  dir="$(cd "$dir" && pwd)"
  # From here on, a failure stops whatever has started.
  STARTING="$dir"
  trap on_exit EXIT

  local ports etcd_client etcd_peer apiserver kwok_server
  ports="$("$BIN/kubeplane" free-ports 4)" || die "no free port on 127.0.0.1"
  { read -r etcd_client; read -r etcd_peer; read -r apiserver; read -r kwok_server; } <<<"$ports"

  pki "$dir"
  kubeconfig "$dir" kubeconfig "$apiserver" admin
  kubeconfig "$dir" controller-manager.kubeconfig "$apiserver" controller-manager
  kubeconfig "$dir" scheduler.kubeconfig "$apiserver" scheduler
  kubeconfig "$dir" kwok.kubeconfig "$apiserver" kwok
  audit_policy "$dir"
  cp "$SRC/stages.yaml" "$dir/kwok-stages.yaml"

  local curl=(curl -fsS -A chartseq-cluster --cacert "$dir/pki/ca.crt"
    --cert "$dir/pki/admin.crt" --key "$dir/pki/admin.key")
  local api="https://127.0.0.1:$apiserver"

  start "$dir" etcd "$BIN/etcd" --data-dir "$dir/etcd" \
    --client-port "$etcd_client" --peer-port "$etcd_peer"
  wait_for "$dir" etcd 60 "etcd healthy" curl -fsS "http://127.0.0.1:$etcd_client/health"

  start "$dir" kube-apiserver "$BIN/kubeplane" kube-apiserver \
    --bind-address=127.0.0.1 \
    --advertise-address=127.0.0.1 \
    --secure-port="$apiserver" \
    --etcd-servers="http://127.0.0.1:$etcd_client" \
    --tls-cert-file="$dir/pki/apiserver.crt" \
    --tls-private-key-file="$dir/pki/apiserver.key" \
    --client-ca-file="$dir/pki/ca.crt" \
    --service-account-issuer=https://kubernetes.default.svc \
    --service-account-key-file="$dir/pki/service-account.pub" \
    --service-account-signing-key-file="$dir/pki/service-account.key" \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --enable-aggregator-routing=true \
    --endpoint-reconciler-type=none \
    --authorization-mode=RBAC \
    --allow-privileged=true \
    --profiling=false \
    --audit-policy-file="$dir/audit-policy.yaml" \
    --audit-log-path="$dir/audit.log" \
    --audit-log-format=json \
    --audit-log-mode=blocking
  wait_for "$dir" kube-apiserver 120 "kube-apiserver /readyz" "${curl[@]}" "$api/readyz"

  start "$dir" kube-controller-manager "$BIN/kubeplane" kube-controller-manager \
    --kubeconfig="$dir/controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 \
    --secure-port=0 \
    --leader-elect=false \
    --use-service-account-credentials=true \
    --service-account-private-key-file="$dir/pki/service-account.key" \
    --root-ca-file="$dir/pki/ca.crt" \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --allocate-node-cidrs=false \
    --controllers='*,-endpoints-controller,-endpointslice-controller,-endpointslice-mirroring-controller' \
    --profiling=false
  start "$dir" kube-scheduler "$BIN/kubeplane" kube-scheduler \
    --kubeconfig="$dir/scheduler.kubeconfig" \
    --bind-address=127.0.0.1 \
    --secure-port=0 \
    --leader-elect=false \
    --profiling=false
  start "$dir" kwok "$BIN/kwok" \
    --kubeconfig="$dir/kwok.kubeconfig" \
    --config="$dir/kwok-stages.yaml" \
    --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --node-ip="$NODE_IP" \
    --cidr="$POD_CIDR" \
    --server-address="127.0.0.1:$kwok_server" \
    --node-lease-duration-seconds=40

  # The node carries no taint, so an ordinary workload schedules on it.
  "${curl[@]}" -H 'Content-Type: application/json' -X POST "$api/api/v1/nodes" -o /dev/null -d @- <<EOF ||
{"apiVersion":"v1","kind":"Node",
 "metadata":{"name":"$NODE_NAME",
  "annotations":{"kwok.x-k8s.io/node":"fake","node.alpha.kubernetes.io/ttl":"0"},
  "labels":{"kubernetes.io/hostname":"$NODE_NAME","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64","type":"kwok"}},
 "status":{
  "capacity":{"cpu":"32","memory":"256Gi","ephemeral-storage":"1Ti","pods":"110"},
  "allocatable":{"cpu":"32","memory":"256Gi","ephemeral-storage":"1Ti","pods":"110"}}}
EOF
    die "could not create node $NODE_NAME"
  node_ready() {
    "${curl[@]}" "$api/api/v1/nodes/$NODE_NAME" | grep -q '"type":"Ready","status":"True"'
  }
  wait_for "$dir" kwok 60 "node $NODE_NAME Ready" node_ready
  for name in kube-controller-manager kube-scheduler; do alive "$dir" "$name"; done

  if [ -n "${CHARTSEQ_CLUSTER_OWNER:-}" ]; then
    # Stop the cluster once its owner is gone, even if it never calls `down`.
    # shellcheck disable=SC2016 # expanded by the watchdog's own shell
    setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec "$2" down "$3"' \
      watchdog "$CHARTSEQ_CLUSTER_OWNER" "$ROOT/scripts/cluster.sh" "$dir" \
      >/dev/null 2>&1 </dev/null &
    echo $! >"$dir/run/watchdog.pid"
  fi
  STARTING=""
  echo "KUBECONFIG=$dir/kubeconfig"
  echo "AUDIT_LOG=$dir/audit.log"
}

cmd="${1:-}"
state="${2:-$ROOT/target/cluster/state}"
case "$cmd" in
  up) up "$state" ;;
  down) down "$state" ;;
  build) build ;;
  *) die "usage: scripts/cluster.sh up|down [DIR] | build" ;;
esac
