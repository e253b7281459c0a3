//! Uninstalling a release applied in a dialect whose tool deletes in an order of its own, on
//! the real control plane: the deletions in the tool's order, on the API server's clock.

use super::dialects::{config_map, stream};
use super::{Ns, ok};

/// KOTS deletes deletion phases in turn and never waits for a `PersistentVolumeClaim` to be
/// gone (`pkg/operator/client/delete.go` `shouldWaitForResourceDeletion`: "blocking on PVC
/// delete will create a deadlock if it's used by a pod that has not been deleted yet"). Here
/// the claim is in phase -1 and the Deployment whose pod uses it in phase 0: the claim cannot
/// go (its `pvc-protection` finalizer) until that pod is gone, so waiting for it before the
/// next object would never end. Uninstall deletes the claim, goes on with the `ConfigMap` and
/// the Deployment, and only then waits for the claim, which goes with the pod.
#[test]
fn kots_uninstall_does_not_wait_for_a_claim_before_deleting_its_pod() {
    let Some(ns) = Ns::new("kots-uninstall") else {
        return;
    };
    ns.volume_for("data");
    let text = stream(&[
        (
            "pvc.yaml",
            "apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  annotations:
    kots.io/deletion-phase: \"-1\"
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: \"\"
  resources: {requests: {storage: 1Gi}}
"
            .to_owned(),
        ),
        (
            "db.yaml",
            "apiVersion: apps/v1
kind: Deployment
metadata:
  name: db
  annotations:
    kots.io/wait-for-ready: \"true\"
spec:
  selector: {matchLabels: {app: db}}
  template:
    metadata:
      labels: {app: db}
      annotations: {pod-ready.stage.kwok.x-k8s.io/delay: 1s}
    spec:
      containers: [{name: c, image: db:1}]
      volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
"
            .to_owned(),
        ),
        (
            "settings.yaml",
            config_map("settings", "\n    kots.io/deletion-phase: \"-1\""),
        ),
    ]);
    let path = ns.file("stream.yaml", &text);
    let out = ok(ns.chartseq(&[
        "apply",
        &path,
        "--dialect",
        "kots",
        "--release",
        "shop",
        "--timeout",
        "2m",
    ]));
    assert!(out.contains("status deployed"), "{out}");
    // The pod that uses the claim is scheduled: the claim is protected while it lives.
    let pods = ok(ns.kubectl(&[
        "get",
        "pods",
        "-l",
        "app=db",
        "-o",
        "jsonpath={.items[*].spec.nodeName}",
    ]));
    assert!(!pods.trim().is_empty(), "the pod is scheduled: {pods:?}");

    let out = ok(ns.chartseq(&["uninstall", "shop", "--timeout", "90s"]));
    assert!(
        ns.get("pvc", "data").is_none()
            && ns.get("deployment", "db").is_none()
            && ns.get("configmap", "settings").is_none(),
        "{out}"
    );
    let deletions: Vec<String> = ns
        .audit()
        .deletions()
        .into_iter()
        .filter(|d| !d.starts_with("secrets/") && !d.starts_with("persistentvolumes/"))
        .collect();
    assert_eq!(
        deletions,
        [
            "persistentvolumeclaims/data",
            "configmaps/settings",
            "deployments/db"
        ],
        "{out}"
    );
}

/// kapp deletes by its delete rules (`delete before deleting <group>`, as kapp's own
/// `TestChangeGraphWithDeletes` writes them): here the reverse of what the exact reverse of
/// the install would do, and an object orphaned by `kapp.k14s.io/delete-strategy: orphan`
/// stays.
#[test]
fn kapp_uninstall_follows_delete_rules_and_leaves_orphans() {
    let Some(ns) = Ns::new("kapp-uninstall") else {
        return;
    };
    let text = stream(&[
        (
            "health.yaml",
            config_map(
                "health",
                "\n    kapp.k14s.io/change-rule: delete before deleting apps.big.co/db",
            ),
        ),
        (
            "db.yaml",
            config_map(
                "db",
                "\n    kapp.k14s.io/change-group: apps.big.co/db\n    kapp.k14s.io/change-rule: upsert after upserting apps.big.co/health",
            ),
        ),
        (
            "data.yaml",
            config_map(
                "data",
                "\n    kapp.k14s.io/change-group: apps.big.co/health\n    kapp.k14s.io/delete-strategy: orphan",
            ),
        ),
    ]);
    let path = ns.file("stream.yaml", &text);
    let out = ok(ns.chartseq(&[
        "apply",
        &path,
        "--dialect",
        "kapp",
        "--release",
        "shop",
        "--timeout",
        "2m",
    ]));
    assert!(out.contains("status deployed"), "{out}");
    let out = ok(ns.chartseq(&["uninstall", "shop", "--timeout", "1m"]));
    assert!(ns.get("configmap", "data").is_some(), "orphaned: {out}");
    let deletions: Vec<String> = ns
        .audit()
        .deletions()
        .into_iter()
        .filter(|d| d.starts_with("configmaps/"))
        .collect();
    assert_eq!(deletions, ["configmaps/health", "configmaps/db"], "{out}");
}
