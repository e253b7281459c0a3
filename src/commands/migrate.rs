//! `chartseq migrate`: exit 0 when nothing is lost and nothing is left to edit by hand, 1 when
//! something is lost or a manual edit is pending (the patch is still produced), 2 when the
//! migration could not run. `--strict` states that gate and ends standard error with what
//! failed it, in either format (a CI log shows it without reading the JSON).

use std::io::Write;

use super::{Failure, Outcome};
use crate::migrate::{self, Settings, output};
use crate::model::InputTarget;

/// How to write the result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MigrateFormat {
    Text,
    Json,
}

/// Runs the migration and writes its report.
pub fn migrate(
    settings: &Settings,
    format: MigrateFormat,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    let m = migrate::migrate(settings)?;
    let chart = match &settings.input.target {
        InputTarget::Chart(p) | InputTarget::Stream(p) => crate::source::display_path(p),
    };
    match format {
        MigrateFormat::Json => output::json::write(out, &m)?,
        MigrateFormat::Text => {
            output::text::write_diff(out, &m)?;
            let mut report = Vec::new();
            output::text::write_report(&mut report, &chart, &m)?;
            err.write_all(&crate::safe::bytes(&report))?;
        }
    }
    // A manual edit pending is work left undone: a script must not take the migration as
    // complete.
    let complete = !m.lost_anything() && m.manual.is_empty();
    if settings.strict && !complete {
        let mut text = Vec::new();
        output::text::write_strict(&mut text, &m)?;
        err.write_all(&crate::safe::bytes(&text))?;
    }
    Ok(if complete {
        Outcome::Clean
    } else {
        Outcome::Findings
    })
}
