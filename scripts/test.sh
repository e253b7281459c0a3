#!/usr/bin/env bash
# Runs the whole test suite: installs the pinned helm and kubectl first (scripts/get-tools.sh)
# and the integrations' consumers (scripts/get-ci-tools.sh), so that tests rendering real
# charts, comparing with kubectl or feeding SARIF, workflows and hooks to their tools run for
# real, and starts the test cluster the deploy tests run on.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$(scripts/get-tools.sh)"
export CHARTSEQ_HELM="$BIN/helm" CHARTSEQ_KUBECTL="$BIN/kubectl" CHARTSEQ_REQUIRE_TOOLS=1
# The integrations' consumers (scripts/get-ci-tools.sh): check-jsonschema, actionlint,
# pre-commit, sarif-multitool, shellcheck, junitparser and hadolint.
CI_BIN="$(scripts/get-ci-tools.sh)"
export CHARTSEQ_CHECK_JSONSCHEMA="$CI_BIN/check-jsonschema" CHARTSEQ_ACTIONLINT="$CI_BIN/actionlint" \
  CHARTSEQ_PRE_COMMIT="$CI_BIN/pre-commit" CHARTSEQ_SARIF_MULTITOOL="$CI_BIN/sarif-multitool" \
  CHARTSEQ_SHELLCHECK="$CI_BIN/shellcheck" CHARTSEQ_JUNITPARSER="$CI_BIN/junitparser" \
  CHARTSEQ_HADOLINT="$CI_BIN/hadolint"
# The editor test's Neovim (tests/nvim/, driven by tests/it/lsp.rs): Debian's package when
# nvim is missing; with CHARTSEQ_REQUIRE_TOOLS=1 the test fails rather than skips without it.
if ! command -v nvim >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  echo "== neovim (apt-get install neovim)" >&2
  SUDO=""
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim >/dev/null
fi
CHARTSEQ_NVIM="$(command -v nvim || true)"
export CHARTSEQ_NVIM
# The deploy tests' cluster: a real control plane built from the Kubernetes v1.35 sources
# (scripts/cluster.sh; needs Go), up for the run and down after it whatever happens.
CLUSTER_DIR="$PWD/target/cluster/test-$$"
cleanup() { scripts/cluster.sh down "$CLUSTER_DIR" >/dev/null 2>&1 || true; }
trap cleanup EXIT
echo "== test cluster (scripts/cluster.sh up)" >&2
start=$SECONDS
CLUSTER="$(CHARTSEQ_CLUSTER_OWNER=$$ scripts/cluster.sh up "$CLUSTER_DIR")"
echo "   up in $((SECONDS - start))s" >&2
CHARTSEQ_TEST_KUBECONFIG="$(echo "$CLUSTER" | sed -n 's/^KUBECONFIG=//p')"
CHARTSEQ_TEST_AUDIT_LOG="$(echo "$CLUSTER" | sed -n 's/^AUDIT_LOG=//p')"
export CHARTSEQ_TEST_KUBECONFIG CHARTSEQ_TEST_AUDIT_LOG
cargo test --locked "$@"
