//! How failures are reported on the real control plane and what could not run: blocked resources and their reasons kept
//! in the summary, `history` and `status`; the time really waited; the steps that never
//! started; `--timeout` alone; a missing namespace; a dead API server; dry runs of uninstall
//! and rollback; exit codes (2 could not run, 1 ran and failed).

use super::{Ns, ok};
use crate::fixture;

/// `fixtures/apply/shop.yaml`: on the test cluster every pod is ready as soon as it starts.
fn shop() -> String {
    fixture("apply/shop.yaml")
        .to_str()
        .expect("UTF-8")
        .to_owned()
}

/// The shop whose app runs an image kwok never makes ready.
pub fn shop_failing_app(ns: &Ns) -> String {
    let text = std::fs::read_to_string(shop()).expect("the fixture");
    let failing = text.replace(
        "containers: [{name: app, image: shop:1}]",
        "containers: [{name: app, image: chartseq.invalid/fail:1}]",
    );
    assert_ne!(failing, text);
    ns.file("shop-failing.yaml", &failing)
}

fn apply(ns: &Ns, extra: &[&str]) -> (i32, String, String) {
    let stream = shop();
    let mut args = vec!["apply", "shop", stream.as_str()];
    args.extend_from_slice(extra);
    ns.chartseq(&args)
}

#[test]
fn a_timeout_keeps_what_blocked_how_long_and_what_never_ran() {
    let Some(ns) = Ns::new("timeout") else { return };
    let n = &ns.name;
    let failing = shop_failing_app(&ns);
    // --timeout alone: the readiness timeout (1m by default) is cut to it, not refused.
    let (code, out, err) = ns.chartseq(&["apply", "shop", &failing, "--timeout", "4s"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains(
            "the release did not finish within --timeout 4s: step shop app: timed out after"
        ),
        "{err}"
    );
    let row = |text: &str, step: &str| -> String {
        text.lines()
            .find(|l| l.starts_with(step))
            .unwrap_or_else(|| panic!("no row {step} in\n{text}"))
            .to_owned()
    };
    // The summary: the failed step with the time it really waited, what blocked it and why,
    // and the step that never started.
    let app = row(&out, "shop app ");
    assert!(app.contains("failed:") && !app.contains(" 0ms "), "{out}");
    let blocked = format!("Deployment/app (namespace {n}): Deployment: 0 of 2 replicas available");
    assert!(out.contains(&blocked), "{out}");
    assert!(
        row(&out, "shop (unsequenced)").contains("not started: after shop app"),
        "{out}"
    );
    // status keeps the same report.
    let status = ok(ns.chartseq(&["status", "shop"]));
    assert!(status.contains("STATUS: failed"), "{status}");
    let last_run = status
        .split("LAST RUN:")
        .nth(1)
        .expect("a LAST RUN section");
    assert!(
        last_run.contains(&blocked)
            && row(last_run.trim_start_matches('\n'), "shop (unsequenced)").contains("not started"),
        "{status}"
    );
    // history too, under the failed revision.
    let history = ok(ns.chartseq(&["history", "shop"]));
    assert!(
        history.contains("Release \"shop\" failed: the release did not finish within --timeout 4s")
            && history.contains(&format!("  {blocked}")),
        "{history}"
    );
    let json = ok(ns.chartseq(&["history", "shop", "-o", "json"]));
    let rev: serde_json::Value =
        serde_json::from_str(json.lines().next().expect("a revision")).expect("JSON");
    let steps = rev["report"]["steps"].as_array().expect("recorded steps");
    let failed = steps
        .iter()
        .find(|s| s["step"] == "shop app")
        .expect("the app step");
    assert_eq!(failed["result"], "failed");
    assert!(
        failed["waited_ms"].as_u64().is_some_and(|ms| ms >= 1000),
        "{failed}"
    );
    assert!(steps.iter().any(|s| s["result"] == "not started"));
}

#[test]
fn a_missing_namespace_is_named_with_the_fix() {
    let Some(ns) = Ns::new("nons") else { return };
    let nope = ns.cluster_name("namespace", "nope");
    let stream = shop();
    let run = |extra: &[&str]| {
        let mut cmd = crate::chartseq();
        cmd.args(["apply", "shop", &stream, "-n", &nope])
            .args(extra)
            .arg("--kubeconfig")
            .arg(&ns.cluster.kubeconfig);
        crate::run(&mut cmd)
    };
    let (code, _, err) = run(&[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "namespace {nope} does not exist: create it, or pass --create-namespace"
        )),
        "{err}"
    );
    let written = super::Audit::read(&ns.cluster.audit_log, &nope);
    assert!(written.writes().next().is_none(), "{written}");
    ok(run(&["--create-namespace", "--timeout", "1m"]));
}

