#!/usr/bin/env bash
# Lints every chart of the real-chart corpus and compares the findings with the committed
# expectations in fixtures/corpus-lint/<id>.txt (no false alarms on real charts).
#
#   scripts/corpus-lint.sh            # check (exit 1 on any difference)
#   scripts/corpus-lint.sh --update   # rewrite the expectations (keeps their `#` comments)
#
# An empty corpus, or an expectation whose rendered stream is gone, fails the check (--update
# removes such expectations).
#
# Each rendered stream (corpus/rendered/<id>.yaml) is linted together with its chart directory,
# assembled from corpus/charts/ as corpus/tools/corpus.py does (subcharts vendored into
# charts/, dropped dependencies removed), and with the values files it was rendered with, so
# that template lines, Chart.yaml facts and conditions are all checked. Not part of
# `cargo test`: a fresh clone has no corpus. The corpus is found at $CHARTSEQ_CORPUS, else
# ../shared/corpus beside the checkout.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
corpus="${CHARTSEQ_CORPUS:-$here/../shared/corpus}"
if [ ! -d "$corpus/rendered" ]; then
    echo "corpus-lint: no corpus at $corpus (set CHARTSEQ_CORPUS)" >&2
    exit 2
fi
# The binary this build produced, wherever CARGO_TARGET_DIR (or a configuration) puts it.
binary="$(cargo build --release --quiet --manifest-path "$here/Cargo.toml" --bin chartseq \
    --message-format=json | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "chartseq" and m.get("executable"):
        print(m["executable"])
')"
if [ -z "$binary" ] || [ ! -x "$binary" ]; then
    echo "corpus-lint: cargo build did not name the chartseq binary" >&2
    exit 2
fi
exec python3 - "$here" "$(cd "$corpus" && pwd)" "$binary" "$@" <<'PY'
import difflib, json, subprocess, sys, tempfile
from pathlib import Path

here, corpus, binary = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
update = "--update" in sys.argv[4:]
print(f"corpus-lint: {binary} on {corpus / 'rendered'}")
expect_dir = here / "fixtures" / "corpus-lint"
failed = []
streams = sorted((corpus / "rendered").glob("*.yaml"))
if not streams:
    print(f"corpus-lint: no rendered charts in {corpus / 'rendered'}: nothing would be checked")
    sys.exit(1)
# An expectation whose stream is gone would never be compared again.
ids = {s.stem for s in streams}
orphans = sorted(p.name for p in expect_dir.glob("*.txt") if p.stem not in ids)
if orphans:
    print(f"corpus-lint: expectations without a rendered chart in {corpus / 'rendered'}: {' '.join(orphans)}")
    if not update:
        sys.exit(1)
    for name in orphans:
        (expect_dir / name).unlink()
        print(f"removed {name}")
sys.path.insert(0, str(corpus / "tools"))
sys.path.insert(0, str(corpus))
import corpus as builder  # the corpus's own assembly code
plan = json.loads((corpus / "charts" / "plan.json").read_text())
flags = {}
for line in (corpus / "manifest.tsv").read_text().splitlines()[1:]:
    cols = line.split("\t")
    flags[cols[0]] = cols[9]
for stream in streams:
    cid = stream.stem
    with tempfile.TemporaryDirectory(prefix="corpus-lint-") as tmp:
        args = [str(binary), "lint", str(stream), "--format", "concise", "--fail-on", "never"]
        how = "stream only"
        node = plan.get(cid)
        if node is not None:
            chart = Path(tmp) / node["name"]
            builder.assemble(node, chart)
            args += ["--chart", str(chart)]
            words = flags.get(cid, "-").split()
            for i, w in enumerate(words):
                if w == "-f" and i + 1 < len(words):
                    args += ["-f", str(chart / words[i + 1])]
            how = "with chart"
        run = subprocess.run(args, capture_output=True, text=True, cwd=here)
        if run.returncode != 0:
            failed.append(cid)
            print(f"FAIL {cid}: exit {run.returncode}\n{run.stderr}")
            continue
        got = [l.replace(tmp + "/", "<chart>/") for l in run.stdout.splitlines()]
    path = expect_dir / f"{cid}.txt"
    if not path.exists() and not update:
        failed.append(cid)
        print(f"MISSING {cid}: no expectation file {path.relative_to(here)} (write it with --update)")
        continue
    old = path.read_text().splitlines() if path.exists() else []
    comments = [l for l in old if l.startswith("#")]
    expected = [l for l in old if l and not l.startswith("#")]
    errors = sum(" [error] " in l for l in got)
    if update:
        path.write_text("\n".join(comments + got) + "\n")
    elif got != expected:
        failed.append(cid)
        print(f"DIFF {cid}:")
        sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(expected, got, "expected", "found", lineterm=""))
    print(f"{'ok  ' if cid not in failed else 'BAD '} {cid} ({how}): {len(got)} findings, {errors} errors")
if failed:
    print(f"corpus-lint: {len(failed)} chart(s) differ: {' '.join(failed)}")
    sys.exit(1)
print("corpus-lint: every chart matches its expectations")
PY
