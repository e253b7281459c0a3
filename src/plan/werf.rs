//! The order werf/nelm installs a release in (DIALECTS.md §1.2–1.4), as plan steps.
//!
//! Stages run one after the other: CRDs and Namespaces (the plan's `crds`), `pre-install` hooks,
//! regular resources, `post-install` hooks. Inside a stage each weight is one step, waiting for every resource of
//! the weight before (readiness included); one weight's resources go in parallel, with no kind
//! order. Weights span the whole release, subcharts included. A resource with a manual
//! dependency has no weight: it floats in its stage as a step of its own that waits for the
//! steps holding its targets (or for the stage before, when it has none); the next stage waits
//! for it. A value werf rejects, and a cycle of dependencies, fail the release before anything
//! is applied; a dependency that matches no resource of its stage is passed over, as werf does,
//! and kept in [`Plan::issues`]. External dependencies are kept in [`Plan::external`].
//!
//! NOTE: nelm ties a dependency to the *first* matching resource of the stage only, in its own
//! order (floating resources first, then by weight, then kind, group, version, namespace and
//! name), so a dependency naming only a kind can match the very resource that declares it: a
//! cycle werf refuses. A step waits for the whole step of its target, where nelm waits for the
//! target alone (its apply for `state=present`, its readiness for `state=ready`).

use std::collections::HashMap;

mod uninstall;
pub use uninstall::{Because, DeleteEdge, delete_edges, uninstall};

use crate::model::werf::{Dependency, Stage};
use crate::model::werf_auto::AutoDependency;
use crate::model::{Content, DocId, Model};
use crate::plan::graph::{Cycle, DepGraph};
use crate::plan::{Dialect, External, Plan, PlanError, PlanIssue, Step, Wait};
use crate::source::Loc;

/// `werf.io/track-termination-mode`: `NonBlocking` resources are never waited for.
const TRACK_TERMINATION_MODE: &str = "werf.io/track-termination-mode";

/// The step name of a stage's weight.
#[must_use]
pub fn step_name(stage: Stage, weight: Option<i64>) -> String {
    match weight {
        Some(w) => format!("{}:weight={w}", stage.name()),
        None => format!("{}:dependencies", stage.name()),
    }
}

/// The step name of a floating resource (one with manual dependencies).
fn floating_name(model: &Model, stage: Stage, doc: DocId) -> String {
    let Some(r) = model.resource(doc) else {
        return step_name(stage, None);
    };
    match &r.id.namespace {
        Some(ns) => format!("{}:{}/{ns}/{}", stage.name(), r.id.kind, r.id.name),
        None => format!("{}:{}/{}", stage.name(), r.id.kind, r.id.name),
    }
}

/// A resource in one stage: the stage, its weight (`None`: floating), its listing key (kind,
/// name, namespace) and the document.
type Placed = (Stage, Option<i64>, (String, String, String), DocId);

/// Plans the release as werf installs it, or every value werf would reject and every cycle.
pub fn plan(model: &Model) -> Result<Plan, PlanError> {
    let (plan, issues) = analyze(model);
    let fatal: Vec<PlanIssue> = issues.into_iter().filter(|i| !passed_over(i)).collect();
    if fatal.is_empty() {
        Ok(plan)
    } else {
        Err(PlanError { issues: fatal })
    }
}

