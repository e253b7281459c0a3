//! The step graph as a Mermaid flowchart (renders in GitHub Markdown).

use std::io::{self, Write};

use crate::model::Model;
use crate::plan::Plan;

pub(super) fn write(
    out: &mut dyn Write,
    model: &Model,
    plan: &Plan,
    uninstall: bool,
) -> io::Result<()> {
    writeln!(out, "flowchart TD")?;
    for (l, level) in plan.levels.iter().enumerate() {
        let chart = &model.charts[level.chart];
        writeln!(out, "  subgraph c{l}[\"{}\"]", escape(&chart.display))?;
        for (i, step) in plan
            .steps
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
    for (i, step) in plan.steps.iter().enumerate() {
        for &before in &step.after {
            if uninstall {
                writeln!(out, "  s{i} --> s{before}")?;
            } else {
                writeln!(out, "  s{before} --> s{i}")?;
            }
        }
    }
    Ok(())
}

fn escape(text: &str) -> String {
    text.replace('"', "#quot;")
}
