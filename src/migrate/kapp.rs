//! kapp → HIP-0025 (DIALECTS.md §3 and the kapp rows of §7.3), read from the annotations.
//!
//! kapp orders single changes: a resource belongs to change groups
//! (`kapp.k14s.io/change-group`, `….change-group.<suffix>`) and its rules
//! (`kapp.k14s.io/change-rule`, `….change-rule.<suffix>`: `upsert after upserting G`) make it
//! wait for every member of a group. HIP-0025 orders groups, so the resources of one chart
//! level with the same change groups and the same upsert rules form one equivalence class,
//! one group (`kapp-<change group>`, sanitised); a class that waits for a change group depends
//! on every class holding a member of it (`upsert before upserting G` turns the edge around).
//! Unannotated Namespaces, CRDs, RBAC, storage and pod-related kinds (config maps, secrets,
//! service accounts, …), which kapp's default rules apply first, go in a `kapp-defaults` group
//! that every class depends on. A Job others wait for gets completion readiness (kapp waits
//! for Jobs to complete). Delete rules, rules between upserts and deletes, and `exists`
//! (an object kapp never creates) have no HIP-0025 form: lost.
//!
//! chartseq has no kapp planner: the mapping states the rules' constraints for the proof.

use std::collections::{BTreeMap, BTreeSet};

use super::{Lost, Mapping, Res};
use crate::model::annotations::{DEPENDS_ON_GROUPS, RESOURCE_GROUP};
use crate::model::kapp::{Action, CHANGE_GROUP, CHANGE_RULE, EXISTS, Order, Origin, TargetAction};
use crate::model::{ChartId, DocId, Model, Placement};

/// Kinds kapp's default rules apply before the rest.
const DEFAULT_FIRST: [&str; 19] = [
    "Namespace",
    "CustomResourceDefinition",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "PriorityClass",
    "RuntimeClass",
    "ServiceAccount",
    "Secret",
    "ConfigMap",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
];

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
pub fn map(model: &Model) -> Mapping {
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
        // Groups and rules as kapp reads them (the model replaced the placeholders).
        for g in &r.kapp.groups {
            if matches!(g.origin, Origin::Annotation { .. }) {
                read.groups.insert(g.name.clone());
            }
        }
        for rule in &r.kapp.rules {
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
        level(model, chart, &reads, &mut mapping);
    }
    mapping
}

/// The classes of one chart level and their edges.
fn level(model: &Model, chart: ChartId, reads: &[Read], mapping: &mut Mapping) {
    let here: Vec<&Read> = reads
        .iter()
        .filter(|r| model.documents[r.doc].chart == chart)
        .collect();
    // Equivalence classes: same change groups, same rules.
    let mut classes: BTreeMap<(Vec<String>, Vec<Rule>), Vec<DocId>> = BTreeMap::new();
    let mut defaults = Vec::new();
    for r in &here {
        if r.groups.is_empty() && r.rules.is_empty() {
            let kind = model.resource(r.doc).map_or("", |x| x.id.kind.as_str());
            if DEFAULT_FIRST.contains(&kind) {
                defaults.push(r.doc);
            }
            continue;
        }
        classes
            .entry((
                r.groups.iter().cloned().collect(),
                r.rules.iter().cloned().collect(),
            ))
            .or_default()
            .push(r.doc);
    }
    if classes.is_empty() {
        return;
    }
    let mut names: BTreeMap<&(Vec<String>, Vec<Rule>), String> = BTreeMap::new();
    let mut taken: BTreeSet<String> = BTreeSet::new();
    taken.insert(DEFAULTS_GROUP.to_owned());
    for (key, docs) in &classes {
        let base = if key.0.is_empty() {
            group_name(model.resource(docs[0]).map_or("", |r| r.id.name.as_str()))
        } else {
            group_name(&key.0.join("-"))
        };
        let mut name = base.clone();
        let mut n = 2;
        while !taken.insert(name.clone()) {
            name = format!("{base}-{n}");
            n += 1;
        }
        names.insert(key, name);
    }
    // Edges between classes.
    let class_of = |doc: DocId| {
        classes
            .iter()
            .find(|(_, docs)| docs.contains(&doc))
            .and_then(|(k, _)| names.get(k).cloned())
    };
    let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for key in classes.keys() {
        let own = names[key].clone();
        deps.entry(own.clone()).or_default();
        for rule in &key.1 {
            let targets: BTreeSet<String> = here
                .iter()
                .filter(|r| r.groups.contains(&rule.group))
                .filter_map(|r| class_of(r.doc))
                .filter(|t| *t != own)
                .collect();
            for t in targets {
                if rule.after {
                    deps.entry(own.clone()).or_default().insert(t);
                } else {
                    deps.entry(t).or_default().insert(own.clone());
                }
            }
        }
    }
    if !defaults.is_empty() {
        for set in deps.values_mut() {
            set.insert(DEFAULTS_GROUP.to_owned());
        }
    }
    let waited: BTreeSet<String> = deps.values().flatten().cloned().collect();
    let mut chain: Vec<String> = Vec::new();
    if !defaults.is_empty() {
        chain.push(DEFAULTS_GROUP.to_owned());
        for &doc in &defaults {
            let want = mapping.want(doc);
            want.set
                .push((RESOURCE_GROUP.to_owned(), DEFAULTS_GROUP.to_owned()));
        }
    }
    for (key, docs) in &classes {
        let own = &names[key];
        chain.push(own.clone());
        let on: Vec<&str> = deps
            .get(own)
            .map(|s| s.iter().map(String::as_str).collect())
            .unwrap_or_default();
        for &doc in docs {
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
            if waited.contains(own) {
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
