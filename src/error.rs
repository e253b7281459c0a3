//! Failures of the tool itself (exit code 2), as opposed to findings about the input.

use std::fmt;

/// The tool could not do its job: bad arguments, unreadable input, helm failed.
#[derive(Debug)]
pub struct Error {
    pub message: String,
    /// Extra lines shown under the message (helm's stderr, a hint).
    pub detail: Option<String>,
    /// helm ran and refused to render the chart: what `lint` reports as a finding of that
    /// chart (CS900) while it goes on with the others.
    pub render_failure: Option<Box<RenderFailure>>,
    /// The chart's own files (its `Chart.yaml`, `values.yaml`, archive or subcharts) could not
    /// be loaded: what `lint` reports as a finding of that chart (CS902) while it goes on with
    /// the others.
    pub chart_failure: Option<std::path::PathBuf>,
}

/// helm template exited with an error for a chart.
#[derive(Debug, Clone)]
pub struct RenderFailure {
    /// The chart helm was asked to render.
    pub chart: std::path::PathBuf,
    /// helm's standard error, trimmed.
    pub stderr: String,
}

impl Error {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            detail: None,
            render_failure: None,
            chart_failure: None,
        }
    }

    #[must_use]
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    #[must_use]
    pub fn with_render_failure(mut self, failure: RenderFailure) -> Self {
        self.render_failure = Some(Box::new(failure));
        self
    }

    #[must_use]
    pub fn with_chart_failure(mut self, chart: &std::path::Path) -> Self {
        self.chart_failure = Some(chart.to_path_buf());
        self
    }

    pub fn io(what: impl fmt::Display, err: &std::io::Error) -> Self {
        Self::new(format!("{what}: {err}"))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(detail) = &self.detail {
            write!(f, "\n{detail}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;
