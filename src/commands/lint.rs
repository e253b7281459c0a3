//! `chartseq lint`, `chartseq explain` and `chartseq rules`.
//!
//! Findings go to the chosen reporter (a chart helm cannot render is one, CS900); failures of
//! the tool itself (a bad configuration file, an unreadable chart) are rendered as every
//! command renders them and exit 2.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use super::{Failure, Outcome};
use crate::lint::config::{self, ConfigError, SelectArgs};
use crate::lint::{Config, Selection, Settings, Severity};
use crate::model::{self, Input, InputTarget};
use crate::report::{self, Format};
use crate::rules::RULES;
use crate::safe::one_line;

/// When to colour the human output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Color {
    Auto,
    Always,
    Never,
}

/// Everything `chartseq lint` needs, validated.
#[derive(Clone, Debug)]
pub struct LintOptions {
    pub input: Input,
    pub format: Format,
    pub output: Option<PathBuf>,
    /// Exit 1 when a finding is at or above this level; `None`: never.
    pub fail_on: Option<Severity>,
    pub select: SelectArgs,
    pub config: Option<PathBuf>,
    pub timeout: Duration,
    pub readiness_timeout: Duration,
    pub color: Color,
    /// More targets after the first, linted into the same report.
    pub more_targets: Vec<PathBuf>,
    /// Lint only the charts under the targets with files changed since this git ref.
    pub changed_since: Option<String>,
    /// The targets are files: lint the chart roots they belong to.
    pub owning_charts: bool,
    /// `$GITHUB_STEP_SUMMARY`, for the GitHub format.
    pub step_summary: Option<PathBuf>,
    /// More reports of the same run: (format, file).
    pub also_report: Vec<(Format, PathBuf)>,
    /// Lint each chart once per `ci/*-values.yaml` file it has (chart-testing's convention).
    pub ci_values: bool,
    /// `--values-matrix`: lint each chart under its default values, each `ci/*-values.yaml`
    /// file and each subchart condition or tag flipped, at most this many renderings.
    pub values_matrix: Option<usize>,
}

/// The value sets a chart's matrix renders at most, unless `--values-matrix-max` says.
pub const VALUES_MATRIX_MAX: usize = 32;

/// Renders a tool failure as every command does ([`super::write_failure`]); a configuration
/// error shows its line with the place marked.
fn fatal(
    err: &mut dyn Write,
    message: &str,
    help: Option<&str>,
    source: Option<&ConfigError>,
) -> io::Result<()> {
    let mut message = message.to_owned();
    let mut detail = Vec::new();
    if let Some(ConfigError {
        path,
        text,
        span: Some(span),
        ..
    }) = source
    {
        let start = span.start.min(text.len());
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let line_no = text[..start].matches('\n').count() + 1;
        let column = text[line_start..start].chars().count() + 1;
        let width = text[start..span.end.clamp(start, line_end)]
            .chars()
            .count()
            .max(1);
        if let Some(rest) = message.strip_prefix(&format!("{path}: ")) {
            message = format!("{path}:{line_no}:{column}: {rest}");
        }
        let gutter = " ".repeat(line_no.to_string().len());
        detail.push(format!(
            "{line_no} | {}",
            crate::safe::one_line(&text[line_start..line_end])
        ));
        detail.push(format!(
            "{gutter} | {}{} here",
            " ".repeat(column - 1),
            "^".repeat(width)
        ));
    }
    if let Some(help) = help {
        detail.push(format!("help: {help}"));
    }
    let mut error = crate::error::Error::new(message);
    if !detail.is_empty() {
        error = error.with_detail(detail.join("\n"));
    }
    super::write_failure(err, &Failure::Tool(error))
}

/// One input to lint, with the values file or value set that names its run (`--ci-values`,
/// `--values-matrix`) and the target it belongs to.
struct LabelledInput {
    input: Input,
    label: Option<String>,
    target: usize,
    /// The first of a values matrix: its rendering decides the flips.
    matrix: bool,
}

