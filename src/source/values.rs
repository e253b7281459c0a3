//! Values as Helm merges them, and Helm's rules for enabling subcharts.
//!
//! Order: the chart's `values.yaml` (and its subcharts' under their names), then each `-f`
//! file, then `--set`/`--set-string`. Conditions and tags follow `ProcessDependencies`
//! (seed 003): tags are OR-ed, the first condition path holding a boolean decides and beats
//! tags, a missing path leaves the subchart enabled, and only a boolean `false` disables.

use std::path::PathBuf;

use serde_json::{Map, Value as Json};

use crate::error::{Error, Result};
use crate::parse::Limits;
use crate::source::chart::parse_yaml_file_with;
use crate::source::{Origin, SourceMap, display_path, read};

/// Values given on the command line.
#[derive(Clone, Debug, Default)]
pub struct ValueInputs {
    pub files: Vec<PathBuf>,
    pub set: Vec<String>,
    pub set_string: Vec<String>,
    /// Values a release already holds, taken under all of the above (Helm's reuse of a
    /// release's values on upgrade): rendered and recorded as if given first.
    pub reused: Option<Json>,
    /// Chart defaults that replace the chart's own `values.yaml` for rendering
    /// (`--reuse-values`: the previous revision's chart values); never recorded.
    pub reused_defaults: Option<Json>,
}

impl ValueInputs {
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.set.is_empty() && self.set_string.is_empty()
    }

    /// What helm must render under the user's files and flags, as one values document:
    /// the reused defaults with the reused values over them.
    #[must_use]
    pub fn reused_layer(&self) -> Option<Json> {
        if self.reused.is_none() && self.reused_defaults.is_none() {
            return None;
        }
        let mut layer = self
            .reused_defaults
            .clone()
            .unwrap_or_else(|| Json::Object(Map::new()));
        if let Some(reused) = &self.reused {
            overlay(&mut layer, reused.clone());
        }
        Some(layer)
    }
}

/// The user's values: the reused ones, then `-f` files merged in order, then `--set`, then
/// `--set-string`. Each file is held to `limits` (a file over `max_document_bytes` is refused
/// unread).
pub fn user_values(inputs: &ValueInputs, sources: &mut SourceMap, limits: Limits) -> Result<Json> {
    let mut merged = inputs
        .reused
        .clone()
        .unwrap_or_else(|| Json::Object(Map::new()));
    for path in &inputs.files {
        let name = display_path(path);
        let bytes = if path.as_os_str() == "-" {
            return Err(Error::usage(
                "values from standard input (`-f -`) are not supported; pass a file",
            ));
        } else {
            // Read through the bounded reader: a device or a FIFO (`-f /dev/zero`) is refused
            // at the same limit as a regular file, which is refused unread.
            read::file_or_error(
                path,
                limits.max_document_bytes as u64,
                &format!("values file {name}"),
                Some("--max-document-bytes"),
            )?
        };
        let id = sources.add(name.clone(), Origin::Disk, bytes);
        let Some(node) = parse_yaml_file_with(&name, id, sources, limits)? else {
            continue;
        };
        match node.to_json() {
            Json::Null => {}
            file @ Json::Object(_) => overlay(&mut merged, file),
            _ => {
                return Err(Error::invalid(format!(
                    "{name}: values must be a mapping, found {}",
                    node.describe()
                )));
            }
        }
    }
    for expr in &inputs.set {
        apply_set(&mut merged, expr, true)
            .map_err(|e| Error::usage(format!("--set {expr}: {e}")))?;
    }
    for expr in &inputs.set_string {
        apply_set(&mut merged, expr, false)
            .map_err(|e| Error::usage(format!("--set-string {expr}: {e}")))?;
    }
    Ok(merged)
}

