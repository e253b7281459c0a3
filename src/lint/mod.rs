//! The lint engine (SPEC §4): runs the selected [`crate::rules`] over the model and the plan,
//! applies suppressions and configuration, and maps every finding to the template line a
//! person edits ([`locate`]). Reporters in [`crate::report`] render the resulting [`Finding`]s.

pub mod config;
mod context;
pub mod locate;
pub mod matrix;
mod render;
mod suppress;

use std::collections::BTreeSet;
use std::time::Duration;

pub use config::{Config, Selection};
pub use context::{Context, DialectAnalysis};
pub use render::{load_failure, render_failure};

use crate::model::{ChartId, DocId, Model};
use crate::rules::{RULES, Rule};
use crate::source::Loc;

/// How serious a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    /// Parses `error`, `warning` or `info`.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "error" => Some(Severity::Error),
            "warning" => Some(Severity::Warning),
            "info" => Some(Severity::Info),
            _ => None,
        }
    }
}

/// A finding as a rule reports it: locations are spans in the model's files.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub rule: &'static Rule,
    pub message: String,
    pub help: String,
    pub notes: Vec<String>,
    pub chart: ChartId,
    /// The resource the finding is about (`None` for chart-level findings).
    pub doc: Option<DocId>,
    /// Where to look; the primary label.
    pub loc: Loc,
    pub label: String,
    /// Other places that explain the finding (every edge of a cycle, the other group).
    pub secondary: Vec<(Loc, String)>,
}

impl Diagnostic {
    #[must_use]
    pub fn new(rule: &'static Rule, chart: ChartId, loc: Loc, message: impl Into<String>) -> Self {
        Self {
            rule,
            message: message.into(),
            help: String::new(),
            notes: Vec::new(),
            chart,
            doc: None,
            loc,
            label: String::new(),
            secondary: Vec::new(),
        }
    }

    #[must_use]
    pub fn doc(mut self, doc: DocId) -> Self {
        self.doc = Some(doc);
        self
    }

    #[must_use]
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = help.into();
        self
    }

    #[must_use]
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// A note: one line (names from the input in it cannot start a line of their own).
    #[must_use]
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes
            .push(crate::safe::one_line(&note.into()).into_owned());
        self
    }

    /// A note of several lines (an expression and a pointer under it), each kept one line.
    #[must_use]
    pub fn note_lines(mut self, lines: &[&str]) -> Self {
        let lines: Vec<_> = lines.iter().map(|l| crate::safe::one_line(l)).collect();
        self.notes.push(lines.join("\n"));
        self
    }

    #[must_use]
    pub fn secondary(mut self, loc: Loc, label: impl Into<String>) -> Self {
        self.secondary.push((loc, label.into()));
        self
    }
}

/// Where rules put their findings.
#[derive(Debug, Default)]
pub struct Sink {
    pub diagnostics: Vec<Diagnostic>,
}

impl Sink {
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }
}

/// Settings of one lint run (already validated; no CLI types).
#[derive(Clone, Debug)]
pub struct Settings {
    pub selection: Selection,
    pub config: Config,
    /// `--timeout`: the whole release (Helm's default 5m).
    pub timeout: Duration,
    /// `--readiness-timeout`: each wait (Helm's default 1m).
    pub readiness_timeout: Duration,
    /// Whether the helm that rendered the chart accepts `apiVersion: v3` charts (CS203's
    /// advice); `Unknown` when no helm rendered it.
    pub chart_v3: crate::source::helm::ChartV3,
    /// The chart is deployed in Argo CD's order (`apply --dialect argo`), which creates a hook
    /// named only by `generateName`: CS000 does not report such hooks.
    pub argo_deploy: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            selection: Selection::default(),
            config: Config::default(),
            timeout: Duration::from_secs(300),
            readiness_timeout: Duration::from_secs(60),
            chart_v3: crate::source::helm::ChartV3::Unknown,
            argo_deploy: false,
        }
    }
}

/// A position shown to the user: a file name and 1-based line/column range.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
}

/// The resource a finding is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceRef {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
}

/// A label of the human rendering: a span in one of the model's files.
#[derive(Clone, Debug)]
pub struct Label {
    pub loc: Loc,
    pub message: String,
    pub primary: bool,
}

