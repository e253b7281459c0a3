//! Argo CD's ordering annotations, read as gitops-engine reads them (DIALECTS.md §2).
//!
//! - `argocd.argoproj.io/sync-wave`: Go's `strconv.Atoi` of the raw value (no trimming; a sign
//!   and leading zeros are accepted). Missing or not an integer: `helm.sh/hook-weight`, read the
//!   same way, on any object (hook or not); else wave 0. Argo never reports a bad value.
//! - `argocd.argoproj.io/hook`: a comma list, each item trimmed, of `PreSync`, `Sync`,
//!   `PostSync`, `SyncFail`, `Skip` (and `PreDelete`, `PostDelete`, which only the application
//!   controller runs); unknown items are dropped. When no item is known, the Helm hook types
//!   apply (`pre-install`/`pre-upgrade` → `PreSync`, `post-install`/`post-upgrade` → `PostSync`).
//! - An object is a hook when it carries the Argo key (unless `Skip` is its only type) or a
//!   Helm hook other than `crd-install`. A hook runs once in each sync phase among its types;
//!   a hook with no sync phase is never applied; a non-hook object is in the Sync phase.
//!
//! Go's `GetAnnotations` returns no annotations at all when one value is not a string, so such
//! an object is read as unannotated.

use super::annotations::{Annotation, HOOK, HOOK_DELETE_POLICY, HOOK_WEIGHT, Spanned};
use crate::source::Loc;

pub const SYNC_WAVE: &str = "argocd.argoproj.io/sync-wave";
pub const ARGO_HOOK: &str = "argocd.argoproj.io/hook";
pub const ARGO_HOOK_DELETE_POLICY: &str = "argocd.argoproj.io/hook-delete-policy";
pub const SYNC_OPTIONS: &str = "argocd.argoproj.io/sync-options";

/// Why Argo CD's cascade deletion leaves an object in place (`shouldBeDeleted` in
/// `controller/appcontroller.go`), besides being a CRD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeptOnDelete {
    /// `argocd.argoproj.io/sync-options` whose first `Delete=` item is `Delete=false`.
    DeleteFalse,
    /// `helm.sh/resource-policy` with the item `keep` (exact, as Argo CD compares it).
    ResourcePolicyKeep,
}

impl KeptOnDelete {
    /// The annotation that keeps it, as written.
    #[must_use]
    pub fn written(self) -> &'static str {
        match self {
            Self::DeleteFalse => "argocd.argoproj.io/sync-options: Delete=false",
            Self::ResourcePolicyKeep => "helm.sh/resource-policy: keep",
        }
    }
}

/// When Argo CD deletes a hook (`common.HookDeletePolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DeletePolicy {
    /// Deleted before the next run creates it again (the default).
    BeforeHookCreation,
    /// Deleted once it succeeded.
    HookSucceeded,
    /// Deleted once it failed.
    HookFailed,
}

impl DeletePolicy {
    /// Argo CD's exact names, then Helm's, which Argo CD maps (`hook/helm/delete_policy.go`).
    fn parse(text: &str, helm: bool) -> Option<Self> {
        Some(match (text, helm) {
            ("BeforeHookCreation", false) | ("before-hook-creation", true) => {
                Self::BeforeHookCreation
            }
            ("HookSucceeded", false) | ("hook-succeeded", true) => Self::HookSucceeded,
            ("HookFailed", false) | ("hook-failed", true) => Self::HookFailed,
            _ => return None,
        })
    }
}

/// An Argo CD hook type (`common.HookType` and the controller's delete hooks).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum HookType {
    PreSync,
    Sync,
    PostSync,
    SyncFail,
    Skip,
    PreDelete,
    PostDelete,
}

impl HookType {
    /// The exact (case-sensitive) names Argo CD accepts.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "PreSync" => Self::PreSync,
            "Sync" => Self::Sync,
            "PostSync" => Self::PostSync,
            "SyncFail" => Self::SyncFail,
            "Skip" => Self::Skip,
            "PreDelete" => Self::PreDelete,
            "PostDelete" => Self::PostDelete,
            _ => return None,
        })
    }

    /// The sync phase a hook of this type runs in, if any.
    #[must_use]
    pub fn phase(self) -> Option<Phase> {
        match self {
            Self::PreSync => Some(Phase::PreSync),
            Self::Sync => Some(Phase::Sync),
            Self::PostSync => Some(Phase::PostSync),
            Self::SyncFail => Some(Phase::SyncFail),
            Self::Skip | Self::PreDelete | Self::PostDelete => None,
        }
    }
}

