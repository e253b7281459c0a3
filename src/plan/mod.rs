//! The install plan (SPEC §2), computed from the model with no I/O: what a plan is, the
//! dialects, and one planner per dialect behind one contract (`fn plan(&Model) ->
//! Result<Plan, PlanError>`): HIP-0025's in `hip.rs`, the others each in its own file.
//!
//! HIP-0025: charts are walked pre-order. At each level: subcharts first, in subchart-DAG batches (each
//! complete, recursively), then the level's resource-group batches (Kahn, batches sorted by
//! name), then its unsequenced resources. Hooks and `crds/` documents are listed apart;
//! documents that hold only comments are no resources and stay out of every step.
//! `plan`, `template`, `lint` and `apply` all read this one result.

pub mod argo;
pub mod detect;
pub mod draft;
pub mod graph;
mod hip;
pub mod kapp;
pub mod kots;
pub mod output;
pub mod system;
#[cfg(test)]
mod toy;
pub mod wait;
pub mod werf;

use std::collections::BTreeMap;

use crate::model::annotations::{ListError, Spanned};
use crate::model::kinds::install_rank;
use crate::model::{ChartId, DocId, Model, ResourceId};
use crate::source::Loc;
pub(crate) use hip::{GroupsFrom, analyze_with};
pub use hip::{analyze, plan};
pub use wait::{External, ExternalType, Wait};

/// One chart level's slice of the plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    pub chart: ChartId,
    /// Nesting depth (0 for the root).
    pub depth: usize,
    /// Declared, enabled subcharts in DAG batches (effective names).
    pub subchart_batches: Vec<Vec<String>>,
    /// Rendered subcharts that `Chart.yaml` does not declare; they go after the declared ones.
    pub undeclared: Vec<String>,
    pub group_batches: Vec<Vec<String>>,
    /// The level's unsequenced documents, in install order.
    pub unsequenced: Vec<DocId>,
}

/// One apply-and-wait unit: a resource group, or a level's unsequenced batch.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub chart: ChartId,
    /// `None` for the unsequenced step.
    pub group: Option<String>,
    /// Documents in Helm's kind order, then input order.
    pub resources: Vec<DocId>,
    /// Steps that must be ready before this one may start (direct prerequisites only).
    pub after: Vec<usize>,
}

/// Why a resource or group ended up unsequenced although it asked for a place.
#[derive(Clone, Debug, PartialEq)]
pub enum Demotion {
    /// The resource's depends-on value could not be read.
    MalformedDependsOn { doc: DocId },
    /// The group depends on a group that does not exist at this level (directly, or through
    /// a group that was demoted itself).
    MissingGroup {
        chart: ChartId,
        group: String,
        missing: String,
        loc: Loc,
    },
    /// The group has no edges while the level has two or more groups. `dropped` names the
    /// demoted groups that depended on it: without their demotion it would have had an edge.
    Isolated {
        chart: ChartId,
        group: String,
        dropped: Vec<String>,
    },
}

/// A problem that makes a plan impossible (SPEC §2, "fatal").
#[derive(Clone, Debug, PartialEq)]
pub enum PlanIssue {
    /// Groups of one level depend on each other in a circle. `edges[i]` is where
    /// `path[i]` is declared to depend on `path[i + 1]`.
    GroupCycle {
        chart: ChartId,
        path: Vec<String>,
        edges: Vec<Loc>,
    },
    /// Subcharts of one level depend on each other in a circle.
    SubchartCycle {
        chart: ChartId,
        path: Vec<String>,
        edges: Vec<Loc>,
    },
    /// One resource identity placed in two groups.
    TwoGroups {
        chart: ChartId,
        id: ResourceId,
        first: Spanned<String>,
        second: Spanned<String>,
    },
    /// A subchart reference that names no enabled dependency.
    UnknownSubchart {
        chart: ChartId,
        reference: String,
        loc: Loc,
        disabled: bool,
    },
    /// A subchart reference that matches several dependencies.
    AmbiguousSubchart {
        chart: ChartId,
        reference: String,
        matches: Vec<String>,
        loc: Loc,
    },
    /// A dialect's value its tool rejects, failing the whole release (werf weights and
    /// events; KOTS property pairs; draft values that name nothing readable). Only a dialect
    /// plan reports it.
    InvalidDialectValue {
        dialect: Dialect,
        key: String,
        value: String,
        reason: String,
        loc: Loc,
    },
    /// A dialect's value its tool does not refuse but silently replaces (an Argo CD wave that
    /// is not an integer: wave 0). Only a dialect's analysis reports it; never fatal.
    ReplacedDialectValue {
        dialect: Dialect,
        key: String,
        value: String,
        /// What the tool uses instead (`wave 0`).
        replacement: String,
        loc: Loc,
    },
    /// A dialect's value its tool refuses without a word, passing over more than the value
    /// (nelm drops every delete dependency of an object when one of them is invalid). Only a
    /// dialect's analysis reports it.
    IgnoredDialectValue {
        dialect: Dialect,
        key: String,
        value: String,
        /// Why the tool refuses it (using the unknown state `present`).
        reason: String,
        /// What the tool passes over because of it, as a clause (`every delete dependency of
        /// ConfigMap/first`).
        ignored: String,
        loc: Loc,
    },
    /// A dialect's reference that names nothing its tool can find (a kapp rule's change
    /// group no resource has; a werf dependency matching no resource of its stage; a draft
    /// layer or subchart that is not there). Only a dialect plan reports it.
    DialectReference {
        dialect: Dialect,
        key: String,
        reference: String,
        reason: String,
        loc: Loc,
    },
    /// A dialect's own ordering forms a circle (kapp rules, werf dependencies, draft layers).
    /// `path` names the resources (or change groups, or layers) in order; `edges[i]` is the
    /// annotation that makes `path[i]` wait for `path[i + 1]`. Only a dialect plan reports it.
    DialectCycle {
        dialect: Dialect,
        path: Vec<String>,
        edges: Vec<Loc>,
    },
    /// A subchart depends-on value that cannot be read.
    MalformedSubchartList {
        chart: ChartId,
        error: ListError,
        loc: Loc,
    },
}

