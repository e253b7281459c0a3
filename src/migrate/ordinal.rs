//! The one algorithm for ordinal dialects (werf weights, Argo CD waves, KOTS phases),
//! DIALECTS.md §7.2: per chart level, when the level uses two or more ordinals, one group per
//! ordinal in ascending order, each depending on the one before, and **every** resource of
//! the level in a group (an unannotated resource is ordinal 0 to the old tool, but would be
//! unsequenced — last — in HIP-0025). A Job in a group that others wait for gets completion
//! readiness (kstatus counts a started Job as ready; the old tools waited for completion).

use std::collections::{BTreeMap, BTreeSet};

use super::Mapping;
use crate::model::annotations::{
    DEPENDS_ON_GROUPS, READINESS_FAILURE, READINESS_SUCCESS, RESOURCE_GROUP,
};
use crate::model::{ChartId, DocId, Model};
use crate::source::Loc;

/// A Job is ready once its `Complete` condition is true, whatever its completion count.
pub const JOB_SUCCESS: &str = r#"["{.conditions[?(@.type==\"Complete\")].status} == True"]"#;
/// A Job has failed once its `Failed` condition is true.
pub const JOB_FAILURE: &str = r#"["{.conditions[?(@.type==\"Failed\")].status} == True"]"#;

/// One resource of the source tool's main phase.
#[derive(Clone, Debug)]
pub struct Entry {
    pub doc: DocId,
    /// Its ordinal; `None` for a resource the tool applies before every ordinal (werf's CRDs
    /// and Namespaces, Argo's pulled-forward ones): it joins its level's first group.
    pub ordinal: Option<i64>,
    /// The source annotation the new lines go next to.
    pub anchor: Option<Loc>,
}

/// A group name in the safe alphabet: `wave-0`, `wave-n5`, `weight-10`, `phase-n1`.
#[must_use]
pub fn group_name(prefix: &str, ordinal: i64) -> String {
    if ordinal < 0 {
        format!("{prefix}-n{}", ordinal.unsigned_abs())
    } else {
        format!("{prefix}-{ordinal}")
    }
}

/// `["a"]`: a JSON array inside a string, as HIP-0025 reads list annotations.
#[must_use]
pub fn json_list(names: &[&str]) -> String {
    let items: Vec<String> = names
        .iter()
        .map(|n| serde_json::to_string(n).unwrap_or_default())
        .collect();
    format!("[{}]", items.join(", "))
}

/// Assigns the groups of every level that uses two or more ordinals; Jobs in a group others
/// wait for get completion readiness.
pub fn chain(model: &Model, entries: &[Entry], prefix: &str, mapping: &mut Mapping) {
    let mut by_level: BTreeMap<ChartId, Vec<&Entry>> = BTreeMap::new();
    for e in entries {
        by_level
            .entry(model.documents[e.doc].chart)
            .or_default()
            .push(e);
    }
    for (chart, level) in by_level {
        let ordinals: BTreeSet<i64> = level.iter().filter_map(|e| e.ordinal).collect();
        if ordinals.len() < 2 {
            continue;
        }
        let first = ordinals.first().copied().unwrap_or_default();
        let groups: Vec<(String, Vec<&Entry>)> = ordinals
            .iter()
            .map(|&o| {
                let members = level
                    .iter()
                    .copied()
                    .filter(|e| e.ordinal.unwrap_or(first) == o)
                    .collect();
                (group_name(prefix, o), members)
            })
            .collect();
        assign(model, chart, &groups, true, mapping);
    }
}

/// Puts each member in its group, each group depending on the one before it.
pub fn assign(
    model: &Model,
    chart: ChartId,
    groups: &[(String, Vec<&Entry>)],
    jobs_complete: bool,
    mapping: &mut Mapping,
) {
    let last = groups.len().saturating_sub(1);
    for (index, (name, members)) in groups.iter().enumerate() {
        for e in members {
            let want = mapping.want(e.doc);
            if want.anchor.is_none() {
                want.anchor = e.anchor;
            }
            want.set.push((RESOURCE_GROUP.to_owned(), name.clone()));
            if index > 0 {
                want.set.push((
                    DEPENDS_ON_GROUPS.to_owned(),
                    json_list(&[groups[index - 1].0.as_str()]),
                ));
            }
            if jobs_complete && index < last {
                job_readiness(model, e.doc, &mut want.set);
            }
        }
    }
    mapping
        .chains
        .push((chart, groups.iter().map(|(g, _)| g.clone()).collect()));
}

/// Completion readiness for a Job others wait for, unless it states its own.
pub fn job_readiness(model: &Model, doc: DocId, set: &mut Vec<(String, String)>) {
    let Some(r) = model.resource(doc) else {
        return;
    };
    if r.id.kind != "Job" || r.id.group != "batch" {
        return;
    }
    if r.seq.readiness_success.is_some() || r.seq.readiness_failure.is_some() {
        return;
    }
    set.push((READINESS_SUCCESS.to_owned(), JOB_SUCCESS.to_owned()));
    set.push((READINESS_FAILURE.to_owned(), JOB_FAILURE.to_owned()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_names_use_a_safe_alphabet() {
        assert_eq!(group_name("wave", 0), "wave-0");
        assert_eq!(group_name("wave", -5), "wave-n5");
        assert_eq!(group_name("weight", 10), "weight-10");
        assert_eq!(group_name("phase", i64::MIN), "phase-n9223372036854775808");
        assert_eq!(json_list(&["wave-0"]), r#"["wave-0"]"#);
        assert_eq!(json_list(&["db", "queue"]), r#"["db", "queue"]"#);
    }

    #[test]
    fn job_expressions_parse_as_readiness_lists() {
        for list in [JOB_SUCCESS, JOB_FAILURE] {
            let texts: Vec<String> = serde_json::from_str(list).expect("a JSON array");
            assert_eq!(texts.len(), 1);
            assert!(
                crate::readiness::expr::parse(&texts[0]).is_ok(),
                "{}",
                texts[0]
            );
        }
    }
}
