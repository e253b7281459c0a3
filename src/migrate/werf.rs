//! werf/nelm → HIP-0025 (DIALECTS.md §7.3, the werf rows), over what werf's planner reads.
//!
//! - Regular resources of the install stage become their level's chain of `weight-N` groups
//!   ([`super::ordinal`]); templated CRDs and Namespaces (werf applies them, and waits for
//!   them, before everything) head the chain in groups of their own (`crds-and-namespaces`,
//!   one more per later step of that stage).
//! - On a hook, `werf.io/weight` wins over `helm.sh/hook-weight` in werf: the Helm weight is set
//!   to it. `werf.io/deploy-on` with only hook events becomes `helm.sh/hook`.
//! - A resource with a manual dependency has no weight in werf: it is left without a group
//!   (deployed after its level's groups) and listed as a manual edit.
//! - External dependencies and delete dependencies have no HIP-0025 form: lost.

use super::ordinal::{self, Entry};
use super::{Lost, Manual, Mapping, Res};
use crate::model::annotations::{HOOK, HOOK_WEIGHT};
use crate::model::werf::{DEPLOY_ON, ExternalObject, Stage, WEIGHT};
use std::collections::{BTreeMap, BTreeSet};

use crate::model::kinds::install_rank;
use crate::model::{ChartId, DocId, Model, Placement, Resource};
use crate::plan::Plan;
use crate::plan::werf::Because;

/// The group of what werf applies before every weight (its CRDs and Namespaces).
const FIRST_GROUP: &str = "crds-and-namespaces";

/// `werf.io/deploy-on` events that are Helm hook events of the same name.
const HOOK_EVENTS: [&str; 9] = [
    "pre-install",
    "post-install",
    "pre-upgrade",
    "post-upgrade",
    "pre-rollback",
    "post-rollback",
    "pre-delete",
    "post-delete",
    "test",
];

/// Maps a werf-ordered chart. The plan has already refused what werf rejects.
#[must_use]
pub fn map(model: &Model, plan: &Plan) -> Mapping {
    let mut mapping = Mapping::default();
    let mut entries = Vec::new();
    for (doc, d) in model.documents.iter().enumerate() {
        let Some(r) = model.resource(doc) else {
            continue;
        };
        if d.placement != Placement::Template {
            continue;
        }
        let carried: Vec<_> = r
            .annotations
            .iter()
            .filter(|a| a.key == WEIGHT || a.key == DEPLOY_ON)
            .map(|a| a.key_loc)
            .collect();
        if !carried.is_empty() {
            mapping.want(doc).carried = carried;
        }
        let anchor = [WEIGHT, DEPLOY_ON, HOOK_WEIGHT]
            .iter()
            .find_map(|k| r.annotation(k))
            .map(|a| a.key_loc);
        lost_dependencies(model, doc, r, &mut mapping);
        if r.werf.stages == [Stage::PrePreInstall] {
            entries.push(Entry {
                doc,
                ordinal: None,
                anchor,
            });
            continue;
        }
        if let Some(hook) = &r.hook {
            // werf.io/weight wins over helm.sh/hook-weight in werf; Helm reads only the latter.
            if let (Some(w), Some(_)) = (r.werf.weight, r.annotation(WEIGHT)) {
                if w != hook.weight {
                    let want = mapping.want(doc);
                    want.anchor = anchor;
                    want.set.push((HOOK_WEIGHT.to_owned(), w.to_string()));
                }
            }
            continue;
        }
        if let Some(events) = r.annotation(DEPLOY_ON).and_then(|a| a.value.as_str()) {
            let events: Vec<&str> = events.split(',').map(str::trim).collect();
            if events.iter().all(|e| HOOK_EVENTS.contains(e)) {
                let want = mapping.want(doc);
                want.anchor = anchor;
                want.set.push((HOOK.to_owned(), events.join(",")));
                if let Some(w) = r.werf.weight.filter(|w| *w != 0) {
                    want.set.push((HOOK_WEIGHT.to_owned(), w.to_string()));
                }
                continue;
            }
            let main = ["install", "upgrade", "rollback"];
            if !main.iter().all(|e| events.contains(e)) {
                mapping.manual.push(Manual {
                    doc,
                    at: r.annotation(DEPLOY_ON).map(|a| a.key_loc),
                    reason: format!(
                        "werf.io/deploy-on `{}` applies it only on some operations; Helm renders regular resources on every one: make it a Helm hook or render it under a value",
                        events.join(",")
                    ),
                    snippet: format!("helm.sh/hook: {}", events.join(",")),
                });
                continue;
            }
        }
        if !r.werf.stages.contains(&Stage::Install) {
            continue;
        }
        if let Some(w) = r.werf.weight {
            entries.push(Entry {
                doc,
                ordinal: Some(w),
                anchor,
            });
        } else {
            let first = r.werf.dependencies.first();
            let key = first.map_or_else(String::new, |d| d.key.value.clone());
            mapping.manual.push(Manual {
                    doc,
                    at: first.map(|d| d.key.loc),
                    reason: format!(
                        "{key} makes werf wait for one resource and ignore the weight: left without a group (deployed after its level's groups); to wait for exactly its target, give it a group of its own that depends on the target's group"
                    ),
                    snippet: "helm.sh/resource-group: <own group>\nhelm.sh/depends-on/resource-groups: '[\"<target's group>\"]'".to_owned(),
                });
        }
    }
    automatic_dependencies(model, plan, &entries, &mut mapping);
    manual_dependencies(model, &mut mapping);
    waits_through_external(model, plan, &mut mapping);
    delete_dependencies(model, &mut mapping);
    mapping
}

