//! The commands: load the model, plan, write the requested output.

#[cfg(feature = "apply")]
pub mod apply;
pub mod diff;
pub mod lint;
pub mod migrate;
pub mod readiness;

use std::io::{self, Write};

use crate::error::Error;
use crate::model::{self, Content, Input, Model};
use crate::plan::output::{self, PlanFormat, TemplateOptions};
use crate::plan::{self, Plan};

/// How a command ended when it could do its job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Clean,
    /// Exit 1: findings, or no plan could be made.
    Findings,
}

/// The command could not do its job (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    #[error("{0}")]
    Tool(#[source] Error),
    #[error("writing output: {0}")]
    Io(#[source] io::Error),
    /// Already explained on standard error (with a source snippet); exit 2 quietly.
    #[error("see above")]
    Reported,
}

/// The one rendering of a failure of the tool, for every command: `chartseq: error: ` and
/// what failed, then its detail (helm's words, a hint) on the lines below
/// ([`crate::error::report`]).
pub fn write_failure(err: &mut dyn Write, failure: &Failure) -> io::Result<()> {
    match failure {
        Failure::Tool(e) => write_error(err, &e.to_string(), e.detail()),
        other => write_error(err, &other.to_string(), None),
    }
}

/// [`write_failure`] for an error that stops a command without being the tool's failure (a
/// deploy that failed, exit 1).
pub fn write_error(err: &mut dyn Write, message: &str, detail: Option<&str>) -> io::Result<()> {
    writeln!(
        err,
        "chartseq: error: {}",
        crate::safe::terminal_safe(&crate::error::report(message, detail))
    )
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Tool(e)
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::Io(e)
    }
}

/// Reports documents that could not be read; returns whether there were any. In Argo CD's
/// order (`dialect`) a hook named only by `generateName` is no bad document, as Argo CD
/// creates it.
fn report_bad_documents_in(
    model: &Model,
    dialect: plan::Dialect,
    err: &mut dyn Write,
) -> io::Result<bool> {
    let mut any = false;
    for doc in &model.documents {
        if let Content::NotAnObject {
            generated: Some(r), ..
        } = &doc.content
            && dialect.generated_hooks()
            && r.argo.is_hook
        {
            continue;
        }
        if let Content::Invalid { message, at } | Content::NotAnObject { message, at, .. } =
            &doc.content
        {
            any = true;
            let from = doc
                .source_path
                .as_deref()
                .map(|s| format!(" (from {s})"))
                .unwrap_or_default();
            let line = format!(
                "warning: {}{from}: {message}; the document is placed with the unsequenced resources",
                output::position(model, *at)
            );
            writeln!(err, "{}", crate::safe::terminal_safe(&line))?;
        }
    }
    Ok(any)
}

/// Warns about every chart level whose documents are in the stream although the known values
/// disable it: the stream was rendered with other values; nothing of it is dropped.
pub(crate) fn report_values_mismatch(model: &Model, err: &mut dyn Write) -> io::Result<()> {
    for chart in &model.charts {
        if let Some(why) = &chart.rendered_while_disabled {
            let line = format!(
                "warning: {}",
                crate::model::values_mismatch_message(&chart.display, why)
            );
            writeln!(err, "{}", crate::report::safe::terminal_safe(&line))?;
        }
    }
    Ok(())
}

/// Says what each Helm does with a release that carries sequencing while its chart is not
/// `apiVersion: v3`, and that chartseq sequences it anyway: CS203's message and help, so that
/// `plan`, `template` and `apply` say what `lint` says.
pub(crate) fn report_outside_v3(
    model: &Model,
    input: &Input,
    err: &mut dyn Write,
) -> io::Result<()> {
    let Some(found) = crate::rules::cs203_sequencing_in_chart_v2::outside_v3(model) else {
        return Ok(());
    };
    // The same advice as lint's: helm is asked only when it rendered the chart.
    let chart_v3 = if matches!(input.target, crate::model::InputTarget::Chart(_)) {
        crate::source::helm::chart_v3(input.helm.helm.as_deref())
    } else {
        crate::source::helm::ChartV3::Unknown
    };
    let note = crate::rules::cs203_sequencing_in_chart_v2::helm_note(&chart_v3)
        .map(|n| format!("\n  note: {n}"))
        .unwrap_or_default();
    let line = format!(
        "warning[CS203]: {}\n  help: {}{note}",
        found.message(),
        crate::rules::cs203_sequencing_in_chart_v2::HELP
    );
    writeln!(err, "{}", crate::report::safe::terminal_safe(&line))
}

