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
    // One subgraph per chart level; a release-wide dialect's steps share one subgraph.
    let clusters = super::clusters(model, plan, uninstall);
    for (l, (label, chart)) in clusters.into_iter().enumerate() {
        writeln!(out, "  subgraph c{l}[\"{}\"]", escape(&label))?;
        for (i, step) in steps
            .iter()
            .enumerate()
            .filter(|(_, s)| chart.is_none_or(|c| s.chart == c))
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
    crate::safe::mermaid_label(text)
}
