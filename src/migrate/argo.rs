//! Argo CD → HIP-0025 (DIALECTS.md §7.3, the Argo rows), over the Argo plan.
//!
//! - Sync-phase objects (plain resources and `Sync` hooks) keep the wave of the plan step they
//!   are in (after gitops-engine's Namespace/CRD adjustment) and become the level's chain of
//!   `wave-N` groups ([`super::ordinal`]); Namespaces and CRDs Argo pulls in front of its
//!   `PreSync` hooks join their level's first group.
//! - `PreSync` / `PostSync` hooks that are not Helm hooks already become Helm hooks
//!   (`pre-install,pre-upgrade` / `post-install,post-upgrade`) with their wave as
//!   `helm.sh/hook-weight`, and their delete policies translated; never groups.
//! - What Argo never applies on sync (`Skip`, `SyncFail`, hooks without a sync phase) would be
//!   installed by Helm: listed as a manual edit.

use std::collections::BTreeMap;

use super::ordinal::{self, Entry};
use super::{Manual, Mapping};
use crate::model::annotations::{HOOK, HOOK_DELETE_POLICY, HOOK_WEIGHT};
use crate::model::argo::{ARGO_HOOK, Phase, SYNC_WAVE};
use crate::model::{DocId, Model};
use crate::plan::Plan;

pub const HOOK_DELETE: &str = "argocd.argoproj.io/hook-delete-policy";

/// The (phase, wave) of a step, read back from its name ([`crate::plan::argo::step_name`]).
fn step_phase_wave(name: &str) -> Option<(Phase, i64)> {
    let (phase, wave) = name.split_once(":wave=")?;
    let phase = [Phase::PreSync, Phase::Sync, Phase::PostSync]
        .into_iter()
        .find(|p| p.name() == phase)?;
    Some((phase, wave.parse().ok()?))
}

/// Argo's delete policies as Helm's.
fn helm_delete_policy(argo: &str) -> Option<&'static str> {
    match argo.trim() {
        "HookSucceeded" => Some("hook-succeeded"),
        "HookFailed" => Some("hook-failed"),
        "BeforeHookCreation" => Some("before-hook-creation"),
        _ => None,
    }
}

/// Maps an Argo-ordered chart.
#[must_use]
pub fn map(model: &Model, plan: &Plan) -> Mapping {
    let mut mapping = Mapping::default();
    // The first (phase, wave) each object is applied in.
    let mut placed: BTreeMap<DocId, (Phase, i64)> = BTreeMap::new();
    for step in &plan.steps {
        let Some(pw) = step.group.as_deref().and_then(step_phase_wave) else {
            continue;
        };
        for &doc in &step.resources {
            placed.entry(doc).or_insert(pw);
        }
    }
    let weights = hook_weights(model, plan, &placed, &mut mapping);
    let mut entries = Vec::new();
    for &doc in &plan.crds {
        entries.push(Entry {
            doc,
            ordinal: None,
            anchor: anchor(model, doc),
        });
    }
    for (&doc, &(phase, wave)) in &placed {
        let Some(r) = model.resource(doc) else {
            continue;
        };
        let carried = carried(model, doc);
        if !carried.is_empty() {
            mapping.want(doc).carried = carried;
        }
        if phase == Phase::Sync {
            if model.documents[doc].placement == crate::model::Placement::Crd || r.hook.is_some() {
                continue;
            }
            entries.push(Entry {
                doc,
                ordinal: Some(wave),
                anchor: anchor(model, doc),
            });
            if r.argo.is_hook && r.id.kind == "Job" {
                mapping.manual.push(Manual {
                    doc,
                    at: r.annotation(ARGO_HOOK).map(|a| a.key_loc),
                    reason: "Argo CD recreates a `Sync` hook on every sync; Helm updates a regular Job in place and a Job's spec cannot change: give it a name per revision".to_owned(),
                    snippet: format!("name: {}-{{{{ .Release.Revision }}}}", r.id.name),
                });
            }
            continue;
        }
        // A PreSync or PostSync hook: a Helm hook, weighted by its wave. A Helm hook already
        // keeps its events; its weight becomes the wave Argo ordered it by.
        let weight = weights.get(&doc).copied().unwrap_or(wave);
        if let Some(hook) = &r.hook {
            if hook.weight != weight {
                let want = mapping.want(doc);
                want.anchor = anchor(model, doc);
                want.set.push((HOOK_WEIGHT.to_owned(), weight.to_string()));
            }
            continue;
        }
        let events = if phase == Phase::PreSync {
            "pre-install,pre-upgrade"
        } else {
            "post-install,post-upgrade"
        };
        let mut set = vec![
            (HOOK.to_owned(), events.to_owned()),
            (HOOK_WEIGHT.to_owned(), weight.to_string()),
        ];
        if let Some(policy) = r.annotation(HOOK_DELETE).and_then(|a| a.value.as_str()) {
            let helm: Vec<&str> = policy.split(',').filter_map(helm_delete_policy).collect();
            if !helm.is_empty() {
                set.push((HOOK_DELETE_POLICY.to_owned(), helm.join(",")));
            }
        }
        let want = mapping.want(doc);
        want.anchor = anchor(model, doc);
        want.set = set;
    }
    ordinal::chain(model, &entries, "wave", &mut mapping);
    for &doc in &plan.not_installed {
        let Some(r) = model.resource(doc) else {
            continue;
        };
        if r.hook.is_some() {
            // Helm keeps its own hook, whatever Argo made of it.
            continue;
        }
        let why = if r.argo.skipped {
            "Argo CD skips it (`Skip`)"
        } else {
            "Argo CD never applies it on sync (a `SyncFail` hook, or a hook with no sync phase)"
        };
        mapping.manual.push(Manual {
            doc,
            at: r.annotation(ARGO_HOOK).map(|a| a.key_loc),
            reason: format!(
                "{why}, but Helm installs every template that is not a Helm hook: remove it from the chart or render it only under a value"
            ),
            snippet: format!(
                "{{{{- if .Values.enable{} }}}} … {{{{- end }}}}",
                r.id.kind
            ),
        });
    }
    mapping
}

