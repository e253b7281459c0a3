//! HIP-0025's planner (SPEC §2): per chart level, resource groups ordered by their
//! `depends-on` DAG into steps on the one step graph, subcharts before their parents as their
//! `depends-on` orders them, hooks in Helm's order around them, and what cannot be sequenced
//! demoted to the level's unsequenced batch with the reason. The draft HIP plans with the same
//! algorithm, its groups read from its own keys ([`GroupsFrom`]).

use std::collections::{BTreeMap, BTreeSet};

use super::graph::{self, DepGraph};
use super::{Demotion, Level, Plan, PlanError, PlanIssue, Step, dedup, hook_key};
use crate::model::annotations::{NameList, Spanned};
use crate::model::kinds::install_rank;
use crate::model::{ChartId, Content, DocId, Model, Placement, ResourceId};
use crate::source::Loc;

/// Subcharts with the subcharts each waits for (effective names).
type Deps = BTreeMap<String, Vec<String>>;

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
                .filter(|ch| ch.answers_to(reference))
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