/// The plan as far as it can be made, and every issue: values werf rejects and cycles (fatal),
/// dependencies that match nothing (passed over; also in the plan's `issues`).
#[must_use]
pub fn analyze(model: &Model) -> (Plan, Vec<PlanIssue>) {
    let mut plan = Plan {
        dialect: Dialect::Werf,
        ..Plan::default()
    };
    let mut issues = Vec::new();
    let mut placed: Vec<Placed> = Vec::new();
    let mut not_objects = Vec::new();
    for (doc, d) in model.documents.iter().enumerate() {
        match &d.content {
            Content::Empty => plan.comments.push(doc),
            Content::Resource(r) => {
                if let Some(ignored) = &r.werf.deletion.ignored {
                    issues.push(PlanIssue::IgnoredDialectValue {
                        dialect: Dialect::Werf,
                        key: ignored.key.clone(),
                        value: ignored.value.clone(),
                        reason: ignored.reason.clone(),
                        ignored: format!(
                            "every delete dependency of {} when it uninstalls the release",
                            crate::plan::output::label(model, doc)
                        ),
                        loc: ignored.loc,
                    });
                }
                for rejected in &r.werf.rejected {
                    issues.push(PlanIssue::rejected(Dialect::Werf, rejected));
                }
                if r.werf.stages.is_empty() {
                    plan.not_installed.push(doc);
                }
                let key = (
                    r.id.kind.clone(),
                    r.id.name.clone(),
                    r.id.namespace.clone().unwrap_or_default(),
                );
                for &stage in &r.werf.stages {
                    placed.push((stage, r.werf.weight, key.clone(), doc));
                }
                if !r.werf.stages.is_empty() {
                    plan.waits.insert(doc, wait_of(r));
                    if !r.werf.external.is_empty() {
                        plan.external
                            .insert(doc, r.werf.external.iter().map(External::of).collect());
                    }
                }
            }
            Content::Invalid { .. } | Content::NotAnObject { .. } => not_objects.push(doc),
        }
    }
    // Floating resources (no weight) sort after the weights of their stage, for listing only.
    placed.sort_by(|a, b| {
        (a.0, a.1.is_none(), a.1, &a.2, a.3).cmp(&(b.0, b.1.is_none(), b.1, &b.2, b.3))
    });
    // Built only when some dependency matches nothing in its stage.
    let everything: std::cell::OnceCell<Index> = std::cell::OnceCell::new();
    // CRDs and Namespaces go first, before the pre-install hooks: the plan's `crds`; a
    // Namespace with manual dependencies floats in that stage, a step after its targets.
    let first = placed
        .iter()
        .take_while(|p| p.0 == Stage::PrePreInstall)
        .count();
    let first_stage: Vec<Placed> = placed.drain(..first).collect();
    let mut terminals = plan_first_stage(model, &mut plan, &mut issues, &first_stage, &everything);
    let mut i = 0;
    while i < placed.len() {
        let stage = placed[i].0;
        let start = i;
        while i < placed.len() && placed[i].0 == stage {
            i += 1;
        }
        terminals = plan_stage(
            model,
            &mut plan,
            &mut issues,
            (&placed[start..i], &everything),
            &terminals,
        );
    }
    // Documents that are not objects: werf would fail on them; listed last, as HIP does.
    if !not_objects.is_empty() {
        plan.steps.push(Step {
            chart: 0,
            group: None,
            resources: not_objects,
            after: terminals,
        });
    }
    plan.issues = issues.iter().filter(|i| passed_over(i)).cloned().collect();
    (plan, issues)
}

/// What werf passes over without failing: a dependency that matches nothing in its stage, and
/// the delete dependencies of an object one of whose values it refuses.
fn passed_over(issue: &PlanIssue) -> bool {
    matches!(
        issue,
        PlanIssue::DialectReference { .. } | PlanIssue::IgnoredDialectValue { .. }
    )
}

