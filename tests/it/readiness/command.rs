//! `chartseq readiness` end to end: formats, exit codes, overrides, errors.

use std::io::Write;
use std::process::Stdio;

use crate::{chartseq, fixture, run, snapshot_settings};

fn readiness(args: &[&str]) -> (i32, String, String) {
    run(chartseq().arg("readiness").args(args))
}

#[test]
fn text_report_names_engine_reason_and_observed_values() {
    let (code, stdout, stderr) = readiness(&["fixtures/readiness/custom.yaml"]);
    assert_eq!(code, 1, "not every object is ready: {stderr}");
    assert!(
        stdout.contains("Job/migrate-running: in-progress [custom]"),
        "{stdout}"
    );
    assert!(
        stdout.contains("{.succeeded} == 1 → observed 0 (not met)"),
        "{stdout}"
    );
    assert!(
        stderr.contains("Job/one-sided: only success expressions are set"),
        "{stderr}"
    );
    snapshot_settings().bind(|| insta::assert_snapshot!("readiness_custom_text", stdout));
}

#[test]
fn json_report_follows_the_documented_shape() {
    let (code, stdout, _) = readiness(&["fixtures/readiness/custom.yaml", "--format", "json"]);
    assert_eq!(code, 1);
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("valid JSON");
    assert_eq!(doc["version"], 1);
    let first = &doc["objects"][0];
    assert_eq!(first["resource"]["kind"], "Job");
    assert_eq!(first["resource"]["name"], "migrate-running");
    assert_eq!(first["status"], "in-progress");
    assert_eq!(first["engine"], "custom");
    assert_eq!(first["expressions"][1]["expr"], "{.succeeded} == 1");
    assert_eq!(first["expressions"][1]["kind"], "success");
    assert_eq!(first["expressions"][1]["observed"], "0");
    assert_eq!(first["expressions"][1]["met"], false);
    assert_eq!(first["expressions"][0]["observed"], serde_json::Value::Null);
    snapshot_settings().bind(|| insta::assert_snapshot!("readiness_custom_json", stdout));
}

#[test]
fn all_ready_exits_zero() {
    let (code, stdout, stderr) = readiness(&[
        "fixtures/readiness/kstatus/others.yaml",
        "--success",
        "{.phase} == Bound",
        "--failure",
        "{.phase} == Lost",
    ]);
    // The flags replace the annotations on every object: only the bound claim is ready.
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stdout.contains("PersistentVolumeClaim/data-bound: ready [custom]"),
        "{stdout}"
    );
    assert!(
        stdout.contains("ConfigMap/settings: in-progress [custom]"),
        "{stdout}"
    );

    let (code, stdout, stderr) = readiness(&["fixtures/readiness/ready.yaml"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_eq!(stdout.matches(": ready [").count(), 2, "{stdout}");
}

#[test]
fn flags_replace_one_side_each() {
    // The object's own failure annotation stays; --success replaces its success side.
    let (code, stdout, _) = readiness(&[
        "fixtures/readiness/custom.yaml",
        "--success",
        "{.active} == 1",
    ]);
    assert_eq!(code, 1);
    assert!(
        stdout
            .contains("Job/migrate-running: ready [custom] success condition met: {.active} == 1"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Job/migrate-both: failed [custom]"),
        "{stdout}"
    );
}

#[test]
fn wait_for_jobs_counts_only_complete_jobs() {
    let (_, plain, _) = readiness(&["fixtures/readiness/kstatus/wait-for-jobs.yaml"]);
    assert!(
        plain.contains("Job/job-started: ready [kstatus]"),
        "{plain}"
    );
    let (_, waiting, _) = readiness(&[
        "fixtures/readiness/kstatus/wait-for-jobs.yaml",
        "--wait-for-jobs",
    ]);
    assert!(
        waiting.contains("Job/job-started: in-progress [kstatus] Job: not complete yet"),
        "{waiting}"
    );
}

#[test]
fn reads_a_list_from_stdin() {
    let list = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n- apiVersion: v1\n  kind: PersistentVolumeClaim\n  metadata: {name: b, namespace: ns}\n  status: {phase: Pending}\n---\napiVersion: v1\nkind: PodList\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n  status: {phase: Succeeded}\n";
    let mut child = chartseq()
        .args(["readiness", "-", "--format", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(list.as_bytes())
        .expect("writes");
    let output = child.wait_with_output().expect("runs");
    assert_eq!(output.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let objects = doc["objects"].as_array().expect("objects");
    assert_eq!(objects.len(), 3);
    assert_eq!(objects[2]["resource"]["kind"], "Pod");
    assert_eq!(objects[2]["status"], "ready");
    assert_eq!(objects[0]["status"], "ready");
    assert_eq!(objects[1]["resource"]["namespace"], "ns");
    assert_eq!(objects[1]["status"], "in-progress");
}

#[test]
fn invalid_expression_gets_a_caret_and_exit_2() {
    let (code, stdout, stderr) = readiness(&[
        "fixtures/readiness/custom.yaml",
        "--failure",
        "{.failed} >= 1",
        "--failure",
        "{.conditions[?(@.type==\"Failed\" && @.status==\"True\")]} == x",
    ]);
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    snapshot_settings().bind(|| insta::assert_snapshot!("readiness_invalid_flag", stderr));

    let (code, _, stderr) = readiness(&["fixtures/readiness/invalid.yaml"]);
    assert_eq!(code, 2);
    snapshot_settings().bind(|| insta::assert_snapshot!("readiness_invalid_annotation", stderr));
}

#[test]
fn unreadable_input_is_a_tool_failure() {
    let (code, _, stderr) = readiness(&["fixtures/readiness/does-not-exist.yaml"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("does-not-exist.yaml"), "{stderr}");
    let (code, _, stderr) = readiness(&[fixture("readiness/kstatus").to_str().expect("utf-8")]);
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn kstatus_reasons_read_well() {
    let mut all = String::new();
    for file in ["workloads", "pods-jobs", "others"] {
        // The instant the tables are judged at: the Pod scheduling rule reads the clock.
        let (code, stdout, stderr) = readiness(&[
            &format!("fixtures/readiness/kstatus/{file}.yaml"),
            "--now",
            super::kstatus_table::NOW,
        ]);
        assert_eq!(code, 1, "{file}: {stderr}");
        all.push_str(&stdout);
    }
    assert!(all.contains(
        "Deployment/web-rolling: in-progress [kstatus] Deployment: 1 of 3 replicas available"
    ));
    snapshot_settings().bind(|| insta::assert_snapshot!("readiness_kstatus_text", all));
}
