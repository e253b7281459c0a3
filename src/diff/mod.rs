//! `chartseq diff` (SPEC §6): what changes between two plans of a chart — resources added
//! and removed, resources that moved to another chart level, group or step, ordering
//! constraints gained and lost, waits that changed, lint findings new and fixed.
//!
//! Pure: two models with their lint reports in, a [`Diff`] out; the reports in [`output`]
//! render it. Order is compared as the plans order resources — "A is complete before B
//! starts", transitively, through each plan's step graph — never as text. Resources are
//! matched by identity (API group, kind, namespace, name).
//!
//! NOTE: the order comparison works on *cells*, the resources that share both their old and
//! their new step; a pair of cells is one pair of reachability queries however many resources
//! the cells hold, and no transitive closure is ever built. When the cells pair the steps one
//! to one (the usual edit), only orders ending at a step whose ancestors may have changed are
//! queried — none at all when the graphs are the same; otherwise every pair of cells is.

pub mod output;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use crate::lint::{Finding, Report, ResourceRef};
use crate::model::{DocId, Model, ResourceId};
use crate::plan::graph::StepGraph;
use crate::plan::{self, Plan};

/// Where a resource is installed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Place {
    /// Display path of the chart level (`parent/sub`).
    pub chart: String,
    /// The step's group; `None` for a level's unsequenced step (or a phase without groups).
    pub group: Option<String>,
    pub phase: Phase,
}

/// The phase of the release a resource belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// `crds/`, applied first.
    Crds,
    /// A hook, run around the plan.
    Hook,
    /// A step of the plan.
    Step,
    /// In no step: the plan of its chart level could not be made (a cycle, a resource in
    /// two groups).
    Unplanned,
}

impl Phase {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Crds => "crds",
            Phase::Hook => "hook",
            Phase::Step => "step",
            Phase::Unplanned => "unplanned",
        }
    }
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.phase, &self.group) {
            (Phase::Crds, _) => write!(f, "CRDs ({})", self.chart),
            (Phase::Hook, _) => write!(f, "hooks ({})", self.chart),
            (Phase::Step, Some(g)) => write!(f, "group {g} ({})", self.chart),
            (Phase::Step, None) => write!(f, "unsequenced ({})", self.chart),
            (Phase::Unplanned, Some(g)) => write!(f, "group {g} ({}, no plan)", self.chart),
            (Phase::Unplanned, None) => write!(f, "no plan ({})", self.chart),
        }
    }
}

/// How a resource's step waits for it (SPEC §3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wait {
    /// kstatus, Helm's default.
    Kstatus,
    /// HIP-0025 custom readiness: both annotations present and non-empty.
    Custom {
        success: Vec<String>,
        failure: Vec<String>,
    },
}

impl std::fmt::Display for Wait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Wait::Kstatus => f.write_str("kstatus"),
            Wait::Custom { success, failure } => write!(
                f,
                "custom (success: {}; failure: {})",
                success.join(", "),
                failure.join(", ")
            ),
        }
    }
}

/// A resource and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Located {
    pub resource: ResourceRef,
    pub place: Place,
}

/// A resource installed somewhere else.
#[derive(Clone, Debug, PartialEq)]
pub struct Moved {
    pub resource: ResourceRef,
    pub from: Place,
    pub to: Place,
}

/// Ordering constraints that changed: every resource of `before` is complete before every
/// resource of `after` starts in one plan and not in the other. The places are those of the
/// plan that has the order (the new one for a gained order, the old one for a lost order).
///
/// `before` and `after` are each a *cell*: the resources that share both their old and their
/// new step. A cell takes part in many changes, so its list is shared, never copied, and
/// `before_cell` / `after_cell` name it (the same number for the same cell across changes).
#[derive(Clone, Debug, PartialEq)]
pub struct OrderChange {
    pub before: Arc<[ResourceRef]>,
    pub after: Arc<[ResourceRef]>,
    pub before_place: Place,
    pub after_place: Place,
    pub before_cell: usize,
    pub after_cell: usize,
}

