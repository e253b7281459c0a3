//! The `chartseq` binary on the real control plane: install as a DAG, upgrade with pruning,
//! rollback, history and status, uninstall order, hooks and delete policies, timeouts,
//! `--atomic`, conflicts with other field managers, custom readiness and Ctrl-C. Readiness
//! comes from the controllers and kwok (delays in pod annotations), failure from images kwok
//! fails; times are the API server's, from its audit log.

use std::process::Command;
use std::time::{Duration, Instant};

use super::audit::Audit;
use super::{Ns, ok};
use crate::{chartseq, fixture, run};

/// `fixtures/apply/NAME` as a path.
fn stream(name: &str) -> String {
    fixture(&format!("apply/{name}"))
        .to_str()
        .expect("UTF-8")
        .to_owned()
}

/// `fixtures/apply/NAME` with `edits` (`from`, `to`) made, each of which must apply, written
/// into the test's directory.
fn edited(ns: &Ns, name: &str, edits: &[(&str, &str)]) -> String {
    let mut text = std::fs::read_to_string(fixture(&format!("apply/{name}"))).expect("a fixture");
    for (from, to) in edits {
        assert!(text.contains(from), "{name} has no `{from}`");
        text = text.replacen(from, to, 1);
    }
    ns.file(name, &text)
}

/// The shop's app runs an image kwok never makes ready.
const APP_NEVER_READY: (&str, &str) = (
    "containers: [{name: app, image: shop:1}]",
    "containers: [{name: app, image: chartseq.invalid/fail:1}]",
);

/// ... and its controller gives up on it after a second (`ProgressDeadlineExceeded`).
const APP_DEADLINE: (&str, &str) = (
    "  replicas: 2\n",
    "  replicas: 2\n  progressDeadlineSeconds: 1\n",
);

/// When the API server received the tests' first write of `kind/name`.
fn written(audit: &Audit, kind: &str, name: &str) -> String {
    audit.created(kind, name).received.clone()
}

