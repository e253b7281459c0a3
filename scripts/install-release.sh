#!/usr/bin/env bash
# Downloads a chartseq release binary, verifies it against the release's SHA256SUMS and puts it
# in a directory. Shared by the GitHub Action (scripts/action-install.sh), the helm plugin's
# install hook (scripts/plugin-install.sh) and the pre-commit hook (scripts/pre-commit-release.sh).
#
# The release layout is the one .github/workflows/release.yml publishes:
#   $CHARTSEQ_RELEASE_URL/vVERSION/chartseq-VERSION-TARGET.tar.gz   (.zip for Windows)
#   $CHARTSEQ_RELEASE_URL/vVERSION/SHA256SUMS
# with the binary at chartseq-VERSION-TARGET/chartseq[.exe] inside the archive.
# CHARTSEQ_RELEASE_URL defaults to https://github.com/chartseq/chartseq/releases/download.
#
# usage: install-release.sh VERSION TARGET DEST    install DEST/chartseq (or chartseq.exe)
#        install-release.sh --target [OS [ARCH]]   print the release target of a platform
#                                                  (default: this machine's uname)
#        install-release.sh --targets              print every target a release has
# OS and ARCH take uname's, helm's (GOOS/GOARCH) and GitHub runners' spellings.
#
# Exit status: 0 installed; 3 the release or its archive for TARGET could not be downloaded
# (callers may fall back); 4 the archive does not match SHA256SUMS (nothing is installed;
# never fall back); 2 bad usage or a platform without a release binary; 1 anything else.
set -euo pipefail

TARGETS=(
  x86_64-unknown-linux-musl
  aarch64-unknown-linux-musl
  x86_64-apple-darwin
  aarch64-apple-darwin
  x86_64-pc-windows-msvc
)

say() { echo "chartseq install: $*" >&2; }

target_of() {
  local os arch
  os="$(printf '%s' "$1" | tr '[:upper:]' '[:lower:]')"
  arch="$(printf '%s' "$2" | tr '[:upper:]' '[:lower:]')"
  case "$os" in
    linux) os=unknown-linux-musl ;;
    darwin | macos) os=apple-darwin ;;
    windows | windows_nt | mingw* | msys* | cygwin*) os=pc-windows-msvc ;;
    *) os="" ;;
  esac
  case "$arch" in
    x86_64 | amd64 | x64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch64 ;;
    *) arch="" ;;
  esac
  local t
  for t in "${TARGETS[@]}"; do
    if [ -n "$os" ] && [ -n "$arch" ] && [ "$t" = "$arch-$os" ]; then
      echo "$t"
      return 0
    fi
  done
  return 1
}

case "${1:-}" in
  --targets)
    printf '%s\n' "${TARGETS[@]}"
    exit 0
    ;;
  --target)
    os="${2:-$(uname -s)}"
    arch="${3:-$(uname -m)}"
    if ! target_of "$os" "$arch"; then
      say "no release binary for $os/$arch (releases have: ${TARGETS[*]})"
      exit 2
    fi
    exit 0
    ;;
esac

if [ $# -ne 3 ]; then
  echo "usage: install-release.sh VERSION TARGET DEST | --target [OS [ARCH]] | --targets" >&2
  exit 2
fi
version="${1#v}"
target="$2"
dest="$3"
known=0
for t in "${TARGETS[@]}"; do
  if [ "$t" = "$target" ]; then known=1; fi
done
if [ "$known" = 0 ]; then
  say "no release binary for target $target (releases have: ${TARGETS[*]})"
  exit 2
fi

base="${CHARTSEQ_RELEASE_URL:-https://github.com/chartseq/chartseq/releases/download}"
base="${base%/}/v$version"
exe=""
archive="chartseq-$version-$target.tar.gz"
case "$target" in
  *-windows-*)
    exe=".exe"
    archive="chartseq-$version-$target.zip"
    ;;
esac

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

fetch() {
  if command -v curl >/dev/null 2>&1; then
    curl --fail --silent --show-error --location --retry 2 --output "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    wget --quiet --output-document "$2" "$1"
  else
    say "neither curl nor wget is installed"
    return 1
  fi
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

for file in SHA256SUMS "$archive"; do
  if ! fetch "$base/$file" "$work/$file"; then
    say "could not download $base/$file"
    exit 3
  fi
done

# `HASH  NAME` or `HASH *NAME` (binary mode), as sha256sum writes them.
want="$(awk -v name="$archive" '$2 == name || $2 == "*" name { print tolower($1); exit }' "$work/SHA256SUMS")"
if [ -z "$want" ]; then
  say "$base/SHA256SUMS has no line for $archive; nothing installed"
  exit 4
fi
got="$(sha256_of "$work/$archive")"
if [ "$got" != "$want" ]; then
  say "checksum mismatch for $archive: SHA256SUMS says $want, the download is $got; nothing installed"
  exit 4
fi

mkdir -p "$work/x"
case "$archive" in
  *.zip)
    if command -v unzip >/dev/null 2>&1; then
      unzip -q "$work/$archive" -d "$work/x"
    else
      # Git Bash on Windows: PowerShell needs Windows paths.
      from="$work/$archive"
      to="$work/x"
      if command -v cygpath >/dev/null 2>&1; then
        from="$(cygpath -w "$from")"
        to="$(cygpath -w "$to")"
      fi
      powershell -NoProfile -Command "Expand-Archive -LiteralPath '$from' -DestinationPath '$to'"
    fi
    ;;
  *) tar -xzf "$work/$archive" -C "$work/x" ;;
esac
binary="$work/x/chartseq-$version-$target/chartseq$exe"
if [ ! -f "$binary" ]; then
  say "$archive holds no chartseq-$version-$target/chartseq$exe; nothing installed"
  exit 1
fi
mkdir -p "$dest"
# Copy beside the destination, then rename: a concurrent reader never sees half a binary.
cp "$binary" "$dest/.chartseq$exe.partial"
chmod +x "$dest/.chartseq$exe.partial"
mv -f "$dest/.chartseq$exe.partial" "$dest/chartseq$exe"
say "installed chartseq $version ($target) into $dest, verified against SHA256SUMS"
