//! Data safety on the real control plane: a release never writes or deletes what it does not
//! own (Helm's ownership marks), keeps `helm.sh/resource-policy: keep` objects, and refuses
//! before applying anything. Every test checks the objects and, from the audit log, the
//! requests chartseq made.

use super::{Ns, ok};

/// A chart's rendered stream: a `ConfigMap` whose name another team also uses, a data volume
/// the chart keeps, and the app's own `ConfigMap`.
const SHOP: &str = "---
# Source: shop/templates/settings.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: shared-settings
data:
  mode: shop
---
# Source: shop/templates/data.yaml
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  annotations:
    helm.sh/resource-policy: keep
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: \"\"
  resources: {requests: {storage: 1Gi}}
---
# Source: shop/templates/app.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
data:
  a: \"1\"
";

const FOREIGN: &str = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"shared-settings\"},\"data\":{\"owner\":\"team-b\"}}";

fn without(stream: &str, needle: &str) -> String {
    stream
        .split("---\n")
        .filter(|d| !d.contains(needle))
        .collect::<Vec<_>>()
        .join("---\n")
}

#[test]
fn a_foreign_object_is_refused_before_anything_is_applied_and_never_touched() {
    let Some(ns) = Ns::new("foreign") else { return };
    ns.create_as("kubectl", FOREIGN);
    let before = ns.get("configmap", "shared-settings").expect("created");
    let stream = ns.file("shop.yaml", SHOP);

    let (code, out, err) = ns.apply("shop", &stream, &[]);
    assert_eq!(code, 1, "{out}\n{err}");
    let n = &ns.name;
    assert!(
        err.contains(&format!("1 object(s) already exist and do not belong to release shop (namespace {n}); nothing was applied:"))
            && err.contains(&format!("ConfigMap/shared-settings (namespace {n}): not managed by Helm"))
            && err.contains("--take-ownership"),
        "{err}"
    );
    // Nothing of the release reached the server: no object, no release record.
    assert_eq!(ns.audit().chartseq_changes(), Vec::<String>::new());
    assert!(ns.get("configmap", "app").is_none() && ns.get("pvc", "data").is_none());
    let (code, _, err) = ns.chartseq(&["history", "shop"]);
    assert_eq!(code, 2, "no release was recorded: {err}");

    // There is nothing to uninstall, and the other team's ConfigMap is as it was.
    let (code, _, err) = ns.chartseq(&["uninstall", "shop"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not found"), "{err}");
    assert_eq!(ns.get("configmap", "shared-settings"), Some(before));
    assert_eq!(
        ns.audit().count("delete", "ConfigMap", "shared-settings"),
        0
    );
}

#[test]
fn take_ownership_adopts_deliberately() {
    let Some(ns) = Ns::new("adopt") else { return };
    ns.volume_for("data");
    ns.create_as("kubectl", FOREIGN);
    let stream = ns.file("shop.yaml", SHOP);
    let (code, out, err) = ns.apply("shop", &stream, &["--take-ownership"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        err.contains(&format!("--take-ownership: adopting ConfigMap/shared-settings (namespace {}) (not managed by Helm)", ns.name)),
        "{err}"
    );
    let adopted = ns.get("configmap", "shared-settings").expect("still there");
    assert_eq!(
        adopted["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "Helm"
    );
    assert_eq!(
        adopted["metadata"]["annotations"]["meta.helm.sh/release-name"],
        "shop"
    );
    // The other team's field stays (their field manager still owns it); the chart's is added.
    assert_eq!(adopted["data"]["owner"], "team-b");
    assert_eq!(adopted["data"]["mode"], "shop");
    // Adopted, it is the release's: uninstall removes it.
    ok(ns.chartseq(&["uninstall", "shop"]));
    assert!(ns.get("configmap", "shared-settings").is_none());
}

#[test]
fn keep_objects_survive_uninstall_and_pruning_and_are_listed() {
    let Some(ns) = Ns::new("keep") else { return };
    ns.volume_for("data");
    let n = &ns.name;
    let stream = ns.file("shop.yaml", SHOP);
    ok(ns.apply("shop", &stream, &[]));
    let pvc = ns.get("pvc", "data").expect("applied");
    assert_eq!(
        pvc["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "Helm"
    );
    assert_eq!(
        pvc["metadata"]["annotations"]["meta.helm.sh/release-namespace"],
        n.as_str()
    );

    // Upgrade pruning: the volume left the chart but is kept.
    let v2 = ns.file(
        "shop-v2.yaml",
        &without(SHOP, "kind: PersistentVolumeClaim"),
    );
    let out = ok(ns.apply("shop", &v2, &[]));
    assert!(ns.get("pvc", "data").is_some());
    assert!(
        out.contains(&format!(
            "kept (helm.sh/resource-policy: keep):\n  PersistentVolumeClaim/data (namespace {n})"
        )),
        "{out}"
    );

    // Uninstall from the first revision's objects again: the volume is kept, the rest goes.
    ok(ns.apply("shop", &stream, &[]));
    let out = ok(ns.chartseq(&["uninstall", "shop"]));
    assert!(
        out.contains(&format!(
            "kept (helm.sh/resource-policy: keep):\n  PersistentVolumeClaim/data (namespace {n})"
        )),
        "{out}"
    );
    assert!(ns.get("pvc", "data").is_some());
    assert!(
        ns.get("configmap", "app").is_none() && ns.get("configmap", "shared-settings").is_none()
    );
    assert_eq!(
        ns.audit().count("delete", "PersistentVolumeClaim", "data"),
        0
    );
}

#[test]
fn pruning_and_uninstall_leave_an_object_another_release_adopted() {
    let Some(ns) = Ns::new("adopted") else { return };
    ns.volume_for("data");
    let n = &ns.name;
    let stream = ns.file("shop.yaml", SHOP);
    ok(ns.apply("shop", &stream, &[]));

    // Another release renders the same ConfigMap: refused, as it is shop's.
    let other = ns.file(
        "other.yaml",
        "---\n# Source: other/templates/app.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  a: \"1\"\n  b: other\n",
    );
    let (code, _, err) = ns.apply("other", &other, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(&format!(
            "ConfigMap/app (namespace {n}): owned by release shop in namespace {n}"
        )),
        "{err}"
    );
    // Adopted deliberately, it is other's now.
    ok(ns.apply("other", &other, &["--take-ownership"]));

    // shop's next revision no longer renders it: pruning leaves it and says why.
    let v2 = ns.file("shop-v2.yaml", &without(SHOP, "name: app"));
    let deletes_before = ns.audit().count("delete", "ConfigMap", "app");
    let out = ok(ns.apply("shop", &v2, &[]));
    assert!(
        out.contains(&format!("left in place, not owned by this release:\n  ConfigMap/app (namespace {n}): owned by release other in namespace {n}")),
        "{out}"
    );
    // shop's uninstall does not touch it either.
    ok(ns.chartseq(&["uninstall", "shop"]));
    let app = ns.get("configmap", "app").expect("other's ConfigMap stays");
    assert_eq!(app["data"]["b"], "other");
    assert_eq!(
        app["metadata"]["annotations"]["meta.helm.sh/release-name"],
        "other"
    );
    assert_eq!(
        ns.audit().count("delete", "ConfigMap", "app"),
        deletes_before
    );
}

#[test]
fn uninstall_leaves_an_object_someone_replaced() {
    let Some(ns) = Ns::new("replaced") else {
        return;
    };
    ns.volume_for("data");
    let stream = ns.file("shop.yaml", SHOP);
    ok(ns.apply("shop", &stream, &[]));
    // Someone deletes the release's ConfigMap and creates their own of the same name.
    ns.delete("configmap", "app");
    ns.create_as(
        "kubectl",
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"app\"},\"data\":{\"mine\":\"yes\"}}",
    );
    let out = ok(ns.chartseq(&["uninstall", "shop"]));
    assert!(
        out.contains(&format!(
            "  ConfigMap/app (namespace {}): not managed by Helm",
            ns.name
        )),
        "{out}"
    );
    assert_eq!(
        ns.get("configmap", "app").expect("kept")["data"]["mine"],
        "yes"
    );
    // Only the test's own kubectl deleted it, once.
    assert_eq!(ns.audit().count("delete", "ConfigMap", "app"), 1);
}

/// A `ClusterRole` named `reader-NAMESPACE` and the app's `ConfigMap`.
fn reader_stream(reader: &str) -> String {
    format!(
        "---
# Source: shop/templates/reader.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {reader}
rules:
- {{apiGroups: [\"\"], resources: [configmaps], verbs: [get]}}
---
# Source: shop/templates/app.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
data: {{a: \"1\"}}
"
    )
}

/// The same role, created by another client. Its rule is the chart's: the real server stores
/// an empty `rules: []` as `null`, so an adoption applying `[]` over another manager's empty
/// list conflicts, as it does for helm 4 (`conflict with "kubectl": .rules`).
fn foreign_role(name: &str) -> String {
    format!(
        r#"{{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{{"name":"{name}"}},"rules":[{{"apiGroups":[""],"resources":["configmaps"],"verbs":["get"]}}]}}"#
    )
}

#[test]
fn a_cluster_scoped_object_is_named_without_a_namespace() {
    let Some(ns) = Ns::new("scoped") else { return };
    let reader = ns.cluster_name("clusterrole", "reader");
    let target = ns.cluster_name("namespace", "k3");
    ns.create_as("kubectl", &foreign_role(&reader));
    let stream = ns.file("reader.yaml", &reader_stream(&reader));
    let run = |extra: &[&str]| {
        let mut args = vec!["apply", &stream, "--release", "shop"];
        args.extend_from_slice(extra);
        args.push("--create-namespace");
        // The release goes to a namespace it creates.
        args.extend(["-n", &target, "--kubeconfig"]);
        crate::run(crate::chartseq().args(&args).arg(&ns.cluster.kubeconfig))
    };
    // The release's namespace is named; the ClusterRole has none.
    let (code, out, err) = run(&[]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains(&format!(
            "do not belong to release shop (namespace {target})"
        )) && err.contains(&format!("\n  ClusterRole/{reader}: not managed by Helm")),
        "{err}"
    );
    assert!(
        !err.contains(&format!("ClusterRole/{reader} (namespace")),
        "{err}"
    );
    // So does the preview, and the adoption.
    let (code, out, err) = run(&["--dry-run", "--diff"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        out.contains(&format!("! ClusterRole/{reader}: refused"))
            && out.contains(&format!("ConfigMap/app (namespace {target})")),
        "{out}"
    );
    let (code, out, err) = run(&["--take-ownership"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        err.contains(&format!(
            "--take-ownership: adopting ClusterRole/{reader} (not managed by Helm)"
        )),
        "{err}"
    );
}

#[test]
fn a_rollback_refuses_a_foreign_object_unless_told_to_take_it_over() {
    let Some(ns) = Ns::new("rbforeign") else {
        return;
    };
    ns.volume_for("data");
    let full = ns.file("shop.yaml", SHOP);
    let v2 = ns.file("shop-v2.yaml", &without(SHOP, "name: shared-settings"));
    ok(ns.apply("shop", &full, &[]));
    ok(ns.apply("shop", &v2, &[]));
    assert!(ns.get("configmap", "shared-settings").is_none(), "pruned");
    // Another team creates an object of that name; rolling back to revision 1 would take it.
    ns.create_as("kubectl", FOREIGN);
    let (code, out, err) = ns.chartseq(&["rollback", "shop", "1"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains(&format!(
            "ConfigMap/shared-settings (namespace {}): not managed by Helm",
            ns.name
        )) && err.contains("--take-ownership"),
        "{err}"
    );
    assert!(
        ns.stored_release("Secret", "shop", 3).is_none(),
        "nothing recorded"
    );
    ok(ns.chartseq(&["rollback", "shop", "1", "--take-ownership"]));
    let adopted = ns.get("configmap", "shared-settings").expect("adopted");
    assert_eq!(
        adopted["metadata"]["annotations"]["meta.helm.sh/release-name"],
        "shop"
    );
}

/// A cluster-scoped object is named without a namespace in the ownership refusal, whatever
/// namespace its release has.
#[test]
fn a_foreign_cluster_scoped_object_is_named_without_a_namespace() {
    let Some(ns) = Ns::new("scoped2") else { return };
    let reader = ns.cluster_name("clusterrole", "reader");
    ns.create_as("kubectl", &foreign_role(&reader));
    let stream = ns.file(
        "role.yaml",
        &format!("---\n# Source: k3/templates/role.yaml\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {reader}\nrules: []\n"),
    );
    let (code, out, err) = ns.apply("k3", &stream, &[]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains(&format!("ClusterRole/{reader}: not managed by Helm"))
            && !err.contains(&format!("ClusterRole/{reader} (namespace")),
        "{err}"
    );
    // The preview names it so too, and its JSON gives it no namespace.
    let (_, out, err) = ns.apply("k3", &stream, &["--dry-run", "--diff"]);
    assert!(
        out.contains(&format!("ClusterRole/{reader}"))
            && !out.contains(&format!("ClusterRole/{reader} (namespace")),
        "{out}\n{err}"
    );
    let (_, out, err) = ns.apply(
        "k3",
        &stream,
        &["--dry-run", "--diff", "--progress", "json"],
    );
    let entry: serde_json::Value = out
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .find(|v: &serde_json::Value| v["resource"]["kind"] == "ClusterRole")
        .unwrap_or_else(|| panic!("{out}\n{err}"));
    assert_eq!(entry["resource"]["namespace"], serde_json::Value::Null);
}

/// A release whose `data` step holds only a kept volume.
const KEPT_STEP: &str = "---
# Source: shop/templates/data.yaml
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  annotations:
    helm.sh/resource-policy: keep
    helm.sh/resource-group: data
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: \"\"
  resources: {requests: {storage: 1Gi}}
---
# Source: shop/templates/app.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  annotations:
    helm.sh/resource-group: app
    helm.sh/depends-on/resource-groups: '[\"data\"]'
data:
  a: \"1\"
";

#[test]
fn dry_runs_say_what_they_would_do_and_name_the_objects() {
    let Some(ns) = Ns::new("dryruns") else { return };
    ns.volume_for("data");
    let stream = ns.file("kept-step.yaml", KEPT_STEP);
    ok(ns.apply("shop", &stream, &["--timeout", "1m"]));
    // The app waited for the volume's claim to be bound by the real binder.
    let audit = ns.audit();
    assert!(
        audit.created("ConfigMap", "app").received
            > audit.created("PersistentVolumeClaim", "data").received,
        "{audit}"
    );
    let before = audit.chartseq_changes();

    // Uninstall: the step whose only object is kept deletes nothing and says so.
    let (code, out, err) = ns.chartseq(&["uninstall", "shop", "--dry-run"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        err.contains("shop app: would delete 1 resource: ConfigMap/app"),
        "{err}"
    );
    assert!(err.contains("shop data: would delete nothing"), "{err}");
    assert!(
        err.contains(&format!(
            "would keep PersistentVolumeClaim/data (namespace {})",
            ns.name
        )),
        "{err}"
    );
    assert!(!err.contains("deleting"), "{err}");
    assert!(out.contains("dry-run: would delete ConfigMap/app"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("shop data") && l.ends_with("kept")),
        "{out}"
    );
    assert!(
        out.contains(
            "would be kept (helm.sh/resource-policy: keep):\n  PersistentVolumeClaim/data"
        ),
        "{out}"
    );
    assert!(
        out.contains("release shop dry run, nothing changed: would uninstall revision 1, deleting 1 resource, keeping 1 (helm.sh/resource-policy: keep)"),
        "{out}"
    );
    assert!(!out.contains("status uninstalling"), "{out}");

    // Apply: would apply, object by object, and no pending status.
    let (code, out, err) = ns.apply("shop", &stream, &["--dry-run"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        err.contains("shop data: would apply 1 resource: PersistentVolumeClaim/data"),
        "{err}"
    );
    assert!(!err.contains("applying"), "{err}");
    assert!(
        out.contains("release shop dry run, nothing changed: would upgrade to revision 2, applying 2 resources"),
        "{out}"
    );
    assert!(!out.contains("status pending"), "{out}");

    // Nothing but reads and dry runs reached the server.
    assert_eq!(ns.audit().chartseq_changes(), before);
    assert!(ns.get("configmap", "app").is_some());
}
