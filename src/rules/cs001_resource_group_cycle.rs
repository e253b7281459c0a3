use crate::lint::{Context, Diagnostic, Sink};
use crate::plan::PlanIssue;

declare_rule! {
    /// ## What it does
    /// Reports resource groups of one chart level that depend on each other in a circle
    /// (a group depending on itself included). The cycle is shown as its path, with where
    /// each edge is declared.
    ///
    /// ## Why is this bad?
    /// No group of the cycle can ever start: Helm refuses to install the chart, and
    /// `chartseq plan` fails with the same cycle.
    ///
    /// ## Example
    /// ```yaml
    /// # templates/db.yaml
    /// helm.sh/resource-group: db
    /// helm.sh/depends-on/resource-groups: '["app"]'
    /// # templates/app.yaml
    /// helm.sh/resource-group: app
    /// helm.sh/depends-on/resource-groups: '["db"]'
    /// ```
    ///
    /// Use instead: remove one edge, usually the one from the lower layer (`db`).
    pub static RESOURCE_GROUP_CYCLE = ("CS001", "resource-group-cycle", Error,
        "groups of one chart level form a cycle (self-loop too)", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    for issue in &ctx.issues {
        let PlanIssue::GroupCycle { chart, path, edges } = issue else {
            continue;
        };
        let Some(&first) = edges.first() else {
            continue;
        };
        let chart_name = &ctx.model.charts[*chart].display;
        let mut d = Diagnostic::new(
            &RESOURCE_GROUP_CYCLE,
            *chart,
            first,
            format!(
                "resource groups of chart {chart_name} form a cycle: {}",
                path.join(" -> ")
            ),
        )
        .label(edge_label(path, 0))
        .help("no group of a cycle can ever start; remove one of these depends-on edges");
        for (i, loc) in edges.iter().enumerate().skip(1) {
            d = d.secondary(*loc, edge_label(path, i));
        }
        if let Some(doc) = crate::lint::locate::document_at(ctx.model, first.span.start) {
            d = d.doc(doc);
        }
        sink.push(d);
    }
}

/// The label of a cycle path's `i`-th edge (`a` depends on `b`), shared with CS002.
pub(super) fn edge_label(path: &[String], i: usize) -> String {
    match (path.get(i), path.get(i + 1)) {
        (Some(a), Some(b)) if a == b => format!("`{a}` depends on itself"),
        (Some(a), Some(b)) => format!("`{a}` depends on `{b}`"),
        _ => String::new(),
    }
}
