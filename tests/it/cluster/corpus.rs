//! Real charts end to end on the real control plane: three charts of the real-chart corpus
//! (`$CHARTSEQ_CORPUS`, as `.ci/run` sets it; rendered by real helm 4.1.4) installed, upgraded,
//! rolled back and uninstalled by chartseq, with real helm reading the same release at every
//! step. Chosen for what each brings to a deployer:
//! - `bitnami-wordpress`: a database subchart (`MariaDB`, a `StatefulSet` with a volume claim the
//!   real volume controller binds) before the application;
//! - `cert-manager`: `CustomResourceDefinition`s, validating and mutating webhooks (that the API
//!   server can only dial on loopback here) and post-install hooks;
//! - `ingress-nginx`: pre- and post-install hooks (`ServiceAccount`, RBAC, certificate Jobs)
//!   that use each other, and an admission webhook.
//!
//! Without `$CHARTSEQ_CORPUS` the tests say they are skipped: the corpus is not part of the
//! repository.

use serde_json::Value;

use super::{Ns, ok};
use crate::tool;

fn corpus_stream(id: &str) -> Option<String> {
    let Some(dir) = std::env::var_os("CHARTSEQ_CORPUS") else {
        #[expect(
            clippy::print_stderr,
            reason = "a skipped test says why on the test's own stderr"
        )]
        {
            eprintln!("skipped: $CHARTSEQ_CORPUS is not set (the real-chart corpus)");
        }
        return None;
    };
    let path = std::path::Path::new(&dir)
        .join("rendered")
        .join(format!("{id}.yaml"));
    Some(
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("$CHARTSEQ_CORPUS has no {}: {e}", path.display())),
    )
}

/// `(revision, status)` of the release as `helm list` and as `chartseq list` show it; they
/// must agree.
fn listed(ns: &Ns, helm: &std::path::Path, release: &str) -> Option<(String, String)> {
    let parse = |out: &str| -> Vec<Value> {
        serde_json::from_str(out).unwrap_or_else(|e| panic!("not a JSON list ({e}): {out}"))
    };
    let helm_rows = parse(&ok(ns.helm(helm, "", &["list", "-o", "json"])));
    let ours = parse(&ok(ns.chartseq(&["list", "-o", "json"])));
    let pick = |rows: &[Value]| {
        rows.iter().find(|r| r["name"] == release).map(|r| {
            (
                r["revision"].as_str().unwrap_or_default().to_owned(),
                r["status"].as_str().unwrap_or_default().to_owned(),
                r["updated"].as_str().unwrap_or_default().to_owned(),
                r["chart"].as_str().unwrap_or_default().to_owned(),
            )
        })
    };
    let (theirs, mine) = (pick(&helm_rows), pick(&ours));
    match (&theirs, &mine) {
        (Some(h), Some(c)) => {
            assert_eq!(
                (&h.0, &h.1, &h.2),
                (&c.0, &c.1, &c.2),
                "helm list and chartseq list differ"
            );
            assert!(
                h.3.starts_with(&c.3),
                "helm shows chart {}, chartseq {}",
                h.3,
                c.3
            );
        }
        (None, None) => {}
        _ => panic!("helm list {theirs:?} and chartseq list {mine:?} differ"),
    }
    theirs.map(|(r, s, ..)| (r, s))
}

/// `helm status` and `chartseq status` agree on revision and status.
fn statuses_agree(ns: &Ns, helm: &std::path::Path, release: &str, revision: &str, status: &str) {
    let theirs = ok(ns.helm(helm, "", &["status", release]));
    let mine = ok(ns.chartseq(&["status", release]));
    for out in [&theirs, &mine] {
        assert!(
            out.contains(&format!("STATUS: {status}"))
                && out.contains(&format!("REVISION: {revision}")),
            "{out}"
        );
    }
}

