use crate::lint::{Context, Diagnostic, Sink};
use crate::model::annotations::HOOK_WEIGHT;
use crate::plan::PlanIssue;

declare_rule! {
    /// ## What it does
    /// Reports an ordering value of another deployment tool that the tool refuses, or that it
    /// silently replaces: a werf weight that is not an integer, an unknown `werf.io/deploy-on`
    /// event, a `werf.io/deploy-dependency-<id>` value outside nelm's properties grammar
    /// (`state=present|ready` and at least one of `kind`, `name`, `namespace`, `group`,
    /// `version`, none empty, no other property), a `werf.io/delete-dependency-<id>` without
    /// `state` (nelm's validator lets it through and its uninstall then fails reading it: werf
    /// refuses to uninstall the release) or with a value nelm's `validateDeleteDependencies`
    /// refuses (then werf silently passes over every delete dependency of that object), a
    /// `<id>.dependency.werf.io` or external
    /// dependency that is not `apiVersion:kind[:namespace]:name` (or `type/name`), a werf
    /// tracking value nelm's `validateTrack` refuses (`werf.io/fail-mode` other than
    /// `FailWholeDeployProcessImmediately`, `HopeUntilEndOfDeployProcess` or
    /// `IgnoreAndContinueDeployProcess`; `werf.io/failures-allowed-per-replica` not an integer
    /// of 0 or more; `werf.io/no-activity-timeout` not a Go duration of 0 or more), an Argo CD
    /// sync wave that is not an integer (Argo CD uses `helm.sh/hook-weight`, else wave 0, without
    /// a word), a KOTS phase that is not an integer (KOTS logs it and uses phase 0), a KOTS
    /// `wait-for-properties` pair KOTS refuses, what kapp refuses in a chart's kapp
    /// configuration (`Config` objects and `ConfigMap`s labelled `kapp.k14s.io/config`: a value
    /// of the wrong type, an unknown matcher, a `minimumRequiredVersion` it does not accept)
    /// and two different objects of one identity (kapp's "Found resource '…' multiple times
    /// with different content"), and what the draft HIP's planner refuses.
    /// Checked for every dialect chartseq plans in, on charts that carry its annotations. A
    /// `helm.sh/hook-weight` that is not an integer on a Helm hook is CS403's. Not checked yet:
    /// a KOTS phase outside −9999…9999 (KOTS deploys it as written; `kots lint` rejects it).
    ///
    /// ## Why is this bad?
    /// werf refuses the whole release before applying anything; Argo CD installs the resource
    /// in another wave than the one written.
    ///
    /// ## Example
    /// ```yaml
    /// werf.io/weight: "1.5"
    /// werf.io/deploy-dependency-db: kind=StatefulSet,name=postgres
    /// argocd.argoproj.io/sync-wave: " 5"
    /// ```
    ///
    /// Use instead:
    /// ```yaml
    /// werf.io/weight: "2"
    /// werf.io/deploy-dependency-db: state=ready,kind=StatefulSet,name=postgres
    /// argocd.argoproj.io/sync-wave: "5"
    /// ```
    pub static INVALID_DIALECT_VALUE = ("CS602", "invalid-dialect-value", Error,
        "a dialect value its tool rejects or silently replaces (werf weight not an integer; Argo wave not an integer; KOTS phase not an integer or outside −9999…9999; kapp change-rule grammar; werf dependency properties; KOTS property pairs)", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    for analysis in ctx.dialect_analyses() {
        let tool = analysis.entry.tool;
        let issues = (analysis.issues.iter().map(|i| (i, "install")))
            .chain(analysis.uninstall_issues.iter().map(|i| (i, "uninstall")));
        for (issue, operation) in issues {
            let (key, value, loc, message, help) = match issue {
                PlanIssue::InvalidDialectValue {
                    key,
                    value,
                    reason,
                    loc,
                    ..
                } => (
                    key,
                    value,
                    loc,
                    format!(
                        "`{key}: {value:?}` is {reason}, so {tool} refuses to {operation} the release"
                    ),
                    format!("write a value {tool} accepts; see `chartseq explain CS602`"),
                ),
                PlanIssue::ReplacedDialectValue {
                    key,
                    value,
                    replacement,
                    loc,
                    ..
                } => (
                    key,
                    value,
                    loc,
                    format!(
                        "`{key}: {value:?}` is not an integer, so {tool} silently uses {replacement} instead"
                    ),
                    "write a quoted integer with no spaces, like `\"5\"`".to_owned(),
                ),
                PlanIssue::IgnoredDialectValue {
                    key,
                    value,
                    reason,
                    ignored,
                    loc,
                    ..
                } => (
                    key,
                    value,
                    loc,
                    format!(
                        "`{key}: {value:?}` is {reason}, so {tool} silently passes over {ignored}"
                    ),
                    format!("write a value {tool} accepts; see `chartseq explain CS602`"),
                ),
                _ => continue,
            };
            let doc = crate::lint::locate::document_at(ctx.model, loc.span.start);
            let helm_hook_weight = key == HOOK_WEIGHT
                && doc
                    .and_then(|d| ctx.model.resource(d))
                    .and_then(|r| r.hook.as_ref())
                    .is_some_and(|h| h.invalid_weight.is_some());
            if helm_hook_weight {
                continue;
            }
            let chart = doc.map_or(0, |d| ctx.model.documents[d].chart);
            let mut d = Diagnostic::new(&INVALID_DIALECT_VALUE, chart, *loc, message)
                .label(format!("{tool} cannot read {value:?}"))
                .help(help);
            if let Some(doc) = doc {
                d = d.doc(doc);
            }
            sink.push(d);
        }
    }
}
