//! The install plan (SPEC §2), computed from the model with no I/O.
//!
//! Charts are walked pre-order. At each level: subcharts first, in subchart-DAG batches (each
//! complete, recursively), then the level's resource-group batches (Kahn, batches sorted by
//! name), then its unsequenced resources. Hooks and `crds/` documents are listed apart;
//! documents that hold only comments are no resources and stay out of every step.
//! `plan`, `template`, `lint` and `apply` all read this one result.

pub mod argo;
pub mod detect;
pub mod dialects;
pub mod draft;
pub mod graph;
pub mod kapp;
pub mod kots;
pub mod output;
pub mod wait;
pub mod werf;

use std::collections::{BTreeMap, BTreeSet};

use crate::model::annotations::{ListError, NameList, Spanned};
use crate::model::kinds::install_rank;
use crate::model::{ChartId, Content, DocId, Model, Placement, ResourceId};
use crate::source::Loc;
use graph::DepGraph;
pub use wait::{External, ExternalType, Wait};

/// Subcharts with the subcharts each waits for (effective names).
type Deps = BTreeMap<String, Vec<String>>;

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

/// The plan could not be made; every reason found.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanError {
    pub issues: Vec<PlanIssue>,
}

/// Whose ordering a plan follows (`--dialect`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Dialect {
    /// HIP-0025: resource groups and subcharts per chart level.
    #[default]
    Hip,
    /// Argo CD: sync phases and waves across the whole release.
    Argo,
    /// werf/nelm: stages and weights across the whole release.
    Werf,
    /// kapp: change groups and rules across the whole release.
    Kapp,
    /// Replicated KOTS: creation phases across the whole release.
    Kots,
    /// The draft HIP before HIP-0025: layers and weights per chart level.
    Draft,
}

impl Dialect {
    /// Every dialect, HIP-0025 first.
    pub const ALL: [Dialect; 6] = [
        Dialect::Hip,
        Dialect::Argo,
        Dialect::Werf,
        Dialect::Kapp,
        Dialect::Kots,
        Dialect::Draft,
    ];

    /// The dialect of a [`Dialect::name`] (as a release record stores it).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|d| d.name() == name)
    }

    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Hip => "hip",
            Dialect::Argo => "argo",
            Dialect::Werf => "werf",
            Dialect::Kapp => "kapp",
            Dialect::Kots => "kots",
            Dialect::Draft => "draft",
        }
    }

    /// What the dialect orders by, for a command's help (`--dialect`, `migrate --from`).
    #[must_use]
    pub fn summary(self) -> &'static str {
        match self {
            Dialect::Hip => "HIP-0025 resource groups and subcharts",
            Dialect::Argo => "Argo CD sync phases, waves and hooks",
            Dialect::Werf => "werf/nelm stages, weights and dependencies",
            Dialect::Kapp => "kapp change groups and change rules",
            Dialect::Kots => "KOTS creation phases and waits",
            Dialect::Draft => "The draft sequencing HIP's layers and weights",
        }
    }

    /// The tool as a sentence names it: [`Dialect::tool`], with an article where it needs
    /// one ("the draft HIP").
    #[must_use]
    pub fn named(self) -> &'static str {
        match self {
            Dialect::Draft => "the draft HIP",
            other => other.tool(),
        }
    }

    /// The tool whose order the dialect is.
    #[must_use]
    pub fn tool(self) -> &'static str {
        match self {
            Dialect::Hip => "Helm",
            Dialect::Argo => "Argo CD",
            Dialect::Werf => "werf",
            Dialect::Kapp => "kapp",
            Dialect::Kots => "KOTS",
            Dialect::Draft => "draft HIP",
        }
    }

    /// Whether the dialect's steps span the whole release rather than one chart level.
    #[must_use]
    pub fn release_wide(self) -> bool {
        !matches!(self, Dialect::Hip | Dialect::Draft)
    }

    /// Whether the dialect's tool ignores `helm.sh/hook` and applies Helm hooks as ordinary
    /// resources (kapp).
    #[must_use]
    pub fn hooks_are_resources(self) -> bool {
        self == Dialect::Kapp
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
    /// The uninstall order (SPEC §2), the exact reverse of install: steps reversed, the
    /// resources inside each step reversed, and every edge turned around, so that `after`
    /// (indices into the returned list) names the steps that must be gone first — those that
    /// waited for this one at install.
    #[must_use]
    pub fn uninstall_steps(&self) -> Vec<Step> {
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
    match dialect {
        Dialect::Hip => plan(model),
        Dialect::Argo => argo::plan(model),
        Dialect::Werf => werf::plan(model),
        Dialect::Kots => kots::plan(model),
        Dialect::Draft => draft::plan(model),
        Dialect::Kapp => kapp::plan(model),
    }
}

/// Computes the plan; fails with every fatal issue found.
pub fn plan(model: &Model) -> Result<Plan, PlanError> {
    let (plan, issues) = analyze(model);
    if issues.is_empty() {
        Ok(plan)
    } else {
        Err(PlanError { issues })
    }
}

/// The plan as far as it can be made, and the fatal issues. Lint reads both.
#[must_use]
pub fn analyze(model: &Model) -> (Plan, Vec<PlanIssue>) {
    analyze_with(model, None)
}

/// Groups read from another dialect's annotations instead of HIP-0025's (the draft HIP's
/// layers and weights), planned with HIP-0025's per-level algorithm.
pub(crate) struct GroupsFrom<'m> {
    /// Each planned document's group and prerequisites; a document not listed has none.
    pub sequencing: &'m BTreeMap<DocId, crate::model::annotations::Sequencing>,
    /// A group with no edges stays a group (HIP-0025 demotes it when its level has two or
    /// more groups).
    pub keep_isolated: bool,
}

