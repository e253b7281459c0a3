//! The deployer where Helm's behaviour is more than status reading: hooks run in Helm's order
//! (weight, name, kind) and are judged by kstatus whatever readiness annotations they carry; a
//! Pod that cannot be scheduled fails once the clock says 15 s have passed since its creation;
//! documents that hold only comments are not applied.

use std::time::{Duration, Instant};

use super::apiserver::{self, Handle, Scenario};
use crate::{chartseq, run};

struct Env {
    dir: tempfile::TempDir,
    server: Handle,
}

fn start(scenario: &str) -> Env {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let scenario = Scenario::parse(scenario).expect("the scenario parses");
    let server = apiserver::spawn(scenario, dir.path());
    Env { dir, server }
}

impl Env {
    /// Applies `stream` (written to a file) as release `shop` in `default`.
    fn apply(&self, stream: &str, extra: &[&str]) -> (i32, String, String) {
        let path = self.dir.path().join("stream.yaml");
        std::fs::write(&path, stream).expect("the stream is written");
        run(chartseq()
            .arg("apply")
            .arg(&path)
            .args(["--release", "shop", "-n", "default"])
            .args(extra)
            .arg("--kubeconfig")
            .arg(&self.server.kubeconfig))
    }

    /// When `kind/name` was first applied (not in a dry run).
    fn applied_at(&self, kind: &str, name: &str) -> u64 {
        let log = self.server.server.log();
        log.iter()
            .find(|e| e.verb == "apply" && e.kind == kind && e.name == name && !e.dry_run)
            .map_or_else(
                || panic!("{kind}/{name} was never applied: {log:#?}"),
                |e| e.at_ms,
            )
    }
}

fn hook(kind: &str, api_version: &str, name: &str, extra: &str) -> String {
    format!(
        "---\n# Source: shop/templates/{name}-{kind}.yaml\napiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: {name}\n  annotations:\n    helm.sh/hook: pre-install\n{extra}"
    )
}

const APP: &str = "---\n# Source: shop/templates/app.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata: {a: \"1\"}\n";

#[test]
fn hooks_of_equal_weight_and_name_run_in_helms_kind_order() {
    let env = start("");
    // Input order Job, ConfigMap, ServiceAccount; Helm runs ServiceAccount, ConfigMap, Job.
    let job_spec = "spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: s, image: busybox}]\n";
    let stream = [
        hook("Job", "batch/v1", "setup", job_spec),
        hook("ConfigMap", "v1", "setup", "data: {a: \"1\"}\n"),
        hook("ServiceAccount", "v1", "setup", ""),
        APP.to_owned(),
    ]
    .concat();
    let (code, out, err) = env.apply(&stream, &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    let sa = env.applied_at("ServiceAccount", "setup");
    let cm = env.applied_at("ConfigMap", "setup");
    let job = env.applied_at("Job", "setup");
    assert!(sa <= cm && cm <= job, "SA {sa}, CM {cm}, Job {job}");
    assert!(job <= env.applied_at("ConfigMap", "app"));
}

#[test]
fn a_hook_is_judged_by_kstatus_not_its_readiness_annotations() {
    let env = start("resources:\n- {kind: Job, name: migrate, readyAfterMs: 300}\n");
    // Custom readiness would never call this Job ready, and would call it failed once complete.
    let annotations = "    helm.sh/readiness-success: '[\"{.succeeded} == 5\"]'\n    helm.sh/readiness-failure: '[\"{.succeeded} == 1\"]'\n";
    let job = hook(
        "Job",
        "batch/v1",
        "migrate",
        &format!(
            "{annotations}spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{{name: m, image: busybox}}]\n"
        ),
    );
    let (code, out, err) = env.apply(&format!("{job}{APP}"), &["--readiness-timeout", "10s"]);
    assert_eq!(code, 0, "{out}\n{err}");
    // Judged by Helm's hook reader: the plan starts only once the Job has completed.
    let completed = env
        .server
        .server
        .log()
        .iter()
        .rev()
        .find(|e| e.verb == "ready" && e.kind == "Job" && e.name == "migrate")
        .map(|e| e.at_ms)
        .expect("the Job completed");
    assert!(env.applied_at("ConfigMap", "app") >= completed);
}

#[test]
fn an_unschedulable_pod_fails_fifteen_seconds_after_its_creation() {
    let env = start(
        "resources:\n- kind: Pod\n  name: web\n  never: true\n  status:\n  - afterMs: 0\n    value: {phase: Pending, conditions: [{type: PodScheduled, status: \"False\", reason: Unschedulable, message: 0/1 nodes are available}]}\n",
    );
    let pod = "---\n# Source: shop/templates/web.yaml\napiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers: [{name: w, image: nginx}]\n";
    let started = Instant::now();
    let (code, out, err) = env.apply(pod, &["--readiness-timeout", "1m"]);
    let took = started.elapsed();
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("Pod/web (namespace default) failed")
            && err.contains("Pod could not be scheduled (Unschedulable: 0/1 nodes are available"),
        "{err}"
    );
    // No watch event marks the moment: the wait re-judges as the clock moves.
    assert!(
        took >= Duration::from_secs(14) && took < Duration::from_secs(45),
        "failed after {took:?}"
    );
}

#[test]
fn documents_of_only_comments_are_not_applied() {
    let env = start("");
    let comment =
        "---\n# Source: shop/templates/pdb.yaml\n# PDB is not supported for DaemonSets.\n";
    let (code, out, err) = env.apply(&format!("{comment}{APP}"), &["--progress", "json"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let started: Vec<serde_json::Value> = out
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["event"] == "started")
        .collect();
    let resources: u64 = started
        .iter()
        .map(|e| e["resources"].as_u64().expect("a count"))
        .sum();
    assert_eq!(resources, 1, "only the ConfigMap is applied: {out}");
}
