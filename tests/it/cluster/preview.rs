//! `apply --dry-run --diff` on the real control plane: each object's fate in plan order,
//! exactly the fields that would change, Secret values never shown, pruning judged by the
//! ownership rules, and nothing but reads and server-side dry runs sent.

use base64::Engine as _;

use super::audit::Audit;
use super::{Ns, ok};

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

fn install(ns: &Ns) {
    let v1 = ns.file("v1.yaml", &stream("small", "s3cr3t-one", true));
    ok(ns.apply("shop", &v1, &[]));
}

fn diff(ns: &Ns, text: &str, extra: &[&str]) -> (i32, String, String) {
    let v2 = ns.file("v2.yaml", text);
    let mut args = vec!["--dry-run", "--diff"];
    args.extend_from_slice(extra);
    let (code, out, err) = ns.apply("shop", &v2, &args);
    // The output names the test's namespace; what the tests and snapshots compare says
    // `default`.
    let name = format!("namespace {}", ns.name);
    (
        code,
        out.replace(&name, "namespace default"),
        err.replace(&name, "namespace default"),
    )
}

/// How many of the namespace's requests the audit log holds: a mark for
/// [`only_reads_and_dry_runs`].
fn mark(ns: &Ns) -> usize {
    Audit::read_with_dry_runs(&ns.cluster.audit_log, &ns.name)
        .events
        .len()
}

/// chartseq's requests from mark `from` on are reads or server-side dry runs, and there were
/// dry runs.
fn only_reads_and_dry_runs(ns: &Ns, from: usize) {
    let audit = Audit::read_with_dry_runs(&ns.cluster.audit_log, &ns.name);
    let ours: Vec<_> = audit.events[from..]
        .iter()
        .filter(|e| e.user == super::audit::TEST_USER && !e.user_agent.starts_with("kubectl"))
        .collect();
    let bad: Vec<String> = ours
        .iter()
        .filter(|e| !(matches!(e.verb.as_str(), "get" | "list" | "watch") || e.dry_run))
        .map(|e| format!("{} {}", e.verb, e.uri))
        .collect();
    assert_eq!(bad, Vec::<String>::new());
    assert!(
        ours.iter().any(|e| e.verb == "patch" && e.dry_run),
        "the objects were checked by server-side dry runs"
    );
}

#[test]
fn a_changed_value_shows_exactly_that_field() {
    let Some(ns) = Ns::new("onevalue") else {
        return;
    };
    install(&ns);
    let secret_before = ns.get("secret", "creds");
    let mark = mark(&ns);
    let (code, out, err) = diff(&ns, &stream("large", "s3cr3t-one", true), &[]);
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
    only_reads_and_dry_runs(&ns, mark);
    assert_eq!(ns.get("secret", "creds"), secret_before);
    assert_eq!(
        ns.get("configmap", "config").expect("live")["data"]["size"],
        "small"
    );
    assert!(
        ns.stored_release("Secret", "shop", 2).is_none(),
        "no revision was recorded"
    );
}

#[test]
fn a_secret_change_prints_no_value() {
    let Some(ns) = Ns::new("secretdiff") else {
        return;
    };
    install(&ns);
    let mark = mark(&ns);
    let (code, out, err) = diff(&ns, &stream("small", "s3cr3t-two", true), &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("  ~ Secret/creds (namespace default): update\n      data.password: changed (value hidden)\n"),
        "{out}"
    );
    let (code, json, _) = diff(
        &ns,
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
    only_reads_and_dry_runs(&ns, mark);
}

#[test]
fn what_left_the_chart_is_pruned_unless_kept() {
    let Some(ns) = Ns::new("prunediff") else {
        return;
    };
    install(&ns);
    let mark = mark(&ns);
    let (code, out, err) = diff(&ns, &stream("small", "s3cr3t-one", false), &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        // The reverse of the recorded order, as the prune deletes.
        out.contains("prune\n  = ConfigMap/archive (namespace default): kept (helm.sh/resource-policy: keep)\n  - ConfigMap/old (namespace default): delete\n"),
        "{out}"
    );
    only_reads_and_dry_runs(&ns, mark);
    assert!(ns.get("configmap", "old").is_some());
}

#[test]
fn a_foreign_object_shows_as_refused() {
    let Some(ns) = Ns::new("foreigndiff") else {
        return;
    };
    install(&ns);
    ns.create_as(
        "kubectl",
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
    let mark = mark(&ns);
    let (code, out, err) = diff(&ns, &text, &[]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        out.contains("  ! ConfigMap/extra (namespace default): refused (not managed by Helm; adopt it with --take-ownership)\n"),
        "{out}"
    );
    assert!(err.contains("would not apply"), "{err}");
    // The foreign object is not even sent as a dry run.
    let audit = Audit::read_with_dry_runs(&ns.cluster.audit_log, &ns.name);
    assert!(
        !audit.events[mark..]
            .iter()
            .any(|e| e.verb == "patch" && e.name == "extra"),
        "{audit}"
    );
    only_reads_and_dry_runs(&ns, mark);
    // Adopted, its field still belongs to kubectl: the server's dry run says the apply would
    // fail on the conflict, as it would.
    let (code, out, _) = diff(&ns, &text, &["--take-ownership"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("  ! ConfigMap/extra (namespace default): failed: Apply failed with 1 conflict: conflict with \"kubectl\": .data.team\n"),
        "{out}"
    );
    // Taking the field over too: the adoption shows as the fields it changes.
    let (code, out, err) = diff(&ns, &text, &["--take-ownership", "--force-conflicts"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("  ~ ConfigMap/extra (namespace default): update\n"),
        "{out}"
    );
    assert!(out.contains("      data.team: \"b\" → \"shop\"\n"), "{out}");
}

#[test]
fn a_first_install_creates_everything() {
    let Some(ns) = Ns::new("firstdiff") else {
        return;
    };
    let mark = mark(&ns);
    let (code, out, err) = diff(&ns, &stream("small", "s3cr3t-one", false), &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.starts_with("release shop (namespace default): install as revision 1"),
        "{out}"
    );
    assert!(
        out.ends_with("3 to create, 0 to update, 0 unchanged, 0 to recreate, 0 to delete, 0 kept, 0 left in place, 0 refused, 0 failed\n"),
        "{out}"
    );
    only_reads_and_dry_runs(&ns, mark);
    assert_eq!(ns.audit().chartseq_changes(), Vec::<String>::new());
    assert!(ns.get("configmap", "config").is_none());
    // --diff needs --dry-run.
    let v = ns.file("v.yaml", &stream("small", "x", false));
    let (code, _, err) = ns.apply("shop", &v, &["--diff"]);
    assert_eq!(code, 2, "{err}");
}

/// The README's example, as it runs: an upgrade changing one image and dropping a group.
#[test]
fn the_readme_example_is_real() {
    let Some(ns) = Ns::new("readmediff") else {
        return;
    };
    let shop = |name: &str| {
        crate::fixture(&format!("apply/{name}"))
            .to_str()
            .expect("UTF-8")
            .to_owned()
    };
    ok(ns.apply("shop", &shop("shop.yaml"), &[]));
    let mark = mark(&ns);
    let text = std::fs::read_to_string(shop("shop-v2.yaml")).expect("the fixture");
    let (code, out, err) = diff(&ns, &text, &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    let readme = std::fs::read_to_string(crate::root().join("README.md")).expect("README");
    let shown = readme
        .split("--dry-run --diff\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the README shows the output");
    assert_eq!(out, shown);
    only_reads_and_dry_runs(&ns, mark);
    assert!(ns.get("deployment", "queue").is_some());
}