/// Helm weights for the `PreSync` and `PostSync` hooks that keep Argo CD's order among the
/// hooks of one phase and wave. Argo CD applies them kind by kind (each kind once the one
/// before was sent, gitops-engine's `runTasks`), by name inside a kind; Helm runs hooks one at
/// a time by weight, then name, then kind. When the wave as weight would let Helm run a hook
/// before one of a kind Argo CD applies earlier (a Job named `a-…` before its
/// `ServiceAccount`), every hook of that phase gets `wave × kinds per wave + the place of its
/// kind in the wave` instead, which keeps the waves in order too. Each kind before the next
/// is a constraint the proof checks. Hooks not in the map keep their wave as weight.
fn hook_weights(
    model: &Model,
    plan: &Plan,
    placed: &BTreeMap<DocId, (Phase, i64)>,
    mapping: &mut Mapping,
) -> BTreeMap<DocId, i64> {
    let mut weights = BTreeMap::new();
    for phase in [Phase::PreSync, Phase::PostSync] {
        // Each wave's hooks as runs of one kind, in Argo CD's order.
        let mut waves: Vec<(i64, Vec<Vec<DocId>>)> = Vec::new();
        for step in &plan.steps {
            let Some((p, wave)) = step.group.as_deref().and_then(step_phase_wave) else {
                continue;
            };
            if p != phase {
                continue;
            }
            let mut runs: Vec<Vec<DocId>> = Vec::new();
            for &doc in &step.resources {
                if placed.get(&doc) != Some(&(phase, wave)) {
                    continue;
                }
                let Some(r) = model.resource(doc) else {
                    continue;
                };
                match runs.last_mut() {
                    Some(run)
                        if run
                            .last()
                            .and_then(|&d| model.resource(d))
                            .is_some_and(|l| l.id.kind == r.id.kind) =>
                    {
                        run.push(doc);
                    }
                    _ => runs.push(vec![doc]),
                }
            }
            for (i, run) in runs.iter().enumerate() {
                for later in &runs[i + 1..] {
                    for &a in run {
                        for &b in later {
                            mapping.constraints.push((a, b));
                        }
                    }
                }
            }
            waves.push((wave, runs));
        }
        // Helm's order with the wave as weight: by name, then kind.
        let name = |d: DocId| model.resource(d).map_or("", |r| r.id.name.as_str());
        let inverted = waves.iter().any(|(_, runs)| {
            runs.iter().enumerate().any(|(i, run)| {
                runs[i + 1..]
                    .iter()
                    .flatten()
                    .any(|&b| run.iter().any(|&a| name(b) < name(a)))
            })
        });
        if !inverted {
            continue;
        }
        let per_wave = waves.iter().map(|(_, runs)| runs.len()).max().unwrap_or(1);
        let per_wave = i64::try_from(per_wave).unwrap_or(i64::MAX);
        for (wave, runs) in &waves {
            for (i, run) in runs.iter().enumerate() {
                let place = i64::try_from(i).unwrap_or(i64::MAX);
                let weight = wave.saturating_mul(per_wave).saturating_add(place);
                for &doc in run {
                    weights.insert(doc, weight);
                }
            }
        }
    }
    weights
}

/// The annotation that decides an object's wave or hook, as written.
fn anchor(model: &Model, doc: DocId) -> Option<crate::source::Loc> {
    let r = model.resource(doc)?;
    [SYNC_WAVE, ARGO_HOOK, HOOK_WEIGHT]
        .iter()
        .find_map(|k| r.annotation(k))
        .map(|a| a.key_loc)
}

/// Argo's own annotations on an object (removed with `--drop-source-annotations`).
fn carried(model: &Model, doc: DocId) -> Vec<crate::source::Loc> {
    let Some(r) = model.resource(doc) else {
        return Vec::new();
    };
    r.annotations
        .iter()
        .filter(|a| [SYNC_WAVE, ARGO_HOOK, HOOK_DELETE].contains(&a.key.as_str()))
        .map(|a| a.key_loc)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_names_read_back() {
        let name = crate::plan::argo::step_name(Phase::Sync, -20);
        assert_eq!(step_phase_wave(&name), Some((Phase::Sync, -20)));
        assert_eq!(step_phase_wave("Sync"), None);
        assert_eq!(helm_delete_policy(" HookSucceeded"), Some("hook-succeeded"));
        assert_eq!(helm_delete_policy("Never"), None);
    }
}