/// Merges `top` over `base`: tables merge key by key, anything else in `top` replaces.
pub fn overlay(base: &mut Json, top: Json) {
    match (base, top) {
        (Json::Object(base), Json::Object(top)) => {
            for (key, value) in top {
                match base.get_mut(&key) {
                    Some(existing) if existing.is_object() && value.is_object() => {
                        overlay(existing, value);
                    }
                    _ => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, top) => *base = top,
    }
}

/// Fills in `defaults` under `values` where `values` has nothing (Helm's coalesce: the user's
/// values win over chart defaults).
pub fn coalesce(values: &mut Json, defaults: &Json) {
    let (Json::Object(values), Json::Object(defaults)) = (values, defaults) else {
        return;
    };
    for (key, default) in defaults {
        match values.get_mut(key) {
            None => {
                values.insert(key.clone(), default.clone());
            }
            Some(existing) if existing.is_object() && default.is_object() => {
                coalesce(existing, default);
            }
            Some(_) => {}
        }
    }
}

/// Applies one `--set` expression (`a.b=c,d[0]=e,f={x,y}`); `typed` is false for
/// `--set-string`.
fn apply_set(target: &mut Json, expr: &str, typed: bool) -> std::result::Result<(), String> {
    for assignment in split_unescaped(expr, ',', true) {
        if assignment.is_empty() {
            continue;
        }
        let (key, raw) = match find_unescaped(&assignment, '=') {
            Some(i) => (&assignment[..i], Some(&assignment[i + 1..])),
            None => (assignment.as_str(), None),
        };
        let Some(raw) = raw else {
            return Err(format!("key `{key}` has no value"));
        };
        let value = if raw.starts_with('{') && raw.ends_with('}') && raw.len() >= 2 {
            Json::Array(
                split_unescaped(&raw[1..raw.len() - 1], ',', false)
                    .iter()
                    .map(|v| scalar(v, typed))
                    .collect(),
            )
        } else {
            scalar(raw, typed)
        };
        set_path(target, key, value)?;
    }
    Ok(())
}

fn scalar(raw: &str, typed: bool) -> Json {
    let text = unescape(raw);
    if !typed {
        return Json::String(text);
    }
    match text.as_str() {
        "true" => Json::Bool(true),
        "false" => Json::Bool(false),
        "null" => Json::Null,
        _ => match text.parse::<i64>() {
            Ok(n) if text == "0" || !text.starts_with('0') => Json::from(n),
            _ => Json::String(text),
        },
    }
}

fn set_path(target: &mut Json, key: &str, value: Json) -> std::result::Result<(), String> {
    let parts = split_unescaped(key, '.', false);
    let mut cursor = target;
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let (name, index) = match part.find('[') {
            Some(open) if part.ends_with(']') => {
                let idx: usize = part[open + 1..part.len() - 1]
                    .parse()
                    .map_err(|_| format!("bad list index in `{part}`"))?;
                (unescape(&part[..open]), Some(idx))
            }
            _ => (unescape(part), None),
        };
        if name.is_empty() {
            return Err(format!("empty key in `{key}`"));
        }
        if !cursor.is_object() {
            *cursor = Json::Object(Map::new());
        }
        let Json::Object(map) = cursor else {
            unreachable!("made an object above")
        };
        let slot = map.entry(name).or_insert(Json::Null);
        let slot = match index {
            None => slot,
            Some(idx) => {
                if idx > 65_536 {
                    return Err(format!("list index {idx} is too large"));
                }
                if !slot.is_array() {
                    *slot = Json::Array(Vec::new());
                }
                let Json::Array(items) = slot else {
                    unreachable!("made an array above")
                };
                if items.len() <= idx {
                    items.resize(idx + 1, Json::Null);
                }
                &mut items[idx]
            }
        };
        if last {
            *slot = value;
            return Ok(());
        }
        cursor = slot;
    }
    Ok(())
}

fn find_unescaped(text: &str, needle: char) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == needle {
            return Some(i);
        }
    }
    None
}

