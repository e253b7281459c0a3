//! `chartseq readiness OBJECT.yaml`: judge recorded objects offline with the readiness engine
//! `apply` uses (SPEC §3), so expressions can be tried against `kubectl get -o yaml` output
//! before anything is deployed. Hooks are judged as `apply` judges them (kstatus, their
//! readiness annotations ignored), and at the instant `--now` names (the clock otherwise).

use std::io::Write;
use std::path::PathBuf;
use std::time::SystemTime;

use super::{Failure, Outcome};
use crate::error::Error;
use crate::model::live::{annotation_expressions, has_annotation, is_hook};
use crate::parse::Limits;
use crate::readiness::expr::{self, Expression};
use crate::readiness::{
    Condition, ExprKind, KstatusOptions, Readiness, ReadinessError, Status, parse_expressions,
};
use crate::report::readiness::{self as report, display_name};
use crate::safe::one_line;
use crate::source::objects;

/// Output formats of `chartseq readiness`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadinessFormat {
    Text,
    Json,
}

/// What `chartseq readiness` was asked to do.
#[derive(Clone, Debug)]
pub struct ReadinessSettings {
    /// A YAML file, or `-` for stdin.
    pub object: PathBuf,
    /// `--success` expressions; when given they replace the objects' success annotation.
    pub success: Vec<String>,
    /// `--failure` expressions; when given they replace the objects' failure annotation.
    pub failure: Vec<String>,
    pub format: ReadinessFormat,
    pub kstatus: KstatusOptions,
    /// The instant to judge at (`--now`); the system clock when `None`.
    pub now: Option<SystemTime>,
    pub limits: Limits,
}

/// An invalid expression as a tool error: what, where, and a caret under the character.
fn expression_error(context: &str, e: &ReadinessError) -> Error {
    let error = Error::invalid(format!("{context}: {}", e.message));
    match &e.expression {
        Some((text, err)) => {
            let caret = expr::caret(text, err.offset)
                .lines()
                .map(|l| format!("  {l}"))
                .collect::<Vec<_>>()
                .join("\n");
            error.with_detail(caret)
        }
        None => error,
    }
}

fn flag_expressions(kind: ExprKind, texts: &[String]) -> Result<Option<Vec<Expression>>, Error> {
    if texts.is_empty() {
        return Ok(None);
    }
    let flag = match kind {
        ExprKind::Success => "--success",
        ExprKind::Failure => "--failure",
    };
    parse_expressions(kind, texts).map(Some).map_err(|e| {
        let n = e.index.map_or(String::new(), |i| format!(" #{}", i + 1));
        expression_error(&format!("{flag}{n}"), &e)
    })
}

/// `chartseq readiness`.
pub fn readiness(
    settings: &ReadinessSettings,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    let success_flags = flag_expressions(ExprKind::Success, &settings.success)?;
    let failure_flags = flag_expressions(ExprKind::Failure, &settings.failure)?;
    let (name, bytes) = objects::read(&settings.object)?;
    let objects = objects::objects(&name, &bytes, settings.limits)?;
    if objects.is_empty() {
        return Err(Error::invalid(format!("{name}: no objects to judge")).into());
    }
    let now = settings.now.unwrap_or_else(SystemTime::now);
    let mut judged = Vec::with_capacity(objects.len());
    for object in &objects {
        let who = display_name(&object.value);
        let context = one_line(&format!("{name}:{}: {who}", object.line)).into_owned();
        if is_hook(&object.value) {
            let asked = success_flags.is_some()
                || failure_flags.is_some()
                || [ExprKind::Success, ExprKind::Failure]
                    .into_iter()
                    .any(|kind| has_annotation(&object.value, kind));
            if asked {
                writeln!(
                    err,
                    "warning: {context}: is a hook (helm.sh/hook): Helm ignores readiness \
                     expressions on hooks, so kstatus decides, as Helm's hook readers do \
                     (CS401)"
                )?;
            }
            let readiness = Readiness::for_hook(settings.kstatus);
            judged.push((object, readiness.judge(&object.value, now)));
            continue;
        }
        let side = |kind: ExprKind, flags: &Option<Vec<Expression>>| match flags {
            Some(list) => Ok(list.clone()),
            None => annotation_expressions(&object.value, kind)
                .map_err(|e| expression_error(&context, &e)),
        };
        // A side given on the command line replaces that annotation; the other side still
        // comes from the object.
        let success = side(ExprKind::Success, &success_flags)?;
        let failure = side(ExprKind::Failure, &failure_flags)?;
        let one_sided = match (success.is_empty(), failure.is_empty()) {
            (false, true) => Some(ExprKind::Success),
            (true, false) => Some(ExprKind::Failure),
            _ => None,
        };
        let readiness = Readiness::new(success, failure, settings.kstatus);
        if let Some(side) = one_sided {
            writeln!(
                err,
                "warning: {context}: only {} expressions are set; custom readiness needs both \
                 helm.sh/readiness-success and helm.sh/readiness-failure (or --success and \
                 --failure), so kstatus decides",
                side.as_str()
            )?;
        }
        judged.push((object, readiness.judge(&object.value, now)));
    }
    match settings.format {
        ReadinessFormat::Text => report::write_text(out, &judged)?,
        ReadinessFormat::Json => report::write_json(out, &judged)?,
    }
    Ok(if judged.iter().all(|(_, j)| j.status == Status::Ready) {
        Outcome::Clean
    } else {
        Outcome::Findings
    })
}
