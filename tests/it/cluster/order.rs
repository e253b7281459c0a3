//! Order on the real control plane, proved from the API server's audit log: no object of a
//! step is written before every object of the steps it waits for was ready (by the status
//! its controller stored), pre-install hooks complete before the release's objects, and
//! uninstall deletes in the exact reverse of the plan.
//!
//! `fixtures/cluster/shop.yaml`: groups `db` (a `StatefulSet` ready 2 s after its pod starts and
//! a `ConfigMap`) and `queue` (a `Deployment`, 1 s), then `app` (a `Deployment` of 2 replicas),
//! an unsequenced `Service`, and a pre-install hook Job that runs 1 s.

use super::{Ns, ok};
use crate::{chartseq, fixture, run};

/// One step of `chartseq plan --format json`: its objects as `(kind, name)` and the indices of
/// the steps it waits for.
pub struct Step {
    resources: Vec<(String, String)>,
    after: Vec<usize>,
}

pub fn plan(path: &str, extra: &[&str]) -> Vec<Step> {
    let out = ok(run(chartseq()
        .args(["plan", path, "--format", "json"])
        .args(extra)));
    let plan: serde_json::Value = serde_json::from_str(&out).expect("the plan is JSON");
    plan["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| Step {
            resources: s["resources"]
                .as_array()
                .expect("resources")
                .iter()
                .map(|r| {
                    (
                        r["kind"].as_str().expect("a kind").to_owned(),
                        r["name"].as_str().expect("a name").to_owned(),
                    )
                })
                .collect(),
            after: s["after"]
                .as_array()
                .expect("after")
                .iter()
                .map(|i| usize::try_from(i.as_u64().expect("an index")).expect("small"))
                .collect(),
        })
        .collect()
}

/// For every step and every step it waits for: each of its objects was first written after
/// each object waited for was ready, on the API server's clock. The number of pairs checked.
pub fn assert_waits_held(ns: &Ns, steps: &[Step]) -> usize {
    let audit = ns.audit();
    let mut checked = 0;
    for step in steps {
        for &before in &step.after {
            for (kind, name) in &steps[before].resources {
                let ready = audit.ready(kind, name);
                for (k, n) in &step.resources {
                    let written = &audit.created(k, n).received;
                    assert!(
                        *written > ready,
                        "{k}/{n} was written at {written}, before {kind}/{name} was ready at {ready}:\n{audit}"
                    );
                    checked += 1;
                }
            }
        }
    }
    checked
}

fn shop() -> String {
    fixture("cluster/shop.yaml")
        .to_str()
        .expect("a UTF-8 path")
        .to_owned()
}

#[test]
fn groups_and_hooks_wait_for_readiness_on_the_api_servers_clock() {
    let Some(ns) = Ns::new("order") else { return };
    let out = ok(ns.chartseq(&["apply", &shop(), "--release", "shop", "--timeout", "2m"]));
    assert!(
        out.contains("release shop applied: revision 1, status deployed"),
        "{out}"
    );
    let steps = plan(&shop(), &[]);
    // app waits for db (2 objects) and queue (1): 3 pairs; the Service waits for app.
    assert_eq!(assert_waits_held(&ns, &steps), 4);

    let audit = ns.audit();
    // The hook ran to completion (its controller said so) before any object of the release
    // was written, and was deleted only then (hook-succeeded).
    let hook_done = audit.ready("Job", "migrate");
    for step in &steps {
        for (kind, name) in &step.resources {
            let written = &audit.created(kind, name).received;
            assert!(
                *written > hook_done,
                "{kind}/{name} before the hook completed:\n{audit}"
            );
        }
    }
    assert_eq!(audit.deletions(), ["jobs/migrate"], "{audit}");
    let deleted = audit
        .events
        .iter()
        .find(|e| e.verb == "delete" && e.name == "migrate")
        .expect("the hook's deletion");
    assert!(deleted.received > hook_done, "{audit}");
    // The status every wait read was written by the controllers, never by a test.
    assert!(
        !audit
            .events
            .iter()
            .any(|e| e.user == super::audit::TEST_USER && e.subresource == "status"),
        "{audit}"
    );
    let app = ns.get("deployment", "app").expect("the app");
    assert_eq!(app["status"]["availableReplicas"], 2);
}

