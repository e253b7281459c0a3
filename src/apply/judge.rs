//! The deployer's side of readiness (SPEC §3): the shared engine ([`crate::readiness`]) judges
//! each object with the very expressions lint validated, or kstatus; this adapter turns its
//! [`Judgement`] into a wait [`Verdict`] whose reason says why a resource blocks (the kstatus
//! reason, or each expression's observed value). It is also where the clock is read: the
//! engine judges at the instant it is given, and a wait re-judges as time passes.

use std::time::SystemTime;

use serde_json::Value;

use super::wait::{Goal, Judge, Target, Verdict};
use crate::plan::Wait;
use crate::readiness::{
    AllPropertiesEqual, Condition, Exists, ExprResult, Judgement, Kstatus, KstatusOptions,
    Readiness, Status,
};

/// Judges with the shared readiness engine.
pub struct Engine;

/// The readiness an applied object declares (its `helm.sh/readiness-*` annotations), parsed
/// once when it is applied. Hooks (run to completion) ignore those annotations: kstatus with
/// Helm's hook readers judges them.
pub fn readiness_of(object: &Value, goal: Goal, wait_for_jobs: bool) -> Result<Readiness, String> {
    let options = KstatusOptions {
        wait_for_jobs,
        hook: false,
    };
    if goal == Goal::Complete {
        return Ok(Readiness::for_hook(options));
    }
    Readiness::for_object(object, options).map_err(|e| e.to_string())
}

/// The readiness a plan's wait asks for (a dialect's waits); `None`: not waited for.
pub fn readiness_for(
    object: &Value,
    wait: &Wait,
    wait_for_jobs: bool,
) -> Result<Option<Readiness>, String> {
    Ok(Some(match wait {
        Wait::Ready => readiness_of(object, Goal::Ready, wait_for_jobs)?,
        Wait::Complete => readiness_of(object, Goal::Complete, wait_for_jobs)?,
        Wait::Status => Readiness::Kstatus(Kstatus {
            options: KstatusOptions {
                wait_for_jobs: true,
                hook: false,
            },
        }),
        Wait::Exists => Readiness::Exists(Exists),
        Wait::Properties(pairs) => match AllPropertiesEqual::parse(pairs) {
            Ok(Some(p)) => Readiness::Properties(p),
            Ok(None) => return Ok(None),
            Err((i, e)) => {
                return Err(format!(
                    "property {:?} cannot be read: {} (at byte {} of the path)",
                    pairs.get(i).map(|(p, _)| p.as_str()).unwrap_or_default(),
                    e.message,
                    e.offset
                ));
            }
        },
        Wait::None => return Ok(None),
    }))
}

fn observed(e: &ExprResult) -> String {
    let value = e
        .observed
        .as_deref()
        .map_or_else(|| "not set".to_owned(), |v| format!("{v:?}"));
    match &e.note {
        Some(note) => format!("{} ({}): observed {value}, {note}", e.expr, e.kind.as_str()),
        None => format!("{} ({}): observed {value}", e.expr, e.kind.as_str()),
    }
}

fn why(j: &Judgement) -> String {
    if j.expressions.is_empty() {
        return j.reason.clone();
    }
    let exprs: Vec<String> = j.expressions.iter().map(observed).collect();
    format!("{}; {}", j.reason, exprs.join("; "))
}

impl Judge for Engine {
    fn judge(&self, target: &Target, object: &Value) -> Verdict {
        let Some(readiness) = &target.readiness else {
            return Verdict::Ready;
        };
        let judgement = readiness.judge(object, SystemTime::now());
        match judgement.status {
            Status::Ready => Verdict::Ready,
            Status::Failed => Verdict::Failed(why(&judgement)),
            Status::InProgress => Verdict::InProgress(why(&judgement)),
        }
    }
}