/// [`analyze`], reading the groups from `from` when given.
pub(crate) fn analyze_with(model: &Model, from: Option<GroupsFrom<'_>>) -> (Plan, Vec<PlanIssue>) {
    let mut planner = Planner {
        model,
        plan: Plan::default(),
        issues: Vec::new(),
        docs_by_chart: BTreeMap::new(),
        from,
    };
    for (id, doc) in model.documents.iter().enumerate() {
        match &doc.content {
            Content::Empty => planner.plan.comments.push(id),
            Content::Resource(r) if r.hook.is_some() => planner.plan.hooks.push(id),
            _ if doc.placement == Placement::Crd => planner.plan.crds.push(id),
            _ => planner.docs_by_chart.entry(doc.chart).or_default().push(id),
        }
    }
    sort_hooks(model, &mut planner.plan.hooks);
    if !model.charts.is_empty() {
        planner.walk(0, 0, &[]);
    }
    (planner.plan, planner.issues)
}

struct Planner<'m> {
    model: &'m Model,
    plan: Plan,
    issues: Vec<PlanIssue>,
    docs_by_chart: BTreeMap<ChartId, Vec<DocId>>,
    from: Option<GroupsFrom<'m>>,
}

/// No group, no prerequisites.
static UNSEQUENCED: crate::model::annotations::Sequencing = crate::model::annotations::Sequencing {
    group: None,
    depends_on: None,
    depends_on_one_slash: false,
    depends_on_also: None,
    readiness_success: None,
    readiness_failure: None,
};

/// A group at one level while it is being planned.
#[derive(Default)]
struct GroupState {
    /// Prerequisite groups, first-seen order, unique.
    deps: Vec<String>,
    /// Where each prerequisite is declared (first resource that names it).
    dep_locs: BTreeMap<String, Loc>,
    members: Vec<DocId>,
}

