//! The deployer's side of readiness (SPEC §3): the shared engine ([`crate::readiness`]) judges
//! each object with the very expressions lint validated, or kstatus; this adapter turns its
//! [`Judgement`] into a wait [`Verdict`] whose reason says why a resource blocks (the kstatus
//! reason, or each expression's observed value). It is also where the clock is read: the
//! engine judges at the instant it is given, and a wait re-judges as time passes.

use std::sync::Arc;
use std::time::SystemTime;

use serde_json::Value;

use super::wait::{Judge, Target, Verdict};
use crate::plan::Wait;
use crate::readiness::argo::HealthOverride;
use crate::readiness::{
    ArgoHealth, Condition, Exists, ExprResult, Judgement, Kstatus, KstatusOptions, Readiness,
    Status,
};

/// Judges with the shared readiness engine.
pub struct Engine;

/// The readiness a wait asks for (decided by the plan: HIP-0025's or a dialect's); `None`: not
/// waited for. A hook's wait ([`Wait::Complete`]) is Helm's hook readers' kstatus.
/// `argo`: the health scripts the user gave, for Argo CD's health waits.
pub fn readiness_for(
    wait: &Wait,
    wait_for_jobs: bool,
    argo: Option<&Arc<dyn HealthOverride>>,
) -> Result<Option<Readiness>, String> {
    let argo_health = |hook| {
        Readiness::ArgoHealth(ArgoHealth {
            hook,
            scripts: argo.cloned(),
        })
    };
    let kstatus = |wait_for_jobs| {
        Readiness::Kstatus(Kstatus {
            options: KstatusOptions {
                wait_for_jobs,
                hook: false,
            },
        })
    };
    Ok(Some(match wait {
        Wait::Kstatus => kstatus(wait_for_jobs),
        Wait::Custom(custom) => Readiness::Custom(custom.clone()),
        Wait::Unusable(why) => return Err(why.clone()),
        Wait::Complete => Readiness::for_hook(KstatusOptions {
            wait_for_jobs,
            hook: true,
        }),
        Wait::Tracked(t) if t.complete => Readiness::for_hook(KstatusOptions {
            wait_for_jobs,
            hook: true,
        }),
        Wait::Status | Wait::Tracked(_) => kstatus(true),
        Wait::Exists => Readiness::Exists(Exists),
        Wait::Properties(pairs) => Readiness::Properties(pairs.clone()),
        Wait::KappConditions(k) => Readiness::KappConditions(k.clone()),
        Wait::None => return Ok(None),
        Wait::ArgoHealth => argo_health(false),
        Wait::ArgoHook => argo_health(true),
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
