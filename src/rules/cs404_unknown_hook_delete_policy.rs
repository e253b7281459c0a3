use crate::lint::{Context, Diagnostic, Sink};
use crate::model::annotations::HOOK_DELETE_POLICY;

declare_rule! {
    /// ## What it does
    /// Reports `helm.sh/hook-delete-policy` values other than `before-hook-creation`,
    /// `hook-succeeded` and `hook-failed`.
    ///
    /// ## Why is this bad?
    /// Helm does not know the policy: the hook resource is never deleted as intended, and
    /// the next upgrade fails because it already exists.
    ///
    /// ## Example
    /// ```yaml
    /// helm.sh/hook-delete-policy: hook-succeed
    /// ```
    ///
    /// Use instead:
    /// ```yaml
    /// helm.sh/hook-delete-policy: hook-succeeded
    /// ```
    pub static UNKNOWN_HOOK_DELETE_POLICY = ("CS404", "unknown-hook-delete-policy", Error,
        "helm.sh/hook-delete-policy has an unknown value", check);
}

const POLICIES: [&str; 3] = ["before-hook-creation", "hook-succeeded", "hook-failed"];

fn check(ctx: &Context, sink: &mut Sink) {
    for (doc, r) in ctx.resources() {
        let Some(hook) = &r.hook else { continue };
        let unknown: Vec<&String> = hook
            .delete_policies
            .iter()
            .filter(|p| !p.is_empty() && !POLICIES.contains(&p.as_str()))
            .collect();
        let Some(first) = unknown.first() else {
            continue;
        };
        let Some(a) = r.annotation(HOOK_DELETE_POLICY) else {
            continue;
        };
        let suggestion = POLICIES
            .iter()
            .min_by_key(|p| strsim::damerau_levenshtein(p, first))
            .filter(|p| strsim::damerau_levenshtein(p, first) <= 4);
        let shown: Vec<String> = unknown.iter().map(|p| format!("`{p}`")).collect();
        sink.push(
            Diagnostic::new(
                &UNKNOWN_HOOK_DELETE_POLICY,
                ctx.model.documents[doc].chart,
                a.value_loc,
                format!("unknown hook delete policy {}", shown.join(", ")),
            )
            .doc(doc)
            .label("unknown policy")
            .note("Helm does not delete the hook as intended, and the next upgrade can fail because it still exists")
            .help(match suggestion {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("policies are: {}", POLICIES.join(", ")),
            }),
        );
    }
}
