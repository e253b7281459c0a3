//! Data safety: a release never writes or deletes what it does not own (Helm's ownership
//! marks), keeps `helm.sh/resource-policy: keep` objects, and refuses before applying
//! anything. Every test checks the objects and the requests the server saw.

use super::support::{Env, start};

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
const FOREIGN_PATH: &str = "/api/v1/namespaces/default/configmaps/shared-settings";

fn apply(env: &Env, release: &str, stream: &str, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["apply", stream, "--release", release, "-n", "default"];
    args.extend_from_slice(extra);
    env.run(&args)
}

/// Every write and delete the server saw, as `verb Kind/name`, dry runs excluded.
fn writes(env: &Env) -> Vec<String> {
    env.log()
        .iter()
        .filter(|e| !e.dry_run && matches!(e.verb, "apply" | "delete"))
        .map(|e| format!("{} {}/{}", e.verb, e.kind, e.name))
        .collect()
}

#[test]
fn a_foreign_object_is_refused_before_anything_is_applied_and_never_touched() {
    let env = start("");
    env.create_as("kubectl", FOREIGN_PATH, FOREIGN);
    let before = env.get("ConfigMap", "shared-settings").expect("created");
    let writes_before = writes(&env);
    let stream = env.stream("shop.yaml", SHOP);

    let (code, out, err) = apply(&env, "shop", &stream, &[]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("1 object(s) already exist and do not belong to release shop (namespace default); nothing was applied:")
            && err.contains("ConfigMap/shared-settings (namespace default): not managed by Helm")
            && err.contains("--take-ownership"),
        "{err}"
    );
    // Nothing of the release reached the server: no object, no release record.
    assert_eq!(writes(&env), writes_before);
    assert!(
        env.get("ConfigMap", "app").is_none() && env.get("PersistentVolumeClaim", "data").is_none()
    );
    let (code, _, err) = env.run(&["history", "shop", "-n", "default"]);
    assert_eq!(code, 2, "no release was recorded: {err}");

    // There is nothing to uninstall, and the other team's ConfigMap is as it was.
    let (code, _, err) = env.run(&["uninstall", "shop", "-n", "default"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not found"), "{err}");
    assert_eq!(env.get("ConfigMap", "shared-settings"), Some(before));
    assert_eq!(env.count("delete", "ConfigMap", "shared-settings"), 0);
}

#[test]
fn take_ownership_adopts_deliberately() {
    let env = start("");
    env.create_as("kubectl", FOREIGN_PATH, FOREIGN);
    let stream = env.stream("shop.yaml", SHOP);
    let (code, out, err) = apply(&env, "shop", &stream, &["--take-ownership"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        err.contains("--take-ownership: adopting ConfigMap/shared-settings (namespace default) (not managed by Helm)"),
        "{err}"
    );
    let adopted = env
        .get("ConfigMap", "shared-settings")
        .expect("still there");
    assert_eq!(
        adopted["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "Helm"
    );
    assert_eq!(
        adopted["metadata"]["annotations"]["meta.helm.sh/release-name"],
        "shop"
    );
    // The other team's field stays; the chart's is added.
    assert_eq!(adopted["data"]["owner"], "team-b");
    assert_eq!(adopted["data"]["mode"], "shop");
    // Adopted, it is the release's: uninstall removes it.
    let (code, _, err) = env.run(&["uninstall", "shop", "-n", "default"]);
    assert_eq!(code, 0, "{err}");
    assert!(env.get("ConfigMap", "shared-settings").is_none());
}

#[test]
fn keep_objects_survive_uninstall_and_pruning_and_are_listed() {
    let env = start("");
    let stream = env.stream("shop.yaml", SHOP);
    let (code, out, err) = apply(&env, "shop", &stream, &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    let pvc = env.get("PersistentVolumeClaim", "data").expect("applied");
    assert_eq!(
        pvc["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "Helm"
    );
    assert_eq!(
        pvc["metadata"]["annotations"]["meta.helm.sh/release-namespace"],
        "default"
    );

    // Upgrade pruning: the volume left the chart but is kept.
    let without = SHOP
        .split("---\n")
        .filter(|d| !d.contains("kind: PersistentVolumeClaim"))
        .collect::<Vec<_>>()
        .join("---\n");
    let v2 = env.stream("shop-v2.yaml", &without);
    let (code, out, err) = apply(&env, "shop", &v2, &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(env.get("PersistentVolumeClaim", "data").is_some());
    assert!(
        out.contains("kept (helm.sh/resource-policy: keep):\n  PersistentVolumeClaim/data (namespace default)"),
        "{out}"
    );

    // Uninstall from the first revision's objects again: the volume is kept, the rest goes.
    let (code, _, _) = apply(&env, "shop", &stream, &[]);
    assert_eq!(code, 0);
    let (code, out, err) = env.run(&["uninstall", "shop", "-n", "default"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("kept (helm.sh/resource-policy: keep):\n  PersistentVolumeClaim/data (namespace default)"),
        "{out}"
    );
    assert!(env.get("PersistentVolumeClaim", "data").is_some());
    assert!(
        env.get("ConfigMap", "app").is_none() && env.get("ConfigMap", "shared-settings").is_none()
    );
    assert_eq!(env.count("delete", "PersistentVolumeClaim", "data"), 0);
}

#[test]
fn pruning_and_uninstall_leave_an_object_another_release_adopted() {
    let env = start("");
    let stream = env.stream("shop.yaml", SHOP);
    assert_eq!(apply(&env, "shop", &stream, &[]).0, 0);

    // Another release renders the same ConfigMap: refused, as it is shop's.
    let other = env.stream(
        "other.yaml",
        "---\n# Source: other/templates/app.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  a: \"1\"\n  b: other\n",
    );
    let (code, _, err) = apply(&env, "other", &other, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(
            "ConfigMap/app (namespace default): owned by release shop in namespace default"
        ),
        "{err}"
    );
    // Adopted deliberately, it is other's now.
    let (code, _, err) = apply(&env, "other", &other, &["--take-ownership"]);
    assert_eq!(code, 0, "{err}");

    // shop's next revision no longer renders it: pruning leaves it and says why.
    let without_app = SHOP
        .split("---\n")
        .filter(|d| !d.contains("name: app"))
        .collect::<Vec<_>>()
        .join("---\n");
    let v2 = env.stream("shop-v2.yaml", &without_app);
    let deletes_before = env.count("delete", "ConfigMap", "app");
    let (code, out, err) = apply(&env, "shop", &v2, &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("left in place, not owned by this release:\n  ConfigMap/app (namespace default): owned by release other in namespace default"),
        "{out}"
    );
    // shop's uninstall does not touch it either.
    let (code, _, err) = env.run(&["uninstall", "shop", "-n", "default"]);
    assert_eq!(code, 0, "{err}");
    let app = env
        .get("ConfigMap", "app")
        .expect("other's ConfigMap stays");
    assert_eq!(app["data"]["b"], "other");
    assert_eq!(
        app["metadata"]["annotations"]["meta.helm.sh/release-name"],
        "other"
    );
    assert_eq!(env.count("delete", "ConfigMap", "app"), deletes_before);
}

#[test]
fn uninstall_leaves_an_object_someone_replaced() {
    let env = start("");
    let stream = env.stream("shop.yaml", SHOP);
    assert_eq!(apply(&env, "shop", &stream, &[]).0, 0);
    // Someone deletes the release's ConfigMap and creates their own of the same name.
    assert!(
        env.server
            .server
            .remove("ConfigMap", Some("default"), "app")
    );
    env.create_as(
        "kubectl",
        "/api/v1/namespaces/default/configmaps/app",
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"app\"},\"data\":{\"mine\":\"yes\"}}",
    );
    let (code, out, err) = env.run(&["uninstall", "shop", "-n", "default"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("  ConfigMap/app (namespace default): not managed by Helm"),
        "{out}"
    );
    assert_eq!(
        env.get("ConfigMap", "app").expect("kept")["data"]["mine"],
        "yes"
    );
    assert_eq!(env.count("delete", "ConfigMap", "app"), 0);
}

#[test]
fn a_cluster_scoped_object_is_named_without_a_namespace() {
    let env = start("");
    env.create_as(
        "kubectl",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/reader",
        r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"reader"},"rules":[]}"#,
    );
    let stream = env.stream(
        "reader.yaml",
        "---
# Source: shop/templates/reader.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
rules: []
---
# Source: shop/templates/app.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
data: {a: \"1\"}
",
    );
    let run = |extra: &[&str]| {
        let mut args = vec!["apply", &stream, "--release", "shop", "-n", "k3"];
        args.extend_from_slice(extra);
        args.push("--create-namespace");
        env.run(&args)
    };
    // The release's namespace is named; the ClusterRole has none.
    let (code, out, err) = run(&[]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("do not belong to release shop (namespace k3)")
            && err.contains("\n  ClusterRole/reader: not managed by Helm"),
        "{err}"
    );
    assert!(!err.contains("ClusterRole/reader (namespace"), "{err}");
    // So does the preview, and the adoption.
    let (code, out, err) = run(&["--dry-run", "--diff"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        out.contains("! ClusterRole/reader: refused")
            && out.contains("ConfigMap/app (namespace k3)"),
        "{out}"
    );
    let (code, out, err) = run(&["--take-ownership"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        err.contains("--take-ownership: adopting ClusterRole/reader (not managed by Helm)"),
        "{err}"
    );
}

#[test]
fn a_rollback_refuses_a_foreign_object_unless_told_to_take_it_over() {
    let env = start("");
    let full = env.stream("shop.yaml", SHOP);
    let without = env.stream(
        "shop-v2.yaml",
        &SHOP
            .split("---\n")
            .filter(|d| !d.contains("name: shared-settings"))
            .collect::<Vec<_>>()
            .join("---\n"),
    );
    assert_eq!(apply(&env, "shop", &full, &[]).0, 0);
    assert_eq!(apply(&env, "shop", &without, &[]).0, 0);
    assert!(env.get("ConfigMap", "shared-settings").is_none(), "pruned");
    // Another team creates an object of that name; rolling back to revision 1 would take it.
    env.create_as("kubectl", FOREIGN_PATH, FOREIGN);
    let (code, out, err) = env.run(&["rollback", "shop", "1", "-n", "default"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("ConfigMap/shared-settings (namespace default): not managed by Helm")
            && err.contains("--take-ownership"),
        "{err}"
    );
    assert!(env.release_secret(3).is_none(), "nothing recorded");
    let (code, out, err) = env.run(&["rollback", "shop", "1", "-n", "default", "--take-ownership"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let adopted = env.get("ConfigMap", "shared-settings").expect("adopted");
    assert_eq!(
        adopted["metadata"]["annotations"]["meta.helm.sh/release-name"],
        "shop"
    );
}

/// A cluster-scoped object is named without a namespace in the ownership refusal, whatever
/// namespace its release has.
#[test]
fn a_foreign_cluster_scoped_object_is_named_without_a_namespace() {
    let env = start("");
    env.create_as(
        "kubectl",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles/reader",
        "{\"apiVersion\": \"rbac.authorization.k8s.io/v1\", \"kind\": \"ClusterRole\", \"metadata\": {\"name\": \"reader\"}, \"rules\": []}",
    );
    let stream = env.stream(
        "role.yaml",
        "---\n# Source: k3/templates/role.yaml\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader\nrules: []\n",
    );
    let (code, out, err) = apply(&env, "k3", &stream, &[]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("ClusterRole/reader: not managed by Helm")
            && !err.contains("ClusterRole/reader (namespace"),
        "{err}"
    );
    // The preview names it so too, and its JSON gives it no namespace.
    let (_, out, err) = apply(&env, "k3", &stream, &["--dry-run", "--diff"]);
    assert!(
        out.contains("ClusterRole/reader") && !out.contains("ClusterRole/reader (namespace"),
        "{out}\n{err}"
    );
    let (_, out, err) = apply(
        &env,
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
    let env = start("");
    let stream = env.stream("kept-step.yaml", KEPT_STEP);
    assert_eq!(apply(&env, "shop", &stream, &[]).0, 0);
    let before = env.log().len();

    // Uninstall: the step whose only object is kept deletes nothing and says so.
    let (code, out, err) = env.run(&["uninstall", "shop", "-n", "default", "--dry-run"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        err.contains("shop app: would delete 1 resource: ConfigMap/app"),
        "{err}"
    );
    assert!(err.contains("shop data: would delete nothing"), "{err}");
    assert!(
        err.contains("would keep PersistentVolumeClaim/data (namespace default)"),
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
    let (code, out, err) = apply(&env, "shop", &stream, &["--dry-run"]);
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
    assert!(
        env.log()[before..]
            .iter()
            .all(|e| e.dry_run || !matches!(e.verb, "apply" | "delete"))
    );
    assert!(env.get("ConfigMap", "app").is_some());
}
