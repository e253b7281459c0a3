//! Failures of the tool itself (exit code 2), as opposed to findings about the input.
//!
//! Each variant says what failed; the one that wraps another error keeps it as its
//! [`std::error::Error::source`]. [`Error::report`] is the text a user reads for any of them.

use std::fmt;
use std::path::{Path, PathBuf};

/// The tool could not do its job: bad arguments, unreadable input, helm failed.
///
/// `Display` is what failed, on one line where the input allows; [`Error::detail`] holds the
/// lines shown under it (helm's or git's standard error, a hint).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading, writing or creating a file or directory, or starting a program, failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done, on what: `cannot read chart/values.yaml`.
        what: String,
        source: std::io::Error,
        detail: Option<String>,
    },
    /// helm ran and refused to render the chart: what `lint` reports as a finding of that
    /// chart (CS900) while it goes on with the others. helm's standard error is the detail.
    #[error(
        "helm template failed for {} ({status})",
        crate::source::display_path(&.failure.chart)
    )]
    Render {
        status: std::process::ExitStatus,
        failure: Box<RenderFailure>,
    },
    /// The chart's own files (its `Chart.yaml`, `values.yaml`, archive or subcharts) could not
    /// be loaded: what `lint` reports as a finding of that chart (CS902) while it goes on with
    /// the others. Says what its source says.
    #[error("{source}")]
    ChartLoad { chart: PathBuf, source: Box<Error> },
    /// The command line asks for what cannot be done: a flag's value, flags that exclude each
    /// other, a setting from the environment.
    #[error("{message}")]
    Usage {
        message: String,
        detail: Option<String>,
    },
    /// The input (a chart, a manifest stream, values, objects, a configuration file) is not
    /// what it must be; the message starts with where (`file:line:column: ` when known).
    #[error("{message}")]
    Invalid {
        message: String,
        detail: Option<String>,
    },
    /// A program chartseq runs (helm, git) failed, did not finish or answered what it should
    /// not; its standard error is the detail.
    #[error("{message}")]
    Program {
        message: String,
        detail: Option<String>,
    },
    /// The cluster could not be reached or answered with an error.
    #[cfg(feature = "apply")]
    #[error("{0}")]
    Cluster(#[from] crate::apply::cluster::ClusterError),
    /// A release's revisions could not be read or stored.
    #[cfg(feature = "apply")]
    #[error("{0}")]
    Storage(#[from] crate::apply::storage::StorageError),
    /// `context` could not be done because of `source`, whose words follow it. The source's
    /// detail is not shown: the context says what the user needs.
    #[error("{context}: {source}")]
    Context { context: String, source: Box<Error> },
    /// A failure no other variant describes.
    #[error("{message}")]
    Message {
        message: String,
        detail: Option<String>,
    },
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
    /// A failure no other variant describes ([`Error::Message`]).
    pub fn new(message: impl Into<String>) -> Self {
        Error::Message {
            message: message.into(),
            detail: None,
        }
    }

    /// The command line asks for what cannot be done ([`Error::Usage`]).
    pub fn usage(message: impl Into<String>) -> Self {
        Error::Usage {
            message: message.into(),
            detail: None,
        }
    }

    /// The input is not what it must be ([`Error::Invalid`]); `message` starts with where.
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::Invalid {
            message: message.into(),
            detail: None,
        }
    }

    /// A program chartseq runs failed ([`Error::Program`]).
    pub fn program(message: impl Into<String>) -> Self {
        Error::Program {
            message: message.into(),
            detail: None,
        }
    }

    /// `what` failed with `err`, which is kept as the source: `cannot read {path}: {err}`.
    pub fn io(what: impl fmt::Display, err: std::io::Error) -> Self {
        Error::Io {
            what: what.to_string(),
            source: err,
            detail: None,
        }
    }

    /// helm refused to render `failure.chart`, exiting with `status`.
    #[must_use]
    pub fn render(status: std::process::ExitStatus, failure: RenderFailure) -> Self {
        Error::Render {
            status,
            failure: Box::new(failure),
        }
    }

    /// This failure as the cause of `context` failing: `{context}: {self}`.
    #[must_use]
    pub fn context(self, context: impl Into<String>) -> Self {
        Error::Context {
            context: context.into(),
            source: Box::new(self),
        }
    }

    /// Says that this failure is one of loading `chart`'s own files.
    #[must_use]
    pub fn with_chart_failure(self, chart: &Path) -> Self {
        Error::ChartLoad {
            chart: chart.to_path_buf(),
            source: Box::new(self),
        }
    }

    /// The same failure with `detail` shown under it. helm's standard error stays the detail of
    /// a render failure, and cluster and storage failures have none.
    #[must_use]
    pub fn with_detail(self, detail: impl Into<String>) -> Self {
        match self {
            Error::ChartLoad { chart, source } => Error::ChartLoad {
                chart,
                source: Box::new(source.with_detail(detail)),
            },
            mut other => {
                if let Some(d) = other.detail_mut() {
                    *d = Some(detail.into());
                }
                other
            }
        }
    }

    /// The detail of a variant that holds its own.
    fn detail_mut(&mut self) -> Option<&mut Option<String>> {
        match self {
            Error::Io { detail, .. } => Some(detail),
            other => other.text_mut().map(|(_, detail)| detail),
        }
    }

    /// The message and detail of a variant that is its words.
    fn text_mut(&mut self) -> Option<(&mut String, &mut Option<String>)> {
        match self {
            Error::Usage { message, detail }
            | Error::Invalid { message, detail }
            | Error::Program { message, detail }
            | Error::Message { message, detail } => Some((message, detail)),
            _ => None,
        }
    }

    /// The same failure in other words: `message` rewrites what failed, `detail` the lines
    /// under it (a temporary copy's path named the way the user named the chart). Where the
    /// text is built from typed fields (a render, cluster or storage failure) the rewritten
    /// text becomes a [`Error::Message`]; an I/O error keeps its source when only what was
    /// being done changed.
    #[must_use]
    pub fn map_text(
        mut self,
        message: impl Fn(&str) -> String,
        detail: impl Fn(&str) -> String,
    ) -> Self {
        if let Some((m, d)) = self.text_mut() {
            *m = message(m);
            *d = d.as_deref().map(&detail);
            return self;
        }
        match self {
            Error::Io {
                what,
                source,
                detail: d,
            } => {
                let full = message(&format!("{what}: {source}"));
                let detail = d.as_deref().map(&detail);
                match full.strip_suffix(&format!(": {source}")) {
                    Some(what) => Error::Io {
                        what: what.to_owned(),
                        source,
                        detail,
                    },
                    None => Error::Message {
                        message: full,
                        detail,
                    },
                }
            }
            Error::ChartLoad { chart, source } => Error::ChartLoad {
                chart,
                source: Box::new(source.map_text(message, detail)),
            },
            other => Error::Message {
                message: message(&other.to_string()),
                detail: other.detail().map(detail),
            },
        }
    }

    /// What failed, without the detail: the `Display` text.
    #[must_use]
    pub fn message(&self) -> String {
        self.to_string()
    }

    /// The lines shown under the message.
    #[must_use]
    pub fn detail(&self) -> Option<&str> {
        match self {
            Error::Io { detail, .. }
            | Error::Usage { detail, .. }
            | Error::Invalid { detail, .. }
            | Error::Program { detail, .. }
            | Error::Message { detail, .. } => detail.as_deref(),
            Error::Render { failure, .. } => Some(&failure.stderr),
            Error::ChartLoad { source, .. } => source.detail(),
            Error::Context { .. } => None,
            #[cfg(feature = "apply")]
            Error::Cluster(_) | Error::Storage(_) => None,
        }
    }

    /// The chart helm refused to render, with what helm said.
    #[must_use]
    pub fn render_failure(&self) -> Option<&RenderFailure> {
        match self {
            Error::Render { failure, .. } => Some(failure),
            _ => None,
        }
    }

    /// The chart whose own files could not be loaded.
    #[must_use]
    pub fn chart_failure(&self) -> Option<&Path> {
        match self {
            Error::ChartLoad { chart, .. } => Some(chart),
            _ => None,
        }
    }

    /// The text a user reads for this failure: see [`report`].
    #[must_use]
    pub fn report(&self) -> String {
        report(&self.to_string(), self.detail())
    }
}

