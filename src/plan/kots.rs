//! The order Replicated KOTS deploys a release's manifests in (DIALECTS.md §4.2), as plan steps.
//!
//! KOTS applies the manifests it deploys itself — standard manifests, and a Helm chart it
//! renders into manifests (a `HelmChart` `kots.io/v1beta1` with `useHelmInstall: false`,
//! hooks and `crds/` included, `pkg/base/helm_v4.go`) — grouped by creation phase, phases
//! ascending; inside a phase by KOTS's kind order (Helm's install order without the webhook
//! configurations), kinds it does not list after all of them, objects of one kind in input
//! order (`groupAndSortResourcesForCreation`). It applies them one at a time and waits only
//! right after an object annotated with `kots.io/wait-for-ready` or
//! `kots.io/wait-for-properties`, before it applies the next (`ensureResourcesPresent`,
//! `pkg/operator/client/deploy.go`): each phase is one step, after the phase before, its
//! objects listed in the order KOTS applies them, split after every waited object — the
//! waited object ends its step (`phase=0`), and the rest of the phase is a step of its own
//! (`phase=0 after StatefulSet/db`) that waits for it. Phases span the whole release. Helm hooks are ordinary manifests to KOTS; `crds/` is
//! part of the order. A chart KOTS hands to Helm (`kots.io/v1beta2`, or `useHelmInstall: true`)
//! is installed in Helm's order instead, where KOTS reads none of these annotations.
//!
//! Waits, for `apply`: only the annotated objects ([`crate::plan::wait`]); every other object
//! is applied and not waited for.

use std::collections::BTreeMap;

use crate::model::{Content, DocId, Model};
use crate::plan::{Dialect, Plan, PlanError, PlanIssue, Step, Wait};
use crate::readiness::PropertyPair;

/// KOTS's `KindCreationOrder` (`pkg/operator/client/resource.go`, "inspired by Helm v3.15.4"):
/// Helm's install order without its last two kinds (the webhook configurations).
const KIND_ORDER: &[&str] = crate::model::kinds::INSTALL_ORDER
    .split_at(crate::model::kinds::INSTALL_ORDER.len() - 2)
    .0;

/// The step name of a creation phase.
#[must_use]
pub fn step_name(phase: i64) -> String {
    format!("phase={phase}")
}

/// The step name of what KOTS applies in a phase after a waited object: `phase=0 after
/// StatefulSet/db` (`StatefulSet/ns/db` when the object's namespace is written).
#[must_use]
pub fn after_name(phase: i64, waited: &crate::model::Resource) -> String {
    let id = &waited.id;
    match &id.namespace {
        Some(ns) => format!("{} after {}/{ns}/{}", step_name(phase), id.kind, id.name),
        None => format!("{} after {}/{}", step_name(phase), id.kind, id.name),
    }
}

/// KOTS's place for a kind inside a phase. KOTS matches the kind alone (any API group). Kinds
/// it does not list come last in Go's map order, which is random: here, by kind name.
pub(crate) fn kind_key(kind: &str) -> (usize, &str) {
    match KIND_ORDER.iter().position(|k| *k == kind) {
        Some(i) => (i, ""),
        None => (KIND_ORDER.len(), kind),
    }
}

/// KOTS's plan, and every phase that is not an integer (KOTS logs it and uses phase 0).
#[must_use]
pub fn analyze(model: &Model) -> (Plan, Vec<PlanIssue>) {
    let (plan, mut issues) = super::system::from_result(Dialect::Kots, plan(model));
    for d in &model.documents {
        let Content::Resource(r) = &d.content else {
            continue;
        };
        for (key, phase) in [
            (crate::model::kots::CREATION_PHASE, &r.kots.creation_phase),
            (crate::model::kots::DELETION_PHASE, &r.kots.deletion_phase),
        ] {
            if let (Some(crate::model::kots::PhaseProblem::NotAnInteger), Some(written)) =
                (phase.problem, &phase.written)
            {
                issues.push(PlanIssue::ReplacedDialectValue {
                    dialect: Dialect::Kots,
                    key: key.to_owned(),
                    value: written.value.clone(),
                    replacement: "phase 0".to_owned(),
                    loc: written.loc,
                });
            }
        }
    }
    (plan, issues)
}

