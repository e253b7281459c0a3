#!/usr/bin/env bash
# Runs the whole test suite: installs the pinned helm and kubectl first (scripts/get-tools.sh),
# so that tests rendering real charts or comparing with kubectl run for real.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$(scripts/get-tools.sh)"
export CHARTSEQ_HELM="$BIN/helm" CHARTSEQ_KUBECTL="$BIN/kubectl" CHARTSEQ_REQUIRE_TOOLS=1
cargo test --locked "$@"
