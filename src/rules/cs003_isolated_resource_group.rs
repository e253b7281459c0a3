use crate::lint::{Context, Diagnostic, Sink};
use crate::model::ChartId;
use crate::plan::Demotion;
use crate::rules::MISSING_RESOURCE_GROUP;

declare_rule! {
    /// ## What it does
    /// Reports a resource group that neither depends on another group nor is depended on,
    /// in a chart level that has two or more groups.
    ///
    /// ## Why is this bad?
    /// Helm treats such a group as unsequenced: its resources are installed after every
    /// sequenced group of the level, which is rarely what the group name suggests.
    ///
    /// A group left without edges by a reference to a missing group (a misspelling of its
    /// name, or a dependent demoted by one) is reported once, by CS101, which names it.
    ///
    /// ## Example
    /// ```yaml
    /// helm.sh/resource-group: metrics   # nothing depends on it, it depends on nothing
    /// ```
    ///
    /// Use instead: add the edge that was meant, or drop the annotation.
    /// ```yaml
    /// helm.sh/resource-group: metrics
    /// helm.sh/depends-on/resource-groups: '["app"]'
    /// ```
    pub static ISOLATED_RESOURCE_GROUP = ("CS003", "isolated-resource-group", Warning,
        "a group with no edges, at a level with two or more groups", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    // A group isolated by a misspelled or missing reference is the same mistake: CS101 names
    // it (one mistake, one finding) unless CS101 is not selected.
    let explained: Vec<(ChartId, String)> =
        if ctx.settings.selection.enabled(&MISSING_RESOURCE_GROUP) {
            super::cs101_missing_resource_group::root_causes(ctx)
                .iter()
                .flat_map(|c| c.isolated.iter().map(|g| (c.chart, (*g).to_owned())))
                .collect()
        } else {
            Vec::new()
        };
    for demotion in &ctx.plan.demotions {
        let Demotion::Isolated { chart, group, .. } = demotion else {
            continue;
        };
        if explained.iter().any(|(c, g)| c == chart && g == group) {
            continue;
        }
        let member = ctx.resources().find(|(doc, r)| {
            ctx.model.documents[*doc].chart == *chart
                && r.hook.is_none()
                && r.seq.group.as_ref().is_some_and(|g| g.value == *group)
        });
        let Some((doc, r)) = member else { continue };
        let Some(g) = &r.seq.group else { continue };
        sink.push(
            Diagnostic::new(
                &ISOLATED_RESOURCE_GROUP,
                *chart,
                g.loc,
                format!(
                    "resource group `{group}` has no dependencies and nothing depends on it, so it is installed with the unsequenced resources"
                ),
            )
            .doc(doc)
            .label("isolated group")
            .help("add `helm.sh/depends-on/resource-groups` for the order you meant, or remove the group"),
        );
    }
}
