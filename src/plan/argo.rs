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

use crate::model::argo::{HookType, KeptOnDelete, Phase};
use crate::model::{Content, DocId, Model, Placement};
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
    set_waits(model, &mut plan, &|_, _| false);
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
fn set_waits(model: &Model, plan: &mut Plan, scripted: &dyn Fn(&str, &str) -> bool) {
    let is_hook = |d: DocId| object(model, d).is_some_and(|r| r.argo.is_hook);
    let multi_step = plan.steps.len() > 1;
    let last = plan.steps.len().checked_sub(1);
    for (i, step) in plan.steps.iter().enumerate() {
        let final_without_hooks = Some(i) == last && !step.resources.iter().any(|&d| is_hook(d));
        for &d in &step.resources {
            let wait = if is_hook(d) {
                health_wait(model, d, true, scripted)
            } else if !multi_step || final_without_hooks {
                Wait::None
            } else {
                health_wait(model, d, false, scripted)
            };
            plan.waits.insert(d, wait);
        }
    }
    for &d in &plan.crds {
        plan.waits.insert(d, health_wait(model, d, false, scripted));
    }
}

/// Waits an Argo CD plan again where the user gave Lua health scripts (`apply
/// --argo-health`): an object whose group and kind has one (`scripted`) is waited by Argo CD's
/// health wait, which asks the scripts first, wherever Argo waits at all. Other plans are
/// left as they are.
pub fn with_health_scripts(model: &Model, plan: &mut Plan, scripted: &dyn Fn(&str, &str) -> bool) {
    if plan.dialect == Dialect::Argo {
        set_waits(model, plan, scripted);
    }
}

