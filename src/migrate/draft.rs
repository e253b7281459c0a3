//! The draft HIP's keys → HIP-0025 (DIALECTS.md §6 and the draft rows of §7.3), read from the
//! annotations.
//!
//! - `helm.sh/layer` is renamed `helm.sh/resource-group`.
//! - `helm.sh/dependson/layer`, `helm.sh/depends-on/layer(s)` become
//!   `helm.sh/depends-on/resource-groups`, rewritten as a JSON array inside a string (a YAML
//!   list, a comma-separated string and a bare name are all read).
//! - `helm.sh/weight` (the rejected proposal) becomes the level's `weight-N` chain.
//! - `helm.sh/resource-ready: "status.x==1"` becomes a readiness pair.
//! - A resource's chart dependency (`helm.sh/dependson/chart`, `depends-on/chart(s)`) belongs
//!   in `Chart.yaml` (a manual edit); `helm.sh/readiness-timeout` has no per-resource form.
//!
//! chartseq has no planner for the draft: the mapping states its constraints (a layer before
//! the resources that depend on it, a weight before the next) for the proof.

use std::collections::{BTreeMap, BTreeSet};

use super::ordinal::{self, Entry};
use super::{Lost, Manual, Mapping, Res};
use crate::model::annotations::{
    AnnotationValue, DEPENDS_ON_GROUPS, READINESS_FAILURE, READINESS_SUCCESS, RESOURCE_GROUP,
};
use crate::model::{ChartId, DocId, Model, Placement};

use crate::model::draft::{
    DEPENDS_ON_CHART, DEPENDS_ON_CHARTS, DEPENDS_ON_LAYER, DEPENDS_ON_LAYERS, DEPENDSON_CHART,
    DEPENDSON_LAYER, LAYER, READINESS_TIMEOUT, RESOURCE_READY, WEIGHT,
};

const DEPENDS: [&str; 3] = [DEPENDSON_LAYER, DEPENDS_ON_LAYER, DEPENDS_ON_LAYERS];
const CHART_DEPENDS: [&str; 3] = [DEPENDSON_CHART, DEPENDS_ON_CHART, DEPENDS_ON_CHARTS];

