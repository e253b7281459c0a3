//! The order the draft sequencing HIP describes (DIALECTS.md §6), as plan steps.
//!
//! The drafts scope layers per chart ("sandboxed within the chart"; subchart layers are named
//! apart) and order subcharts by `Chart.yaml`, as HIP-0025 does, so a draft plan is HIP-0025's
//! per-level plan with the groups read from the draft's keys: each layer is a group waiting for
//! the layers it names; each distinct `helm.sh/weight` of a level (on resources without a
//! layer) is a group waiting for the next lower weight ("the same weighting rules that hooks
//! use"); resources with neither go last. Unlike HIP-0025, the drafts never demote: a layer
//! without edges is an ordinary first layer, while a layer or subchart named but not found
//! is an error ("must exist"), and so is a cycle. A resource's subchart dependency is met by
//! construction, as every subchart is installed before its parent's own resources.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::annotations::{Sequencing, Spanned};
use crate::model::draft::Reference;
use crate::model::{ChartId, DocId, Model};
use crate::plan::{Dialect, GroupsFrom, Plan, PlanError, PlanIssue};

/// The group name of a weight.
#[must_use]
pub fn weight_group(weight: i64) -> String {
    format!("weight={weight}")
}

/// Plans the release in the draft's order, or every reason it cannot (a value that names
/// nothing readable, a cycle); references to nothing are passed over.
pub fn plan(model: &Model) -> Result<Plan, PlanError> {
    let (plan, issues) = analyze(model);
    let fatal: Vec<PlanIssue> = issues
        .into_iter()
        .filter(|i| !matches!(i, PlanIssue::DialectReference { .. }))
        .collect();
    if fatal.is_empty() {
        Ok(plan)
    } else {
        Err(PlanError { issues: fatal })
    }
}

/// The plan as far as it can be made, and every issue: values that name nothing readable and
/// cycles (fatal), references to a layer or subchart that is not there (passed over; also in
/// the plan's `issues`).
#[must_use]
pub fn analyze(model: &Model) -> (Plan, Vec<PlanIssue>) {
    let mut issues = Vec::new();
    let mut references = Vec::new();
    let mut sequencing: BTreeMap<DocId, Sequencing> = BTreeMap::new();
    let mut by_chart: BTreeMap<ChartId, Vec<DocId>> = BTreeMap::new();
    for doc in model.planned_documents() {
        by_chart
            .entry(model.documents[doc].chart)
            .or_default()
            .push(doc);
    }
    for (&chart, docs) in &by_chart {
        let resources: Vec<(DocId, &crate::model::Resource)> = docs
            .iter()
            .filter_map(|&d| Some((d, model.resource(d)?)))
            .collect();
        let layers: BTreeSet<&str> = resources
            .iter()
            .filter_map(|(_, r)| r.draft.layer.as_ref().map(|l| l.value.as_str()))
            .collect();
        // Weights of resources without a layer: a chain, lowest first.
        let weights: BTreeSet<i64> = resources
            .iter()
            .filter(|(_, r)| r.draft.layer.is_none())
            .filter_map(|(_, r)| r.draft.weight.as_ref().map(|w| w.value))
            .collect();
        for &(doc, r) in &resources {
            let draft = &r.draft;
            for rejected in &draft.rejected {
                issues.push(PlanIssue::rejected(Dialect::Draft, rejected));
            }
            for layer in &draft.depends_on_layers {
                if !layers.contains(layer.name.as_str()) {
                    references.push(reference(layer, "names no layer of this chart"));
                }
            }
            for sub in &draft.depends_on_charts {
                if !is_subchart(model, chart, &sub.name) {
                    references.push(reference(sub, "names no enabled subchart of this chart"));
                }
            }
            // Only the layers that are there are waited for.
            let existing: Vec<&Reference> = draft
                .depends_on_layers
                .iter()
                .filter(|n| layers.contains(n.name.as_str()))
                .collect();
            let seq = if let Some(layer) = &draft.layer {
                Sequencing {
                    group: Some(layer.clone()),
                    depends_on: existing.first().map(|first| Spanned {
                        value: Ok(existing.iter().map(|n| n.name.clone()).collect()),
                        loc: first.loc,
                    }),
                    ..Sequencing::default()
                }
            } else if let Some(weight) = &draft.weight {
                let lower = weights.range(..weight.value).next_back();
                Sequencing {
                    group: Some(Spanned {
                        value: weight_group(weight.value),
                        loc: weight.loc,
                    }),
                    depends_on: lower.map(|&w| Spanned {
                        value: Ok(vec![weight_group(w)]),
                        loc: weight.loc,
                    }),
                    ..Sequencing::default()
                }
            } else {
                continue;
            };
            sequencing.insert(doc, seq);
        }
    }
    let from = GroupsFrom {
        sequencing: &sequencing,
        keep_isolated: true,
    };
    let (mut plan, found) = super::analyze_with(model, Some(from));
    plan.dialect = Dialect::Draft;
    plan.issues.clone_from(&references);
    // Refusals of the draft's own first; then what its per-level plan finds (cycles as the
    // draft's, the rest as HIP-0025 reports them).
    if issues.is_empty() {
        for issue in found {
            issues.push(match issue {
                PlanIssue::GroupCycle { path, edges, .. } => PlanIssue::DialectCycle {
                    dialect: Dialect::Draft,
                    path,
                    edges,
                },
                other => other,
            });
        }
    }
    issues.extend(references);
    (plan, issues)
}

fn reference(at: &Reference, reason: &str) -> PlanIssue {
    PlanIssue::DialectReference {
        dialect: Dialect::Draft,
        key: at.key.to_owned(),
        reference: at.name.clone(),
        reason: reason.to_owned(),
        loc: at.loc,
    }
}

/// Whether `name` is an enabled subchart of `chart`, by its name or its alias.
fn is_subchart(model: &Model, chart: ChartId, name: &str) -> bool {
    model.charts[chart].children.iter().any(|&c| {
        let child = &model.charts[c];
        child.enabled && child.answers_to(name)
    })
}
