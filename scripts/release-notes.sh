#!/usr/bin/env bash
# Prints the CHANGELOG.md section of one version (Keep a Changelog: `## [X.Y.Z] - DATE`), without
# its heading, for the GitHub release's notes. Fails when the section is missing or empty, so
# a tag is never released without notes.
#
# usage: scripts/release-notes.sh VERSION [CHANGELOG]
set -euo pipefail
version="${1:?usage: release-notes.sh VERSION [CHANGELOG]}"
version="${version#v}"
changelog="${2:-$(dirname "$0")/../CHANGELOG.md}"
notes="$(awk -v want="## [$version]" '
  index($0, "## [") == 1 { inside = (index($0, want) == 1 && substr($0, length(want) + 1, 1) ~ /^( |$)/); next }
  /^\[[^]]*\]: / { next }
  inside { print }
' "$changelog")"
# Drop leading and trailing blank lines.
notes="$(printf '%s\n' "$notes" | sed -e '/./,$!d')"
if [ -z "${notes//[[:space:]]/}" ]; then
  echo "release-notes.sh: $changelog has no notes for $version (a \"## [$version] - DATE\" section)" >&2
  exit 1
fi
printf '%s\n' "$notes"
