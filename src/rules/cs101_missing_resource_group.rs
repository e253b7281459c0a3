use std::collections::BTreeSet;

use crate::lint::{Context, Diagnostic, Sink};
use crate::model::ChartId;
use crate::plan::Demotion;

declare_rule! {
    /// ## What it does
    /// Reports `helm.sh/depends-on/resource-groups` naming a group that no resource of the
    /// same chart level declares. Groups are chart-scoped: a group of a subchart or of the
    /// parent is not visible; the message says where the group does exist.
    ///
    /// ## Why is this bad?
    /// Helm demotes the depending group (and every group depending on it, transitively) to
    /// the unsequenced resources: they are installed last, without waiting for anything.
    ///
    /// ## Example
    /// ```yaml
    /// helm.sh/resource-group: app
    /// helm.sh/depends-on/resource-groups: '["databse"]'
    /// ```
    ///
    /// Use instead:
    /// ```yaml
    /// helm.sh/resource-group: app
    /// helm.sh/depends-on/resource-groups: '["database"]'
    /// ```
    pub static MISSING_RESOURCE_GROUP = ("CS101", "missing-resource-group", Error,
        "depends-on names a group not declared at that chart level", check);
}

fn declared<'m>(ctx: &Context<'m>, chart: ChartId) -> BTreeSet<&'m str> {
    ctx.resources()
        .filter(|(doc, r)| ctx.model.documents[*doc].chart == chart && r.hook.is_none())
        .filter_map(|(_, r)| r.seq.group.as_ref().map(|g| g.value.as_str()))
        .collect()
}

fn check(ctx: &Context, sink: &mut Sink) {
    for demotion in &ctx.plan.demotions {
        let Demotion::MissingGroup {
            chart,
            group,
            missing,
            loc,
        } = demotion
        else {
            continue;
        };
        let groups = declared(ctx, *chart);
        if groups.contains(missing.as_str()) {
            // Demoted in the cascade: the root cause is reported on the first group.
            continue;
        }
        let chart_name = &ctx.model.charts[*chart].display;
        let elsewhere: Vec<&str> = (0..ctx.model.charts.len())
            .filter(|&c| c != *chart && declared(ctx, c).contains(missing.as_str()))
            .map(|c| ctx.model.charts[c].display.as_str())
            .collect();
        let cascade: Vec<&str> = ctx
            .plan
            .demotions
            .iter()
            .filter_map(|d| match d {
                Demotion::MissingGroup {
                    chart: c,
                    group: g,
                    missing: m,
                    ..
                } if c == chart && g != group && groups.contains(m.as_str()) => Some(g.as_str()),
                _ => None,
            })
            .collect();
        let mut d = Diagnostic::new(
            &MISSING_RESOURCE_GROUP,
            *chart,
            *loc,
            format!(
                "resource group `{group}` depends on `{missing}`, which no resource of chart {chart_name} declares"
            ),
        )
        .label(format!("`{missing}` is not a group of chart {chart_name}"));
        let similar = groups
            .iter()
            .filter(|g| strsim::damerau_levenshtein(g, missing) <= 2)
            .min_by_key(|g| strsim::damerau_levenshtein(g, missing));
        d = match (similar, elsewhere.first()) {
            (Some(s), _) => d.help(format!("did you mean `{s}`?")),
            (None, Some(_)) => d.help(format!(
                "groups are chart-scoped: `{missing}` exists in chart {}; order charts with subchart depends-on instead",
                elsewhere.join(", ")
            )),
            (None, None) => d.help(format!(
                "declare `helm.sh/resource-group: {missing}` on the resources it stands for, or remove it from the list"
            )),
        };
        d = d.note(format!(
            "group `{group}` is installed with the unsequenced resources, after every sequenced group"
        ));
        if !cascade.is_empty() {
            d = d.note(format!(
                "so are the groups that depend on it: {}",
                cascade.join(", ")
            ));
        }
        if let Some(doc) = crate::lint::locate::document_at(ctx.model, loc.span.start) {
            d = d.doc(doc);
        }
        sink.push(d);
    }
}
