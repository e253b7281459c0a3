//! `plan --format dag`: exactly what the reference implementation's `helm dag` prints
//! (`pkg/cmd/dag.go` of the split HIP-0025 pull requests), so that its golden files are
//! chartseq's tests too.
//!
//! Differences from the text plan, each the reference's: no CRD or hook lines; nested charts
//! are named by their manifest path (`parent/charts/sub`); a level's `Resource-group batches`
//! line is printed only when it has batches or a group was demoted there; a level is printed
//! only for a chart with a rendered, non-hook template document in its subtree (a subchart
//! without templates stays in its parent's batches but gets no `Chart:` block); a document that
//! holds only comments is an unsequenced manifest named by its `# Source:` path.

use std::io::{self, Write};

use super::label;
use crate::model::{ChartId, Content, DocId, Model, Placement};
use crate::plan::{Demotion, Level, Plan};

pub(super) fn write(out: &mut dyn Write, model: &Model, plan: &Plan) -> io::Result<()> {
    if let Some(root) = plan.levels.first() {
        write_level(out, model, plan, root)?;
    }
    Ok(())
}

/// The documents `helm dag` plans at one chart level: rendered templates that are not hooks
/// and that decode as an object (a document of only comments decodes as an empty one).
fn own_manifests(model: &Model, chart: ChartId) -> impl Iterator<Item = DocId> + '_ {
    model
        .documents
        .iter()
        .enumerate()
        .filter(move |(_, d)| {
            d.chart == chart
                && d.placement == Placement::Template
                && match &d.content {
                    Content::Resource(r) => r.hook.is_none(),
                    Content::Empty => true,
                    Content::Invalid { .. } | Content::NotAnObject { .. } => false,
                }
        })
        .map(|(id, _)| id)
}

/// Whether `helm dag` gives the chart a level: it has a manifest, or a subchart that has one.
fn has_manifests(model: &Model, chart: ChartId) -> bool {
    own_manifests(model, chart).next().is_some()
        || model.charts[chart]
            .children
            .iter()
            .any(|&c| model.charts[c].enabled && has_manifests(model, c))
}

/// Whether a group of this level was demoted (malformed or missing prerequisite, isolated):
/// the reference then prints the `Resource-group batches` line even when it is `(none)`.
fn demoted_here(model: &Model, plan: &Plan, chart: ChartId) -> bool {
    plan.demotions.iter().any(|d| match d {
        Demotion::MalformedDependsOn { doc } => model.documents[*doc].chart == chart,
        Demotion::MissingGroup { chart: c, .. } | Demotion::Isolated { chart: c, .. } => {
            *c == chart
        }
    })
}

fn write_level(out: &mut dyn Write, model: &Model, plan: &Plan, level: &Level) -> io::Result<()> {
    let indent = "  ".repeat(level.depth);
    let chart = &model.charts[level.chart];
    writeln!(out, "{indent}Chart: {}", chart.manifest_prefix)?;
    if level.subchart_batches.is_empty() {
        writeln!(out, "{indent}  Subchart batches: (none)")?;
    } else {
        writeln!(out, "{indent}  Subchart batches:")?;
        for (i, batch) in level.subchart_batches.iter().enumerate() {
            writeln!(out, "{indent}    Batch {}: {}", i + 1, batch.join(", "))?;
        }
    }
    if !level.group_batches.is_empty() || demoted_here(model, plan, level.chart) {
        if level.group_batches.is_empty() {
            writeln!(out, "{indent}  Resource-group batches: (none)")?;
        } else {
            writeln!(out, "{indent}  Resource-group batches:")?;
            for (i, batch) in level.group_batches.iter().enumerate() {
                writeln!(out, "{indent}    Batch {}: {}", i + 1, batch.join(", "))?;
            }
        }
    }
    let mut unsequenced: Vec<String> = level
        .unsequenced
        .iter()
        .filter(|&&d| model.resource(d).is_some())
        .map(|&d| label(model, d))
        .chain(
            own_manifests(model, level.chart)
                .filter(|&d| model.documents[d].is_comment_only())
                .map(|d| {
                    model.documents[d]
                        .source_path
                        .clone()
                        .unwrap_or_else(|| chart.manifest_prefix.clone())
                }),
        )
        .collect();
    // NOTE: a byte-wise sort, as Go's `slices.Sort` of strings.
    unsequenced.sort();
    if !unsequenced.is_empty() {
        writeln!(
            out,
            "{indent}  Unsequenced (deployed last): {}",
            unsequenced.join(", ")
        )?;
    }
    let parent_known = chart.info.is_some();
    let child = |name: &str| {
        let prefix = format!("{}/charts/{name}", chart.manifest_prefix);
        plan.levels.iter().find(|l| {
            let c = &model.charts[l.chart];
            c.manifest_prefix == prefix && has_manifests(model, l.chart)
        })
    };
    let write_child = |out: &mut dyn Write, name: &str| -> io::Result<()> {
        let Some(level) = child(name) else {
            return Ok(());
        };
        if parent_known && model.charts[level.chart].info.is_none() {
            writeln!(
                out,
                "{indent}    (subchart {name:?} metadata unavailable; sequenced structurally from manifests)"
            )?;
        }
        write_level(out, model, plan, level)
    };
    for name in level.subchart_batches.iter().flatten() {
        write_child(out, name)?;
    }
    for name in &level.undeclared {
        writeln!(
            out,
            "{indent}    Undeclared subchart {name:?} (deployed unsequenced):"
        )?;
        write_child(out, name)?;
    }
    Ok(())
}
