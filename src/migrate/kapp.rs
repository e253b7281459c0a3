//! kapp → HIP-0025 (DIALECTS.md §3 and the kapp rows of §7.3), from kapp's plan.
//!
//! kapp orders single changes: a resource belongs to change groups (its
//! `kapp.k14s.io/change-group…` annotations and the groups kapp's default configuration gives
//! its kind) and rules (`kapp.k14s.io/change-rule…` and the default rules: CRDs before their
//! custom resources, a Namespace before what is in it, pod-related kinds, RBAC and storage
//! before the rest, …) make it wait for every member of a group. kapp's planner
//! ([`crate::plan::kapp`]) gathers the resources with the same groups and effective rules into
//! one step and draws the edges between steps, default rules included. HIP-0025 orders groups,
//! so each step of one chart level that kapp orders against another resource of that level is
//! one group (`kapp-<change group>` as annotated, sanitised; else `kapp-<name>` of its first
//! resource when it is in no change group; else `kapp-defaults`, numbered when taken), and it
//! depends on the groups of the steps kapp makes it wait for. A step kapp orders against
//! nothing of its level stays unsequenced. A Job others wait for gets completion readiness
//! (kapp waits for Jobs to complete). Delete rules are checked against HIP-0025's uninstall;
//! rules between upserts and deletes, and `exists` (an object kapp never creates) have no
//! HIP-0025 form: lost.

use std::collections::{BTreeMap, BTreeSet};

use super::{Lost, Mapping, Res};
use crate::model::annotations::{DEPENDS_ON_GROUPS, RESOURCE_GROUP};
use crate::model::kapp::{
    Action, CHANGE_GROUP, CHANGE_RULE, CONFIG_API_VERSION, EXISTS, Order, Origin, TargetAction,
};
use crate::model::{ChartId, DocId, Model, Placement};
use crate::plan::Plan;

const DEFAULTS_GROUP: &str = "kapp-defaults";

/// A group name in HIP-0025's safe alphabet: `apps.big.co/db-migrations` →
/// `kapp-apps-big-co-db-migrations`.
#[must_use]
pub fn group_name(kapp: &str) -> String {
    let body: String = kapp
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    format!("kapp-{}", body.trim_matches('-'))
}

/// An upsert rule: wait for (`after`) or hold back (`before`) the members of a group.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Rule {
    after: bool,
    group: String,
}

/// What one resource says to kapp.
struct Read {
    doc: DocId,
    groups: BTreeSet<String>,
    rules: BTreeSet<Rule>,
}

