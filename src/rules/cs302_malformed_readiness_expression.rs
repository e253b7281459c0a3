use crate::lint::{Context, Diagnostic, Sink};
use crate::model::annotations::{READINESS_FAILURE, READINESS_SUCCESS};

declare_rule! {
    /// ## What it does
    /// Reports a readiness expression that does not parse: it must be
    /// `{<jsonpath>} <op> <value>` with the operator (`==`, `!=`, `<`, `<=`, `>`, `>=`)
    /// between whitespace, a `JSONPath` in the kubectl dialect, and a scalar value. Checked
    /// with the parser `chartseq apply` evaluates with.
    /// Not checked on hooks, whose annotations are ignored (CS401 says so).
    ///
    /// ## Why is this bad?
    /// Helm cannot evaluate the expression: the resource never becomes ready (or never
    /// fails), and the install waits until the timeout.
    ///
    /// ## Example
    /// ```yaml
    /// helm.sh/readiness-success: '["{.succeeded}>=1"]'
    /// ```
    ///
    /// Use instead:
    /// ```yaml
    /// helm.sh/readiness-success: '["{.succeeded} >= 1"]'
    /// ```
    pub static MALFORMED_READINESS_EXPRESSION = ("CS302", "malformed-readiness-expression", Error,
        "the expression or its JSONPath does not parse, or the value is not a scalar", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    // A hook's sequencing and readiness annotations are ignored: CS401 is the one finding.
    for (doc, r) in ctx.resources().filter(|(_, r)| r.hook.is_none()) {
        for e in &r.facts.readiness {
            let Err(error) = &e.parsed else { continue };
            let key = if e.failure {
                READINESS_FAILURE
            } else {
                READINESS_SUCCESS
            };
            // The expression is shown on one line (escaped); the pointer counts the escapes.
            let before = e
                .text
                .get(..error.offset.min(e.text.len()))
                .map_or(0, |t| crate::safe::one_line(t).len());
            let pointer = format!("{}^", " ".repeat(before));
            sink.push(
                Diagnostic::new(
                    &MALFORMED_READINESS_EXPRESSION,
                    ctx.model.documents[doc].chart,
                    e.loc,
                    format!(
                        "readiness expression `{}` (entry {} of `{key}`) does not parse: {}",
                        e.text, e.index, error.message
                    ),
                )
                .doc(doc)
                .label("this expression cannot be evaluated")
                .note_lines(&["in the expression:", &e.text, &pointer])
                .help("write `{<jsonpath>} <op> <value>` with spaces around the operator, e.g. `{.readyReplicas} >= 1`"),
            );
        }
    }
}
