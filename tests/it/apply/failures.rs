//! How failures are reported and what could not run: blocked resources and their reasons kept
//! in the summary, `history` and `status`; the time really waited; the steps that never
//! started; `--timeout` alone; a missing namespace; a dead API server; dry runs of uninstall
//! and rollback; exit codes (2 could not run, 1 ran and failed).

use super::support::{Env, start};
use crate::fixture;

fn shop() -> String {
    fixture("apply/shop.yaml")
        .to_str()
        .expect("UTF-8")
        .to_owned()
}

fn apply(env: &Env, extra: &[&str]) -> (i32, String, String) {
    let stream = shop();
    let mut args = vec!["apply", "shop", stream.as_str(), "-n", "default"];
    args.extend_from_slice(extra);
    env.run(&args)
}

#[test]
fn a_timeout_keeps_what_blocked_how_long_and_what_never_ran() {
    let env = start("resources:\n- {kind: Deployment, name: app, never: true}\n");
    // --timeout alone: the readiness timeout (1m by default) is cut to it, not refused.
    let (code, out, err) = apply(&env, &["--timeout", "2s"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains(
            "the release did not finish within --timeout 2s: step shop app: timed out after"
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
    assert!(
        out.contains("Deployment/app (namespace default): Deployment: 0 of 2 replicas created"),
        "{out}"
    );
    assert!(
        row(&out, "shop (unsequenced)").contains("not started: after shop app"),
        "{out}"
    );
    // status keeps the same report.
    let (code, status, _) = env.run(&["status", "shop", "-n", "default"]);
    assert_eq!(code, 0);
    assert!(status.contains("STATUS: failed"), "{status}");
    let last_run = status
        .split("LAST RUN:")
        .nth(1)
        .expect("a LAST RUN section");
    assert!(
        last_run
            .contains("Deployment/app (namespace default): Deployment: 0 of 2 replicas created")
            && row(last_run.trim_start_matches('\n'), "shop (unsequenced)").contains("not started"),
        "{status}"
    );
    // history too, under the failed revision.
    let (code, history, _) = env.run(&["history", "shop", "-n", "default"]);
    assert_eq!(code, 0);
    assert!(
        history.contains("Release \"shop\" failed: the release did not finish within --timeout 2s")
            && history.contains(
                "  Deployment/app (namespace default): Deployment: 0 of 2 replicas created"
            ),
        "{history}"
    );
    let (_, json, _) = env.run(&["history", "shop", "-n", "default", "-o", "json"]);
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
    let env = start("");
    let stream = shop();
    let (code, _, err) = env.run(&["apply", "shop", &stream, "-n", "nope"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("namespace nope does not exist: create it, or pass --create-namespace"),
        "{err}"
    );
    assert!(env.log().is_empty(), "{:#?}", env.log());
    let (code, _, err) = env.run(&["apply", "shop", &stream, "-n", "nope", "--create-namespace"]);
    assert_eq!(code, 0, "{err}");
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
    let env = start("");
    assert_eq!(apply(&env, &[]).0, 0);
    let v2 = fixture("apply/shop-v2.yaml");
    assert_eq!(
        env.run(&[
            "apply",
            "shop",
            v2.to_str().expect("UTF-8"),
            "-n",
            "default"
        ])
        .0,
        0
    );
    let before = env.log().len();
    let (code, out, err) = env.run(&["uninstall", "shop", "-n", "default", "--dry-run"]);
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
    let (code, out, err) = env.run(&["rollback", "shop", "1", "-n", "default", "--dry-run"]);
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
    assert!(
        env.log()[before..].iter().all(|e| e.dry_run),
        "{:#?}",
        &env.log()[before..]
    );
    let (_, status, _) = env.run(&["status", "shop", "-n", "default"]);
    assert!(
        status.contains("REVISION: 2") && status.contains("STATUS: deployed"),
        "{status}"
    );
    assert!(env.get("Deployment", "app").is_some());
}

#[test]
fn what_could_not_run_exits_2_and_what_failed_exits_1() {
    let env = start("resources:\n- {kind: Deployment, name: app, fail: true}\n");
    let (code, _, err) = env.run(&["rollback", "shop", "3", "-n", "default"]);
    assert_eq!(code, 2, "no such release: {err}");
    let (code, _, _) = apply(&env, &[]);
    assert_eq!(code, 1, "the release ran and failed");
    let (code, _, err) = env.run(&["rollback", "shop", "7", "-n", "default"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("release shop has no revision 7"), "{err}");
    let (code, _, err) = env.run(&["history", "Shop!"]);
    assert_eq!(code, 2);
    assert!(err.contains("invalid release name \"Shop!\""), "{err}");
    // The release name is NAME, or --release-name (as in every command): not both.
    let stream = shop();
    let (code, _, err) = env.run(&["apply", &stream, "-n", "default"]);
    assert_eq!(code, 2);
    assert!(err.contains("a release name is required"), "{err}");
    let (code, _, err) = env.run(&["apply", "shop", &stream, "--release-name", "web"]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot be used with '--release-name"), "{err}");
}

#[test]
fn a_pending_revision_stops_an_upgrade_as_helm_does() {
    let env = start("");
    assert_eq!(apply(&env, &[]).0, 0);
    assert_eq!(apply(&env, &[]).0, 0);
    // Revision 2 left pending, as a run killed mid-upgrade leaves it.
    env.set_status(1, "deployed", None);
    env.set_status(2, "pending-upgrade", Some("Preparing upgrade"));
    let before = env.log().len();
    let (code, _, err) = apply(&env, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("another operation (install/upgrade/rollback) is in progress: release shop revision 2 is pending-upgrade; if none is running, `chartseq rollback shop 1 -n default` returns to revision 1"),
        "{err}"
    );
    assert!(env.log()[before..].iter().all(|e| e.verb != "apply"));
    // A preview of the upgrade says the same.
    let (code, _, err) = apply(&env, &["--dry-run", "--diff"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("release shop revision 2 is pending-upgrade"),
        "{err}"
    );
    // The way out Helm offers, as the message names it: a rollback.
    let (code, out, err) = env.run(&["rollback", "shop", "1", "-n", "default"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("revision 3, status deployed"), "{out}");
    assert_eq!(apply(&env, &[]).0, 0);
}

#[test]
fn a_pending_first_install_names_the_uninstall_that_frees_it() {
    let env = start("");
    assert_eq!(apply(&env, &[]).0, 0);
    // The only revision left pending, as a first install killed mid-run leaves it.
    env.set_status(1, "pending-install", Some("Initial install underway"));
    let (code, _, err) = apply(&env, &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("release shop revision 1 is pending-install; if none is running, `chartseq uninstall shop -n default` removes it"),
        "{err}"
    );
    // That command works.
    let (code, out, err) = env.run(&["uninstall", "shop", "-n", "default"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(apply(&env, &[]).0, 0);
}
