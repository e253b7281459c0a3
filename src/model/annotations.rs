//! Sequencing annotations, parsed once into typed values with their locations (SPEC §1).

use crate::parse::{Node, ScalarKind, Span};
use crate::source::{FileId, Loc};

pub const RESOURCE_GROUP: &str = "helm.sh/resource-group";
pub const DEPENDS_ON_GROUPS: &str = "helm.sh/depends-on/resource-groups";
/// The same list under the key the resource-group pull request's current code reads (one `/`,
/// a valid Kubernetes key). chartseq reads both; CS205 reports the two disagreeing.
pub const DEPENDS_ON_GROUPS_ONE_SLASH: &str = "helm.sh/depends-on-resource-groups";
pub const READINESS_SUCCESS: &str = "helm.sh/readiness-success";
pub const READINESS_FAILURE: &str = "helm.sh/readiness-failure";
pub const DEPENDS_ON_SUBCHARTS: &str = "helm.sh/depends-on/subcharts";
pub const HOOK: &str = "helm.sh/hook";
pub const HOOK_WEIGHT: &str = "helm.sh/hook-weight";
pub const HOOK_DELETE_POLICY: &str = "helm.sh/hook-delete-policy";
pub const RESOURCE_POLICY: &str = "helm.sh/resource-policy";

/// A value with where it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct Spanned<T> {
    pub value: T,
    pub loc: Loc,
}

/// A value a sequencing tool refuses or cannot read (werf, kapp and KOTS fail the deploy on
/// it; the draft plan cannot use it): its key, the value as written, why, and where.
#[derive(Clone, Debug, PartialEq)]
pub struct Rejected {
    pub key: String,
    pub value: String,
    /// Completes "… is {reason}" where a message needs it.
    pub reason: String,
    pub loc: Loc,
}

/// One `metadata.annotations` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    pub key: String,
    pub key_loc: Loc,
    pub value: AnnotationValue,
    pub value_loc: Loc,
}

/// Kubernetes requires annotation values to be strings; anything else is kept for diagnostics.
#[derive(Clone, Debug, PartialEq)]
pub enum AnnotationValue {
    Str(String),
    /// An unquoted boolean, number or null. Helm reads it as `text` (as `sigs.k8s.io/yaml`
    /// coerces scalars for a string field: `yes` → `true`, `0755` → `493`, null → empty), but
    /// the Kubernetes API rejects the object.
    Coerced {
        text: String,
        what: &'static str,
    },
    /// A YAML list or mapping: Helm cannot read the annotations at all. `json` is what it
    /// would serialize to (for suggesting the quoted form).
    NotString {
        what: &'static str,
        json: serde_json::Value,
    },
}

impl AnnotationValue {
    #[must_use]
    pub fn from_node(node: &Node) -> Self {
        if let Some(text) = node.as_str() {
            return AnnotationValue::Str(text.to_owned());
        }
        let what = node.describe();
        let text = match node.scalar_kind() {
            Some(ScalarKind::Null) => String::new(),
            Some(ScalarKind::Bool(b)) => b.to_string(),
            Some(ScalarKind::Int(i)) => i.to_string(),
            Some(ScalarKind::Float) => {
                // NOTE: Go formats these with 32-bit precision (`FormatFloat(v, 'g', -1, 32)`).
                #[expect(
                    clippy::cast_possible_truncation,
                    reason = "mirrors Go's 32-bit formatting"
                )]
                let short = node
                    .as_scalar()
                    .and_then(crate::parse::parse_float)
                    .map(|f| (f as f32).to_string());
                short.unwrap_or_default()
            }
            Some(ScalarKind::String) | None => {
                return AnnotationValue::NotString {
                    what,
                    json: node.to_json(),
                };
            }
        };
        AnnotationValue::Coerced { text, what }
    }

    /// The string Helm reads (for a coerced scalar, its coerced text).
    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            AnnotationValue::Str(s) | AnnotationValue::Coerced { text: s, .. } => Some(s),
            AnnotationValue::NotString { .. } => None,
        }
    }
}

/// Why a list annotation (a JSON array of names inside a string) is malformed.
#[derive(Clone, Debug, PartialEq)]
pub enum ListError {
    /// Written as a YAML list (or other non-string); `suggestion` is the quoted JSON form.
    NotAString {
        what: &'static str,
        suggestion: Option<String>,
    },
    /// The string is not JSON; `suggestion` is the corrected value when one can be guessed
    /// (a comma-separated list, a bare name).
    InvalidJson {
        message: String,
        suggestion: Option<String>,
    },
    /// Valid JSON but not an array of strings.
    NotAnArray { found: &'static str },
    /// An entry that is not a string, or is empty (index in the array).
    BadEntry { index: usize, reason: &'static str },
}

impl ListError {
    /// A short description for messages.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            ListError::NotAString { what, .. } => {
                format!("the value is {what}, not a string holding a JSON array")
            }
            ListError::InvalidJson { message, .. } => {
                format!("the value is not valid JSON ({message})")
            }
            ListError::NotAnArray { found } => format!("the value is JSON {found}, not an array"),
            ListError::BadEntry { index, reason } => format!("entry {index} {reason}"),
        }
    }

    /// The corrected, quoted value to write instead, when it can be guessed.
    #[must_use]
    pub fn suggestion(&self) -> Option<&str> {
        match self {
            ListError::NotAString { suggestion, .. }
            | ListError::InvalidJson { suggestion, .. } => suggestion.as_deref(),
            _ => None,
        }
    }
}

