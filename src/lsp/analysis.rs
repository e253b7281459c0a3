//! One chart's analysis for the editor: render it (from disk, or from a copy with the unsaved
//! buffers written over it), lint and plan it with the very functions `chartseq lint` and
//! `chartseq plan` call, and turn the result into what the handlers answer from: protocol
//! diagnostics by file, each group's and subchart's place in the plan, and the written names
//! of every file ([`super::index`]).
//!
//! It runs on a background thread and owns all it returns (nothing borrows the model).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lsp_types::{
    CodeDescription, Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location,
    NumberOrString, Position, Range, Url,
};

use super::index::{self, FileIndex};
use crate::lint::{Finding, Selection, Settings, Severity, config};
use crate::model::{self, Input, InputTarget, Model};
use crate::readiness::expr::{ExprError, Expression};
use crate::source::chart::ChartLimits;
use crate::source::helm::HelmOptions;
use crate::source::read::Cancel;

/// A group's step in the plan, in words ready to show.
#[derive(Clone, Debug, Default)]
pub struct GroupInfo {
    pub chart: String,
    /// 1-based batch of the group among its level's groups.
    pub batch: usize,
    pub waits_for: Vec<String>,
    pub waited_by: Vec<String>,
    /// `Kind/name (template)`.
    pub resources: Vec<String>,
}

/// A subchart's place among its parent's subcharts.
#[derive(Clone, Debug, Default)]
pub struct SubchartInfo {
    pub parent: String,
    pub batch: usize,
    pub with: Vec<String>,
}

/// Where a resource lands in another tool's order (werf, Argo CD, kapp, KOTS).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DialectPlace {
    /// The tool, as its users name it (`Argo CD`, `KOTS`).
    pub tool: String,
    /// `Kind/name` (`Kind/prefix*` for an object named by `generateName`).
    pub resource: String,
    pub at: DialectStep,
    /// Steps of the tool's order.
    pub steps: usize,
}

/// A resource's place in another tool's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DialectStep {
    /// 1-based step, and its name (as markdown) in `chartseq plan --dialect`'s words.
    Step(usize, String),
    /// Applied before the steps (CRDs).
    First,
    /// Never applied on install.
    NotApplied,
}

/// A readiness annotation as the chart rendered it, read by the parsers `apply` evaluates
/// with: the annotation's list, then each expression.
#[derive(Clone, Debug)]
pub struct ReadinessAt {
    /// `helm.sh/readiness-failure` (else `-success`).
    pub failure: bool,
    /// The resource sets the other half too.
    pub paired: bool,
    /// Each expression with its parse, or why the list could not be read.
    pub parsed: ReadinessList,
}

/// A readiness list: each expression as written with its parse, or why it is not a list.
pub type ReadinessList = Result<Vec<(String, Result<Expression, ExprError>)>, String>;

/// Reads a readiness annotation's written value as the model reads the rendered one.
pub fn readiness_list(value: &str) -> ReadinessList {
    let value = crate::model::annotations::AnnotationValue::Str(value.to_owned());
    match crate::model::annotations::parse_name_list(&value) {
        Ok(texts) => Ok(texts
            .into_iter()
            .map(|t| {
                let parsed = crate::readiness::expr::parse(&t);
                (t, parsed)
            })
            .collect()),
        Err(e) => Err(e.describe()),
    }
}