/// A sync phase, in execution order (`syncPhaseOrder`: `PreSync` −1, `Sync` 0, `PostSync` 1,
/// `SyncFail` 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    PreSync,
    Sync,
    PostSync,
    /// Runs only when the sync fails: never part of an install.
    SyncFail,
}

impl Phase {
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::PreSync => "PreSync",
            Self::Sync => "Sync",
            Self::PostSync => "PostSync",
            Self::SyncFail => "SyncFail",
        }
    }
}

/// Where an object's wave comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum WaveSource {
    /// `argocd.argoproj.io/sync-wave`, at its value.
    SyncWave(Loc),
    /// `helm.sh/hook-weight`, at its value (the sync wave is absent or not an integer).
    HookWeight(Loc),
    /// Neither holds an integer: wave 0.
    Default,
}

/// An object's wave as Argo CD computes it.
#[derive(Clone, Debug, PartialEq)]
pub struct Wave {
    pub value: i64,
    pub source: WaveSource,
    /// Values Argo silently passed over (not integers), in the order it tried them.
    pub ignored: Vec<Spanned<String>>,
}

/// Everything Argo CD reads from one object to order it.
#[derive(Clone, Debug, PartialEq)]
pub struct Argo {
    pub wave: Wave,
    /// `argocd.argoproj.io/hook`, when present: the known types (at the value) and the
    /// dropped items.
    pub hook: Option<ArgoHook>,
    /// Whether the object is a hook (`hook.IsHook`).
    pub is_hook: bool,
    /// `Skip` is the only type: never applied.
    pub skipped: bool,
    /// The sync phases the object is applied in, in order, without duplicates. Empty for a
    /// skipped object and for a hook without a sync phase (never applied).
    pub phases: Vec<Phase>,
    /// When a hook is deleted, as `hook.DeletePolicies` reads it: Argo CD's key, then Helm's
    /// `helm.sh/hook-delete-policy` mapped; [`DeletePolicy::BeforeHookCreation`] when neither
    /// names a known policy.
    pub delete_policies: Vec<DeletePolicy>,
    /// The namespace Argo CD syncs the object in, once its destination namespace is known
    /// (`-n`, [`settle`]); `None` without one (the written namespace stands).
    pub namespace: Option<String>,
    /// The delete hooks the application controller runs it as, `PreDelete` before
    /// `PostDelete` (`isHookOfType` in `controller/hook.go`: `argocd.argoproj.io/hook` or
    /// `helm.sh/hook` names the type, each read on its own, so a `PreSync` hook with Helm's
    /// `pre-delete` is a `PreDelete` hook too).
    pub delete_hooks: Vec<HookType>,
    /// Why the cascade deletion leaves it in place, if it does.
    pub kept_on_delete: Option<KeptOnDelete>,
}

/// The `argocd.argoproj.io/hook` annotation.
#[derive(Clone, Debug, PartialEq)]
pub struct ArgoHook {
    pub types: Vec<HookType>,
    /// Items Argo CD does not know (dropped without a word).
    pub unknown: Vec<String>,
    pub loc: Loc,
}