impl OrderChange {
    /// Every (before, after) pair.
    pub fn pairs(&self) -> impl Iterator<Item = (&ResourceRef, &ResourceRef)> {
        self.before
            .iter()
            .flat_map(|b| self.after.iter().map(move |a| (b, a)))
    }

    #[must_use]
    pub fn pair_count(&self) -> usize {
        self.before.len() * self.after.len()
    }
}

/// A resource whose wait changed.
#[derive(Clone, Debug, PartialEq)]
pub struct WaitChange {
    pub resource: ResourceRef,
    /// Where it is in the new plan.
    pub place: Place,
    pub from: Wait,
    pub to: Wait,
}

/// Everything that differs between two plans.
#[derive(Clone, Debug, Default)]
pub struct Diff {
    pub added: Vec<Located>,
    pub removed: Vec<Located>,
    pub moved: Vec<Moved>,
    pub gained: Vec<OrderChange>,
    pub lost: Vec<OrderChange>,
    pub waits: Vec<WaitChange>,
    /// Findings of the new side that the old side does not have.
    pub new_findings: Vec<Finding>,
    /// Findings of the old side that the new side no longer has.
    pub fixed_findings: Vec<Finding>,
    /// Whether each side has a whole plan (no cycle or other fatal issue).
    pub old_planned: bool,
    pub new_planned: bool,
    /// The new plan's direct step edges, as (prerequisite place, step place), for drawings.
    pub new_edges: Vec<(Place, Place)>,
}

impl Diff {
    /// Whether the two sides are the same in every respect the diff reports.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.moved.is_empty()
            && self.gained.is_empty()
            && self.lost.is_empty()
            && self.waits.is_empty()
            && self.new_findings.is_empty()
            && self.fixed_findings.is_empty()
            && self.old_planned == self.new_planned
    }

    #[must_use]
    pub fn gained_pairs(&self) -> usize {
        self.gained.iter().map(OrderChange::pair_count).sum()
    }

    #[must_use]
    pub fn lost_pairs(&self) -> usize {
        self.lost.iter().map(OrderChange::pair_count).sum()
    }
}

/// One side, read from its model and plan.
struct Side {
    /// Resources by identity (the first document of an identity wins).
    resources: BTreeMap<ResourceId, Entry>,
    /// The place of each step.
    step_places: Vec<Place>,
    graph: StepGraph,
    steps_after: Vec<Vec<usize>>,
    planned: bool,
}

struct Entry {
    resource: ResourceRef,
    place: Place,
    step: Option<usize>,
    wait: Wait,
}

fn resource_ref(model: &Model, doc: DocId) -> Option<ResourceRef> {
    let r = model.resource(doc)?;
    Some(ResourceRef {
        api_version: r.api_version.clone(),
        kind: r.id.kind.clone(),
        namespace: r.id.namespace.clone(),
        name: r.id.name.clone(),
    })
}

/// The wait of a resource as a sequenced install judges it: HIP-0025's, as the planner decides
/// it ([`crate::plan::wait::hip`]); a hook's run to completion shows as kstatus, and so does
/// readiness that cannot be used (lint reports it; `apply` stops there).
fn wait_of(model: &Model, doc: DocId) -> Wait {
    let texts = |list: &[crate::readiness::expr::Expression]| {
        list.iter().map(|e| e.text().to_owned()).collect()
    };
    match model.resource(doc).map(crate::plan::wait::hip) {
        Some(crate::plan::Wait::Custom(custom)) => Wait::Custom {
            success: texts(custom.success()),
            failure: texts(custom.failure()),
        },
        _ => Wait::Kstatus,
    }
}

