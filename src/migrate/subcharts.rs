//! Sibling subcharts the source tool applies wholly one before the other (every resource of
//! one, its own subcharts included, before every resource of the other): HIP-0025 keeps that
//! order with `dependencies[].depends-on` in their parent's `Chart.yaml` (DIALECTS.md §7.1.1).
//! migrate edits templates only, so it asks for that line as a manual edit; once it is written
//! the proof keeps the order, and a run of `migrate` on the edited chart asks for nothing.

use std::collections::BTreeMap;

use super::{Manual, Mapping};
use crate::model::{ChartId, DocId, Model};
use crate::parse::Span;
use crate::plan::Plan;
use crate::plan::graph::StepGraph;
use crate::source::Loc;

/// Whether chart `c` is `root` or one of its subcharts, at any depth.
fn within(model: &Model, root: ChartId, c: ChartId) -> bool {
    let mut cur = Some(c);
    while let Some(x) = cur {
        if x == root {
            return true;
        }
        cur = model.charts[x].parent;
    }
    false
}

/// Adds a manual edit for each subchart the tool applies only after all of a sibling.
pub fn order(model: &Model, plan: &Plan, tool: &str, mapping: &mut Mapping) {
    let graph = StepGraph::new(&plan.steps);
    let mut steps_of: BTreeMap<DocId, Vec<usize>> = BTreeMap::new();
    for (i, s) in plan.steps.iter().enumerate() {
        for &d in &s.resources {
            if model.resource(d).is_some() {
                steps_of.entry(d).or_default().push(i);
            }
        }
    }
    let before = |a: DocId, b: DocId| {
        steps_of[&a]
            .iter()
            .any(|&sa| steps_of[&b].iter().any(|&sb| graph.before(sa, sb)))
    };
    for chart in &model.charts {
        let Some(info) = &chart.info else { continue };
        let children: Vec<ChartId> = chart
            .children
            .iter()
            .copied()
            .filter(|&c| model.charts[c].enabled)
            .collect();
        let docs: Vec<Vec<DocId>> = children
            .iter()
            .map(|&c| {
                steps_of
                    .keys()
                    .copied()
                    .filter(|&d| within(model, c, model.documents[d].chart))
                    .collect()
            })
            .collect();
        for (j, &later) in children.iter().enumerate() {
            let declared: Vec<String> = info
                .dependency_depends_on
                .iter()
                .filter(|(name, _)| *name == model.charts[later].name)
                .flat_map(|(_, list)| list.value.clone().unwrap_or_default())
                .collect();
            let mut first: Vec<&str> = Vec::new();
            for (i, &earlier) in children.iter().enumerate() {
                let name = model.charts[earlier].name.as_str();
                if i == j || docs[i].is_empty() || docs[j].is_empty() {
                    continue;
                }
                if declared.iter().any(|d| d == name) {
                    continue;
                }
                if docs[i]
                    .iter()
                    .all(|&a| docs[j].iter().all(|&b| before(a, b)))
                {
                    first.push(name);
                }
            }
            if first.is_empty() {
                continue;
            }
            let later_name = &model.charts[later].name;
            let how = if model.charts[later].declared {
                format!("in its `dependencies` entry for `{later_name}`")
            } else {
                format!(
                    "in a `dependencies` entry for `{later_name}` (the subchart is vendored under charts/ without one)"
                )
            };
            mapping.manual.push(Manual {
                // NOTE: no document: the edit is in Chart.yaml, and an index past the documents
                // names no resource in the report.
                doc: usize::MAX,
                at: Some(Loc {
                    file: info.meta.file,
                    span: Span { start: 0, end: 0 },
                }),
                reason: format!(
                    "{tool} applies every resource of subchart {} before those of {}: HIP-0025 keeps that with `depends-on` {how}; migrate edits templates only",
                    first
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    model.charts[later].display,
                ),
                snippet: format!(
                    "dependencies:\n  - name: {later_name}{}\n    depends-on: [{}]",
                    model.charts[later]
                        .info
                        .as_ref()
                        .and_then(|i| i.meta.version.as_deref())
                        .map(|v| format!("\n    version: {v}"))
                        .unwrap_or_default(),
                    first.join(", ")
                ),
            });
        }
    }
}
