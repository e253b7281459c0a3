//! The step graph in Graphviz DOT: one cluster per chart level, an edge per prerequisite.

use std::io::{self, Write};

use crate::model::Model;
use crate::plan::Plan;

pub(super) fn write(
    out: &mut dyn Write,
    model: &Model,
    plan: &Plan,
    uninstall: bool,
) -> io::Result<()> {
    writeln!(out, "digraph chartseq {{")?;
    writeln!(out, "  rankdir=TB;")?;
    writeln!(out, "  node [shape=box, fontname=\"Helvetica\"];")?;
    for level in &plan.levels {
        let chart = &model.charts[level.chart];
        writeln!(out, "  subgraph \"cluster_{}\" {{", escape(&chart.display))?;
        writeln!(out, "    label=\"{}\";", escape(&chart.display))?;
        for (i, step) in plan
            .steps
            .iter()
            .enumerate()
            .filter(|(_, s)| s.chart == level.chart)
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
    for (i, step) in plan.steps.iter().enumerate() {
        for &before in &step.after {
            if uninstall {
                writeln!(out, "  s{i} -> s{before};")?;
            } else {
                writeln!(out, "  s{before} -> s{i};")?;
            }
        }
    }
    writeln!(out, "}}")
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}
