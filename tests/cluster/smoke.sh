#!/usr/bin/env bash
# Smoke check of the test cluster (scripts/cluster.sh): it comes up, is the
# Kubernetes release it claims, serves OpenAPI v3, runs a Deployment and a Job
# to their real status with nobody writing it, listens and talks only on
# loopback, audits writes, and leaves no process behind after `down`.
#
# usage: tests/cluster/smoke.sh      (kubectl: $CHARTSEQ_KUBECTL, else scripts/get-tools.sh)
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
KUBECTL="${CHARTSEQ_KUBECTL:-$("$ROOT/scripts/get-tools.sh")/kubectl}"
TMP="$(mktemp -d)"
DIR="$TMP/cluster"
PIDS=()

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
cleanup() {
  "$ROOT/scripts/cluster.sh" down "$DIR" >/dev/null 2>&1 || true
  rmdir "$TMP" 2>/dev/null || true
}
trap cleanup EXIT

start=$SECONDS
out="$("$ROOT/scripts/cluster.sh" up "$DIR")" || fail "cluster.sh up failed"
echo "up: $((SECONDS - start))s"
[ "$(echo "$out" | wc -l)" -eq 2 ] || fail "up printed more than two lines: $out"
export "$(echo "$out" | grep '^KUBECONFIG=')"
AUDIT_LOG="$(echo "$out" | sed -n 's/^AUDIT_LOG=//p')"
[ -f "$KUBECONFIG" ] || fail "no kubeconfig at $KUBECONFIG"
k() { "$KUBECTL" "$@"; }

for f in "$DIR"/run/*.pid; do PIDS+=("$(cat "$f")"); done

version="$(k version -o json)"
echo "$version" | grep -q '"gitVersion": "v1\.35\.' || fail "server is not v1.35: $version"
echo "server: $(echo "$version" | grep -o '"gitVersion": "[^"]*"' | tail -1)"

k get --raw /openapi/v3 | grep -q '"apis/apps/v1"' || fail "/openapi/v3 does not list apps/v1"
echo "openapi/v3: served"

k wait --for=condition=Ready node/kwok-node-0 --timeout=60s >/dev/null || fail "node not Ready"
echo "node: Ready"

k apply -f - >/dev/null <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: registry.invalid/web:1
---
apiVersion: batch/v1
kind: Job
metadata:
  name: once
  namespace: default
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: once
        image: registry.invalid/once:1
EOF
k wait --for=condition=Available deployment/web --timeout=120s >/dev/null ||
  fail "deployment not Available: $(k get deployment/web -o yaml)"
[ "$(k get deployment/web -o jsonpath='{.status.readyReplicas}')" = 2 ] || fail "deployment not 2/2 ready"
echo "deployment: Available, 2/2 ready"
k wait --for=condition=Complete job/once --timeout=120s >/dev/null ||
  fail "job not Complete: $(k get job/once -o yaml)"
echo "job: Complete"

# The status came from the controllers and kwok, never from the test's user.
grep -q '"username":"chartseq-admin".*"resource":"deployments"' "$AUDIT_LOG" ||
  fail "the audit log has no deployment create by the test user"
grep -q '"username":"kwok".*"resource":"pods","namespace":"default","name":"web-[^"]*","apiVersion":"v1","subresource":"status"' "$AUDIT_LOG" ||
  fail "the audit log has no pod status update by kwok"
grep -q '"username":"chartseq-admin".*"subresource":"status"' "$AUDIT_LOG" &&
  fail "the test user wrote a status"
echo "audit: $(wc -l <"$AUDIT_LOG") write events"

# Every socket of every component, listening or connected, is on loopback.
sockets="$(ss -Htanp | grep -E "pid=($(IFS='|'; echo "${PIDS[*]}"))," || true)"
[ -n "$sockets" ] || fail "no sockets found for the components"
bad="$(echo "$sockets" | awk '$1 == "LISTEN" {print $4; next} {print $4; print $5}' | grep -vE '^(127\.[0-9.]+|\[::ffff:127\.[0-9.]+\]):[0-9]+$' || true)"
[ -z "$bad" ] || fail "a component uses a non-loopback address: $bad"
echo "network: $(echo "$sockets" | wc -l) sockets, all on 127.0.0.0/8"

rss=0
for pid in "${PIDS[@]}"; do rss=$((rss + $(ps -o rss= -p "$pid"))); done
echo "memory: $((rss / 1024)) MiB RSS"

"$ROOT/scripts/cluster.sh" down "$DIR" || fail "cluster.sh down failed"
# A zombie has exited; only its reaping by the process that adopted it is left.
left="$(ps -e -o pid=,pgid=,stat=,args= | awk -v groups=" ${PIDS[*]} " \
  'index(groups, " " $2 " ") && $3 !~ /^Z/' || true)"
[ -z "$left" ] || fail "processes still run after down: $left"
[ ! -e "$DIR" ] || fail "down left $DIR"
echo "down: no process left, state removed"
echo "1 passed, 0 failed"