fn is_key(key: &str, base: &str) -> bool {
    key == base
        || key
            .strip_prefix(base)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// Maps a kapp-ordered chart.
#[must_use]
pub fn map(model: &Model, plan: &Plan) -> Mapping {
    let mut mapping = Mapping::default();
    let mut reads: Vec<Read> = Vec::new();
    let mut delete_rules: Vec<(DocId, bool, String, String)> = Vec::new();
    for (doc, d) in model.documents.iter().enumerate() {
        let Some(r) = model.resource(doc) else {
            continue;
        };
        if d.placement != Placement::Template {
            continue;
        }
        let me = Res::of(model, doc);
        let mut read = Read {
            doc,
            groups: BTreeSet::new(),
            rules: BTreeSet::new(),
        };
        let mut carried = Vec::new();
        for a in &r.annotations {
            if a.key == EXISTS {
                if let Some(me) = &me {
                    mapping.lost.push(Lost {
                        before: me.clone(),
                        after: me.clone(),
                        reason: format!(
                            "{EXISTS}: kapp waits for an object someone else creates; HIP-0025 cannot reference objects outside the release (and Helm would create it)"
                        ),
                    });
                }
            } else if is_key(&a.key, CHANGE_GROUP) || is_key(&a.key, CHANGE_RULE) {
                carried.push(a.key_loc);
            }
        }
        // Groups and rules as kapp reads them (the model replaced the placeholders), from
        // annotations and from the bindings of the chart's kapp configuration.
        for g in &r.kapp.groups {
            if matches!(g.origin, Origin::Annotation { .. } | Origin::Config { .. }) {
                read.groups.insert(g.name.clone());
            }
        }
        if let Some(me) = &me {
            lose_configuration(model, r, me, &mut mapping);
        }
        for rule in &r.kapp.rules {
            if let Origin::Config { .. } = &rule.origin {
                // A required bound rule is a constraint like an annotation's; an optional one
                // (`ignoreIfCyclical`) orders only where kapp's plan draws it.
                if rule.applies_on_install() && !rule.optional {
                    read.rules.insert(Rule {
                        after: rule.order == Order::After,
                        group: rule.target.clone(),
                    });
                }
                continue;
            }
            let Origin::Annotation { key, .. } = &rule.origin else {
                continue;
            };
            if rule.applies_on_install() {
                read.rules.insert(Rule {
                    after: rule.order == Order::After,
                    group: rule.target.clone(),
                });
            } else if rule.action == Action::Delete && rule.target_action == TargetAction::Deleting
            {
                // An uninstall order: the proof checks it against HIP-0025's uninstall.
                delete_rules.push((
                    doc,
                    rule.order == Order::After,
                    rule.target.clone(),
                    key.clone(),
                ));
            } else if let Some(me) = &me {
                let value = r
                    .annotations
                    .iter()
                    .rev()
                    .find(|a| a.key == *key)
                    .and_then(|a| a.value.as_str())
                    .unwrap_or_default();
                mapping.lost.push(Lost {
                    before: me.clone(),
                    after: me.clone(),
                    reason: format!(
                        "{key} `{value}`: HIP-0025 orders installs only (uninstall is their reverse); a delete rule has no form"
                    ),
                });
            }
        }
        if !carried.is_empty() && r.hook.is_none() {
            mapping.want(doc).carried = carried;
        }
        if r.hook.is_none() {
            reads.push(read);
        }
    }
    // Constraints for the proof: every member of a group before (or after) the rule's owner.
    let mut members: BTreeMap<&str, Vec<DocId>> = BTreeMap::new();
    for read in &reads {
        for g in &read.groups {
            members.entry(g.as_str()).or_default().push(read.doc);
        }
    }
    for read in &reads {
        for rule in &read.rules {
            for &m in members.get(rule.group.as_str()).into_iter().flatten() {
                if m != read.doc {
                    mapping.constraints.push(if rule.after {
                        (m, read.doc)
                    } else {
                        (read.doc, m)
                    });
                }
            }
        }
    }
    // `delete after deleting G`: the owner is deleted once G's objects are gone; `before`:
    // the other way round. A group no object is in orders nothing.
    for (doc, after, group, key) in delete_rules {
        for &m in members.get(group.as_str()).into_iter().flatten() {
            if m != doc {
                mapping.delete_constraints.push(if after {
                    (m, doc, key.clone())
                } else {
                    (doc, m, key.clone())
                });
            }
        }
    }
    let levels: BTreeSet<ChartId> = reads.iter().map(|r| model.documents[r.doc].chart).collect();
    for chart in levels {
        level(model, plan, chart, &reads, &mut mapping);
    }
    mapping
}

/// What kapp's configuration in the chart says that HIP-0025 has no form for: a `Config`
/// object (kapp never applies it; Helm would, and fail without kapp's CRD) and a `waitRules`
/// rule (HIP-0025 waits by kstatus or by its own readiness annotations).
fn lose_configuration(model: &Model, r: &crate::model::Resource, me: &Res, mapping: &mut Mapping) {
    if r.kapp.config {
        mapping.lost.push(Lost {
            before: me.clone(),
            after: me.clone(),
            reason: format!(
                "a kapp `Config` object ({CONFIG_API_VERSION}): kapp reads it and never applies it, Helm would apply it (and fail without kapp's CRD); its change group and rule bindings are carried as the groups above, remove the object by hand"
            ),
        });
    }
    if let Some(rule) = &r.kapp.wait_rule {
        let file = model.sources.get(rule.loc.file);
        let at = file.line_col(rule.loc.span.start);
        mapping.lost.push(Lost {
            before: me.clone(),
            after: me.clone(),
            reason: format!(
                "the kapp wait rule at {}:{}:{} ({}): HIP-0025 waits by kstatus unless `helm.sh/readiness-success` and `-failure` say otherwise; write them by hand",
                file.name,
                at.line,
                at.column,
                if rule.ytt {
                    "ytt".to_owned()
                } else {
                    crate::plan::Wait::KappConditions(rule.conditions.clone()).describe()
                }
            ),
        });
    }
}

/// The groups of one chart level: one per step of kapp's plan holding resources of this level
/// that kapp orders against another resource of it; a group depends on the groups kapp makes
/// it wait for, directly or through steps with no resource here (other chart levels, hooks,
/// `crds/`). A step kapp orders against nothing here stays unsequenced.
fn level(model: &Model, plan: &Plan, chart: ChartId, reads: &[Read], mapping: &mut Mapping) {
    let here: BTreeSet<DocId> = reads
        .iter()
        .filter(|r| model.documents[r.doc].chart == chart)
        .map(|r| r.doc)
        .collect();
    let docs: Vec<Vec<DocId>> = plan
        .steps
        .iter()
        .map(|s| {
            s.resources
                .iter()
                .copied()
                .filter(|d| here.contains(d))
                .collect()
        })
        .collect();
    // `deps[i]`: the steps with resources here that step `i` waits for, seen through steps
    // without any (plan steps wait only for earlier ones).
    let mut deps: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); plan.steps.len()];
    for (i, step) in plan.steps.iter().enumerate() {
        let mut stack: Vec<usize> = step.after.clone();
        let mut seen: BTreeSet<usize> = BTreeSet::new();
        while let Some(p) = stack.pop() {
            if p >= plan.steps.len() || !seen.insert(p) {
                continue;
            }
            if docs[p].is_empty() {
                stack.extend(plan.steps[p].after.iter().copied());
            } else {
                deps[i].insert(p);
            }
        }
    }
    let waited: BTreeSet<usize> = (0..plan.steps.len())
        .filter(|&i| !docs[i].is_empty())
        .flat_map(|i| deps[i].iter().copied())
        .collect();
    let ordered: Vec<usize> = (0..plan.steps.len())
        .filter(|&i| !docs[i].is_empty() && (!deps[i].is_empty() || waited.contains(&i)))
        .collect();
    if ordered.is_empty() {
        return;
    }
    // Names: the step's change groups as annotated, else the first resource's name when the
    // step is in no change group, else `kapp-defaults` (kapp's default change groups only).
    let mut names: BTreeMap<usize, String> = BTreeMap::new();
    let mut taken: BTreeSet<String> = BTreeSet::new();
    for &i in &ordered {
        let first = docs[i][0];
        let read = reads.iter().find(|r| r.doc == first);
        let base = match read {
            Some(r) if !r.groups.is_empty() => {
                group_name(&r.groups.iter().cloned().collect::<Vec<_>>().join("-"))
            }
            _ if plan.steps[i]
                .group
                .as_deref()
                .is_none_or(|g| g.starts_with("ungrouped")) =>
            {
                group_name(model.resource(first).map_or("", |x| x.id.name.as_str()))
            }
            _ => DEFAULTS_GROUP.to_owned(),
        };
        let mut name = base.clone();
        let mut n = 2;
        while !taken.insert(name.clone()) {
            name = format!("{base}-{n}");
            n += 1;
        }
        names.insert(i, name);
    }
    let mut chain: Vec<String> = Vec::new();
    for &i in &ordered {
        let own = names[&i].clone();
        chain.push(own.clone());
        let mut on: Vec<&str> = deps[i].iter().map(|p| names[p].as_str()).collect();
        on.sort_unstable();
        for &doc in &docs[i] {
            let anchor = model.resource(doc).and_then(|r| {
                r.annotations
                    .iter()
                    .find(|a| is_key(&a.key, CHANGE_GROUP) || is_key(&a.key, CHANGE_RULE))
                    .map(|a| a.key_loc)
            });
            let want = mapping.want(doc);
            want.anchor = anchor;
            want.set.push((RESOURCE_GROUP.to_owned(), own.clone()));
            if !on.is_empty() {
                want.set
                    .push((DEPENDS_ON_GROUPS.to_owned(), super::ordinal::json_list(&on)));
            }
            if waited.contains(&i) {
                super::ordinal::job_readiness(model, doc, &mut want.set);
            }
        }
    }
    mapping.chains.push((chart, chain));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kapp_group_names_are_sanitised() {
        assert_eq!(
            group_name("apps.big.co/db-migrations"),
            "kapp-apps-big-co-db-migrations"
        );
        assert_eq!(group_name("kontinuous/pg"), "kapp-kontinuous-pg");
        assert!(is_key("kapp.k14s.io/change-rule.pg", CHANGE_RULE));
        assert!(!is_key("kapp.k14s.io/change-rules", CHANGE_RULE));
    }
}
