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
    /// Groups left without edges by the mistake (the group that was meant, a group only the
    /// demoted ones depended on) are demoted too; this finding names them, and CS003 does not
    /// report them again. A subchart's name in the list is a subchart, not a group: subcharts
    /// are ordered with `depends-on` in `Chart.yaml`.
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

/// The declared group a misspelled reference most likely meant: close by edit distance (for
/// its length), or the same stem with a different ending (`migrate` for `migrations`); never
/// the group that holds the reference, which would make it depend on itself.
fn suggestion<'a>(groups: &BTreeSet<&'a str>, missing: &str, own: &str) -> Option<&'a str> {
    let missing_lower = missing.to_lowercase();
    groups
        .iter()
        .copied()
        .filter(|g| *g != own)
        .filter_map(|g| {
            let lower = g.to_lowercase();
            let distance = strsim::damerau_levenshtein(&lower, &missing_lower);
            let (short, long) = if lower.len() <= missing_lower.len() {
                (&lower, &missing_lower)
            } else {
                (&missing_lower, &lower)
            };
            let limit = (long.chars().count() / 3).max(2);
            let close = distance <= limit && distance < short.chars().count();
            // The same stem: most of the shorter name begins the longer one.
            let common = short
                .chars()
                .zip(long.chars())
                .take_while(|(a, b)| a == b)
                .count();
            let stem = common >= 4 && common * 4 >= short.chars().count() * 3;
            (close || stem).then_some((distance, g))
        })
        .min()
        .map(|(_, g)| g)
}

/// One reference to a group that does not exist, with everything it caused.
pub(super) struct RootCause<'d> {
    pub chart: ChartId,
    pub group: &'d str,
    pub missing: &'d str,
    pub loc: crate::source::Loc,
    /// The declared group the reference probably meant.
    pub suggestion: Option<String>,
    /// Groups demoted because they depend, directly or not, on `group`.
    pub cascade: Vec<&'d str>,
    /// Groups left without edges by this mistake (the meant group, groups whose only
    /// dependents were demoted): the same mistake, so CS003 does not report them again.
    pub isolated: Vec<&'d str>,
}

/// Every reference to a missing group that is a root cause (not demoted in a cascade).
pub(super) fn root_causes<'d>(ctx: &'d Context) -> Vec<RootCause<'d>> {
    let demotions = &ctx.plan.demotions;
    let mut out = Vec::new();
    let mut declared_cache: std::collections::BTreeMap<ChartId, BTreeSet<&str>> =
        std::collections::BTreeMap::new();
    for demotion in demotions {
        let Demotion::MissingGroup {
            chart,
            group,
            missing,
            loc,
        } = demotion
        else {
            continue;
        };
        let groups = declared_cache
            .entry(*chart)
            .or_insert_with(|| declared(ctx, *chart));
        if groups.contains(missing.as_str()) {
            // Demoted in the cascade: the root cause is reported on the first group.
            continue;
        }
        out.push(RootCause {
            chart: *chart,
            group,
            missing,
            loc: *loc,
            suggestion: suggestion(groups, missing, group).map(str::to_owned),
            cascade: Vec::new(),
            isolated: Vec::new(),
        });
    }
    // The root each cascaded group leads to: follow `missing` until it is not a group.
    let root_of = |chart: ChartId, start: &str| -> Option<usize> {
        let mut current = start;
        for _ in 0..=demotions.len() {
            if let Some(i) = out_index(&out, chart, current) {
                return Some(i);
            }
            current = demotions.iter().find_map(|d| match d {
                Demotion::MissingGroup {
                    chart: c,
                    group: g,
                    missing: m,
                    ..
                } if *c == chart && g == current => Some(m.as_str()),
                _ => None,
            })?;
        }
        None
    };
    let mut cascade = Vec::new();
    let mut isolated = Vec::new();
    for demotion in demotions {
        match demotion {
            Demotion::MissingGroup { chart, group, .. } => {
                if let Some(i) = root_of(*chart, group) {
                    if out[i].group != group {
                        cascade.push((i, group.as_str()));
                    }
                }
            }
            Demotion::Isolated {
                chart,
                group,
                dropped,
            } => {
                let by_edge = dropped.iter().find_map(|d| root_of(*chart, d));
                let by_name = || {
                    out.iter().position(|r| {
                        r.chart == *chart && r.suggestion.as_deref() == Some(group.as_str())
                    })
                };
                if let Some(i) = by_edge.or_else(by_name) {
                    isolated.push((i, group.as_str()));
                }
            }
            Demotion::MalformedDependsOn { .. } => {}
        }
    }
    for (i, g) in cascade {
        out[i].cascade.push(g);
    }
    for (i, g) in isolated {
        out[i].isolated.push(g);
    }
    out
}

