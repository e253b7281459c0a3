#!/usr/bin/env bash
# Round trip of `chartseq migrate` over the real-chart corpus: on every corpus chart that
# carries no other tool's ordering annotations, `migrate --from auto` must change nothing
# (no edit, no manual edit, nothing lost). Charts that do carry them are listed, not judged.
#
#   scripts/corpus-migrate.sh
#   CHARTSEQ_BIN=target/debug/chartseq scripts/corpus-migrate.sh   # with a binary already built
#
# Each chart is assembled from corpus/charts/ as corpus/tools/corpus.py does (the same way
# scripts/corpus-lint.sh does) and migrated with the values files it was rendered with. Not
# part of `cargo test`: a fresh clone has no corpus. The corpus is found at $CHARTSEQ_CORPUS,
# else ../shared/corpus beside the checkout; helm is the pinned one (scripts/get-tools.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
corpus="${CHARTSEQ_CORPUS:-$here/../shared/corpus}"
if [ ! -d "$corpus/rendered" ]; then
    echo "corpus-migrate: no corpus at $corpus (set CHARTSEQ_CORPUS)" >&2
    exit 2
fi
helm_bin="$("$here/scripts/get-tools.sh")/helm"
# The release binary CI builds for the corpus checks; $CHARTSEQ_BIN names another one.
binary="${CHARTSEQ_BIN:-}"
[ -n "$binary" ] || binary="$(cargo build --release --quiet --manifest-path "$here/Cargo.toml" --bin chartseq \
    --message-format=json | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "chartseq" and m.get("executable"):
        print(m["executable"])
')"
if [ -z "$binary" ] || [ ! -x "$binary" ]; then
    echo "corpus-migrate: cargo build did not name the chartseq binary" >&2
    exit 2
fi
exec python3 - "$here" "$(cd "$corpus" && pwd)" "$binary" "$helm_bin" <<'PY'
import json, os, subprocess, sys, tempfile
from pathlib import Path

here, corpus, binary, helm = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
sys.path.insert(0, str(corpus / "tools"))
sys.path.insert(0, str(corpus))
import corpus as builder  # the corpus's own assembly code
plan = json.loads((corpus / "charts" / "plan.json").read_text())
flags = {}
for line in (corpus / "manifest.tsv").read_text().splitlines()[1:]:
    cols = line.split("\t")
    flags[cols[0]] = cols[9]
streams = sorted((corpus / "rendered").glob("*.yaml"))
if not streams:
    print(f"corpus-migrate: no rendered charts in {corpus / 'rendered'}: nothing would be checked")
    sys.exit(1)
env = dict(os.environ, CHARTSEQ_HELM=helm)
checked, foreign, failed = 0, [], []
for stream in streams:
    cid = stream.stem
    node = plan.get(cid)
    if node is None:
        print(f"skip {cid}: a rendered stream without its chart (migrate edits templates)")
        continue
    with tempfile.TemporaryDirectory(prefix="corpus-migrate-") as tmp:
        chart = Path(tmp) / node["name"]
        builder.assemble(node, chart)
        args = [str(binary), "migrate", str(chart), "--from", "auto", "--format", "json"]
        words = flags.get(cid, "-").split()
        for i, w in enumerate(words):
            if w == "-f" and i + 1 < len(words):
                args += ["-f", str(chart / words[i + 1])]
        run = subprocess.run(args, capture_output=True, text=True, cwd=here, env=env)
    if run.returncode == 2 and "ordering annotations" in run.stderr:
        foreign.append(cid)
        print(f"skip {cid}: {run.stderr.strip().splitlines()[-1]}")
        continue
    try:
        result = json.loads(run.stdout)
    except json.JSONDecodeError:
        failed.append(cid)
        print(f"FAIL {cid}: exit {run.returncode}\n{run.stderr}")
        continue
    if result["from"] is not None:
        foreign.append(cid)
        print(f"skip {cid}: carries {result['from']} ordering annotations")
        continue
    checked += 1
    changed = result["edits"] or result["manual"] or result["lost"] or run.returncode != 0
    if changed:
        failed.append(cid)
        print(f"FAIL {cid}: migrate --from auto changed a chart without foreign annotations:\n{run.stdout}")
    else:
        print(f"ok   {cid}")
print(f"corpus-migrate: {checked} charts unchanged, {len(foreign)} with other tools' annotations, {len(failed)} failed")
if failed or checked == 0:
    sys.exit(1)
PY
