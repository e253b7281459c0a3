//! werf's own uninstall order on the real control plane (nelm's native `release uninstall`,
//! werf/nelm @ 778b1f0, `pkg/plan/plan_build.go` `connectInternalDeleteDependencies`): a
//! `Deployment` with `werf.io/delete-dependency-db` is deleted once the `StatefulSet` it names is
//! gone (nelm's README example), a Role once its `RoleBinding` is gone, a `ServiceAccount` once the
//! `Deployment` running as it and the binding naming it are gone (nelm's automatic delete
//! dependencies); a `werf.io/resource-policy: keep` `ConfigMap` stays, and the pre-delete hook
//! runs before anything is deleted. The exact reverse of install would delete the `Deployment`
//! first (it waits for its `ServiceAccount` and binding at install).

use super::dialects::{config_map, deployment, job, stream};
use super::{Ns, ok};

#[test]
fn werf_uninstall_deletes_each_object_once_what_it_waits_for_is_gone() {
    let Some(ns) = Ns::new("werf-uninstall") else {
        return;
    };
    let app = deployment(
        "app",
        "\n    werf.io/delete-dependency-db: state=absent,kind=StatefulSet,name=postgres",
        "1s",
    )
    .replace("    spec:\n", "    spec:\n      serviceAccountName: app\n");
    assert!(app.contains("serviceAccountName: app"), "{app}");
    let path = ns.file(
        "werf.yaml",
        &stream(&[
            ("sa.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: app\n".to_owned()),
            (
                "role.yaml",
                "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: app\nrules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [get]\n".to_owned(),
            ),
            (
                "binding.yaml",
                format!(
                    "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: app\nroleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: app}}\nsubjects:\n- {{kind: ServiceAccount, name: app, namespace: {}}}\n",
                    ns.name
                ),
            ),
            ("app.yaml", app),
            (
                "db.yaml",
                "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: postgres\nspec:\n  serviceName: postgres\n  selector: {matchLabels: {app: postgres}}\n  template:\n    metadata:\n      labels: {app: postgres}\n    spec:\n      containers:\n      - {name: postgres, image: registry.k8s.io/pause:3.10}\n".to_owned(),
            ),
            ("kept.yaml", config_map("kept", "\n    werf.io/resource-policy: keep")),
            ("cleanup.yaml", job("cleanup", "\n    helm.sh/hook: pre-delete")),
        ]),
    );
    ok(ns.chartseq(&[
        "apply",
        &path,
        "--dialect",
        "werf",
        "--release",
        "shop",
        "--timeout",
        "3m",
    ]));
    let (code, plan, err) =
        crate::run(crate::chartseq().args(["plan", &path, "--dialect", "werf", "--uninstall"]));
    assert_eq!(code, 0, "{err}");
    assert!(plan.contains("Uninstall order (werf's own):"), "{plan}");
    assert!(
        plan.contains("Not deleted (as werf leaves them): ConfigMap/kept"),
        "{plan}"
    );
    ok(ns.chartseq(&["uninstall", "shop", "--timeout", "3m"]));
    let audit = ns.audit();
    let deleted = |resource: &str, name: &str| {
        audit
            .events
            .iter()
            .find(|e| {
                e.verb == "delete"
                    && e.resource == resource
                    && e.name == name
                    && (200..300).contains(&e.code)
            })
            .unwrap_or_else(|| panic!("{resource}/{name} is not deleted:\n{audit}"))
    };
    let before = |first: (&str, &str), then: (&str, &str)| {
        let (a, b) = (deleted(first.0, first.1), deleted(then.0, then.1));
        assert!(
            a.completed < b.received,
            "{}/{} is deleted before {}/{} is asked for: {} < {}\n{audit}",
            first.0,
            first.1,
            then.0,
            then.1,
            a.completed,
            b.received
        );
    };
    before(("statefulsets", "postgres"), ("deployments", "app"));
    before(("rolebindings", "app"), ("roles", "app"));
    before(("deployments", "app"), ("serviceaccounts", "app"));
    before(("rolebindings", "app"), ("serviceaccounts", "app"));
    assert!(
        !audit.deletions().contains(&"configmaps/kept".to_owned()),
        "{audit}"
    );
    let first_delete = audit
        .events
        .iter()
        .filter(|e| e.verb == "delete" && e.resource != "jobs" && e.resource != "pods")
        .map(|e| e.received.clone())
        .min()
        .expect("deletions");
    assert!(audit.ready("Job", "cleanup") < first_delete, "{audit}");
}

/// What werf leaves when its release is uninstalled it also leaves when the object leaves the
/// chart (nelm's `BuildResources` filters `skip-delete` from what an upgrade removes): an
/// upgrade without the `werf.io/resource-policy: skip-delete` `ConfigMap` keeps it, and says
/// so, while the other one removed is pruned.
#[test]
fn werf_upgrade_keeps_a_skip_delete_object_removed_from_the_chart() {
    let Some(ns) = Ns::new("werf-skip-delete") else {
        return;
    };
    let first = ns.file(
        "v1.yaml",
        &stream(&[
            ("app.yaml", config_map("app", "")),
            (
                "kept.yaml",
                config_map("kept", "\n    werf.io/resource-policy: skip-delete"),
            ),
            ("gone.yaml", config_map("gone", "")),
        ]),
    );
    ok(ns.chartseq(&[
        "apply",
        &first,
        "--dialect",
        "werf",
        "--release",
        "shop",
        "--timeout",
        "2m",
    ]));
    let second = ns.file("v2.yaml", &stream(&[("app.yaml", config_map("app", ""))]));
    let (code, out, err) = ns.chartseq(&[
        "apply",
        &second,
        "--dialect",
        "werf",
        "--release",
        "shop",
        "--timeout",
        "2m",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    // Progress notes go to standard error.
    assert!(
        err.contains(&format!(
            "kept ConfigMap/kept (namespace {}): werf leaves it when it is removed from the chart",
            ns.name
        )),
        "{out}\n{err}"
    );
    assert!(ns.get("ConfigMap", "kept").is_some(), "{out}");
    assert!(ns.get("ConfigMap", "gone").is_none(), "{out}");
    let deleted = ns.audit().deletions();
    assert!(
        !deleted.contains(&"configmaps/kept".to_owned()),
        "{deleted:?}"
    );
}
