//! A werf Namespace's own manual dependencies deployed on the real control plane: nelm keeps
//! them (werf/nelm `pkg/resource/metadata.go`, `manualInternalDeployDependencies`, `weight`),
//! so the Namespace floats in the first stage and is applied after the Namespace it names,
//! before the pre-install hooks (`fixtures/dialects/werf/namespaces.yaml` plans the same).

use super::dialects::{config_map, job, stream};
use super::{Audit, Ns, ok};

#[test]
fn werf_applies_a_namespace_after_the_namespace_it_depends_on() {
    let Some(ns) = Ns::new("werf-ns-deps") else {
        return;
    };
    let infra = ns.cluster_name("Namespace", "infra");
    let app = ns.cluster_name("Namespace", "app");
    let path = ns.file(
        "werf.yaml",
        &stream(&[
            (
                "app-ns.yaml",
                format!(
                    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {app}\n  annotations:\n    werf.io/deploy-dependency-infra: state=ready,kind=Namespace,name={infra}\n"
                ),
            ),
            (
                "infra-ns.yaml",
                format!("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {infra}\n"),
            ),
            (
                "migrate.yaml",
                job("migrate", "\n    helm.sh/hook: pre-install"),
            ),
            ("web.yaml", config_map("web", "")),
        ]),
    );
    let out = ok(ns.chartseq(&[
        "apply",
        &path,
        "--dialect",
        "werf",
        "--release",
        "spaces",
        "--timeout",
        "2m",
    ]));
    assert!(
        out.contains("werf (before hooks)")
            && out.contains(&format!("pre-pre-install:Namespace/{app}")),
        "{out}"
    );
    let audit = ns.audit();
    let infra_created = Audit::read(&ns.cluster.audit_log, &infra)
        .created("Namespace", &infra)
        .received
        .clone();
    let app_created = Audit::read(&ns.cluster.audit_log, &app)
        .created("Namespace", &app)
        .received
        .clone();
    assert!(infra_created < app_created, "{infra_created} {app_created}");
    assert!(
        app_created < audit.created("Job", "migrate").received,
        "{app_created}\n{audit}"
    );
    assert!(
        audit.created("ConfigMap", "web").received > audit.ready("Job", "migrate"),
        "{audit}"
    );
}
