//! The deployer where Helm's behaviour is more than status reading: hooks run in Helm's order
//! (weight, name, kind); documents that hold only comments are not applied.

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