fn out_index(out: &[RootCause], chart: ChartId, group: &str) -> Option<usize> {
    out.iter()
        .position(|r| r.chart == chart && r.group == group)
}

fn check(ctx: &Context, sink: &mut Sink) {
    for cause in root_causes(ctx) {
        let RootCause {
            chart,
            group,
            missing,
            loc,
            ..
        } = &cause;
        let chart_name = &ctx.model.charts[*chart].display;
        let elsewhere: Vec<&str> = (0..ctx.model.charts.len())
            .filter(|&c| c != *chart && declared(ctx, c).contains(missing))
            .map(|c| ctx.model.charts[c].display.as_str())
            .collect();
        let subchart = ctx.model.charts[*chart]
            .children
            .iter()
            .map(|&c| &ctx.model.charts[c])
            .find(|c| c.name == *missing);
        let mut d = Diagnostic::new(
            &MISSING_RESOURCE_GROUP,
            *chart,
            *loc,
            match subchart {
                Some(_) => format!(
                    "resource group `{group}` depends on `{missing}`, which is a subchart of chart {chart_name}, not a resource group"
                ),
                None => format!(
                    "resource group `{group}` depends on `{missing}`, which no resource of chart {chart_name} declares"
                ),
            },
        )
        .label(match subchart {
            Some(_) => format!("`{missing}` is a subchart, not a group"),
            None => format!("`{missing}` is not a group of chart {chart_name}"),
        });
        d = match (subchart, &cause.suggestion, elsewhere.first()) {
            (Some(_), _, _) => d.help(format!(
                "remove `{missing}` from this list: a group cannot wait for a subchart, and a level's subcharts are installed before its own groups anyway (order subcharts with `depends-on` in Chart.yaml)"
            )),
            (None, Some(s), _) => d.help(format!("did you mean `{s}`?")),
            (None, None, Some(_)) => d.help(format!(
                "groups are chart-scoped: `{missing}` exists in chart {}; order charts with subchart depends-on instead",
                elsewhere.join(", ")
            )),
            (None, None, None) => d.help(format!(
                "declare `helm.sh/resource-group: {missing}` on the resources it stands for, or remove it from the list"
            )),
        };
        if subchart.is_some() && !elsewhere.is_empty() {
            d = d.note(format!(
                "groups are chart-scoped: the group `{missing}` of chart {} is not visible here",
                elsewhere.join(", ")
            ));
        }
        d = d.note(format!(
            "group `{group}` is installed with the unsequenced resources, after every sequenced group"
        ));
        if !cause.cascade.is_empty() {
            d = d.note(format!(
                "so are the groups that depend on it: {}",
                cause.cascade.join(", ")
            ));
        }
        if !cause.isolated.is_empty() {
            d = d.note(format!(
                "so {} {} left without edges and {} installed with the unsequenced resources too",
                cause
                    .isolated
                    .iter()
                    .map(|g| format!("`{g}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                if cause.isolated.len() == 1 {
                    "is"
                } else {
                    "are"
                },
                if cause.isolated.len() == 1 {
                    "is"
                } else {
                    "are"
                },
            ));
        }
        if let Some(doc) = crate::lint::locate::document_at(ctx.model, loc.span.start) {
            d = d.doc(doc);
        }
        sink.push(d);
    }
}

#[cfg(test)]
mod tests {
    use super::suggestion;

    #[test]
    fn suggestions_fit_the_name_and_are_never_the_group_itself() {
        let groups = ["migrate", "database", "b", "cache"].into_iter().collect();
        assert_eq!(suggestion(&groups, "migrations", "app"), Some("migrate"));
        assert_eq!(suggestion(&groups, "databse", "app"), Some("database"));
        assert_eq!(suggestion(&groups, "Cache", "app"), Some("cache"));
        // `a` is one edit from `b`, but `b` holds the reference: no self-loop suggested.
        assert_eq!(suggestion(&groups, "a", "b"), None);
        // One letter is no evidence of a typo.
        assert_eq!(suggestion(&groups, "a", "app"), None);
        assert_eq!(suggestion(&groups, "queue", "app"), None);
    }
}