/// Everything one render of a chart told.
#[derive(Debug, Default)]
pub struct Analysis {
    pub diagnostics: BTreeMap<PathBuf, Vec<Diagnostic>>,
    /// By (chart directory, group).
    pub groups: BTreeMap<(PathBuf, String), GroupInfo>,
    /// By (parent chart directory, effective subchart name).
    pub subcharts: BTreeMap<(PathBuf, String), SubchartInfo>,
    /// Readiness annotations as rendered, by template file and 0-based line of the value.
    pub readiness: BTreeMap<PathBuf, Vec<(u32, ReadinessAt)>>,
    /// Other tools' order by (template file, 0-based line of the resource's `kind:`).
    pub dialects: BTreeMap<PathBuf, Vec<(u32, DialectPlace)>>,
    /// Written names of every template and `Chart.yaml` of the chart, as rendered.
    pub files: BTreeMap<PathBuf, FileIndex>,
    /// helm could not render: only its error is current.
    pub render_failed: bool,
    /// Why the plan could not be made, when it could not.
    pub plan_error: Option<String>,
    pub elapsed: Duration,
}

/// What to render.
#[derive(Clone, Debug)]
pub struct Job {
    pub root: PathBuf,
    /// Open buffers under `root` whose text differs from the file on disk.
    pub overlay: BTreeMap<PathBuf, String>,
    pub helm: Option<PathBuf>,
    /// The chart's `ci/*-values.yaml` files open in the editor: each is rendered too, and
    /// its file shows what that rendering finds beyond the default values'.
    pub ci_values: Vec<PathBuf>,
    /// Set when a newer edit made this render stale: helm is stopped.
    pub cancel: Cancel,
}

/// The rule's page, as SARIF links it.
fn rule_page(code: &str) -> Option<Url> {
    let rule = crate::rules::find(code)?;
    let repository = env!("CARGO_PKG_REPOSITORY").trim_end_matches('/');
    Url::parse(&format!(
        "{repository}/blob/main/rules/{}",
        rule.page_name()
    ))
    .ok()
}

/// Copies the chart tree to `to`, then writes the buffers over it.
fn overlay_copy(
    root: &Path,
    to: &Path,
    overlay: &BTreeMap<PathBuf, String>,
) -> std::io::Result<()> {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let rel = dir.strip_prefix(root).unwrap_or(Path::new(""));
        std::fs::create_dir_all(to.join(rel))?;
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let path = entry.path();
            let kind = std::fs::metadata(&path)?;
            if kind.is_dir() {
                if entry.file_name() != ".git" {
                    stack.push(path);
                }
            } else if let Ok(rel) = path.strip_prefix(root) {
                std::fs::copy(&path, to.join(rel))?;
            }
        }
    }
    for (path, text) in overlay {
        if let Ok(rel) = path.strip_prefix(root) {
            let target = to.join(rel);
            if let Some(parent) = target.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(target, text)?;
        }
    }
    Ok(())
}

/// Maps display names of the rendered copy back to the files a person edits.
struct Paths {
    /// The directory rendered (the chart, or its overlay copy), as given to the loader.
    given: PathBuf,
    /// The same, canonical.
    rendered: PathBuf,
    root: PathBuf,
    cwd: PathBuf,
}

impl Paths {
    fn real(&self, display: &str) -> Option<PathBuf> {
        let path = Path::new(display);
        let path = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.cwd.join(path)
        };
        // A name under the rendered directory as written needs no file-system lookup: a chart
        // of thousands of templates is not thousands of `readlink`s per render.
        if !path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            for base in [&self.given, &self.rendered] {
                if let Ok(rel) = path.strip_prefix(base) {
                    return Some(self.root.join(rel));
                }
            }
        }
        let path = std::fs::canonicalize(&path).unwrap_or(path);
        let rel = path.strip_prefix(&self.rendered).ok()?;
        Some(self.root.join(rel))
    }
}

/// Whether a file is a `ci/<name>-values.yaml` of the chart at `root` (chart-testing's
/// convention, as `lint --ci-values` reads it).
#[must_use]
pub fn is_ci_values(root: &Path, file: &Path) -> bool {
    file.parent() == Some(&root.join("ci"))
        && file
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with("-values.yaml"))
}

/// One rendering's lint: the model and report, or why there are none.
struct Linted {
    model: Model,
    report: crate::lint::Report,
    render_failed: bool,
}

