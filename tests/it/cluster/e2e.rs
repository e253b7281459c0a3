//! The walk-through a user takes on any cluster, on the test cluster: install with
//! `--wait-for-jobs`, status, an upgrade with the same objects (a new revision, nothing changed
//! on the server), uninstall, and status of the release that is gone.

use super::{Ns, ok};
use crate::fixture;

#[test]
fn install_status_upgrade_uninstall() {
    let Some(ns) = Ns::new("e2e") else { return };
    let stream = fixture("apply/e2e.yaml");
    let stream = stream.to_str().expect("a UTF-8 path");
    let apply = [
        "apply",
        stream,
        "--release",
        "e2e",
        "--wait-for-jobs",
        "--timeout",
        "2m",
        "--readiness-timeout",
        "1m",
    ];
    let out = ok(ns.chartseq(&apply));
    assert!(
        out.contains("release e2e applied: revision 1, status deployed"),
        "{out}"
    );
    let out = ok(ns.chartseq(&["status", "e2e"]));
    assert!(
        out.contains("STATUS: deployed") && out.contains("Deployment/e2e-frontend"),
        "{out}"
    );
    // Upgrade with the same objects: a no-op for the server, a new revision for the record.
    let out = ok(ns.chartseq(&apply));
    assert!(out.contains("revision 2, status deployed"), "{out}");
    ok(ns.chartseq(&["uninstall", "e2e", "--timeout", "2m"]));
    let (code, _, err) = ns.chartseq(&["status", "e2e"]);
    assert_eq!(code, 2, "{err}");
    assert!(ns.get("deployment", "e2e-frontend").is_none());
}

/// `status` names a cluster-scoped object without a namespace, as the server knows its kind.
#[test]
fn status_names_cluster_scoped_objects_without_a_namespace() {
    let Some(ns) = Ns::new("scope") else { return };
    let role = format!("{}-reader", ns.name);
    let stream = ns.file(
        "scope.yaml",
        &format!(
            "---
# Source: scope/templates/role.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {role}
rules: [{{apiGroups: [\"\"], resources: [configmaps], verbs: [get]}}]
---
# Source: scope/templates/settings.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data: {{a: \"1\"}}
"
        ),
    );
    ok(ns.chartseq(&["apply", &stream, "--release", "scope"]));
    let out = ok(ns.chartseq(&["status", "scope"]));
    assert!(out.contains(&format!("ClusterRole/{role}: ready")), "{out}");
    assert!(
        out.contains(&format!(
            "ConfigMap/settings (namespace {}): ready",
            ns.name
        )),
        "{out}"
    );
    ok(ns.chartseq(&["uninstall", "scope"]));
}