/// The inputs to lint: every target, or with `--changed-since` the changed charts under them
/// (`None` when no chart changed: there is nothing to report). With `--ci-values`, a chart
/// with `ci/*-values.yaml` files is one input per file, labelled with that file.
fn targets(
    options: &LintOptions,
    err: &mut dyn Write,
) -> Result<Option<Vec<LabelledInput>>, Failure> {
    let mut paths = vec![match &options.input.target {
        InputTarget::Chart(p) | InputTarget::Stream(p) => p.clone(),
    }];
    paths.extend(options.more_targets.iter().cloned());
    if let Some(since) = &options.changed_since {
        let charts = crate::source::discover::changed_charts(since, &paths)?;
        if charts.is_empty() {
            writeln!(
                err,
                "chartseq: no chart under the targets changed since {since}"
            )?;
            return Ok(None);
        }
        paths = charts;
    } else if options.owning_charts {
        let charts = crate::source::discover::owning_charts(&paths);
        if charts.is_empty() {
            return Ok(None);
        }
        paths = charts;
    } else {
        let several = paths.len() > 1;
        paths = expand_directories(paths, err)?;
        if several || paths.len() > 1 {
            paths = lintable(paths, err)?;
        }
    }
    let mut inputs = Vec::with_capacity(paths.len());
    for (target, path) in paths.iter().enumerate() {
        let input = Input {
            target: Input::target_for(path),
            ..options.input.clone()
        };
        let matrix =
            options.values_matrix.is_some() && matches!(input.target, InputTarget::Chart(_));
        let ci_files = match &input.target {
            InputTarget::Chart(dir) if (options.ci_values || matrix) && dir.is_dir() => {
                ci_values_files(dir)
            }
            _ => Vec::new(),
        };
        if matrix {
            inputs.push(LabelledInput {
                input: input.clone(),
                label: Some("default values".to_owned()),
                target,
                matrix: true,
            });
        }
        for file in &ci_files {
            let mut with = input.clone();
            with.helm.values.files.push(file.clone());
            let file = crate::source::display_path(file);
            inputs.push(LabelledInput {
                input: with,
                label: Some(if matrix {
                    format!("values {file}")
                } else {
                    file
                }),
                target,
                matrix: false,
            });
        }
        if ci_files.is_empty() && !matrix {
            inputs.push(LabelledInput {
                input,
                label: None,
                target,
                matrix: false,
            });
        }
    }
    Ok(Some(inputs))
}

/// A directory that is not a chart stands for every chart under it (`chartseq lint .` in a
/// repository of charts), vendored subcharts left to their parents. One with no chart under
/// it is skipped among several targets, and an error alone.
fn expand_directories(paths: Vec<PathBuf>, err: &mut dyn Write) -> Result<Vec<PathBuf>, Failure> {
    let single = paths.len() == 1;
    let mut out = Vec::with_capacity(paths.len());
    for path in paths {
        if !path.is_dir() || path.join("Chart.yaml").is_file() {
            out.push(path);
            continue;
        }
        let charts = crate::source::discover::charts_under(&path);
        let shown = crate::source::display_path(&path);
        if charts.is_empty() {
            if single {
                return Err(crate::error::Error::usage(format!(
                    "no Chart.yaml in {shown} or below it: no chart to lint"
                ))
                .with_detail("a target is a chart directory (with Chart.yaml), a directory of charts, a chart archive (.tgz), a rendered manifest stream file, or - for standard input")
                .into());
            }
            writeln!(
                err,
                "chartseq: skipped {}: not a chart (no Chart.yaml)",
                one_line(&shown)
            )?;
            continue;
        }
        out.extend(charts);
    }
    if out.is_empty() {
        return Err(crate::error::Error::usage("no chart among the targets")
            .with_detail("a target is a chart directory (with Chart.yaml), a directory of charts, a chart archive (.tgz) or a rendered manifest stream")
            .into());
    }
    Ok(out)
}