/// Renders the chart at `rendered` (with `values` over its defaults) and lints it, as
/// `chartseq lint` (`--ci-values` for a values file) does.
fn lint_rendering(
    rendered: &Path,
    values: Option<PathBuf>,
    job: &Job,
    settings: &Settings,
) -> Result<Linted, String> {
    let mut helm = HelmOptions {
        helm: job.helm.clone(),
        cancel: job.cancel.clone(),
        ..HelmOptions::default()
    };
    helm.values.files.extend(values);
    let input = Input {
        target: InputTarget::Chart(rendered.to_path_buf()),
        chart: None,
        helm,
        limits: crate::parse::Limits::default(),
        chart_limits: ChartLimits::default(),
        max_input_bytes: crate::source::read::MAX_INPUT_BYTES,
    };
    match model::load(&input) {
        Ok(model) => {
            let report = crate::lint::run(&model, settings);
            Ok(Linted {
                model,
                report,
                render_failed: false,
            })
        }
        Err(e) => e
            .render_failure()
            .filter(|_| !job.cancel.is_cancelled())
            .and_then(|f| crate::lint::render_failure(f, input.chart_limits, settings))
            .map(|(model, report)| Linted {
                model,
                report,
                render_failed: true,
            })
            .ok_or_else(|| e.message()),
    }
}

/// Renders, lints and plans one chart: with its default values, and with each open
/// `ci/*-values.yaml` file (at the same time).
#[must_use]
pub fn analyze(job: &Job) -> Analysis {
    let started = Instant::now();
    let mut analysis = Analysis::default();
    let temp;
    let rendered = if job.overlay.is_empty() {
        job.root.clone()
    } else {
        temp = match crate::source::temp::TempDir::new("chartseq-lsp") {
            Ok(t) => t,
            Err(e) => {
                tool_failure(&mut analysis, job, &e.message());
                return analysis;
            }
        };
        let name = job.root.file_name().unwrap_or_else(|| "chart".as_ref());
        let copy = temp.path().join(name);
        if let Err(e) = overlay_copy(&job.root, &copy, &job.overlay) {
            tool_failure(&mut analysis, job, &format!("cannot copy the chart: {e}"));
            return analysis;
        }
        copy
    };
    let paths = Paths {
        given: if rendered.is_absolute() {
            rendered.clone()
        } else {
            std::env::current_dir().unwrap_or_default().join(&rendered)
        },
        rendered: std::fs::canonicalize(&rendered).unwrap_or_else(|_| rendered.clone()),
        root: job.root.clone(),
        cwd: std::env::current_dir().unwrap_or_default(),
    };
    let settings = settings(&job.root);
    let (default, with_ci) = std::thread::scope(|scope| {
        let ci: Vec<_> = job
            .ci_values
            .iter()
            .filter_map(|file| {
                let values = rendered.join(file.strip_prefix(&job.root).ok()?);
                let (rendered, settings) = (&rendered, &settings);
                Some((
                    file,
                    scope.spawn(move || lint_rendering(rendered, Some(values), job, settings)),
                ))
            })
            .collect();
        let default = lint_rendering(&rendered, None, job, &settings);
        let with_ci: Vec<_> = ci
            .into_iter()
            .map(|(file, handle)| {
                let linted = handle
                    .join()
                    .unwrap_or_else(|_| Err("the rendering failed".to_owned()));
                (file, linted)
            })
            .collect();
        (default, with_ci)
    });
    if job.cancel.is_cancelled() {
        analysis.render_failed = true;
        return analysis;
    }
    let linted = match default {
        Ok(linted) => linted,
        Err(message) => {
            tool_failure(&mut analysis, job, &message);
            return analysis;
        }
    };
    analysis.render_failed = linted.render_failed;
    let model = &linted.model;
    let texts = texts(model, &paths, job);
    for finding in &linted.report.findings {
        add_finding(&mut analysis, finding, &paths, job, &texts, None);
    }
    let known: std::collections::BTreeSet<_> = linted
        .report
        .findings
        .iter()
        .map(crate::lint::matrix::key)
        .collect();
    for (file, ci) in with_ci {
        let ci = match ci {
            Ok(ci) => ci,
            Err(message) => {
                values_failure(&mut analysis, file, &message);
                continue;
            }
        };
        // What the default values find is shown once, where it is; this file shows what
        // only its values bring.
        for finding in &ci.report.findings {
            if !known.contains(&crate::lint::matrix::key(finding)) {
                add_finding(&mut analysis, finding, &paths, job, &texts, Some(file));
            }
        }
    }
    if !analysis.render_failed {
        plan_info(&mut analysis, model, &paths);
        dialect_info(&mut analysis, model, &paths);
        readiness_info(&mut analysis, model, &paths);
    }
    for (path, text) in &texts {
        analysis.files.insert(path.clone(), index::scan(path, text));
    }
    analysis.elapsed = started.elapsed();
    analysis
}