fn load_and_plan(
    input: &Input,
    dialect: plan::detect::Choice,
    err: &mut dyn Write,
) -> Result<(Model, Result<Plan, plan::PlanError>, bool), Failure> {
    let model = model::load(input)?;
    let dialect = dialect
        .resolve(&model)
        .map_err(|mixed| Failure::Tool(crate::error::Error::invalid(mixed.message(&model))))?;
    let bad = report_bad_documents_in(&model, dialect, err)?;
    report_values_mismatch(&model, err)?;
    if dialect == plan::Dialect::Hip {
        report_outside_v3(&model, input, err)?;
    }
    let plan = plan::plan_in(&model, dialect);
    Ok((model, plan, bad))
}

/// Where `lint` shows a location: the template line a rendered line came from when the chart
/// is on disk (else the rendered line, with its template): the one locator of every command.
pub(crate) fn locate(model: &Model, loc: crate::source::Loc) -> String {
    match crate::lint::locate::template_loc(model, loc) {
        Some(t) if t != loc => output::position(model, t),
        _ => output::rendered_position(model, loc),
    }
}

/// Explains why there is no plan with the same findings `lint` reports (rendered snippets
/// with the template lines); the plain listing is kept for the unexpected case where the rules
/// see nothing.
pub(crate) fn write_plan_error(
    err: &mut dyn Write,
    model: &Model,
    e: &plan::PlanError,
) -> io::Result<()> {
    // A dialect's own refusals are not lint findings: listed as they are.
    if e.issues.iter().any(|i| {
        matches!(
            i,
            plan::PlanIssue::InvalidDialectValue { .. }
                | plan::PlanIssue::DialectReference { .. }
                | plan::PlanIssue::DialectCycle { .. }
        )
    }) {
        return output::write_plan_error_at(err, model, e, &|loc| locate(model, loc));
    }
    let report = crate::lint::plan_issue_findings(model);
    if report.findings.is_empty() {
        return output::write_plan_error_at(err, model, e, &|loc| locate(model, loc));
    }
    crate::report::reporter(crate::report::Format::Human, false).report(err, model, &report)
}

/// Says which groups the plan moved to the unsequenced resources because they depend on a
/// group that does not exist (as Helm moves them, with a warning): the plan is made, but not
/// the one the chart's author wrote.
fn report_demotions(model: &Model, plan: &Plan, err: &mut dyn Write) -> io::Result<()> {
    /// At most this many demotions are named one by one; `chartseq lint` lists every one.
    const SHOWN: usize = 50;
    let missing: Vec<_> = plan
        .demotions
        .iter()
        .filter_map(|d| match d {
            plan::Demotion::MissingGroup {
                chart,
                group,
                missing,
                loc,
            } => Some((*chart, group, missing, *loc)),
            _ => None,
        })
        .collect();
    let demoted: std::collections::BTreeSet<_> = missing
        .iter()
        .map(|(chart, group, ..)| (*chart, *group))
        .collect();
    for (chart, group, missing, loc) in missing.iter().take(SHOWN) {
        let why = if demoted.contains(&(*chart, *missing)) {
            "which was moved there itself"
        } else {
            "which is no group there"
        };
        let line = format!(
            "warning: {}: group `{group}` of chart {} depends on `{missing}`, {why}: it is installed with the unsequenced resources, as Helm does (`chartseq lint` says more)",
            locate(model, *loc),
            model.charts[*chart].display,
        );
        writeln!(err, "{}", crate::safe::one_line(&line))?;
    }
    if let Some(more) = missing.len().checked_sub(SHOWN).filter(|n| *n > 0) {
        writeln!(
            err,
            "warning: {more} more group(s) depend on a missing group and are installed with the unsequenced resources (`chartseq lint` lists them all)"
        )?;
    }
    Ok(())
}

