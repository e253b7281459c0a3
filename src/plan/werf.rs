//! The order werf/nelm installs a release in (DIALECTS.md §1.2–1.3), as plan steps.
//!
//! Stages run one after the other: CRDs and Namespaces (the plan's `crds`), `pre-install` hooks,
//! regular resources, `post-install` hooks. Inside a stage each weight is one step, waiting for every resource of
//! the weight before (readiness included); one weight's resources go in parallel, with no kind
//! order. Weights span the whole release, subcharts included. A resource with a manual
//! dependency has no weight: it floats in its stage (one step after the stage before, which the
//! next stage waits for). A value werf rejects fails the release before anything is applied.

use crate::model::werf::Stage;
use crate::model::{Content, DocId, Model};
use crate::plan::{Dialect, Plan, PlanError, PlanIssue, Step, Wait};

/// `werf.io/track-termination-mode`: `NonBlocking` resources are never waited for.
const TRACK_TERMINATION_MODE: &str = "werf.io/track-termination-mode";

/// The step name of a stage's weight, or of its floating resources (`None`).
#[must_use]
pub fn step_name(stage: Stage, weight: Option<i64>) -> String {
    match weight {
        Some(w) => format!("{}:weight={w}", stage.name()),
        None => format!("{}:dependencies", stage.name()),
    }
}

/// A resource in one stage: the stage, its weight (`None`: floating), its listing key (kind,
/// name, namespace) and the document.
type Placed = (Stage, Option<i64>, (String, String, String), DocId);

/// Plans the release as werf installs it, or every value werf would reject.
pub fn plan(model: &Model) -> Result<Plan, PlanError> {
    let mut plan = Plan {
        dialect: Dialect::Werf,
        ..Plan::default()
    };
    let mut issues = Vec::new();
    let mut placed: Vec<Placed> = Vec::new();
    let mut not_objects = Vec::new();
    for (doc, d) in model.documents.iter().enumerate() {
        match &d.content {
            Content::Empty => plan.comments.push(doc),
            Content::Resource(r) => {
                for rejected in &r.werf.rejected {
                    issues.push(PlanIssue::InvalidDialectValue {
                        dialect: Dialect::Werf,
                        key: rejected.key.to_owned(),
                        value: rejected.value.clone(),
                        reason: rejected.reason.to_owned(),
                        loc: rejected.loc,
                    });
                }
                if r.werf.stages.is_empty() {
                    plan.not_installed.push(doc);
                }
                let key = (
                    r.id.kind.clone(),
                    r.id.name.clone(),
                    r.id.namespace.clone().unwrap_or_default(),
                );
                for &stage in &r.werf.stages {
                    placed.push((stage, r.werf.weight, key.clone(), doc));
                }
                if !r.werf.stages.is_empty() {
                    plan.waits.insert(doc, wait_of(r));
                    let external = crate::model::werf::external_dependencies(&r.annotations);
                    if !external.is_empty() {
                        plan.external.insert(doc, external);
                    }
                }
            }
            Content::Invalid { .. } | Content::NotAnObject { .. } => not_objects.push(doc),
        }
    }
    if !issues.is_empty() {
        return Err(PlanError { issues });
    }
    // Floating resources (no weight) sort after the weights of their stage, for listing only.
    placed.sort_by(|a, b| {
        (a.0, a.1.is_none(), a.1, &a.2, a.3).cmp(&(b.0, b.1.is_none(), b.1, &b.2, b.3))
    });
    // CRDs and Namespaces go first, before the pre-install hooks: the plan's `crds`.
    let first = placed
        .iter()
        .take_while(|p| p.0 == Stage::PrePreInstall)
        .count();
    plan.crds = placed.drain(..first).map(|p| p.3).collect();
    let mut terminals: Vec<usize> = Vec::new();
    let mut i = 0;
    while i < placed.len() {
        let stage = placed[i].0;
        let start = terminals.clone();
        let mut chain_end: Option<usize> = None;
        let mut stage_ends = Vec::new();
        while i < placed.len() && placed[i].0 == stage {
            let weight = placed[i].1;
            let mut resources = Vec::new();
            while i < placed.len() && placed[i].0 == stage && placed[i].1 == weight {
                resources.push(placed[i].3);
                i += 1;
            }
            let after = match (weight, chain_end) {
                (Some(_), Some(prev)) => vec![prev],
                _ => start.clone(),
            };
            plan.steps.push(Step {
                chart: 0,
                group: Some(step_name(stage, weight)),
                resources,
                after,
            });
            let index = plan.steps.len() - 1;
            if weight.is_some() {
                chain_end = Some(index);
            } else {
                stage_ends.push(index);
            }
        }
        stage_ends.extend(chain_end);
        stage_ends.sort_unstable();
        terminals = stage_ends;
    }
    // Documents that are not objects: werf would fail on them; listed last, as HIP does.
    if !not_objects.is_empty() {
        plan.steps.push(Step {
            chart: 0,
            group: None,
            resources: not_objects,
            after: terminals,
        });
    }
    Ok(plan)
}

/// How werf waits for a resource it applied: kubedog tracks it until ready (a Job until it
/// completes), a hook until it has run; `NonBlocking` ones are not waited for.
fn wait_of(r: &crate::model::Resource) -> Wait {
    let non_blocking = r
        .annotation(TRACK_TERMINATION_MODE)
        .and_then(|a| a.value.as_str())
        .is_some_and(|v| v.trim() == "NonBlocking");
    let hook = r
        .werf
        .stages
        .iter()
        .any(|s| matches!(s, Stage::PreInstall | Stage::PostInstall));
    if non_blocking {
        Wait::None
    } else if hook {
        Wait::Complete
    } else {
        Wait::Status
    }
}
