//! The deployer where Helm's behaviour is more than status reading: hooks run in Helm's order
//! (weight, name, kind) and are judged by kstatus whatever readiness annotations they carry; a
//! Pod that cannot be scheduled fails once the clock says 15 s have passed since its creation;
//! documents that hold only comments are not applied.

use std::time::{Duration, Instant};

use super::{Ns, ok};

/// Applies `stream` (written to a file) as release `shop`.
fn apply(ns: &Ns, stream: &str, extra: &[&str]) -> (i32, String, String) {
    let path = ns.file("stream.yaml", stream);
    ns.apply("shop", &path, extra)
}

fn hook(kind: &str, api_version: &str, name: &str, extra: &str) -> String {
    format!(
        "---\n# Source: shop/templates/{name}-{kind}.yaml\napiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: {name}\n  annotations:\n    helm.sh/hook: pre-install\n{extra}"
    )
}

const APP: &str = "---\n# Source: shop/templates/app.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata: {a: \"1\"}\n";

#[test]
fn hooks_of_equal_weight_and_name_run_in_helms_kind_order() {
    let Some(ns) = Ns::new("hookkinds") else {
        return;
    };
    // Input order Job, ConfigMap, ServiceAccount; Helm runs ServiceAccount, ConfigMap, Job.
    let job_spec = "spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: s, image: busybox}]\n";
    let stream = [
        hook("Job", "batch/v1", "setup", job_spec),
        hook("ConfigMap", "v1", "setup", "data: {a: \"1\"}\n"),
        hook("ServiceAccount", "v1", "setup", ""),
        APP.to_owned(),
    ]
    .concat();
    ok(apply(&ns, &stream, &["--timeout", "1m"]));
    let audit = ns.audit();
    let sa = audit.created("ServiceAccount", "setup");
    let cm = audit.created("ConfigMap", "setup");
    let job = audit.created("Job", "setup");
    assert!(
        sa.completed < cm.received && cm.completed < job.received,
        "{audit}"
    );
    assert!(job.completed < audit.created("ConfigMap", "app").received);
}

#[test]
fn a_hook_is_judged_by_kstatus_not_its_readiness_annotations() {
    let Some(ns) = Ns::new("hookkstatus") else {
        return;
    };
    // Custom readiness would never call this Job ready, and would call it failed once complete.
    let annotations = "    helm.sh/readiness-success: '[\"{.succeeded} == 5\"]'\n    helm.sh/readiness-failure: '[\"{.succeeded} == 1\"]'\n";
    let job = hook(
        "Job",
        "batch/v1",
        "migrate",
        &format!(
            "{annotations}spec:\n  template:\n    metadata: {{annotations: {{pod-complete.stage.kwok.x-k8s.io/delay: 500ms}}}}\n    spec:\n      restartPolicy: Never\n      containers: [{{name: m, image: busybox}}]\n"
        ),
    );
    ok(apply(
        &ns,
        &format!("{job}{APP}"),
        &["--readiness-timeout", "30s"],
    ));
    // Judged by Helm's hook reader: the plan starts only once the Job has completed.
    let audit = ns.audit();
    assert!(
        audit.created("ConfigMap", "app").received > audit.ready("Job", "migrate"),
        "{audit}"
    );
}

#[test]
fn an_unschedulable_pod_fails_fifteen_seconds_after_its_creation() {
    let Some(ns) = Ns::new("unschedulable") else {
        return;
    };
    // No node matches its selector: the real scheduler marks it Unschedulable.
    let pod = "---\n# Source: shop/templates/web.yaml\napiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  nodeSelector: {chartseq.invalid/nowhere: \"true\"}\n  containers: [{name: w, image: nginx}]\n";
    let started = Instant::now();
    let (code, out, err) = apply(&ns, pod, &["--readiness-timeout", "1m"]);
    let took = started.elapsed();
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains(&format!("Pod/web (namespace {}) failed", ns.name))
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
    let Some(ns) = Ns::new("comments") else {
        return;
    };
    let comment =
        "---\n# Source: shop/templates/pdb.yaml\n# PDB is not supported for DaemonSets.\n";
    let out = ok(apply(
        &ns,
        &format!("{comment}{APP}"),
        &["--progress", "json"],
    ));
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