/// A list annotation: the names, or why it could not be read.
pub type NameList = Result<Vec<String>, ListError>;

/// An annotation's value as a Go tool reads it from client-go's `Unstructured`: the last
/// duplicate key wins (as YAML decoding into a map does), and when any value of the object is
/// not a string `GetAnnotations` returns nothing at all, so no key has a value.
#[must_use]
pub fn go_annotation<'a>(annotations: &'a [Annotation], key: &str) -> Option<(&'a str, Loc)> {
    if !annotations
        .iter()
        .all(|a| matches!(a.value, AnnotationValue::Str(_)))
    {
        return None;
    }
    annotations
        .iter()
        .rev()
        .find(|a| a.key == key)
        .and_then(|a| a.value.as_str().map(|v| (v, a.value_loc)))
}

/// Parses a list annotation value (SPEC §1): a JSON array of non-empty strings, in a string.
pub fn parse_name_list(value: &AnnotationValue) -> NameList {
    let text = match value {
        AnnotationValue::Str(text) | AnnotationValue::Coerced { text, .. } => text,
        AnnotationValue::NotString { what, json } => {
            let suggestion = string_array(json).map(|names| quote_json(&names));
            return Err(ListError::NotAString { what, suggestion });
        }
    };
    let parsed: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let names: Vec<String> = text
                .split(',')
                .map(|s| {
                    s.trim()
                        .trim_matches(['"', '\'', '[', ']'])
                        .trim()
                        .to_owned()
                })
                .filter(|s| !s.is_empty())
                .collect();
            let suggestion = (!names.is_empty()).then(|| quote_json(&names));
            return Err(ListError::InvalidJson {
                message: e.to_string(),
                suggestion,
            });
        }
    };
    let serde_json::Value::Array(items) = parsed else {
        return Err(ListError::NotAnArray {
            found: json_kind(&parsed),
        });
    };
    let mut names = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        match item.as_str() {
            Some("") => {
                return Err(ListError::BadEntry {
                    index,
                    reason: "is an empty string",
                });
            }
            Some(name) => names.push(name.to_owned()),
            None => {
                return Err(ListError::BadEntry {
                    index,
                    reason: "is not a string",
                });
            }
        }
    }
    Ok(names)
}

/// Parses `depends-on` of a `Chart.yaml` dependency: a plain YAML list of names.
pub fn parse_yaml_name_list(node: &Node) -> NameList {
    let Some(items) = node.as_seq() else {
        return Err(ListError::NotAnArray {
            found: node.describe(),
        });
    };
    let mut names = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        match item.as_scalar() {
            Some("") => {
                return Err(ListError::BadEntry {
                    index,
                    reason: "is an empty string",
                });
            }
            Some(name) if item.as_map().is_none() => names.push(name.to_owned()),
            _ => {
                return Err(ListError::BadEntry {
                    index,
                    reason: "is not a name",
                });
            }
        }
    }
    Ok(names)
}

fn string_array(json: &serde_json::Value) -> Option<Vec<String>> {
    match json {
        serde_json::Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().map(str::to_owned))
            .collect(),
        serde_json::Value::String(s) => Some(vec![s.clone()]),
        _ => None,
    }
}

