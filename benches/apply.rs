//! `chartseq apply` speed against the test API server, where readiness delays are known.
//!
//! A release of 30 resource groups in a diamond-rich DAG, each one Deployment that becomes
//! ready 50–400 ms after it is applied. Reports the apply wall time against the critical path
//! (the sum of delays along the longest chain — the best any scheduler can do) plus a fixed
//! start-up measured on a one-resource release, and against batch-by-batch waiting (each
//! Kahn batch waits for its slowest member). Also reports API requests per resource and
//! watches per kind. Run: `cargo bench --bench apply`.

#![expect(clippy::print_stdout, reason = "a benchmark report")]
#![expect(
    clippy::cast_precision_loss,
    reason = "milliseconds and counts far below 2^52"
)]

#[path = "../examples/apiserver/server.rs"]
#[expect(dead_code, reason = "the benchmark uses part of the test server")]
mod apiserver;

use std::fmt::Write as _;
use std::process::Command;
use std::time::{Duration, Instant};

const GROUPS: usize = 30;

/// Deterministic pseudo-random numbers (xorshift), so every run measures the same release.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

struct Release {
    stream: String,
    scenario: String,
    deps: Vec<Vec<usize>>,
    delays: Vec<u64>,
}

fn release() -> Release {
    let mut rng = Rng(0x5eed_cafe);
    let mut deps = Vec::new();
    let mut delays = Vec::new();
    let mut stream = String::new();
    let mut scenario = String::from("resources:\n");
    for i in 0..GROUPS {
        // Up to three prerequisites among the previous eight groups: many diamonds.
        let mut d: Vec<usize> = Vec::new();
        if i > 0 {
            for _ in 0..=rng.below(3).min(i as u64 - 1) {
                let back = 1 + rng.below(8.min(i as u64)) as usize;
                if !d.contains(&(i - back)) {
                    d.push(i - back);
                }
            }
        }
        d.sort_unstable();
        let delay = 50 + rng.below(351);
        let list: Vec<String> = d.iter().map(|p| format!("\\\"g{p:02}\\\"")).collect();
        let depends = if d.is_empty() {
            String::new()
        } else {
            format!(
                "    helm.sh/depends-on/resource-groups: \"[{}]\"\n",
                list.join(", ")
            )
        };
        let _ = write!(
            stream,
            "---\n# Source: bench/templates/g{i:02}.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d{i:02}\n  annotations:\n    helm.sh/resource-group: g{i:02}\n{depends}spec:\n  replicas: 1\n  selector: {{matchLabels: {{app: d{i:02}}}}}\n  template:\n    metadata: {{labels: {{app: d{i:02}}}}}\n    spec:\n      containers: [{{name: c, image: busybox}}]\n"
        );
        let _ = writeln!(
            scenario,
            "- {{kind: Deployment, name: d{i:02}, readyAfterMs: {delay}}}"
        );
        deps.push(d);
        delays.push(delay);
    }
    Release {
        stream,
        scenario,
        deps,
        delays,
    }
}

/// The longest chain: a group is ready at max(prerequisites ready) + its delay.
fn critical_path(r: &Release) -> u64 {
    let mut ready = vec![0u64; GROUPS];
    for i in 0..GROUPS {
        let start = r.deps[i].iter().map(|&p| ready[p]).max().unwrap_or(0);
        ready[i] = start + r.delays[i];
    }
    ready.into_iter().max().unwrap_or(0)
}

/// Kahn batches, each waiting for its slowest member.
fn batch_by_batch(r: &Release) -> u64 {
    let mut level = vec![0usize; GROUPS];
    for i in 0..GROUPS {
        level[i] = r.deps[i].iter().map(|&p| level[p] + 1).max().unwrap_or(0);
    }
    let depth = level.iter().max().copied().unwrap_or(0);
    (0..=depth)
        .map(|l| {
            (0..GROUPS)
                .filter(|&i| level[i] == l)
                .map(|i| r.delays[i])
                .max()
                .unwrap_or(0)
        })
        .sum()
}

fn run_apply(stream: &str, scenario: &str) -> (Duration, apiserver::Counters, usize) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let handle = apiserver::spawn(
        apiserver::Scenario::parse(scenario).expect("the scenario parses"),
        dir.path(),
    );
    let path = dir.path().join("release.yaml");
    std::fs::write(&path, stream).expect("the stream is written");
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_chartseq"))
        .args(["apply", "bench"])
        .arg(&path)
        .args(["--progress", "json", "--kubeconfig"])
        .arg(&handle.kubeconfig)
        .env_remove("KUBECONFIG")
        .output()
        .expect("chartseq runs");
    let wall = started.elapsed();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let kinds = handle
        .server
        .log()
        .iter()
        .filter(|e| e.verb == "apply" && !e.name.starts_with("sh.helm.release.v1."))
        .map(|e| e.kind.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    (wall, handle.server.counters(), kinds)
}

fn main() {
    let r = release();
    let critical = critical_path(&r);
    let batches = batch_by_batch(&r);
    let one = "---\n# Source: one/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\ndata: {a: b}\n";
    let startup = (0..3)
        .map(|_| run_apply(one, "").0)
        .min()
        .unwrap_or_default();
    let runs: Vec<_> = (0..3).map(|_| run_apply(&r.stream, &r.scenario)).collect();
    let (wall, counters, kinds) = runs
        .iter()
        .min_by_key(|x| x.0)
        .copied()
        .expect("three runs");
    let edges: usize = r.deps.iter().map(Vec::len).sum();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let target = critical as f64 * 1.15 + ms(startup);
    println!("apply benchmark: {GROUPS} groups, {edges} dependency edges, delays 50-400 ms");
    println!("  critical path (sum of delays on the longest chain): {critical} ms");
    println!("  batch-by-batch waiting (Kahn batches, slowest each): {batches} ms");
    println!(
        "  fixed start-up (one ConfigMap release, best of 3):  {:.0} ms",
        ms(startup)
    );
    println!(
        "  chartseq apply wall time (best of 3):               {:.0} ms",
        ms(wall)
    );
    println!(
        "  vs critical path: {:.2}x of (critical path + start-up); target 1.15x critical path + start-up = {target:.0} ms: {}",
        ms(wall) / (critical as f64 + ms(startup)),
        if ms(wall) <= target { "met" } else { "MISSED" }
    );
    println!(
        "  vs batch-by-batch: {:.2}x",
        ms(wall) / (batches as f64 + ms(startup))
    );
    let resources = GROUPS as f64;
    let non_watch = counters.requests - counters.watches;
    println!(
        "  API requests: {} in all, {} watch(es) for {kinds} kind(s) of the release (target: one per kind), {:.2} other requests per resource (target <= 3: the ownership read and the apply of each object, plus discovery and the release record)",
        counters.requests,
        counters.watches,
        non_watch as f64 / resources
    );
}
