//! `plan --uninstall` in a dialect whose tool deletes in an order of its own: KOTS's deletion
//! phases and kind deletion order, kapp's delete rules; in text and JSON.

use crate::{chartseq, run};

/// Runs `chartseq plan --uninstall STREAM --dialect DIALECT [ARGS]`.
fn uninstall(dialect: &str, stream: &str, args: &[&str]) -> (i32, String, String) {
    run(chartseq()
        .args(["plan", "--uninstall", stream, "--dialect", dialect])
        .args(args))
}

/// Each JSON step as (group, `Kind/name` of its resources, its `after`).
fn json_steps(json: &str) -> Vec<(String, Vec<String>, Vec<u64>)> {
    let parsed: serde_json::Value = serde_json::from_str(json).expect("plan json parses");
    assert_eq!(parsed["order"], "uninstall", "{json}");
    parsed["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            let resources = s["resources"]
                .as_array()
                .expect("resources")
                .iter()
                .map(|r| {
                    format!(
                        "{}/{}",
                        r["kind"].as_str().unwrap_or(""),
                        r["name"].as_str().unwrap_or("")
                    )
                })
                .collect();
            let after = s["after"]
                .as_array()
                .expect("after")
                .iter()
                .filter_map(serde_json::Value::as_u64)
                .collect();
            (
                s["group"].as_str().unwrap_or("").to_owned(),
                resources,
                after,
            )
        })
        .collect()
}

/// KOTS's documented example (replicated-docs `orchestrating-resource-deployment.md`: the CRD
/// with `kots.io/deletion-phase: "1"`) deleted as KOTS's `groupAndSortResourcesForDeletion`
/// orders it: phase 0 first, custom resources and the webhook configuration (kinds KOTS does
/// not list) first, then `KindDeletionOrder` (Service right after the ingresses), one object
/// per step; the CRD last, in phase 1.
#[test]
fn kots_uninstall_follows_deletion_phases_and_kind_order() {
    let stream = "fixtures/dialects/kots/documented.yaml";
    let (code, out, err) = uninstall("kots", stream, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Uninstall order (KOTS's own):"), "{out}");
    let expected = [
        ("deletion-phase=0", "MyResource/my-resource"),
        ("deletion-phase=0", "MyResource/ready"),
        (
            "deletion-phase=0",
            "ValidatingWebhookConfiguration/validate",
        ),
        ("deletion-phase=0", "Service/my-statefulset"),
        ("deletion-phase=0", "Job/migrate"),
        ("deletion-phase=0", "StatefulSet/my-statefulset"),
        ("deletion-phase=0", "Deployment/api"),
        ("deletion-phase=0", "ConfigMap/config"),
        ("deletion-phase=0", "ConfigMap/settings"),
        ("deletion-phase=0", "Secret/db-credentials"),
        (
            "deletion-phase=1",
            "CustomResourceDefinition/myresources.example.com",
        ),
    ];
    for (i, (group, resource)) in expected.iter().enumerate() {
        let line = format!("  {}. app group {group}: {resource}\n", i + 1);
        assert!(out.contains(&line), "{line:?} in\n{out}");
    }
    let (code, json, err) = uninstall("kots", stream, &["--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let steps = json_steps(&json);
    let got: Vec<(String, String)> = steps
        .iter()
        .map(|(g, r, _)| (g.clone(), r.join(", ")))
        .collect();
    let want: Vec<(String, String)> = expected
        .iter()
        .map(|(g, r)| ((*g).to_owned(), (*r).to_owned()))
        .collect();
    assert_eq!(got, want);
    // Each object is deleted and waited gone before the next.
    for (i, (_, _, after)) in steps.iter().enumerate() {
        let want: Vec<u64> = i.checked_sub(1).map(|p| p as u64).into_iter().collect();
        assert_eq!(after, &want, "step {i}");
    }
}

/// KOTS never waits for a `PersistentVolumeClaim` to be gone (`shouldWaitForResourceDeletion`):
/// the claim's step says so, and the step after it is deleted after the step before it.
#[test]
fn kots_does_not_wait_for_a_claim_to_be_deleted() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("kots.yaml");
    std::fs::write(
        &path,
        "---
# Source: app/templates/pvc.yaml
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  annotations:
    kots.io/deletion-phase: \"-1\"
---
# Source: app/templates/deploy.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: db
---
# Source: app/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  annotations:
    kots.io/deletion-phase: \"-1\"
",
    )
    .expect("written");
    let stream = path.to_str().expect("UTF-8");
    let (code, out, err) = uninstall("kots", stream, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("  1. app group deletion-phase=-1, not waited: PersistentVolumeClaim/data\n")
            && out.contains("  2. app group deletion-phase=-1: ConfigMap/settings\n")
            && out.contains("  3. app group deletion-phase=0: Deployment/db\n"),
        "{out}"
    );
    let (code, json, err) = uninstall("kots", stream, &["--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let after: Vec<Vec<u64>> = json_steps(&json).into_iter().map(|s| s.2).collect();
    assert_eq!(after, [vec![], vec![], vec![1]]);
}

/// kapp's `TestChangeGraphWithDeletes` (carvel-dev/kapp @ a89576c
/// `pkg/kapp/diffgraph/change_graph_test.go`): Job/migrations after Job/app-health-check,
/// the `apps.big.co/deployment` group after Job/migrations.
#[test]
fn kapp_uninstall_follows_delete_rules() {
    let stream = "fixtures/dialects/kapp/deletes.yaml";
    let (code, out, err) = uninstall("kapp", stream, &[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Uninstall order (kapp's own):")
            && out.contains("  3. app group ungrouped#2: Job/app-health-check\n")
            && out.contains("  4. app group apps.big.co/db-migrations: Job/migrations\n")
            && out.contains(
                "  5. app group apps.big.co/deployment: Service/app, Ingress/app, Deployment/app\n"
            ),
        "{out}"
    );
    let (code, json, err) = uninstall("kapp", stream, &["--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let steps = json_steps(&json);
    let by_group = |g: &str| {
        steps
            .iter()
            .position(|s| s.0 == g)
            .unwrap_or_else(|| panic!("{g} in {json}"))
    };
    let health = by_group("ungrouped#2") as u64;
    let migrations = by_group("apps.big.co/db-migrations");
    let deployment = by_group("apps.big.co/deployment");
    assert_eq!(steps[migrations].2, [health]);
    assert_eq!(steps[deployment].2, [migrations as u64]);
    assert_eq!(
        steps[deployment].1,
        ["Service/app", "Ingress/app", "Deployment/app"]
    );
}

/// kapp refuses to delete an app whose required delete rules form a cycle; the plan says
/// which, with each rule's line, and exits 1.
#[test]
fn kapp_uninstall_refuses_a_cycle_of_delete_rules() {
    let stream = "fixtures/dialects/kapp/delete-cycle.yaml";
    let (code, _, err) = run(chartseq().args(["plan", stream, "--dialect", "kapp"]));
    assert_eq!(code, 0, "the install plans: {err}");
    for format in ["text", "json"] {
        let (code, out, err) = uninstall("kapp", stream, &["--format", format]);
        assert_eq!(code, 1, "{format}: {out}");
        assert!(
            err.contains("CS605")
                && err.contains("Job/job1 -> Job/job2 -> Job/job1")
                && err.contains("delete-cycle.yaml:22:31"),
            "{format}: {err}"
        );
    }
}