/// A chart's `ci/*-values.yaml` files (chart-testing's convention), in name order.
fn ci_values_files(chart: &std::path::Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(chart.join("ci")) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with("-values.yaml"))
        })
        .collect();
    files.sort();
    files
}

/// Whether CS203's advice needs to know if helm accepts `apiVersion: v3` charts: helm
/// rendered this input, and a chart in it is not v3. (A rendered stream was made by some
/// helm chartseq cannot see: the advice then stays general, and output stays reproducible.)
fn needs_chart_v3(input: &Input, model: &crate::model::Model) -> bool {
    matches!(input.target, InputTarget::Chart(_))
        && model.charts.iter().any(|c| {
            c.info
                .as_ref()
                .is_some_and(|i| i.meta.api_version.as_deref() != Some("v3"))
        })
}

/// Of several targets (a glob such as `charts/*`), the ones that are charts or rendered
/// streams; the others (a README, a directory without `Chart.yaml`) are skipped, as
/// chart-testing skips them, and named on `err`. None left is a failure: there was nothing to
/// lint.
fn lintable(paths: Vec<PathBuf>, err: &mut dyn Write) -> Result<Vec<PathBuf>, Failure> {
    let mut kept = Vec::with_capacity(paths.len());
    for path in paths {
        let lower = path.to_string_lossy().to_ascii_lowercase();
        let why = if path.as_os_str() == "-" {
            None
        } else if path.is_dir() {
            (!path.join("Chart.yaml").is_file()).then_some("no Chart.yaml")
        } else if !path.exists() {
            // Named but missing: loading it reports the error.
            None
        } else {
            let known = [".yaml", ".yml", ".json", ".tgz", ".tar.gz"]
                .iter()
                .any(|ext| lower.ends_with(ext));
            (!known).then_some("neither a chart archive nor a YAML stream")
        };
        match why {
            Some(why) => writeln!(
                err,
                "chartseq: skipped {}: not a chart ({why})",
                one_line(&crate::source::display_path(&path))
            )?,
            None => kept.push(path),
        }
    }
    if kept.is_empty() {
        return Err(crate::error::Error::usage("no chart among the targets")
            .with_detail("a target is a chart directory (with Chart.yaml), a chart archive (.tgz) or a rendered manifest stream")
            .into());
    }
    Ok(kept)
}

