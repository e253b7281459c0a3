//! The diff in a GitHub Actions step: each new lint finding as an annotation on its template
//! line (as `chartseq lint --format github` writes them), a `::warning` for each ordering
//! constraint lost (something may now start before what it needed), a `::notice` with the
//! counts, and the Markdown report appended to `$GITHUB_STEP_SUMMARY` when set.

use std::io::{self, Write};
use std::path::PathBuf;

use super::{NewSide, Sides, counts, markdown, name};
use crate::diff::Diff;
use crate::report::github::{ANNOTATION_LIMIT, annotation, escape_data};
use crate::report::location::repository_root;

pub(super) fn write(
    out: &mut dyn Write,
    diff: &Diff,
    sides: &Sides,
    new: &NewSide<'_>,
    summary: Option<&PathBuf>,
) -> io::Result<()> {
    let root = repository_root();
    let run = crate::report::Run {
        model: new.model,
        report: new.report,
        values: None,
    };
    for finding in &diff.new_findings {
        writeln!(out, "{}", annotation(&run, finding, root.as_deref()))?;
    }
    for change in diff.lost.iter().take(ANNOTATION_LIMIT) {
        let before: Vec<String> = change.before.iter().map(name).collect();
        let after: Vec<String> = change.after.iter().map(name).collect();
        writeln!(
            out,
            "::warning title=chartseq diff%3A order lost::{}",
            escape_data(&format!(
                "{} no longer waits for {} ({} was before {} in {})",
                after.join(", "),
                before.join(", "),
                change.before_place,
                change.after_place,
                sides.old
            ))
        )?;
    }
    let message = match counts(diff) {
        Some(c) => format!("{} -> {}: {c}", sides.old, sides.new),
        None => format!("{} -> {}: no differences", sides.old, sides.new),
    };
    writeln!(
        out,
        "::notice title=chartseq diff::{}",
        escape_data(&message)
    )?;
    if let Some(path) = summary {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        file.write_all(markdown::render(diff, sides).as_bytes())?;
    }
    Ok(())
}
