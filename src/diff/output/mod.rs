//! Renderings of a [`Diff`]: one file per format — text, JSON (SPEC §6), Markdown for a pull
//! request comment (with a Mermaid drawing of the changed part of the plan) and `github`
//! (workflow commands plus the Markdown as the step summary).

mod github;
pub(crate) mod json;
mod markdown;
mod text;

use std::io::{self, Write};
use std::path::PathBuf;

use super::Diff;
use crate::lint::{Report, ResourceRef};
use crate::model::Model;

/// A diff output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffFormat {
    Text,
    Json,
    Markdown,
    Github,
}

/// What the two sides are, as the user named them.
#[derive(Clone, Debug)]
pub struct Sides {
    pub old: String,
    pub new: String,
}

/// The new side, for annotations that point into its files.
pub struct NewSide<'a> {
    pub model: &'a Model,
    pub report: &'a Report,
}

/// Writes the diff in one format. `summary` is the `$GITHUB_STEP_SUMMARY` file the `github`
/// format appends its Markdown to.
pub fn write_diff(
    out: &mut dyn Write,
    format: DiffFormat,
    diff: &Diff,
    sides: &Sides,
    new: &NewSide<'_>,
    summary: Option<&PathBuf>,
) -> io::Result<()> {
    match format {
        DiffFormat::Text => text::write(out, diff, sides),
        DiffFormat::Json => json::write(out, diff),
        DiffFormat::Markdown => out.write_all(markdown::render(diff, sides).as_bytes()),
        DiffFormat::Github => github::write(out, diff, sides, new, summary),
    }
}

/// `Kind/name`, with the namespace when there is one.
fn name(r: &ResourceRef) -> String {
    match &r.namespace {
        Some(ns) => format!("{}/{} (namespace {ns})", r.kind, r.name),
        None => format!("{}/{}", r.kind, r.name),
    }
}

/// One line of counts: `1 added, 2 removed, …`; `None` when nothing differs.
fn counts(diff: &Diff) -> Option<String> {
    let parts: Vec<String> = [
        (diff.added.len(), "added", "added"),
        (diff.removed.len(), "removed", "removed"),
        (diff.moved.len(), "moved", "moved"),
        (diff.gained_pairs(), "order gained", "orders gained"),
        (diff.lost_pairs(), "order lost", "orders lost"),
        (diff.waits.len(), "wait changed", "waits changed"),
        (diff.new_findings.len(), "finding new", "findings new"),
        (diff.fixed_findings.len(), "finding fixed", "findings fixed"),
    ]
    .into_iter()
    .filter(|(n, _, _)| *n > 0)
    .map(|(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
    .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// What to say about a side without a whole plan.
fn plan_notes(diff: &Diff) -> Vec<&'static str> {
    let mut notes = Vec::new();
    if !diff.old_planned {
        notes.push("OLD has no complete plan (fatal sequencing errors): its unplanned resources take part in no order");
    }
    if !diff.new_planned {
        notes.push("NEW has no complete plan (fatal sequencing errors, see the new findings): its unplanned resources take part in no order");
    }
    notes
}
