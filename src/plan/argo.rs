//! The order Argo CD syncs a release in (DIALECTS.md §2.3), as plan steps.
//!
//! gitops-engine sorts one task per object and sync phase by phase (`PreSync`, `Sync`, `PostSync`),
//! wave, Argo's kind order (Helm's older install order; unknown kinds last, tied) and name, then
//! pulls every Namespace in front of the first object in it, and every CRD in front of the
//! first object of its group and kind, giving it that object's phase and wave. Each
//! (phase, wave) is applied and waited for before the next, so each is one step, waiting for
//! the one before; a Namespace or CRD pulled into the `PreSync` phase is listed in `crds`, applied
//! before the hooks. Waves span the whole release, subcharts and `crds/` included (Argo renders
//! with `--include-crds`). Skipped objects, hooks with no sync phase and `SyncFail` hooks are
//! not applied on install.
//!
//! Waits (§2.4), for `apply`: a hook runs to completion; any other resource must be healthy
//! before the next wave starts — except in the last wave when it holds no hook (Argo reports
//! the sync done once it is applied) and in a sync of a single wave. Healthy is judged by
//! Argo CD's built-in health check of the kind ([`crate::readiness::argo`]); a kind with no
//! check (most custom resources, a `ConfigMap`, a `Namespace`) is done once applied, as Argo counts
//! it; a kind argo-cd checks with a built-in Lua script has kstatus standing in (chartseq runs
//! no Lua); a CRD is waited established (Argo's `ensureCRDReady`).

use crate::model::argo::Phase;
use crate::model::{Content, DocId, Model};
use crate::plan::{Dialect, Plan, PlanError, Step, Wait};

/// Argo CD's `kindOrder` (`sync_tasks.go`): Helm's install order without its first kind
/// (`PriorityClass`) and its last two (the webhook configurations).
const KIND_ORDER: &[&str] = crate::model::kinds::INSTALL_ORDER
    .split_at(crate::model::kinds::INSTALL_ORDER.len() - 2)
    .0
    .split_at(1)
    .1;

/// Rank in [`KIND_ORDER`]; every other kind ranks after all of them, tied with each other.
fn kind_rank(kind: &str) -> usize {
    KIND_ORDER
        .iter()
        .position(|k| *k == kind)
        .unwrap_or(KIND_ORDER.len())
}

/// One sync task: an object in one phase.
#[derive(Clone, Copy)]
struct Task {
    doc: DocId,
    phase: Phase,
    wave: i64,
}

/// The object of a document: a resource, or a hook named only by `generateName`.
fn object(model: &Model, doc: DocId) -> Option<&crate::model::Resource> {
    model.resource(doc).or_else(|| model.generated(doc))
}

/// The step name of a (phase, wave): no spaces, so Helm's group markers stay readable.
#[must_use]
pub fn step_name(phase: Phase, wave: i64) -> String {
    format!("{}:wave={wave}", phase.name())
}

/// Plans the release as Argo CD syncs it. Argo CD never refuses an order: the result is
/// always a plan (the one planner contract, `Result<Plan, PlanError>`, all the same).
pub fn plan(model: &Model) -> Result<Plan, PlanError> {
    Ok(sync_order(model))
}