impl Side {
    fn read(model: &Model) -> Self {
        let (plan, issues): (Plan, _) = plan::analyze(model);
        let chart_of = |doc: DocId| model.charts[model.documents[doc].chart].display.clone();
        let mut resources: BTreeMap<ResourceId, Entry> = BTreeMap::new();
        let mut add = |doc: DocId, place: Place, step: Option<usize>| {
            let (Some(r), Some(resource)) = (model.resource(doc), resource_ref(model, doc)) else {
                return;
            };
            resources.entry(r.id.clone()).or_insert_with(|| Entry {
                resource,
                place,
                step,
                wait: wait_of(model, doc),
            });
        };
        let mut step_places = Vec::with_capacity(plan.steps.len());
        for (i, step) in plan.steps.iter().enumerate() {
            let place = Place {
                chart: model.charts[step.chart].display.clone(),
                group: step.group.clone(),
                phase: Phase::Step,
            };
            for &doc in &step.resources {
                add(doc, place.clone(), Some(i));
            }
            step_places.push(place);
        }
        for &doc in &plan.crds {
            add(
                doc,
                Place {
                    chart: chart_of(doc),
                    group: None,
                    phase: Phase::Crds,
                },
                None,
            );
        }
        for &doc in &plan.hooks {
            add(
                doc,
                Place {
                    chart: chart_of(doc),
                    group: None,
                    phase: Phase::Hook,
                },
                None,
            );
        }
        // What the plan could not place (a level whose groups form a cycle).
        for doc in model.planned_documents() {
            let group = model
                .resource(doc)
                .and_then(|r| r.seq.group.as_ref())
                .map(|g| g.value.clone());
            add(
                doc,
                Place {
                    chart: chart_of(doc),
                    group,
                    phase: Phase::Unplanned,
                },
                None,
            );
        }
        Side {
            resources,
            step_places,
            graph: StepGraph::new(&plan.steps),
            steps_after: plan.steps.iter().map(|s| s.after.clone()).collect(),
            planned: issues.is_empty(),
        }
    }
}

/// A finding's identity across the two sides: rule, resource and message (never its line,
/// which moves with every edit above it).
type FindingKey = (
    &'static str,
    Option<(String, Option<String>, String)>,
    String,
);

fn finding_key(f: &Finding) -> FindingKey {
    (
        f.code,
        f.resource
            .as_ref()
            .map(|r| (r.kind.clone(), r.namespace.clone(), r.name.clone())),
        f.message.clone(),
    )
}

/// The findings of `a` that `b` does not have, counted with their repetitions.
fn findings_only_in(a: &Report, b: &Report) -> Vec<Finding> {
    let mut remaining: HashMap<FindingKey, usize> = HashMap::new();
    for f in &b.findings {
        *remaining.entry(finding_key(f)).or_default() += 1;
    }
    a.findings
        .iter()
        .filter(|f| match remaining.get_mut(&finding_key(f)) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .cloned()
        .collect()
}

/// Compares two sides: each a model with its lint report.
#[must_use]
pub fn diff(old: &Model, old_report: &Report, new: &Model, new_report: &Report) -> Diff {
    let a = Side::read(old);
    let b = Side::read(new);
    let mut d = Diff {
        old_planned: a.planned,
        new_planned: b.planned,
        ..Diff::default()
    };
    for (id, e) in &b.resources {
        if !a.resources.contains_key(id) {
            d.added.push(Located {
                resource: e.resource.clone(),
                place: e.place.clone(),
            });
        }
    }
    for (id, e) in &a.resources {
        match b.resources.get(id) {
            None => d.removed.push(Located {
                resource: e.resource.clone(),
                place: e.place.clone(),
            }),
            Some(n) => {
                if e.place != n.place {
                    d.moved.push(Moved {
                        resource: n.resource.clone(),
                        from: e.place.clone(),
                        to: n.place.clone(),
                    });
                }
                if e.wait != n.wait {
                    d.waits.push(WaitChange {
                        resource: n.resource.clone(),
                        place: n.place.clone(),
                        from: e.wait.clone(),
                        to: n.wait.clone(),
                    });
                }
            }
        }
    }
    let (gained, lost) = order_changes(&a, &b);
    d.gained = gained;
    d.lost = lost;
    d.new_findings = findings_only_in(new_report, old_report);
    d.fixed_findings = findings_only_in(old_report, new_report);
    d.new_edges = b
        .graph
        .edges()
        .into_iter()
        .map(|(before, step)| (b.step_places[before].clone(), b.step_places[step].clone()))
        .collect();
    d
}

/// Resources present in both plans, in a step of each, by (old step, new step).
type Cells<'a> = BTreeMap<(usize, usize), Vec<&'a ResourceId>>;

fn cells<'a>(a: &'a Side, b: &Side) -> Cells<'a> {
    let mut cells: Cells<'a> = BTreeMap::new();
    for (id, e) in &a.resources {
        if let (Some(old), Some(new)) = (e.step, b.resources.get(id).and_then(|n| n.step)) {
            cells.entry((old, new)).or_default().push(id);
        }
    }
    cells
}