/// The lint settings `chartseq lint` would use for the chart: its configuration file, else
/// the defaults.
fn settings(root: &Path) -> Settings {
    let config = config::discover(root)
        .and_then(|p| crate::lint::Config::load(&p).ok())
        .unwrap_or_default();
    let selection = Selection::build(&config, &config::SelectArgs::default()).unwrap_or_default();
    Settings {
        selection,
        config,
        ..Settings::default()
    }
}

/// The text of every chart file of the model, by real path.
fn texts(model: &Model, paths: &Paths, job: &Job) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    for chart in &model.charts {
        let Some(info) = &chart.info else { continue };
        let files = info
            .files
            .values()
            .copied()
            .chain(std::iter::once(info.meta.file));
        for file in files {
            let source = model.sources.get(file);
            if let Some(real) = paths.real(&source.name) {
                let text = job
                    .overlay
                    .get(&real)
                    .cloned()
                    .unwrap_or_else(|| String::from_utf8_lossy(&source.bytes).into_owned());
                out.insert(real, text);
            }
        }
    }
    out
}

/// A 1-based line and character column of a text as a protocol position.
fn position(text: Option<&String>, line: u32, column: u32) -> Position {
    let line0 = line.saturating_sub(1);
    let character =
        text.and_then(|t| t.lines().nth(line0 as usize))
            .map_or(column.saturating_sub(1), |l| {
                l.chars()
                    .take(column.saturating_sub(1) as usize)
                    .map(char::len_utf16)
                    .sum::<usize>() as u32
            });
    Position {
        line: line0,
        character,
    }
}

fn severity(s: Severity) -> DiagnosticSeverity {
    match s {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
    }
}

