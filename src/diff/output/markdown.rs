//! The diff as Markdown for a pull request comment: the counts, a Mermaid drawing of the
//! changed part of the plan (the steps a change touches, the new plan's edges between them,
//! orders gained and lost, resources moved), then one table per kind of change.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{Sides, counts, name, plan_notes};
use crate::diff::{Diff, OrderChange, Place, touched_places};
use crate::lint::Finding;
use crate::safe;

/// Rows per table: a comment stays readable (and under GitHub's size limit); the JSON format
/// lists everything.
const ROWS: usize = 50;

/// A Markdown table cell (already Markdown, its text from the charts escaped): no line
/// breaks, no unescaped pipes.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\r', '\n'], " ")
}

/// A Mermaid label from the charts.
fn label(text: &str) -> String {
    safe::mermaid_label(text)
}

/// Text from the charts as Markdown prose.
fn prose(text: &str) -> String {
    safe::markdown(text)
}

fn table(md: &mut String, title: &str, header: &[&str], rows: Vec<Vec<String>>) {
    table_of(md, title, header, rows.len(), rows);
}

/// A table of `total` rows of which only the first [`ROWS`] need be given.
fn table_of(md: &mut String, title: &str, header: &[&str], total: usize, rows: Vec<Vec<String>>) {
    if total == 0 {
        return;
    }
    let _ = writeln!(md, "### {title} ({total})\n");
    let _ = writeln!(md, "| {} |", header.join(" | "));
    let _ = writeln!(md, "|{}", "---|".repeat(header.len()));
    for row in rows.into_iter().take(ROWS) {
        let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
        let _ = writeln!(md, "| {} |", cells.join(" | "));
    }
    if total > ROWS {
        let _ = writeln!(
            md,
            "\n… and {} more (`--format json` lists them, orders up to a cap with their counts).",
            total - ROWS
        );
    }
    md.push('\n');
}

fn code(text: &str) -> String {
    safe::markdown_code(text)
}

