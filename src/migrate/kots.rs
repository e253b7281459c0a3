//! KOTS → HIP-0025 (DIALECTS.md §4 and §7.2–7.3, the KOTS rows), read from the annotations.
//!
//! KOTS applies its manifests one at a time: by `kots.io/creation-phase` (an integer; missing
//! or not one: 0), then its kind order, and right after a resource with
//! `kots.io/wait-for-ready: "true"` or `kots.io/wait-for-properties` it waits for that one
//! resource, holding back everything applied after it. Phases alone do not wait.
//!
//! Per chart level: one group per phase (`phase-n1`, `phase-0`), split after each waited
//! resource (`phase-0-after-<name>` holds what KOTS applies after it in that phase), chained.
//! A `wait-for-properties` with one `.status` pair becomes a readiness pair; several pairs are
//! AND-ed in KOTS and OR-ed in HIP-0025 (the first is kept, the rest reported lost), a path
//! outside `.status` cannot be read by HIP-0025 (lost). HIP-0025 waits for every group others
//! depend on, where KOTS waited only where annotated: those waits are reported as stricter.

use std::collections::BTreeMap;

use super::ordinal::{self, Entry};
use super::{Lost, Mapping, Res, Stricter};
use crate::model::annotations::{READINESS_FAILURE, READINESS_SUCCESS};
use crate::model::{ChartId, DocId, Model, Placement};

use crate::model::kots::{CREATION_PHASE, DELETION_PHASE, WAIT_FOR_PROPERTIES, WAIT_FOR_READY};

/// The failure expression of a readiness pair made from a KOTS wait (KOTS has none): a
/// `Failed` condition, which never holds on objects that do not report one.
pub const FAILED_CONDITION: &str = r#"["{.conditions[?(@.type==\"Failed\")].status} == True"]"#;

/// A name in the group alphabet: lower-case letters, digits and `-`.
fn sanitize(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    out.truncate(40);
    out.trim_matches('-').to_owned()
}

/// One resource as KOTS orders it.
struct Placed {
    doc: DocId,
    phase: i64,
    waited: bool,
}

/// Maps a KOTS-ordered chart.
#[must_use]
pub fn map(model: &Model, _plan: &crate::plan::Plan) -> Mapping {
    let mut mapping = Mapping::default();
    let mut by_level: BTreeMap<ChartId, Vec<Placed>> = BTreeMap::new();
    let mut deletion: Vec<(DocId, i64)> = Vec::new();
    let mut any_deletion_phase = false;
    for (doc, d) in model.documents.iter().enumerate() {
        let Some(r) = model.resource(doc) else {
            continue;
        };
        if d.placement != Placement::Template || r.hook.is_some() {
            continue;
        }
        // Phases and waits as KOTS reads them (the model).
        let phase = r.kots.creation_phase.value;
        let waited = r.kots.wait_for_ready || !r.kots.wait_for_properties.is_empty();
        let carried: Vec<_> = r
            .annotations
            .iter()
            .filter(|a| {
                [CREATION_PHASE, WAIT_FOR_READY, WAIT_FOR_PROPERTIES].contains(&a.key.as_str())
            })
            .map(|a| a.key_loc)
            .collect();
        if !carried.is_empty() {
            mapping.want(doc).carried = carried;
        }
        let me = Res::of(model, doc);
        any_deletion_phase |= r.kots.deletion_phase.written.is_some();
        deletion.push((doc, r.kots.deletion_phase.value));
        if let (false, Some(me)) = (r.kots.wait_for_properties.is_empty(), &me) {
            let pairs: Vec<(&str, &str)> = r
                .kots
                .wait_for_properties
                .iter()
                .map(|p| (p.path.value.as_str(), p.value.value.as_str()))
                .collect();
            properties(doc, &pairs, me, &mut mapping);
        }
        by_level
            .entry(d.chart)
            .or_default()
            .push(Placed { doc, phase, waited });
    }
    // KOTS deletes phase by phase, ascending, each gone before the next: uninstall orders the
    // proof checks against HIP-0025's uninstall (the reverse of the migrated install order).
    if any_deletion_phase {
        for &(a, pa) in &deletion {
            for &(b, pb) in &deletion {
                if pa < pb {
                    mapping
                        .delete_constraints
                        .push((a, b, DELETION_PHASE.to_owned()));
                }
            }
        }
    }
    for (chart, mut level) in by_level {
        // KOTS's own kind order (the planner's), not Helm's: KOTS does not list the webhook
        // configurations, so they sort among the kinds it does not know, by name.
        level.sort_by_key(|p| {
            let kind = model.resource(p.doc).map_or("", |r| r.id.kind.as_str());
            let (rank, name) = crate::plan::kots::kind_key(kind);
            (p.phase, rank, name.to_owned(), p.doc)
        });
        let mut segments: Vec<(String, Vec<&Placed>)> = Vec::new();
        let mut current_phase = None;
        for p in &level {
            if current_phase != Some(p.phase) {
                current_phase = Some(p.phase);
                segments.push((ordinal::group_name("phase", p.phase), Vec::new()));
            }
            let close = p.waited;
            if let Some(seg) = segments.last_mut() {
                seg.1.push(p);
            }
            if close {
                let name = model
                    .resource(p.doc)
                    .map_or(String::new(), |r| sanitize(&r.id.name));
                segments.push((
                    format!("{}-after-{name}", ordinal::group_name("phase", p.phase)),
                    Vec::new(),
                ));
            }
        }
        segments.retain(|(_, members)| !members.is_empty());
        if segments.len() < 2 {
            continue;
        }
        for pair in segments.windows(2) {
            for a in &pair[0].1 {
                for b in &pair[1].1 {
                    mapping.constraints.push((a.doc, b.doc));
                }
            }
        }
        let last = segments.len() - 1;
        for (i, (group, members)) in segments.iter().enumerate() {
            if i == last {
                continue;
            }
            for p in members.iter().filter(|p| !p.waited) {
                if let Some(res) = Res::of(model, p.doc) {
                    mapping.stricter.push(Stricter {
                        resource: res,
                        reason: format!(
                            "HIP-0025 waits for it to be ready before the group after {group}; KOTS only ordered the API calls"
                        ),
                    });
                }
            }
        }
        let entries: Vec<Vec<Entry>> = segments
            .iter()
            .map(|(_, members)| {
                members
                    .iter()
                    .map(|p| Entry {
                        doc: p.doc,
                        ordinal: Some(p.phase),
                        anchor: anchor(model, p.doc),
                    })
                    .collect()
            })
            .collect();
        let groups: Vec<(String, Vec<&Entry>)> = segments
            .iter()
            .zip(&entries)
            .map(|((name, _), es)| (name.clone(), es.iter().collect()))
            .collect();
        ordinal::assign(model, chart, &groups, false, &mut mapping);
    }
    mapping
}