#[test]
fn uninstall_deletes_in_the_exact_reverse_of_the_plan() {
    let Some(ns) = Ns::new("uninstall") else {
        return;
    };
    ok(ns.chartseq(&["apply", &shop(), "--release", "shop", "--timeout", "2m"]));
    let before = ns.audit().deletions().len();
    let out = ok(ns.chartseq(&["uninstall", "shop", "--timeout", "2m"]));
    assert!(out.contains("uninstalled"), "{out}");
    let audit = ns.audit();
    let deleted: Vec<String> = audit
        .deletions()
        .into_iter()
        .skip(before)
        .filter(|d| !d.starts_with("secrets/sh.helm.release."))
        .collect();
    let mut expected = Vec::new();
    for step in plan(&shop(), &["--uninstall"]) {
        let mut names: Vec<String> = step
            .resources
            .iter()
            .map(|(k, n)| format!("{}/{n}", super::audit::resource(k)))
            .collect();
        names.sort();
        expected.push(names);
    }
    // Within a step the deletions may go in any order; the steps go one after the other.
    let mut got = Vec::new();
    let mut rest = deleted.as_slice();
    for step in &expected {
        let (head, tail) = rest.split_at(step.len().min(rest.len()));
        let mut head = head.to_vec();
        head.sort();
        got.push(head);
        rest = tail;
    }
    assert_eq!(got, expected, "{audit}");
    assert!(rest.is_empty(), "{audit}");
    for (kind, name) in [
        ("statefulset", "db"),
        ("deployment", "app"),
        ("service", "web"),
    ] {
        assert!(ns.get(kind, name).is_none(), "{kind}/{name} is left");
    }
}

#[test]
fn a_job_whose_pods_fail_stops_what_waits_for_it() {
    let Some(ns) = Ns::new("jobfail") else { return };
    let stream = ns.file(
        "jobs.yaml",
        r#"---
# Source: jobs/templates/migrate.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    helm.sh/resource-group: migrate
    helm.sh/readiness-success: '["{.status.succeeded} >= 1"]'
    helm.sh/readiness-failure: '["{.status.failed} >= 1"]'
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: m, image: "chartseq.invalid/fail:1"}]
---
# Source: jobs/templates/app.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  annotations:
    helm.sh/resource-group: app
    helm.sh/depends-on/resource-groups: '["migrate"]'
data: {}
"#,
    );
    let (code, out, err) = ns.chartseq(&["apply", &stream, "--release", "jobs", "--timeout", "1m"]);
    assert_ne!(code, 0, "{out}\n{err}");
    assert!(err.contains("Job/migrate"), "{err}");
    let audit = ns.audit();
    assert!(audit.written("Job", "migrate"), "{audit}");
    assert!(!audit.written("ConfigMap", "app"), "{audit}");
    // The Job failed the real way: its controller says so.
    let job = ns.get("job", "migrate").expect("the job");
    assert_eq!(job["status"]["failed"], 1, "{job:#}");
    let (_, out, _) = ns.chartseq(&["status", "jobs"]);
    assert!(out.contains("STATUS: failed"), "{out}");
}

#[test]
fn a_deployment_that_never_becomes_ready_times_out_before_its_dependents() {
    let Some(ns) = Ns::new("never") else { return };
    let stream = ns.file(
        "never.yaml",
        r#"---
# Source: never/templates/db.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: db
  annotations:
    helm.sh/resource-group: db
spec:
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: "chartseq.invalid/fail:1"}]
---
# Source: never/templates/app.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  annotations:
    helm.sh/resource-group: app
    helm.sh/depends-on/resource-groups: '["db"]'
data: {}
"#,
    );
    let (code, out, err) =
        ns.chartseq(&["apply", &stream, "--release", "never", "--timeout", "6s"]);
    assert_ne!(code, 0, "{out}\n{err}");
    assert!(
        err.contains("Deployment/db") && err.contains("0 of 1"),
        "{err}"
    );
    assert!(!ns.audit().written("ConfigMap", "app"));
}

#[test]
fn a_subchart_starts_when_its_own_dependencies_are_ready_not_its_batch() {
    let Some(ns) = Ns::new("subcharts") else {
        return;
    };
    // `fixtures/apply/umbrella.yaml` with the time each part takes: cache 3 s, db and api at
    // once. api depends on db only.
    let text = std::fs::read_to_string(fixture("apply/umbrella.yaml")).expect("the stream");
    let delay = |name: &str, d: &str| {
        format!(
            "metadata: {{labels: {{app: {name}}}, annotations: {{pod-ready.stage.kwok.x-k8s.io/delay: {d}}}}}"
        )
    };
    let text = text
        .replace("metadata: {labels: {app: cache}}", &delay("cache", "3s"))
        .replace("metadata: {labels: {app: db}}", &delay("db", "200ms"));
    assert!(text.contains("delay: 3s") && text.contains("delay: 200ms"));
    let stream = ns.file("umbrella.yaml", &text);
    let chart = fixture("apply/umbrella");
    let chart = chart.to_str().expect("a UTF-8 path");
    ok(ns.chartseq(&[
        "apply",
        &stream,
        "--chart",
        chart,
        "--release",
        "shop",
        "--timeout",
        "2m",
    ]));
    let steps = plan(&stream, &["--chart", chart]);
    // api after db; the parent's ConfigMap after cache, db and api.
    assert_eq!(assert_waits_held(&ns, &steps), 4);
    // Batch-by-batch waiting would hold api until cache too: it did not.
    let audit = ns.audit();
    assert!(
        audit.created("Deployment", "api").received < audit.ready("Deployment", "cache"),
        "{audit}"
    );
}