/// A finding ready to report.
#[derive(Clone, Debug)]
pub struct Finding {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    pub message: String,
    pub help: String,
    pub notes: Vec<String>,
    /// Display path of the chart level (`parent/sub`).
    pub chart: String,
    pub resource: Option<ResourceRef>,
    /// The template (or `Chart.yaml`) position to edit.
    pub location: Position,
    /// The position in the rendered stream, when the finding is in it.
    pub rendered: Option<Position>,
    /// Snippet labels: the template line and, when it differs, the rendered line.
    pub labels: Vec<Label>,
    /// The document's `# Source:` path (for `per-file-ignores`).
    pub source_path: Option<String>,
    /// `location` names the `# Source:` template with a line counted in the rendered
    /// document, not read from the template (no chart on disk): close, but where a helper's
    /// output is included the template's line differs. Never shown as exact.
    pub guessed: bool,
    /// `location` is one of several template lines that could have rendered the finding's
    /// line, and nothing told which: not exact.
    pub approximate: bool,
    /// The template line that puts `location`'s text in, when `location` is elsewhere: the
    /// `include` of the helper that writes it, or the line that inserts it from values.
    pub inserted_by: Option<Position>,
    /// With `--values-matrix`: the value sets the finding appears under (empty otherwise).
    pub value_sets: Vec<String>,
    /// The reference implementation's `helm lint` severity (`error`, `warning`, or `none`
    /// when it does not check this) where it differs from `severity`; `None` where they agree.
    pub reference_severity: Option<&'static str>,
}

impl Finding {
    /// When the line is a guess, what to say about it.
    #[must_use]
    pub fn guess_note(&self) -> Option<String> {
        self.guessed.then(|| {
            format!(
                "{}: the line ({}) is counted in the rendered document, not read from the template, and differs where a helper's output is included; lint the chart, or pass --chart, for the exact line",
                self.location.file, self.location.line
            )
        })
    }
}

/// Counts by severity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
}

/// The outcome of a lint run.
#[derive(Debug, Default)]
pub struct Report {
    pub findings: Vec<Finding>,
    pub summary: Summary,
    /// With `--values-matrix`, on the first run of a chart: the value sets its matrix
    /// rendered, in order.
    pub matrix: Option<Vec<String>>,
}

impl Report {
    /// Whether any finding is at or above `level`.
    #[must_use]
    pub fn fails(&self, level: Option<Severity>) -> bool {
        level.is_some_and(|level| self.findings.iter().any(|f| f.severity >= level))
    }
}

/// Runs every selected rule and returns the findings, located, suppressed and sorted.
#[must_use]
pub fn run(model: &Model, settings: &Settings) -> Report {
    let ctx = Context::new(model, settings);
    let mut sink = Sink::default();
    for rule in RULES {
        if rule.code == crate::rules::UNUSED_SUPPRESSION.code {
            continue;
        }
        if settings.selection.enabled(rule) {
            (rule.check)(&ctx, &mut sink);
        }
    }
    let mut diagnostics = sink.diagnostics;
    let unused = suppress::apply(&ctx, &mut diagnostics);
    if settings
        .selection
        .enabled(&crate::rules::UNUSED_SUPPRESSION)
    {
        diagnostics.extend(unused);
    }
    report(&ctx, diagnostics)
}

/// The plan's fatal issues (SPEC §2) as findings, worded and located exactly as `lint`
/// reports them, so that `plan`, `template` and `lint` say the same thing. Suppressions and
/// configuration do not apply: a suppressed cycle still makes the plan impossible.
#[must_use]
pub fn plan_issue_findings(model: &Model) -> Report {
    let settings = Settings::default();
    let ctx = Context::new(model, &settings);
    let mut sink = Sink::default();
    for check in crate::rules::PLAN_ISSUE_CHECKS {
        check(&ctx, &mut sink);
    }
    report(&ctx, sink.diagnostics)
}

/// Locates, filters, de-duplicates and sorts diagnostics.
fn report(ctx: &Context, diagnostics: Vec<Diagnostic>) -> Report {
    let mut seen = BTreeSet::new();
    let mut findings: Vec<Finding> = Vec::with_capacity(diagnostics.len());
    for d in diagnostics {
        let finding = locate::finding(ctx, d);
        if ctx.settings.config.file_ignored(&finding) {
            continue;
        }
        let key = (
            finding.code,
            finding.location.clone(),
            finding.message.clone(),
        );
        if seen.insert(key) {
            findings.push(finding);
        }
    }
    findings
        .sort_by(|a, b| (&a.location, a.code, &a.message).cmp(&(&b.location, b.code, &b.message)));
    Report {
        summary: Summary::of(&findings),
        findings,
        matrix: None,
    }
}

impl Summary {
    /// The counts of `findings` by severity.
    #[must_use]
    pub fn of(findings: &[Finding]) -> Self {
        let mut summary = Summary::default();
        for f in findings {
            match f.severity {
                Severity::Error => summary.errors += 1,
                Severity::Warning => summary.warnings += 1,
                Severity::Info => summary.infos += 1,
            }
        }
        summary
    }
}
