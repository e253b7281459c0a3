#!/usr/bin/env bash
# The `diff` mode of the chartseq GitHub Action (action.yml): for a pull request, compares
# every changed chart with the same chart at the merge base of the base branch
# (`chartseq diff BASE:chart chart`), writing the Markdown report of each to
# $GITHUB_STEP_SUMMARY and, when INPUT_COMMENT_FILE is set, to that file (for a PR comment),
# and each chart's new lint findings and lost orders as annotations on standard output.
# Runs anywhere with a simulated GITHUB_* environment, which is how it is tested.
#
# Inputs (environment): INPUT_BASE (the ref to compare with; default origin/$GITHUB_BASE_REF,
# else $GITHUB_BASE_REF), INPUT_CHARTS (globs, one per line or space-separated; empty: every
# directory with a Chart.yaml that is not a vendored subchart), INPUT_VALUES (values files for
# both sides), INPUT_SET (`--set` values, one KEY=VAL per line), INPUT_NAMESPACE,
# INPUT_COMMENT_FILE (path, empty to skip). CHARTSEQ names the binary (default: chartseq on
# PATH). The checkout needs the base's history (actions/checkout with fetch-depth: 0).
# Exit status: 0 when every diff ran (differences are what a review reads, not a failure),
# 2 when one could not run.
set -euo pipefail
shopt -s globstar nullglob
CHARTSEQ="${CHARTSEQ:-chartseq}"

# Text for a workflow command's message (GitHub's escapeData): on one line.
gh_data() {
  local s="${1//%/%25}"
  s="${s//$'\r'/%0D}"
  printf '%s' "${s//$'\n'/%0A}"
}

# A chart's directory name as Markdown prose, as chartseq writes chart text: on one line, and
# every character that opens markup backslash-escaped, so that it renders as written.
md_text() {
  local s="${1//$'\r'/ }" out="" c i
  s="${s//$'\n'/ }"
  for ((i = 0; i < ${#s}; i++)); do
    c="${s:i:1}"
    case "$c" in
      \\ | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '#' | '~' | '!' | '$' | '|') out+="\\$c" ;;
      *) out+="$c" ;;
    esac
  done
  printf '%s' "$out"
}

base="${INPUT_BASE:-}"
if [ -z "$base" ] && [ -n "${GITHUB_BASE_REF:-}" ]; then
  if git rev-parse --verify --quiet "origin/$GITHUB_BASE_REF^{commit}" >/dev/null; then
    base="origin/$GITHUB_BASE_REF"
  else
    base="$GITHUB_BASE_REF"
  fi
fi
if [ -z "$base" ]; then
  echo "::error title=chartseq::diff mode needs a base: run on a pull request or set the base input"
  exit 2
fi
if ! merge_base="$(git merge-base "$base" HEAD 2>/dev/null)"; then
  echo "::error title=chartseq::no merge base with $(gh_data "$base"); check out with fetch-depth: 0 so the base branch is there"
  exit 2
fi

set -f
# shellcheck disable=SC2206  # word splitting is the point: inputs are lists of words
patterns=(${INPUT_CHARTS:-})
# shellcheck disable=SC2206
value_files=(${INPUT_VALUES:-})
set +f

charts=()
if [ "${#patterns[@]}" -gt 0 ]; then
  for pattern in ${patterns[@]+"${patterns[@]}"}; do
    matched=0
    for path in $pattern; do
      if [ -f "$path/Chart.yaml" ]; then
        charts+=("${path%/}")
        matched=1
      fi
    done
    if [ "$matched" = 0 ]; then
      echo "::warning title=chartseq::no chart matches $(gh_data "$pattern")"
    fi
  done
else
  # NUL-separated: a directory name may hold a newline.
  while IFS= read -r -d '' file; do
    dir="$(dirname "$file")"
    # A chart under another chart's charts/ directory is compared as part of its parent.
    case "/$dir/" in */charts/*) [ -f "$(dirname "$(dirname "$dir")")/Chart.yaml" ] && continue ;; esac
    charts+=("${dir#./}")
  done < <(find . -name Chart.yaml -not -path '*/.git/*' -not -path '*/node_modules/*' -print0 | LC_ALL=C sort -z)
fi

args=()
for file in ${value_files[@]+"${value_files[@]}"}; do
  args+=(-f "$file")
done
while IFS= read -r line; do
  if [ -n "$line" ]; then
    args+=(--set "$line")
  fi
done <<< "${INPUT_SET:-}"
if [ -n "${INPUT_NAMESPACE:-}" ]; then
  args+=(--namespace "$INPUT_NAMESPACE")
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
report="$work/report.md"
short="$(git rev-parse --short "$merge_base")"
printf '## chartseq diff against %s (merge base %s)\n\n' "$(md_text "$base")" "$short" > "$report"

status=0
compared=0
for chart in ${charts[@]+"${charts[@]}"}; do
  # Changed since the merge base: committed, uncommitted or untracked files.
  if git diff --quiet "$merge_base" -- "$chart" && [ -z "$(git ls-files --others --exclude-standard -- "$chart")" ]; then
    continue
  fi
  compared=$((compared + 1))
  if ! git cat-file -e "$merge_base:./$chart/Chart.yaml" 2>/dev/null; then
    printf '### %s\n\nA new chart: nothing to compare it with at %s.\n\n' "$(md_text "$chart")" "$(md_text "$base")" >> "$report"
    continue
  fi
  printf '### %s\n\n' "$(md_text "$chart")" >> "$report"
  one="$work/one.md"
  : > "$one"
  code=0
  GITHUB_STEP_SUMMARY="$one" "$CHARTSEQ" diff --format github "${args[@]}" "$merge_base:$chart" "$chart" || code=$?
  if [ "$code" -ge 2 ]; then
    echo "::error title=chartseq::chartseq diff of $(gh_data "$chart") failed (exit status $code); see the log above"
    printf 'The diff could not run (exit status %s); see the job log.\n\n' "$code" >> "$report"
    status=2
    continue
  fi
  # The chart's own report, its heading one level down under the chart's.
  awk 'NR == 1 && $0 == "## chartseq diff" { skip = 1; next } skip && $0 == "" { skip = 0; next } { skip = 0; print }' "$one" >> "$report"
done
if [ "$compared" = 0 ]; then
  printf 'No chart changed.\n' >> "$report"
fi

if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cat "$report" >> "$GITHUB_STEP_SUMMARY"
fi
if [ -n "${INPUT_COMMENT_FILE:-}" ]; then
  mkdir -p "$(dirname "$INPUT_COMMENT_FILE")"
  cp "$report" "$INPUT_COMMENT_FILE"
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    echo "comment-file=$INPUT_COMMENT_FILE" >> "$GITHUB_OUTPUT"
  fi
fi
exit "$status"
