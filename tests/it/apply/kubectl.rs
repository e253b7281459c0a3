//! The test API server behaves as a real one for what chartseq relies on: real kubectl's
//! server-side apply, field-manager conflicts, `get -o json`, `wait --for=condition` and
//! `delete` give the results they give against a cluster.

use std::path::Path;
use std::process::Command;

use super::apiserver::{self, Scenario};
use crate::{run, tool};

fn kubectl(bin: &Path, kubeconfig: &Path, cache: &Path, args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(bin);
    cmd.arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--cache-dir")
        .arg(cache)
        .args(args);
    cmd.env_remove("KUBECONFIG");
    run(&mut cmd)
}

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: nginx}]
";

#[test]
fn kubectl_server_side_apply_get_wait_delete() {
    let Some(bin) = tool("kubectl") else { return };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let scenario = Scenario::parse("resources:\n- {kind: Deployment, name: web, readyAfterMs: 200}\n- {kind: Job, name: migrate, readyAfterMs: 100}\n")
        .expect("the scenario parses");
    let server = apiserver::spawn(scenario, dir.path());
    let cache = dir.path().join("cache");
    let k = |args: &[&str]| kubectl(&bin, &server.kubeconfig, &cache, args);
    let manifest = dir.path().join("web.yaml");
    std::fs::write(&manifest, DEPLOYMENT).expect("the manifest is written");
    let file = manifest.to_str().expect("a UTF-8 path");

    let (code, out, err) = k(&["apply", "--server-side", "-f", file]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "deployment.apps/web serverside-applied");

    // Fresh object: generation 1, no status until the controller acts.
    let (code, out, _) = k(&["get", "deployment", "web", "-o", "json"]);
    assert_eq!(code, 0);
    let obj: serde_json::Value = serde_json::from_str(&out).expect("kubectl prints JSON");
    assert_eq!(obj["metadata"]["generation"], 1);
    assert_eq!(obj["spec"]["replicas"], 2);

    let (code, out, err) = k(&[
        "wait",
        "--for=condition=Available",
        "deployment/web",
        "--timeout=10s",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "deployment.apps/web condition met");
    let (_, out, _) = k(&[
        "get",
        "deployment",
        "web",
        "-o",
        "json",
        "--show-managed-fields",
    ]);
    let obj: serde_json::Value = serde_json::from_str(&out).expect("kubectl prints JSON");
    assert_eq!(obj["status"]["observedGeneration"], 1);
    assert_eq!(obj["metadata"]["managedFields"][0]["manager"], "kubectl");

    // Another manager changing an owned field conflicts, as on a real server; --force-conflicts
    // takes the field over and bumps the generation.
    std::fs::write(&manifest, DEPLOYMENT.replace("replicas: 2", "replicas: 3"))
        .expect("the manifest is written");
    let (code, _, err) = k(&[
        "apply",
        "--server-side",
        "--field-manager",
        "other",
        "-f",
        file,
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("conflict with \"kubectl\"") && err.contains(".spec.replicas"),
        "{err}"
    );
    let (code, _, err) = k(&[
        "apply",
        "--server-side",
        "--field-manager",
        "other",
        "--force-conflicts",
        "-f",
        file,
    ]);
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = k(&[
        "get",
        "deployment",
        "web",
        "-o",
        "jsonpath={.metadata.generation} {.spec.replicas}",
    ]);
    assert_eq!(out, "2 3");

    // A Job completes; kubectl waits for it.
    let job = dir.path().join("job.yaml");
    std::fs::write(&job, "apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: m, image: busybox}]\n").expect("written");
    let (code, _, err) = k(&["apply", "--server-side", "-f", job.to_str().expect("UTF-8")]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = k(&[
        "wait",
        "--for=condition=Complete",
        "job/migrate",
        "--timeout=10s",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "job.batch/migrate condition met");

    let (code, out, err) = k(&["delete", "deployment", "web"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"web\" deleted"), "{out}");
    let (code, _, err) = k(&["get", "deployment", "web", "-o", "json"]);
    assert_eq!(code, 1);
    assert!(err.contains("deployments.apps \"web\" not found"), "{err}");
}

#[test]
fn kubectl_crd_established_then_custom_resource() {
    let Some(bin) = tool("kubectl") else { return };
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = apiserver::spawn(Scenario::default(), dir.path());
    let cache = dir.path().join("cache");
    let k = |args: &[&str]| kubectl(&bin, &server.kubeconfig, &cache, args);
    let crd = dir.path().join("crd.yaml");
    std::fs::write(&crd, "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\nspec:\n  group: example.com\n  scope: Namespaced\n  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}\n").expect("written");
    let (code, _, err) = k(&["apply", "--server-side", "-f", crd.to_str().expect("UTF-8")]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = k(&[
        "wait",
        "--for=condition=Established",
        "crd/widgets.example.com",
        "--timeout=10s",
    ]);
    assert_eq!(code, 0, "{err}");
    let cr = dir.path().join("cr.yaml");
    std::fs::write(&cr, "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\nspec: {size: 1}\n").expect("written");
    let (code, out, err) = k(&["apply", "--server-side", "-f", cr.to_str().expect("UTF-8")]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "widget.example.com/w serverside-applied");
    let (code, out, _) = k(&["get", "widgets", "-o", "jsonpath={.items[*].metadata.name}"]);
    assert_eq!((code, out.as_str()), (0, "w"));
    // Deleting the CRD removes its objects and its type.
    let (code, _, err) = k(&["delete", "crd", "widgets.example.com"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        server
            .server
            .object("Widget", Some("default"), "w")
            .is_none()
    );
}