impl Argo {
    /// Reads the annotations of one object.
    #[must_use]
    pub fn read(annotations: &[Annotation]) -> Self {
        let find = |key: &str| super::annotations::go_annotation(annotations, key);
        let wave = read_wave(find(SYNC_WAVE), find(HOOK_WEIGHT));
        let hook = find(ARGO_HOOK).map(|(raw, loc)| read_argo_hook(raw, loc));
        let helm = find(HOOK).map(|(raw, _)| raw);
        let helm_is_hook = helm.is_some_and(|raw| raw != "crd-install");
        let mut types: Vec<HookType> = hook.as_ref().map(|h| h.types.clone()).unwrap_or_default();
        if types.is_empty() {
            types = helm.map(helm_types).unwrap_or_default();
        }
        let skipped = types.contains(&HookType::Skip) && types.len() == 1;
        let is_hook = if hook.is_some() {
            !skipped
        } else {
            helm_is_hook
        };
        let mut phases: Vec<Phase> = if skipped {
            Vec::new()
        } else if is_hook {
            types.iter().filter_map(|t| t.phase()).collect()
        } else {
            vec![Phase::Sync]
        };
        phases.sort_unstable();
        phases.dedup();
        let mut delete_policies: Vec<DeletePolicy> =
            [(ARGO_HOOK_DELETE_POLICY, false), (HOOK_DELETE_POLICY, true)]
                .into_iter()
                .flat_map(|(key, helm)| {
                    let raw = find(key).map_or("", |(raw, _)| raw);
                    csv(raw)
                        .into_iter()
                        .filter_map(move |p| DeletePolicy::parse(p, helm))
                        .collect::<Vec<_>>()
                })
                .collect();
        if delete_policies.is_empty() {
            delete_policies.push(DeletePolicy::BeforeHookCreation);
        }
        // `isHookOfType`: either key, split on `,`, items trimmed, compared exactly.
        let names = |key: &str, name: &str| {
            find(key).is_some_and(|(raw, _)| raw.split(',').any(|item| item.trim() == name))
        };
        let delete_hooks = [
            (HookType::PreDelete, "PreDelete", "pre-delete"),
            (HookType::PostDelete, "PostDelete", "post-delete"),
        ]
        .into_iter()
        .filter(|(_, argo, helm)| names(ARGO_HOOK, argo) || names(HOOK, helm))
        .map(|(t, _, _)| t)
        .collect();
        // `shouldBeDeleted`: the first `Delete=` option decides; `keep` among Helm's policies.
        let delete_option = find(SYNC_OPTIONS).and_then(|(raw, _)| {
            csv(raw)
                .into_iter()
                .find_map(|item| item.strip_prefix("Delete="))
        });
        let kept_on_delete = if delete_option == Some("false") {
            Some(KeptOnDelete::DeleteFalse)
        } else if find(super::annotations::RESOURCE_POLICY)
            .is_some_and(|(raw, _)| csv(raw).contains(&"keep"))
        {
            Some(KeptOnDelete::ResourcePolicyKeep)
        } else {
            None
        };
        Argo {
            wave,
            hook,
            is_hook,
            skipped,
            phases,
            delete_policies,
            namespace: None,
            delete_hooks,
            kept_on_delete,
        }
    }

    /// The phases applied during a successful install (`SyncFail` runs only on failure).
    pub fn install_phases(&self) -> impl Iterator<Item = Phase> + '_ {
        self.phases
            .iter()
            .copied()
            .filter(|p| *p != Phase::SyncFail)
    }
}

/// Gives every object the namespace Argo CD syncs it in, when the Application's destination
/// namespace is known (`-n`, which Argo CD renders with as `--namespace`): Argo CD clears the
/// namespace of a cluster-scoped kind and gives a namespaced one (or one it does not know)
/// written without one the destination (`NormalizeTargetObjects`); then every object still
/// without one gets the destination too (`getSyncTasks`), which is the namespace its sync
/// task is ordered by. Cluster scope is read from the built-in kinds and the chart's own CRDs
/// (a kind neither names is namespaced, as Argo CD counts a kind discovery does not know).
/// Without a destination nothing changes: only written namespaces order anything.
pub fn settle(model: &mut super::Model, destination: Option<&str>) {
    let Some(destination) = destination else {
        return;
    };
    let cluster_scoped_crds: std::collections::BTreeSet<(String, String)> = model
        .documents
        .iter()
        .filter_map(|d| match &d.content {
            super::Content::Resource(r) => r.kapp.crd.as_ref(),
            _ => None,
        })
        .filter(|crd| crd.cluster_scoped)
        .map(|crd| (crd.group.clone(), crd.kind.clone()))
        .collect();
    for doc in &mut model.documents {
        let (super::Content::Resource(r)
        | super::Content::NotAnObject {
            generated: Some(r), ..
        }) = &mut doc.content
        else {
            continue;
        };
        let (group, kind) = (r.id.group.as_str(), r.id.kind.as_str());
        let cluster_scoped = super::kapp::CLUSTER_SCOPED.contains(&(group, kind))
            || cluster_scoped_crds.contains(&(group.to_owned(), kind.to_owned()));
        r.argo.namespace = Some(match &r.id.namespace {
            Some(ns) if !cluster_scoped && !ns.is_empty() => ns.clone(),
            _ => destination.to_owned(),
        });
    }
}

