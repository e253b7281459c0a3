//! The deployer's side of readiness (SPEC §3): the shared engine ([`crate::readiness`]) judges
//! each object with the very expressions lint validated, or kstatus; this adapter turns its
//! [`Judgement`] into a wait [`Verdict`] whose reason says why a resource blocks (the kstatus
//! reason, or each expression's observed value).

use serde_json::Value;

use super::wait::{Goal, Judge, Target, Verdict};
use crate::readiness::{Condition, ExprResult, Judgement, KstatusOptions, Readiness, Status};

/// Judges with the shared readiness engine.
pub struct Engine;

/// The readiness an applied object declares (its `helm.sh/readiness-*` annotations), parsed
/// once when it is applied.
pub fn readiness_of(object: &Value, goal: Goal, wait_for_jobs: bool) -> Result<Readiness, String> {
    let options = KstatusOptions {
        wait_for_jobs: wait_for_jobs || goal == Goal::Complete,
    };
    Readiness::for_object(object, options).map_err(|e| e.to_string())
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
        // A hook Pod must run to completion; kstatus counts a running, ready Pod as ready.
        if target.goal == Goal::Complete && target.kind.kind == "Pod" {
            return match object["status"]["phase"].as_str() {
                Some("Succeeded") => Verdict::Ready,
                Some("Failed") => Verdict::Failed("pod failed".to_owned()),
                phase => Verdict::InProgress(format!("pod phase {}", phase.unwrap_or("Pending"))),
            };
        }
        let Some(readiness) = &target.readiness else {
            return Verdict::Ready;
        };
        let judgement = readiness.judge(object);
        match judgement.status {
            Status::Ready => Verdict::Ready,
            Status::Failed => Verdict::Failed(why(&judgement)),
            Status::InProgress => Verdict::InProgress(why(&judgement)),
        }
    }
}
