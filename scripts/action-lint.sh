#!/usr/bin/env bash
# The logic of the chartseq GitHub Action (action.yml): lints the charts named by the
# action's inputs, writing annotations to standard output, the step summary to
# $GITHUB_STEP_SUMMARY and, unless INPUT_SARIF is empty, a SARIF file for code scanning.
# Runs anywhere with a simulated GITHUB_* environment, which is how it is tested.
#
# Inputs (environment): INPUT_CHARTS (globs, one per line or space-separated; empty: every
# directory with a Chart.yaml that is not a vendored subchart), INPUT_VALUES (values files for
# every chart), INPUT_SET (`--set` values, one KEY=VAL per line), INPUT_NAMESPACE,
# INPUT_ARGS (more `chartseq lint` arguments), INPUT_FAIL_ON (error|warning|info|never),
# INPUT_SARIF (path, empty to skip), INPUT_VALUES_MATRIX (`true`: `--values-matrix`). CHARTSEQ
# names the binary (default: chartseq on PATH).
# A chart with `ci/*-values.yaml` files (chart-testing's convention) is linted once per file,
# each finding naming its file. One `chartseq lint` run renders each chart once and writes
# annotations, summary and SARIF together.
# Exit status: that of `chartseq lint` (0 clean, 1 findings at or above fail-on, 2 failure).
set -euo pipefail
shopt -s globstar nullglob
CHARTSEQ="${CHARTSEQ:-chartseq}"

# Text for a workflow command's message (GitHub's escapeData): on one line.
gh_data() {
  local s="${1//%/%25}"
  s="${s//$'\r'/%0D}"
  printf '%s' "${s//$'\n'/%0A}"
}
FAIL_ON="${INPUT_FAIL_ON:-error}"

# Split the inputs into words without expanding globs yet (an unmatched glob must be reported,
# not silently dropped).
set -f
# shellcheck disable=SC2206  # word splitting is the point: inputs are lists of words
patterns=(${INPUT_CHARTS:-})
# shellcheck disable=SC2206
value_files=(${INPUT_VALUES:-})
# shellcheck disable=SC2206
extra=(${INPUT_ARGS:-})
set +f

charts=()
if [ "${#patterns[@]}" -gt 0 ]; then
  for pattern in ${patterns[@]+"${patterns[@]}"}; do
    matched=0
    for path in $pattern; do
      if [ -f "$path/Chart.yaml" ] || [[ "$path" == *.tgz && -f "$path" ]]; then
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
    # A chart under another chart's charts/ directory is linted as part of its parent.
    case "/$dir/" in */charts/*) [ -f "$(dirname "$(dirname "$dir")")/Chart.yaml" ] && continue ;; esac
    charts+=("${dir#./}")
  done < <(find . -name Chart.yaml -not -path '*/.git/*' -not -path '*/node_modules/*' -print0 | LC_ALL=C sort -z)
fi
if [ "${#charts[@]}" = 0 ]; then
  echo "::warning title=chartseq::no chart to lint"
  exit 0
fi

args=(--ci-values)
if [ "${INPUT_VALUES_MATRIX:-false}" = "true" ]; then
  args+=(--values-matrix)
fi
for file in ${value_files[@]+"${value_files[@]}"}; do
  args+=(-f "$file")
done
# `--set` values may hold spaces and commas: one per line.
while IFS= read -r line; do
  if [ -n "$line" ]; then
    args+=(--set "$line")
  fi
done <<< "${INPUT_SET:-}"
if [ -n "${INPUT_NAMESPACE:-}" ]; then
  args+=(--namespace "$INPUT_NAMESPACE")
fi
if [ -n "${INPUT_SARIF:-}" ]; then
  args+=(--also-report "sarif=$INPUT_SARIF")
fi

status=0
"$CHARTSEQ" lint --format github --fail-on "$FAIL_ON" "${args[@]}" ${extra[@]+"${extra[@]}"} "${charts[@]}" || status=$?
if [ "$status" -ge 2 ]; then
  echo "::error title=chartseq::chartseq lint failed (exit status $status); see the log above"
  exit "$status"
fi
if [ -n "${INPUT_SARIF:-}" ] && [ -n "${GITHUB_OUTPUT:-}" ] && [ -f "$INPUT_SARIF" ]; then
  echo "sarif=$INPUT_SARIF" >> "$GITHUB_OUTPUT"
fi
exit "$status"