/// Adds a finding where it is. With `values` (a `ci/*-values.yaml` file whose rendering found
/// it), a finding located elsewhere is shown on that file's first line, pointing at where it
/// is: the file is what the author edits to make it appear.
fn add_finding(
    analysis: &mut Analysis,
    finding: &Finding,
    paths: &Paths,
    job: &Job,
    texts: &BTreeMap<PathBuf, String>,
    values: Option<&PathBuf>,
) {
    let loc = &finding.location;
    let mut located = paths.real(&loc.file);
    let mut exact = located.is_some();
    // A line not found in a template: the template the document came from, at its top.
    if located.is_none() {
        located = finding
            .source_path
            .as_deref()
            .and_then(|s| s.split_once('/'))
            .map(|(_, rest)| job.root.join(rest))
            .filter(|p| p.is_file());
    }
    let mut path = located.unwrap_or_else(|| job.root.join("Chart.yaml"));
    let text = texts.get(&path);
    let mut range = if exact {
        Range {
            start: position(text, loc.line, loc.column),
            end: position(text, loc.end_line, loc.end_column),
        }
    } else {
        exact = false;
        Range::default()
    };
    let mut message = finding.message.clone();
    if !finding.help.is_empty() {
        message.push_str("\nhelp: ");
        message.push_str(&finding.help);
    }
    for note in &finding.notes {
        message.push_str("\nnote: ");
        message.push_str(note);
    }
    if !exact {
        let _ = write!(message, "\nnote: rendered at {}:{}", loc.file, loc.line);
    }
    let mut related_information = None;
    if let Some(values) = values.filter(|v| **v != path) {
        let shown = path.strip_prefix(&job.root).unwrap_or(&path);
        let _ = write!(
            message,
            "\nnote: found only with these values, at {}:{}",
            shown.display(),
            range.start.line + 1
        );
        related_information = Url::from_file_path(&path).ok().map(|uri| {
            vec![DiagnosticRelatedInformation {
                location: Location { uri, range },
                message: "found here with these values".to_owned(),
            }]
        });
        path.clone_from(values);
        range = Range::default();
    }
    let data = fix_data(finding).filter(|_| related_information.is_none());
    analysis
        .diagnostics
        .entry(path)
        .or_default()
        .push(Diagnostic {
            range,
            severity: Some(severity(finding.severity)),
            code: Some(NumberOrString::String(finding.code.to_owned())),
            code_description: rule_page(finding.code).map(|href| CodeDescription { href }),
            source: Some("chartseq".to_owned()),
            message,
            related_information,
            tags: None,
            data,
        });
}

/// A rendering with a values file that could not be made: said on that file.
fn values_failure(analysis: &mut Analysis, file: &Path, message: &str) {
    analysis
        .diagnostics
        .entry(file.to_path_buf())
        .or_default()
        .push(Diagnostic {
            range: Range::default(),
            severity: Some(DiagnosticSeverity::ERROR),
            source: Some("chartseq".to_owned()),
            message: crate::safe::one_line(message).into_owned(),
            ..Diagnostic::default()
        });
}

/// The text between the first pair of backticks after `after` in `text`.
fn quoted<'t>(text: &'t str, after: &str) -> Option<&'t str> {
    let rest = &text[text.find(after)? + after.len()..];
    let start = rest.find('`')? + 1;
    let end = rest[start..].find('`')? + start;
    Some(&rest[start..end])
}

/// What a certain quick fix needs, from the finding's own words: the name written and the one
/// meant (CS101, CS102), the name a group waits for that is itself (CS001), the key and expression to add (CS301), the key to rename (CS202: a
/// misspelt key, a key of the superseded draft with a one-key HIP-0025 equivalent).
fn fix_data(finding: &Finding) -> Option<serde_json::Value> {
    match finding.code {
        "CS101" | "CS102" => {
            let meant = quoted(&finding.help, "did you mean")?;
            let written =
                quoted(&finding.message, "depends on").or_else(|| quoted(&finding.message, ""))?;
            Some(serde_json::json!({"replace": written, "with": meant}))
        }
        "CS301" => {
            let key = quoted(&finding.help, "add")?;
            let expression = quoted(&finding.help, "for example")?;
            Some(serde_json::json!({"add": key, "expression": expression}))
        }
        // A group that depends on itself: the one cycle whose fix is certain.
        "CS001" => {
            let (_, path) = finding.message.rsplit_once(": ")?;
            let (a, b) = path.split_once(" -> ")?;
            (a == b).then(|| serde_json::json!({"remove": a}))
        }
        "CS202" => {
            let written = quoted(&finding.message, "")?;
            let meant = match finding.help.strip_prefix("use `") {
                Some(rest) => rest.split_once("` instead")?.0,
                None => quoted(&finding.help, "did you mean")?,
            };
            (!meant.contains(' ')).then(|| serde_json::json!({"rename": written, "to": meant}))
        }
        _ => None,
    }
}

