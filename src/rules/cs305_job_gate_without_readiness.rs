use crate::lint::{Context, Diagnostic, Sink};

declare_rule! {
    /// ## What it does
    /// Reports a Job in a resource group that other groups depend on, when the Job has no
    /// readiness annotations.
    ///
    /// ## Why is this bad?
    /// By default (kstatus) a Job counts as ready as soon as it has started, not when it has
    /// finished: the dependent groups start while the migration or setup Job is still
    /// running, and are not stopped when it fails.
    ///
    /// ## Example
    /// ```yaml
    /// kind: Job
    /// metadata:
    ///   annotations:
    ///     helm.sh/resource-group: migrate
    /// ```
    ///
    /// Use instead:
    /// ```yaml
    /// kind: Job
    /// metadata:
    ///   annotations:
    ///     helm.sh/resource-group: migrate
    ///     helm.sh/readiness-success: '["{.succeeded} >= 1"]'
    ///     helm.sh/readiness-failure: '["{.failed} >= 1"]'
    /// ```
    pub static JOB_GATE_WITHOUT_READINESS = ("CS305", "job-gate-without-readiness", Warning,
        "a Job others depend on has no readiness annotations (a started Job counts as ready)", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    for (doc, r, chart, group) in ctx.gates_without_readiness() {
        if r.id.kind != "Job" || r.id.group != "batch" {
            continue;
        }
        sink.push(
            Diagnostic::new(
                &JOB_GATE_WITHOUT_READINESS,
                chart,
                group.loc,
                format!(
                    "the Job `{}` gates group `{}` but a started Job counts as ready, so dependents do not wait for it to finish",
                    r.id.name, group.value
                ),
            )
            .doc(doc)
            .label("others depend on this group")
            .help("add `helm.sh/readiness-success: '[\"{.succeeded} >= 1\"]'` and `helm.sh/readiness-failure: '[\"{.failed} >= 1\"]'`"),
        );
    }
}