/// How Argo CD judges one object done, by its group and kind: a Lua script the user gave
/// (`scripted`), else its built-in Lua check (kstatus standing in), else its Go check, else
/// none (done once applied). A CRD is waited established, as Argo does before it applies
/// anything else (`ensureCRDReady`).
fn health_wait(
    model: &Model,
    doc: DocId,
    hook: bool,
    scripted: &dyn Fn(&str, &str) -> bool,
) -> Wait {
    use crate::readiness::argo::{has_builtin_check, has_lua_check};
    let Some(r) = object(model, doc) else {
        return Wait::None;
    };
    let (group, kind) = (r.id.group.as_str(), r.id.kind.as_str());
    if r.facts.crd.is_some()
        || (kind == "CustomResourceDefinition" && group == "apiextensions.k8s.io")
    {
        Wait::Status
    } else if scripted(group, kind) {
        if hook {
            Wait::ArgoHook
        } else {
            Wait::ArgoHealth
        }
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

/// The delete hooks of one type (`PreDelete` or `PostDelete`), in input order: what Argo CD's
/// application controller creates when the application is deleted, before its cascade
/// (`PreDelete`) or once every object is gone (`PostDelete`), and waits healthy
/// (`executeHooks` in `controller/hook.go`). Hooks of `crds/` are Helm's: never run.
#[must_use]
pub fn delete_hooks(model: &Model, hook: HookType) -> Vec<DocId> {
    (0..model.documents.len())
        .filter(|&d| model.documents[d].placement != Placement::Crd)
        .filter(|&d| object(model, d).is_some_and(|r| r.argo.delete_hooks.contains(&hook)))
        .collect()
}

/// How a delete hook is waited for: as a sync hook is ([`health_wait`]), healthy by Argo's
/// check of its kind (`health.GetResourceHealth`; no check: healthy once created).
#[must_use]
pub fn delete_hook_wait(model: &Model, doc: DocId) -> Wait {
    health_wait(model, doc, true, &|_, _| false)
}

/// Whether Argo CD reads the object as a CRD (`kube.IsCRD`): never deleted by its cascade.
fn is_crd(model: &Model, doc: DocId) -> bool {
    object(model, doc).is_some_and(|r| {
        r.id.kind == "CustomResourceDefinition" && r.id.group == "apiextensions.k8s.io"
    })
}

/// What Argo CD's cascade deletion would find live and leave in place, in install order:
/// CRDs (`None`) and the objects its annotations keep. Documents of `crds/` are not listed:
/// Helm's, never deleted whatever the dialect.
#[must_use]
pub fn kept_on_uninstall(model: &Model, plan: &Plan) -> Vec<(DocId, Option<KeptOnDelete>)> {
    live_on_uninstall(model, plan)
        .into_iter()
        .filter(|&d| model.documents[d].placement != Placement::Crd)
        .filter_map(|d| {
            let kept = object(model, d)?.argo.kept_on_delete;
            (is_crd(model, d) || kept.is_some()).then_some((d, kept))
        })
        .collect()
}

/// The CRDs an uninstall leaves: the templated ones Argo CD's cascade finds live and never
/// deletes, then the documents of `crds/` (Helm's, never deleted whatever the dialect).
#[must_use]
pub fn kept_crds(model: &Model, plan: &Plan) -> Vec<DocId> {
    kept_on_uninstall(model, plan)
        .into_iter()
        .filter(|(_, why)| why.is_none())
        .map(|(d, _)| d)
        .chain(
            (0..model.documents.len())
                .filter(|&d| model.documents[d].placement == Placement::Crd)
                .filter(|&d| model.resource(d).is_some()),
        )
        .collect()
}

/// Every object live when the cascade starts, in install order, each once: what the sync
/// applied (hooks whose delete policy removed them are simply not found), then the
/// `PreDelete` hooks just run.
fn live_on_uninstall(model: &Model, plan: &Plan) -> Vec<DocId> {
    let mut seen = std::collections::BTreeSet::new();
    plan.crds
        .iter()
        .chain(
            plan.steps
                .iter()
                .filter(|s| s.group.is_some())
                .flat_map(|s| s.resources.iter()),
        )
        .copied()
        .chain(delete_hooks(model, HookType::PreDelete))
        .filter(|&d| object(model, d).is_some() && seen.insert(d))
        .collect()
}

/// The step name of a wave of the cascade deletion.
#[must_use]
pub fn delete_step_name(wave: i64) -> String {
    format!("delete:wave={wave}")
}

/// Argo CD's cascade deletion (`finalizeApplicationDeletion` in `controller/appcontroller.go`):
/// of every live object of the application except CRDs and those marked `Delete=false` or
/// `helm.sh/resource-policy: keep` (`shouldBeDeleted`), the objects of the highest sync wave
/// are deleted together, all phases and hooks alike (`FilterObjectsForDeletion` in
/// `controller/sort_delete.go`); once none of them is left, the next lower wave. One step per
/// wave, highest first, each after the one before; inside a step, the reverse of install
/// order. Objects never installed (`Skip`, `SyncFail` hooks, hooks with no sync phase) are
/// not live, so not deleted; `PreDelete` hooks are, as they are live by then. The delete
/// hooks themselves run around these steps ([`delete_hooks`]).
pub fn uninstall(model: &Model, plan: &Plan) -> Result<Vec<Step>, PlanError> {
    let live = live_on_uninstall(model, plan);
    let kept: std::collections::BTreeSet<DocId> = kept_on_uninstall(model, plan)
        .into_iter()
        .map(|(d, _)| d)
        .collect();
    let mut doomed: Vec<(i64, usize, DocId)> = live
        .iter()
        .enumerate()
        .filter(|(_, d)| !kept.contains(d) && !is_crd(model, **d))
        .filter(|(_, d)| model.documents[**d].placement != Placement::Crd)
        .filter_map(|(at, &d)| Some((object(model, d)?.argo.wave.value, at, d)))
        .collect();
    // Highest wave first; inside a wave, the reverse of install order.
    doomed.sort_by(|a, b| b.cmp(a));
    let mut steps: Vec<Step> = Vec::new();
    let mut wave = None;
    for (w, _, d) in doomed {
        if wave == Some(w) {
            if let Some(step) = steps.last_mut() {
                step.resources.push(d);
            }
            continue;
        }
        wave = Some(w);
        let after = steps.len().checked_sub(1).into_iter().collect();
        steps.push(Step {
            chart: 0,
            group: Some(delete_step_name(w)),
            resources: vec![d],
            after,
        });
    }
    Ok(steps)
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
    use crate::model::argo::HookType;

    /// Pods with the given sync waves, named by position, as argo-cd's own test builds them.
    fn pods(waves: &[&str]) -> crate::model::Model {
        use std::fmt::Write as _;
        let mut stream = String::new();
        for (i, w) in waves.iter().enumerate() {
            let _ = write!(
                stream,
                "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p{i}\n  annotations: {{argocd.argoproj.io/sync-wave: \"{w}\"}}\n"
            );
        }
        crate::model::load_stream("s", stream.into_bytes(), crate::parse::Limits::default())
    }

    fn cascade(model: &crate::model::Model) -> Vec<(String, Vec<String>)> {
        let plan = super::plan(model).expect("a plan");
        super::uninstall(model, &plan)
            .expect("an uninstall order")
            .into_iter()
            .map(|s| {
                let names = s
                    .resources
                    .iter()
                    .map(|&d| {
                        model
                            .resource(d)
                            .map(|r| r.id.name.clone())
                            .unwrap_or_default()
                    })
                    .collect();
                (s.group.unwrap_or_default(), names)
            })
            .collect()
    }

    /// With health scripts given, a kind they cover is waited by Argo CD's health wait (a
    /// hook by its hook wait) wherever Argo waits at all; a kind argo-cd checks with a
    /// built-in Lua script and given none keeps kstatus; the last wave still waits for
    /// nothing.
    #[test]
    fn given_health_scripts_wait_the_kinds_they_cover() {
        use crate::plan::Wait;
        let stream = "---
apiVersion: x.example.com/v1
kind: Widget
metadata: {name: w0}
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata: {name: c0}
---
apiVersion: x.example.com/v1
kind: Widget
metadata:
  name: hook
  annotations: {argocd.argoproj.io/hook: PreSync}
---
apiVersion: x.example.com/v1
kind: Widget
metadata:
  name: w1
  annotations: {argocd.argoproj.io/sync-wave: \"1\"}
";
        let model = crate::model::load_stream(
            "s",
            stream.as_bytes().to_vec(),
            crate::parse::Limits::default(),
        );
        let wait_of = |plan: &crate::plan::Plan, name: &str| {
            let doc = (0..model.documents.len())
                .find(|&d| model.resource(d).is_some_and(|r| r.id.name == name))
                .expect("the object");
            plan.wait_of(&model, doc).expect("a wait")
        };
        let mut plan = super::plan(&model).expect("a plan");
        assert_eq!(wait_of(&plan, "w0"), Wait::None);
        assert_eq!(wait_of(&plan, "c0"), Wait::Status);
        super::with_health_scripts(&model, &mut plan, &|group, kind| {
            group == "x.example.com" && kind == "Widget"
        });
        assert_eq!(wait_of(&plan, "w0"), Wait::ArgoHealth);
        assert_eq!(wait_of(&plan, "hook"), Wait::ArgoHook);
        assert_eq!(wait_of(&plan, "c0"), Wait::Status);
        assert_eq!(wait_of(&plan, "w1"), Wait::None);
    }

    /// argo-cd 37ee009 `controller/sort_delete_test.go` `TestFilterObjectsForDeletion`: of
    /// pods in waves 1, 5, 7, 7, 4 the two of wave 7 go first; of 1, 5, 2, 2, 4 the one of
    /// wave 5; a single object goes alone; nothing, nothing. Each later wave goes once the
    /// one before is gone (`finalizeApplicationDeletion` deletes again after each pass).
    #[test]
    fn cascade_deletes_the_highest_wave_first_as_argo_cds_own_test() {
        let steps = cascade(&pods(&["1", "5", "7", "7", "4"]));
        let first = &steps[0];
        assert_eq!(first.0, "delete:wave=7");
        assert_eq!(first.1, ["p3", "p2"]);
        let waves: Vec<&str> = steps.iter().map(|s| s.0.as_str()).collect();
        assert_eq!(
            waves,
            [
                "delete:wave=7",
                "delete:wave=5",
                "delete:wave=4",
                "delete:wave=1"
            ]
        );
        let steps = cascade(&pods(&["1", "5", "2", "2", "4"]));
        assert_eq!(
            steps[0],
            ("delete:wave=5".to_owned(), vec!["p1".to_owned()])
        );
        assert_eq!(steps.len(), 4);
        let steps = cascade(&pods(&["1"]));
        assert_eq!(steps, [("delete:wave=1".to_owned(), vec!["p0".to_owned()])]);
        assert!(cascade(&pods(&[])).is_empty());
    }

    /// `shouldBeDeleted` (argo-cd 37ee009 `controller/appcontroller.go`): a CRD, an object
    /// whose sync options say `Delete=false` and one with `helm.sh/resource-policy: keep` stay;
    /// hooks still live go in their wave, `PreDelete` hooks included (`isHookOfType` reads
    /// `argocd.argoproj.io/hook` and `helm.sh/hook` each on its own); objects never applied
    /// (`Skip`, a `PostDelete` hook) are not deleted.
    #[test]
    fn cascade_keeps_crds_delete_false_and_keep_and_deletes_live_hooks() {
        let model = crate::model::load_stream(
            "s",
            std::fs::read("fixtures/dialects/argo/delete-hooks.yaml").expect("the fixture"),
            crate::parse::Limits::default(),
        );
        let steps = cascade(&model);
        assert_eq!(
            steps,
            [
                (
                    "delete:wave=2".to_owned(),
                    vec!["frontend".to_owned(), "frontend".to_owned()]
                ),
                (
                    "delete:wave=1".to_owned(),
                    vec!["backend".to_owned(), "migrate".to_owned()]
                ),
                (
                    "delete:wave=0".to_owned(),
                    vec!["before-delete".to_owned(), "config".to_owned()]
                ),
            ]
        );
        let plan = super::plan(&model).expect("a plan");
        let name = |d: usize| {
            model
                .resource(d)
                .map(|r| r.id.name.clone())
                .unwrap_or_default()
        };
        let kept: Vec<(String, Option<&str>)> = super::kept_on_uninstall(&model, &plan)
            .into_iter()
            .map(|(d, why)| (name(d), why.map(crate::model::argo::KeptOnDelete::written)))
            .collect();
        assert_eq!(
            kept,
            [
                ("kept".to_owned(), Some("helm.sh/resource-policy: keep")),
                ("widgets.example.com".to_owned(), None),
                (
                    "stays".to_owned(),
                    Some("argocd.argoproj.io/sync-options: Delete=false")
                ),
            ]
        );
        let hooks = |t| -> Vec<String> {
            super::delete_hooks(&model, t)
                .into_iter()
                .map(name)
                .collect()
        };
        assert_eq!(hooks(HookType::PreDelete), ["before-delete"]);
        assert_eq!(hooks(HookType::PostDelete), ["after-delete"]);
        // Each step waits for the one before.
        let own = super::uninstall(&model, &plan).expect("an uninstall order");
        let after: Vec<Vec<usize>> = own.iter().map(|s| s.after.clone()).collect();
        assert_eq!(after, [vec![], vec![0], vec![1]]);
    }

    #[test]
    fn kind_order_is_argo_cds_own_list() {
        assert_eq!(KIND_ORDER.len(), 35);
        assert_eq!(KIND_ORDER.first(), Some(&"Namespace"));
        assert_eq!(KIND_ORDER.last(), Some(&"APIService"));
        assert!(!KIND_ORDER.contains(&"PriorityClass"));
        assert!(!KIND_ORDER.contains(&"MutatingWebhookConfiguration"));
    }
}