impl PlanIssue {
    /// A value the dialect's tool refuses, as its reader recorded it.
    #[must_use]
    pub fn rejected(dialect: Dialect, rejected: &crate::model::annotations::Rejected) -> Self {
        Self::InvalidDialectValue {
            dialect,
            key: rejected.key.clone(),
            value: rejected.value.clone(),
            reason: rejected.reason.clone(),
            loc: rejected.loc,
        }
    }
}

/// The plan could not be made; every reason found.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanError {
    pub issues: Vec<PlanIssue>,
}

/// Whose ordering a plan follows (`--dialect`): a row of [`system::SYSTEMS`], which says
/// everything else about it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Dialect {
    /// HIP-0025: resource groups and subcharts per chart level.
    #[default]
    Hip,
    /// werf/nelm: stages and weights across the whole release.
    Werf,
    /// Argo CD: sync phases and waves across the whole release.
    Argo,
    /// kapp: change groups and rules across the whole release.
    Kapp,
    /// Replicated KOTS: creation phases across the whole release.
    Kots,
    /// The draft HIP before HIP-0025: layers and weights per chart level.
    Draft,
    /// A toy system that proves a new one is a module and a row.
    #[cfg(test)]
    Toy,
}

impl Dialect {
    /// Its row in [`system::SYSTEMS`].
    #[must_use]
    pub fn system(self) -> &'static system::System {
        &system::SYSTEMS[self as usize]
    }

    /// Every dialect, HIP-0025 first.
    pub fn all() -> impl Iterator<Item = Dialect> {
        system::SYSTEMS.iter().map(|s| s.dialect)
    }

    /// The dialect of a [`Dialect::name`] (as a release record stores it).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        system::SYSTEMS
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.dialect)
    }

    #[must_use]
    pub fn name(self) -> &'static str {
        self.system().name
    }

    /// What the dialect orders by, for a command's help (`--dialect`, `migrate --from`).
    #[must_use]
    pub fn summary(self) -> &'static str {
        self.system().summary
    }

    /// The tool as a sentence names it: [`Dialect::tool`], with an article where it needs
    /// one ("the draft HIP").
    #[must_use]
    pub fn named(self) -> &'static str {
        self.system().named
    }

    /// The tool whose order the dialect is.
    #[must_use]
    pub fn tool(self) -> &'static str {
        self.system().tool
    }

    /// Whether the dialect's steps span the whole release rather than one chart level.
    #[must_use]
    pub fn release_wide(self) -> bool {
        self.system().release_wide
    }

    /// Whether the dialect's tool ignores `helm.sh/hook` and applies Helm hooks as ordinary
    /// resources (kapp).
    #[must_use]
    pub fn hooks_are_resources(self) -> bool {
        self.system().hooks_are_resources
    }

    /// Whether the dialect's tool creates hooks named only by `metadata.generateName`, naming
    /// each anew on every run (Argo CD).
    #[must_use]
    pub fn generated_hooks(self) -> bool {
        self.system().generated_hooks
    }

    /// Whether what the tool's uninstall leaves in place it also leaves when the object is
    /// removed from the chart ([`system::System::uninstall_keeps_on_removal`]).
    #[must_use]
    pub fn uninstall_keeps_on_removal(self) -> bool {
        self.system().uninstall_keeps_on_removal
    }
}