/// `chartseq lint`.
pub fn lint(
    options: &LintOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    let config_path = options.config.clone().or_else(|| {
        let start = match &options.input.target {
            InputTarget::Stream(p) if p.as_os_str() == "-" => PathBuf::from("."),
            InputTarget::Chart(p) | InputTarget::Stream(p) => p.clone(),
        };
        config::discover(&start)
    });
    let config = match &config_path {
        Some(path) => match Config::load(path) {
            Ok(c) => c,
            Err(e) => {
                fatal(
                    err,
                    &format!("{}: {}", e.path, e.message),
                    Some("see `chartseq lint --help` for the configuration keys"),
                    Some(&e),
                )?;
                return Err(Failure::Reported);
            }
        },
        None => Config::default(),
    };
    let selection = match Selection::build(&config, &options.select) {
        Ok(s) => s,
        Err(message) => {
            fatal(
                err,
                &message,
                Some("`chartseq rules` lists the codes and names"),
                None,
            )?;
            return Err(Failure::Reported);
        }
    };
    if options.readiness_timeout > options.timeout {
        fatal(
            err,
            "--readiness-timeout must not exceed --timeout",
            Some("each wait is bounded by the readiness timeout, the whole release by --timeout"),
            None,
        )?;
        return Err(Failure::Reported);
    }
    // No chart to lint (none changed) still writes a report, empty, so that CI steps reading
    // it (a SARIF upload, a JUnit collector) find one.
    let inputs = targets(options, err)?.unwrap_or_default();
    let settings = Settings {
        selection,
        config,
        timeout: options.timeout,
        readiness_timeout: options.readiness_timeout,
        chart_v3: crate::source::helm::ChartV3::Unknown,
        argo_deploy: false,
    };
    let mut linted: Vec<(crate::model::Model, crate::lint::Report, Option<String>)> =
        Vec::with_capacity(inputs.len());
    let mut i = 0;
    while i < inputs.len() {
        if inputs[i].matrix {
            let target = inputs[i].target;
            let end = inputs[i..]
                .iter()
                .position(|l| l.target != target)
                .map_or(inputs.len(), |n| i + n);
            linted.extend(values_matrix(&inputs[i..end], options, &settings, err)?);
            i = end;
            continue;
        }
        let LabelledInput { input, label, .. } = &inputs[i];
        i += 1;
        let (model, mut report) = lint_one(input, &settings, err, None)?;
        if let Some(label) = label {
            for finding in &mut report.findings {
                finding.message = format!("{} (with values {label})", finding.message);
            }
        }
        linted.push((model, report, label.clone()));
    }
    let runs: Vec<report::Run<'_>> = linted
        .iter()
        .map(|(model, report, values)| report::Run {
            model,
            report,
            values: values.as_deref(),
        })
        .collect();
    let to_terminal = options.output.is_none() && io::stdout().is_terminal();
    let color = match options.color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => to_terminal && std::env::var_os("NO_COLOR").is_none(),
    };
    let reporter =
        report::reporter_with_summary(options.format, color, options.step_summary.clone());
    match &options.output {
        Some(path) => {
            let mut buffer = Vec::new();
            reporter.report_all(&mut buffer, &runs)?;
            std::fs::write(path, buffer).map_err(|e| {
                crate::error::Error::io(
                    format!("cannot write {}", crate::source::display_path(path)),
                    e,
                )
            })?;
        }
        None => reporter.report_all(out, &runs)?,
    }
    for (format, path) in &options.also_report {
        let mut buffer = Vec::new();
        report::reporter(*format, false).report_all(&mut buffer, &runs)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                crate::error::Error::io(
                    format!("cannot create {}", crate::source::display_path(dir)),
                    e,
                )
            })?;
        }
        std::fs::write(path, buffer).map_err(|e| {
            crate::error::Error::io(
                format!("cannot write {}", crate::source::display_path(path)),
                e,
            )
        })?;
    }
    let fails = linted
        .iter()
        .any(|(_, report, _)| report.fails(options.fail_on));
    Ok(if fails {
        Outcome::Findings
    } else {
        Outcome::Clean
    })
}

/// Renders and lints one input; `context` names it in a failure.
fn lint_one(
    input: &Input,
    settings: &Settings,
    err: &mut dyn Write,
    context: Option<&str>,
) -> Result<(crate::model::Model, crate::lint::Report), Failure> {
    let loaded = model::load(input);
    if let Some(failure) = loaded
        .as_ref()
        .err()
        .and_then(crate::error::Error::render_failure)
    {
        if let Some(found) = crate::lint::render_failure(failure, input.chart_limits, settings) {
            if found.1.findings.is_empty() {
                writeln!(
                    err,
                    "{}",
                    one_line(&format!(
                        "chartseq: warning: helm cannot render {} (CS900 is not selected)",
                        crate::source::display_path(&failure.chart)
                    ))
                )?;
            }
            return Ok(found);
        }
    }
    let model = match loaded {
        Ok(m) => m,
        Err(e) if e.chart_failure().is_some() => {
            let chart = e.chart_failure().unwrap_or(std::path::Path::new("."));
            let found = crate::lint::load_failure(chart, &e, input.chart_limits, settings);
            if found.1.findings.is_empty() {
                writeln!(
                    err,
                    "{}",
                    one_line(&format!(
                        "chartseq: warning: cannot load chart {} (CS902 is not selected): {}",
                        crate::source::display_path(chart),
                        e.message()
                    ))
                )?;
            }
            return Ok(found);
        }
        Err(e) => {
            let message = match context {
                Some(c) => format!("{c}: {}", e.message()),
                None => e.message(),
            };
            fatal(err, &message, e.detail(), None)?;
            return Err(Failure::Reported);
        }
    };
    let report = if needs_chart_v3(input, &model) {
        let settings = Settings {
            chart_v3: crate::source::helm::chart_v3(input.helm.helm.as_deref()),
            ..settings.clone()
        };
        crate::lint::run(&model, &settings)
    } else {
        crate::lint::run(&model, settings)
    };
    Ok((model, report))
}