/// The old-to-new step mapping when the cells pair the steps one to one (every step of each
/// plan in exactly one cell).
fn bijection(a: &Side, b: &Side, cells: &Cells<'_>) -> Option<Vec<usize>> {
    if a.step_places.len() != b.step_places.len() || cells.len() != a.step_places.len() {
        return None;
    }
    let mut to_new = vec![usize::MAX; a.step_places.len()];
    let mut taken = vec![false; b.step_places.len()];
    for &(old, new) in cells.keys() {
        if to_new[old] != usize::MAX || taken[new] {
            return None;
        }
        to_new[old] = new;
        taken[new] = true;
    }
    Some(to_new)
}

/// Under a one-to-one mapping of the steps, the old steps whose set of ancestors may differ
/// between the plans: those whose direct prerequisites differ, and every step after one of
/// them in either plan. Every other step has the same ancestors on both sides, so no order
/// ending at it changed.
fn unsettled(a: &Side, b: &Side, to_new: &[usize]) -> Vec<bool> {
    let n = to_new.len();
    let mut to_old = vec![0; n];
    for (old, &new) in to_new.iter().enumerate() {
        to_old[new] = old;
    }
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut dirty = vec![false; n];
    let mut stack = Vec::new();
    for old in 0..n {
        let mut mapped: Vec<usize> = a.steps_after[old].iter().map(|&p| to_new[p]).collect();
        mapped.sort_unstable();
        mapped.dedup();
        let mut now = b.steps_after[to_new[old]].clone();
        now.sort_unstable();
        now.dedup();
        if mapped != now {
            dirty[old] = true;
            stack.push(old);
        }
        for &p in &a.steps_after[old] {
            next[p].push(old);
        }
        for &p in &b.steps_after[to_new[old]] {
            next[to_old[p]].push(old);
        }
    }
    while let Some(v) = stack.pop() {
        for &w in &next[v] {
            if !dirty[w] {
                dirty[w] = true;
                stack.push(w);
            }
        }
    }
    dirty
}

fn order_changes(a: &Side, b: &Side) -> (Vec<OrderChange>, Vec<OrderChange>) {
    let cells = cells(a, b);
    let (mut gained, mut lost) = (Vec::new(), Vec::new());
    // Which cells an order may have changed to: with the steps paired one to one, only the
    // unsettled ones (none at all when the graphs are the same); otherwise every cell.
    let dirty = bijection(a, b, &cells).map(|to_new| unsettled(a, b, &to_new));
    let all: Vec<(&(usize, usize), &Vec<&ResourceId>)> = cells.iter().collect();
    // Each cell's resources, made once when a change first names the cell.
    let mut shared: Vec<Option<Arc<[ResourceRef]>>> = vec![None; all.len()];
    let mut refs = |cell: usize| -> Arc<[ResourceRef]> {
        shared[cell]
            .get_or_insert_with(|| {
                all[cell]
                    .1
                    .iter()
                    .filter_map(|id| b.resources.get(*id).map(|e| e.resource.clone()))
                    .collect()
            })
            .clone()
    };
    for (y, &(&(old_y, new_y), _)) in all.iter().enumerate() {
        if dirty.as_ref().is_some_and(|d| !d[old_y]) {
            continue;
        }
        for (x, &(&(old_x, new_x), _)) in all.iter().enumerate() {
            if x == y {
                continue;
            }
            let was = a.graph.before(old_x, old_y);
            let is = b.graph.before(new_x, new_y);
            if was == is {
                continue;
            }
            let (side, bx, by) = if is {
                (b, new_x, new_y)
            } else {
                (a, old_x, old_y)
            };
            let change = OrderChange {
                before: refs(x),
                after: refs(y),
                before_place: side.step_places[bx].clone(),
                after_place: side.step_places[by].clone(),
                before_cell: x,
                after_cell: y,
            };
            if is {
                gained.push(change);
            } else {
                lost.push(change);
            }
        }
    }
    let key = |c: &OrderChange| (c.before_place.clone(), c.after_place.clone());
    gained.sort_by_key(key);
    lost.sort_by_key(key);
    (gained, lost)
}

