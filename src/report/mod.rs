//! Renderings of lint findings: one file per format behind one trait ([`Reporter`]). Only
//! `human.rs` knows the snippet renderer (codespan-reporting). Beside them, one file per output
//! of the deploy commands: their progress (`progress.rs`, the only one that knows indicatif),
//! the summary a run ends with (`apply_summary.rs`) and `history`, `status` and `list`
//! (`release_info.rs`); and what `chartseq readiness` judged (`readiness.rs`).

#[cfg(feature = "apply")]
pub mod apply_summary;
mod concise;
pub mod github;
mod human;
pub(crate) mod json;
mod junit;
pub mod location;
#[cfg(feature = "apply")]
pub mod progress;
pub mod readiness;
#[cfg(feature = "apply")]
pub mod release_info;
mod sarif;

/// Text escapes live beside the layers that all use them; reachable here as before.
pub use crate::safe;

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
    /// SARIF 2.1.0 (GitHub code scanning).
    Sarif,
    /// GitHub Actions workflow commands (annotations), plus the step summary.
    Github,
    /// `JUnit` XML test report.
    Junit,
}

/// One chart's lint run; `chartseq lint` may lint several charts into one report.
#[derive(Clone, Copy)]
pub struct Run<'a> {
    pub model: &'a Model,
    pub report: &'a Report,
    /// The values file this run used, when a chart is linted once per values file.
    pub values: Option<&'a str>,
}

impl Run<'_> {
    /// The run's name in summaries: its root chart, and its values file if it has one.
    #[must_use]
    pub fn name(&self) -> Option<String> {
        let chart = self.model.charts.first()?.display.as_str();
        Some(match self.values {
            Some(values) => format!("{chart} ({values})"),
            None => chart.to_owned(),
        })
    }
}

impl Run<'_> {
    /// What the user named: the chart directory or archive, or the stream file (`-` for
    /// standard input), with the values file when the run has one.
    #[must_use]
    pub fn target(&self) -> String {
        let name = &self.model.sources.get(self.model.stream).name;
        let target = name.strip_suffix(" (helm template)").unwrap_or(name);
        match self.values {
            Some(values) if self.report.matrix.is_none() => {
                format!("{target} with values {values}")
            }
            _ => target.to_owned(),
        }
    }
}

/// Writes a lint report in one format.
pub trait Reporter {
    fn report(&self, out: &mut dyn Write, model: &Model, report: &Report) -> io::Result<()> {
        self.report_all(
            out,
            &[Run {
                model,
                report,
                values: None,
            }],
        )
    }

    /// Several charts' runs as one output. Formats that are one document (SARIF, `JUnit`)
    /// override this; the others write each run in turn.
    fn report_all(&self, out: &mut dyn Write, runs: &[Run<'_>]) -> io::Result<()> {
        for run in runs {
            self.report(out, run.model, run.report)?;
        }
        Ok(())
    }
}

/// The reporter for a format; `color` applies to the human format only.
#[must_use]
pub fn reporter(format: Format, color: bool) -> Box<dyn Reporter> {
    reporter_with_summary(format, color, None)
}

/// As [`reporter`]; `step_summary` (the `$GITHUB_STEP_SUMMARY` file) applies to the GitHub
/// format only.
#[must_use]
pub fn reporter_with_summary(
    format: Format,
    color: bool,
    step_summary: Option<std::path::PathBuf>,
) -> Box<dyn Reporter> {
    match format {
        Format::Human => Box::new(human::Human { color }),
        Format::Concise => Box::new(concise::Concise),
        Format::Json => Box::new(json::Json),
        Format::Sarif => Box::new(sarif::Sarif),
        Format::Github => Box::new(github::Github {
            summary: step_summary,
        }),
        Format::Junit => Box::new(junit::Junit),
    }
}
