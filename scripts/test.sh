#!/usr/bin/env bash
# Runs the whole test suite: installs the pinned helm and kubectl first (scripts/get-tools.sh)
# and the integrations' consumers (scripts/get-ci-tools.sh), so that tests rendering real
# charts, comparing with kubectl or feeding SARIF, workflows and hooks to their tools run for real.
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
cargo test --locked "$@"
