//! `apply --dry-run --diff` against the test API server: each object's fate in plan order,
//! exactly the fields that would change, Secret values never shown, pruning judged by the
//! ownership rules, and nothing but reads and server-side dry runs sent.

use base64::Engine as _;

use super::support::{Env, start};

/// Revision 1 of a chart: a `ConfigMap`, a Secret, a Deployment that waits for both, and
/// two objects the next revision drops (one of them kept by policy).
fn stream(size: &str, password: &str, with_old: bool) -> String {
    let mut s = format!(
        "---
# Source: shop/templates/config.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: config
  annotations:
    helm.sh/resource-group: config
data:
  size: {size}
  mode: fast
---
# Source: shop/templates/secret.yaml
apiVersion: v1
kind: Secret
metadata:
  name: creds
  annotations:
    helm.sh/resource-group: config
type: Opaque
stringData:
  password: {password}
  user: admin
---
# Source: shop/templates/app.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  annotations:
    helm.sh/resource-group: app
    helm.sh/depends-on/resource-groups: '[\"config\"]'
spec:
  replicas: 2
  selector: {{matchLabels: {{app: app}}}}
  template:
    metadata: {{labels: {{app: app}}}}
    spec:
      containers: [{{name: app, image: shop:1}}]
"
    );
    if with_old {
        s.push_str(
            "---
# Source: shop/templates/old.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: old
data:
  a: \"1\"
---
# Source: shop/templates/data.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: archive
  annotations:
    helm.sh/resource-policy: keep
data:
  a: \"1\"
",
        );
    }
    s
}

fn install(env: &Env) {
    let v1 = env.stream("v1.yaml", &stream("small", "s3cr3t-one", true));
    let (code, out, err) = env.run(&["apply", &v1, "--release", "shop", "-n", "default"]);
    assert_eq!(code, 0, "{out}\n{err}");
}

fn diff(env: &Env, text: &str, extra: &[&str]) -> (i32, String, String) {
    let v2 = env.stream("v2.yaml", text);
    let mut args = vec![
        "apply",
        &v2,
        "--release",
        "shop",
        "-n",
        "default",
        "--dry-run",
        "--diff",
    ];
    args.extend_from_slice(extra);
    env.run(&args)
}

/// Every request from `from` on is a read or a server-side dry run.
fn only_reads_and_dry_runs(env: &Env, from: usize) {
    let requests = env.requests();
    let bad: Vec<String> = requests[from..]
        .iter()
        .filter(|r| !(r.method == "GET" || (r.method == "PATCH" && r.dry_run())))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(bad, Vec::<String>::new());
    assert!(
        requests[from..]
            .iter()
            .any(|r| r.method == "PATCH" && r.dry_run()),
        "the objects were checked by server-side dry runs"
    );
}