/// The whole release order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Plan {
    /// Whose order this is. For a release-wide dialect every step has `chart` 0 (the root)
    /// and spans the whole release, and `levels` is empty.
    pub dialect: Dialect,
    /// Levels in pre-order: every enabled chart, whether or not it renders anything (a
    /// subchart without templates is a level too, as Helm loads it).
    pub levels: Vec<Level>,
    /// Steps in install order.
    pub steps: Vec<Step>,
    /// Documents from `crds/`, applied first.
    pub crds: Vec<DocId>,
    /// Hooks in Helm's execution order: by weight, then name, then Helm's kind order, then
    /// input order.
    pub hooks: Vec<DocId>,
    /// Documents that hold only comments (a template that rendered nothing), in input order:
    /// not resources, so in no step, finding or count; `template` still prints them.
    pub comments: Vec<DocId>,
    /// Non-fatal: what was demoted to an unsequenced batch, and why.
    pub demotions: Vec<Demotion>,
    /// The order the dialect's tool deletes the release in, once [`with_uninstall`] asked for
    /// it and the tool's order is not the exact reverse of install; `None` otherwise.
    pub uninstall: Option<Vec<Step>>,
    /// Resources the dialect's tool never applies on install (Argo: `Skip`, hooks without a
    /// sync phase, `SyncFail` hooks), in input order. Always empty for HIP.
    pub not_installed: Vec<DocId>,
    /// How `apply` waits for each resource, as the plan's tool waits ([`wait`]); a resource
    /// without an entry waits as HIP-0025 says ([`wait::hip`]). Always empty for HIP.
    pub waits: BTreeMap<DocId, Wait>,
    /// Objects outside the release each resource waits to **exist** before it is applied
    /// (werf's external dependencies), in the order they are written. Always empty for HIP.
    pub external: BTreeMap<DocId, Vec<External>>,
    /// What the dialect's tool passes over without failing (a werf dependency that matches
    /// no resource of its stage): the plan is the order it uses anyway. Lint reports them.
    pub issues: Vec<PlanIssue>,
}

impl Plan {
    /// How `apply` waits for a resource once it is applied: the dialect's wait, else
    /// HIP-0025's ([`wait::hip`]); `None` for a document that is not a resource.
    #[must_use]
    pub fn wait_of(&self, model: &Model, doc: DocId) -> Option<Wait> {
        match self.waits.get(&doc) {
            Some(wait) => Some(wait.clone()),
            None => model.resource(doc).map(wait::hip),
        }
    }
}

impl Plan {
    /// The uninstall order: the dialect tool's own once [`with_uninstall`] added it, else
    /// (SPEC §2) the exact reverse of install ([`Self::reversed_steps`]). `after` (indices into
    /// the returned list) names the steps that must be gone first.
    #[must_use]
    pub fn uninstall_steps(&self) -> Vec<Step> {
        if let Some(own) = &self.uninstall {
            return own.clone();
        }
        self.reversed_steps()
    }

    /// The exact reverse of install: steps reversed, the resources inside each step
    /// reversed, and every edge turned around, so that `after` names the steps that waited for
    /// this one at install.
    #[must_use]
    pub fn reversed_steps(&self) -> Vec<Step> {
        let last = self.steps.len().saturating_sub(1);
        let mut reversed: Vec<Step> = self
            .steps
            .iter()
            .rev()
            .map(|s| Step {
                chart: s.chart,
                group: s.group.clone(),
                resources: s.resources.iter().rev().copied().collect(),
                after: Vec::new(),
            })
            .collect();
        for (i, step) in self.steps.iter().enumerate() {
            for &before in &step.after {
                reversed[last - before].after.push(last - i);
            }
        }
        for step in &mut reversed {
            dedup(&mut step.after);
        }
        reversed
    }
}

/// The plan in a dialect, or every reason it cannot be made (Argo CD never refuses one).
pub fn plan_in(model: &Model, dialect: Dialect) -> Result<Plan, PlanError> {
    (dialect.system().plan)(model)
}

/// Adds the order the plan's tool deletes the release in ([`Plan::uninstall`]), or every
/// reason its tool refuses to uninstall it (a cycle of werf's delete dependencies).
pub fn with_uninstall(model: &Model, plan: &mut Plan) -> Result<(), PlanError> {
    if let Some(uninstall) = plan.dialect.system().uninstall {
        plan.uninstall = Some(uninstall(model, plan)?);
    }
    Ok(())
}

/// The part of Helm's hook order that a hook's own fields decide: weight, then name, then kind
/// in Helm's install order (kinds Helm does not know after, by name). Whatever orders hooks
/// (the planner, a revision planned again from a manifest helm wrote) sorts by this key.
#[must_use]
pub fn hook_key(weight: i64, name: &str, kind: &str) -> (i64, String, usize, String) {
    let (rank, unknown_kind) = install_rank(kind);
    (weight, name.to_owned(), rank, unknown_kind.to_owned())
}

fn dedup(v: &mut Vec<usize>) {
    v.sort_unstable();
    v.dedup();
}
