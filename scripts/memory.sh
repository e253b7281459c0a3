#!/usr/bin/env bash
# Peak resident memory of `plan` and `lint` on the two stress inputs: the ~50 MB stream from the
# corpus's make_big.py (target: at most 3x the input) and one million tiny documents (target:
# at most 2 GB). Needs GNU time (/usr/bin/time) and, for the first input, ../shared/corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
bin=target/release/chartseq
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - "$work/tiny.yaml" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(1_000_000):
        f.write(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\n")
PY
inputs=("$work/tiny.yaml")
corpus="${CHARTSEQ_CORPUS:-../shared/corpus}"
if [ -f "$corpus/make_big.py" ]; then
  python3 "$corpus/make_big.py" -o "$work/big.yaml" > /dev/null 2>&1
  inputs+=("$work/big.yaml")
fi
for input in "${inputs[@]}"; do
  size=$(stat -c %s "$input")
  for cmd in plan lint; do
    kib=$(/usr/bin/time -f "%M" "$bin" "$cmd" "$input" --format json 2>&1 >/dev/null | tail -n 1)
    awk -v n="$(basename "$input")" -v c="$cmd" -v k="$kib" -v s="$size" \
      'BEGIN { printf "%-10s %-5s input %7.1f MB  peak RSS %7.1f MB  (%.2fx input)\n", n, c, s/1e6, k*1024/1e6, k*1024/s }'
  done
done
