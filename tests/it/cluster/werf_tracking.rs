//! werf's tracking annotations deployed on the real control plane (`apply --dialect werf`): a
//! custom resource whose status no controller writes (the test writes it, as its operator
//! would) fails only once its failures exceed those allowed (`werf.io/fail-mode`,
//! `werf.io/failures-allowed-per-replica`), and one that shows no activity for
//! `werf.io/no-activity-timeout` fails naming the annotation. What a failure is follows nelm's
//! `failuresAllowed`/`noActivityTimeout` (werf/nelm `pkg/resource/metadata.go`) and kubedog's
//! counting (werf/kubedog `pkg/trackers/dyntracker/statestore/readiness_task_state.go`,
//! `pkg/tracker/generic/tracker.go`).

use std::time::Duration;

use super::{Ns, wait_until_found};

/// A CRD of the test's own (no status subresource: the Widget is created with its status),
/// created with kubectl and served before the test applies (a CRD chartseq creates itself is
/// `crds/`'s, tested elsewhere); the stream of a `Widget` not ready yet with `annotations`,
/// and a `ConfigMap` one werf weight later.
fn widgets(ns: &Ns, annotations: &str) -> (String, String) {
    let group = format!("{}.example.com", ns.name);
    let crd = format!(
        "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.{group}
spec:
  group: {group}
  scope: Namespaced
  names: {{kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {{openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}}}
"
    );
    let path = ns.file("crd.yaml", &crd);
    let (code, _, err) = ns.kubectl(&["apply", "-f", &path]);
    assert_eq!(code, 0, "{err}");
    let served = (0..600).any(|_| {
        let (code, _, _) = ns.kubectl(&["get", &format!("widgets.{group}")]);
        code == 0 || {
            std::thread::sleep(Duration::from_millis(50));
            false
        }
    });
    assert!(served, "the Widget type is served");
    let text = format!(
        "---
# Source: widgets/templates/widget.yaml
apiVersion: {group}/v1
kind: Widget
metadata:
  name: w
  annotations:
    werf.io/weight: \"0\"{annotations}
spec: {{size: 1}}
status:
  conditions: [{{type: Ready, status: \"False\", reason: Provisioning}}]
---
# Source: widgets/templates/after.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: after
  annotations:
    werf.io/weight: \"1\"
data: {{uses: w}}
"
    );
    (group, text)
}

/// Plays the Widget's operator: once it exists, writes it `Stalled` (a failure, by kstatus),
/// then `Ready` 1.5 s later.
fn stall_then_recover(ns: &Ns, group: &str) -> std::thread::JoinHandle<()> {
    let resource = format!("widgets.{group}");
    let run = ns.kubectl_for_operator();
    std::thread::spawn(move || {
        wait_until_found(&run, &[&resource, "w"]);
        for (pause, condition) in [
            (
                300,
                r#"{"type":"Stalled","status":"True","reason":"Broken","message":"disk full"}"#,
            ),
            (1500, r#"{"type":"Ready","status":"True","reason":"Done"}"#),
        ] {
            std::thread::sleep(Duration::from_millis(pause));
            let patch = format!(r#"{{"status":{{"conditions":[{condition}]}}}}"#);
            // The Widget is gone once a failed run is over: nothing left to write.
            let _ = run(&["patch", &resource, "w", "--type=merge", "-p", &patch]);
        }
    })
}

fn apply(ns: &Ns, path: &str) -> (i32, String, String) {
    ns.chartseq(&[
        "apply",
        path,
        "--dialect",
        "werf",
        "--release",
        "widgets",
        "--timeout",
        "2m",
    ])
}

/// Stalls once then recovers: with one failure allowed, or with
/// `IgnoreAndContinueDeployProcess`, the release goes on once the Widget is ready; with none
/// allowed (a custom resource's default) or `HopeUntilEndOfDeployProcess` (nelm's tracker
/// reads it as `FailWholeDeployProcessImmediately`), the first failure fails it, naming the
/// annotation, and the next weight never starts.
#[test]
fn werf_fails_a_resource_only_once_its_failures_exceed_those_allowed() {
    for (case, annotations, deployed) in [
        (
            "werf-allowed",
            "\n    werf.io/failures-allowed-per-replica: \"1\"",
            true,
        ),
        (
            "werf-ignore",
            "\n    werf.io/fail-mode: IgnoreAndContinueDeployProcess",
            true,
        ),
        ("werf-none-allowed", "", false),
        (
            "werf-hope",
            "\n    werf.io/fail-mode: HopeUntilEndOfDeployProcess",
            false,
        ),
    ] {
        let Some(ns) = Ns::new(case) else {
            return;
        };
        let (group, text) = widgets(&ns, annotations);
        ns.owns("customresourcedefinition", &format!("widgets.{group}"));
        let path = ns.file("widgets.yaml", &text);
        let operator = stall_then_recover(&ns, &group);
        let (code, out, err) = apply(&ns, &path);
        operator.join().expect("the operator thread");
        if deployed {
            assert_eq!(code, 0, "{case}: {out}\n{err}");
            assert!(out.contains("status deployed"), "{case}: {out}");
            // The operator's last write (Ready) came before the next weight.
            let audit = ns.audit();
            let ready = audit
                .events
                .iter()
                .filter(|e| e.resource == "widgets" && e.name == "w" && e.verb == "patch")
                .filter(|e| (200..300).contains(&e.code))
                .map(|e| e.received.clone())
                .next_back()
                .expect("the Widget's writes");
            assert!(
                audit.created("ConfigMap", "after").received > ready,
                "{case}: {audit}"
            );
        } else {
            assert_eq!(code, 1, "{case}: {out}\n{err}");
            assert!(
                err.contains("Widget/w")
                    && err.contains("disk full")
                    && err.contains("failed 1 time, more than the 0 allowed (werf.io/failures-allowed-per-replica"),
                "{case}: {err}"
            );
            assert!(ns.get("ConfigMap", "after").is_none(), "{case}");
        }
    }
}

/// No change to the Widget for its `werf.io/no-activity-timeout`: one failure, more than the
/// none allowed; the message names the annotation, long before `--readiness-timeout`.
#[test]
fn werf_fails_a_resource_without_activity_for_its_no_activity_timeout() {
    let Some(ns) = Ns::new("werf-no-activity") else {
        return;
    };
    let (group, text) = widgets(&ns, "\n    werf.io/no-activity-timeout: 2s");
    ns.owns("customresourcedefinition", &format!("widgets.{group}"));
    let path = ns.file("widgets.yaml", &text);
    let started = std::time::Instant::now();
    let (code, out, err) = apply(&ns, &path);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("Widget/w")
            && err.contains("no activity for 2s (werf.io/no-activity-timeout); failed 1 time"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(50), "{err}");
    assert!(ns.get("ConfigMap", "after").is_none());
    // The revision records the tracking it ran with, and reads back.
    let status = super::ok(ns.chartseq(&["status", "widgets"]));
    assert!(status.contains("STATUS: failed"), "{status}");
    let (_, release) = ns
        .stored_release("Secret", "widgets", 1)
        .expect("the revision is stored");
    let waits = release["chartseq"]["waits"].to_string();
    assert!(
        waits.contains(r#""wait":"tracked""#) && waits.contains(r#""no_activity_ms":2000"#),
        "{waits}"
    );
}
