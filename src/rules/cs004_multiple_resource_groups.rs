use crate::lint::{Context, Diagnostic, Sink};
use crate::plan::PlanIssue;

declare_rule! {
    /// ## What it does
    /// Reports a resource identity (API group, kind, namespace, name) that appears twice at
    /// one chart level with two different `helm.sh/resource-group` values.
    ///
    /// ## Why is this bad?
    /// One object cannot be installed at two points of the order: Helm rejects the chart.
    ///
    /// ## Example
    /// ```yaml
    /// kind: ConfigMap
    /// metadata: {name: settings, annotations: {helm.sh/resource-group: db}}
    /// ---
    /// kind: ConfigMap
    /// metadata: {name: settings, annotations: {helm.sh/resource-group: app}}
    /// ```
    ///
    /// Use instead: give the two objects different names, or put them in one group.
    pub static MULTIPLE_RESOURCE_GROUPS = ("CS004", "multiple-resource-groups", Error,
        "one resource identity appears in two groups", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    for issue in &ctx.issues {
        let PlanIssue::TwoGroups {
            chart,
            id,
            first,
            second,
        } = issue
        else {
            continue;
        };
        let mut d = Diagnostic::new(
            &MULTIPLE_RESOURCE_GROUPS,
            *chart,
            second.loc,
            format!(
                "resource {id} is in two resource groups: `{}` and `{}`",
                first.value, second.value
            ),
        )
        .label(format!("group `{}`", second.value))
        .secondary(
            first.loc,
            format!("first placed in group `{}`", first.value),
        )
        .help("one object is installed once: rename one of them, or use one group");
        if let Some(doc) = crate::lint::locate::document_at(ctx.model, second.loc.span.start) {
            d = d.doc(doc);
        }
        sink.push(d);
    }
}
