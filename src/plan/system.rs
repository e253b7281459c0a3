//! The sequencing systems chartseq knows, one row each in [`SYSTEMS`]: the contract every
//! system answers, HIP-0025 included.
//!
//! A row says who the system is (its `--dialect` name, its tool, the help line), which
//! annotation keys are its ordering keys (what `--dialect auto` and CS601 read), how it plans
//! (`plan`: the order or every refusal; `analyze`: the order as far as it goes and every issue,
//! what lint's CS602–CS605 report) and the few policies the commands and the deployer ask of
//! it. Each system's annotations are read once, typed, by its module in `model`; its planner,
//! in its module here, fills the plan's steps and, where its tool waits otherwise than
//! HIP-0025, [`super::Plan::waits`]. Migrating from it is `migrate`'s own table (that layer sits
//! above this one).
//!
//! A new system is its reader, its planner and one row here (with its [`Dialect`] variant).

use crate::model::{Content, Model, Resource};
use crate::model::{annotations, argo, draft, kapp, kots, werf};
use crate::plan::{Dialect, Plan, PlanError, PlanIssue, Step};
use crate::source::Loc;

/// Plans the order a tool deletes a release in, from the release's install plan.
pub type UninstallPlanner = fn(&Model, &Plan) -> Result<Vec<Step>, PlanError>;

