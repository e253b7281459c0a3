//! Planning in another tool's order costs no more than planning HIP-0025: whole `chartseq plan`
//! processes, median wall time.
//!
//! `cargo bench --bench dialects` (needs the corpus at `$CHARTSEQ_CORPUS` or `../shared/corpus`
//! beside the checkout; without it, or when `make_big.py` fails, it fails rather than measure
//! nothing). The ~50 MB stream written by the corpus's `make_big.py` is planned with
//! `--dialect hip`; then, for each other dialect, the same stream with that dialect's ordering
//! annotations added to every object (ten waves, weights, phases, layers or kapp change groups
//! chained by rules; for kapp, CRDs and Namespaces aside, which its default rules put first) is
//! planned with `--dialect <it>`. Target: each within 1.2× of HIP.
//!
//! Exits 1 when a target is missed. `-- --runs N` changes the number of runs per figure.

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

/// Median wall time of `runs` executions of `chartseq args…` (output discarded), after one
/// run that must succeed (its errors are shown when it does not).
fn median(args: &[&str], runs: usize) -> Duration {
    let first = Command::new(env!("CARGO_BIN_EXE_chartseq"))
        .args(args)
        .output()
        .expect("the chartseq binary runs");
    if !first.status.success() {
        let err = String::from_utf8_lossy(&first.stderr);
        let head: Vec<&str> = err.lines().take(20).collect();
        println!(
            "chartseq {args:?} failed ({}):\n{}",
            first.status,
            head.join("\n")
        );
        std::process::exit(1);
    }
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let started = Instant::now();
            let status = Command::new(env!("CARGO_BIN_EXE_chartseq"))
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("the chartseq binary runs");
            let elapsed = started.elapsed();
            assert!(status.success(), "chartseq {args:?} failed: {status}");
            elapsed
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

/// The annotation lines (each `    key: "value"`) a dialect gives the `i`th object.
fn annotations(dialect: &str, i: usize) -> Vec<String> {
    let level = i % 10;
    let line = |key: &str, value: String| format!("    {key}: \"{value}\"");
    match dialect {
        "argo" => vec![line("argocd.argoproj.io/sync-wave", level.to_string())],
        "werf" => vec![line("werf.io/weight", level.to_string())],
        "kots" => vec![line("kots.io/creation-phase", level.to_string())],
        "draft" => {
            let mut out = vec![line("helm.sh/layer", format!("layer{level}"))];
            if level > 0 {
                out.push(line(
                    "helm.sh/depends-on/layers",
                    format!("[\\\"layer{}\\\"]", level - 1),
                ));
            }
            out
        }
        "kapp" => {
            let mut out = vec![line(
                "kapp.k14s.io/change-group",
                format!("bench.io/g{level}"),
            )];
            if level > 0 {
                out.push(line(
                    "kapp.k14s.io/change-rule",
                    format!("upsert after upserting bench.io/g{}", level - 1),
                ));
            }
            out
        }
        _ => Vec::new(),
    }
}

/// The stream with a dialect's annotations added to every object that has a top-level
/// `metadata:` block (helm's two-space layout): into its `annotations:` block, or as a new one.
/// HIP-0025's own annotations are dropped, so the chart carries one dialect only.
fn annotated(stream: &str, dialect: &str) -> String {
    let mut out = String::with_capacity(stream.len() + stream.len() / 4);
    let mut object = 0usize;
    let mut kind = "";
    let mut lines = stream.lines().peekable();
    while let Some(line) = lines.next() {
        if line == "---" {
            kind = "";
        }
        if line.starts_with("  helm.sh/") || line.starts_with("    helm.sh/") {
            // HIP-0025's keys (groups, depends-on, readiness) would make the chart mixed.
            let key = line.trim_start();
            if key.starts_with("helm.sh/resource-group")
                || key.starts_with("helm.sh/depends-on/")
                || key.starts_with("helm.sh/readiness-")
            {
                continue;
            }
        }
        out.push_str(line);
        out.push('\n');
        if let Some(k) = line.strip_prefix("kind: ") {
            kind = k.trim();
        }
        // kapp's default rules put CRDs and Namespaces before everything: a change rule on
        // them would close a cycle through the custom resources and namespaced objects.
        let kapp_default =
            dialect == "kapp" && matches!(kind, "CustomResourceDefinition" | "Namespace");
        if line == "metadata:" && !kapp_default {
            let added = annotations(dialect, object).join("\n");
            object += 1;
            // Copy the metadata block up to its `annotations:` line, if it has one; an empty
            // `annotations: {}` is replaced by the block.
            let mut placed = false;
            while let Some(&next) = lines.peek() {
                if !next.starts_with("  ") {
                    break;
                }
                lines.next();
                if next.starts_with("  annotations:") {
                    out.push_str("  annotations:\n");
                    out.push_str(&added);
                    out.push('\n');
                    // An empty map written on the next line (`annotations:` then `{}`).
                    if lines.peek().is_some_and(|l| l.trim() == "{}") {
                        lines.next();
                    }
                    placed = true;
                    break;
                }
                out.push_str(next);
                out.push('\n');
            }
            if !placed {
                out.push_str("  annotations:\n");
                out.push_str(&added);
                out.push('\n');
            }
        }
    }
    out
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let Some(corpus) = corpus_dir() else {
        println!("dialects bench: no corpus (set CHARTSEQ_CORPUS)");
        std::process::exit(1);
    };
    let dir = tempfile::tempdir().expect("temporary directory");
    let big = dir.path().join("big.yaml");
    let made = Command::new("python3")
        .arg(corpus.join("make_big.py"))
        .arg("-o")
        .arg(&big)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !made.is_ok_and(|s| s.success()) {
        println!("dialects bench: make_big.py failed, so there is nothing to measure");
        std::process::exit(1);
    }
    let stream = std::fs::read_to_string(&big).expect("the stream reads");
    let megabytes = stream.len() / 1_000_000;
    let big_text = big.to_string_lossy().into_owned();
    let hip = median(&["plan", &big_text, "--format", "json"], runs);
    println!(
        "big stream ({megabytes} MB): --dialect hip {:.1} ms, median of {runs}",
        ms(hip)
    );
    let mut missed = false;
    for dialect in ["argo", "werf", "kots", "kapp", "draft"] {
        let path = dir.path().join(format!("{dialect}.yaml"));
        let text = annotated(&stream, dialect);
        let size = text.len() / 1_000_000;
        std::fs::write(&path, text).expect("the annotated stream is written");
        let path_text = path.to_string_lossy().into_owned();
        let took = median(
            &["plan", &path_text, "--format", "json", "--dialect", dialect],
            runs,
        );
        let ratio = took.as_secs_f64() / hip.as_secs_f64();
        println!(
            "--dialect {dialect:<5} ({size} MB, every object annotated): {:.1} ms, {ratio:.2}× hip (target <= 1.20)",
            ms(took)
        );
        missed |= ratio > 1.2;
    }
    if missed {
        println!("a target was missed");
        std::process::exit(1);
    }
}
