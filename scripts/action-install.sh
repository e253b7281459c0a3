#!/usr/bin/env bash
# How the GitHub Action (action.yml) gets chartseq. A release tag (the `version` input, else the
# ref the action is used at, `chartseq/chartseq@vX.Y.Z`) downloads that release's binary for the
# runner's OS and architecture, verified against its SHA256SUMS (scripts/install-release.sh);
# any other ref (a branch, a commit, `uses: ./`) is compiled with cargo, and the log says so.
# Runs anywhere with a simulated GITHUB_* environment, which is how it is tested.
#
# usage: action-install.sh resolve    writes key=… (the cache key) and release=… (the release
#                                     version, empty when compiling) to $GITHUB_OUTPUT
#        action-install.sh install    installs ROOT/bin/chartseq
# Environment: VERSION (the input), ACTION_REF, ACTION_PATH, ACTION_REPOSITORY, SERVER_URL,
# RUNNER_OS, RUNNER_ARCH, ROOT; CHARTSEQ_RELEASE_URL as install-release.sh reads it.
#
# A release whose binary cannot be downloaded (not published yet, or no binary for this
# runner) is compiled from its tag, with a warning; a download that does not match SHA256SUMS
# fails the step and installs nothing.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"

release_of() {
  if [[ "$1" =~ ^v?([0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?)$ ]]; then
    echo "${BASH_REMATCH[1]}"
  fi
}

VERSION="${VERSION:-}"
ref="${VERSION:-${ACTION_REF:-}}"
release="$(release_of "$ref")"

case "${1:-}" in
  resolve)
    if [ -n "$release" ]; then
      key="rel-$release"
    elif [ -n "$VERSION" ]; then
      key="rev-$VERSION"
    else
      # The cache key follows the source actually built (a branch ref moves; `uses: ./` has
      # no ref at all).
      cd "$ACTION_PATH"
      sum="$(find Cargo.toml Cargo.lock build.rs build src -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-16)"
      key="src-$sum"
    fi
    {
      echo "key=$key"
      echo "release=$release"
    } >> "$GITHUB_OUTPUT"
    exit 0
    ;;
  install) ;;
  *)
    echo "usage: action-install.sh resolve|install" >&2
    exit 2
    ;;
esac

compile() {
  if [ -n "$VERSION" ]; then
    cargo install --locked --root "$ROOT" --git "$SERVER_URL/$ACTION_REPOSITORY" --rev "$VERSION" chartseq
  else
    cargo install --locked --root "$ROOT" --path "$ACTION_PATH"
  fi
}

if [ -z "$release" ]; then
  echo "chartseq: ${ref:-this checkout of the action} is not a release tag, so chartseq is compiled from source with cargo (several minutes); use a release tag (chartseq/chartseq@vX.Y.Z or version: vX.Y.Z) to download a verified binary"
  compile
  exit 0
fi

status=0
target="$("$HERE/install-release.sh" --target "${RUNNER_OS:-$(uname -s)}" "${RUNNER_ARCH:-$(uname -m)}")" || status=$?
if [ "$status" = 0 ]; then
  "$HERE/install-release.sh" "$release" "$target" "$ROOT/bin" || status=$?
fi
case "$status" in
  0) exit 0 ;;
  2 | 3)
    echo "::warning title=chartseq::the release binary of chartseq v$release could not be downloaded for ${RUNNER_OS:-}/${RUNNER_ARCH:-}; compiling tag v$release with cargo instead (several minutes)"
    cargo install --locked --root "$ROOT" --git "$SERVER_URL/$ACTION_REPOSITORY" --tag "v$release" chartseq
    ;;
  *)
    echo "::error title=chartseq::the chartseq v$release download failed verification; nothing was installed"
    exit 1
    ;;
esac
