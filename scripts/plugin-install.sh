#!/usr/bin/env bash
# The helm plugin's install and update hook (plugin.yaml `hooks`, which helm runs with sh on
# the machine it runs on). Downloads the release archive of the plugin's version (plugin.yaml
# `version`) for this platform (`uname`, or TARGET), verifies it against the release's SHA256SUMS
# and puts the binary at $HELM_PLUGIN_DIR/bin/chartseq (scripts/install-release.sh;
# CHARTSEQ_RELEASE_URL overrides where releases are read from).
# When that is impossible it says what to do instead, once, and exits non-zero. With
# CHARTSEQ_BIN naming a binary (which the plugin then runs) nothing is downloaded.
#
# usage: plugin-install.sh [TARGET | unsupported]
set -euo pipefail
dir="${HELM_PLUGIN_DIR:-$(cd "$(dirname "$0")/.." && pwd)}"
version="$(sed -n 's/^version:[[:space:]]*"\{0,1\}\([^"[:space:]]*\)"\{0,1\}[[:space:]]*$/\1/p' "$dir/plugin.yaml" | head -n1)"

todo() {
  echo "helm chartseq: $1; install chartseq $version yourself (a binary from https://github.com/chartseq/chartseq/releases/tag/v$version, or: cargo install --locked chartseq --version $version) and put it on PATH or name it in CHARTSEQ_BIN; the plugin then runs it" >&2
  exit 1
}

target="${1:-$("$dir/scripts/install-release.sh" --target 2>/dev/null || echo unsupported)}"
if [ -n "${CHARTSEQ_BIN:-}" ] && [ -x "$CHARTSEQ_BIN" ]; then
  echo "helm chartseq: CHARTSEQ_BIN names $CHARTSEQ_BIN, which the plugin runs; nothing downloaded" >&2
  exit 0
fi
if [ "$target" = unsupported ]; then
  todo "no chartseq release binary is built for $(uname -s)/$(uname -m)"
fi
status=0
"$dir/scripts/install-release.sh" "$version" "$target" "$dir/bin" || status=$?
case "$status" in
  0) ;;
  4) todo "the downloaded chartseq $version failed verification against its SHA256SUMS, so nothing was installed" ;;
  *) todo "the chartseq $version release binary for $target could not be downloaded" ;;
esac
