use crate::lint::{Context, Diagnostic, Sink};
use crate::plan::PlanIssue;

declare_rule! {
    /// ## What it does
    /// Reports another deployment tool's ordering that forms a cycle: werf dependencies
    /// (`werf.io/deploy-dependency-<id>`, `<id>.dependency.werf.io`), werf's delete
    /// dependencies (`werf.io/delete-dependency-<id>` and nelm's automatic ones: a CRD after
    /// its objects, a `Role` after its bindings, a `ServiceAccount` after what runs as it), which
    /// order its uninstall, or kapp change rules. The
    /// cycle is shown as its path, with the annotation that makes each resource wait for the
    /// next. werf ties a dependency to the first matching resource of the stage (resources
    /// with dependencies first), so a dependency naming only a kind can match the very
    /// resource that declares it: a cycle of one. Checked for every dialect chartseq plans in,
    /// on charts that carry its annotations.
    ///
    /// ## Why is this bad?
    /// werf and kapp refuse to deploy the release: no resource of a cycle can ever start. A
    /// cycle of delete dependencies lets werf install the release and makes it refuse to
    /// uninstall it.
    ///
    /// ## Example
    /// ```yaml
    /// # Deployment api
    /// werf.io/deploy-dependency-worker: state=ready,kind=Deployment,name=worker
    /// # Deployment worker
    /// werf.io/deploy-dependency-api: state=present,kind=Deployment,name=api
    /// ```
    ///
    /// Use instead: remove one of the dependencies, and name each target exactly (`kind` and
    /// `name`).
    pub static DIALECT_CYCLE = ("CS605", "dialect-cycle", Error,
        "kapp rules or werf dependencies form a cycle (the path, with each edge's template line)", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    for analysis in ctx.dialect_analyses() {
        let tool = analysis.entry.tool;
        let issues = (analysis.issues.iter().map(|i| (i, "order", "deploy"))).chain(
            analysis
                .uninstall_issues
                .iter()
                .map(|i| (i, "uninstall order", "uninstall")),
        );
        for (issue, order, operation) in issues {
            let PlanIssue::DialectCycle { path, edges, .. } = issue else {
                continue;
            };
            let Some(&first) = edges.first() else {
                continue;
            };
            let doc = crate::lint::locate::document_at(ctx.model, first.span.start);
            let chart = doc.map_or(0, |d| ctx.model.documents[d].chart);
            let mut d = Diagnostic::new(
                &DIALECT_CYCLE,
                chart,
                first,
                format!(
                    "the {tool} {order} forms a cycle: {}, so {tool} refuses to {operation} the release",
                    path.join(" -> ")
                ),
            )
            .label(edge_label(path, 0))
            .help("no resource of a cycle can ever start; remove one of these dependencies");
            if path.len() == 2 && path[0] == path[1] {
                d = d.note(
                    "the dependency matches the resource that declares it: werf ties a dependency to the first matching resource of its stage, resources with dependencies first; name the target exactly (`kind` and `name`)",
                );
            }
            for (i, loc) in edges.iter().enumerate().skip(1) {
                d = d.secondary(*loc, edge_label(path, i));
            }
            if let Some(doc) = doc {
                d = d.doc(doc);
            }
            sink.push(d);
        }
    }
}

/// The label of a cycle path's `i`-th edge (`a` waits for `b`).
fn edge_label(path: &[String], i: usize) -> String {
    match (path.get(i), path.get(i + 1)) {
        (Some(a), Some(b)) if a == b => format!("`{a}` waits for itself"),
        (Some(a), Some(b)) => format!("`{a}` waits for `{b}`"),
        _ => String::new(),
    }
}
