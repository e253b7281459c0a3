//! `chartseq readiness` where Helm's behaviour depends on more than the object's status: hooks
//! (their readiness annotations are ignored, kstatus decides as Helm's hook readers do) and the
//! clock (a Pending Pod that cannot be scheduled fails 15 s after its creation).

use crate::{chartseq, run};

fn readiness(args: &[&str]) -> (i32, String, String) {
    run(chartseq().arg("readiness").args(args))
}

fn objects(stdout: &str) -> Vec<serde_json::Value> {
    let doc: serde_json::Value = serde_json::from_str(stdout).expect("valid JSON");
    doc["objects"].as_array().expect("objects").clone()
}

#[test]
fn a_hook_is_judged_by_kstatus_whatever_its_readiness_annotations() {
    let (code, stdout, stderr) = readiness(&["fixtures/readiness/hooks.yaml", "--format", "json"]);
    assert_eq!(code, 1, "not every hook is ready: {stderr}");
    let objects = objects(&stdout);
    assert_eq!(objects.len(), 5);
    for o in &objects {
        assert_eq!(o["engine"], "kstatus", "{o}");
        assert_eq!(o["expressions"], serde_json::json!([]), "{o}");
    }
    let status = |name: &str| {
        objects
            .iter()
            .find(|o| o["resource"]["name"] == name)
            .map(|o| o["status"].as_str().expect("status").to_owned())
            .expect("judged")
    };
    // Custom expressions would call this running Job ready ({.active} == 1): a hook Job must
    // complete.
    assert_eq!(status("hook-job-running"), "in-progress");
    // ... and this complete one failed ({.succeeded} == 1 is its failure expression).
    assert_eq!(status("hook-job-complete"), "ready");
    assert_eq!(status("hook-pod-running"), "in-progress");
    assert_eq!(status("hook-pod-failed"), "failed");
    // Malformed readiness annotations on a hook are ignored, not an error.
    assert_eq!(status("hook-config-malformed-readiness"), "ready");
    assert!(
        stderr.contains("Job/hook-job-running: is a hook (helm.sh/hook)")
            && stderr.contains("kstatus decides"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("hook-pod-failed"),
        "no warning without expressions: {stderr}"
    );
}

#[test]
fn expression_flags_do_not_apply_to_hooks() {
    let (code, stdout, stderr) = readiness(&[
        "fixtures/readiness/hooks.yaml",
        "--success",
        "{.active} == 1",
        "--failure",
        "{.failed} >= 1",
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stdout.contains(
            "Job/hook-job-running: in-progress [kstatus] Job: not complete yet, 0 of 1 succeeded"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("[custom]"), "{stdout}");
    assert!(
        stderr.contains("Pod/hook-pod-failed: is a hook"),
        "the flags were given, so every hook says they are ignored: {stderr}"
    );
}

const UNSCHEDULABLE: &str = "apiVersion: v1
kind: Pod
metadata:
  name: web
  creationTimestamp: CREATED
status:
  phase: Pending
  conditions:
    - type: PodScheduled
      status: \"False\"
      reason: Unschedulable
      message: 0/1 nodes are available
";

fn pod_created_at(dir: &std::path::Path, created: &str) -> String {
    let path = dir.join(format!("pod-{}.yaml", created.replace(':', "-")));
    let text = if created.is_empty() {
        UNSCHEDULABLE.replace("  creationTimestamp: CREATED\n", "")
    } else {
        UNSCHEDULABLE.replace("CREATED", created)
    };
    std::fs::write(&path, text).expect("write");
    path.to_str().expect("UTF-8").to_owned()
}

#[test]
fn now_decides_when_an_unschedulable_pod_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pod = pod_created_at(dir.path(), "2025-03-01T12:00:00Z");
    let judge = |now: &str| {
        let (code, stdout, stderr) = readiness(&[&pod, "--now", now]);
        assert!(stderr.is_empty(), "{stderr}");
        (code, stdout)
    };
    let (code, out) = judge("2025-03-01T12:00:14Z");
    assert_eq!(code, 1);
    assert!(
        out.starts_with("Pod/web: in-progress [kstatus] Pod: Pod has not been scheduled"),
        "{out}"
    );
    for later in [
        "2025-03-01T12:00:15Z",
        "2025-03-01T13:00:15+01:00",
        "2026-01-01T00:00:00Z",
    ] {
        let (code, out) = judge(later);
        assert_eq!(code, 1);
        assert!(
            out.starts_with(
                "Pod/web: failed [kstatus] Pod: Pod could not be scheduled (Unschedulable: 0/1 nodes are available;"
            ),
            "{later}: {out}"
        );
    }
    // No creationTimestamp counts as long ago.
    let untimed = pod_created_at(dir.path(), "");
    let (_, out, _) = readiness(&[&untimed, "--now", "2025-03-01T12:00:00Z"]);
    assert!(out.contains("failed [kstatus]"), "{out}");
}

#[test]
fn without_now_the_clock_decides() {
    let dir = tempfile::tempdir().expect("tempdir");
    let future = pod_created_at(dir.path(), "2999-01-01T00:00:00Z");
    let (_, out, _) = readiness(&[&future]);
    assert!(out.contains("in-progress [kstatus]"), "{out}");
    let past = pod_created_at(dir.path(), "2000-01-01T00:00:00Z");
    let (_, out, _) = readiness(&[&past]);
    assert!(out.contains("failed [kstatus]"), "{out}");
}

#[test]
fn now_must_be_rfc3339() {
    let (code, _, stderr) = readiness(&[
        "fixtures/readiness/hooks.yaml",
        "--now",
        "2025-03-01 12:00:00",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--now") && stderr.contains("RFC 3339"),
        "{stderr}"
    );
}
