#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 600), seeded from fixtures/ and the corpus
# ($CHARTSEQ_CORPUS, else ../shared/corpus beside the checkout) when there is one. Needs cargo-fuzz (`cargo install cargo-fuzz`);
# the stable toolchain is used with RUSTC_BOOTSTRAP=1 for libFuzzer's instrumentation flags.
# A crash leaves its reproducer in fuzz/artifacts/<target>/ and stops the script (exit 1).
#
# usage: scripts/fuzz.sh [SECONDS] [TARGET...]
#
# `scripts/fuzz.sh --smoke [SECONDS] [TARGET...]` (what CI runs, default 5 s each) needs neither
# cargo-fuzz nor nightly: it builds every target as an ordinary binary (libFuzzer's own main,
# without coverage instrumentation), replays each reproducer in fixtures/fuzz/<target>/ and the
# seed corpus, then feeds it random mutations for SECONDS. It proves the targets compile and
# that nothing known crashes; it is no substitute for a real fuzzing run.
set -euo pipefail
cd "$(dirname "$0")/.."
SMOKE=0
if [ "${1:-}" = "--smoke" ]; then
  SMOKE=1
  shift
fi
SECONDS_PER_TARGET="${1:-$([ $SMOKE = 1 ] && echo 5 || echo 600)}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(stream annotations chart_archive planner jsonpath readiness_expr)
[ $SMOKE = 1 ] || export RUSTC_BOOTSTRAP=1

seed() {
  local target="$1" dir="fuzz/corpus/$1"
  mkdir -p "$dir"
  case "$target" in
    stream)
      cp fixtures/charts/*.rendered.yaml fixtures/streams/*.yaml fixtures/conformance/*/rendered*.yaml "$dir"/ 2>/dev/null || true
      local corpus="${CHARTSEQ_CORPUS:-../shared/corpus}"
      if [ -d "$corpus/rendered" ]; then
        find "$corpus/rendered" -name '*.yaml' -size -64k -exec cp {} "$dir"/ \;
      fi ;;
    annotations)
      printf '%s' '["db", "queue"]' > "$dir/list"; printf '%s' 'db, queue' > "$dir/comma"
      printf '%s' '- db' > "$dir/yaml-list"; printf '%s' '[""]' > "$dir/empty" ;;
    chart_archive)
      cp fixtures/charts/platform/charts/*.tgz "$dir"/
      for c in fixtures/charts/*/; do tar -czf "$dir/$(basename "$c").tgz" -C fixtures/charts "$(basename "$c")"; done ;;
    planner)
      head -c 300 /dev/urandom > "$dir/random" ;;
    jsonpath|readiness_expr)
      python3 - "$target" "$dir" <<'PY'
import json, sys, hashlib
target, out = sys.argv[1], sys.argv[2]
src = "fixtures/jsonpath/table.json" if target == "jsonpath" else "fixtures/readiness/expressions.json"
def strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for k, x in v.items():
            if k in ("expr", "expression", "template", "path", "text"):
                yield from strings(x)
            elif isinstance(x, (dict, list)):
                yield from strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)
for s in set(strings(json.load(open(src)))):
    open(f"{out}/{hashlib.sha1(s.encode()).hexdigest()[:12]}", "w").write(s)
PY
      ;;
  esac
}

smoke() {
  # The main target directory, so that dependencies built for the tests are reused.
  local target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
  local bins=() target
  for target in "${TARGETS[@]}"; do bins+=(--bin "$target"); done
  cargo build --locked --quiet --manifest-path fuzz/Cargo.toml --target-dir "$target_dir" "${bins[@]}"
  local status=0 work replays
  for target in "${TARGETS[@]}"; do
    seed "$target"
    work="$(mktemp -d)"
    cp -r "fuzz/corpus/$target/." "$work/"
    replays=0
    if [ -d "fixtures/fuzz/$target" ]; then
      cp -r "fixtures/fuzz/$target/." "$work/"
      replays="$(find "fixtures/fuzz/$target" -type f | wc -l)"
    fi
    local inputs
    inputs="$(find "$work" -type f | wc -l)"
    if [ "$inputs" -eq 0 ]; then
      echo "$target: no inputs to replay"
      status=1
      continue
    fi
    echo "== $target: $inputs inputs ($replays reproducers), then ${SECONDS_PER_TARGET}s of mutations"
    if ! "$target_dir/debug/$target" "$work" -max_total_time="$SECONDS_PER_TARGET" -max_len=65536 \
        -rss_limit_mb=2048 -timeout=10 -artifact_prefix="$work/" > "fuzz/$target.log" 2>&1; then
      echo "CRASH in $target (fuzz/$target.log):"
      grep -E "ERROR|SUMMARY|panicked" "fuzz/$target.log" | head -5 || true
      ls "$work"/crash-* 2>/dev/null && mkdir -p "fuzz/artifacts/$target" && cp "$work"/crash-* "fuzz/artifacts/$target/"
      status=1
    else
      grep -E "^Done [0-9]+ runs|INFO: seed corpus: files: [0-9]+" "fuzz/$target.log" | tr '\n' ' ' || true
      echo
    fi
    rm -rf "$work"
  done
  return $status
}

if [ $SMOKE = 1 ]; then
  smoke
  exit $?
fi

status=0
for target in "${TARGETS[@]}"; do
  seed "$target"
  echo "== $target (${SECONDS_PER_TARGET}s)"
  if ! (cd fuzz && cargo fuzz run -O "$target" "corpus/$target" -- \
      -max_total_time="$SECONDS_PER_TARGET" -max_len=65536 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      2>&1 | tee "../fuzz/$target.log" | grep -E "stat::number_of_executed_units|stat::peak_rss_mb|ERROR|SUMMARY|Done [0-9]+ runs"); then
    status=1
  fi
  if grep -qE "ERROR: libFuzzer|SUMMARY: " "fuzz/$target.log"; then
    echo "CRASH in $target: see fuzz/artifacts/$target/"
    status=1
  fi
done
exit $status
