//! The sequencing keys of the draft HIP that became HIP-0025 (helm/community PR #373, the
//! "hip-9999" drafts of 2024-11 to 2025-05; DIALECTS.md §6), read as the drafts describe them.
//!
//! - `helm.sh/layer`: the layer (group) a resource belongs to.
//! - `helm.sh/dependson/layer`, `helm.sh/depends-on/layer`, `helm.sh/depends-on/layers`: the
//!   layers that must be ready first. The drafts write them as a bare name (`layer1`,
//!   `"layer1"`), a list (`["database", "queue"]`) and a list holding one comma-separated string
//!   (`["database, queue"]`), so each is read as a name or a JSON (or YAML) list of strings,
//!   each string split on commas.
//! - `helm.sh/dependson/chart`, `helm.sh/depends-on/chart`, `helm.sh/depends-on/charts`: the
//!   subcharts (of the resource's chart) that must be ready first, in the same forms.
//! - `helm.sh/weight` (the drafts' second proposal, later rejected): an integer read as Helm
//!   reads `helm.sh/hook-weight` (Go's `Atoi`; anything else counts as 0).
//! - `helm.sh/resource-ready`, `helm.sh/readiness-timeout`: readiness, which orders nothing.
//!
//! A value that is not a name or a list of names cannot be read: the draft plan refuses it.

use super::annotations::{Annotation, AnnotationValue, Rejected, Spanned};
use crate::source::Loc;

pub const LAYER: &str = "helm.sh/layer";
pub const DEPENDSON_LAYER: &str = "helm.sh/dependson/layer";
pub const DEPENDS_ON_LAYER: &str = "helm.sh/depends-on/layer";
pub const DEPENDS_ON_LAYERS: &str = "helm.sh/depends-on/layers";
pub const DEPENDSON_CHART: &str = "helm.sh/dependson/chart";
pub const DEPENDS_ON_CHART: &str = "helm.sh/depends-on/chart";
pub const DEPENDS_ON_CHARTS: &str = "helm.sh/depends-on/charts";
pub const WEIGHT: &str = "helm.sh/weight";
pub const RESOURCE_READY: &str = "helm.sh/resource-ready";
pub const READINESS_TIMEOUT: &str = "helm.sh/readiness-timeout";

const GROUPS: &str = "`helm.sh/depends-on/resource-groups`";
const SUBCHARTS: &str = "`depends-on` in Chart.yaml dependencies (or the `helm.sh/depends-on/subcharts` chart annotation)";

/// Every draft key on a resource, with what HIP-0025 replaced it by.
pub const SUPERSEDED: [(&str, &str); 10] = [
    (LAYER, "`helm.sh/resource-group`"),
    (DEPENDSON_LAYER, GROUPS),
    (DEPENDS_ON_LAYER, GROUPS),
    (DEPENDS_ON_LAYERS, GROUPS),
    (DEPENDSON_CHART, SUBCHARTS),
    (DEPENDS_ON_CHART, SUBCHARTS),
    (DEPENDS_ON_CHARTS, SUBCHARTS),
    (
        WEIGHT,
        "resource groups with `helm.sh/depends-on/resource-groups` (weights are gone)",
    ),
    (
        RESOURCE_READY,
        "the pair `helm.sh/readiness-success` and `helm.sh/readiness-failure`",
    ),
    (READINESS_TIMEOUT, "the `--readiness-timeout` flag"),
];

const LAYER_LISTS: [&str; 3] = [DEPENDSON_LAYER, DEPENDS_ON_LAYER, DEPENDS_ON_LAYERS];
const CHART_LISTS: [&str; 3] = [DEPENDSON_CHART, DEPENDS_ON_CHART, DEPENDS_ON_CHARTS];

/// A layer or subchart a resource waits for.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    pub name: String,
    /// The key that names it.
    pub key: &'static str,
    /// The value that names it.
    pub loc: Loc,
}

/// Everything the drafts read from one resource to order it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Draft {
    /// `helm.sh/layer`, when a non-empty string.
    pub layer: Option<Spanned<String>>,
    /// Layers to wait for, each at the value that names it, without duplicates.
    pub depends_on_layers: Vec<Reference>,
    /// Subcharts to wait for, each at the value that names it, without duplicates.
    pub depends_on_charts: Vec<Reference>,
    /// `helm.sh/weight` as an integer (0 when it is not one), at its value.
    pub weight: Option<Spanned<i64>>,
    /// The weight as written when it is not an integer (counted as 0).
    pub invalid_weight: Option<Spanned<String>>,
    /// `helm.sh/resource-ready` and `helm.sh/readiness-timeout`, as written.
    pub resource_ready: Option<Spanned<String>>,
    pub readiness_timeout: Option<Spanned<String>>,
    pub rejected: Vec<Rejected>,
}

