use crate::lint::{Context, Diagnostic, Sink};
use crate::model::annotations::{READINESS_FAILURE, READINESS_SUCCESS};

declare_rule! {
    /// ## What it does
    /// Reports a resource with only one of `helm.sh/readiness-success` and
    /// `helm.sh/readiness-failure` (or with one of them empty).
    ///
    /// ## Why is this bad?
    /// Custom readiness applies only when both are present and non-empty; with one alone
    /// Helm silently falls back to its default status checks, so the expression you wrote
    /// is never evaluated.
    ///
    /// ## Example
    /// ```yaml
    /// helm.sh/readiness-success: '["{.succeeded} >= 1"]'
    /// ```
    ///
    /// Use instead:
    /// ```yaml
    /// helm.sh/readiness-success: '["{.succeeded} >= 1"]'
    /// helm.sh/readiness-failure: '["{.failed} >= 1"]'
    /// ```
    pub static ONE_SIDED_READINESS = ("CS301", "one-sided-readiness", Error,
        "only one of readiness-success / readiness-failure", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    for (doc, r) in ctx.resources() {
        let non_empty = |l: &Option<
            crate::model::annotations::Spanned<crate::model::annotations::NameList>,
        >| {
            l.as_ref()
                .is_some_and(|s| s.value.as_ref().map_or(true, |v| !v.is_empty()))
        };
        let success = non_empty(&r.seq.readiness_success);
        let failure = non_empty(&r.seq.readiness_failure);
        let (present, missing, list) = match (success, failure) {
            (true, false) => (
                READINESS_SUCCESS,
                READINESS_FAILURE,
                &r.seq.readiness_success,
            ),
            (false, true) => (
                READINESS_FAILURE,
                READINESS_SUCCESS,
                &r.seq.readiness_failure,
            ),
            _ => continue,
        };
        let Some(list) = list else { continue };
        sink.push(
            Diagnostic::new(
                &ONE_SIDED_READINESS,
                ctx.model.documents[doc].chart,
                list.loc,
                format!("`{present}` without a non-empty `{missing}` is ignored"),
            )
            .doc(doc)
            .label(format!("`{missing}` is missing"))
            .note("custom readiness applies only when both annotations are present and non-empty; otherwise the default status checks decide")
            .help(format!("add `{missing}` (for example `'[\"{{.failed}} >= 1\"]'`), or remove `{present}`")),
        );
    }
}