/// The objects of the kinds these tests render left in the namespace (its own CA bundle
/// aside), once pending deletions have run.
fn leftovers(ns: &Ns) -> Vec<String> {
    let started = Instant::now();
    loop {
        let out = ok(ns.kubectl(&[
            "get",
            "deployments,statefulsets,jobs,services,configmaps,secrets",
            "-o",
            "name",
        ]));
        let left: Vec<String> = out
            .lines()
            .filter(|n| *n != "configmap/kube-root-ca.crt")
            .map(str::to_owned)
            .collect();
        if left.is_empty() || started.elapsed() > Duration::from_secs(10) {
            return left;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn release_status(ns: &Ns, revision: u32) -> String {
    let (secret, _) = ns
        .stored_release("Secret", "shop", revision)
        .expect("the revision is recorded");
    secret["metadata"]["labels"]["status"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn install_runs_the_plan_as_a_dag_and_records_the_release() {
    let Some(ns) = Ns::new("dag") else { return };
    // db is ready 2 s after its pod starts, queue 1 s, the hook runs 1 s.
    let shop = fixture("cluster/shop.yaml");
    let out = ok(ns.apply("shop", shop.to_str().expect("UTF-8"), &["--timeout", "2m"]));
    assert!(
        out.contains("release shop applied: revision 1, status deployed"),
        "{out}"
    );
    let a = ns.audit();
    // The pre-install hook ran first and was deleted after success (hook-succeeded).
    assert!(
        a.ready("Job", "migrate") < written(&a, "StatefulSet", "db"),
        "{a}"
    );
    assert!(ns.get("job", "migrate").is_none());
    // db and queue have no dependencies: both start at once, queue does not wait for db.
    assert!(
        written(&a, "Deployment", "queue") < a.ready("StatefulSet", "db"),
        "{a}"
    );
    // Inside a step, Helm's kind order: ConfigMap before StatefulSet.
    assert!(written(&a, "ConfigMap", "db-config") <= written(&a, "StatefulSet", "db"));
    // app waits for both of its groups; the unsequenced Service goes last.
    assert!(
        written(&a, "Deployment", "app") > a.ready("StatefulSet", "db"),
        "{a}"
    );
    assert!(
        written(&a, "Deployment", "app") > a.ready("Deployment", "queue"),
        "{a}"
    );
    assert!(
        written(&a, "Service", "web") > a.ready("Deployment", "app"),
        "{a}"
    );
    // Helm strips the invalid depends-on key before apply.
    let app = ns.get("deployment", "app").expect("app exists");
    assert!(
        app["metadata"]["annotations"]
            .get("helm.sh/depends-on/resource-groups")
            .is_none(),
        "{app}"
    );
    // Helm's field manager applied the release's fields; the controller wrote the status.
    let shown = ok(ns.kubectl(&[
        "get",
        "deployment",
        "app",
        "-o",
        "json",
        "--show-managed-fields",
    ]));
    let shown: serde_json::Value = serde_json::from_str(&shown).expect("JSON");
    let managers = shown["metadata"]["managedFields"]
        .as_array()
        .expect("managed fields");
    assert!(
        managers
            .iter()
            .any(|m| m["manager"] == "helm" && m["operation"] == "Apply"),
        "{managers:?}"
    );
    let (secret, _) = ns.stored_release("Secret", "shop", 1).expect("recorded");
    let labels = &secret["metadata"]["labels"];
    assert_eq!(
        (
            labels["owner"].as_str(),
            labels["name"].as_str(),
            labels["version"].as_str(),
            labels["status"].as_str()
        ),
        (Some("helm"), Some("shop"), Some("1"), Some("deployed"))
    );
    assert!(out.contains("STEP") && out.contains("shop app"), "{out}");
}

#[test]
fn upgrade_prunes_in_reverse_and_rollback_restores() {
    let Some(ns) = Ns::new("upgrade") else { return };
    ok(ns.apply("shop", &stream("shop.yaml"), &[]));
    let out = ok(ns.apply("shop", &stream("shop-v2.yaml"), &[]));
    assert!(out.contains("revision 2, status deployed"), "{out}");
    assert!(
        ns.get("deployment", "queue").is_none(),
        "queue left the chart and is pruned"
    );
    let app = ns.get("deployment", "app").expect("app exists");
    assert_eq!(
        app["spec"]["template"]["spec"]["containers"][0]["image"],
        "shop:2"
    );
    assert_eq!(app["metadata"]["generation"], 2);
    // Pruning happens after the new plan is in place.
    let a = ns.audit();
    let web_again = a
        .writes()
        .filter(|e| e.resource == "services" && e.name == "web")
        .last()
        .expect("web applied")
        .received
        .clone();
    let pruned = a
        .events
        .iter()
        .find(|e| e.verb == "delete" && e.resource == "deployments" && e.name == "queue")
        .expect("queue deleted");
    assert!(pruned.received > web_again, "{a}");

    let out = ok(ns.chartseq(&["rollback", "shop", "1"]));
    assert!(out.contains("revision 3, status deployed"), "{out}");
    assert!(ns.get("deployment", "queue").is_some());
    let app = ns.get("deployment", "app").expect("app exists");
    assert_eq!(
        app["spec"]["template"]["spec"]["containers"][0]["image"],
        "shop:1"
    );

    let out = ok(ns.chartseq(&["history", "shop", "-o", "json"]));
    let statuses: Vec<String> = out
        .lines()
        .map(|l| {
            let row: serde_json::Value = serde_json::from_str(l).expect("JSON lines");
            row["status"].as_str().expect("a status").to_owned()
        })
        .collect();
    assert_eq!(statuses, ["superseded", "superseded", "deployed"], "{out}");
    assert!(out.contains("Rollback to 1"), "{out}");
    let out = ok(ns.chartseq(&["status", "shop"]));
    assert!(
        out.contains("REVISION: 3")
            && out.contains("SEQUENCED: true")
            && out.contains("Deployment/queue"),
        "{out}"
    );
    // list shows the release as helm does.
    let out = ok(ns.chartseq(&["list"]));
    assert!(
        out.lines()
            .any(|l| l.starts_with("shop") && l.contains("deployed")),
        "{out}"
    );
}

#[test]
fn uninstall_is_the_exact_reverse_waiting_for_each_step() {
    let Some(ns) = Ns::new("reverse") else { return };
    ok(ns.apply("shop", &stream("shop.yaml"), &[]));
    let before = ns.audit().deletions().len();
    ok(ns.chartseq(&["uninstall", "shop"]));
    // Steps in reverse: (unsequenced) → app → queue → db, in the server's order of
    // completion; the StatefulSet before its ConfigMap inside the db step.
    let deleted: Vec<String> = ns
        .audit()
        .deletions()
        .into_iter()
        .skip(before)
        .filter(|d| !d.starts_with("secrets/"))
        .collect();
    assert_eq!(
        deleted,
        [
            "services/web",
            "deployments/app",
            "deployments/queue",
            "statefulsets/db",
            "configmaps/db-config"
        ]
    );
    assert_eq!(leftovers(&ns), Vec::<String>::new());
    let (code, _, err) = ns.chartseq(&["status", "shop"]);
    assert_eq!(code, 2);
    assert!(err.contains("release: not found"), "{err}");
}

#[test]
fn readiness_timeout_names_what_blocked_and_records_failure() {
    let Some(ns) = Ns::new("blocked") else { return };
    let shop = edited(&ns, "shop.yaml", &[APP_NEVER_READY]);
    // Long enough for the hook Job, which the controllers and kwok finish in about a second.
    let (code, out, err) = ns.apply("shop", &shop, &["--readiness-timeout", "3s"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("step shop app: timed out after 3s waiting for 1 resource(s):"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "Deployment/app (namespace {}): Deployment: 0 of 2 replicas available",
            ns.name
        )),
        "{err}"
    );
    assert!(
        ns.get("service", "web").is_none(),
        "nothing after the blocked step is applied"
    );
    assert_eq!(release_status(&ns, 1), "failed");
}

#[test]
fn readiness_timeout_must_not_exceed_timeout() {
    let Some(ns) = Ns::new("budget") else { return };
    let (code, _, err) = ns.apply(
        "shop",
        &stream("shop.yaml"),
        &["--timeout", "1m", "--readiness-timeout", "2m"],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("--readiness-timeout (2m0s) must not exceed --timeout (1m0s)"),
        "{err}"
    );
    assert_eq!(ns.audit().chartseq_changes(), Vec::<String>::new());
}

#[test]
fn atomic_install_failure_leaves_nothing() {
    let Some(ns) = Ns::new("atomic") else { return };
    let shop = edited(&ns, "shop.yaml", &[APP_NEVER_READY, APP_DEADLINE]);
    let (code, out, err) = ns.apply("shop", &shop, &["--atomic", "--timeout", "1m"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains(&format!("Deployment/app (namespace {}) failed: Deployment: progress deadline exceeded (ProgressDeadlineExceeded", ns.name)),
        "{err}"
    );
    assert_eq!(leftovers(&ns), Vec::<String>::new());
}

#[test]
fn atomic_upgrade_failure_rolls_back() {
    let Some(ns) = Ns::new("atomicup") else {
        return;
    };
    // Revision 1 has no Deployment; revision 2 brings one that fails.
    ok(ns.apply("shop", &stream("hooks.yaml"), &[]));
    let shop = edited(&ns, "shop.yaml", &[APP_NEVER_READY, APP_DEADLINE]);
    let (code, out, err) = ns.apply("shop", &shop, &["--atomic", "--timeout", "1m"]);
    assert_eq!(code, 1, "{out}\n{err}");
    // Back to revision 1's objects: the shop objects are gone, hooks.yaml's ConfigMap stays.
    assert!(ns.get("configmap", "app").is_some());
    assert!(ns.get("deployment", "app").is_none() && ns.get("statefulset", "db").is_none());
    let out = ok(ns.chartseq(&["history", "shop"]));
    assert!(out.contains("Rollback to 1"), "{out}");
}

#[test]
fn atomic_returns_to_the_newest_superseded_revision_when_none_is_deployed() {
    let Some(ns) = Ns::new("atomicsup") else {
        return;
    };
    ok(ns.apply("shop", &stream("hooks.yaml"), &[]));
    // No revision deployed: a rollback that failed to apply supersedes the one it left.
    ns.set_status("shop", 1, "superseded", None);
    let shop = edited(&ns, "shop.yaml", &[APP_NEVER_READY, APP_DEADLINE]);
    let (code, out, err) = ns.apply("shop", &shop, &["--atomic", "--timeout", "1m"]);
    assert_eq!(code, 1, "{out}\n{err}");
    // As Helm's rollback-on-failure: back to revision 1, not uninstalled.
    assert!(err.contains("--atomic: rolling back"), "{err}");
    assert!(ns.get("configmap", "app").is_some());
    assert!(ns.get("deployment", "app").is_none());
    let out = ok(ns.chartseq(&["history", "shop"]));
    assert!(out.contains("Rollback to 1"), "{out}");
}

#[test]
fn hooks_follow_weight_and_delete_policies() {
    let Some(ns) = Ns::new("hooks") else { return };
    ok(ns.apply("shop", &stream("hooks.yaml"), &[]));
    // No policy: before-hook-creation, so the Job stays until the next run.
    let first = ns.get("job", "keep").expect("the Job stays");
    // hook-succeeded: the post-install Pod ran to completion (kwok), then was deleted.
    let a = ns.audit();
    assert!(a.count("delete", "Pod", "notify") == 1, "{a}");
    assert!(ns.get("pod", "notify").is_none());
    assert!(
        written(&a, "Pod", "notify") > written(&a, "ConfigMap", "app"),
        "{a}"
    );
    ok(ns.apply("shop", &stream("hooks.yaml"), &[]));
    let second = ns.get("job", "keep").expect("recreated");
    assert_ne!(
        first["metadata"]["uid"], second["metadata"]["uid"],
        "before-hook-creation deletes the old hook first"
    );
}

#[test]
fn failed_hook_with_hook_failed_policy_is_deleted_and_stops_the_release() {
    let Some(ns) = Ns::new("hookfail") else {
        return;
    };
    // The migration's pod fails (an image kwok fails) and its Job gives up at once.
    let shop = edited(
        &ns,
        "shop.yaml",
        &[(
            "hook-delete-policy: hook-succeeded\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: m, image: shop:1}]",
            "hook-delete-policy: hook-failed\nspec:\n  backoffLimit: 0\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: m, image: chartseq.invalid/fail:1}]",
        )],
    );
    let (code, _, err) = ns.apply("shop", &shop, &["--timeout", "1m"]);
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!(
            "pre-install hook Job/migrate (namespace {})",
            ns.name
        )) && err.contains("Job: Failed after 1 failed pods (BackoffLimitExceeded"),
        "{err}"
    );
    assert!(ns.get("job", "migrate").is_none());
    assert!(
        ns.get("statefulset", "db").is_none(),
        "nothing of the plan runs after a failed pre hook"
    );
}

#[test]
fn dry_run_changes_nothing() {
    let Some(ns) = Ns::new("dryrun") else { return };
    let out = ok(ns.apply("shop", &stream("shop.yaml"), &["--dry-run"]));
    assert!(
        out.contains("dry run, nothing changed: would install revision 1"),
        "{out}"
    );
    assert_eq!(ns.audit().chartseq_changes(), Vec::<String>::new());
    // The server was asked: every object went through a server-side dry run.
    let log = std::fs::read_to_string(&ns.cluster.audit_log).expect("the audit log");
    assert!(
        log.lines().any(
            |l| l.contains(&format!("/namespaces/{}/deployments/app?", ns.name))
                && l.contains("dryRun=All")
        ),
        "no dry run of the app"
    );
    assert_eq!(leftovers(&ns), Vec::<String>::new());
}

#[test]
fn progress_json_is_one_event_per_line() {
    let Some(ns) = Ns::new("progress") else {
        return;
    };
    let out = ok(ns.apply("shop", &stream("shop.yaml"), &["--progress", "json"]));
    let events: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "started" && e["step"] == "shop app")
    );
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "finished" && e["step"] == "shop app" && e["result"] == "ready")
    );
    assert_eq!(
        events.last().map(|e| e["status"].clone()),
        Some(serde_json::json!("deployed"))
    );
}

