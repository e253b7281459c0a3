//! `chartseq apply` speed on the real control plane (`scripts/cluster.sh`: the API server,
//! the controllers, kwok's pod stages).
//!
//! A release of 30 resource groups in a diamond-rich DAG, each one Deployment whose pod
//! becomes ready 50–400 ms after it starts (kwok's pod-ready delay annotation). Reports the
//! sequenced install's wall time against the critical path of readiness read from the API
//! server's audit log (each group's time from its write to the status write that showed it
//! ready, summed along the longest chain: the best any scheduler could have done with the
//! durations this cluster really took), and against `helm install --wait` of the same chart
//! unsequenced (everything at once, waiting once). Also the planned critical path and
//! batch-by-batch waiting from the delays alone.
//!
//! Uses the cluster named by `$CHARTSEQ_TEST_KUBECONFIG` and `$CHARTSEQ_TEST_AUDIT_LOG`, or
//! starts one for the run (Go needed). helm and kubectl come from `$CHARTSEQ_HELM` and
//! `$CHARTSEQ_KUBECTL` (`scripts/get-tools.sh`). Run: `cargo bench --bench apply`.

#![expect(clippy::print_stdout, reason = "a benchmark report")]
#![expect(
    clippy::cast_precision_loss,
    reason = "milliseconds and counts far below 2^52"
)]

#[path = "../tests/it/cluster/audit.rs"]
#[expect(dead_code, reason = "the benchmark reads part of the audit log")]
mod audit;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
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
    deps: Vec<Vec<usize>>,
    delays: Vec<u64>,
}

fn release() -> Release {
    let mut rng = Rng(0x5eed_cafe);
    let mut deps = Vec::new();
    let mut delays = Vec::new();
    let mut stream = String::new();
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
            "---\n# Source: bench/templates/g{i:02}.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d{i:02}\n  annotations:\n    helm.sh/resource-group: g{i:02}\n{depends}spec:\n  replicas: 1\n  selector: {{matchLabels: {{app: d{i:02}}}}}\n  template:\n    metadata:\n      labels: {{app: d{i:02}}}\n      annotations: {{pod-ready.stage.kwok.x-k8s.io/delay: {delay}ms}}\n    spec:\n      containers: [{{name: c, image: busybox}}]\n"
        );
        deps.push(d);
        delays.push(delay);
    }
    Release {
        stream,
        deps,
        delays,
    }
}

