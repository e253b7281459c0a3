//! Renderings of lint findings: one file per format behind one trait ([`Reporter`]). Only
//! `human.rs` knows the snippet renderer (codespan-reporting).

mod concise;
mod human;
mod json;

use std::io::{self, Write};

use crate::lint::Report;
use crate::model::Model;

/// A lint output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Source snippets with labels (the default).
    Human,
    /// One line per finding: `path:line:col: CS101 [error] message`.
    Concise,
    /// `{"version": 1, "diagnostics": [...], "summary": {...}}`.
    Json,
}

/// Writes a lint report in one format.
pub trait Reporter {
    fn report(&self, out: &mut dyn Write, model: &Model, report: &Report) -> io::Result<()>;
}

/// The reporter for a format; `color` applies to the human format only.
#[must_use]
pub fn reporter(format: Format, color: bool) -> Box<dyn Reporter> {
    match format {
        Format::Human => Box::new(human::Human { color }),
        Format::Concise => Box::new(concise::Concise),
        Format::Json => Box::new(json::Json),
    }
}