#[cfg(unix)]
#[test]
fn ctrl_c_mid_install_records_what_was_applied_and_uninstall_removes_it() {
    let Some(ns) = Ns::new("ctrlc") else { return };
    // db's pod takes 20 s to become ready: the run is interrupted while it waits.
    let shop = edited(
        &ns,
        "shop.yaml",
        &[(
            "metadata: {labels: {app: db}}",
            "metadata: {labels: {app: db}, annotations: {pod-ready.stage.kwok.x-k8s.io/delay: 20s}}",
        )],
    );
    let child = ns
        .command(&["apply", &shop, "--release", "shop"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("chartseq starts");
    let started = Instant::now();
    while !ns.audit().written("StatefulSet", "db") {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "db was never applied"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let output = child.wait_with_output().expect("chartseq ends");
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert!(
        ns.get("deployment", "app").is_none(),
        "nothing is scheduled after Ctrl-C"
    );
    assert_eq!(release_status(&ns, 1), "failed");
    ok(ns.chartseq(&["uninstall", "shop"]));
    assert_eq!(leftovers(&ns), Vec::<String>::new());
}

#[test]
fn unreachable_cluster_is_a_tool_failure() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kubeconfig = dir.path().join("kc");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n",
    )
    .expect("written");
    let mut cmd = chartseq();
    cmd.args(["status", "shop", "--kubeconfig"])
        .arg(&kubeconfig);
    let (code, _, err) = run(&mut cmd);
    assert_eq!(code, 2, "{err}");
    assert!(err.starts_with("chartseq: error:"), "{err}");
}

/// `fixtures/apply/widgets.yaml` with its CRD's group made this test's own (CRDs are
/// cluster-scoped and tests run side by side); the group.
fn widgets(ns: &Ns) -> (String, String) {
    let group = format!("{}.example.com", ns.name);
    let crd = format!("widgets.{group}");
    ns.owns("customresourcedefinition", &crd);
    let text = std::fs::read_to_string(fixture("apply/widgets.yaml"))
        .expect("the fixture")
        .replace("widgets.example.com", &crd)
        .replace("group: example.com", &format!("group: {group}"))
        .replace(
            "apiVersion: example.com/v1",
            &format!("apiVersion: {group}/v1"),
        );
    (ns.file("widgets.yaml", &text), group)
}

/// Writes the Widget's status as the controller of a custom resource would (no controller
/// runs for it on the test cluster): after `delay`, `phase`.
fn widget_status_later(
    ns: &Ns,
    group: &str,
    delay: Duration,
    phase: &str,
) -> std::thread::JoinHandle<()> {
    let kubectl = ns.kubectl.clone();
    let kubeconfig = ns.cluster.kubeconfig.clone();
    let namespace = ns.name.clone();
    let resource = format!("widgets.{group}");
    let patch = format!("{{\"status\":{{\"phase\":\"{phase}\"}}}}");
    std::thread::spawn(move || {
        let started = Instant::now();
        // Once the Widget exists.
        loop {
            let (code, _, _) = run(Command::new(&kubectl)
                .args(["get", &resource, "w", "-n", &namespace, "--kubeconfig"])
                .arg(&kubeconfig));
            if code == 0 || started.elapsed() > Duration::from_secs(60) {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        std::thread::sleep(delay);
        let _ = run(Command::new(&kubectl)
            .args([
                "patch",
                &resource,
                "w",
                "-n",
                &namespace,
                "--subresource=status",
                "--type=merge",
                "-p",
                &patch,
                "--kubeconfig",
            ])
            .arg(&kubeconfig));
    })
}

#[test]
fn crds_first_then_custom_readiness_gates_dependents() {
    let Some(ns) = Ns::new("crds") else { return };
    let (widgets, group) = widgets(&ns);
    let writer = widget_status_later(&ns, &group, Duration::from_millis(500), "Ready");
    ok(ns.apply("shop", &widgets, &["--timeout", "1m"]));
    writer.join().expect("the status writer ends");
    let a = ns.audit();
    // The CR could only be applied once its CRD was established: the server would have
    // refused it before (a 404 the run would have reported).
    let widget = written(&a, "Widget", "w");
    // The custom expression, not kstatus, gated the consumer: it was written after the
    // status write that made the Widget ready.
    let ready = a
        .events
        .iter()
        .find(|e| e.resource == "widgets" && e.subresource == "status" && e.verb == "patch")
        .expect("the Widget's status write")
        .received
        .clone();
    assert!(ready > widget, "{a}");
    assert!(written(&a, "ConfigMap", "consumer") > ready, "{a}");
}

#[test]
fn custom_readiness_timeout_shows_each_expression_observed_value() {
    let Some(ns) = Ns::new("crdwait") else { return };
    let (widgets, group) = widgets(&ns);
    let writer = widget_status_later(&ns, &group, Duration::from_millis(10), "Provisioning");
    let (code, _, err) = ns.apply("shop", &widgets, &["--readiness-timeout", "3s"]);
    writer.join().expect("the status writer ends");
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("step widgets widget: timed out after 3s waiting for 1 resource(s):"),
        "{err}"
    );
    assert!(
        err.contains(&format!("Widget/w (namespace {}):", ns.name))
            && err.contains("observed \"Provisioning\""),
        "{err}"
    );
    assert!(ns.get("configmap", "consumer").is_none());
}

#[test]
fn a_conflict_names_the_resource_and_the_server_message() {
    let Some(ns) = Ns::new("conflict") else {
        return;
    };
    ok(ns.apply("shop", &stream("hooks.yaml"), &[]));
    ns.create_as(
        "other",
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"app\"},\"data\":{\"a\":\"2\"}}",
    );
    let (code, _, err) = ns.apply("shop", &stream("hooks.yaml"), &[]);
    assert_eq!(code, 1);
    assert!(
        err.contains(&format!("ConfigMap/app (namespace {}): Apply failed with 1 conflict: conflict with \"other\": .data.a", ns.name)),
        "{err}"
    );
    ok(ns.apply("shop", &stream("hooks.yaml"), &["--force-conflicts"]));
    assert_eq!(
        ns.get("configmap", "app").expect("exists")["data"]["a"],
        "1"
    );
}

#[test]
fn overall_timeout_bounds_the_release() {
    let Some(ns) = Ns::new("overall") else { return };
    // db takes 6 s; each wait may take 3 s, and the whole release 3 s too (the hook before it
    // takes about a second).
    let shop = edited(
        &ns,
        "shop.yaml",
        &[(
            "metadata: {labels: {app: db}}",
            "metadata: {labels: {app: db}, annotations: {pod-ready.stage.kwok.x-k8s.io/delay: 6s}}",
        )],
    );
    let started = Instant::now();
    let (code, _, err) = ns.apply(
        "shop",
        &shop,
        &["--timeout", "3s", "--readiness-timeout", "3s"],
    );
    assert_eq!(code, 1, "{err}");
    assert!(started.elapsed() < Duration::from_secs(15));
    assert!(
        err.contains("the release did not finish within --timeout 3s: step shop db:"),
        "{err}"
    );
    assert!(
        err.contains(&format!("StatefulSet/db (namespace {}):", ns.name)),
        "{err}"
    );
}

#[test]
fn a_document_that_is_not_an_object_stops_the_deploy_unless_no_lint() {
    let Some(ns) = Ns::new("notobject") else {
        return;
    };
    let mut text = std::fs::read_to_string(fixture("apply/hooks.yaml")).expect("the fixture reads");
    text.push_str("---\n# Source: hooks/templates/broken.yaml\n- just\n- a list\n");
    let path = ns.file("broken.yaml", &text);
    let (code, _, err) = ns.apply("shop", &path, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("CS000") && err.contains("lint found errors"),
        "lint runs first: {err}"
    );
    assert!(ns.get("configmap", "app").is_none());
    ok(ns.apply("shop", &path, &["--no-lint"]));
    assert!(ns.get("configmap", "app").is_some());
}

#[test]
fn context_selects_the_kubeconfig_context() {
    let Some(ns) = Ns::new("context") else { return };
    let (code, _, err) = ns.chartseq(&["history", "shop", "--context", "nope"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nope"), "{err}");
    // scripts/cluster.sh names its context `test`.
    ok(ns.apply("shop", &stream("hooks.yaml"), &["--context", "test"]));
}

#[test]
fn a_started_job_counts_as_ready_unless_wait_for_jobs() {
    for (flags, waits) in [(&[][..], false), (&["--wait-for-jobs"][..], true)] {
        let Some(ns) = Ns::new("jobs") else { return };
        // The seed Job's pod runs 1 s.
        let jobs = edited(
            &ns,
            "jobs.yaml",
            &[(
                "  template:\n    spec:",
                "  template:\n    metadata: {annotations: {pod-complete.stage.kwok.x-k8s.io/delay: 1s}}\n    spec:",
            )],
        );
        let mut args = vec!["--timeout", "1m"];
        args.extend_from_slice(flags);
        ok(ns.apply("shop", &jobs, &args));
        let started = Instant::now();
        while ns.get("job", "seed").expect("the Job exists")["status"]["succeeded"] != 1 {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the Job never completed"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let a = ns.audit();
        let reader = written(&a, "ConfigMap", "reader");
        let complete = a.ready("Job", "seed");
        assert_eq!(
            reader > complete,
            waits,
            "{flags:?}: reader at {reader}, Job complete at {complete}:\n{a}"
        );
    }
}

#[test]
fn a_successful_apply_shows_the_lint_warnings_that_bear_on_it() {
    let Some(ns) = Ns::new("lintwarn") else {
        return;
    };
    let path = stream("jobs.yaml");
    let (code, out, err) = ns.apply("shop", &path, &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    // Before anything is sent: the finding, in full, then what the run does about it.
    let warned = err
        .find("warning[CS305/job-gate-without-readiness]")
        .unwrap_or_else(|| panic!("{err}"));
    let deploying = err
        .find("chartseq: warning: deploying despite 1 lint warning (CS305) shown above")
        .unwrap_or_else(|| panic!("{err}"));
    let first_step = err
        .find("jobs seed: applying")
        .unwrap_or_else(|| panic!("{err}"));
    assert!(warned < deploying && deploying < first_step, "{err}");
    // And again in the last line.
    assert!(
        out.contains("release shop applied: revision 1, status deployed, with 1 lint warning (CS305, shown before the run)"),
        "{out}"
    );

    // Machine-readable progress stays one JSON object a line, and carries the codes.
    let (code, out, err) = ns.apply("shop", &path, &["--progress", "json"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("warning[CS305"), "{err}");
    let last: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    assert_eq!(
        last.last().expect("a done event")["lint_warnings"],
        serde_json::json!(["CS305"])
    );

    // With --wait-for-jobs the Job gate waits for the Job to finish: nothing to warn of.
    let (code, out, err) = ns.apply("shop", &path, &["--wait-for-jobs", "--timeout", "1m"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        !err.contains("CS305") && !out.contains("lint warning"),
        "{out}\n{err}"
    );
}

#[test]
fn after_a_failed_first_install_the_next_run_installs_and_prunes_its_leftovers() {
    let Some(ns) = Ns::new("leftover") else {
        return;
    };
    let shop = edited(&ns, "shop.yaml", &[APP_NEVER_READY]);
    let (code, _, _) = ns.apply("shop", &shop, &["--readiness-timeout", "3s"]);
    assert_eq!(code, 1);
    assert!(ns.get("statefulset", "db").is_some());
    let out = ok(ns.apply("shop", &stream("hooks.yaml"), &[]));
    assert!(out.contains("revision 2, status deployed"), "{out}");
    assert!(
        ns.get("statefulset", "db").is_none() && ns.get("deployment", "app").is_none(),
        "the failed revision's objects are pruned"
    );
    assert!(ns.get("configmap", "app").is_some());
    assert!(ns.audit().written("Job", "keep"), "pre-install hooks ran");
}

#[test]
fn a_chart_directory_is_rendered_by_helm_then_applied() {
    let Some(helm) = crate::tool("helm") else {
        return;
    };
    let Some(ns) = Ns::new("chartdir") else {
        return;
    };
    let chart = fixture("apply/umbrella");
    let out = ok(ns.chartseq(&[
        "apply",
        chart.to_str().expect("UTF-8"),
        "--helm",
        helm.to_str().expect("UTF-8"),
        "--release",
        "u",
    ]));
    assert!(
        out.contains("release u applied: revision 1, status deployed"),
        "{out}"
    );
    let a = ns.audit();
    assert!(
        written(&a, "Deployment", "api") > a.ready("Deployment", "db"),
        "{a}"
    );
    let out = ok(ns.chartseq(&["status", "u"]));
    assert!(out.contains("CHART: umbrella-0.1.0"), "{out}");
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let path = entry.expect("entry").path();
        let target = to.join(path.file_name().expect("name"));
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).expect("copy");
        }
    }
}

/// `apply` of a v2 chart with sequencing says what Helm does with it (refused with
/// `--wait=ordered`, installed all at once without) and that chartseq sequences it — CS203's
/// words and help, once — and then deploys it sequenced; the same chart as v3 deploys the
/// same way without a word. The reference's `pkg/cmd/flags_test.go`,
/// `TestOrderedWaitRequiresChartV3`, expects that refusal from helm; chartseq quotes it and
/// deploys sequenced (the README's "What chartseq follows" says why).
#[test]
fn apply_says_what_helm_does_with_a_v2_chart_and_sequences_it() {
    let stream = fixture("apply/umbrella.yaml");
    let v3 = tempfile::tempdir().expect("tempdir");
    copy_dir(&fixture("apply/umbrella"), v3.path());
    let chart_yaml = v3.path().join("Chart.yaml");
    let text = std::fs::read_to_string(&chart_yaml).expect("Chart.yaml");
    std::fs::write(
        &chart_yaml,
        text.replacen("apiVersion: v2", "apiVersion: v3", 1),
    )
    .expect("write");
    for (chart, v2) in [
        (fixture("apply/umbrella"), true),
        (v3.path().to_path_buf(), false),
    ] {
        let Some(ns) = Ns::new("chartv2") else { return };
        let (code, out, err) = ns.chartseq(&[
            "apply",
            stream.to_str().expect("UTF-8"),
            "--chart",
            chart.to_str().expect("UTF-8"),
            "--release",
            "shop",
        ]);
        assert_eq!(code, 0, "{out}\n{err}");
        let a = ns.audit();
        assert!(
            written(&a, "ConfigMap", "umbrella") > a.ready("Deployment", "api"),
            "sequenced either way:\n{a}"
        );
        if v2 {
            assert_eq!(err.matches("warning[CS203]").count(), 1, "{err}");
            assert!(
                err.contains("--wait=ordered requires chart apiVersion v3 (chart \"umbrella\" has apiVersion v2)")
                    && err.contains("chartseq plans and applies it sequenced"),
                "{err}"
            );
        } else {
            assert!(!err.contains("CS203"), "{err}");
        }
    }
}
