//! Lint speed, measured as users see it: whole `chartseq` processes, median wall time.
//!
//! `cargo bench --bench lint` (needs the corpus at `$CHARTSEQ_CORPUS` or `../shared/corpus`
//! beside the checkout; without it, or when `make_big.py` or the typical chart is missing, it
//! fails rather than measure nothing):
//! 1. `lint` against `plan` on the ~50 MB stream written by the corpus's `make_big.py`
//!    (target: lint within 1.3× of plan);
//! 2. `lint` on a typical chart, bitnami-wordpress rendered (target: under 10 ms).
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

/// Median wall time of `runs` executions of `chartseq args…` (output discarded).
fn median(args: &[&str], runs: usize) -> Duration {
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
            assert!(
                status.code().is_some_and(|c| c == 0 || c == 1),
                "chartseq {args:?} failed: {status}"
            );
            elapsed
        })
        .collect();
    times.sort();
    times[times.len() / 2]
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
        .unwrap_or(7);
    let Some(corpus) = corpus_dir() else {
        println!("lint bench: no corpus (set CHARTSEQ_CORPUS)");
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
        println!("lint bench: make_big.py failed, so there is nothing to measure");
        std::process::exit(1);
    }
    let big_text = big.to_string_lossy().into_owned();
    let megabytes = std::fs::metadata(&big).map_or(0, |m| m.len()) / 1_000_000;
    let mut missed = false;

    let plan = median(&["plan", &big_text], runs);
    let lint = median(
        &[
            "lint",
            &big_text,
            "--format",
            "concise",
            "--fail-on",
            "never",
        ],
        runs,
    );
    let ratio = lint.as_secs_f64() / plan.as_secs_f64();
    println!(
        "big stream ({megabytes} MB): plan {:.1} ms, lint {:.1} ms, lint/plan {ratio:.2} (target <= 1.30), median of {runs}",
        ms(plan),
        ms(lint)
    );
    missed |= ratio > 1.3;

    let wordpress = corpus.join("rendered/bitnami-wordpress.yaml");
    if !wordpress.is_file() {
        println!("lint bench: {} is missing", wordpress.display());
        std::process::exit(1);
    }
    let wordpress_text = wordpress.to_string_lossy().into_owned();
    let typical = median(
        &[
            "lint",
            &wordpress_text,
            "--format",
            "concise",
            "--fail-on",
            "never",
        ],
        runs.max(21),
    );
    println!(
        "bitnami-wordpress: lint {:.2} ms process wall time (target < 10 ms), median of {}",
        ms(typical),
        runs.max(21)
    );
    missed |= typical >= Duration::from_millis(10);
    if missed {
        println!("a lint speed target was missed");
        std::process::exit(1);
    }
}