/// Helm deletes `hook-succeeded` hooks only once every hook of the event has succeeded, in
/// reverse order: a Job can run as the `ServiceAccount` an earlier hook created (as
/// ingress-nginx's and cert-manager's do), which the API server checks when the Job's pod is
/// created.
#[test]
fn hooks_succeeded_are_deleted_after_every_hook_of_the_event() {
    let Some(ns) = Ns::new("hook-sa") else { return };
    let stream = ns.file(
        "hooks.yaml",
        r#"---
# Source: admission/templates/sa.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: admission
  annotations:
    helm.sh/hook: pre-install,post-install
    helm.sh/hook-weight: "-1"
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
---
# Source: admission/templates/job.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: create
  annotations:
    helm.sh/hook: pre-install
    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
spec:
  template:
    metadata:
      annotations: {pod-complete.stage.kwok.x-k8s.io/delay: 500ms}
    spec:
      serviceAccountName: admission
      restartPolicy: Never
      containers: [{name: create, image: "registry.invalid/certgen:1"}]
---
# Source: admission/templates/app.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
data: {}
"#,
    );
    let out = ok(ns.chartseq(&["apply", &stream, "--release", "hooks", "--timeout", "1m"]));
    assert!(out.contains("status deployed"), "{out}");
    let audit = ns.audit();
    let done = audit.ready("Job", "create");
    let deleted: Vec<&super::audit::Event> = audit
        .events
        .iter()
        .filter(|e| e.user == super::audit::TEST_USER && e.verb == "delete")
        .collect();
    // The pre-install Job, then its ServiceAccount, both after the Job completed; then the
    // ServiceAccount again after post-install.
    let order: Vec<String> = deleted
        .iter()
        .filter(|e| (200..300).contains(&e.code))
        .map(|e| format!("{}/{}", e.resource, e.name))
        .collect();
    assert_eq!(
        order,
        [
            "jobs/create",
            "serviceaccounts/admission",
            "serviceaccounts/admission"
        ],
        "{audit}"
    );
    assert!(
        deleted.iter().all(|e| e.received > done || e.code == 404),
        "{audit}"
    );
    assert!(ns.get("serviceaccount", "admission").is_none());
}

/// A hook Job that its TTL controller deletes the moment it completes (as ingress-nginx's
/// certificate Jobs do, `ttlSecondsAfterFinished: 0`) counts as completed, on install and on
/// upgrade, where `before-hook-creation` deleted the previous run's Job of the same name first.
#[test]
fn a_hook_job_deleted_by_its_ttl_once_complete_has_succeeded() {
    let Some(ns) = Ns::new("hook-ttl") else {
        return;
    };
    let stream = ns.file(
        "ttl.yaml",
        r#"---
# Source: ttl/templates/job.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: certgen
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-delete-policy: before-hook-creation
spec:
  ttlSecondsAfterFinished: 0
  template:
    spec:
      restartPolicy: Never
      containers: [{name: certgen, image: "registry.invalid/certgen:1"}]
---
# Source: ttl/templates/app.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
data: {}
"#,
    );
    for revision in ["revision 1", "revision 2"] {
        let out = ok(ns.chartseq(&["apply", &stream, "--release", "ttl", "--timeout", "1m"]));
        assert!(
            out.contains(&format!("{revision}, status deployed")),
            "{out}"
        );
    }
    let audit = ns.audit();
    // The Job ran both times, and its TTL controller, not chartseq, deleted it.
    let runs = audit
        .writes()
        .filter(|e| e.resource == "jobs" && e.name == "certgen")
        .count();
    assert_eq!(runs, 2, "{audit}");
    assert!(
        audit.events.iter().any(|e| e.verb == "delete"
            && e.name == "certgen"
            && e.user.contains("ttl-after-finished")),
        "{audit}"
    );
}