/// One chart's values matrix: its default values and `ci/*-values.yaml` files (`given`),
/// then each condition or tag flipped from what the default rendering shows, capped at
/// `--values-matrix-max`; the findings folded so that each is reported once, with the value
/// sets it appears under. Says on `err` how many renderings ran.
fn values_matrix(
    given: &[LabelledInput],
    options: &LintOptions,
    settings: &Settings,
    err: &mut dyn Write,
) -> Result<Vec<(crate::model::Model, crate::lint::Report, Option<String>)>, Failure> {
    let cap = options.values_matrix.unwrap_or(VALUES_MATRIX_MAX).max(1);
    let mut sets: Vec<(Input, String, Option<String>)> = given
        .iter()
        .map(|l| (l.input.clone(), l.label.clone().unwrap_or_default(), None))
        .collect();
    let mut runs = Vec::with_capacity(sets.len());
    let Some(first) = sets.first().cloned() else {
        return Ok(runs);
    };
    let (model, report) = lint_one(&first.0, settings, err, None)?;
    let chart = model
        .charts
        .first()
        .map_or_else(|| "the chart".to_owned(), |c| c.display.clone());
    for flip in crate::lint::matrix::flips(&model) {
        let mut with = first.0.clone();
        with.helm.values.set.push(flip.set.clone());
        sets.push((with, flip.label, Some(flip.set)));
    }
    runs.push((model, report, Some(first.1.clone())));
    if sets.len() > cap {
        let skipped: Vec<&str> = sets[cap..].iter().map(|s| s.1.as_str()).collect();
        writeln!(
            err,
            "{}",
            one_line(&format!(
                "chartseq: the values matrix of chart {chart} has {} value sets, more than --values-matrix-max {cap}: linted the first {cap}; not linted: {}",
                sets.len(),
                skipped.join("; ")
            ))
        )?;
        sets.truncate(cap);
    }
    for (input, label, set) in &sets[1..] {
        let how = set
            .as_deref()
            .map(|s| format!(" (--set {s})"))
            .unwrap_or_default();
        let context = format!("values matrix of chart {chart}, with {label}{how}");
        let (model, report) = lint_one(input, settings, err, Some(&context))?;
        runs.push((model, report, Some(label.clone())));
    }
    let labels: Vec<String> = sets.iter().map(|s| s.1.clone()).collect();
    let described: Vec<String> = sets
        .iter()
        .map(|(_, label, set)| match set {
            Some(s) => format!("{label} (--set {s})"),
            None => label.clone(),
        })
        .collect();
    // Labels name conditions and files from the chart: the line stays one line.
    writeln!(
        err,
        "{}",
        one_line(&format!(
            "chartseq: values matrix of chart {chart}: {} rendering{}: {}",
            sets.len(),
            if sets.len() == 1 { "" } else { "s" },
            described.join("; ")
        ))
    )?;
    let mut reports: Vec<crate::lint::Report> =
        runs.iter_mut().map(|r| std::mem::take(&mut r.1)).collect();
    crate::lint::matrix::fold(&mut reports, &labels);
    for (run, report) in runs.iter_mut().zip(reports) {
        run.1 = report;
    }
    Ok(runs)
}

/// What the lint gate before a deploy found.
pub struct Gate {
    /// An error: the deploy must not go ahead.
    pub failed: bool,
    /// The codes of the warnings shown, in order, one per finding.
    pub warnings: Vec<&'static str>,
}

/// Codes the deploy commands report in their own words (CS105 the values mismatch, CS203 a
/// chart that is not v3): the gate does not repeat them.
const REPORTED_APART: [&str; 2] = ["CS105", "CS203"];