/// Plans werf's first stage (CRDs and Namespaces): what has a weight (0, whatever it carries)
/// is the plan's `crds`, applied together before anything else; a Namespace with manual
/// dependencies (nelm keeps them, and its weight goes) is a step of its own after the steps
/// holding its targets, its `after` empty when they are all in `crds` (a step that waits for
/// nothing runs once `crds` is applied). One whose dependencies match nothing in the stage
/// waits for nothing there, as in nelm: it goes with `crds`. Returns the stage's terminal
/// steps, which the pre-install stage waits for.
fn plan_first_stage(
    model: &Model,
    plan: &mut Plan,
    issues: &mut Vec<PlanIssue>,
    stage_docs: &[Placed],
    everything: &std::cell::OnceCell<Index>,
) -> Vec<usize> {
    let floating = stage_docs.iter().filter(|p| p.1.is_none()).count();
    if floating == 0 {
        plan.crds = stage_docs.iter().map(|p| p.3).collect();
        return Vec::new();
    }
    debug_assert!(plan.steps.is_empty(), "the first stage is planned first");
    let ends = plan_stage(model, plan, issues, (stage_docs, everything), &[]);
    // The weight-0 step (there is at most one weight in this stage) becomes `crds`.
    let chain = usize::from(stage_docs.first().is_some_and(|p| p.1.is_some()));
    let mut crds: Vec<DocId> = if chain == 1 {
        plan.steps.remove(0).resources
    } else {
        Vec::new()
    };
    // Floating Namespaces that wait for nothing in the stage start with the CRDs; the others
    // keep their steps, renumbered, and wait for what is left of their targets' steps (none
    // left: they wait for `crds`).
    let old = std::mem::take(&mut plan.steps);
    let mut index: Vec<Option<usize>> = vec![None; old.len() + chain];
    for (i, step) in old.iter().enumerate() {
        if step.after.is_empty() {
            crds.extend(step.resources.iter().copied());
        } else {
            index[i + chain] = Some(plan.steps.len());
            plan.steps.push(step.clone());
        }
    }
    for step in &mut plan.steps {
        step.after = step
            .after
            .iter()
            .filter_map(|&a| index.get(a).copied().flatten())
            .collect();
    }
    let ends: Vec<usize> = ends
        .into_iter()
        .filter_map(|e| index.get(e).copied().flatten())
        .collect();
    crds.sort_by_key(|&d| {
        stage_docs
            .iter()
            .position(|p| p.3 == d)
            .unwrap_or(usize::MAX)
    });
    plan.crds = crds;
    ends
}

/// nelm's order of a stage's resources when it looks for a dependency's target: floating
/// resources first, then by weight, then kind, group, version, namespace and name.
fn match_order(model: &Model, p: &Placed) -> (bool, i64, [String; 5], DocId) {
    let fields = model.resource(p.3).map_or_else(Default::default, |r| {
        [
            r.id.kind.clone(),
            r.id.group.clone(),
            version_of(&r.api_version).to_owned(),
            r.id.namespace.clone().unwrap_or_default(),
            r.id.name.clone(),
        ]
    });
    (p.1.is_some(), p.1.unwrap_or(0), fields, p.3)
}

fn version_of(api_version: &str) -> &str {
    api_version.rsplit('/').next().unwrap_or(api_version)
}

/// Whether a dependency names this document.
fn names(model: &Model, dep: &Dependency, doc: DocId) -> bool {
    model.resource(doc).is_some_and(|r| {
        dep.target.matches(
            &r.id.group,
            version_of(&r.api_version),
            &r.id.kind,
            r.id.namespace.as_deref(),
            &r.id.name,
        )
    })
}

/// Documents in a fixed order, indexed by kind and name, to find the first that a dependency
/// names without scanning them all (most dependencies give a kind, a name or both).
struct Index {
    docs: Vec<DocId>,
    by_kind_name: HashMap<(String, String), Vec<usize>>,
    by_kind: HashMap<String, Vec<usize>>,
    by_name: HashMap<String, Vec<usize>>,
}

impl Index {
    fn new(model: &Model, docs: Vec<DocId>) -> Self {
        let mut index = Index {
            docs,
            by_kind_name: HashMap::new(),
            by_kind: HashMap::new(),
            by_name: HashMap::new(),
        };
        for (i, &doc) in index.docs.iter().enumerate() {
            let Some(r) = model.resource(doc) else {
                continue;
            };
            index
                .by_kind_name
                .entry((r.id.kind.clone(), r.id.name.clone()))
                .or_default()
                .push(i);
            index.by_kind.entry(r.id.kind.clone()).or_default().push(i);
            index.by_name.entry(r.id.name.clone()).or_default().push(i);
        }
        index
    }

    /// The position of the first document the dependency names.
    fn first(&self, model: &Model, dep: &Dependency) -> Option<usize> {
        let target = &dep.target;
        let candidates: Option<&Vec<usize>> = match (&target.kind, &target.name) {
            (Some(kind), Some(name)) => Some(self.by_kind_name.get(&(kind.clone(), name.clone()))?),
            (Some(kind), None) => Some(self.by_kind.get(kind)?),
            (None, Some(name)) => Some(self.by_name.get(name)?),
            (None, None) => None,
        };
        match candidates {
            Some(list) => list
                .iter()
                .copied()
                .find(|&i| names(model, dep, self.docs[i])),
            None => (0..self.docs.len()).find(|&i| names(model, dep, self.docs[i])),
        }
    }
}