fn names(resources: &[crate::lint::ResourceRef]) -> String {
    resources
        .iter()
        .map(|r| code(&name(r)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The rows shown: an order change can name thousands of resources and there can be many
/// thousands of changes, so only those shown are written out.
fn order_rows(changes: &[OrderChange]) -> Vec<Vec<String>> {
    changes
        .iter()
        .take(ROWS)
        .map(|c| {
            vec![
                names(&c.before),
                names(&c.after),
                prose(&format!("{} → {}", c.before_place, c.after_place)),
            ]
        })
        .collect()
}

fn finding_rows(findings: &[Finding]) -> Vec<Vec<String>> {
    findings
        .iter()
        .map(|f| {
            vec![
                format!("{} {}", f.code, f.name),
                f.severity.as_str().to_owned(),
                f.resource.as_ref().map_or_else(String::new, |r| {
                    code(&name(&crate::lint::ResourceRef {
                        api_version: String::new(),
                        ..r.clone()
                    }))
                }),
                safe::markdown_message(&f.message),
                code(&format!("{}:{}", f.location.file, f.location.line)),
            ]
        })
        .collect()
}

/// The changed part of the plan as a Mermaid flowchart; `None` when no step changed.
fn mermaid(diff: &Diff) -> Option<String> {
    let places = touched_places(diff);
    if places.is_empty() {
        return None;
    }
    let id: BTreeMap<&Place, usize> = places.iter().enumerate().map(|(i, p)| (p, i)).collect();
    let mut marks: BTreeMap<Place, Vec<String>> = BTreeMap::new();
    let mut count = |place: &Place, what: &str| {
        let list = marks.entry(place.clone()).or_default();
        match list.iter_mut().find(|m| m.ends_with(what)) {
            Some(m) => {
                let n: usize = m
                    .split_once(' ')
                    .and_then(|(n, _)| n.parse().ok())
                    .unwrap_or(1);
                *m = format!("{} {what}", n + 1);
            }
            None => list.push(format!("1 {what}")),
        }
    };
    for l in &diff.added {
        count(&l.place, "added");
    }
    for l in &diff.removed {
        count(&l.place, "removed");
    }
    for w in &diff.waits {
        count(&w.place, "wait changed");
    }
    let mut md = String::from("```mermaid\nflowchart TD\n");
    for (place, i) in &id {
        let extra = marks
            .get(*place)
            .map(|m| format!("<br/>{}", m.join(", ")))
            .unwrap_or_default();
        let _ = writeln!(md, "  n{i}[\"{}{extra}\"]", label(&place.to_string()));
    }
    let mut lines: Vec<String> = Vec::new();
    // The new plan's edges between the steps shown, unless drawn as gained below.
    for (before, after) in &diff.new_edges {
        let gained = diff
            .gained
            .iter()
            .any(|c| &c.before_place == before && &c.after_place == after);
        if let (Some(b), Some(a), false) = (id.get(before), id.get(after), gained) {
            lines.push(format!("  n{b} --> n{a}"));
        }
    }
    let mut drawn = |changes: &[OrderChange], arrow: &str| {
        for c in changes {
            if let (Some(b), Some(a)) = (id.get(&c.before_place), id.get(&c.after_place)) {
                lines.push(format!("  n{b} {arrow} n{a}"));
            }
        }
    };
    drawn(&diff.gained, "==>|gained|");
    drawn(&diff.lost, "-.->|lost|");
    let mut moves: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for m in &diff.moved {
        if let (Some(&f), Some(&t)) = (id.get(&m.from), id.get(&m.to)) {
            *moves.entry((f, t)).or_default() += 1;
        }
    }
    for ((f, t), n) in moves {
        lines.push(format!("  n{f} -.->|moved {n}| n{t}"));
    }
    let mut seen = std::collections::BTreeSet::new();
    for l in lines {
        if seen.insert(l.clone()) {
            md.push_str(&l);
            md.push('\n');
        }
    }
    md.push_str("```\n\n");
    Some(md)
}

/// The whole Markdown document.
#[must_use]
pub fn render(diff: &Diff, sides: &Sides) -> String {
    let mut md = String::from("## chartseq diff\n\n");
    let _ = writeln!(md, "{} → {}\n", code(&sides.old), code(&sides.new));
    match counts(diff) {
        Some(c) => {
            let _ = writeln!(md, "**{c}**\n");
        }
        None => {
            md.push_str("No differences: same resources, places, orders, waits and findings.\n\n");
        }
    }
    for note in plan_notes(diff) {
        let _ = writeln!(md, "> [!WARNING]\n> {}\n", prose(note));
    }
    if let Some(drawing) = mermaid(diff) {
        md.push_str(&drawing);
    }
    table(
        &mut md,
        "Resources added",
        &["Resource", "In"],
        diff.added
            .iter()
            .map(|l| vec![code(&name(&l.resource)), prose(&l.place.to_string())])
            .collect(),
    );
    table(
        &mut md,
        "Resources removed",
        &["Resource", "From"],
        diff.removed
            .iter()
            .map(|l| vec![code(&name(&l.resource)), prose(&l.place.to_string())])
            .collect(),
    );
    table(
        &mut md,
        "Moved",
        &["Resource", "From", "To"],
        diff.moved
            .iter()
            .map(|m| {
                vec![
                    code(&name(&m.resource)),
                    prose(&m.from.to_string()),
                    prose(&m.to.to_string()),
                ]
            })
            .collect(),
    );
    table_of(
        &mut md,
        "Order gained",
        &["Before", "After", "Steps"],
        diff.gained.len(),
        order_rows(&diff.gained),
    );
    table_of(
        &mut md,
        "Order lost",
        &["Before", "After", "Steps (old plan)"],
        diff.lost.len(),
        order_rows(&diff.lost),
    );
    table(
        &mut md,
        "Waits changed",
        &["Resource", "Step", "From", "To"],
        diff.waits
            .iter()
            .map(|w| {
                vec![
                    code(&name(&w.resource)),
                    prose(&w.place.to_string()),
                    code(&w.from.to_string()),
                    code(&w.to.to_string()),
                ]
            })
            .collect(),
    );
    let header = ["Rule", "Severity", "Resource", "Message", "Location"];
    table(
        &mut md,
        "Lint findings new",
        &header,
        finding_rows(&diff.new_findings),
    );
    table(
        &mut md,
        "Lint findings fixed",
        &header,
        finding_rows(&diff.fixed_findings),
    );
    md
}