/// Plans the release as KOTS deploys it, or every value KOTS would refuse.
pub fn plan(model: &Model) -> Result<Plan, PlanError> {
    let mut plan = Plan {
        dialect: Dialect::Kots,
        ..Plan::default()
    };
    let mut issues = Vec::new();
    let mut phases: BTreeMap<i64, Vec<DocId>> = BTreeMap::new();
    let mut not_objects = Vec::new();
    for (doc, d) in model.documents.iter().enumerate() {
        match &d.content {
            Content::Empty => plan.comments.push(doc),
            Content::Resource(r) => {
                for rejected in &r.kots.rejected {
                    issues.push(PlanIssue::InvalidDialectValue {
                        dialect: Dialect::Kots,
                        key: rejected.key.clone(),
                        value: rejected.value.clone(),
                        reason: rejected.reason.clone(),
                        loc: rejected.loc,
                    });
                }
                phases
                    .entry(r.kots.creation_phase.value)
                    .or_default()
                    .push(doc);
                plan.waits.insert(doc, wait_of(r));
            }
            Content::Invalid { .. } | Content::NotAnObject { .. } => not_objects.push(doc),
        }
    }
    if !issues.is_empty() {
        return Err(PlanError { issues });
    }
    for (phase, mut docs) in phases {
        // Stable: one kind keeps input order.
        docs.sort_by_key(|&d| model.resource(d).map(|r| kind_key(&r.id.kind)));
        // KOTS waits right after applying a waited object, before the next one: the phase is
        // split after each, and what follows waits for it.
        let mut name = step_name(phase);
        let mut segment = Vec::new();
        for doc in docs {
            segment.push(doc);
            let Some(r) = model.resource(doc).filter(|r| r.kots.waits()) else {
                continue;
            };
            let after = plan.steps.len().checked_sub(1).into_iter().collect();
            plan.steps.push(Step {
                chart: 0,
                group: Some(std::mem::replace(&mut name, after_name(phase, r))),
                resources: std::mem::take(&mut segment),
                after,
            });
        }
        if !segment.is_empty() {
            let after = plan.steps.len().checked_sub(1).into_iter().collect();
            plan.steps.push(Step {
                chart: 0,
                group: Some(name),
                resources: segment,
                after,
            });
        }
    }
    // Documents that are not objects: KOTS's apply would fail on them; listed last, as HIP
    // does.
    if !not_objects.is_empty() {
        let after = plan.steps.len().checked_sub(1).into_iter().collect();
        plan.steps.push(Step {
            chart: 0,
            group: None,
            resources: not_objects,
            after,
        });
    }
    Ok(plan)
}

/// What KOTS waits for after applying an object: its properties when it names any (KOTS
/// waits for readiness first, which for a kind it reads by existence is the same), else its
/// readiness when asked, else nothing.
fn wait_of(r: &crate::model::Resource) -> Wait {
    if !r.kots.wait_for_properties.is_empty() {
        // A pair KOTS refuses (its path does not parse) aborts the deploy at this object.
        let mut pairs = Vec::with_capacity(r.kots.wait_for_properties.len());
        for p in &r.kots.wait_for_properties {
            let Some(path) = &p.jsonpath else {
                return Wait::Unusable(format!(
                    "property {:?} cannot be read: KOTS refuses the pair",
                    p.path.value
                ));
            };
            pairs.push(PropertyPair::parsed(
                p.path.value.clone(),
                path.clone(),
                p.value.value.clone(),
            ));
        }
        Wait::properties(pairs)
    } else if r.kots.wait_for_ready {
        Wait::kots_ready(&r.id.kind)
    } else {
        Wait::None
    }
}

#[cfg(test)]
mod tests {
    use super::{KIND_ORDER, kind_key};

    #[test]
    fn kind_order_is_kots_own_list() {
        assert_eq!(KIND_ORDER.len(), 36);
        assert_eq!(KIND_ORDER.first(), Some(&"PriorityClass"));
        assert_eq!(KIND_ORDER.last(), Some(&"APIService"));
        assert!(kind_key("ValidatingWebhookConfiguration") > kind_key("APIService"));
        assert!(kind_key("Alpha") < kind_key("Widget"));
    }
}
