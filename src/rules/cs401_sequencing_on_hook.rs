use crate::lint::{Context, Diagnostic, Sink};
use crate::model::annotations::{
    DEPENDS_ON_GROUPS, DEPENDS_ON_GROUPS_ONE_SLASH, READINESS_FAILURE, READINESS_SUCCESS,
    RESOURCE_GROUP,
};

declare_rule! {
    /// ## What it does
    /// Reports sequencing or readiness annotations on a hook (a resource with
    /// `helm.sh/hook`).
    ///
    /// ## Why is this bad?
    /// Hooks are never sequenced: they run before or after the whole plan, ordered by
    /// `helm.sh/hook-weight`. The annotations are ignored, and the order they suggest does
    /// not happen.
    ///
    /// ## Example
    /// ```yaml
    /// helm.sh/hook: pre-install
    /// helm.sh/resource-group: migrate
    /// ```
    ///
    /// Use instead: drop `helm.sh/hook` to sequence the resource, or drop the sequencing
    /// annotations and order hooks with `helm.sh/hook-weight`.
    pub static SEQUENCING_ON_HOOK = ("CS401", "sequencing-on-hook", Warning,
        "sequencing or readiness annotations on a hook (ignored)", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    for (doc, r) in ctx.resources() {
        if r.hook.is_none() {
            continue;
        }
        let Some(a) = r.annotations.iter().find(|a| {
            [
                RESOURCE_GROUP,
                DEPENDS_ON_GROUPS,
                DEPENDS_ON_GROUPS_ONE_SLASH,
                READINESS_SUCCESS,
                READINESS_FAILURE,
            ]
            .contains(&a.key.as_str())
        }) else {
            continue;
        };
        sink.push(
            Diagnostic::new(
                &SEQUENCING_ON_HOOK,
                ctx.model.documents[doc].chart,
                a.key_loc,
                format!("`{}` on a hook is ignored: hooks are never sequenced", a.key),
            )
            .doc(doc)
            .label("ignored on a hook")
            .help("remove `helm.sh/hook` to sequence this resource, or order hooks with `helm.sh/hook-weight`"),
        );
    }
}
