//! The `chartseq` binary against the test API server: install as a DAG, upgrade with
//! pruning, rollback, uninstall order, hooks and delete policies, timeouts, `--atomic`,
//! injected faults and Ctrl-C.

use std::process::Command;
use std::time::{Duration, Instant};

use super::apiserver::Scenario;
use super::support::{force_apply_as, start, t};
use crate::{chartseq, fixture, run};

#[test]
fn install_runs_the_plan_as_a_dag_and_records_the_release() {
    let env = start(
        "resources:\n- {kind: StatefulSet, name: db, readyAfterMs: 600}\n- {kind: Deployment, name: queue, readyAfterMs: 100}\n- {kind: Deployment, name: app, readyAfterMs: 100}\n",
    );
    let (code, out, err) = env.apply("shop.yaml", &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("release shop applied: revision 1, status deployed"),
        "{out}"
    );
    // The pre-install hook ran first and was deleted after success (hook-succeeded).
    assert!(t(&env, "ready", "Job", "migrate") <= t(&env, "apply", "StatefulSet", "db"));
    assert!(!env.exists("Job", "migrate"));
    // db and queue have no dependencies: both start at once, queue does not wait for db.
    assert!(t(&env, "apply", "Deployment", "queue") < t(&env, "ready", "StatefulSet", "db"));
    // Inside a step, Helm's kind order: ConfigMap before StatefulSet.
    assert!(t(&env, "apply", "ConfigMap", "db-config") <= t(&env, "apply", "StatefulSet", "db"));
    // app waits for both of its groups.
    assert!(t(&env, "apply", "Deployment", "app") >= t(&env, "ready", "StatefulSet", "db"));
    assert!(t(&env, "apply", "Deployment", "app") >= t(&env, "ready", "Deployment", "queue"));
    // The unsequenced Service goes last.
    assert!(t(&env, "apply", "Service", "web") >= t(&env, "ready", "Deployment", "app"));
    // Helm strips the invalid depends-on key before apply.
    let app = env
        .server
        .server
        .object("Deployment", Some("default"), "app")
        .expect("app exists");
    assert!(
        app["metadata"]["annotations"]
            .get("helm.sh/depends-on/resource-groups")
            .is_none(),
        "{app}"
    );
    // Helm's field manager: helm and chartseq own the release's fields together.
    assert_eq!(app["metadata"]["managedFields"][0]["manager"], "helm");
    let secret = env.release_secret(1).expect("the release is recorded");
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
    let env = start("");
    assert_eq!(env.apply("shop.yaml", &[]).0, 0);
    let (code, out, err) = env.apply("shop-v2.yaml", &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("revision 2, status deployed"), "{out}");
    assert!(
        !env.exists("Deployment", "queue"),
        "queue left the chart and is pruned"
    );
    let app = env
        .server
        .server
        .object("Deployment", Some("default"), "app")
        .expect("app exists");
    assert_eq!(
        app["spec"]["template"]["spec"]["containers"][0]["image"],
        "shop:2"
    );
    assert_eq!(app["metadata"]["generation"], 2);
    // Pruning happens after the new plan is in place.
    let web_again = env.last_at("apply", "Service", "web").expect("web applied");
    assert!(t(&env, "delete", "Deployment", "queue") >= web_again);

    let (code, out, err) = env.run(&["rollback", "shop", "1", "-n", "default"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("revision 3, status deployed"), "{out}");
    assert!(env.exists("Deployment", "queue"));
    let app = env
        .server
        .server
        .object("Deployment", Some("default"), "app")
        .expect("app exists");
    assert_eq!(
        app["spec"]["template"]["spec"]["containers"][0]["image"],
        "shop:1"
    );

    let (code, out, _) = env.run(&["history", "shop", "-n", "default", "-o", "json"]);
    assert_eq!(code, 0);
    let statuses: Vec<String> = out
        .lines()
        .map(|l| {
            let row: serde_json::Value = serde_json::from_str(l).expect("JSON lines");
            row["status"].as_str().expect("a status").to_owned()
        })
        .collect();
    assert_eq!(statuses, ["superseded", "superseded", "deployed"], "{out}");
    assert!(out.contains("Rollback to 1"), "{out}");
    let (code, out, _) = env.run(&["status", "shop", "-n", "default"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("REVISION: 3")
            && out.contains("SEQUENCED: true")
            && out.contains("Deployment/queue"),
        "{out}"
    );
}

#[test]
fn uninstall_is_the_exact_reverse_waiting_for_each_step() {
    let env = start("deleteDelayMs: 80\n");
    assert_eq!(env.apply("shop.yaml", &[]).0, 0);
    let (code, out, err) = env.run(&["uninstall", "shop", "-n", "default"]);
    assert_eq!(code, 0, "{out}\n{err}");
    // Steps in reverse: (unsequenced) → app → queue → db; each gone before the next starts.
    // Positions in the server's log, not timestamps: strictly before, never a tie.
    let order = [
        ("Service", "web"),
        ("Deployment", "app"),
        ("Deployment", "queue"),
        ("StatefulSet", "db"),
    ];
    for pair in order.windows(2) {
        let (gone, next) = (
            env.position("gone", pair[0].0, pair[0].1),
            env.position("delete", pair[1].0, pair[1].1),
        );
        assert!(
            gone < next,
            "{pair:?}: gone at {gone}, next deleted at {next}: {:#?}",
            env.log()
        );
    }
    // Reverse kind order inside the db step: the StatefulSet before its ConfigMap.
    assert!(
        env.position("delete", "StatefulSet", "db")
            < env.position("delete", "ConfigMap", "db-config")
    );
    assert_eq!(env.leftovers(), Vec::<String>::new());
    let (code, _, err) = env.run(&["status", "shop", "-n", "default"]);
    assert_eq!(code, 2);
    assert!(err.contains("release: not found"), "{err}");
}

#[test]
fn readiness_timeout_names_what_blocked_and_records_failure() {
    let env = start("resources:\n- {kind: Deployment, name: app, never: true}\n");
    let (code, out, err) = env.apply("shop.yaml", &["--readiness-timeout", "1s"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("step shop app: timed out after 1s waiting for 1 resource(s):"),
        "{err}"
    );
    assert!(
        err.contains("Deployment/app (namespace default): Deployment: 0 of 2 replicas created"),
        "{err}"
    );
    assert!(
        !env.exists("Service", "web"),
        "nothing after the blocked step is applied"
    );
    let secret = env
        .release_secret(1)
        .expect("the failed revision is recorded");
    assert_eq!(secret["metadata"]["labels"]["status"], "failed");
}

#[test]
fn readiness_timeout_must_not_exceed_timeout() {
    let env = start("");
    let (code, _, err) = env.apply(
        "shop.yaml",
        &["--timeout", "1m", "--readiness-timeout", "2m"],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("--readiness-timeout (2m0s) must not exceed --timeout (1m0s)"),
        "{err}"
    );
    assert!(env.log().is_empty() || env.log().iter().all(|e| e.kind == "Namespace"));
}

#[test]
fn atomic_install_failure_leaves_nothing() {
    let env = start("resources:\n- {kind: Deployment, name: app, fail: true}\n");
    let (code, out, err) = env.apply("shop.yaml", &["--atomic"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("Deployment/app (namespace default) failed: Deployment: progress deadline exceeded (ProgressDeadlineExceeded)"),
        "{err}"
    );
    assert_eq!(env.leftovers(), Vec::<String>::new());
}

#[test]
fn atomic_upgrade_failure_rolls_back() {
    let env = start("resources:\n- {kind: Deployment, name: app, fail: true, readyAfterMs: 50}\n");
    // Revision 1 has no Deployment; revision 2 brings one that fails.
    let (code, _, _) = env.apply("hooks.yaml", &[]);
    assert_eq!(code, 0);
    let (code, out, err) = env.apply("shop.yaml", &["--atomic"]);
    assert_eq!(code, 1, "{out}\n{err}");
    // Back to revision 1's objects: the shop objects are gone, hooks.yaml's ConfigMap stays.
    assert!(env.exists("ConfigMap", "app"));
    assert!(!env.exists("Deployment", "app") && !env.exists("StatefulSet", "db"));
    let (_, out, _) = env.run(&["history", "shop", "-n", "default"]);
    assert!(out.contains("Rollback to 1"), "{out}");
}

#[test]
fn atomic_returns_to_the_newest_superseded_revision_when_none_is_deployed() {
    let env = start("resources:\n- {kind: Deployment, name: app, fail: true, readyAfterMs: 50}\n");
    let (code, _, _) = env.apply("hooks.yaml", &[]);
    assert_eq!(code, 0);
    // No revision deployed: a rollback that failed to apply supersedes the one it left.
    env.set_status(1, "superseded", None);
    let (code, out, err) = env.apply("shop.yaml", &["--atomic"]);
    assert_eq!(code, 1, "{out}\n{err}");
    // As Helm's rollback-on-failure: back to revision 1, not uninstalled.
    assert!(err.contains("--atomic: rolling back"), "{err}");
    assert!(env.exists("ConfigMap", "app"));
    assert!(!env.exists("Deployment", "app"));
    let (_, out, _) = env.run(&["history", "shop", "-n", "default"]);
    assert!(out.contains("Rollback to 1"), "{out}");
}

#[test]
fn hooks_follow_weight_and_delete_policies() {
    let env = start("");
    let (code, out, err) = env.apply("hooks.yaml", &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    // No policy: before-hook-creation, so the Job stays until the next run.
    assert!(env.exists("Job", "keep"));
    // hook-succeeded: the post-install Pod is gone after it succeeded.
    assert!(env.at("ready", "Pod", "notify").is_some());
    assert!(!env.exists("Pod", "notify"));
    assert!(t(&env, "apply", "Pod", "notify") >= t(&env, "apply", "ConfigMap", "app"));
    let first_uid = env
        .server
        .server
        .object("Job", Some("default"), "keep")
        .expect("kept")["metadata"]["uid"]
        .clone();
    let (code, _, _) = env.apply("hooks.yaml", &[]);
    assert_eq!(code, 0);
    let second_uid = env
        .server
        .server
        .object("Job", Some("default"), "keep")
        .expect("recreated")["metadata"]["uid"]
        .clone();
    assert_ne!(
        first_uid, second_uid,
        "before-hook-creation deletes the old hook first"
    );
}

#[test]
fn failed_hook_with_hook_failed_policy_is_deleted_and_stops_the_release() {
    let env = start("resources:\n- {kind: Job, name: migrate, fail: true}\n");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let stream = std::fs::read_to_string(fixture("apply/shop.yaml"))
        .expect("the fixture reads")
        .replace(
            "hook-delete-policy: hook-succeeded",
            "hook-delete-policy: hook-failed",
        );
    let path = dir.path().join("shop.yaml");
    std::fs::write(&path, stream).expect("written");
    let (code, _, err) = env.run(&["apply", path.to_str().expect("UTF-8"), "--release", "shop"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("pre-install hook Job/migrate (namespace default)")
            && err.contains("Job: Failed after 1 failed pods (BackoffLimitExceeded)"),
        "{err}"
    );
    assert!(!env.exists("Job", "migrate"));
    assert!(
        !env.exists("StatefulSet", "db"),
        "nothing of the plan runs after a failed pre hook"
    );
}

#[test]
fn survives_injected_server_errors_and_watch_drops() {
    let env = start("defaultDelayMs: 30\nfaults: {errorRate: 0.1, watchDropMs: 150, seed: 7}\n");
    let (code, out, err) = env.apply("shop.yaml", &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        env.server.server.counters().injected_faults > 0,
        "faults were injected"
    );
    for (kind, name) in [
        ("StatefulSet", "db"),
        ("ConfigMap", "db-config"),
        ("Deployment", "queue"),
        ("Deployment", "app"),
        ("Service", "web"),
    ] {
        assert!(env.exists(kind, name), "{kind}/{name}");
    }
    let (code, _, err) = env.run(&["uninstall", "shop", "-n", "default"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(env.leftovers(), Vec::<String>::new());
}

#[test]
fn dry_run_changes_nothing() {
    let env = start("");
    let (code, out, err) = env.apply("shop.yaml", &["--dry-run"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("dry run, nothing changed: would install revision 1"),
        "{out}"
    );
    assert!(
        env.log()
            .iter()
            .filter(|e| e.verb == "apply")
            .all(|e| e.dry_run)
    );
    assert!(env.log().iter().any(|e| e.dry_run && e.name == "app"));
    assert_eq!(env.leftovers(), Vec::<String>::new());
}

#[test]
fn progress_json_is_one_event_per_line() {
    let env = start("");
    let (code, out, err) = env.apply("shop.yaml", &["--progress", "json"]);
    assert_eq!(code, 0, "{err}");
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
    let env = start("resources:\n- {kind: StatefulSet, name: db, readyAfterMs: 20000}\n");
    let path = fixture("apply/shop.yaml");
    let child = env
        .cmd(&["apply", path.to_str().expect("UTF-8"), "--release", "shop"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("chartseq starts");
    let started = Instant::now();
    while env.at("apply", "StatefulSet", "db").is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "db was never applied"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
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
        !env.exists("Deployment", "app"),
        "nothing is scheduled after Ctrl-C"
    );
    let secret = env
        .release_secret(1)
        .expect("the interrupted revision is recorded");
    assert_eq!(secret["metadata"]["labels"]["status"], "failed");
    let (code, _, err) = env.run(&["uninstall", "shop", "-n", "default"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(env.leftovers(), Vec::<String>::new());
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

#[test]
fn crds_first_then_custom_readiness_gates_dependents() {
    let env = start(
        "resources:\n- {kind: CustomResourceDefinition, name: widgets.example.com, readyAfterMs: 100}\n- kind: Widget\n  name: w\n  status: [{afterMs: 300, value: {phase: Ready}}]\n",
    );
    let path = fixture("apply/widgets.yaml");
    let (code, out, err) = env.run(&["apply", path.to_str().expect("UTF-8"), "--release", "shop"]);
    assert_eq!(code, 0, "{out}\n{err}");
    // The CR could only be applied once its CRD was established and rediscovered.
    assert!(
        t(&env, "apply", "Widget", "w")
            >= t(
                &env,
                "ready",
                "CustomResourceDefinition",
                "widgets.example.com"
            )
    );
    // The custom expression, not kstatus, gated the consumer.
    assert!(t(&env, "apply", "ConfigMap", "consumer") >= t(&env, "ready", "Widget", "w"));
}

#[test]
fn custom_readiness_timeout_shows_each_expression_observed_value() {
    let env = start(
        "resources:\n- kind: Widget\n  name: w\n  status: [{afterMs: 10, value: {phase: Provisioning}}]\n",
    );
    let path = fixture("apply/widgets.yaml");
    let (code, _, err) = env.run(&[
        "apply",
        path.to_str().expect("UTF-8"),
        "--release",
        "shop",
        "--readiness-timeout",
        "1s",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("step widgets widget: timed out after 1s waiting for 1 resource(s):"),
        "{err}"
    );
    assert!(
        err.contains("Widget/w (namespace default):") && err.contains("observed \"Provisioning\""),
        "{err}"
    );
    assert!(!env.exists("ConfigMap", "consumer"));
}

#[test]
fn a_conflict_names_the_resource_and_the_server_message() {
    let env = start("");
    assert_eq!(env.apply("hooks.yaml", &[]).0, 0);
    let body = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"app\"},\"data\":{\"a\":\"2\"}}";
    assert_eq!(
        force_apply_as(
            &env,
            "other",
            "/api/v1/namespaces/default/configmaps/app",
            body
        ),
        200
    );
    let (code, _, err) = env.apply("hooks.yaml", &[]);
    assert_eq!(code, 1);
    assert!(
        err.contains("ConfigMap/app (namespace default): Apply failed with 1 conflict: conflict with \"other\" using v1: .data.a"),
        "{err}"
    );
    let (code, _, err) = env.apply("hooks.yaml", &["--force-conflicts"]);
    assert_eq!(code, 0, "{err}");
    let cm = env
        .server
        .server
        .object("ConfigMap", Some("default"), "app")
        .expect("exists");
    assert_eq!(cm["data"]["a"], "1");
}

#[test]
fn overall_timeout_bounds_the_release() {
    // db takes 1.5 s; each wait may take 1 s, and the whole release 1 s too.
    let env = start("resources:\n- {kind: StatefulSet, name: db, readyAfterMs: 1500}\n");
    let started = Instant::now();
    let (code, _, err) = env.apply(
        "shop.yaml",
        &["--timeout", "1s", "--readiness-timeout", "1s"],
    );
    assert_eq!(code, 1, "{err}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        err.contains("the release did not finish within --timeout 1s: step shop db:"),
        "{err}"
    );
    assert!(err.contains("StatefulSet/db (namespace default):"), "{err}");
}

#[test]
fn a_document_that_is_not_an_object_stops_the_deploy_unless_no_lint() {
    let env = start("");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut stream =
        std::fs::read_to_string(fixture("apply/hooks.yaml")).expect("the fixture reads");
    stream.push_str("---\n# Source: hooks/templates/broken.yaml\n- just\n- a list\n");
    let path = dir.path().join("broken.yaml");
    std::fs::write(&path, stream).expect("written");
    let path = path.to_str().expect("UTF-8");
    let (code, _, err) = env.run(&["apply", path, "--release", "shop"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("CS000") && err.contains("lint found errors"),
        "lint runs first: {err}"
    );
    assert!(!env.exists("ConfigMap", "app"));
    let (code, _, err) = env.run(&["apply", path, "--release", "shop", "--no-lint"]);
    assert_eq!(code, 0, "{err}");
    assert!(env.exists("ConfigMap", "app"));
}

#[test]
fn context_selects_the_kubeconfig_context() {
    let env = start("");
    let (code, _, err) = env.run(&["history", "shop", "--context", "nope"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nope"), "{err}");
    assert_eq!(
        env.apply("hooks.yaml", &["--context", "chartseq-test"]).0,
        0
    );
}

#[test]
fn the_sample_scenario_parses() {
    let text = std::fs::read_to_string(fixture("apply/scenario.yaml")).expect("the sample reads");
    let scenario = Scenario::parse(&text).expect("the sample scenario parses");
    assert_eq!(scenario.resources.len(), 5);
    assert_eq!(scenario.resources[4].status.len(), 2);
    assert!(
        Scenario::parse("resources: [{kind: Job, name: x, readyAftrMs: 1}]").is_err(),
        "unknown fields are errors"
    );
}

#[test]
fn a_started_job_counts_as_ready_unless_wait_for_jobs() {
    for (flags, waits) in [(&[][..], false), (&["--wait-for-jobs"][..], true)] {
        let env = start("resources:\n- {kind: Job, name: seed, readyAfterMs: 700}\n");
        let path = fixture("apply/jobs.yaml");
        let mut args = vec!["apply", path.to_str().expect("UTF-8"), "--release", "shop"];
        args.extend_from_slice(flags);
        let (code, out, err) = env.run(&args);
        assert_eq!(code, 0, "{out}\n{err}");
        let reader = t(&env, "apply", "ConfigMap", "reader");
        let started = Instant::now();
        while env
            .server
            .server
            .object("Job", Some("default"), "seed")
            .expect("the Job exists")["status"]["succeeded"]
            != 1
        {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "the Job never completed"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let complete = env
            .last_at("ready", "Job", "seed")
            .expect("the Job completed");
        assert_eq!(
            reader >= complete,
            waits,
            "{flags:?}: reader at {reader}, Job complete at {complete}"
        );
    }
}

#[test]
fn a_successful_apply_shows_the_lint_warnings_that_bear_on_it() {
    let path = fixture("apply/jobs.yaml");
    let path = path.to_str().expect("UTF-8");
    let env = start("");
    let (code, out, err) = env.run(&["apply", path, "--release", "shop"]);
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
    let (code, out, err) = env.run(&["apply", path, "--release", "shop", "--progress", "json"]);
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
    let (code, out, err) = env.run(&["apply", path, "--release", "shop", "--wait-for-jobs"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        !err.contains("CS305") && !out.contains("lint warning"),
        "{out}\n{err}"
    );
}

#[test]
fn after_a_failed_first_install_the_next_run_installs_and_prunes_its_leftovers() {
    let env = start("resources:\n- {kind: Deployment, name: app, never: true}\n");
    let (code, _, _) = env.apply("shop.yaml", &["--readiness-timeout", "1s"]);
    assert_eq!(code, 1);
    assert!(env.exists("StatefulSet", "db"));
    let (code, out, err) = env.apply("hooks.yaml", &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("revision 2, status deployed"), "{out}");
    assert!(
        !env.exists("StatefulSet", "db") && !env.exists("Deployment", "app"),
        "the failed revision's objects are pruned"
    );
    assert!(env.exists("ConfigMap", "app"));
    assert!(
        env.log()
            .iter()
            .any(|e| e.kind == "Job" && e.name == "keep"),
        "pre-install hooks ran"
    );
}

#[test]
fn a_chart_directory_is_rendered_by_helm_then_applied() {
    let Some(helm) = crate::tool("helm") else {
        return;
    };
    let env = start("resources:\n- {kind: Deployment, name: db, readyAfterMs: 200}\n");
    let chart = fixture("apply/umbrella");
    let (code, out, err) = env.run(&[
        "apply",
        chart.to_str().expect("UTF-8"),
        "--helm",
        helm.to_str().expect("UTF-8"),
        "--release",
        "u",
        "-n",
        "default",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("release u applied: revision 1, status deployed"),
        "{out}"
    );
    assert!(t(&env, "apply", "Deployment", "api") >= t(&env, "ready", "Deployment", "db"));
    let (_, out, _) = env.run(&["status", "u"]);
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
    let scenario = "resources:\n- {kind: Deployment, name: cache, readyAfterMs: 100}\n- {kind: Deployment, name: db, readyAfterMs: 100}\n- {kind: Deployment, name: api, readyAfterMs: 100}\n";
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
        let env = start(scenario);
        let (code, out, err) = env.run(&[
            "apply",
            stream.to_str().expect("UTF-8"),
            "--chart",
            chart.to_str().expect("UTF-8"),
            "--release",
            "shop",
        ]);
        assert_eq!(code, 0, "{out}\n{err}");
        assert!(
            t(&env, "apply", "ConfigMap", "umbrella") >= t(&env, "ready", "Deployment", "api"),
            "sequenced either way"
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
