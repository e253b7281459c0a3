//! Load + plan benchmark and corpus check.
//!
//! `cargo bench --bench load_plan` (needs `../shared/corpus` beside the checkout, or
//! `CHARTSEQ_CORPUS=DIR`):
//! 1. plans every rendered chart of the corpus and checks that none errors and that the plan
//!    holds every document exactly once — in a step, the CRDs, the hooks, or (a document of
//!    only comments, never a resource) the comments — (exit 1 otherwise);
//! 2. times load + plan on the largest corpus chart and on the ~50 MB stream written by
//!    `make_big.py`, with 1 and 2 threads, each in a fresh child process so that peak RSS
//!    (`VmHWM`) is the workload's own.
//! 3. times the planner alone on 100k groups in a chain and on that chain closed into a cycle.
//!
//! `-- --check` runs only the corpus check (what CI runs). A missing, unreadable or empty
//! corpus is a failure, never a check that passes with nothing checked.

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use chartseq::model::{self, Content, Input, InputTarget};
use chartseq::plan;

fn input(path: &Path) -> Input {
    Input {
        target: InputTarget::Stream(path.to_path_buf()),
        chart: None,
        helm: chartseq::source::helm::HelmOptions::default(),
        limits: chartseq::parse::Limits::default(),
        chart_limits: chartseq::source::chart::ChartLimits::default(),
        max_input_bytes: chartseq::source::read::MAX_INPUT_BYTES,
    }
}

fn corpus_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("CHARTSEQ_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
        PathBuf::from,
    );
    dir.join("rendered").is_dir().then_some(dir)
}

/// Plans one stream; returns (documents, bytes, seconds) or a description of what is wrong.
fn load_and_plan(path: &Path) -> Result<(usize, usize, f64), String> {
    let started = Instant::now();
    let model = model::load(&input(path)).map_err(|e| e.to_string())?;
    let plan = plan::plan(&model).map_err(|e| format!("{:?}", e.issues))?;
    let seconds = started.elapsed().as_secs_f64();
    let mut seen = vec![0u32; model.documents.len()];
    for &doc in plan
        .steps
        .iter()
        .flat_map(|s| &s.resources)
        .chain(&plan.crds)
        .chain(&plan.hooks)
        .chain(&plan.comments)
    {
        seen[doc] += 1;
    }
    if let Some(&doc) = plan
        .comments
        .iter()
        .find(|&&d| !model.documents[d].is_comment_only())
    {
        return Err(format!(
            "document {doc} is listed with the comments but holds more"
        ));
    }
    for (doc, count) in seen.iter().enumerate() {
        if *count != 1 {
            let source = model.documents[doc].source_path.as_deref().unwrap_or("?");
            return Err(format!(
                "document {doc} ({source}) is planned {count} times"
            ));
        }
    }
    for (doc, d) in model.documents.iter().enumerate() {
        if let Content::Invalid { message, .. } = &d.content {
            return Err(format!("document {doc} does not parse: {message}"));
        }
    }
    let hooks = plan.hooks.len();
    let non_hook: usize =
        plan.steps.iter().map(|s| s.resources.len()).sum::<usize>() + plan.crds.len();
    assert_eq!(
        non_hook + hooks + plan.comments.len(),
        model.documents.len()
    );
    Ok((
        model.documents.len(),
        model.sources.get(model.stream).bytes.len(),
        seconds,
    ))
}

fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        })
        .unwrap_or(0)
}

/// Child mode: run one workload `repeat` times, print `seconds bytes docs hwm_kib`.
fn child(path: &Path, repeat: usize) {
    let mut best = f64::MAX;
    let mut result = (0, 0);
    for _ in 0..repeat {
        match load_and_plan(path) {
            Ok((docs, bytes, seconds)) => {
                best = best.min(seconds);
                result = (docs, bytes);
            }
            Err(e) => {
                println!("error {e}");
                std::process::exit(1);
            }
        }
    }
    println!("{best} {} {} {}", result.1, result.0, vm_hwm_kib());
}

fn measure(path: &Path, threads: usize, repeat: usize) -> Option<(f64, usize, usize, u64)> {
    let exe = std::env::current_exe().ok()?;
    let out = Command::new(exe)
        .args(["--child", &path.to_string_lossy(), &repeat.to_string()])
        .env("RAYON_NUM_THREADS", threads.to_string())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.len() != 4 {
        println!("  failed: {text}");
        return None;
    }
    Some((
        fields[0].parse().ok()?,
        fields[1].parse().ok()?,
        fields[2].parse().ok()?,
        fields[3].parse().ok()?,
    ))
}

fn report(name: &str, path: &Path, repeat: usize) {
    let one = measure(path, 1, repeat);
    let two = measure(path, 2, repeat);
    let (Some(one), Some(two)) = (one, two) else {
        println!("{name}: the measurement failed");
        std::process::exit(1);
    };
    {
        #[expect(clippy::cast_precision_loss, reason = "byte counts far below 2^52")]
        let mb = one.1 as f64 / 1e6;
        println!(
            "{name}: {:.1} MB, {} documents | 1 thread: {:.3} s ({:.1} MB/s), peak RSS {:.1} MB | 2 threads: {:.3} s ({:.1} MB/s), peak RSS {:.1} MB ({:.2}x input) | speedup {:.2}x",
            mb,
            one.2,
            one.0,
            mb / one.0,
            f64::from(u32::try_from(one.3).unwrap_or(u32::MAX)) / 1024.0,
            two.0,
            mb / two.0,
            f64::from(u32::try_from(two.3).unwrap_or(u32::MAX)) / 1024.0,
            f64::from(u32::try_from(two.3).unwrap_or(u32::MAX)) * 1024.0 / (mb * 1e6),
            one.0 / two.0,
        );
    }
}