/// Plans one stage after the steps `start`; returns the stage's terminal steps.
fn plan_stage(
    model: &Model,
    plan: &mut Plan,
    issues: &mut Vec<PlanIssue>,
    (stage_docs, everything): (&[Placed], &std::cell::OnceCell<Index>),
    start: &[usize],
) -> Vec<usize> {
    let Some(stage) = stage_docs.first().map(|p| p.0) else {
        return start.to_vec();
    };
    // The weight chain.
    let mut step_of: std::collections::HashMap<DocId, usize> = std::collections::HashMap::new();
    let mut chain_end: Option<usize> = None;
    let mut chain: Vec<usize> = Vec::new();
    let mut j = 0;
    while j < stage_docs.len() && stage_docs[j].1.is_some() {
        let weight = stage_docs[j].1;
        let mut resources = Vec::new();
        while j < stage_docs.len() && stage_docs[j].1 == weight {
            resources.push(stage_docs[j].3);
            j += 1;
        }
        let after = chain_end.map_or_else(|| start.to_vec(), |prev| vec![prev]);
        plan.steps.push(Step {
            chart: 0,
            group: Some(step_name(stage, weight)),
            resources: resources.clone(),
            after,
        });
        let index = plan.steps.len() - 1;
        for doc in resources {
            step_of.insert(doc, index);
        }
        chain_end = Some(index);
        chain.push(index);
    }
    let floating: Vec<DocId> = stage_docs[j..].iter().map(|p| p.3).collect();
    // Dependencies are resolved to their first match in the stage, in nelm's order.
    let mut candidates: Vec<&Placed> = stage_docs.iter().collect();
    candidates.sort_by_cached_key(|p| match_order(model, p));
    let index = Index::new(model, candidates.iter().map(|p| p.3).collect());
    // nelm's automatic dependencies of weighted resources: within a weight the target is
    // applied first; a target of an earlier weight is there already; one of a later weight
    // is a cycle werf refuses; a floating target's step goes before the weight's step.
    let mut floating_targets: Vec<(usize, DocId, DocId, Loc)> = Vec::new();
    for &step in &chain {
        let members = plan.steps[step].resources.clone();
        let mut edges: Vec<(DocId, DocId, Loc)> = Vec::new();
        for &doc in &members {
            for (target, loc) in auto_targets(model, &index, &candidates, doc) {
                match target.1 {
                    None => floating_targets.push((step, doc, target.3, loc)),
                    Some(_) => match step_of.get(&target.3) {
                        Some(&s) if s == step => edges.push((doc, target.3, loc)),
                        Some(&s) if s > step => issues.push(weight_cycle(model, doc, target, loc)),
                        _ => {}
                    },
                }
            }
        }
        if !edges.is_empty() {
            match order_within(&members, &edges) {
                Ok(order) => plan.steps[step].resources = order,
                Err(cycle) => issues.push(PlanIssue::DialectCycle {
                    dialect: Dialect::Werf,
                    path: cycle
                        .0
                        .iter()
                        .map(|&d| crate::plan::output::label(model, d))
                        .collect(),
                    edges: cycle.1,
                }),
            }
        }
    }
    if floating.is_empty() {
        return chain_end.into_iter().collect();
    }
    let node = |doc: DocId| format!("{doc:012}");
    let mut graph: DepGraph<Loc> = DepGraph::new(floating.iter().map(|&d| node(d)));
    let mut targets: Vec<(DocId, Vec<DocId>)> = Vec::new();
    for &doc in &floating {
        let Some(r) = model.resource(doc) else {
            continue;
        };
        let mut on = Vec::new();
        // nelm's automatic dependencies: a `present` edge to the first match of the stage;
        // one that matches nothing is passed over in silence, as nelm does.
        for auto in &r.werf.auto.deps {
            if let Some(target) = first_auto(model, &index, &candidates, auto, doc) {
                on.push(target.3);
                if target.1.is_none() {
                    graph.depend(&node(doc), &node(target.3), auto.loc);
                }
            }
        }
        for auto in bindings_of(model, &index, &candidates, r, doc) {
            on.push(auto.0.3);
            if auto.0.1.is_none() {
                graph.depend(&node(doc), &node(auto.0.3), auto.1);
            }
        }
        for dep in &r.werf.dependencies {
            match index.first(model, dep).map(|i| candidates[i]) {
                Some(target) => {
                    on.push(target.3);
                    if target.1.is_none() {
                        graph.depend(&node(doc), &node(target.3), dep.loc);
                    }
                }
                None if dep.from_external_key => {}
                None => {
                    let everything = everything
                        .get_or_init(|| Index::new(model, (0..model.documents.len()).collect()));
                    issues.push(reference_to_nothing(model, everything, stage, dep));
                }
            }
        }
        targets.push((doc, on));
    }
    let order = match graph.batches() {
        Ok(batches) => batches
            .into_iter()
            .flatten()
            .filter_map(|n| n.parse::<DocId>().ok())
            .collect::<Vec<_>>(),
        Err(cycles) => {
            for Cycle { path, edges } in cycles {
                let path = path
                    .iter()
                    .filter_map(|n| n.parse::<DocId>().ok())
                    .map(|d| crate::plan::output::label(model, d))
                    .collect();
                issues.push(PlanIssue::DialectCycle {
                    dialect: Dialect::Werf,
                    path,
                    edges,
                });
            }
            floating.clone()
        }
    };
    let targets: std::collections::HashMap<DocId, Vec<DocId>> = targets.into_iter().collect();
    let mut waited: std::collections::BTreeSet<usize> = std::collections::BTreeSet::new();
    let mut floating_steps = Vec::new();
    for doc in order {
        let mut after: Vec<usize> = targets
            .get(&doc)
            .into_iter()
            .flatten()
            .filter_map(|t| step_of.get(t).copied())
            .collect();
        if after.is_empty() {
            after = start.to_vec();
        }
        after.sort_unstable();
        after.dedup();
        waited.extend(after.iter().copied());
        plan.steps.push(Step {
            chart: 0,
            group: Some(floating_name(model, stage, doc)),
            resources: vec![doc],
            after,
        });
        let index = plan.steps.len() - 1;
        step_of.insert(doc, index);
        floating_steps.push(index);
    }
    // A weight waits for the floating resources its resources depend on, unless that floating
    // resource waits for the weight (or a later one) itself: a cycle werf refuses.
    for (step, doc, target, loc) in floating_targets {
        let Some(&target_step) = step_of.get(&target) else {
            continue;
        };
        if reaches(plan, target_step, step) {
            issues.push(PlanIssue::DialectCycle {
                dialect: Dialect::Werf,
                path: vec![
                    crate::plan::output::label(model, doc),
                    crate::plan::output::label(model, target),
                    crate::plan::output::label(model, doc),
                ],
                edges: vec![
                    loc,
                    model
                        .resource(target)
                        .and_then(|r| r.werf.dependencies.first())
                        .map_or(loc, |d| d.loc),
                ],
            });
            continue;
        }
        if !plan.steps[step].after.contains(&target_step) {
            plan.steps[step].after.push(target_step);
            plan.steps[step].after.sort_unstable();
        }
        waited.insert(target_step);
    }
    let mut ends: Vec<usize> = chain_end.into_iter().collect();
    ends.extend(floating_steps.into_iter().filter(|s| !waited.contains(s)));
    ends.sort_unstable();
    ends.dedup();
    ends
}