/// Go's `strconv.Atoi` on a 64-bit platform: optional sign, ASCII decimal digits, in range.
#[must_use]
pub fn atoi(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn read_wave(sync_wave: Option<(&str, Loc)>, hook_weight: Option<(&str, Loc)>) -> Wave {
    let mut ignored = Vec::new();
    for (candidate, source) in [
        (sync_wave, WaveSource::SyncWave as fn(Loc) -> WaveSource),
        (hook_weight, WaveSource::HookWeight),
    ] {
        let Some((raw, loc)) = candidate else {
            continue;
        };
        match atoi(raw) {
            Some(value) => {
                return Wave {
                    value,
                    source: source(loc),
                    ignored,
                };
            }
            None => ignored.push(Spanned {
                value: raw.to_owned(),
                loc,
            }),
        }
    }
    Wave {
        value: 0,
        source: WaveSource::Default,
        ignored,
    }
}

/// `GetAnnotationCSVs`: split on `,`, trim, drop empty items and duplicates (first kept).
fn csv(raw: &str) -> Vec<&str> {
    let mut items: Vec<&str> = Vec::new();
    for item in raw.split(',').map(str::trim) {
        if !item.is_empty() && !items.contains(&item) {
            items.push(item);
        }
    }
    items
}

fn read_argo_hook(raw: &str, loc: Loc) -> ArgoHook {
    let mut types = Vec::new();
    let mut unknown = Vec::new();
    for item in csv(raw) {
        match HookType::parse(item) {
            Some(t) => types.push(t),
            None => unknown.push(item.to_owned()),
        }
    }
    ArgoHook {
        types,
        unknown,
        loc,
    }
}

/// Helm hook types as Argo CD maps them; every other Helm event has no Argo type.
fn helm_types(raw: &str) -> Vec<HookType> {
    csv(raw)
        .into_iter()
        .filter_map(|event| match event {
            "pre-install" | "pre-upgrade" => Some(HookType::PreSync),
            "post-install" | "post-upgrade" => Some(HookType::PostSync),
            "pre-delete" => Some(HookType::PreDelete),
            "post-delete" => Some(HookType::PostDelete),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::annotations::AnnotationValue;
    use crate::model::annotations::test_annotation as ann;

    #[test]
    fn atoi_is_go_strconv_atoi() {
        assert_eq!(atoi("5"), Some(5));
        assert_eq!(atoi("+5"), Some(5));
        assert_eq!(atoi("-10"), Some(-10));
        assert_eq!(atoi("05"), Some(5));
        for bad in [
            "", " 5", "5 ", "+", "-", "1.5", "1e3", "0x10", "1_000", "five", "٣",
        ] {
            assert_eq!(atoi(bad), None, "{bad:?}");
        }
        assert_eq!(atoi("9223372036854775807"), Some(i64::MAX));
        assert_eq!(atoi("9223372036854775808"), None);
    }

    #[test]
    fn delete_policies_read_argos_key_then_helms_mapped_else_before_hook_creation() {
        use DeletePolicy::{BeforeHookCreation, HookFailed, HookSucceeded};
        let read = |pairs: &[(&str, &str)]| {
            let annotations: Vec<Annotation> = pairs
                .iter()
                .zip(1..)
                .map(|((k, v), at)| ann(k, v, at))
                .collect();
            Argo::read(&annotations).delete_policies
        };
        assert_eq!(read(&[(ARGO_HOOK, "PreSync")]), [BeforeHookCreation]);
        assert_eq!(
            read(&[(ARGO_HOOK_DELETE_POLICY, " HookSucceeded , HookFailed")]),
            [HookSucceeded, HookFailed]
        );
        // Helm's names are mapped after Argo CD's; unknown names of either are dropped.
        assert_eq!(
            read(&[
                (HOOK_DELETE_POLICY, "hook-failed,HookSucceeded"),
                (ARGO_HOOK_DELETE_POLICY, "hook-succeeded,BeforeHookCreation"),
            ]),
            [BeforeHookCreation, HookFailed]
        );
        assert_eq!(
            read(&[(HOOK_DELETE_POLICY, "hook-succeeded")]),
            [HookSucceeded]
        );
        assert_eq!(
            read(&[(ARGO_HOOK_DELETE_POLICY, "Never")]),
            [BeforeHookCreation]
        );
    }

    /// argo-cd 37ee009 `controller/hook.go` `isHookOfType`: either key names a delete hook,
    /// each read on its own (an Argo type does not hide Helm's here); `shouldBeDeleted` keeps
    /// `Delete=false` (the first `Delete=` option decides) and `keep`, compared exactly.
    #[test]
    fn delete_hooks_and_what_the_cascade_keeps() {
        use HookType::{PostDelete, PreDelete};
        let read = |pairs: &[(&str, &str)]| {
            let annotations: Vec<Annotation> = pairs
                .iter()
                .zip(1..)
                .map(|((k, v), at)| ann(k, v, at))
                .collect();
            Argo::read(&annotations)
        };
        assert_eq!(read(&[(ARGO_HOOK, "PreDelete")]).delete_hooks, [PreDelete]);
        assert_eq!(read(&[(HOOK, "post-delete")]).delete_hooks, [PostDelete]);
        assert_eq!(
            read(&[(ARGO_HOOK, "PreSync"), (HOOK, " pre-delete ,post-delete")]).delete_hooks,
            [PreDelete, PostDelete]
        );
        assert!(read(&[(ARGO_HOOK, "predelete")]).delete_hooks.is_empty());
        assert!(read(&[(HOOK, "PreDelete")]).delete_hooks.is_empty());
        let kept = |pairs: &[(&str, &str)]| read(pairs).kept_on_delete;
        assert_eq!(
            kept(&[(SYNC_OPTIONS, "Prune=false, Delete=false")]),
            Some(KeptOnDelete::DeleteFalse)
        );
        assert_eq!(kept(&[(SYNC_OPTIONS, "Delete=true,Delete=false")]), None);
        assert_eq!(kept(&[(SYNC_OPTIONS, "Delete=False")]), None);
        assert_eq!(
            kept(&[(super::super::annotations::RESOURCE_POLICY, "keep")]),
            Some(KeptOnDelete::ResourcePolicyKeep)
        );
        assert_eq!(
            kept(&[(super::super::annotations::RESOURCE_POLICY, "Keep")]),
            None
        );
    }

    #[test]
    fn wave_falls_back_to_hook_weight_then_zero() {
        let a = Argo::read(&[ann(SYNC_WAVE, "3", 1), ann(HOOK_WEIGHT, "7", 2)]);
        assert_eq!(a.wave.value, 3);
        assert!(matches!(a.wave.source, WaveSource::SyncWave(l) if l.span.start == 1));
        // Not an integer: passed over silently, the hook weight decides, on a non-hook too.
        let a = Argo::read(&[ann(SYNC_WAVE, " 5", 1), ann(HOOK_WEIGHT, "-2", 2)]);
        assert_eq!(a.wave.value, -2);
        assert!(matches!(a.wave.source, WaveSource::HookWeight(_)));
        assert_eq!(a.wave.ignored.len(), 1);
        assert_eq!(a.wave.ignored[0].value, " 5");
        assert_eq!(a.phases, vec![Phase::Sync]);
        let a = Argo::read(&[ann(SYNC_WAVE, "x", 1), ann(HOOK_WEIGHT, "1.5", 2)]);
        assert_eq!(a.wave.value, 0);
        assert_eq!(a.wave.source, WaveSource::Default);
        assert_eq!(a.wave.ignored.len(), 2);
        let a = Argo::read(&[]);
        assert_eq!((a.wave.value, a.wave.ignored.len()), (0, 0));
    }

    #[test]
    fn a_non_string_annotation_hides_every_annotation() {
        let mut coerced = ann("other", "5", 3);
        coerced.value = AnnotationValue::Coerced {
            text: "5".into(),
            what: "an integer",
        };
        let a = Argo::read(&[ann(SYNC_WAVE, "3", 1), coerced]);
        assert_eq!(a.wave.value, 0);
    }

    #[test]
    fn hook_types_phases_and_skip() {
        let a = Argo::read(&[ann(ARGO_HOOK, "PostSync, PreSync,PreSync", 1)]);
        assert!(a.is_hook);
        assert_eq!(a.phases, vec![Phase::PreSync, Phase::PostSync]);
        // Case-sensitive; unknown items dropped, then Helm's types apply.
        let a = Argo::read(&[
            ann(ARGO_HOOK, "presync", 1),
            ann(HOOK, "post-install,post-upgrade", 2),
        ]);
        assert_eq!(
            a.hook.as_ref().map(|h| h.unknown.clone()),
            Some(vec!["presync".to_owned()])
        );
        assert!(a.is_hook);
        assert_eq!(a.phases, vec![Phase::PostSync]);
        // An Argo type wins over Helm's for that object.
        let a = Argo::read(&[ann(ARGO_HOOK, "Sync", 1), ann(HOOK, "pre-install", 2)]);
        assert_eq!(a.phases, vec![Phase::Sync]);
        // Skip alone skips; with another type it does not.
        let a = Argo::read(&[ann(ARGO_HOOK, "Skip", 1)]);
        assert!(a.skipped && !a.is_hook && a.phases.is_empty());
        let a = Argo::read(&[ann(ARGO_HOOK, "Skip,PostSync", 1)]);
        assert!(!a.skipped && a.is_hook);
        assert_eq!(a.phases, vec![Phase::PostSync]);
        // A hook without a sync phase is never applied.
        for (key, value) in [
            (ARGO_HOOK, "PreDelete"),
            (ARGO_HOOK, "Bogus"),
            (HOOK, "test"),
            (HOOK, "pre-rollback"),
        ] {
            let a = Argo::read(&[ann(key, value, 1)]);
            assert!(a.is_hook && a.phases.is_empty(), "{key}: {value}");
        }
        // SyncFail runs only on failure.
        let a = Argo::read(&[ann(ARGO_HOOK, "SyncFail", 1)]);
        assert_eq!(a.install_phases().count(), 0);
        // `crd-install` is no hook: an ordinary Sync resource.
        let a = Argo::read(&[ann(HOOK, "crd-install", 1)]);
        assert!(!a.is_hook);
        assert_eq!(a.phases, vec![Phase::Sync]);
    }

    /// The namespace each object is synced in once `-n` gives the destination: the written
    /// one for a namespaced kind (or one chartseq does not know), the destination for the
    /// rest, a cluster-scoped kind of the chart's own CRDs included.
    #[test]
    fn settle_gives_the_destination_as_argo_cd_normalizes_targets() {
        let stream = "---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: globals.example.com}
spec: {group: example.com, scope: Cluster, names: {kind: Global, plural: globals}}
---
apiVersion: example.com/v1
kind: Global
metadata: {name: g, namespace: written}
---
apiVersion: example.com/v1
kind: Local
metadata: {name: l, namespace: written}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: r, namespace: written}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c}
";
        let mut model = crate::model::load_stream(
            "s",
            stream.as_bytes().to_vec(),
            crate::parse::Limits::default(),
        );
        let namespaces = |model: &crate::model::Model| -> Vec<Option<String>> {
            (0..model.documents.len())
                .filter_map(|d| model.resource(d))
                .map(|r| r.argo.namespace.clone())
                .collect()
        };
        settle(&mut model, None);
        assert_eq!(namespaces(&model), [None, None, None, None, None]);
        settle(&mut model, Some("dest"));
        let dest = || Some("dest".to_owned());
        assert_eq!(
            namespaces(&model),
            [dest(), dest(), Some("written".to_owned()), dest(), dest()]
        );
    }
}
