use crate::lint::{Context, Diagnostic, Sink};
use crate::plan::PlanIssue;

declare_rule! {
    /// ## What it does
    /// Reports a reference of another deployment tool's ordering that names nothing that tool
    /// can find: a werf dependency (`werf.io/deploy-dependency-<id>`,
    /// `<id>.dependency.werf.io`) that matches no resource of the release in its own stage (a
    /// target in another stage, such as a CRD, a Namespace or a hook, does not count, as werf
    /// matches only within the stage), a kapp change rule naming a change group no resource
    /// has, or a draft-HIP reference naming no layer (nor subchart) of its chart. Checked for
    /// every dialect chartseq plans in, on charts that carry its annotations.
    ///
    /// ## Why is this bad?
    /// The tool passes over the reference without a word: the resource is applied without
    /// waiting for what it names, usually a typo or a renamed resource.
    ///
    /// ## Example
    /// ```yaml
    /// werf.io/deploy-dependency-db: state=ready,kind=StatefulSet,name=postgress
    /// ```
    ///
    /// Use instead: the exact kind and name of a resource of the same stage (matching is
    /// case-sensitive), `name=postgres`.
    pub static DIALECT_REFERENCE_TO_NOTHING = ("CS603", "dialect-reference-to-nothing", Error,
        "a kapp rule naming a change group no resource has; a werf dependency matching no resource of its stage", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    for analysis in ctx.dialect_analyses() {
        for issue in &analysis.issues {
            let PlanIssue::DialectReference {
                dialect,
                key,
                reference,
                reason,
                loc,
                ..
            } = issue
            else {
                continue;
            };
            let doc = crate::lint::locate::document_at(ctx.model, loc.span.start);
            let chart = doc.map_or(0, |d| ctx.model.documents[d].chart);
            let mut d = Diagnostic::new(
                &DIALECT_REFERENCE_TO_NOTHING,
                chart,
                *loc,
                format!("`{key}` names `{reference}`, which {reason}"),
            )
            .label("names nothing")
            .help(dialect.system().reference_fix);
            if let Some(doc) = doc {
                d = d.doc(doc);
            }
            sink.push(d);
        }
    }
}