/// `'["a", "b"]'`: the YAML-quoted JSON form of a list annotation.
#[must_use]
pub fn quote_json(names: &[String]) -> String {
    let items: Vec<String> = names
        .iter()
        .map(|n| serde_json::Value::String(n.clone()).to_string())
        .collect();
    format!("'[{}]'", items.join(", ").replace('\'', "''"))
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The HIP-0025 sequencing annotations of one resource, typed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sequencing {
    /// `helm.sh/resource-group`, when a non-empty string.
    pub group: Option<Spanned<String>>,
    /// `helm.sh/depends-on/resource-groups`, when present, else
    /// `helm.sh/depends-on-resource-groups` (see [`Sequencing::depends_on_key`]).
    pub depends_on: Option<Spanned<NameList>>,
    /// `depends_on` was read from `helm.sh/depends-on-resource-groups`.
    pub depends_on_one_slash: bool,
    /// `helm.sh/depends-on-resource-groups` when the two-`/` key is set too, for CS205.
    pub depends_on_also: Option<Spanned<NameList>>,
    /// `helm.sh/readiness-success` / `-failure`, when present.
    pub readiness_success: Option<Spanned<NameList>>,
    pub readiness_failure: Option<Spanned<NameList>>,
}

impl Sequencing {
    /// Reads the typed values from a resource's annotations.
    #[must_use]
    pub fn from_annotations(annotations: &[Annotation]) -> Self {
        let mut seq = Sequencing::default();
        for a in annotations {
            let list = || Spanned {
                value: parse_name_list(&a.value),
                loc: a.value_loc,
            };
            match a.key.as_str() {
                RESOURCE_GROUP => {
                    // NOTE: as in Helm, only the empty string means "no group"; a coerced
                    // scalar (`yes`, `1`) names the group by its coerced text.
                    seq.group = match a.value.as_str() {
                        Some(name) if !name.is_empty() => Some(Spanned {
                            value: name.to_owned(),
                            loc: a.value_loc,
                        }),
                        _ => None,
                    }
                }
                DEPENDS_ON_GROUPS => {
                    if seq.depends_on_one_slash {
                        seq.depends_on_also = seq.depends_on.take();
                        seq.depends_on_one_slash = false;
                    }
                    seq.depends_on = Some(list());
                }
                // NOTE: the HIP's key wins when both are set (CS205 reports them disagreeing).
                DEPENDS_ON_GROUPS_ONE_SLASH => {
                    if seq.depends_on.is_none() || seq.depends_on_one_slash {
                        seq.depends_on = Some(list());
                        seq.depends_on_one_slash = true;
                    } else {
                        seq.depends_on_also = Some(list());
                    }
                }
                READINESS_SUCCESS => seq.readiness_success = Some(list()),
                READINESS_FAILURE => seq.readiness_failure = Some(list()),
                _ => {}
            }
        }
        seq
    }

    /// The key `depends_on` was read from.
    #[must_use]
    pub fn depends_on_key(&self) -> &'static str {
        if self.depends_on_one_slash {
            DEPENDS_ON_GROUPS_ONE_SLASH
        } else {
            DEPENDS_ON_GROUPS
        }
    }

    /// Whether any HIP-0025 annotation is present.
    #[must_use]
    pub fn any(&self) -> bool {
        self.group.is_some()
            || self.depends_on.is_some()
            || self.readiness_success.is_some()
            || self.readiness_failure.is_some()
    }
}

/// Reads `metadata.annotations` of an object node.
#[must_use]
pub fn read_annotations(metadata: Option<&Node>, file: FileId) -> Vec<Annotation> {
    read_string_map(metadata, "annotations", file)
}

/// Reads `metadata.labels` of an object node.
#[must_use]
pub fn read_labels(metadata: Option<&Node>, file: FileId) -> Vec<Annotation> {
    read_string_map(metadata, "labels", file)
}

fn read_string_map(metadata: Option<&Node>, field: &str, file: FileId) -> Vec<Annotation> {
    let Some(entries) = metadata.and_then(|m| m.get(field)).and_then(Node::as_map) else {
        return Vec::new();
    };
    let loc = |span: Span| Loc { file, span };
    entries
        .iter()
        .filter_map(|(k, v)| {
            Some(Annotation {
                key: k.as_scalar()?.to_owned(),
                key_loc: loc(k.span),
                value: AnnotationValue::from_node(v),
                value_loc: loc(v.span),
            })
        })
        .collect()
}

/// A string annotation at one byte of file 0, for tests of the annotation readers.
#[cfg(test)]
pub(crate) fn test_annotation(key: &str, value: &str, at: u32) -> Annotation {
    let loc = Loc {
        file: FileId(0),
        span: Span {
            start: at,
            end: at + 1,
        },
    };
    Annotation {
        key: key.to_owned(),
        key_loc: loc,
        value: AnnotationValue::Str(value.to_owned()),
        value_loc: loc,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> AnnotationValue {
        AnnotationValue::Str(text.into())
    }

    #[test]
    fn list_annotations_parse_and_explain() {
        assert_eq!(
            parse_name_list(&s(r#"["db", "queue"]"#)),
            Ok(vec!["db".into(), "queue".into()])
        );
        assert_eq!(parse_name_list(&s("[]")), Ok(vec![]));
        let err = parse_name_list(&s("db, queue")).expect_err("comma list");
        assert_eq!(err.suggestion(), Some(r#"'["db", "queue"]'"#));
        let err = parse_name_list(&AnnotationValue::NotString {
            what: "a list",
            json: serde_json::json!(["db"]),
        })
        .expect_err("yaml list");
        assert_eq!(err.suggestion(), Some(r#"'["db"]'"#));
        assert!(matches!(
            parse_name_list(&s(r#"[""]"#)),
            Err(ListError::BadEntry { index: 0, .. })
        ));
        assert!(matches!(
            parse_name_list(&s(r#"{"a":1}"#)),
            Err(ListError::NotAnArray { .. })
        ));
    }
}
