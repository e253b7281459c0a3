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
            writeln!(
                out,
                "{}:{}:{}: {} [{}] {}{guessed}",
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