/// Loads and plans (with the tool's uninstall order when `uninstall`), then writes the plan
/// with `write`; or explains why there is none and writes what `refused` writes.
fn with_plan_or(
    input: &Input,
    dialect: plan::detect::Choice,
    uninstall: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
    write: impl FnOnce(&mut dyn Write, &Model, &Plan) -> io::Result<()>,
    refused: impl FnOnce(&mut dyn Write, &Model) -> io::Result<()>,
) -> Result<Outcome, Failure> {
    let (model, mut plan, bad) = load_and_plan(input, dialect, err)?;
    if uninstall && let Ok(p) = &mut plan {
        // The tool's own uninstall order, or why its tool would refuse to uninstall.
        if let Err(e) = plan::with_uninstall(&model, p) {
            output::write_refusal_at(err, &model, &e, &|loc| locate(&model, loc), "uninstall")?;
            return Ok(Outcome::Findings);
        }
    }
    match plan {
        Ok(plan) => {
            // What the dialect's tool passes over without failing (a reference to nothing):
            // the plan is its order anyway, but the user should know.
            if !plan.issues.is_empty() {
                let issues = plan::PlanError {
                    issues: plan.issues.clone(),
                };
                output::write_plan_error_at(err, &model, &issues, &|loc| locate(&model, loc))?;
            }
            report_demotions(&model, &plan, err)?;
            write(out, &model, &plan)?;
            Ok(if bad {
                Outcome::Findings
            } else {
                Outcome::Clean
            })
        }
        Err(e) => {
            write_plan_error(err, &model, &e)?;
            refused(out, &model)?;
            Ok(Outcome::Findings)
        }
    }
}

/// `chartseq plan`.
pub fn plan(
    input: &Input,
    dialect: plan::detect::Choice,
    format: PlanFormat,
    uninstall: bool,
    verbose: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    // `helm dag` refuses a chart that is not `apiVersion: v3`, sequencing or not; said after
    // the output, which is what it would print for the same chart as v3.
    let mut refused = None;
    let write = |out: &mut dyn Write, model: &Model, plan: &Plan| {
        if format == PlanFormat::Dag {
            refused = dag_refusal(model);
        }
        if format != PlanFormat::Text {
            return output::write_plan(out, model, plan, format, uninstall, verbose);
        }
        // The text plan is read in a terminal: names from the input are shown escaped.
        let mut text = Vec::new();
        output::write_plan(&mut text, model, plan, format, uninstall, verbose)?;
        out.write_all(&crate::safe::bytes(&text))
    };
    let outcome = with_plan_or(input, dialect, uninstall, out, err, write, |_, _| Ok(()))?;
    if let Some(line) = refused {
        writeln!(err, "{}", crate::safe::terminal_safe(&line))?;
    }
    Ok(outcome)
}

/// What `helm dag` says instead of the DAG when the chart is not `apiVersion: v3`.
fn dag_refusal(model: &Model) -> Option<String> {
    let info = model.charts.first()?.info.as_ref()?;
    let version = info.meta.api_version.as_deref().unwrap_or("v1");
    (version != "v3").then(|| {
        format!(
            "warning: `helm dag` refuses this chart (`helm dag requires chart apiVersion v3 (chart \"{}\" has apiVersion {version})`); above is what it prints for the same chart as apiVersion v3",
            info.meta.name
        )
    })
}