/// The longest chain: a group is ready at max(prerequisites ready) + its duration.
fn critical_path(deps: &[Vec<usize>], durations: &[u64]) -> u64 {
    let mut ready = vec![0u64; GROUPS];
    for i in 0..GROUPS {
        let start = deps[i].iter().map(|&p| ready[p]).max().unwrap_or(0);
        ready[i] = start + durations[i];
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

/// Microseconds since the epoch of an audit timestamp (`2026-01-02T03:04:05.123456Z`); only
/// differences are used, so days count from an arbitrary origin.
fn micros(t: &str) -> u64 {
    let digits = |s: &str| s.parse::<u64>().unwrap_or(0);
    let (date, time) = t.trim_end_matches('Z').split_once('T').unwrap_or(("", ""));
    let d: Vec<u64> = date.split('-').map(digits).collect();
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let h: Vec<u64> = hms.split(':').map(digits).collect();
    let frac = format!("{frac:0<6}");
    let days = d.first().unwrap_or(&0) * 372 + d.get(1).unwrap_or(&0) * 31 + d.get(2).unwrap_or(&0);
    let secs = days * 86_400
        + h.first().unwrap_or(&0) * 3600
        + h.get(1).unwrap_or(&0) * 60
        + h.get(2).unwrap_or(&0);
    secs * 1_000_000 + digits(&frac[..6])
}

struct Cluster {
    kubeconfig: PathBuf,
    audit_log: PathBuf,
    /// The directory of a cluster this run started (and stops), if it started one.
    own: Option<PathBuf>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cluster() -> Cluster {
    if let (Some(kubeconfig), Some(audit_log)) = (
        std::env::var_os("CHARTSEQ_TEST_KUBECONFIG"),
        std::env::var_os("CHARTSEQ_TEST_AUDIT_LOG"),
    ) {
        return Cluster {
            kubeconfig: kubeconfig.into(),
            audit_log: audit_log.into(),
            own: None,
        };
    }
    let dir = root().join(format!("target/cluster/bench-{}", std::process::id()));
    let out = Command::new(root().join("scripts/cluster.sh"))
        .arg("up")
        .arg(&dir)
        .env("CHARTSEQ_CLUSTER_OWNER", std::process::id().to_string())
        .output()
        .expect("scripts/cluster.sh runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scripts/cluster.sh up failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = |key: &str| -> PathBuf {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_else(|| panic!("scripts/cluster.sh printed no {key}"))
            .into()
    };
    Cluster {
        kubeconfig: line("KUBECONFIG="),
        audit_log: line("AUDIT_LOG="),
        own: Some(dir),
    }
}

fn tool(name: &str) -> PathBuf {
    let var = format!("CHARTSEQ_{}", name.to_uppercase());
    std::env::var_os(&var).map_or_else(
        || panic!("${var} must name the {name} binary (scripts/get-tools.sh)"),
        PathBuf::from,
    )
}

fn must(cmd: &mut Command) -> Duration {
    let started = Instant::now();
    let output = cmd.output().expect("the command runs");
    let took = started.elapsed();
    assert!(
        output.status.success(),
        "{cmd:?}:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    took
}

fn namespace(c: &Cluster, name: &str) {
    must(
        Command::new(tool("kubectl"))
            .args(["create", "namespace", name, "--kubeconfig"])
            .arg(&c.kubeconfig),
    );
}

fn drop_namespace(c: &Cluster, name: &str) {
    let _ = Command::new(tool("kubectl"))
        .args(["delete", "namespace", name, "--wait=false", "--kubeconfig"])
        .arg(&c.kubeconfig)
        .output();
}

/// A sequenced install with chartseq: its wall time and the critical path of readiness the
/// audit log shows (ms).
fn chartseq_install(c: &Cluster, r: &Release, stream: &Path, ns: &str) -> (Duration, u64) {
    namespace(c, ns);
    let wall = must(
        Command::new(env!("CARGO_BIN_EXE_chartseq"))
            .args(["apply", "bench"])
            .arg(stream)
            .args(["-n", ns, "--timeout", "5m", "--kubeconfig"])
            .arg(&c.kubeconfig)
            .env_remove("KUBECONFIG"),
    );
    let log = audit::Audit::read(&c.audit_log, ns);
    let durations: Vec<u64> = (0..GROUPS)
        .map(|i| {
            let name = format!("d{i:02}");
            let written = micros(&log.created("Deployment", &name).received);
            let ready = micros(&log.ready("Deployment", &name));
            ready.saturating_sub(written) / 1000
        })
        .collect();
    drop_namespace(c, ns);
    (wall, critical_path(&r.deps, &durations))
}

/// `helm install --wait` of the same objects as a chart of its own, unsequenced: wall time.
fn helm_install(c: &Cluster, chart: &Path, ns: &str) -> Duration {
    namespace(c, ns);
    let home = chart.with_file_name(format!("helm-home-{ns}"));
    let wall = must(
        Command::new(tool("helm"))
            .args(["install", "bench"])
            .arg(chart)
            .args(["-n", ns, "--wait", "--timeout", "5m", "--kubeconfig"])
            .arg(&c.kubeconfig)
            .env("HELM_CONFIG_HOME", home.join("config"))
            .env("HELM_CACHE_HOME", home.join("cache"))
            .env("HELM_DATA_HOME", home.join("data"))
            .env_remove("KUBECONFIG")
            .env_remove("HELM_NAMESPACE"),
    );
    drop_namespace(c, ns);
    wall
}

fn main() {
    let r = release();
    let planned = critical_path(&r.deps, &r.delays);
    let batches = batch_by_batch(&r);
    let c = cluster();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let stream = dir.path().join("release.yaml");
    std::fs::write(&stream, &r.stream).expect("the stream is written");
    // The same objects as a v2 chart: helm installs them all at once and waits once. Its
    // objects lose the dependency annotation, which helm would send as it is and the API
    // server refuses (a key of two slashes); chartseq strips it, as the sequencing HIP says.
    let chart = dir.path().join("bench");
    std::fs::create_dir_all(chart.join("templates")).expect("the chart directory");
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: bench\nversion: 0.1.0\n",
    )
    .expect("Chart.yaml");
    let mut unsequenced = String::new();
    for line in r.stream.lines() {
        if !line.contains("helm.sh/depends-on/resource-groups") {
            unsequenced.push_str(line);
            unsequenced.push('\n');
        }
    }
    std::fs::write(chart.join("templates/all.yaml"), unsequenced).expect("the templates");

    let id = std::process::id();
    let runs: Vec<(Duration, u64)> = (0..2)
        .map(|k| chartseq_install(&c, &r, &stream, &format!("bench-seq-{id}-{k}")))
        .collect();
    let (wall, observed) = runs.iter().min_by_key(|x| x.0).copied().expect("two runs");
    let helm = (0..2)
        .map(|k| helm_install(&c, &chart, &format!("bench-helm-{id}-{k}")))
        .min()
        .expect("two runs");
    if let Some(own) = &c.own {
        let _ = Command::new(root().join("scripts/cluster.sh"))
            .arg("down")
            .arg(own)
            .output();
    }

    let edges: usize = r.deps.iter().map(Vec::len).sum();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "apply benchmark on the real control plane: {GROUPS} groups, {edges} dependency edges, pod-ready delays 50-400 ms"
    );
    println!("  planned critical path (delays on the longest chain): {planned} ms");
    println!("  planned batch-by-batch waiting (Kahn batches):       {batches} ms");
    println!(
        "  critical path of readiness from the audit log:       {observed} ms (each group from its write to its controller's ready status write)"
    );
    println!(
        "  chartseq apply, sequenced (best of 2):               {:.0} ms",
        ms(wall)
    );
    println!(
        "  helm install --wait, unsequenced (best of 2):        {:.0} ms",
        ms(helm)
    );
    println!(
        "  sequenced wall / audit critical path:  {:.2}x",
        ms(wall) / observed.max(1) as f64
    );
    println!(
        "  sequenced wall / helm --wait wall:     {:.2}x",
        ms(wall) / ms(helm).max(1.0)
    );
}
