//! The diff for a terminal: one section per kind of change, `+` for what NEW has and OLD has
//! not, `-` for the reverse, `~` for a change.

use std::io::{self, Write};

use super::{Sides, counts, name, plan_notes};
use crate::diff::{Diff, OrderChange};
use crate::lint::Finding;
use crate::safe::{one_line, terminal_safe};

fn names(resources: &[crate::lint::ResourceRef]) -> String {
    resources.iter().map(name).collect::<Vec<_>>().join(", ")
}

fn order_line(c: &OrderChange) -> String {
    format!(
        "{} before {}: {} before {}",
        c.before_place,
        c.after_place,
        names(&c.before),
        names(&c.after)
    )
}

fn finding_line(f: &Finding) -> String {
    let what = f.resource.as_ref().map_or_else(String::new, |r| {
        format!(
            " {}:",
            name(&crate::lint::ResourceRef {
                api_version: String::new(),
                ..r.clone()
            })
        )
    });
    format!(
        "{} {} [{}]{what} {} ({}:{})",
        f.code,
        f.name,
        f.severity.as_str(),
        f.message,
        f.location.file,
        f.location.line
    )
}

pub(super) fn write(out: &mut dyn Write, diff: &Diff, sides: &Sides) -> io::Result<()> {
    let mut text = String::new();
    // Each line is one line: a name from the charts cannot start one of its own.
    let mut line = |s: String| {
        text.push_str(&one_line(&s));
        text.push('\n');
    };
    line(format!("--- {}", sides.old));
    line(format!("+++ {}", sides.new));
    if diff.is_empty() {
        line("no differences: same resources, places, orders, waits and findings".to_owned());
    }
    for note in plan_notes(diff) {
        line(format!("note: {note}"));
    }
    let mut section = |title: &str, items: Vec<String>, sign: char| {
        if items.is_empty() {
            return;
        }
        line(format!("{title} ({}):", items.len()));
        for item in items {
            line(format!("  {sign} {item}"));
        }
    };
    section(
        "resources added",
        diff.added
            .iter()
            .map(|l| format!("{} in {}", name(&l.resource), l.place))
            .collect(),
        '+',
    );
    section(
        "resources removed",
        diff.removed
            .iter()
            .map(|l| format!("{} from {}", name(&l.resource), l.place))
            .collect(),
        '-',
    );
    section(
        "moved",
        diff.moved
            .iter()
            .map(|m| format!("{}: {} -> {}", name(&m.resource), m.from, m.to))
            .collect(),
        '~',
    );
    section(
        "order gained",
        diff.gained.iter().map(order_line).collect(),
        '+',
    );
    section(
        "order lost",
        diff.lost.iter().map(order_line).collect(),
        '-',
    );
    section(
        "waits changed",
        diff.waits
            .iter()
            .map(|w| {
                format!(
                    "{} in {}: {} -> {}",
                    name(&w.resource),
                    w.place,
                    w.from,
                    w.to
                )
            })
            .collect(),
        '~',
    );
    section(
        "lint findings new",
        diff.new_findings.iter().map(finding_line).collect(),
        '+',
    );
    section(
        "lint findings fixed",
        diff.fixed_findings.iter().map(finding_line).collect(),
        '-',
    );
    if let Some(counts) = counts(diff) {
        line(format!("summary: {counts}"));
    }
    // Names and messages come from the charts: shown escaped.
    out.write_all(terminal_safe(&text).as_bytes())
}