/// The one rendering of a failure, for every command: what failed, then the detail on the
/// lines below. The caller puts `chartseq: error: ` in front.
///
/// NOTE: the source chain is not written: every variant's message already says what its
/// source says, and the causes below an I/O error (an archive reader's own error under it)
/// were never shown; [`std::error::Error::source`] keeps them for callers that want them.
#[must_use]
pub fn report(message: &str, detail: Option<&str>) -> String {
    match detail {
        Some(detail) => format!("{message}\n{detail}"),
        None => message.to_owned(),
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::*;

    #[test]
    fn io_errors_keep_the_os_error_as_their_source() {
        let os = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory");
        let e = Error::io("cannot read chart/values.yaml", os);
        assert_eq!(
            e.to_string(),
            "cannot read chart/values.yaml: No such file or directory"
        );
        let source = e.source().expect("the io::Error is the source");
        let io = source
            .downcast_ref::<std::io::Error>()
            .expect("an io::Error");
        assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
        assert_eq!(
            e.report(),
            "cannot read chart/values.yaml: No such file or directory"
        );
    }

    #[test]
    fn a_chart_failure_says_what_its_source_says_and_keeps_it() {
        let os = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "Permission denied");
        let e = Error::io("cannot read chart/Chart.yaml", os)
            .with_chart_failure(Path::new("chart"))
            .with_detail("a hint");
        assert_eq!(e.chart_failure(), Some(Path::new("chart")));
        assert_eq!(
            e.to_string(),
            "cannot read chart/Chart.yaml: Permission denied"
        );
        assert_eq!(e.detail(), Some("a hint"));
        let inner = e.source().expect("the load error");
        assert!(
            inner
                .source()
                .is_some_and(<dyn std::error::Error>::is::<std::io::Error>)
        );
        assert_eq!(
            e.report(),
            "cannot read chart/Chart.yaml: Permission denied\na hint"
        );
    }

    /// `chartseq diff` names a checkout's temporary copy by its revision and puts the side in
    /// front: an I/O error stays one with its source, the others keep their kind.
    #[test]
    fn rewording_keeps_the_kind_and_the_source() {
        let os = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory");
        let e = Error::io("cannot read /tmp/copy/chart/values.yaml", os)
            .map_text(|m| m.replace("/tmp/copy/", "HEAD:"), str::to_owned)
            .map_text(|m| format!("HEAD:chart: {m}"), str::to_owned);
        assert_eq!(
            e.to_string(),
            "HEAD:chart: cannot read HEAD:chart/values.yaml: No such file or directory"
        );
        assert!(
            e.source()
                .is_some_and(<dyn std::error::Error>::is::<std::io::Error>)
        );
        let e = Error::usage("no Chart.yaml in /tmp/copy/docs: not a chart")
            .with_detail("see /tmp/copy/docs")
            .map_text(
                |m| m.replace("/tmp/copy/", "HEAD:"),
                |d| d.replace("/tmp/copy/", "HEAD:"),
            );
        assert!(matches!(e, Error::Usage { .. }));
        assert_eq!(
            e.report(),
            "no Chart.yaml in HEAD:docs: not a chart\nsee HEAD:docs"
        );
        let e = Error::render(
            failed_status(),
            RenderFailure {
                chart: PathBuf::from("/tmp/copy/chart"),
                stderr: "Error: /tmp/copy/chart/templates/a.yaml".to_owned(),
            },
        )
        .map_text(
            |m| m.replace("/tmp/copy/", "HEAD:"),
            |d| d.replace("/tmp/copy/", "HEAD:"),
        );
        assert_eq!(
            e.report(),
            format!(
                "helm template failed for HEAD:chart ({})\nError: HEAD:chart/templates/a.yaml",
                failed_status()
            )
        );
    }

    #[test]
    fn a_context_says_what_failed_then_why_and_keeps_the_cause() {
        let cause =
            Error::program("HEAD~9: git rev-parse failed").with_detail("fatal: bad revision");
        let e = cause.context("--changed-since");
        assert_eq!(e.report(), "--changed-since: HEAD~9: git rev-parse failed");
        let source = e.source().expect("the cause");
        // A boxed cause is its own error type: downcast to the box.
        assert!(matches!(
            source.downcast_ref::<Box<Error>>().map(AsRef::as_ref),
            Some(Error::Program { .. })
        ));
    }

    #[test]
    fn helm_standard_error_is_the_detail_of_a_render_failure() {
        let status = failed_status();
        let e = Error::render(
            status,
            RenderFailure {
                chart: PathBuf::from("chart"),
                stderr: "Error: template: x".to_owned(),
            },
        );
        assert_eq!(
            e.to_string(),
            format!("helm template failed for chart ({status})")
        );
        assert_eq!(e.detail(), Some("Error: template: x"));
        assert!(e.render_failure().is_some());
    }

    #[cfg(unix)]
    fn failed_status() -> std::process::ExitStatus {
        std::os::unix::process::ExitStatusExt::from_raw(1 << 8)
    }

    #[cfg(windows)]
    fn failed_status() -> std::process::ExitStatus {
        std::os::windows::process::ExitStatusExt::from_raw(1)
    }
}
