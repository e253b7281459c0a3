//! The step graph in Graphviz DOT: one cluster per chart level, an edge per prerequisite.
//! Uninstall draws the exact reverse: levels and steps in deletion order, every edge turned.

use std::io::{self, Write};

use crate::model::Model;
use crate::plan::Plan;
use crate::plan::graph::StepGraph;

pub(super) fn write(
    out: &mut dyn Write,
    model: &Model,
    plan: &Plan,
    uninstall: bool,
) -> io::Result<()> {
    let steps = super::steps_in_order(plan, uninstall);
    writeln!(out, "digraph chartseq {{")?;
    writeln!(out, "  rankdir=TB;")?;
    writeln!(out, "  node [shape=box, fontname=\"Helvetica\"];")?;
    // One cluster per chart level; a release-wide dialect's steps share one cluster.
    let clusters = super::clusters(model, plan, uninstall);
    for (label, chart) in clusters {
        writeln!(out, "  subgraph \"cluster_{}\" {{", escape(&label))?;
        writeln!(out, "    label=\"{}\";", escape(&label))?;
        for (i, step) in steps
            .iter()
            .enumerate()
            .filter(|(_, s)| chart.is_none_or(|c| s.chart == c))
        {
            let name = step.group.as_deref().unwrap_or("(unsequenced)");
            let style = if step.group.is_none() {
                ", style=dashed"
            } else {
                ""
            };
            writeln!(
                out,
                "    s{i} [label=\"{}\\n{} resource(s)\"{style}];",
                escape(name),
                step.resources.len()
            )?;
        }
        writeln!(out, "  }}")?;
    }
    for (before, i) in StepGraph::new(&steps).edges() {
        writeln!(out, "  s{before} -> s{i};")?;
    }
    writeln!(out, "}}")
}

/// A DOT string's content: on one line (control characters as visible escapes, whose
/// backslash is then escaped so Graphviz shows it), quotes and backslashes escaped.
fn escape(text: &str) -> String {
    crate::safe::one_line(text)
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
}
