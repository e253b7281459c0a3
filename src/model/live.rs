//! The readiness annotations of a **live** object (what `kubectl get -o yaml` prints, judged
//! by `chartseq readiness`), read from its JSON as Helm's reader reads them: a chart's own
//! documents are read by the loader into typed annotations, and their wait is decided once by
//! the planner ([`crate::plan::wait::hip`]).

use serde_json::Value;

use super::annotations::{AnnotationValue, HOOK, parse_name_list};
use crate::readiness::expr::Expression;
use crate::readiness::{ExprKind, KstatusOptions, Readiness, ReadinessError, parse_expressions};

/// The readiness a live object declares through its `helm.sh/readiness-*` annotations; a
/// hook's annotations are ignored ([`Readiness::for_hook`]).
pub fn readiness_of(object: &Value, options: KstatusOptions) -> Result<Readiness, ReadinessError> {
    if is_hook(object) {
        return Ok(Readiness::for_hook(options));
    }
    let success = annotation_expressions(object, ExprKind::Success)?;
    let failure = annotation_expressions(object, ExprKind::Failure)?;
    Ok(Readiness::new(success, failure, options))
}

/// The value of one annotation of an object, when it has it.
fn annotation<'a>(object: &'a Value, key: &str) -> Option<&'a Value> {
    object.get("metadata")?.get("annotations")?.get(key)
}

/// Whether an object is a Helm hook: `helm.sh/hook` is set (Helm treats the key's presence
/// so; an empty or unknown event makes Helm drop the object, never sequence it).
#[must_use]
pub fn is_hook(object: &Value) -> bool {
    annotation(object, HOOK).is_some()
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// One readiness annotation of an object read as a list of expressions; absent or blank
/// means none.
pub fn annotation_expressions(
    object: &Value,
    kind: ExprKind,
) -> Result<Vec<Expression>, ReadinessError> {
    let key = kind.annotation();
    let Some(raw) = annotation(object, key) else {
        return Ok(Vec::new());
    };
    let value = match raw {
        Value::String(s) if s.trim().is_empty() => return Ok(Vec::new()),
        Value::String(s) => AnnotationValue::Str(s.trim().to_owned()),
        other => AnnotationValue::NotString {
            what: json_kind(other),
            json: other.clone(),
        },
    };
    let texts = parse_name_list(&value).map_err(|e| {
        let hint = e
            .suggestion()
            .map(|s| format!("; write it as {s}"))
            .unwrap_or_default();
        ReadinessError {
            kind,
            index: None,
            expression: None,
            message: format!("{key}: {}{hint}", e.describe()),
        }
    })?;
    parse_expressions(kind, &texts).map_err(|mut e| {
        e.message = format!("{key}[{}]: {}", e.index.unwrap_or(0), e.message);
        e
    })
}

/// Whether a readiness annotation is set to something other than blanks.
#[must_use]
pub fn has_annotation(object: &Value, kind: ExprKind) -> bool {
    annotation(object, kind.annotation())
        .and_then(Value::as_str)
        .is_some_and(|v| !v.trim().is_empty())
}