#[test]
fn a_dead_api_server_is_named() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kubeconfig = dir.path().join("kc");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'http://127.0.0.1:9'}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {}\n",
    )
    .expect("written");
    let stream = shop();
    for args in [
        &["apply", "shop", stream.as_str()][..],
        &["uninstall", "shop"],
        &["status", "shop"],
    ] {
        let mut cmd = crate::chartseq();
        cmd.args(args).arg("--kubeconfig").arg(&kubeconfig);
        let (code, _, err) = crate::run(&mut cmd);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(
            err.contains("cannot reach the Kubernetes API server at http://127.0.0.1:9/"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn uninstall_and_rollback_dry_runs_change_nothing() {
    let Some(ns) = Ns::new("dryrun") else { return };
    ok(apply(&ns, &[]));
    let v2 = fixture("apply/shop-v2.yaml");
    ok(ns.chartseq(&["apply", "shop", v2.to_str().expect("UTF-8")]));
    let before = ns.audit().chartseq_changes();
    let (code, out, err) = ns.chartseq(&["uninstall", "shop", "--dry-run"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("release shop dry run, nothing changed: would uninstall revision 2, deleting 4 resources"),
        "{out}"
    );
    assert!(!out.contains("status uninstalling"), "{out}");
    assert!(
        out.contains("dry-run: would delete Deployment/app"),
        "{out}"
    );
    assert!(
        err.contains("shop app: would delete 1 resource: Deployment/app")
            && !err.contains("deleting"),
        "{err}"
    );
    let (code, out, err) = ns.chartseq(&["rollback", "shop", "1", "--dry-run"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("release shop dry run, nothing changed: would roll back to revision 1 (as revision 3), applying 5 resources"),
        "{out}"
    );
    assert!(!out.contains("status pending-rollback"), "{out}");
    assert!(
        out.contains("dry-run: would apply Deployment/queue"),
        "{out}"
    );
    assert!(
        err.contains("shop queue: would apply 1 resource: Deployment/queue")
            && !err.contains("applying"),
        "{err}"
    );
    // Nothing but dry runs reached the server; the release is where it was.
    assert_eq!(ns.audit().chartseq_changes(), before);
    let (_, status, _) = ns.chartseq(&["status", "shop"]);
    assert!(
        status.contains("REVISION: 2") && status.contains("STATUS: deployed"),
        "{status}"
    );
    assert!(ns.get("deployment", "app").is_some());
}

#[test]
fn what_could_not_run_exits_2_and_what_failed_exits_1() {
    let Some(ns) = Ns::new("exits") else { return };
    let (code, _, err) = ns.chartseq(&["rollback", "shop", "3"]);
    assert_eq!(code, 2, "no such release: {err}");
    let failing = shop_failing_app(&ns);
    let (code, _, _) = ns.chartseq(&["apply", "shop", &failing, "--timeout", "2s"]);
    assert_eq!(code, 1, "the release ran and failed");
    let (code, _, err) = ns.chartseq(&["rollback", "shop", "7"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("release shop has no revision 7"), "{err}");
    let (code, _, err) = ns.chartseq(&["history", "Shop!"]);
    assert_eq!(code, 2);
    assert!(err.contains("invalid release name \"Shop!\""), "{err}");
    // The release name is NAME, or --release-name (as in every command): not both.
    let stream = shop();
    let (code, _, err) = ns.chartseq(&["apply", &stream]);
    assert_eq!(code, 2);
    assert!(err.contains("a release name is required"), "{err}");
    let (code, _, err) = ns.chartseq(&["apply", "shop", &stream, "--release-name", "web"]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot be used with '--release-name"), "{err}");
}

#[test]
fn a_pending_revision_stops_an_upgrade_as_helm_does() {
    let Some(ns) = Ns::new("pending") else { return };
    ok(apply(&ns, &[]));
    ok(apply(&ns, &[]));
    // Revision 2 left pending, as a run killed mid-upgrade leaves it.
    ns.set_status("shop", 1, "deployed", None);
    ns.set_status("shop", 2, "pending-upgrade", Some("Preparing upgrade"));
    let before = ns.audit().chartseq_changes();
    let (code, _, err) = apply(&ns, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("another operation (install/upgrade/rollback) is in progress: release shop revision 2 is pending-upgrade; if none is running, `chartseq rollback shop 1 -n {}` returns to revision 1", ns.name)),
        "{err}"
    );
    assert_eq!(ns.audit().chartseq_changes(), before);
    // A preview of the upgrade says the same.
    let (code, _, err) = apply(&ns, &["--dry-run", "--diff"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("release shop revision 2 is pending-upgrade"),
        "{err}"
    );
    // The way out Helm offers, as the message names it: a rollback.
    let out = ok(ns.chartseq(&["rollback", "shop", "1"]));
    assert!(out.contains("revision 3, status deployed"), "{out}");
    ok(apply(&ns, &[]));
}

#[test]
fn a_pending_first_install_names_the_uninstall_that_frees_it() {
    let Some(ns) = Ns::new("pendinginst") else {
        return;
    };
    ok(apply(&ns, &[]));
    // The only revision left pending, as a first install killed mid-run leaves it.
    ns.set_status(
        "shop",
        1,
        "pending-install",
        Some("Initial install underway"),
    );
    let (code, _, err) = apply(&ns, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("release shop revision 1 is pending-install; if none is running, `chartseq uninstall shop -n {}` removes it", ns.name)),
        "{err}"
    );
    // That command works.
    ok(ns.chartseq(&["uninstall", "shop"]));
    ok(apply(&ns, &[]));
}

/// An object the API server cannot fit to its schema for server-side apply (a boolean where a
/// string goes, as YAML 1.1 reads a container named `n`) is answered with a 500 that says so:
/// sent once and reported with the server's reason, not retried as a passing fault would be.
#[test]
fn an_object_the_server_cannot_type_is_refused_once_with_its_reason() {
    let Some(ns) = Ns::new("untyped") else { return };
    let stream = ns.file(
        "untyped.yaml",
        "---
# Source: app/templates/app.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers: [{name: false, image: app:1}]
",
    );
    let (code, out, err) = ns.chartseq(&[
        "apply",
        &stream,
        "--release",
        "untyped",
        "--no-lint",
        "--timeout",
        "1m",
    ]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("Deployment/app") && err.contains("expected string"),
        "{err}"
    );
    let audit = ns.audit();
    let sent = audit
        .events
        .iter()
        .filter(|e| e.resource == "deployments" && e.name == "app" && e.verb == "patch")
        .count();
    assert_eq!(sent, 1, "{audit}");
}