fn sync_order(model: &Model) -> Plan {
    let mut plan = Plan {
        dialect: Dialect::Argo,
        ..Plan::default()
    };
    let mut tasks = Vec::new();
    let mut not_objects = Vec::new();
    for (doc, d) in model.documents.iter().enumerate() {
        // A hook named only by `generateName`: Argo CD creates it under a new name on every
        // sync (`getSyncTasks`). Any other object without a name fails Argo's dry run, as it
        // fails Helm.
        let object = match &d.content {
            Content::Resource(r) => Some(r),
            Content::NotAnObject {
                generated: Some(r), ..
            } if r.argo.is_hook => Some(r),
            _ => None,
        };
        match (&d.content, object) {
            (Content::Empty, _) => plan.comments.push(doc),
            (_, Some(r)) => {
                let before = tasks.len();
                tasks.extend(r.argo.install_phases().map(|phase| Task {
                    doc,
                    phase,
                    wave: r.argo.wave.value,
                }));
                if tasks.len() == before {
                    plan.not_installed.push(doc);
                }
            }
            _ => not_objects.push(doc),
        }
    }
    // Go's sort is not stable; input order decides full ties here, deterministically.
    tasks.sort_by_cached_key(|t| {
        let r = object(model, t.doc).expect("tasks are resources");
        (
            t.phase,
            t.wave,
            kind_rank(&r.id.kind),
            r.id.name.clone(),
            t.doc,
        )
    });
    adjust_deps(
        model,
        &mut tasks,
        |model, t| {
            let r = object(model, t.doc)?;
            (r.id.kind == "Namespace" && r.id.group.is_empty()).then(|| r.id.name.clone())
        },
        |model, t| {
            // The namespace Argo CD syncs it in, when `-n` gave the destination; else the
            // written one.
            let r = object(model, t.doc)?;
            r.argo.namespace.clone().or_else(|| r.id.namespace.clone())
        },
    );
    adjust_deps(
        model,
        &mut tasks,
        |model, t| {
            let crd = object(model, t.doc)?.facts.crd.as_ref()?;
            Some(format!("{}/{}", crd.group, crd.kind))
        },
        |model, t| {
            let r = object(model, t.doc)?;
            Some(format!("{}/{}", r.id.group, r.id.kind))
        },
    );

    for task in tasks {
        // A Namespace or CRD pulled in front of a PreSync hook is applied before the hooks.
        let pulled = task.phase == Phase::PreSync
            && object(model, task.doc).is_some_and(|r| !r.argo.is_hook);
        if pulled {
            plan.crds.push(task.doc);
            continue;
        }
        let name = step_name(task.phase, task.wave);
        match plan.steps.last_mut() {
            Some(step) if step.group.as_deref() == Some(name.as_str()) => {
                step.resources.push(task.doc);
            }
            _ => {
                let after = plan.steps.len().checked_sub(1).into_iter().collect();
                plan.steps.push(Step {
                    chart: 0,
                    group: Some(name),
                    resources: vec![task.doc],
                    after,
                });
            }
        }
    }
    set_waits(model, &mut plan);
    // Documents that are not objects: Argo would fail on them; listed last, as HIP does.
    if !not_objects.is_empty() {
        let after = plan.steps.len().checked_sub(1).into_iter().collect();
        plan.steps.push(Step {
            chart: 0,
            group: None,
            resources: not_objects,
            after,
        });
    }
    plan
}

/// Argo's waits between waves: hooks complete; other resources healthy, unless nothing
/// follows them (the last wave without a hook) or the sync has one wave only.
fn set_waits(model: &Model, plan: &mut Plan) {
    let is_hook = |d: DocId| object(model, d).is_some_and(|r| r.argo.is_hook);
    let multi_step = plan.steps.len() > 1;
    let last = plan.steps.len().checked_sub(1);
    for (i, step) in plan.steps.iter().enumerate() {
        let final_without_hooks = Some(i) == last && !step.resources.iter().any(|&d| is_hook(d));
        for &d in &step.resources {
            let wait = if is_hook(d) {
                health_wait(model, d, true)
            } else if !multi_step || final_without_hooks {
                Wait::None
            } else {
                health_wait(model, d, false)
            };
            plan.waits.insert(d, wait);
        }
    }
    for &d in &plan.crds {
        plan.waits.insert(d, health_wait(model, d, false));
    }
}