fn tool_failure(analysis: &mut Analysis, job: &Job, message: &str) {
    analysis.render_failed = true;
    analysis
        .diagnostics
        .entry(job.root.join("Chart.yaml"))
        .or_default()
        .push(Diagnostic {
            range: Range::default(),
            severity: Some(DiagnosticSeverity::ERROR),
            source: Some("chartseq".to_owned()),
            message: crate::safe::one_line(message).into_owned(),
            ..Diagnostic::default()
        });
}

/// The chart directory of each chart level.
fn chart_dirs(model: &Model, paths: &Paths) -> Vec<Option<PathBuf>> {
    model
        .charts
        .iter()
        .map(|c| {
            let info = c.info.as_ref()?;
            let file = paths.real(&model.sources.get(info.meta.file).name)?;
            file.parent().map(Path::to_path_buf)
        })
        .collect()
}

fn describe(model: &Model, doc: usize) -> String {
    let document = &model.documents[doc];
    let what = model
        .resource(doc)
        .map_or_else(|| "a document".to_owned(), |r| r.id.to_string());
    match &document.source_path {
        Some(s) => format!("{what} ({s})"),
        None => what,
    }
}

fn plan_info(analysis: &mut Analysis, model: &Model, paths: &Paths) {
    let plan = match crate::plan::plan(model) {
        Ok(plan) => plan,
        Err(e) => {
            analysis.plan_error = Some(format!(
                "no install order: {} fatal issue(s) (see the diagnostics)",
                e.issues.len()
            ));
            return;
        }
    };
    let dirs = chart_dirs(model, paths);
    // A step of another level is that whole subchart, as its parent sees it.
    let name = |step: &crate::plan::Step, level: usize| match &step.group {
        _ if step.chart != level => format!("subchart {}", model.charts[step.chart].display),
        Some(g) => g.clone(),
        None => "unsequenced resources".to_owned(),
    };
    let names = |steps: &mut dyn Iterator<Item = &crate::plan::Step>, level: usize| {
        let mut out: Vec<String> = Vec::new();
        for s in steps {
            let n = name(s, level);
            if !out.contains(&n) {
                out.push(n);
            }
        }
        out
    };
    for level in &plan.levels {
        let Some(Some(dir)) = dirs.get(level.chart) else {
            continue;
        };
        let chart = &model.charts[level.chart].display;
        for (b, batch) in level.group_batches.iter().enumerate() {
            for group in batch {
                let Some((i, step)) = plan.steps.iter().enumerate().find(|(_, s)| {
                    s.chart == level.chart && s.group.as_deref() == Some(group.as_str())
                }) else {
                    continue;
                };
                let waited_by = names(
                    &mut plan.steps.iter().filter(|s| s.after.contains(&i)),
                    level.chart,
                );
                let waits_for = names(&mut step.after.iter().map(|&a| &plan.steps[a]), level.chart);
                analysis.groups.insert(
                    (dir.clone(), group.clone()),
                    GroupInfo {
                        chart: chart.clone(),
                        batch: b + 1,
                        waits_for,
                        waited_by,
                        resources: step.resources.iter().map(|&d| describe(model, d)).collect(),
                    },
                );
            }
        }
        for (b, batch) in level.subchart_batches.iter().enumerate() {
            for sub in batch {
                analysis.subcharts.insert(
                    (dir.clone(), sub.clone()),
                    SubchartInfo {
                        parent: chart.clone(),
                        batch: b + 1,
                        with: batch.iter().filter(|s| *s != sub).cloned().collect(),
                    },
                );
            }
        }
    }
}

