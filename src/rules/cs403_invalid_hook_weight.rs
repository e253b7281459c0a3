use crate::lint::{Context, Diagnostic, Sink};

declare_rule! {
    /// ## What it does
    /// Reports `helm.sh/hook-weight` values that are not integers.
    ///
    /// ## Why is this bad?
    /// Helm reads an invalid weight as 0 without a word, so the hook runs in a different
    /// place than the one written.
    ///
    /// ## Example
    /// ```yaml
    /// helm.sh/hook-weight: "first"
    /// ```
    ///
    /// Use instead:
    /// ```yaml
    /// helm.sh/hook-weight: "-5"
    /// ```
    pub static INVALID_HOOK_WEIGHT = ("CS403", "invalid-hook-weight", Warning,
        "helm.sh/hook-weight is not an integer (Helm uses 0)", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    for (doc, r) in ctx.resources() {
        let Some(weight) = r.hook.as_ref().and_then(|h| h.invalid_weight.as_ref()) else {
            continue;
        };
        sink.push(
            Diagnostic::new(
                &INVALID_HOOK_WEIGHT,
                ctx.model.documents[doc].chart,
                weight.loc,
                format!(
                    "hook weight `{}` is not an integer, so Helm uses 0",
                    weight.value
                ),
            )
            .doc(doc)
            .label("not an integer")
            .help("write a quoted integer, like `helm.sh/hook-weight: \"-5\"`"),
        );
    }
}
