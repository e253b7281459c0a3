//! `chartseq diff` speed, measured as users see it: whole `chartseq` processes, median wall
//! time.
//!
//! `cargo bench --bench diff` (needs the corpus at `$CHARTSEQ_CORPUS` or `../shared/corpus`
//! beside the checkout; without it the bench says so and skips, exit 0): the largest corpus
//! chart (kube-prometheus-stack, ~5 MB rendered) against itself with one edit — a `ConfigMap`
//! in a new resource group appended, which changes the step graph, so the order comparison
//! runs in full rather than stopping at "same structure". `chartseq diff OLD NEW` (both sides
//! loaded, planned and linted, then compared) against `chartseq plan OLD` plus `chartseq plan
//! NEW`. Target: diff under 2× planning both. Exits 1 when the target is missed.
//! `-- --runs N` changes the number of runs per figure.

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn corpus_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("CHARTSEQ_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
        PathBuf::from,
    );
    dir.join("rendered").is_dir().then_some(dir)
}

/// Wall time of one `chartseq args…` (output discarded); exit 0 or 1 expected.
fn once(args: &[&str]) -> Duration {
    let started = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_chartseq"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("the chartseq binary runs");
    let elapsed = started.elapsed();
    assert!(
        status.code().is_some_and(|c| c == 0 || c == 1),
        "chartseq {args:?} failed: {status}"
    );
    elapsed
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The edit: one `ConfigMap` in a new resource group of the root chart.
const EDIT: &str = "---
# Source: kube-prometheus-stack/templates/edited.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: edited
  annotations:
    helm.sh/resource-group: edited
data:
  key: value
";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(7);
    let Some(corpus) = corpus_dir() else {
        println!(
            "diff bench: skipped, no corpus (set CHARTSEQ_CORPUS to the real-chart corpus, or put it at ../shared/corpus)"
        );
        return;
    };
    let old = corpus.join("rendered/kube-prometheus-stack.yaml");
    let Ok(text) = std::fs::read_to_string(&old) else {
        println!("diff bench: skipped, {} is missing", old.display());
        return;
    };
    let dir = tempfile::tempdir().expect("temporary directory");
    let new = dir.path().join("kube-prometheus-stack-edited.yaml");
    let mut edited = text.clone();
    if !edited.ends_with('\n') {
        edited.push('\n');
    }
    edited.push_str(EDIT);
    std::fs::write(&new, edited).expect("write the edited chart");
    let old_text = old.to_string_lossy().into_owned();
    let new_text = new.to_string_lossy().into_owned();

    // Interleaved, so that a slow moment of the machine hits both figures alike.
    let (mut plans, mut diffs) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        plans.push(once(&["plan", &old_text]) + once(&["plan", &new_text]));
        diffs.push(once(&["diff", &old_text, &new_text, "--format", "json"]));
    }
    let (plan, diff) = (median(plans), median(diffs));
    let ratio = diff.as_secs_f64() / plan.as_secs_f64();
    println!(
        "kube-prometheus-stack ({} KB) against itself with one edit: plan both {:.1} ms, diff {:.1} ms, diff/plan-both {ratio:.2} (target < 2.00), median of {runs}",
        text.len() / 1000,
        ms(plan),
        ms(diff)
    );
    if ratio >= 2.0 {
        println!("the diff speed target was missed");
        std::process::exit(1);
    }
}