/// Where each resource lands in the order of the other tool whose annotations the chart
/// carries (the one `plan --dialect auto` would pick), by the template line of its `kind:`.
fn dialect_info(analysis: &mut Analysis, model: &Model, paths: &Paths) {
    let Ok(dialect) = crate::plan::detect::auto(model) else {
        return;
    };
    if matches!(dialect, crate::plan::Dialect::Hip) {
        return;
    }
    let Ok(plan) = crate::plan::plan_in(model, dialect) else {
        return;
    };
    let steps = plan.steps.len();
    let placed = plan
        .steps
        .iter()
        .enumerate()
        .flat_map(|(i, step)| {
            // In `plan --dialect`'s words: the step's name, and what it waits for when that is
            // not the step before.
            let mut name = format!(
                "`{}`",
                crate::safe::one_line(step.group.as_deref().unwrap_or("not objects"))
            );
            let chained = (step.after.len() == 1 && step.after[0] + 1 == i)
                || (step.after.is_empty() && i == 0);
            if !chained && step.after.is_empty() {
                name.push_str(" (waits for nothing)");
            } else if !chained {
                let after: Vec<String> = step.after.iter().map(|a| (a + 1).to_string()).collect();
                let _ = write!(name, " (after steps {})", after.join(", "));
            }
            step.resources
                .iter()
                .map(move |&doc| (doc, DialectStep::Step(i + 1, name.clone())))
        })
        .chain(plan.crds.iter().map(|&doc| (doc, DialectStep::First)))
        .chain(
            plan.not_installed
                .iter()
                .map(|&doc| (doc, DialectStep::NotApplied)),
        );
    for (doc, at) in placed {
        // Argo CD creates an object named by `generateName` (a hook): it has a place too.
        let (resource, star) = match (model.resource(doc), model.generated(doc)) {
            (Some(r), _) => (r, ""),
            (None, Some(r)) => (r, "*"),
            (None, None) => continue,
        };
        let Some(loc) = crate::lint::locate::template_loc(model, resource.kind_loc) else {
            continue;
        };
        let source = model.sources.get(loc.file);
        let Some(path) = paths.real(&source.name) else {
            continue;
        };
        let line = source.line_col(loc.span.start).line;
        analysis.dialects.entry(path).or_default().push((
            line.saturating_sub(1),
            DialectPlace {
                tool: dialect.tool().to_owned(),
                resource: crate::safe::one_line(&format!(
                    "{}/{}{star}",
                    resource.id.kind, resource.id.name
                ))
                .into_owned(),
                at,
                steps,
            },
        ));
    }
    for places in analysis.dialects.values_mut() {
        places.sort_by_key(|(line, _)| *line);
    }
}

/// Every readiness annotation of the rendering, at the template line of its value, with the
/// expressions the model parsed from it (the very values `apply` evaluates).
fn readiness_info(analysis: &mut Analysis, model: &Model, paths: &Paths) {
    for doc in 0..model.documents.len() {
        let Some(resource) = model.resource(doc) else {
            continue;
        };
        let seq = &resource.seq;
        let halves = [
            (false, &seq.readiness_success, &seq.readiness_failure),
            (true, &seq.readiness_failure, &seq.readiness_success),
        ];
        for (failure, this, other) in halves {
            let Some(this) = this else { continue };
            let Some(loc) = crate::lint::locate::template_loc(model, this.loc) else {
                continue;
            };
            let source = model.sources.get(loc.file);
            let Some(path) = paths.real(&source.name) else {
                continue;
            };
            let parsed = match &this.value {
                Ok(_) => Ok(resource
                    .facts
                    .readiness
                    .iter()
                    .filter(|r| r.failure == failure)
                    .map(|r| (r.text.clone(), r.parsed.clone()))
                    .collect()),
                Err(e) => Err(e.describe()),
            };
            // CS301's reading: a half is set when its list holds an expression.
            let paired = other
                .as_ref()
                .is_some_and(|o| o.value.as_ref().is_ok_and(|l| !l.is_empty()));
            let line = source.line_col(loc.span.start).line.saturating_sub(1);
            analysis.readiness.entry(path).or_default().push((
                line,
                ReadinessAt {
                    failure,
                    paired,
                    parsed,
                },
            ));
        }
    }
}