fn end_to_end(id: &str, volumes: usize) {
    let Some(text) = corpus_stream(id) else {
        return;
    };
    let Some(helm) = tool("helm") else { return };
    let Some(ns) = Ns::new(&format!("corpus-{id}")) else {
        return;
    };
    let release = format!("my-{id}");
    // Rendered for namespace my-ID: into the test's own.
    let text = text
        .replace(
            &format!("namespace: {release}\n"),
            &format!("namespace: {}\n", ns.name),
        )
        .replace(
            &format!("namespace: \"{release}\"\n"),
            &format!("namespace: {}\n", ns.name),
        );
    for i in 0..volumes {
        // What a storage provisioner would offer: the real volume controller binds them.
        let pv = format!(
            "apiVersion: v1\nkind: PersistentVolume\nmetadata: {{name: {}-{i}}}\nspec:\n  capacity: {{storage: 50Gi}}\n  accessModes: [ReadWriteOnce]\n  hostPath: {{path: /tmp/{}-{i}}}\n",
            ns.name, ns.name
        );
        let path = ns.file(&format!("pv-{i}.yaml"), &pv);
        ok(ns.kubectl(&["apply", "-f", &path]));
    }
    let v1 = ns.file("v1.yaml", &text);
    let apply =
        |path: &str| ok(ns.chartseq(&["apply", path, "--release", &release, "--timeout", "4m"]));

    let out = apply(&v1);
    assert!(out.contains("revision 1, status deployed"), "{out}");
    assert_eq!(
        listed(&ns, &helm, &release),
        Some(("1".into(), "deployed".into()))
    );
    statuses_agree(&ns, &helm, &release, "1", "deployed");
    // helm's manifest is what was rendered: every non-hook document's source is in it.
    let manifest = ok(ns.helm(&helm, "", &["get", "manifest", &release]));
    let hooks = ok(ns.helm(&helm, "", &["get", "hooks", &release]));
    for doc in text.split("\n---\n").filter(|d| d.contains("kind:")) {
        let Some(source) = doc.lines().find(|l| l.starts_with("# Source: ")) else {
            continue;
        };
        assert!(
            manifest.contains(source) || hooks.contains(source),
            "helm get manifest/hooks lack {source}"
        );
    }

    // A new rendering: one more ConfigMap.
    let extra = format!(
        "{text}\n---\n# Source: {id}/templates/chartseq-upgrade.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: chartseq-upgrade\ndata: {{a: \"1\"}}\n"
    );
    let v2 = ns.file("v2.yaml", &extra);
    let out = apply(&v2);
    assert!(out.contains("revision 2, status deployed"), "{out}");
    assert!(ns.get("configmap", "chartseq-upgrade").is_some());
    assert_eq!(
        listed(&ns, &helm, &release),
        Some(("2".into(), "deployed".into()))
    );
    statuses_agree(&ns, &helm, &release, "2", "deployed");

    let out = ok(ns.chartseq(&["rollback", &release, "1", "--timeout", "4m"]));
    assert!(out.contains("revision 3, status deployed"), "{out}");
    assert!(
        ns.get("configmap", "chartseq-upgrade").is_none(),
        "pruned on rollback"
    );
    assert_eq!(
        listed(&ns, &helm, &release),
        Some(("3".into(), "deployed".into()))
    );
    statuses_agree(&ns, &helm, &release, "3", "deployed");
    let history = ok(ns.helm(&helm, "", &["history", &release]));
    assert!(history.contains("Rollback to 1"), "{history}");

    let out = ok(ns.chartseq(&["uninstall", &release, "--timeout", "4m"]));
    assert!(out.contains("uninstalled"), "{out}");
    assert_eq!(listed(&ns, &helm, &release), None);
    // Nothing of the release is left in the namespace (but what its StatefulSets' claims
    // made, which Helm leaves too).
    let (_, left, _) = ns.kubectl(&[
        "get",
        "deployments,statefulsets,daemonsets,services,configmaps,secrets,serviceaccounts,jobs,roles,rolebindings",
        "-o",
        "name",
    ]);
    let left: Vec<&str> = left
        .lines()
        .filter(|l| !l.ends_with("/kube-root-ca.crt") && !l.ends_with("/default"))
        .collect();
    assert!(left.is_empty(), "left after uninstall: {left:?}");
}

#[test]
fn bitnami_wordpress_with_its_database_subchart() {
    end_to_end("bitnami-wordpress", 2);
}

#[test]
fn cert_manager_with_crds_webhooks_and_hooks() {
    end_to_end("cert-manager", 0);
}

#[test]
fn ingress_nginx_with_hooks_that_use_each_other() {
    end_to_end("ingress-nginx", 0);
}
