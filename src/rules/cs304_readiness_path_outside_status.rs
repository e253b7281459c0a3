use crate::lint::{Context, Diagnostic, Sink};
use crate::model::annotations::{READINESS_FAILURE, READINESS_SUCCESS};

declare_rule! {
    /// ## What it does
    /// Reports a readiness expression whose path names `metadata`, `spec` or another
    /// top-level field: paths are read under `.status`, so `{.spec.replicas}` means
    /// `.status.spec.replicas`.
    /// Not checked on hooks, whose annotations are ignored (CS401 says so).
    ///
    /// ## Why is this bad?
    /// The field does not exist under `.status`: the expression is never met.
    ///
    /// ## Example
    /// ```yaml
    /// helm.sh/readiness-success: '["{.spec.replicas} >= 1"]'
    /// ```
    ///
    /// Use instead: a field of the status.
    /// ```yaml
    /// helm.sh/readiness-success: '["{.readyReplicas} >= 1"]'
    /// ```
    pub static READINESS_PATH_OUTSIDE_STATUS = ("CS304", "readiness-path-outside-status", Warning,
        "a path like {.metadata.x} or {.spec.x} is read under .status and never matches", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    // A hook's sequencing and readiness annotations are ignored: CS401 is the one finding.
    for (doc, r) in ctx.resources().filter(|(_, r)| r.hook.is_none()) {
        for e in &r.facts.readiness {
            let Ok(expr) = &e.parsed else { continue };
            let Some(field) = expr.outside_status() else {
                continue;
            };
            let key = if e.failure {
                READINESS_FAILURE
            } else {
                READINESS_SUCCESS
            };
            sink.push(
                Diagnostic::new(
                    &READINESS_PATH_OUTSIDE_STATUS,
                    ctx.model.documents[doc].chart,
                    e.loc,
                    format!(
                        "readiness path `{}` (entry {} of `{key}`) is read as `{}`, which never exists",
                        expr.path(),
                        e.index,
                        expr.template().trim_start_matches('{').trim_end_matches('}')
                    ),
                )
                .doc(doc)
                .label(format!("`{field}` is not under .status"))
                .help("readiness reads the object's status only: use a status field, like `{.readyReplicas}` or `{.conditions[?(@.type==\"Ready\")].status}`"),
            );
        }
    }
}
