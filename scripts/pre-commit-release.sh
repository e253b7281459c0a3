#!/usr/bin/env bash
# The `chartseq-lint-release` pre-commit hook (.pre-commit-hooks.yaml, `language: script`):
# runs the release binary of the version pre-commit checked out (Cargo.toml's, the `rev:` of
# the hook's repository), downloaded once per version and platform and verified against the
# release's SHA256SUMS (scripts/install-release.sh), so no Rust toolchain is needed. Kept under
# $CHARTSEQ_CACHE_DIR, else $XDG_CACHE_HOME/chartseq, else ~/.cache/chartseq.
#
# usage: pre-commit-release.sh CHARTSEQ-ARGUMENTS...
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$here/../Cargo.toml" | head -n1)"
target="$("$here/install-release.sh" --target)" || {
  echo "chartseq-lint-release: no chartseq release binary for this platform; use the chartseq-lint hook (builds with cargo) or chartseq-lint-system" >&2
  exit 2
}
cache="${CHARTSEQ_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/chartseq}/$version/$target"
exe=""
case "$target" in *-windows-*) exe=".exe" ;; esac
if [ ! -x "$cache/chartseq$exe" ]; then
  status=0
  "$here/install-release.sh" "$version" "$target" "$cache" || status=$?
  if [ "$status" != 0 ]; then
    echo "chartseq-lint-release: could not install the chartseq $version release binary; use the chartseq-lint hook (builds with cargo) or chartseq-lint-system (the chartseq on PATH)" >&2
    exit 2
  fi
fi
exec "$cache/chartseq$exe" "$@"