/// `chartseq template`.
pub fn template(
    input: &Input,
    dialect: plan::detect::Choice,
    options: TemplateOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    // The reference's `helm template` builds no plan: a chart whose plan is refused (a cycle)
    // is printed all the same, in Helm's order.
    let reference =
        !options.markers && dialect == plan::detect::Choice::Dialect(plan::Dialect::Hip);
    with_plan_or(
        input,
        dialect,
        false,
        out,
        err,
        |out, model, plan| output::write_template(out, model, plan, options),
        |out, model| {
            if reference {
                output::write_helm_template(out, model, options)
            } else {
                Ok(())
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rendered(failure: &Failure) -> String {
        let mut text = Vec::new();
        write_failure(&mut text, failure).expect("written to memory");
        String::from_utf8(text).expect("UTF-8")
    }

    /// The texts the integration tests expect (`tests/it/cli.rs`, the `readiness_invalid_*`
    /// snapshots), from the error each command builds for them.
    #[test]
    fn the_renderer_writes_what_the_commands_always_printed() {
        assert_eq!(
            rendered(&Error::invalid("nonexistent: no such path").into()),
            "chartseq: error: nonexistent: no such path\n"
        );
        assert_eq!(
            rendered(&Error::invalid("HEAD:nope: no `nope` at revision HEAD").into()),
            "chartseq: error: HEAD:nope: no `nope` at revision HEAD\n"
        );
        let caret = "  {.conditions[?(@.type==\"Failed\" && @.status==\"True\")]} == x\n                                  ^";
        assert_eq!(
            rendered(
                &Error::usage(
                    "--failure #2: invalid failure expression: invalid JSONPath: unrecognized character in action: U+0026 '&'"
                )
                .with_detail(caret)
                .into()
            ),
            format!(
                "chartseq: error: --failure #2: invalid failure expression: invalid JSONPath: unrecognized character in action: U+0026 '&'\n{caret}\n"
            )
        );
        let caret = "  {.succeeded}==1\n              ^";
        let message = "fixtures/readiness/invalid.yaml:1: Job/migrate: helm.sh/readiness-success[0]: invalid success expression: unsupported operator `==1`: use one of == != < <= > >= (the operator must be separated from the value by whitespace, e.g. `{.x} == 1`)";
        assert_eq!(
            rendered(&Error::invalid(message).with_detail(caret).into()),
            format!("chartseq: error: {message}\n{caret}\n")
        );
    }

    #[test]
    fn io_failures_name_what_failed_and_the_os_error_once() {
        let os = io::Error::new(io::ErrorKind::PermissionDenied, "Permission denied");
        assert_eq!(
            rendered(&Error::io("cannot write out/lint.sarif", os).into()),
            "chartseq: error: cannot write out/lint.sarif: Permission denied\n"
        );
        let os = io::Error::new(io::ErrorKind::StorageFull, "No space left on device");
        assert_eq!(
            rendered(&Failure::Io(os)),
            "chartseq: error: writing output: No space left on device\n"
        );
    }

    #[test]
    fn text_from_the_input_is_escaped_in_every_line() {
        assert_eq!(
            rendered(
                &Error::invalid("a\u{1b}[31m: no such path")
                    .with_detail("b\u{7}")
                    .into()
            ),
            format!(
                "chartseq: error: {}\n",
                crate::safe::terminal_safe("a\u{1b}[31m: no such path\nb\u{7}")
            )
        );
    }

    /// A deploy's failure (exit 1) in the words the deploy tests expect
    /// (`tests/it/cluster/{deploy,failures,safety}.rs`), each cause kept as a source.
    #[cfg(feature = "apply")]
    #[test]
    fn a_failed_deploy_is_written_with_what_blocked_it() {
        use crate::apply::deploy::RunError;
        use crate::apply::ownership::Owner;
        use crate::apply::wait::WaitError;
        use std::error::Error as _;
        use std::time::Duration;

        let blocked = || WaitError::Timeout {
            after: Duration::from_secs(3),
            blocked: vec![(
                "Deployment/app".to_owned(),
                "0 of 1 replicas ready".to_owned(),
            )],
        };
        let write = |e: &RunError| {
            let mut text = Vec::new();
            write_error(&mut text, &e.to_string(), None).expect("written to memory");
            String::from_utf8(text).expect("UTF-8")
        };
        let wait = RunError::Wait {
            step: "shop app".to_owned(),
            error: blocked(),
        };
        assert_eq!(
            write(&wait),
            "chartseq: error: step shop app: timed out after 3s waiting for 1 resource(s):\n  Deployment/app: 0 of 1 replicas ready\n"
        );
        assert!(
            wait.source()
                .is_some_and(<dyn std::error::Error>::is::<WaitError>)
        );
        let overall = RunError::Overall {
            timeout: Duration::from_secs(4),
            step: "shop app".to_owned(),
            error: blocked(),
        };
        assert!(
            write(&overall).starts_with(
                "chartseq: error: the release did not finish within --timeout 4s: step shop app: timed out after 3s"
            ),
            "{overall}"
        );
        let refused = RunError::Refused {
            release: "shop".to_owned(),
            namespace: "ns".to_owned(),
            foreign: vec![(
                "ConfigMap/shared-settings (namespace ns)".to_owned(),
                Owner::NotHelm { managed_by: None },
            )],
        };
        assert_eq!(
            write(&refused),
            "chartseq: error: 1 object(s) already exist and do not belong to release shop (namespace ns); nothing was applied:\n  ConfigMap/shared-settings (namespace ns): not managed by Helm\nfix: remove or rename them, or adopt them into this release deliberately with --take-ownership\n"
        );
        let cluster = RunError::Cluster {
            resource: Some("ConfigMap/app".to_owned()),
            error: crate::apply::cluster::ClusterError::other("forbidden"),
        };
        assert_eq!(
            write(&cluster),
            "chartseq: error: ConfigMap/app: forbidden\n"
        );
        assert_eq!(
            WaitError::Failed {
                target: "Job/migrate".to_owned(),
                reason: "BackoffLimitExceeded".to_owned()
            }
            .to_string(),
            "Job/migrate failed: BackoffLimitExceeded"
        );
    }
}