/// nelm's automatic dependencies among the resources of one stage: (dependent, target, where
/// the reference is written), each target the first match in nelm's order.
#[must_use]
pub fn automatic_edges(model: &Model, stage: Stage) -> Vec<(DocId, DocId, Loc)> {
    let placed: Vec<Placed> = (0..model.documents.len())
        .filter_map(|doc| {
            let r = model.resource(doc)?;
            r.werf.stages.contains(&stage).then(|| {
                let key = (
                    r.id.kind.clone(),
                    r.id.name.clone(),
                    r.id.namespace.clone().unwrap_or_default(),
                );
                (stage, r.werf.weight, key, doc)
            })
        })
        .collect();
    let mut candidates: Vec<&Placed> = placed.iter().collect();
    candidates.sort_by_cached_key(|p| match_order(model, p));
    let index = Index::new(model, candidates.iter().map(|p| p.3).collect());
    let mut out = Vec::new();
    for p in &placed {
        for (target, loc) in auto_targets(model, &index, &candidates, p.3) {
            out.push((p.3, target.3, loc));
        }
    }
    out
}

/// The first resource of the stage an automatic dependency names (nelm's
/// `findDeployOpInStage`), never the dependent itself.
fn first_auto<'p>(
    model: &Model,
    index: &Index,
    candidates: &[&'p Placed],
    auto: &AutoDependency,
    doc: DocId,
) -> Option<&'p Placed> {
    let dep = Dependency {
        key: crate::model::annotations::Spanned {
            value: String::new(),
            loc: auto.loc,
        },
        loc: auto.loc,
        state: crate::model::werf::DependencyState::Present,
        target: auto.target.clone(),
        from_external_key: false,
    };
    index
        .first(model, &dep)
        .map(|i| candidates[i])
        .filter(|p| p.3 != doc)
}