impl Planner<'_> {
    /// Plans one level and its subtree; returns every step index of the subtree.
    fn walk(&mut self, chart: ChartId, depth: usize, inherited: &[usize]) -> Vec<usize> {
        let level_index = self.plan.levels.len();
        self.plan.levels.push(Level {
            chart,
            depth,
            subchart_batches: Vec::new(),
            undeclared: Vec::new(),
            group_batches: Vec::new(),
            unsequenced: Vec::new(),
        });
        let mut subtree = Vec::new();

        // Subcharts.
        let (batches, undeclared, sub_deps) = self.subchart_batches(chart);
        let children: BTreeMap<String, ChartId> = self.model.charts[chart]
            .children
            .iter()
            .filter(|&&c| self.model.charts[c].enabled)
            .map(|&c| (self.model.charts[c].name.clone(), c))
            .collect();
        // Terminal steps of each subchart walked so far: waiting for them means waiting for
        // the whole subchart.
        let mut done: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        let mut sub_terminals: Vec<usize> = Vec::new();
        for name in batches.iter().flatten().chain(&undeclared) {
            let Some(&child) = children.get(name) else {
                continue;
            };
            let mut before = inherited.to_vec();
            if undeclared.contains(name) {
                before.extend(
                    batches
                        .iter()
                        .flatten()
                        .filter_map(|n| done.get(n))
                        .flatten(),
                );
            } else {
                for dep in sub_deps.get(name).into_iter().flatten() {
                    before.extend(done.get(dep).into_iter().flatten());
                }
            }
            dedup(&mut before);
            let steps = self.walk(child, depth + 1, &before);
            let last = self.terminals(&steps);
            subtree.extend(&steps);
            sub_terminals.extend(&last);
            done.insert(name.clone(), last);
        }
        self.plan.levels[level_index].subchart_batches = batches;
        self.plan.levels[level_index].undeclared = undeclared;

        // This level's own resources.
        let mut barrier = inherited.to_vec();
        barrier.extend(&sub_terminals);
        dedup(&mut barrier);
        let docs = self.docs_by_chart.get(&chart).cloned().unwrap_or_default();
        let own = self.plan_groups(chart, level_index, &docs, &barrier);
        subtree.extend(own);
        subtree
    }

    /// The steps among `steps` that no other step among them waits for.
    fn terminals(&self, steps: &[usize]) -> Vec<usize> {
        let waited: BTreeSet<usize> = steps
            .iter()
            .flat_map(|&s| self.plan.steps[s].after.iter().copied())
            .collect();
        steps
            .iter()
            .copied()
            .filter(|s| !waited.contains(s))
            .collect()
    }

    /// Declared subchart batches and undeclared subcharts of a level (validating references).
    fn subchart_batches(&mut self, chart: ChartId) -> (Vec<Vec<String>>, Vec<String>, Deps) {
        let model = self.model;
        let c = &model.charts[chart];
        let enabled: Vec<&crate::model::Chart> = c
            .children
            .iter()
            .map(|&i| &model.charts[i])
            .filter(|ch| ch.enabled)
            .collect();
        let undeclared: Vec<String> = {
            let mut u: Vec<String> = enabled
                .iter()
                .filter(|ch| !ch.declared)
                .map(|ch| ch.name.clone())
                .collect();
            u.sort();
            u
        };
        let Some(info) = &c.info else {
            // Only known from `# Source:` paths: no depends-on can be read, name order.
            let mut names: Vec<String> = enabled.iter().map(|ch| ch.name.clone()).collect();
            names.sort();
            return (
                if names.is_empty() {
                    Vec::new()
                } else {
                    vec![names]
                },
                Vec::new(),
                Deps::new(),
            );
        };
        let deps = self.subchart_deps(chart);
        if let Some(list) = &info.depends_on_subcharts {
            self.resolve_refs(chart, list);
        }
        // Each edge is labelled with the first `depends-on` list of the dependent subchart.
        let mut declared_at: BTreeMap<&str, Loc> = BTreeMap::new();
        for (name, list) in &info.dependency_depends_on {
            declared_at.entry(name.as_str()).or_insert(list.loc);
        }
        let whole_file = Loc {
            file: info.meta.file,
            span: info.meta.node.span,
        };
        let mut graph = DepGraph::new(deps.keys().cloned());
        for (name, targets) in &deps {
            let loc = declared_at
                .get(name.as_str())
                .copied()
                .unwrap_or(whole_file);
            for target in targets {
                graph.depend(name, target, loc);
            }
        }
        match graph.batches() {
            Ok(batches) => (batches, undeclared, deps),
            Err(cycles) => {
                for graph::Cycle { path, edges } in cycles {
                    self.issues
                        .push(PlanIssue::SubchartCycle { chart, path, edges });
                }
                let names: Vec<String> = deps.keys().cloned().collect();
                (vec![names], undeclared, Deps::new())
            }
        }
    }

    /// Resolved `depends-on` edges between the declared, enabled subcharts of a level.
    fn subchart_deps(&mut self, chart: ChartId) -> Deps {
        let model = self.model;
        let c = &model.charts[chart];
        let Some(info) = &c.info else {
            return Deps::new();
        };
        let mut deps: Deps = c
            .children
            .iter()
            .map(|&i| &model.charts[i])
            .filter(|ch| ch.enabled && ch.declared)
            .map(|ch| (ch.name.clone(), Vec::new()))
            .collect();
        let mut issues = Vec::new();
        for (name, list) in &info.dependency_depends_on {
            if !deps.contains_key(name) {
                continue;
            }
            for target in self.resolve_list(chart, list, &mut issues) {
                deps.get_mut(name).expect("checked above").push(target);
            }
        }
        self.issues.extend(issues);
        deps
    }

    fn resolve_refs(&mut self, chart: ChartId, list: &Spanned<NameList>) {
        let mut issues = Vec::new();
        self.resolve_list(chart, list, &mut issues);
        self.issues.extend(issues);
    }

    /// Resolves names or aliases to effective subchart names.
    fn resolve_list(
        &self,
        chart: ChartId,
        list: &Spanned<NameList>,
        issues: &mut Vec<PlanIssue>,
    ) -> Vec<String> {
        let model = self.model;
        let names = match &list.value {
            Ok(names) => names,
            Err(error) => {
                issues.push(PlanIssue::MalformedSubchartList {
                    chart,
                    error: error.clone(),
                    loc: list.loc,
                });
                return Vec::new();
            }
        };
        let declared: Vec<&crate::model::Chart> = model.charts[chart]
            .children
            .iter()
            .map(|&i| &model.charts[i])
            .filter(|ch| ch.declared)
            .collect();
        let mut out = Vec::new();
        for reference in names {
            let matches: BTreeSet<&str> = declared
                .iter()
                .filter(|ch| {
                    ch.name == *reference
                        || ch
                            .info
                            .as_ref()
                            .and_then(|i| i.dependency.as_ref())
                            .is_some_and(|d| d.name == *reference)
                })
                .map(|ch| ch.name.as_str())
                .collect();
            match matches.len() {
                0 => issues.push(PlanIssue::UnknownSubchart {
                    chart,
                    reference: reference.clone(),
                    loc: list.loc,
                    disabled: false,
                }),
                1 => {
                    let target = *matches.iter().next().expect("one match");
                    let enabled = declared.iter().any(|ch| ch.name == target && ch.enabled);
                    if enabled {
                        out.push(target.to_owned());
                    } else {
                        issues.push(PlanIssue::UnknownSubchart {
                            chart,
                            reference: reference.clone(),
                            loc: list.loc,
                            disabled: true,
                        });
                    }
                }
                _ => issues.push(PlanIssue::AmbiguousSubchart {
                    chart,
                    reference: reference.clone(),
                    matches: matches.iter().map(|s| (*s).to_owned()).collect(),
                    loc: list.loc,
                }),
            }
        }
        out
    }

    /// Groups, batches and the unsequenced step of one level; returns the new step indices.
    fn plan_groups(
        &mut self,
        chart: ChartId,
        level_index: usize,
        docs: &[DocId],
        barrier: &[usize],
    ) -> Vec<usize> {
        let model = self.model;
        let mut never_grouped: Vec<DocId> = Vec::new();
        let mut groups: BTreeMap<String, GroupState> = BTreeMap::new();
        // Lookups only, never iterated: a hash map keeps this linear on large levels.
        let mut assigned: std::collections::HashMap<&ResourceId, Spanned<String>> =
            std::collections::HashMap::new();
        for &doc in docs {
            let Some(resource) = model.resource(doc) else {
                never_grouped.push(doc);
                continue;
            };
            let seq = match &self.from {
                Some(from) => from.sequencing.get(&doc).unwrap_or(&UNSEQUENCED),
                None => &resource.seq,
            };
            let Some(group) = &seq.group else {
                never_grouped.push(doc);
                continue;
            };
            match assigned.get(&resource.id) {
                Some(first) if first.value != group.value => {
                    self.issues.push(PlanIssue::TwoGroups {
                        chart,
                        id: resource.id.clone(),
                        first: first.clone(),
                        second: group.clone(),
                    });
                }
                Some(_) => {}
                None => {
                    assigned.insert(&resource.id, group.clone());
                }
            }
            let deps = match &seq.depends_on {
                None => Vec::new(),
                Some(Spanned {
                    value: Ok(names),
                    loc,
                }) => names.iter().map(|n| (n.clone(), *loc)).collect(),
                Some(Spanned { value: Err(_), .. }) => {
                    self.plan
                        .demotions
                        .push(Demotion::MalformedDependsOn { doc });
                    never_grouped.push(doc);
                    continue;
                }
            };
            let state = groups.entry(group.value.clone()).or_default();
            state.members.push(doc);
            for (dep, loc) in deps {
                // `dep_locs` doubles as the set of prerequisites already seen.
                if !state.dep_locs.contains_key(&dep) {
                    state.deps.push(dep.clone());
                    state.dep_locs.insert(dep, loc);
                }
            }
        }

        // Demote groups that depend on a missing group, and, transitively, the groups that
        // depend on a demoted one (the fixed point, reached in one pass over the dependents).
        let mut demoted: BTreeMap<String, GroupState> = BTreeMap::new();
        let mut dependents: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (name, g) in &groups {
            for dep in &g.deps {
                dependents
                    .entry(dep.as_str())
                    .or_default()
                    .push(name.as_str());
            }
        }
        let mut queue: std::collections::VecDeque<(String, String)> = groups
            .iter()
            .filter_map(|(name, g)| {
                let missing = g.deps.iter().find(|d| !groups.contains_key(*d))?;
                Some((name.clone(), missing.clone()))
            })
            .collect();
        let mut doomed: BTreeSet<String> = queue.iter().map(|(n, _)| n.clone()).collect();
        let mut order = Vec::new();
        while let Some((name, missing)) = queue.pop_front() {
            for &dependent in dependents.get(name.as_str()).into_iter().flatten() {
                if doomed.insert(dependent.to_owned()) {
                    queue.push_back((dependent.to_owned(), name.clone()));
                }
            }
            order.push((name, missing));
        }
        for (name, missing) in order {
            let Some(state) = groups.remove(&name) else {
                continue;
            };
            let loc = state.dep_locs[&missing];
            self.plan.demotions.push(Demotion::MissingGroup {
                chart,
                group: name.clone(),
                missing,
                loc,
            });
            demoted.insert(name, state);
        }
        // Isolated groups, only when the level has two or more.
        let keep_isolated = self.from.as_ref().is_some_and(|f| f.keep_isolated);
        if groups.len() >= 2 && !keep_isolated {
            let depended: BTreeSet<String> = groups
                .values()
                .flat_map(|g| g.deps.iter().cloned())
                .collect();
            let isolated: Vec<String> = groups
                .iter()
                .filter(|(n, g)| g.deps.is_empty() && !depended.contains(*n))
                .map(|(n, _)| n.clone())
                .collect();
            for name in isolated {
                let dropped = demoted
                    .iter()
                    .filter(|(_, g)| g.deps.contains(&name))
                    .map(|(n, _)| n.clone())
                    .collect();
                self.plan.demotions.push(Demotion::Isolated {
                    chart,
                    group: name.clone(),
                    dropped,
                });
                let state = groups.remove(&name).expect("listed above");
                demoted.insert(name, state);
            }
        }

        // Every prerequisite left is a group of the level (the demotions above removed the
        // rest); each edge is labelled where its first resource declares it.
        let mut graph = DepGraph::new(groups.keys().cloned());
        for (name, g) in &groups {
            for (dep, loc) in &g.dep_locs {
                graph.depend(name, dep, *loc);
            }
        }
        let batches = match graph.batches() {
            Ok(batches) => batches,
            Err(cycles) => {
                for graph::Cycle { path, edges } in cycles {
                    self.issues
                        .push(PlanIssue::GroupCycle { chart, path, edges });
                }
                Vec::new()
            }
        };

        let mut new_steps = Vec::new();
        let mut step_of: BTreeMap<String, usize> = BTreeMap::new();
        let mut has_dependents: BTreeSet<String> = BTreeSet::new();
        for batch in &batches {
            for name in batch {
                let state = &groups[name];
                let mut after: Vec<usize> = state
                    .deps
                    .iter()
                    .filter_map(|d| step_of.get(d).copied())
                    .collect();
                if state.deps.is_empty() {
                    after.extend(barrier);
                }
                has_dependents.extend(state.deps.iter().cloned());
                let index = self.push_step(chart, Some(name.clone()), state.members.clone(), after);
                step_of.insert(name.clone(), index);
                new_steps.push(index);
            }
        }

        let mut unsequenced = sorted_by_kind(model, never_grouped);
        for state in demoted.values() {
            unsequenced.extend(sorted_by_kind(model, state.members.clone()));
        }
        if !unsequenced.is_empty() {
            let mut after: Vec<usize> = step_of
                .iter()
                .filter(|(n, _)| !has_dependents.contains(*n))
                .map(|(_, &s)| s)
                .collect();
            if after.is_empty() {
                after.extend(barrier);
            }
            let index = self.push_step(chart, None, unsequenced.clone(), after);
            new_steps.push(index);
        }
        let level = &mut self.plan.levels[level_index];
        level.group_batches = batches;
        level.unsequenced = unsequenced;
        new_steps
    }

    fn push_step(
        &mut self,
        chart: ChartId,
        group: Option<String>,
        resources: Vec<DocId>,
        mut after: Vec<usize>,
    ) -> usize {
        let resources = if group.is_some() {
            sorted_by_kind(self.model, resources)
        } else {
            resources
        };
        dedup(&mut after);
        self.plan.steps.push(Step {
            chart,
            group,
            resources,
            after,
        });
        self.plan.steps.len() - 1
    }
}