/// werf's uninstall order: every edge of its delete graph (written and automatic) is a delete
/// constraint the proof checks against HIP-0025's uninstall (the exact reverse of install); a
/// written one that matches nothing, or one werf cannot read, cannot be kept.
fn delete_dependencies(model: &Model, mapping: &mut Mapping) {
    let Ok((_, edges)) = crate::plan::werf::delete_edges(model) else {
        for (doc, r) in (0..model.documents.len()).filter_map(|d| Some((d, model.resource(d)?))) {
            let (Some(rejected), Some(after)) = (&r.werf.deletion.stateless, Res::of(model, doc))
            else {
                continue;
            };
            mapping.lost.push(Lost {
                before: properties_target(&rejected.value),
                after,
                reason: format!(
                    "{}: {}; werf cannot uninstall the release, and HIP-0025 has no such dependency",
                    rejected.key, rejected.reason
                ),
            });
        }
        return;
    };
    for (doc, r) in (0..model.documents.len()).filter_map(|d| Some((d, model.resource(d)?))) {
        for dep in &r.werf.deletion.dependencies {
            let matched = edges
                .iter()
                .any(|e| e.doc == doc && e.because == Because::Written(dep.key.clone()));
            if matched {
                continue;
            }
            let Some(after) = Res::of(model, doc) else {
                continue;
            };
            mapping.lost.push(Lost {
                before: properties_target(&dep.target.to_string()),
                after,
                reason: format!(
                    "{}: a delete dependency on nothing werf deletes with the release; HIP-0025 uninstalls in the reverse of the install order only",
                    dep.key
                ),
            });
        }
    }
    for e in edges {
        mapping
            .delete_constraints
            .push((e.target, e.doc, e.because.to_string()));
    }
}