/// The bindings of the stage whose `ServiceAccount` subjects name a Pod template's service
/// account (nelm's `parseBindingDependenciesForWorkload`: every `RoleBinding` and
/// `ClusterRoleBinding` of the release, whatever their namespace), each with where the service
/// account is written.
fn bindings_of<'p>(
    model: &Model,
    _index: &Index,
    candidates: &[&'p Placed],
    r: &crate::model::Resource,
    doc: DocId,
) -> Vec<(&'p Placed, Loc)> {
    let Some((account, loc)) = &r.werf.auto.service_account else {
        return Vec::new();
    };
    let mut out: Vec<(&Placed, Loc)> = Vec::new();
    for &p in candidates {
        let Some(b) = model.resource(p.3) else {
            continue;
        };
        let binding = b.id.group == "rbac.authorization.k8s.io"
            && matches!(b.id.kind.as_str(), "RoleBinding" | "ClusterRoleBinding");
        if p.3 != doc
            && binding
            && b.werf.auto.subjects.iter().any(|s| s == account)
            && !out.iter().any(|(o, _)| o.3 == p.3)
        {
            out.push((p, *loc));
        }
    }
    out
}

/// Every automatic dependency target of a document in the stage, with where it is written.
fn auto_targets<'p>(
    model: &Model,
    index: &Index,
    candidates: &[&'p Placed],
    doc: DocId,
) -> Vec<(&'p Placed, Loc)> {
    let Some(r) = model.resource(doc) else {
        return Vec::new();
    };
    let mut out: Vec<(&Placed, Loc)> = r
        .werf
        .auto
        .deps
        .iter()
        .filter_map(|a| Some((first_auto(model, index, candidates, a, doc)?, a.loc)))
        .collect();
    out.extend(bindings_of(model, index, candidates, r, doc));
    out
}

/// A resource depending on one of a later weight: nelm's plan would have to apply the target
/// both after and before the dependent, and refuses the cycle.
fn weight_cycle(model: &Model, doc: DocId, target: &Placed, loc: Loc) -> PlanIssue {
    let weight_loc = model
        .resource(target.3)
        .and_then(|r| r.werf.weight_loc)
        .unwrap_or(loc);
    PlanIssue::DialectCycle {
        dialect: Dialect::Werf,
        path: vec![
            crate::plan::output::label(model, doc),
            crate::plan::output::label(model, target.3),
            crate::plan::output::label(model, doc),
        ],
        edges: vec![loc, weight_loc],
    }
}

/// The members of a step in an order where every target comes before what depends on it,
/// otherwise in their listed order; or a cycle (the documents in order and each edge).
fn order_within(
    members: &[DocId],
    edges: &[(DocId, DocId, Loc)],
) -> Result<Vec<DocId>, (Vec<DocId>, Vec<Loc>)> {
    let mut placed: Vec<DocId> = Vec::with_capacity(members.len());
    let mut left: Vec<DocId> = members.to_vec();
    while !left.is_empty() {
        let ready = left.iter().position(|&d| {
            edges
                .iter()
                .filter(|e| e.0 == d)
                .all(|e| !left.contains(&e.1))
        });
        let Some(i) = ready else {
            // Follow the edges among what is left until a document repeats.
            let mut path = vec![left[0]];
            let mut locs = Vec::new();
            while let Some(&last) = path.last() {
                let Some(e) = edges.iter().find(|e| e.0 == last && left.contains(&e.1)) else {
                    break;
                };
                locs.push(e.2);
                if let Some(start) = path.iter().position(|&d| d == e.1) {
                    path.push(e.1);
                    let cut = start;
                    return Err((path.split_off(cut), locs.split_off(cut)));
                }
                path.push(e.1);
            }
            return Err((path, locs));
        };
        placed.push(left.remove(i));
    }
    Ok(placed)
}

