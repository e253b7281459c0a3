//! What `apply`, `uninstall` and `rollback` print when they end: one row per step (what
//! blocked a failed step under it), the objects left in place, and one line saying how the
//! run went. `status` shows a recorded run in the same layout.

use std::io::Write;
use std::time::Duration;

use serde_json::json;

use super::progress::{Progress, Renderer, resources};
use crate::apply::deploy::{Report, RunError};
use crate::apply::release::Record;
use crate::apply::wait::human;

/// Writes the step table and the objects left in place: the same layout after a run and in
/// `status`.
pub fn write_summary<'a>(
    out: &mut dyn Write,
    rows: impl Iterator<Item = (&'a str, usize, Duration, &'a str, Option<&'a str>)> + Clone,
    kept: &[String],
    skipped: &[(String, String)],
    dry_run: bool,
) -> std::io::Result<()> {
    let width = rows.clone().map(|r| r.0.len()).max().unwrap_or(4).max(4);
    for (i, (step, resources, waited, word, detail)) in rows.enumerate() {
        if i == 0 {
            writeln!(
                out,
                "{:<width$}  {:>9}  {:>8}  RESULT",
                "STEP", "RESOURCES", "WAITED"
            )?;
        }
        let mut lines = detail.unwrap_or_default().lines();
        let first = lines.next().map(|l| format!(": {l}")).unwrap_or_default();
        let resources = if word == "not started" {
            "-".to_owned()
        } else {
            resources.to_string()
        };
        writeln!(
            out,
            "{step:<width$}  {resources:>9}  {:>8}  {word}{first}",
            human(waited)
        )?;
        for line in lines {
            writeln!(
                out,
                "{:<width$}  {:>9}  {:>8}    {}",
                "",
                "",
                "",
                line.trim_start()
            )?;
        }
    }
    if !kept.is_empty() {
        let would = if dry_run { "would be " } else { "" };
        writeln!(out, "{would}kept (helm.sh/resource-policy: keep):")?;
        for k in kept {
            writeln!(out, "  {k}")?;
        }
    }
    if !skipped.is_empty() {
        let would = if dry_run { "would be " } else { "" };
        writeln!(out, "{would}left in place, not owned by this release:")?;
        for (resource, owner) in skipped {
            writeln!(out, "  {resource}: {owner}")?;
        }
    }
    Ok(())
}

/// A recorded run's outcome in the summary layout.
pub fn write_report(out: &mut dyn Write, report: &Report) -> std::io::Result<()> {
    write_summary(
        out,
        report.steps.iter().map(|s| {
            (
                s.step.as_str(),
                s.resources,
                Duration::from_millis(s.waited_ms),
                s.result.as_str(),
                s.detail.as_deref(),
            )
        }),
        &report.kept,
        &report.skipped,
        false,
    )
}

/// The last line of a run that went through: the release, what was done and the revision it
/// made (a dry run: what would have been done), with the lint warnings it went ahead despite.
pub fn write_done(
    out: &mut dyn Write,
    record: &Record,
    renderer: &Renderer,
    done: Done,
    warnings: &[&str],
) -> std::io::Result<()> {
    if renderer.mode() == Progress::Json {
        let mut line = json!({"event": "done", "release": record.name, "revision": record.revision, "status": record.status});
        if renderer.dry_run() {
            line["dry_run"] = json!(true);
        }
        if !warnings.is_empty() {
            line["lint_warnings"] = json!(warnings);
        }
        writeln!(out, "{line}")
    } else {
        let mut line = if renderer.dry_run() {
            dry_run_line(record, renderer, done)
        } else {
            format!(
                "release {} {}: revision {}, status {}",
                record.name,
                done.verb(),
                record.revision,
                record.status
            )
        };
        if !warnings.is_empty() {
            use std::fmt::Write as _;
            let _ = write!(
                line,
                ", with {} ({}, shown before the run)",
                lint_warnings(warnings.len()),
                codes(warnings)
            );
        }
        writeln!(out, "{line}")
    }
}

/// The last JSON event of a run that failed; in human progress the error alone says it (on
/// standard error, as every failure).
pub fn write_failed(
    out: &mut dyn Write,
    renderer: &Renderer,
    error: &RunError,
) -> std::io::Result<()> {
    if renderer.mode() == Progress::Json {
        writeln!(
            out,
            "{}",
            json!({"event": "done", "status": "failed", "error": error.to_string()})
        )?;
    }
    Ok(())
}

/// `1 lint warning`, `2 lint warnings`.
#[must_use]
pub fn lint_warnings(n: usize) -> String {
    format!("{n} lint warning{}", if n == 1 { "" } else { "s" })
}

/// The distinct codes of `warnings`, in order: `CS305, CS501`.
#[must_use]
pub fn codes(warnings: &[&str]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for w in warnings {
        if !seen.contains(w) {
            seen.push(w);
        }
    }
    seen.join(", ")
}

/// The operation a run did, for its last line.
#[derive(Clone, Copy)]
pub enum Done {
    Apply,
    Rollback,
    Uninstall,
}

impl Done {
    fn verb(self) -> &'static str {
        match self {
            Done::Apply => "applied",
            Done::Rollback => "rolled back",
            Done::Uninstall => "uninstalled",
        }
    }
}

/// A dry run's last line: nothing changed, and what the operation would have done, counted
/// as the steps above name them (objects kept or not this release's are not deletions).
fn dry_run_line(record: &Record, renderer: &Renderer, done: Done) -> String {
    let what = match done {
        Done::Apply if record.status == "pending-upgrade" => {
            format!("upgrade to revision {}", record.revision)
        }
        Done::Apply => format!("install revision {}", record.revision),
        Done::Rollback => match record.description.strip_prefix("Rollback to ") {
            Some(to) => format!(
                "roll back to revision {to} (as revision {})",
                record.revision
            ),
            None => format!("roll back as revision {}", record.revision),
        },
        Done::Uninstall => format!("uninstall revision {}", record.revision),
    };
    let total = |verb: &str| renderer.total(verb);
    let mut parts = Vec::new();
    if total("apply") > 0 {
        parts.push(format!(
            "applying {} (the server accepted them in a server-side dry run)",
            resources(total("apply"))
        ));
    }
    if total("delete") > 0 {
        parts.push(format!("deleting {}", resources(total("delete"))));
    }
    if !renderer.kept().is_empty() {
        parts.push(format!(
            "keeping {} (helm.sh/resource-policy: keep)",
            renderer.kept().len()
        ));
    }
    if !renderer.skipped().is_empty() {
        parts.push(format!(
            "leaving {} not this release's in place",
            renderer.skipped().len()
        ));
    }
    if parts.is_empty() {
        parts.push("touching no resource".to_owned());
    }
    format!(
        "release {} dry run, nothing changed: would {what}, {}",
        record.name,
        parts.join(", ")
    )
}