/// Whatever werf applies only after a resource that waits for an external object waits for
/// that object too (werf waits for each step before the next): HIP-0025 cannot say it either.
/// Each such resource is listed, once per external object, naming the resource it waits on.
fn waits_through_external(model: &Model, plan: &Plan, mapping: &mut Mapping) {
    // A hook of two events is in two steps.
    let mut steps_of: BTreeMap<DocId, Vec<usize>> = BTreeMap::new();
    for (i, step) in plan.steps.iter().enumerate() {
        for &d in &step.resources {
            steps_of.entry(d).or_default().push(i);
        }
    }
    let mut next: Vec<Vec<usize>> = vec![Vec::new(); plan.steps.len()];
    for (i, step) in plan.steps.iter().enumerate() {
        for &before in &step.after {
            if let Some(n) = next.get_mut(before) {
                n.push(i);
            }
        }
    }
    let mut seen: BTreeSet<(Res, Res)> = mapping
        .lost
        .iter()
        .map(|l| (l.before.clone(), l.after.clone()))
        .collect();
    for &doc in plan.external.keys() {
        let (Some(starts), Some(waiting)) = (steps_of.get(&doc), Res::of(model, doc)) else {
            continue;
        };
        // Every step that waits, directly or not, for a step of `doc`.
        let mut later = BTreeSet::new();
        let mut stack: Vec<usize> = starts.iter().flat_map(|&s| next[s].clone()).collect();
        while let Some(s) = stack.pop() {
            if later.insert(s) {
                stack.extend(next[s].iter().copied());
            }
        }
        let Some(r) = model.resource(doc) else {
            continue;
        };
        for e in &r.werf.external {
            let before = external_res(&e.object);
            for &s in &later {
                for &d in &plan.steps[s].resources {
                    let Some(after) = Res::of(model, d) else {
                        continue;
                    };
                    if !seen.insert((before.clone(), after.clone())) {
                        continue;
                    }
                    mapping.lost.push(Lost {
                        before: before.clone(),
                        after,
                        reason: format!(
                            "{}: werf applies it only after {waiting}, which waits for this object outside the release to exist; HIP-0025 cannot reference objects outside the release",
                            e.key
                        ),
                    });
                }
            }
        }
    }
}

