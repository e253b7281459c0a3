//! `path:line:col: CS101 [error] message`, one line per finding (for editors and grep).

use std::io::{self, Write};

use super::{Reporter, safe};
use crate::lint::Report;
use crate::model::Model;

pub struct Concise;

impl Reporter for Concise {
    fn report(&self, out: &mut dyn Write, _model: &Model, report: &Report) -> io::Result<()> {
        for f in &report.findings {
            // A guessed line stays jumpable but is not passed off as exact.
            let guessed = if f.guessed {
                " (line counted in the rendered document)"
            } else {
                ""
            };
            // Where the template puts in a helper's or a values file's line.
            let inserted = f.inserted_by.as_ref().map_or(String::new(), |p| {
                format!(" (inserted by {}:{})", safe::one_line(&p.file), p.line)
            });
            let approximate = if f.approximate {
                " (approximate line)"
            } else {
                ""
            };
            writeln!(
                out,
                "{}:{}:{}: {} [{}] {}{guessed}{approximate}{inserted}",
                safe::one_line(&f.location.file),
                f.location.line,
                f.location.column,
                f.code,
                f.severity.as_str(),
                safe::one_line(&f.message)
            )?;
        }
        Ok(())
    }
}
