use crate::lint::{Context, Diagnostic, Sink};

declare_rule! {
    /// ## What it does
    /// Reports a custom resource (a kind outside the built-in Kubernetes API groups) in a
    /// resource group that others depend on, when it has no readiness annotations.
    ///
    /// ## Why is this bad?
    /// The default status checks know nothing about custom kinds: without a `Ready`
    /// condition the resource counts as ready the moment it exists, so the dependents may
    /// start before the operator has done anything.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: postgresql.cnpg.io/v1
    /// kind: Cluster
    /// metadata:
    ///   annotations:
    ///     helm.sh/resource-group: db
    /// ```
    ///
    /// Use instead: say what ready means for this kind.
    /// ```yaml
    ///     helm.sh/readiness-success: '["{.readyInstances} >= 1"]'
    ///     helm.sh/readiness-failure: '["{.phase} == Failed"]'
    /// ```
    pub static UNJUDGEABLE_READINESS = ("CS306", "unjudgeable-readiness", Info,
        "a custom resource others depend on has no readiness annotations", check);
}

/// API groups whose kinds the default status checks (kstatus) understand or that never wait.
fn built_in(group: &str) -> bool {
    group.is_empty()
        || !group.contains('.')
        || group.ends_with(".k8s.io") && !group.ends_with(".x-k8s.io")
}

fn check(ctx: &Context, sink: &mut Sink) {
    for (doc, r, chart, group) in ctx.gates_without_readiness() {
        if built_in(&r.id.group) {
            continue;
        }
        sink.push(
            Diagnostic::new(
                &UNJUDGEABLE_READINESS,
                chart,
                group.loc,
                format!(
                    "the {} `{}` ({}) gates group `{}` but its readiness cannot be judged: it counts as ready once it has a Ready condition or none at all",
                    r.id.kind, r.id.name, r.api_version, group.value
                ),
            )
            .doc(doc)
            .label("others depend on this group")
            .help("add `helm.sh/readiness-success` and `helm.sh/readiness-failure` expressions over its status"),
        );
    }
}