/// Splits on `sep` outside escapes (and, with `braces`, outside `{…}` lists).
fn split_unescaped(text: &str, sep: char, braces: bool) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut escaped = false;
    let mut depth = 0usize;
    for c in text.chars() {
        if escaped {
            current.push('\\');
            current.push(c);
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '{' if braces => {
                depth += 1;
                current.push(c);
            }
            '}' if braces => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            c if c == sep && depth == 0 => parts.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    if escaped {
        current.push('\\');
    }
    parts.push(current);
    parts
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Helm's `Values.PathValue`: the value at a dotted path, unless it is missing or a table.
#[must_use]
pub fn path_value<'a>(values: &'a Json, path: &str) -> Option<&'a Json> {
    let mut cursor = values;
    for key in path.split('.') {
        cursor = cursor.as_object()?.get(key)?;
    }
    (!cursor.is_object()).then_some(cursor)
}

/// Decides a dependency's `enabled` flag as Helm does; `prefix` is the dotted path of the
/// parent chart below the root (`""` at the top, `"sub."` one level down).
#[must_use]
pub fn dependency_enabled(
    condition: Option<&str>,
    tags: &[String],
    values: &Json,
    prefix: &str,
) -> bool {
    let mut enabled = true;
    if let Some(table) = values.get("tags").and_then(Json::as_object) {
        let (mut has_true, mut has_false) = (false, false);
        for tag in tags {
            match table.get(tag) {
                Some(Json::Bool(true)) => has_true = true,
                Some(Json::Bool(false)) => has_false = true,
                _ => {}
            }
        }
        enabled = has_true || !has_false;
    }
    if let Some(condition) = condition {
        // NOTE: Helm trims the whole condition but not each comma-separated path, so in
        // `a.enabled, b.enabled` the second path starts with a space and never matches.
        for path in condition.trim().split(',') {
            if path.is_empty() {
                continue;
            }
            if let Some(Json::Bool(b)) = path_value(values, &format!("{prefix}{path}")) {
                enabled = *b;
                break;
            }
        }
    }
    enabled
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(expr: &str) -> Json {
        let mut v = json!({});
        apply_set(&mut v, expr, true).expect("valid");
        v
    }

    #[test]
    fn set_parses_helm_syntax() {
        assert_eq!(
            set("a.b=true,c=1,d=007,e=x"),
            json!({"a": {"b": true}, "c": 1, "d": "007", "e": "x"})
        );
        assert_eq!(
            set("l={x,y},m[1]=z"),
            json!({"l": ["x", "y"], "m": [null, "z"]})
        );
        assert_eq!(set(r"a\.b=c\,d"), json!({"a.b": "c,d"}));
    }

    #[test]
    fn conditions_follow_helm() {
        let values = json!({"db": {"enabled": false}, "cache": {"enabled": "false"}, "tags": {"front": false, "back": true}});
        assert!(!dependency_enabled(Some("db.enabled"), &[], &values, ""));
        // A string is not a boolean: ignored, so enabled.
        assert!(dependency_enabled(Some("cache.enabled"), &[], &values, ""));
        // Missing path: enabled.
        assert!(dependency_enabled(Some("nope.enabled"), &[], &values, ""));
        // First existing boolean path decides.
        assert!(!dependency_enabled(
            Some("nope.enabled,db.enabled"),
            &[],
            &values,
            ""
        ));
        // Tags are OR-ed; conditions beat tags.
        assert!(!dependency_enabled(None, &["front".into()], &values, ""));
        assert!(dependency_enabled(
            None,
            &["front".into(), "back".into()],
            &values,
            ""
        ));
        assert!(dependency_enabled(
            Some("x.on"),
            &["front".into()],
            &json!({"x": {"on": true}, "tags": {"front": false}}),
            ""
        ));
    }

    #[test]
    fn coalesce_keeps_user_values() {
        let mut user = json!({"a": {"b": 1}});
        coalesce(&mut user, &json!({"a": {"b": 2, "c": 3}, "d": 4}));
        assert_eq!(user, json!({"a": {"b": 1, "c": 3}, "d": 4}));
    }
}
