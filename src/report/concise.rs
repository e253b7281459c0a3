//! `path:line:col: CS101 [error] message`, one line per finding (for editors and grep).

use std::io::{self, Write};

use super::Reporter;
use crate::lint::Report;
use crate::model::Model;

pub struct Concise;

impl Reporter for Concise {
    fn report(&self, out: &mut dyn Write, _model: &Model, report: &Report) -> io::Result<()> {
        for f in &report.findings {
            writeln!(
                out,
                "{}:{}:{}: {} [{}] {}",
                f.location.file,
                f.location.line,
                f.location.column,
                f.code,
                f.severity.as_str(),
                f.message
            )?;
        }
        Ok(())
    }
}