/// Whether step `from` waits, directly or not, for step `to`.
fn reaches(plan: &Plan, from: usize, to: usize) -> bool {
    let mut seen = std::collections::BTreeSet::new();
    let mut stack = vec![from];
    while let Some(s) = stack.pop() {
        if s == to {
            return true;
        }
        if seen.insert(s) {
            stack.extend(
                plan.steps
                    .get(s)
                    .map(|st| st.after.clone())
                    .unwrap_or_default(),
            );
        }
    }
    false
}

/// A dependency that matches no resource of its stage: werf passes over it.
fn reference_to_nothing(
    model: &Model,
    everything: &Index,
    stage: Stage,
    dep: &Dependency,
) -> PlanIssue {
    let elsewhere = everything.first(model, dep).map(|i| {
        let doc = everything.docs[i];
        let label = crate::plan::output::label(model, doc);
        let stages: Vec<Stage> = model
            .resource(doc)
            .map(|r| r.werf.stages.clone())
            .unwrap_or_default();
        if stages.first() == Some(&Stage::PrePreInstall) {
            format!(
                "matches {label} only in an earlier stage (CRDs and Namespaces), so werf ignores the dependency"
            )
        } else if stages.is_empty() {
            format!("matches {label} only, which is not installed, so werf ignores the dependency")
        } else {
            let names: Vec<&str> = stages.iter().map(|s| s.name()).collect();
            format!(
                "matches {label} only in another stage ({}), so werf ignores the dependency",
                names.join(", ")
            )
        }
    });
    PlanIssue::DialectReference {
        dialect: Dialect::Werf,
        key: dep.key.value.clone(),
        reference: dep.target.to_string(),
        reason: elsewhere.unwrap_or_else(|| {
            format!(
                "matches no resource of the {} stage, so werf ignores the dependency",
                stage.name()
            )
        }),
        loc: dep.loc,
    }
}

/// How werf waits for a resource it applied: kubedog tracks it until ready (a Job until it
/// completes), a hook until it has run, with the object's fail mode, allowed failures and
/// no-activity timeout; `NonBlocking` ones are not waited for.
fn wait_of(r: &crate::model::Resource) -> Wait {
    let non_blocking = r
        .annotation(TRACK_TERMINATION_MODE)
        .and_then(|a| a.value.as_str())
        .is_some_and(|v| v.trim() == "NonBlocking");
    let hook = r
        .werf
        .stages
        .iter()
        .any(|s| matches!(s, Stage::PreInstall | Stage::PostInstall));
    if non_blocking {
        Wait::None
    } else {
        Wait::Tracked(crate::plan::wait::Tracked {
            complete: hook,
            tracking: r.werf.tracking.clone(),
        })
    }
}

/// A resource whose tracking the chart writes: the document, its wait, the annotations (key,
/// value, where the value is).
pub type WrittenTracking<'p> = (
    DocId,
    &'p crate::plan::wait::Tracked,
    &'p [(String, String, Loc)],
);

/// The resources whose tracking the chart writes (`werf.io/fail-mode`,
/// `werf.io/failures-allowed-per-replica`, `werf.io/no-activity-timeout`), in document order,
/// with their wait and the annotations as written: what the plan shows beside its steps.
#[must_use]
pub fn written_tracking<'p>(model: &'p Model, plan: &'p Plan) -> Vec<WrittenTracking<'p>> {
    plan.waits
        .iter()
        .filter_map(|(&doc, wait)| {
            let Wait::Tracked(tracked) = wait else {
                return None;
            };
            let written = &model.resource(doc)?.werf.tracking_written;
            (!written.is_empty()).then_some((doc, tracked, written.as_slice()))
        })
        .collect()
}