/// One `ConfigMap` per group, `g{i}` depending on `head` for i = 0 and on `g{i-1}` after.
fn chain_stream(groups: usize, head: &str) -> String {
    let mut out = String::new();
    for i in 0..groups {
        let dep = if i == 0 {
            head.to_owned()
        } else {
            format!("\"g{}\"", i - 1)
        };
        // Writing to a String cannot fail.
        let _ = write!(
            out,
            "---\n# Source: c/templates/c{i}.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\n  annotations:\n    helm.sh/resource-group: g{i}\n    helm.sh/depends-on/resource-groups: '[{dep}]'\n"
        );
    }
    out
}

/// The planner alone (the model is loaded first, untimed) on 100k groups in a chain, and on
/// the same chain closed into a cycle, which must be reported as its path: best of 3.
fn planner_chain() {
    const GROUPS: usize = 100_000;
    let dir = std::env::temp_dir();
    for (name, head) in [
        ("chain", String::new()),
        ("cycle", format!("\"g{}\"", GROUPS - 1)),
    ] {
        let path = dir.join(format!("chartseq-bench-{name}.yaml"));
        if std::fs::write(&path, chain_stream(GROUPS, &head)).is_err() {
            println!(
                "skipped the planner {name}: cannot write {}",
                path.display()
            );
            continue;
        }
        let Ok(model) = model::load(&input(&path)) else {
            println!("skipped the planner {name}: the stream does not load");
            continue;
        };
        let mut best = f64::MAX;
        let mut outcome = String::new();
        for _ in 0..3 {
            let started = Instant::now();
            let (plan, issues) = plan::analyze(&model);
            best = best.min(started.elapsed().as_secs_f64());
            outcome = match issues.first() {
                Some(plan::PlanIssue::GroupCycle { path, .. }) => {
                    format!("a cycle of {} groups", path.len() - 1)
                }
                Some(other) => format!("unexpected {other:?}"),
                None => format!(
                    "{} batches",
                    plan.levels
                        .iter()
                        .map(|l| l.group_batches.len())
                        .sum::<usize>()
                ),
            };
        }
        println!("planner only, {GROUPS} groups ({name}): {best:.3} s, {outcome}");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let path = PathBuf::from(&args[i + 1]);
        let repeat = args.get(i + 2).and_then(|r| r.parse().ok()).unwrap_or(1);
        child(&path, repeat);
        return;
    }
    // Checking nothing is a failure: a missing, unreadable or empty corpus exits 1.
    let Some(corpus) = corpus_dir() else {
        println!("no corpus: set CHARTSEQ_CORPUS or put ../shared/corpus beside the checkout");
        std::process::exit(1);
    };
    let rendered = corpus.join("rendered");
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&rendered) {
        Ok(dir) => match dir.map(|e| e.map(|e| e.path())).collect() {
            Ok(files) => files,
            Err(e) => {
                println!("cannot list {}: {e}", rendered.display());
                std::process::exit(1);
            }
        },
        Err(e) => {
            println!("cannot read {}: {e}", rendered.display());
            std::process::exit(1);
        }
    };
    files.sort();
    if files.is_empty() {
        println!("corpus: no rendered charts in {}", rendered.display());
        std::process::exit(1);
    }
    let mut failures = 0;
    let mut largest: Option<(u64, PathBuf)> = None;
    for file in &files {
        match load_and_plan(file) {
            Ok((docs, _, _)) => println!("ok   {} ({docs} documents)", file.display()),
            Err(e) => {
                failures += 1;
                println!("FAIL {}: {e}", file.display());
            }
        }
        let size = std::fs::metadata(file).map_or(0, |m| m.len());
        if largest.as_ref().is_none_or(|(s, _)| size > *s) {
            largest = Some((size, file.clone()));
        }
    }
    println!(
        "corpus: {} charts planned, {failures} failures",
        files.len()
    );
    if failures > 0 {
        std::process::exit(1);
    }
    if args.iter().any(|a| a == "--check") {
        return;
    }
    planner_chain();
    if let Some((_, file)) = &largest {
        report(
            &format!("largest corpus chart ({})", file.display()),
            file,
            5,
        );
    }
    let big = std::env::temp_dir().join("chartseq-bench-big.yaml");
    if !big.is_file() {
        let status = Command::new("python3")
            .arg(corpus.join("make_big.py"))
            .arg("-o")
            .arg(&big)
            .output();
        if !status.is_ok_and(|s| s.status.success()) {
            println!("make_big.py failed: the 50 MB stream cannot be measured");
            std::process::exit(1);
        }
    }
    report("make_big.py stream", &big, 3);
}