/// Lint as the gate before a deploy: the configuration found from the target, every selected
/// rule. Errors stop the deploy; warnings bear on how it will run (a gate that does not wait,
/// a reference deployed later), so they are shown too, before anything is sent, in the human
/// format on `err`. With `wait_for_jobs`, CS305 (a Job gate that counts as ready once started)
/// is left out: the run waits for the Job to finish.
pub fn gate(
    model: &crate::model::Model,
    input: &Input,
    timeout: Duration,
    readiness_timeout: Duration,
    wait_for_jobs: bool,
    dialect: crate::plan::Dialect,
    err: &mut dyn Write,
) -> Result<Gate, Failure> {
    let start = match &input.target {
        InputTarget::Stream(p) if p.as_os_str() == "-" => PathBuf::from("."),
        InputTarget::Chart(p) | InputTarget::Stream(p) => p.clone(),
    };
    let config = match config::discover(&start).map(|path| Config::load(&path)) {
        Some(Ok(c)) => c,
        Some(Err(e)) => {
            return Err(crate::error::Error::invalid(format!("{}: {}", e.path, e.message)).into());
        }
        None => Config::default(),
    };
    let selection =
        Selection::build(&config, &SelectArgs::default()).map_err(crate::error::Error::new)?;
    let settings = Settings {
        selection,
        config,
        timeout,
        readiness_timeout,
        chart_v3: crate::source::helm::ChartV3::Unknown,
        argo_deploy: dialect.generated_hooks(),
    };
    let mut report = crate::lint::run(model, &settings);
    // With --wait-for-jobs a Job gate waits for the Job to finish: CS305 does not bear on it.
    report.findings.retain(|f| {
        f.severity >= Severity::Warning
            && !REPORTED_APART.contains(&f.code)
            && !(wait_for_jobs && f.code == "CS305")
    });
    report.summary = crate::lint::Summary {
        errors: report
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count(),
        warnings: report
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
            .count(),
        infos: 0,
    };
    let gate = Gate {
        failed: report.summary.errors > 0,
        warnings: report
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
            .map(|f| f.code)
            .collect(),
    };
    if !report.findings.is_empty() {
        report::reporter(Format::Human, false).report(err, model, &report)?;
    }
    Ok(gate)
}

/// `chartseq explain CODE`.
pub fn explain(code: &str, json: bool, out: &mut dyn Write) -> Result<Outcome, Failure> {
    let Some(rule) = crate::rules::find(code) else {
        return Err(Failure::Tool(crate::error::Error::usage(format!(
            "`{code}` is not a rule code or name (see `chartseq rules`)"
        ))));
    };
    if json {
        let value = serde_json::json!({
            "code": rule.code,
            "name": rule.name,
            "severity": rule.severity.as_str(),
            "summary": rule.summary,
            "documentation": rule.doc(),
            "page": rule.page(),
        });
        serde_json::to_writer_pretty(&mut *out, &value).map_err(io::Error::from)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "{} {} ({})\n",
            rule.code,
            rule.name,
            rule.severity.as_str()
        )?;
        write!(out, "{}", rule.doc())?;
    }
    Ok(Outcome::Clean)
}

/// `chartseq rules`.
pub fn rules(json: bool, out: &mut dyn Write) -> Result<Outcome, Failure> {
    if json {
        let value: Vec<serde_json::Value> = RULES
            .iter()
            .map(|r| {
                serde_json::json!({
                    "code": r.code,
                    "name": r.name,
                    "severity": r.severity.as_str(),
                    "summary": r.summary,
                })
            })
            .collect();
        serde_json::to_writer_pretty(&mut *out, &value).map_err(io::Error::from)?;
        writeln!(out)?;
    } else {
        let width = RULES.iter().map(|r| r.name.len()).max().unwrap_or(0);
        for r in RULES {
            writeln!(
                out,
                "{}  {:width$}  {:7}  {}",
                r.code,
                r.name,
                r.severity.as_str(),
                r.summary
            )?;
        }
    }
    Ok(Outcome::Clean)
}