/// The weight chain of every level, with nelm's automatic dependencies carried over: inside a
/// weight, Helm's kind order already applies most targets first (a `ConfigMap`, `Secret`,
/// `ServiceAccount` or binding before a workload); a dependent whose target Helm would not apply
/// first (a kind Helm orders later, or one it does not know) moves to a group after its
/// weight's (`weight-0-deps`, then `weight-0-deps-2`, …), which waits for the targets. A target
/// in another chart level is reached only when it is in a subchart (installed first); one in
/// a parent or a sibling cannot be said in HIP-0025 and is reported lost.
///
/// werf's uninstall order is kept the same way: HIP-0025 uninstalls in the exact reverse of its
/// install, so an object werf deletes only once another is gone is installed before it (the
/// other moves to a later group of their weight), unless that contradicts an install edge
/// (install wins; the proof then reports the uninstall order lost) or werf cannot uninstall
/// the chart at all.
fn automatic_dependencies(model: &Model, plan: &Plan, entries: &[Entry], mapping: &mut Mapping) {
    let edges = crate::plan::werf::automatic_edges(model, Stage::Install);
    let weight_of: BTreeMap<DocId, Option<i64>> =
        entries.iter().map(|e| (e.doc, e.ordinal)).collect();
    let kind = |d: DocId| model.resource(d).map_or("", |r| r.id.kind.as_str());
    // Edges Helm's kind order does not keep inside one group: dependent -> targets.
    let mut uncovered: BTreeMap<DocId, Vec<DocId>> = BTreeMap::new();
    for &(doc, target, _) in &edges {
        let (Some(&w), Some(&tw)) = (weight_of.get(&doc), weight_of.get(&target)) else {
            continue;
        };
        let (level, target_level) = (model.documents[doc].chart, model.documents[target].chart);
        if level != target_level {
            if !descends(model, target_level, level)
                && let (Some(before), Some(after)) = (Res::of(model, target), Res::of(model, doc))
            {
                mapping.lost.push(Lost {
                    before,
                    after,
                    reason: "an automatic werf dependency on a resource outside this chart and its subcharts: HIP-0025 groups do not reach across charts".to_owned(),
                });
            }
            continue;
        }
        if w == tw && install_rank(kind(target)) >= install_rank(kind(doc)) {
            uncovered.entry(doc).or_default().push(target);
            mapping.constraints.push((target, doc));
        }
    }
    let installed_after: BTreeSet<(DocId, DocId)> = edges
        .iter()
        .map(|&(doc, target, _)| (doc, target))
        .collect();
    let deletes = crate::plan::werf::uninstall(model, plan)
        .ok()
        .and_then(|_| crate::plan::werf::delete_edges(model).ok())
        .map(|(_, edges)| edges)
        .unwrap_or_default();
    for e in deletes {
        // `e.doc` goes once `e.target` is gone: `e.target` is installed after `e.doc`.
        let (dependent, on) = (e.target, e.doc);
        if dependent == on
            || installed_after.contains(&(on, dependent))
            || model.documents[dependent].chart != model.documents[on].chart
        {
            continue;
        }
        let (Some(&w), Some(&tw)) = (weight_of.get(&dependent), weight_of.get(&on)) else {
            continue;
        };
        let targets = uncovered.entry(dependent).or_default();
        if w == tw && !targets.contains(&on) {
            targets.push(on);
        }
    }
    let depth = depths(&uncovered);
    // The steps of werf's first stage after what it applies first (the plan's `crds`).
    let first_steps: Vec<&crate::plan::Step> = plan
        .steps
        .iter()
        .filter(|s| {
            s.group
                .as_deref()
                .is_some_and(|g| g.starts_with(Stage::PrePreInstall.name()))
        })
        .collect();
    let mut by_level: BTreeMap<ChartId, Vec<&Entry>> = BTreeMap::new();
    for e in entries {
        by_level
            .entry(model.documents[e.doc].chart)
            .or_default()
            .push(e);
    }
    for (chart, level) in by_level {
        let ordinals: BTreeSet<i64> = level.iter().filter_map(|e| e.ordinal).collect();
        let mut groups: Vec<(String, Vec<&Entry>)> = Vec::new();
        // werf applies its CRDs and Namespaces, and waits for them, before any weight: groups
        // of their own at the head of the chain keep that, one for what it applies first and
        // one for each later step of that stage (a Namespace after the Namespaces it names).
        let ahead: Vec<&Entry> = level
            .iter()
            .copied()
            .filter(|e| e.ordinal.is_none())
            .collect();
        if !ahead.is_empty() && !ordinals.is_empty() {
            let step_of = |doc: DocId| {
                first_steps
                    .iter()
                    .position(|s| s.resources.contains(&doc))
                    .map_or(0, |i| i + 1)
            };
            let mut by_step: BTreeMap<usize, Vec<&Entry>> = BTreeMap::new();
            for e in ahead {
                by_step.entry(step_of(e.doc)).or_default().push(e);
            }
            for (i, members) in by_step.into_values().enumerate() {
                let name = if i == 0 {
                    FIRST_GROUP.to_owned()
                } else {
                    format!("{FIRST_GROUP}-{}", i + 1)
                };
                groups.push((name, members));
            }
        }
        for &o in &ordinals {
            let mut layers: BTreeMap<usize, Vec<&Entry>> = BTreeMap::new();
            for &e in level.iter().filter(|e| e.ordinal == Some(o)) {
                layers
                    .entry(depth.get(&e.doc).copied().unwrap_or(0))
                    .or_default()
                    .push(e);
            }
            for (layer, members) in layers {
                let name = match layer {
                    0 => ordinal::group_name("weight", o),
                    1 => format!("{}-deps", ordinal::group_name("weight", o)),
                    n => format!("{}-deps-{n}", ordinal::group_name("weight", o)),
                };
                groups.push((name, members));
            }
        }
        if groups.len() >= 2 {
            ordinal::assign(model, chart, &groups, true, mapping);
        }
    }
}