/// The KOTS annotation the new lines go next to.
fn anchor(model: &Model, doc: DocId) -> Option<crate::source::Loc> {
    let r = model.resource(doc)?;
    [CREATION_PHASE, WAIT_FOR_READY, WAIT_FOR_PROPERTIES]
        .iter()
        .find_map(|k| r.annotation(k))
        .map(|a| a.key_loc)
}

/// `kots.io/wait-for-properties`: `path=value` pairs (as the model read them), all of which
/// must match. One pair under `.status` is a readiness pair; the rest is reported.
fn properties(doc: DocId, pairs: &[(&str, &str)], me: &Res, mapping: &mut Mapping) {
    let lose = |mapping: &mut Mapping, reason: String| {
        mapping.lost.push(Lost {
            before: me.clone(),
            after: me.clone(),
            reason,
        });
    };
    let usable: Vec<&(&str, &str)> = pairs
        .iter()
        .filter(|(path, v)| path.starts_with(".status.") && !v.is_empty() && !v.contains(' '))
        .collect();
    for (path, _) in pairs.iter().filter(|(p, _)| !p.starts_with(".status.")) {
        lose(
            mapping,
            format!(
                "{WAIT_FOR_PROPERTIES}: `{path}` is outside `.status`, which HIP-0025 readiness cannot read"
            ),
        );
    }
    let Some((path, v)) = usable.first() else {
        return;
    };
    if pairs.len() > 1 {
        lose(
            mapping,
            format!(
                "{WAIT_FOR_PROPERTIES}: KOTS waits until every pair matches, HIP-0025 until any success expression holds: only `{path}={v}` is kept"
            ),
        );
    }
    let success = ordinal::json_list(&[format!("{{{path}}} == {v}").as_str()]);
    let want = mapping.want(doc);
    want.set.push((READINESS_SUCCESS.to_owned(), success));
    want.set
        .push((READINESS_FAILURE.to_owned(), FAILED_CONDITION.to_owned()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_expressions() {
        assert_eq!(sanitize("My_DB.primary"), "my-db-primary");
        let texts: Vec<String> = serde_json::from_str(FAILED_CONDITION).expect("a JSON array");
        assert!(crate::readiness::expr::parse(&texts[0]).is_ok());
        assert!(crate::readiness::expr::parse("{.status.ready} == true").is_ok());
    }
}