/// How Argo CD judges one object done, by its group and kind: its built-in Lua check (kstatus
/// standing in), else its Go check, else none (done once applied). A CRD is waited
/// established, as Argo does before it applies anything else (`ensureCRDReady`).
fn health_wait(model: &Model, doc: DocId, hook: bool) -> Wait {
    use crate::readiness::argo::{has_builtin_check, has_lua_check};
    let Some(r) = object(model, doc) else {
        return Wait::None;
    };
    let (group, kind) = (r.id.group.as_str(), r.id.kind.as_str());
    if r.facts.crd.is_some()
        || (kind == "CustomResourceDefinition" && group == "apiextensions.k8s.io")
    {
        Wait::Status
    } else if has_lua_check(group, kind) {
        if hook { Wait::Complete } else { Wait::Status }
    } else if has_builtin_check(group, kind) {
        if hook {
            Wait::ArgoHook
        } else {
            Wait::ArgoHealth
        }
    } else {
        Wait::None
    }
}

/// The plan, and every value Argo CD silently passes over (a wave that is not an integer).
/// Argo CD never refuses an order.
#[must_use]
pub fn analyze(model: &Model) -> (Plan, Vec<crate::plan::PlanIssue>) {
    let plan = sync_order(model);
    let mut issues = Vec::new();
    for doc in 0..model.documents.len() {
        let Some(r) = object(model, doc) else {
            continue;
        };
        for ignored in &r.argo.wave.ignored {
            let Some(a) = r.annotations.iter().find(|a| a.value_loc == ignored.loc) else {
                continue;
            };
            let replacement = match r.argo.wave.source {
                crate::model::argo::WaveSource::SyncWave(_) => {
                    format!(
                        "wave {} (from {})",
                        r.argo.wave.value,
                        crate::model::argo::SYNC_WAVE
                    )
                }
                crate::model::argo::WaveSource::HookWeight(_) => format!(
                    "wave {} (from {})",
                    r.argo.wave.value,
                    crate::model::annotations::HOOK_WEIGHT
                ),
                crate::model::argo::WaveSource::Default => "wave 0".to_owned(),
            };
            issues.push(crate::plan::PlanIssue::ReplacedDialectValue {
                dialect: Dialect::Argo,
                key: a.key.clone(),
                value: ignored.value.clone(),
                replacement,
                loc: ignored.loc,
            });
        }
    }
    // NOTE: not in the plan's `issues`: Argo CD says nothing about them, and neither does
    // `plan --dialect argo`; lint reports them (CS602).
    (plan, issues)
}

type Key = fn(&Model, &Task) -> Option<String>;

/// `syncTasks.adjustDeps`: a dependency (Namespace, CRD) sorted after the first task that
/// needs it moves in front of that task and takes its phase and wave.
fn adjust_deps(model: &Model, tasks: &mut [Task], is_dep: Key, find_dep: Key) {
    let mut first_index: std::collections::HashMap<String, usize> =
        std::collections::HashMap::new();
    for i in 0..tasks.len() {
        if let Some(key) = is_dep(model, &tasks[i]) {
            if let Some(&index) = first_index.get(&key) {
                let mut moved = tasks[i];
                moved.phase = tasks[index].phase;
                moved.wave = tasks[index].wave;
                tasks.copy_within(index..i, index + 1);
                tasks[index] = moved;
                for v in first_index.values_mut() {
                    if *v >= index {
                        *v += 1;
                    }
                }
            }
        } else if let Some(key) = find_dep(model, &tasks[i]) {
            first_index.entry(key).or_insert(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::KIND_ORDER;

    #[test]
    fn kind_order_is_argo_cds_own_list() {
        assert_eq!(KIND_ORDER.len(), 35);
        assert_eq!(KIND_ORDER.first(), Some(&"Namespace"));
        assert_eq!(KIND_ORDER.last(), Some(&"APIService"));
        assert!(!KIND_ORDER.contains(&"PriorityClass"));
        assert!(!KIND_ORDER.contains(&"MutatingWebhookConfiguration"));
    }
}