/// One sequencing system.
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent properties of a system, one row each"
)]
pub struct System {
    pub dialect: Dialect,
    /// The name `--dialect`, `migrate --from` and a release record use.
    pub name: &'static str,
    /// The tool whose order it is, for messages.
    pub tool: &'static str,
    /// The tool as a sentence names it (with an article where it needs one).
    pub named: &'static str,
    /// What it orders by, for a command's help.
    pub summary: &'static str,
    /// Whether its steps span the whole release rather than one chart level.
    pub release_wide: bool,
    /// Whether its tool ignores `helm.sh/hook` and applies Helm hooks as ordinary resources.
    pub hooks_are_resources: bool,
    /// Whether its tool runs hooks as Argo CD does: it creates those named only by
    /// `metadata.generateName` (naming each when it creates it, on every run) rather than
    /// refusing them, and deletes hooks by Argo CD's delete policies.
    pub generated_hooks: bool,
    /// Whether CS601 reports its keys as foreign ordering annotations: false for HIP-0025 and
    /// for a system whose keys another rule already reports (the draft HIP's are CS202's).
    pub foreign: bool,
    /// Whether an annotation key is one of its ordering keys.
    pub owns_key: fn(&str) -> bool,
    /// Whether an object is the system's own configuration, which orders the release too
    /// (kapp's `Config` objects and labelled ConfigMaps): what marks it and where.
    pub configuration: fn(&Resource) -> Option<(&'static str, Loc)>,
    /// The annotation that marks an object its tool never creates, only waits for someone else
    /// to (kapp's `exists`): `apply` refuses such a release rather than own what the chart
    /// disowns.
    pub never_created: fn(&Resource) -> Option<&'static str>,
    /// Whether what its own uninstall order leaves in place it also leaves when the object is
    /// removed from the chart (werf's `skip-delete`, KOTS's `kots.io/keep`, kapp's orphans):
    /// pruning passes over them too. Not Argo CD's: its CRD and `Delete=false` rules concern
    /// the application's deletion only.
    pub uninstall_keeps_on_removal: bool,
    /// How CS603 tells to fix a reference of its to nothing.
    pub reference_fix: &'static str,
    /// The plan, or every reason its tool refuses the chart.
    pub plan: fn(&Model) -> Result<Plan, PlanError>,
    /// The plan as far as it can be made, and every issue its tool has with the chart (what it
    /// refuses, passes over or replaces).
    pub analyze: fn(&Model) -> (Plan, Vec<PlanIssue>),
    /// The order its tool deletes the release in, when that is not the exact reverse of the
    /// install order ([`Plan::uninstall_steps`]): each step is deleted and waited gone before
    /// the steps whose `after` names it. `None`: the exact reverse.
    pub uninstall: Option<UninstallPlanner>,
}

impl std::fmt::Debug for System {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl System {
    /// Whether any resource of the release carries one of its ordering annotations or is its
    /// configuration.
    #[must_use]
    pub fn present(&self, model: &Model) -> bool {
        model.documents.iter().any(|d| match &d.content {
            Content::Resource(r) => {
                r.annotations.iter().any(|a| (self.owns_key)(&a.key))
                    || (self.configuration)(r).is_some()
            }
            _ => false,
        })
    }
}

/// Every system, HIP-0025 first, in `--dialect` order (the order lint compares the others'
/// plans in); row `i` is the [`Dialect`] whose discriminant is `i`.
pub static SYSTEMS: &[System] = &[
    System {
        dialect: Dialect::Hip,
        name: "hip",
        tool: "Helm",
        named: "Helm",
        summary: "HIP-0025 resource groups and subcharts",
        release_wide: false,
        hooks_are_resources: false,
        generated_hooks: false,
        foreign: false,
        owns_key: |key| {
            matches!(
                key,
                annotations::RESOURCE_GROUP
                    | annotations::DEPENDS_ON_GROUPS
                    | annotations::DEPENDS_ON_GROUPS_ONE_SLASH
                    | annotations::READINESS_SUCCESS
                    | annotations::READINESS_FAILURE
            )
        },
        configuration: |_| None,
        never_created: |_| None,
        uninstall_keeps_on_removal: false,
        reference_fix: "name a group of the same chart level, or remove the dependency",
        plan: super::hip::plan,
        analyze: super::hip::analyze,
        uninstall: None,
    },
    System {
        dialect: Dialect::Werf,
        name: "werf",
        tool: "werf",
        named: "werf",
        summary: "werf/nelm stages, weights and dependencies",
        release_wide: true,
        hooks_are_resources: false,
        generated_hooks: false,
        foreign: true,
        owns_key: |key| {
            matches!(key, werf::WEIGHT | werf::DEPLOY_ON)
                || key.starts_with(werf::DEPLOY_DEPENDENCY_PREFIX)
                || key.starts_with(werf::DELETE_DEPENDENCY_PREFIX)
                || key.ends_with(werf::DEPENDENCY_SUFFIX)
                || key.contains(werf::EXTERNAL_SUFFIX)
        },
        configuration: |_| None,
        never_created: |_| None,
        uninstall_keeps_on_removal: true,
        reference_fix: "name a resource werf applies in the same stage, or remove the dependency",
        plan: super::werf::plan,
        analyze: super::werf::analyze,
        uninstall: Some(super::werf::uninstall),
    },
    System {
        dialect: Dialect::Argo,
        name: "argo",
        tool: "Argo CD",
        named: "Argo CD",
        summary: "Argo CD sync phases, waves and hooks",
        release_wide: true,
        hooks_are_resources: false,
        generated_hooks: true,
        foreign: true,
        owns_key: |key| matches!(key, argo::SYNC_WAVE | argo::ARGO_HOOK),
        configuration: |_| None,
        never_created: |_| None,
        uninstall_keeps_on_removal: false,
        reference_fix: "name a resource Argo CD applies in the same stage, or remove the dependency",
        plan: super::argo::plan,
        analyze: super::argo::analyze,
        uninstall: Some(super::argo::uninstall),
    },
    System {
        dialect: Dialect::Kapp,
        name: "kapp",
        tool: "kapp",
        named: "kapp",
        summary: "kapp change groups and change rules",
        release_wide: true,
        hooks_are_resources: true,
        generated_hooks: false,
        foreign: true,
        owns_key: |key| {
            let under = |prefix: &str| {
                key.strip_prefix(prefix)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
            };
            under(kapp::CHANGE_GROUP) || under(kapp::CHANGE_RULE)
        },
        configuration: |r| {
            if r.api_version == kapp::CONFIG_API_VERSION {
                return Some((kapp::CONFIG_API_VERSION, r.kind_loc));
            }
            let label = r
                .labels
                .iter()
                .find(|l| l.key == kapp::config::CONFIG_LABEL)?;
            Some((kapp::config::CONFIG_LABEL, label.key_loc))
        },
        never_created: |r| r.kapp.exists.then_some(kapp::EXISTS),
        uninstall_keeps_on_removal: true,
        reference_fix: "name a change group a resource of the release declares (`kapp.k14s.io/change-group`), or remove the rule",
        plan: super::kapp::plan,
        analyze: |model| from_result(Dialect::Kapp, super::kapp::plan(model)),
        uninstall: Some(super::kapp::uninstall),
    },
    System {
        dialect: Dialect::Kots,
        name: "kots",
        tool: "KOTS",
        named: "KOTS",
        summary: "KOTS creation phases and waits",
        release_wide: true,
        hooks_are_resources: false,
        generated_hooks: false,
        foreign: true,
        owns_key: |key| kots::KEYS.contains(&key),
        configuration: |_| None,
        never_created: |_| None,
        uninstall_keeps_on_removal: true,
        reference_fix: "name a resource KOTS applies in the same stage, or remove the dependency",
        plan: super::kots::plan,
        analyze: super::kots::analyze,
        uninstall: Some(super::kots::uninstall),
    },
    System {
        dialect: Dialect::Draft,
        name: "draft",
        tool: "draft HIP",
        named: "the draft HIP",
        summary: "The draft sequencing HIP's layers and weights",
        release_wide: false,
        hooks_are_resources: false,
        generated_hooks: false,
        foreign: false,
        owns_key: |key| draft::SUPERSEDED.iter().any(|(k, _)| *k == key),
        configuration: |_| None,
        never_created: |_| None,
        uninstall_keeps_on_removal: false,
        reference_fix: "name a layer a resource of the same chart declares, or a subchart it depends on, or remove the reference",
        plan: super::draft::plan,
        analyze: super::draft::analyze,
        uninstall: None,
    },
    #[cfg(test)]
    super::toy::SYSTEM,
];

/// The analysis of a planner that only returns its plan or its refusals: the refusals, or
/// what the plan says its tool passes over.
#[must_use]
pub fn from_result(dialect: Dialect, result: Result<Plan, PlanError>) -> (Plan, Vec<PlanIssue>) {
    match result {
        Ok(plan) => {
            let issues = plan.issues.clone();
            (plan, issues)
        }
        Err(e) => (
            Plan {
                dialect,
                ..Plan::default()
            },
            e.issues,
        ),
    }
}

/// Every system but HIP-0025: the other tools' orders lint analyses.
pub fn others() -> impl Iterator<Item = &'static System> {
    SYSTEMS.iter().filter(|s| s.dialect != Dialect::Hip)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_row_is_its_dialect_and_names_it_once() {
        for (i, system) in SYSTEMS.iter().enumerate() {
            assert_eq!(system.dialect as usize, i, "{}", system.name);
            assert!(std::ptr::eq(system.dialect.system(), system));
            assert_eq!(Dialect::from_name(system.name), Some(system.dialect));
        }
        let names: Vec<&str> = others().map(|s| s.name).collect();
        assert_eq!(&names[..5], ["werf", "argo", "kapp", "kots", "draft"]);
    }

    #[test]
    fn no_key_is_two_systems_ordering_key() {
        for key in [
            "helm.sh/resource-group",
            "helm.sh/readiness-success",
            "argocd.argoproj.io/sync-wave",
            "werf.io/weight",
            "db.dependency.werf.io",
            "sa.external-dependency.werf.io/resource",
            "kapp.k14s.io/change-rule.1",
            "kots.io/creation-phase",
            "helm.sh/layer",
            "helm.sh/weight",
        ] {
            let owners: Vec<&str> = SYSTEMS
                .iter()
                .filter(|s| (s.owns_key)(key))
                .map(|s| s.name)
                .collect();
            assert_eq!(owners.len(), 1, "{key}: {owners:?}");
        }
    }
}