impl Draft {
    #[must_use]
    pub fn read(annotations: &[Annotation]) -> Self {
        let mut draft = Draft::default();
        for a in annotations {
            let key = a.key.as_str();
            let text = || Spanned {
                value: a.value.as_str().unwrap_or_default().to_owned(),
                loc: a.value_loc,
            };
            if key == LAYER {
                draft.layer = match &a.value {
                    AnnotationValue::NotString { .. } => {
                        draft.reject(a, "not a layer name");
                        None
                    }
                    v => v.as_str().filter(|s| !s.is_empty()).map(|name| Spanned {
                        value: name.to_owned(),
                        loc: a.value_loc,
                    }),
                };
            } else if let Some(&list_key) =
                LAYER_LISTS.iter().chain(&CHART_LISTS).find(|k| **k == key)
            {
                let Some(names) = names(&a.value) else {
                    draft.reject(a, "not a name or a list of names");
                    continue;
                };
                let list = if LAYER_LISTS.contains(&key) {
                    &mut draft.depends_on_layers
                } else {
                    &mut draft.depends_on_charts
                };
                for name in names {
                    if !list.iter().any(|n| n.name == name) {
                        list.push(Reference {
                            name,
                            key: list_key,
                            loc: a.value_loc,
                        });
                    }
                }
            } else if key == WEIGHT {
                let raw = a.value.as_str().unwrap_or_default();
                let value = super::argo::atoi(raw);
                if value.is_none() {
                    draft.invalid_weight = Some(text());
                }
                draft.weight = Some(Spanned {
                    value: value.unwrap_or(0),
                    loc: a.value_loc,
                });
            } else if key == RESOURCE_READY {
                draft.resource_ready = Some(text());
            } else if key == READINESS_TIMEOUT {
                draft.readiness_timeout = Some(text());
            }
        }
        draft
    }

    fn reject(&mut self, a: &Annotation, reason: &'static str) {
        let value = match &a.value {
            AnnotationValue::NotString { json, .. } => json.to_string(),
            v => v.as_str().unwrap_or_default().to_owned(),
        };
        self.rejected.push(Rejected {
            key: a.key.clone(),
            value,
            reason: reason.to_owned(),
            loc: a.value_loc,
        });
    }

    /// Whether the resource carries any ordering key of the drafts.
    #[must_use]
    pub fn orders(&self) -> bool {
        self.layer.is_some()
            || !self.depends_on_layers.is_empty()
            || !self.depends_on_charts.is_empty()
            || self.weight.is_some()
    }
}

/// A name, or a list of names, each split on commas and trimmed; `None` when unreadable.
fn names(value: &AnnotationValue) -> Option<Vec<String>> {
    let items: Vec<String> = match value {
        AnnotationValue::NotString { json, .. } => strings(json)?,
        v => {
            let text = v.as_str()?;
            if text.trim_start().starts_with('[') {
                strings(&serde_json::from_str(text).ok()?)?
            } else {
                vec![text.to_owned()]
            }
        }
    };
    Some(
        items
            .iter()
            .flat_map(|item| item.split(','))
            .map(|name| name.trim().trim_matches(['"', '\'']).trim().to_owned())
            .filter(|name| !name.is_empty())
            .collect(),
    )
}

fn strings(json: &serde_json::Value) -> Option<Vec<String>> {
    json.as_array()?
        .iter()
        .map(|item| item.as_str().map(str::to_owned))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::annotations::test_annotation as ann;

    fn values(list: &[Reference]) -> Vec<&str> {
        list.iter().map(|n| n.name.as_str()).collect()
    }

    #[test]
    fn every_form_the_drafts_write_is_read() {
        // hip-9999 of 2024-11-27: a bare name per key.
        let d = Draft::read(&[
            ann(LAYER, "layer3", 1),
            ann(DEPENDSON_LAYER, "layer1", 2),
            ann(DEPENDSON_CHART, "someChartDependency", 3),
        ]);
        assert_eq!(d.layer.map(|l| l.value), Some("layer3".to_owned()));
        assert_eq!(values(&d.depends_on_layers), ["layer1"]);
        assert_eq!(values(&d.depends_on_charts), ["someChartDependency"]);
        // 2025-04: one string with a comma in a list; a quoted bare name; both keys merged.
        let d = Draft::read(&[
            ann(DEPENDS_ON_LAYERS, r#"["database, queue"]"#, 1),
            ann(DEPENDS_ON_LAYER, "\"queue\"", 2),
        ]);
        assert_eq!(values(&d.depends_on_layers), ["database", "queue"]);
        let mut yaml_list = ann(DEPENDS_ON_LAYERS, "", 1);
        yaml_list.value = AnnotationValue::NotString {
            what: "a list",
            json: serde_json::json!(["database, queue"]),
        };
        let d = Draft::read(&[yaml_list]);
        assert_eq!(values(&d.depends_on_layers), ["database", "queue"]);
        assert!(d.rejected.is_empty() && d.orders());
    }

    #[test]
    fn weights_are_read_as_hook_weights() {
        let d = Draft::read(&[ann(WEIGHT, "-2", 1)]);
        assert_eq!(d.weight.map(|w| w.value), Some(-2));
        let d = Draft::read(&[ann(WEIGHT, "heavy", 1)]);
        assert_eq!(d.weight.map(|w| w.value), Some(0));
        assert_eq!(d.invalid_weight.map(|w| w.value), Some("heavy".to_owned()));
        assert!(!Draft::read(&[ann(RESOURCE_READY, "status.succeeded==1", 1)]).orders());
    }

    #[test]
    fn unreadable_values_are_rejected_where_written() {
        for (key, value) in [(DEPENDS_ON_LAYERS, "[1, 2]"), (DEPENDS_ON_CHARTS, "[\"a\"")] {
            let d = Draft::read(&[ann(key, value, 7)]);
            assert_eq!(d.rejected.len(), 1, "{value}");
            assert_eq!(d.rejected[0].loc.span.start, 7);
        }
    }
}