#[test]
fn a_changed_value_shows_exactly_that_field() {
    let env = start("");
    install(&env);
    let secret_before = env.get("Secret", "creds");
    let mark = env.mark();
    let (code, out, err) = diff(&env, &stream("large", "s3cr3t-one", true), &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    crate::snapshot_settings().bind(|| {
        insta::assert_snapshot!("apply_dry_run_diff_one_value", out);
    });
    // The ConfigMap's one change, and nothing else anywhere.
    let changes: Vec<&str> = out.lines().filter(|l| l.starts_with("      ")).collect();
    assert_eq!(changes, ["      data.size: \"small\" → \"large\""], "{out}");
    assert!(
        out.contains("  ~ ConfigMap/config (namespace default): update\n"),
        "{out}"
    );
    assert!(
        out.contains("  = Deployment/app (namespace default): unchanged\n"),
        "{out}"
    );
    assert!(
        out.contains("  = Secret/creds (namespace default): unchanged\n"),
        "{out}"
    );
    only_reads_and_dry_runs(&env, mark);
    assert_eq!(env.get("Secret", "creds"), secret_before);
    assert_eq!(
        env.get("ConfigMap", "config").expect("live")["data"]["size"],
        "small"
    );
    assert!(env.release_secret(2).is_none(), "no revision was recorded");
}

#[test]
fn a_secret_change_prints_no_value() {
    let env = start("");
    install(&env);
    let mark = env.mark();
    let (code, out, err) = diff(&env, &stream("small", "s3cr3t-two", true), &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("  ~ Secret/creds (namespace default): update\n      data.password: changed (value hidden)\n"),
        "{out}"
    );
    let (code, json, _) = diff(
        &env,
        &stream("small", "s3cr3t-two", true),
        &["--progress", "json"],
    );
    assert_eq!(code, 0);
    let secret: serde_json::Value = json
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a JSON line"))
        .find(|e| e["resource"]["name"] == "creds")
        .expect("the Secret's line");
    assert_eq!(
        secret["changes"],
        serde_json::json!([{"path": "data.password", "op": "changed", "hidden": true}])
    );
    let b64 = base64::engine::general_purpose::STANDARD;
    for value in ["s3cr3t-one", "s3cr3t-two", "admin", "cjNjcjN0"] {
        for text in [&out, &err, &json] {
            assert!(!text.contains(value), "{value} leaked:\n{text}");
            assert!(
                !text.contains(&b64.encode(value)),
                "{value} leaked:\n{text}"
            );
        }
    }
    only_reads_and_dry_runs(&env, mark);
}

#[test]
fn what_left_the_chart_is_pruned_unless_kept() {
    let env = start("");
    install(&env);
    let mark = env.mark();
    let (code, out, err) = diff(&env, &stream("small", "s3cr3t-one", false), &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        // The reverse of the recorded order, as the prune deletes.
        out.contains("prune\n  = ConfigMap/archive (namespace default): kept (helm.sh/resource-policy: keep)\n  - ConfigMap/old (namespace default): delete\n"),
        "{out}"
    );
    only_reads_and_dry_runs(&env, mark);
    assert!(env.exists("ConfigMap", "old"));
}

#[test]
fn a_foreign_object_shows_as_refused() {
    let env = start("");
    install(&env);
    env.create_as(
        "kubectl",
        "/api/v1/namespaces/default/configmaps/extra",
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"extra\"},\"data\":{\"team\":\"b\"}}",
    );
    let mut text = stream("small", "s3cr3t-one", true);
    text.push_str(
        "---
# Source: shop/templates/extra.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: extra
data:
  team: shop
",
    );
    let mark = env.mark();
    let (code, out, err) = diff(&env, &text, &[]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        out.contains("  ! ConfigMap/extra (namespace default): refused (not managed by Helm; adopt it with --take-ownership)\n"),
        "{out}"
    );
    assert!(err.contains("would not apply"), "{err}");
    // The foreign object is not even sent as a dry run.
    assert!(
        !env.requests()[mark..]
            .iter()
            .any(|r| r.method == "PATCH" && r.name.as_deref() == Some("extra"))
    );
    only_reads_and_dry_runs(&env, mark);
    // Adopted, its field still belongs to kubectl: the server's dry run says the apply would
    // fail on the conflict, as it would.
    let (code, out, _) = diff(&env, &text, &["--take-ownership"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("  ! ConfigMap/extra (namespace default): failed: Apply failed with 1 conflict: conflict with \"kubectl\" using v1: .data.team\n"),
        "{out}"
    );
    // Taking the field over too: the adoption shows as the fields it changes.
    let (code, out, err) = diff(&env, &text, &["--take-ownership", "--force-conflicts"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("  ~ ConfigMap/extra (namespace default): update\n"),
        "{out}"
    );
    assert!(out.contains("      data.team: \"b\" → \"shop\"\n"), "{out}");
}

#[test]
fn a_first_install_creates_everything() {
    let env = start("");
    let mark = env.mark();
    let (code, out, err) = diff(&env, &stream("small", "s3cr3t-one", false), &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.starts_with("release shop (namespace default): install as revision 1"),
        "{out}"
    );
    assert!(
        out.ends_with("3 to create, 0 to update, 0 unchanged, 0 to recreate, 0 to delete, 0 kept, 0 left in place, 0 refused, 0 failed\n"),
        "{out}"
    );
    only_reads_and_dry_runs(&env, mark);
    assert_eq!(env.leftovers(), Vec::<String>::new());
    // --diff needs --dry-run.
    let v = env.stream("v.yaml", &stream("small", "x", false));
    let (code, _, err) = env.run(&["apply", &v, "--release", "shop", "--diff"]);
    assert_eq!(code, 2, "{err}");
}

/// The README's example, as it runs: an upgrade changing one image and dropping a group.
#[test]
fn the_readme_example_is_real() {
    let env = start("");
    let (code, out, err) = env.apply("shop.yaml", &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    let mark = env.mark();
    let (code, out, err) = env.apply("shop-v2.yaml", &["--dry-run", "--diff"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let readme = std::fs::read_to_string(crate::root().join("README.md")).expect("README");
    let shown = readme
        .split("--dry-run --diff\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the README shows the output");
    assert_eq!(out, shown);
    only_reads_and_dry_runs(&env, mark);
    assert!(env.exists("Deployment", "queue"));
}