/// The names a draft list value holds: a JSON array (in a string or as a YAML list), a
/// comma-separated string, or one bare name.
fn names(value: &AnnotationValue) -> Vec<String> {
    let from_json = |v: &serde_json::Value| {
        v.as_array().map(|items| {
            items
                .iter()
                .filter_map(|i| i.as_str().map(|s| s.trim().to_owned()))
                .collect::<Vec<_>>()
        })
    };
    let list = match value {
        AnnotationValue::NotString { json, .. } => from_json(json).unwrap_or_default(),
        other => {
            let text = other.as_str().unwrap_or_default();
            match serde_json::from_str::<serde_json::Value>(text) {
                Ok(v) if v.is_array() => from_json(&v).unwrap_or_default(),
                _ => text.split(',').map(|s| s.trim().to_owned()).collect(),
            }
        }
    };
    // A JSON array may hold one comma-separated string (`["database, queue"]`).
    list.iter()
        .flat_map(|s| s.split(','))
        .map(|s| s.trim().trim_matches(['"', '\'']).to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// `status.succeeded==1` (or `{.succeeded} == 1`) as a HIP-0025 expression.
fn expression(text: &str) -> Option<String> {
    let text = text.trim();
    let (op, at) = ["==", "!=", ">=", "<=", ">", "<"]
        .iter()
        .filter_map(|op| text.find(op).map(|i| (*op, i)))
        .min_by_key(|(op, i)| (*i, std::cmp::Reverse(op.len())))?;
    let path = text[..at]
        .trim()
        .trim_start_matches('{')
        .trim_end_matches('}');
    let path = path.trim_start_matches('.');
    let path = path.strip_prefix("status.").unwrap_or(path);
    let value = text[at + op.len()..].trim();
    if path.is_empty() || value.is_empty() {
        return None;
    }
    let expr = format!("{{.{path}}} {op} {value}");
    crate::readiness::expr::parse(&expr).ok().map(|_| expr)
}

/// Maps a chart ordered with the draft HIP's keys.
#[must_use]
pub fn map(model: &Model, _plan: &crate::plan::Plan) -> Mapping {
    let mut mapping = Mapping::default();
    let mut layers: BTreeMap<(ChartId, String), Vec<DocId>> = BTreeMap::new();
    let mut depends: Vec<(DocId, Vec<String>)> = Vec::new();
    let mut weighted: Vec<Entry> = Vec::new();
    let mut any_weight: BTreeSet<ChartId> = BTreeSet::new();
    for (doc, d) in model.documents.iter().enumerate() {
        let Some(r) = model.resource(doc) else {
            continue;
        };
        if d.placement != Placement::Template || r.hook.is_some() {
            continue;
        }
        let keys: Vec<&str> = [LAYER, WEIGHT, RESOURCE_READY]
            .iter()
            .chain(DEPENDS.iter())
            .copied()
            .filter(|k| r.annotation(k).is_some())
            .collect();
        let anchor = keys
            .first()
            .and_then(|k| r.annotation(k))
            .or_else(|| r.annotation(READINESS_TIMEOUT))
            .map(|a| a.key_loc);
        let me = Res::of(model, doc);
        let mut set = Vec::new();
        let layer = r
            .annotation(LAYER)
            .and_then(|a| a.value.as_str())
            .map(str::trim)
            .filter(|l| !l.is_empty());
        if let Some(layer) = layer {
            set.push((RESOURCE_GROUP.to_owned(), layer.to_owned()));
            layers
                .entry((d.chart, layer.to_owned()))
                .or_default()
                .push(doc);
        }
        if let Some(a) = DEPENDS.iter().find_map(|k| r.annotation(k)) {
            let list = names(&a.value);
            if !list.is_empty() {
                let refs: Vec<&str> = list.iter().map(String::as_str).collect();
                set.push((DEPENDS_ON_GROUPS.to_owned(), ordinal::json_list(&refs)));
                depends.push((doc, list));
            }
        }
        if let Some(a) = r.annotation(RESOURCE_READY) {
            let text = a.value.as_str().unwrap_or_default();
            match expression(text) {
                Some(expr) => {
                    set.push((
                        READINESS_SUCCESS.to_owned(),
                        ordinal::json_list(&[expr.as_str()]),
                    ));
                    set.push((
                        READINESS_FAILURE.to_owned(),
                        super::kots::FAILED_CONDITION.to_owned(),
                    ));
                }
                None => mapping.manual.push(Manual {
                    doc,
                    at: Some(a.key_loc),
                    reason: format!(
                        "{RESOURCE_READY} `{text}` is not a `path op value` comparison: write the readiness pair by hand"
                    ),
                    snippet: "helm.sh/readiness-success: '[\"{.x} == 1\"]'\nhelm.sh/readiness-failure: '[\"{.y} == 1\"]'".to_owned(),
                }),
            }
        }
        if let Some(a) = CHART_DEPENDS.iter().find_map(|k| r.annotation(k)) {
            mapping.manual.push(Manual {
                doc,
                at: Some(a.key_loc),
                reason: format!(
                    "{}: HIP-0025 orders subcharts in Chart.yaml, for the whole chart, not per resource",
                    a.key
                ),
                snippet: format!(
                    "annotations:\n  helm.sh/depends-on/subcharts: '{}'",
                    ordinal::json_list(
                        &names(&a.value).iter().map(String::as_str).collect::<Vec<_>>()
                    )
                ),
            });
        }
        if let (Some(_), Some(me)) = (r.annotation(READINESS_TIMEOUT), &me) {
            mapping.lost.push(Lost {
                before: me.clone(),
                after: me.clone(),
                reason: format!(
                    "{READINESS_TIMEOUT}: HIP-0025 has one --readiness-timeout for every wait"
                ),
            });
        }
        let carried: Vec<_> = r
            .annotations
            .iter()
            .filter(|a| {
                let k = a.key.as_str();
                k == LAYER || k == WEIGHT || k == RESOURCE_READY || DEPENDS.contains(&k)
            })
            .map(|a| a.key_loc)
            .collect();
        let want = mapping.want(doc);
        want.carried = carried;
        if !set.is_empty() {
            want.anchor = anchor;
            want.set = set;
        }
        // A resource with neither a layer nor a weight is unsequenced in the draft, as in
        // HIP-0025 (deployed after every group): it stays without a group.
        if layer.is_none()
            && let Some(weight) = &r.draft.weight
        {
            any_weight.insert(d.chart);
            weighted.push(Entry {
                doc,
                ordinal: Some(weight.value),
                anchor,
            });
        }
    }
    mapping
        .wants
        .retain(|_, w| !w.set.is_empty() || !w.carried.is_empty());
    weighted.retain(|e| any_weight.contains(&model.documents[e.doc].chart));
    // Weight constraints: each weight before the next, per level.
    let mut by_level: BTreeMap<ChartId, BTreeMap<i64, Vec<DocId>>> = BTreeMap::new();
    for e in &weighted {
        by_level
            .entry(model.documents[e.doc].chart)
            .or_default()
            .insert(e.ordinal.unwrap_or(0), Vec::new());
    }
    for e in &weighted {
        if let Some(list) = by_level
            .get_mut(&model.documents[e.doc].chart)
            .and_then(|l| l.get_mut(&e.ordinal.unwrap_or(0)))
        {
            list.push(e.doc);
        }
    }
    for weights in by_level.values() {
        let tiers: Vec<&Vec<DocId>> = weights.values().collect();
        for pair in tiers.windows(2) {
            for &a in pair[0] {
                for &b in pair[1] {
                    mapping.constraints.push((a, b));
                }
            }
        }
    }
    ordinal::chain(model, &weighted, "weight", &mut mapping);
    // Layer constraints: every member of a layer before the resources that depend on it.
    for (doc, list) in depends {
        let chart = model.documents[doc].chart;
        for layer in list {
            for &a in layers.get(&(chart, layer)).into_iter().flatten() {
                mapping.constraints.push((a, doc));
            }
        }
    }
    mapping
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draft_values_are_read_in_every_written_form() {
        let s = |t: &str| AnnotationValue::Str(t.to_owned());
        assert_eq!(names(&s(r#"["db", "queue"]"#)), ["db", "queue"]);
        assert_eq!(names(&s("database, queue")), ["database", "queue"]);
        assert_eq!(names(&s(r#"["database, queue"]"#)), ["database", "queue"]);
        assert_eq!(names(&s("layer1")), ["layer1"]);
        assert_eq!(
            expression("status.succeeded==1").as_deref(),
            Some("{.succeeded} == 1")
        );
        assert_eq!(
            expression("succeeded>=1").as_deref(),
            Some("{.succeeded} >= 1")
        );
        assert_eq!(expression("ready"), None);
    }
}
