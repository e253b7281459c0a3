use crate::lint::{Context, Diagnostic, Sink};
use crate::model::annotations::{READINESS_FAILURE, READINESS_SUCCESS};

declare_rule! {
    /// ## What it does
    /// Reports a readiness expression that compares with `<`, `<=`, `>` or `>=` against a
    /// value that is not a number.
    /// Not checked on hooks, whose annotations are ignored (CS401 says so).
    ///
    /// ## Why is this bad?
    /// Ordering operators compare numbers only; on anything else the expression is never
    /// met, so the resource never becomes ready (or never fails).
    ///
    /// ## Example
    /// ```yaml
    /// helm.sh/readiness-success: '["{.phase} >= Running"]'
    /// ```
    ///
    /// Use instead:
    /// ```yaml
    /// helm.sh/readiness-success: '["{.phase} == Running"]'
    /// ```
    pub static NON_NUMERIC_ORDERING_COMPARISON = ("CS303", "non-numeric-ordering-comparison", Error,
        "<, <=, > or >= with a non-numeric value", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    // A hook's sequencing and readiness annotations are ignored: CS401 is the one finding.
    for (doc, r) in ctx.resources().filter(|(_, r)| r.hook.is_none()) {
        for e in &r.facts.readiness {
            let Ok(expr) = &e.parsed else { continue };
            if !expr.ordering_on_non_number() {
                continue;
            }
            let key = if e.failure {
                READINESS_FAILURE
            } else {
                READINESS_SUCCESS
            };
            sink.push(
                Diagnostic::new(
                    &NON_NUMERIC_ORDERING_COMPARISON,
                    ctx.model.documents[doc].chart,
                    e.loc,
                    format!(
                        "readiness expression `{}` (entry {} of `{key}`) orders against `{}`, which is not a number, so it is never met",
                        e.text,
                        e.index,
                        expr.raw_value()
                    ),
                )
                .doc(doc)
                .label("never met")
                .help(format!(
                    "compare strings with == or !=: `{{{}}} == {}`",
                    expr.path(),
                    expr.raw_value()
                )),
            );
        }
    }
}