/// Helm's hook order: `SortManifests` collects hooks file by file in path order and sorts
/// them stably by kind (`InstallOrder`), then `execHook` sorts them stably by weight, then
/// name. So: weight, name, kind, template path, input order.
fn sort_hooks(model: &Model, hooks: &mut [DocId]) {
    hooks.sort_by_cached_key(|&d| {
        let r = model.resource(d).expect("hooks are resources");
        (
            hook_key(
                r.hook.as_ref().map_or(0, |h| h.weight),
                &r.id.name,
                &r.id.kind,
            ),
            model.documents[d].source_path.clone(),
            d,
        )
    });
}

/// The part of Helm's hook order that a hook's own fields decide: weight, then name, then kind
/// in Helm's install order (kinds Helm does not know after, by name). Whatever orders hooks
/// (the planner, a revision planned again from a manifest helm wrote) sorts by this key.
#[must_use]
pub fn hook_key(weight: i64, name: &str, kind: &str) -> (i64, String, usize, String) {
    let (rank, unknown_kind) = install_rank(kind);
    (weight, name.to_owned(), rank, unknown_kind.to_owned())
}

/// Helm's kind order, then input order (stable).
fn sorted_by_kind(model: &Model, mut docs: Vec<DocId>) -> Vec<DocId> {
    docs.sort_by(|a, b| {
        // Documents that are not objects (invalid YAML, a scalar) go last, in input order.
        let kind = |d: &DocId| {
            model
                .resource(*d)
                .map_or((usize::MAX, ""), |r| install_rank(&r.id.kind))
        };
        kind(a).cmp(&kind(b)).then(a.cmp(b))
    });
    docs
}

fn dedup(v: &mut Vec<usize>) {
    v.sort_unstable();
    v.dedup();
}
