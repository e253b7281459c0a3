#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 600), seeded from fixtures/ and, when it is
# beside the checkout, ../shared/corpus/rendered/. Needs cargo-fuzz (`cargo install cargo-fuzz`);
# the stable toolchain is used with RUSTC_BOOTSTRAP=1 for libFuzzer's instrumentation flags.
# A crash leaves its reproducer in fuzz/artifacts/<target>/ and stops the script (exit 1).
#
# usage: scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET="${1:-600}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(stream annotations chart_archive planner jsonpath readiness_expr)
export RUSTC_BOOTSTRAP=1

seed() {
  local target="$1" dir="fuzz/corpus/$1"
  mkdir -p "$dir"
  case "$target" in
    stream)
      cp fixtures/charts/*.rendered.yaml fixtures/streams/*.yaml fixtures/conformance/*/rendered*.yaml "$dir"/ 2>/dev/null || true
      if [ -d ../shared/corpus/rendered ]; then
        find ../shared/corpus/rendered -name '*.yaml' -size -64k -exec cp {} "$dir"/ \;
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