/// The depth of every dependent in its weight: its longest chain of edges kind order does not
/// keep (relaxed until nothing changes; the plan has refused cycles, and the rounds are capped
/// by the number of dependents all the same).
fn depths(uncovered: &BTreeMap<DocId, Vec<DocId>>) -> BTreeMap<DocId, usize> {
    let mut depth: BTreeMap<DocId, usize> = BTreeMap::new();
    for _ in 0..=uncovered.len() {
        let mut changed = false;
        for (&doc, targets) in uncovered {
            let d = targets
                .iter()
                .map(|t| depth.get(t).copied().unwrap_or(0) + 1)
                .max()
                .unwrap_or(0);
            if depth.get(&doc).copied().unwrap_or(0) < d {
                depth.insert(doc, d);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    depth
}

/// Whether `chart` is `ancestor` or one of its subcharts, at any depth.
fn descends(model: &Model, chart: ChartId, ancestor: ChartId) -> bool {
    let mut at = Some(chart);
    while let Some(c) = at {
        if c == ancestor {
            return true;
        }
        at = model.charts[c].parent;
    }
    false
}

/// werf's manual dependencies as constraints for the proof: nelm ties each to the first
/// resource of the install stage that matches (its own first-match rule).
fn manual_dependencies(model: &Model, mapping: &mut Mapping) {
    let installed: Vec<DocId> = (0..model.documents.len())
        .filter(|&d| {
            model
                .resource(d)
                .is_some_and(|r| r.werf.stages.contains(&Stage::Install))
        })
        .collect();
    for &doc in &installed {
        let Some(r) = model.resource(doc) else {
            continue;
        };
        for d in r.werf.dependencies.iter().filter(|d| !d.from_external_key) {
            let found = installed.iter().copied().find(|&t| {
                t != doc
                    && model.resource(t).is_some_and(|c| {
                        let version = c.api_version.rsplit('/').next().unwrap_or_default();
                        d.target.matches(
                            &c.id.group,
                            version,
                            &c.id.kind,
                            c.id.namespace.as_deref(),
                            &c.id.name,
                        )
                    })
            });
            if let Some(t) = found {
                mapping.constraints.push((t, doc));
            }
        }
    }
}

/// External dependencies: HIP-0025 cannot say them.
fn lost_dependencies(model: &Model, doc: DocId, r: &Resource, mapping: &mut Mapping) {
    let Some(after) = Res::of(model, doc) else {
        return;
    };
    for e in &r.werf.external {
        mapping.lost.push(Lost {
            before: external_res(&e.object),
            after: after.clone(),
            reason: format!(
                "{}: an external dependency; HIP-0025 cannot reference objects outside the release (keep the werf annotation for werf users)",
                e.key
            ),
        });
    }
}

/// An external dependency as a resource of the report (the legacy form's kubectl type stands
/// in for the kind).
fn external_res(object: &ExternalObject) -> Res {
    match object {
        ExternalObject::Typed {
            api_version,
            kind,
            namespace,
            name,
        } => res(api_version, kind, namespace.as_deref(), name),
        ExternalObject::Resource {
            resource,
            namespace,
            name,
        } => res("", resource, namespace.as_deref(), name),
    }
}

/// `state=absent,kind=K,name=N,namespace=NS,group=G,version=V`.
fn properties_target(value: &str) -> Res {
    let mut out = res("", "", None, "");
    let (mut group, mut version) = (String::new(), String::new());
    for (key, v) in crate::model::werf::parse_properties(value) {
        let Ok(v) = v else { continue };
        match key.as_str() {
            "kind" => out.kind = v,
            "name" => out.name = v,
            "namespace" => out.namespace = Some(v),
            "group" => group = v,
            "version" => version = v,
            _ => {}
        }
    }
    out.api_version = match (group.is_empty(), version.is_empty()) {
        (true, _) => version,
        (false, true) => group,
        (false, false) => format!("{group}/{version}"),
    };
    out
}

fn res(api: &str, kind: &str, ns: Option<&str>, name: &str) -> Res {
    Res {
        api_version: api.to_owned(),
        kind: kind.to_owned(),
        namespace: ns.map(str::to_owned),
        name: name.to_owned(),
        generated: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external_and_delete_targets_are_read() {
        let r = external_res(&ExternalObject::Typed {
            api_version: "v1".into(),
            kind: "Secret".into(),
            namespace: Some("ns".into()),
            name: "config".into(),
        });
        assert_eq!(
            (r.kind.as_str(), r.namespace.as_deref(), r.name.as_str()),
            ("Secret", Some("ns"), "config")
        );
        let r = external_res(&ExternalObject::Resource {
            resource: "serviceaccount".into(),
            namespace: None,
            name: "default".into(),
        });
        assert_eq!(
            (r.kind.as_str(), r.name.as_str()),
            ("serviceaccount", "default")
        );
        let r = properties_target("state=absent, Kind=Deployment,name=app,group=apps,version=v1");
        assert_eq!(
            (r.api_version.as_str(), r.kind.as_str(), r.name.as_str()),
            ("apps/v1", "Deployment", "app")
        );
    }
}