/// The set of places a diff touches, for drawings of its changed part.
#[must_use]
pub fn touched_places(d: &Diff) -> BTreeSet<Place> {
    let mut places = BTreeSet::new();
    places.extend(d.added.iter().map(|l| l.place.clone()));
    places.extend(d.removed.iter().map(|l| l.place.clone()));
    for m in &d.moved {
        places.insert(m.from.clone());
        places.insert(m.to.clone());
    }
    for c in d.gained.iter().chain(&d.lost) {
        places.insert(c.before_place.clone());
        places.insert(c.after_place.clone());
    }
    places.extend(d.waits.iter().map(|w| w.place.clone()));
    places
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Step;

    /// A side whose steps have these prerequisites; resource `ids[i]` is in step `at[i]`.
    fn side(after: &[Vec<usize>], ids: &[ResourceId], at: &[usize]) -> Side {
        let steps: Vec<Step> = after
            .iter()
            .map(|a| Step {
                chart: 0,
                group: None,
                resources: Vec::new(),
                after: a.clone(),
            })
            .collect();
        let resources = ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                (
                    id.clone(),
                    Entry {
                        resource: ResourceRef {
                            api_version: "v1".into(),
                            kind: id.kind.clone(),
                            namespace: None,
                            name: id.name.clone(),
                        },
                        place: Place {
                            chart: "c".into(),
                            group: Some(format!("g{}", at[i])),
                            phase: Phase::Step,
                        },
                        step: Some(at[i]),
                        wait: Wait::Kstatus,
                    },
                )
            })
            .collect();
        Side {
            resources,
            step_places: (0..after.len())
                .map(|i| Place {
                    chart: "c".into(),
                    group: Some(format!("g{i}")),
                    phase: Phase::Step,
                })
                .collect(),
            graph: StepGraph::new(&steps),
            steps_after: after.to_vec(),
            planned: true,
        }
    }

    fn name_of(resource: &serde_json::Value) -> String {
        resource["name"].as_str().expect("a name").to_owned()
    }

    fn closure(after: &[Vec<usize>]) -> Vec<Vec<bool>> {
        let n = after.len();
        let mut c = vec![vec![false; n]; n];
        for (i, a) in after.iter().enumerate() {
            for &p in a {
                c[i][p] = true;
                let inherited = c[p].clone();
                for (q, yes) in inherited.into_iter().enumerate() {
                    c[i][q] |= yes;
                }
            }
        }
        c
    }

    #[test]
    fn order_changes_agree_with_the_transitive_closures() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |m: usize| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) as usize % m
        };
        let mut truncated = 0;
        for round in 0..40 {
            let n = 3 + round % 12;
            // One resource per step; every other round one more, in the first step of the old
            // plan and the last of the new, so that the steps no longer pair one to one.
            let extra = usize::from(round % 2 == 1);
            let ids: Vec<ResourceId> = (0..n + extra)
                .map(|i| ResourceId {
                    group: String::new(),
                    kind: "ConfigMap".into(),
                    namespace: None,
                    name: format!("r{i:02}"),
                })
                .collect();
            let old: Vec<Vec<usize>> = (0..n)
                .map(|i| {
                    let mut a: Vec<usize> =
                        (0..next(3)).filter(|_| i > 0).map(|_| next(i)).collect();
                    a.sort_unstable();
                    a.dedup();
                    a
                })
                .collect();
            // One edit: an edge added or removed at one step.
            let mut new = old.clone();
            let at = 1 + next(n - 1);
            if new[at].is_empty() || next(2) == 0 {
                new[at].push(next(at));
                new[at].sort_unstable();
                new[at].dedup();
            } else {
                new[at].remove(0);
            }
            let mut old_at: Vec<usize> = (0..n).collect();
            let mut new_at = old_at.clone();
            if extra == 1 {
                old_at.push(0);
                new_at.push(n - 1);
            }
            let (a, b) = (side(&old, &ids, &old_at), side(&new, &ids, &new_at));
            let (gained, lost) = order_changes(&a, &b);
            let pairs = |changes: &[OrderChange]| -> Vec<(String, String)> {
                let mut p: Vec<(String, String)> = changes
                    .iter()
                    .flat_map(|c| c.pairs().map(|(x, y)| (x.name.clone(), y.name.clone())))
                    .collect();
                p.sort();
                p
            };
            let (co, cn) = (closure(&old), closure(&new));
            let mut want_gained = Vec::new();
            let mut want_lost = Vec::new();
            for y in 0..ids.len() {
                for x in 0..ids.len() {
                    let (was, is) = (co[old_at[y]][old_at[x]], cn[new_at[y]][new_at[x]]);
                    let pair = (format!("r{x:02}"), format!("r{y:02}"));
                    if is && !was {
                        want_gained.push(pair);
                    } else if was && !is {
                        want_lost.push(pair);
                    }
                }
            }
            want_gained.sort();
            want_lost.sort();
            assert_eq!(pairs(&gained), want_gained, "{old:?} -> {new:?}");
            assert_eq!(pairs(&lost), want_lost, "{old:?} -> {new:?}");
            // The counts the formats print, and the JSON's bounded description, agree with
            // the closures too.
            let diff = Diff {
                gained,
                lost,
                ..Diff::default()
            };
            assert_eq!(diff.gained_pairs(), want_gained.len());
            assert_eq!(diff.lost_pairs(), want_lost.len());
            let cap = round % 4;
            let mut json = Vec::new();
            output::json::write_capped(&mut json, &diff, cap).expect("written");
            let json: serde_json::Value = serde_json::from_slice(&json).expect("JSON");
            let order = &json["order"];
            for (key, want) in [("gained", &want_gained), ("lost", &want_lost)] {
                let listed: Vec<(String, String)> = order[key]
                    .as_array()
                    .expect("pairs")
                    .iter()
                    .map(|p| (name_of(&p["before"]), name_of(&p["after"])))
                    .collect();
                assert_eq!(listed.len(), want.len().min(cap), "{key}");
                assert!(listed.iter().all(|p| want.contains(p)), "{key}");
                if order["truncated"] != true {
                    continue;
                }
                truncated += 1;
                assert_eq!(order["pairs"][key], want.len(), "{key}");
                let mut described = Vec::new();
                for step in order["steps"][key].as_array().expect("steps") {
                    let set = |i: &serde_json::Value| -> Vec<String> {
                        let i = usize::try_from(i.as_u64().expect("index")).expect("small");
                        let set = order["sets"][i].as_array().expect("set");
                        set.iter().map(name_of).collect()
                    };
                    let (bs, as_) = (set(&step["before"]), set(&step["after"]));
                    assert_eq!(step["pairs"], bs.len() * as_.len());
                    for b in &bs {
                        described.extend(as_.iter().map(|a| (b.clone(), a.clone())));
                    }
                }
                described.sort();
                assert_eq!(&described, want, "{key}");
            }
        }
        assert!(
            truncated > 10,
            "the cut description was checked {truncated} times"
        );
    }
}
