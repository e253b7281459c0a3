//! The step graph as a Mermaid flowchart (renders in GitHub Markdown). Uninstall draws the
//! exact reverse: levels and steps in deletion order, every edge turned.

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
    writeln!(out, "flowchart TD")?;
    for (l, level) in super::levels_in_order(plan, uninstall).enumerate() {
        let chart = &model.charts[level.chart];
        writeln!(out, "  subgraph c{l}[\"{}\"]", escape(&chart.display))?;
        for (i, step) in steps
            .iter()
            .enumerate()
            .filter(|(_, s)| s.chart == level.chart)
        {
            match &step.group {
                Some(g) => writeln!(out, "    s{i}[\"{}\"]", escape(g))?,
                None => writeln!(out, "    s{i}([\"unsequenced\"])")?,
            }
        }
        writeln!(out, "  end")?;
    }
    for (before, i) in StepGraph::new(&steps).edges() {
        writeln!(out, "  s{before} --> s{i}")?;
    }
    Ok(())
}

fn escape(text: &str) -> String {
    text.replace('"', "#quot;")
}
