//! What kube-apiserver refuses before storing an object, worded as it words it (422 Invalid):
//! label and annotation keys that are not qualified names (Helm's sequencing key
//! `helm.sh/depends-on/resource-groups` among them), label values, annotations over 256 KiB,
//! and Secrets or ConfigMaps whose data is over 1 MiB (`MaxSecretSize`, which Helm's release
//! records meet on large charts).

use hyper::Response;
use serde_json::{Value, json};

use super::Body;
use super::codec::status_error;
use super::discovery::ResourceType;

/// `MaxSecretSize`, also the limit of a ConfigMap's data.
pub(super) const MAX_DATA_BYTES: usize = 1024 * 1024;
const MAX_ANNOTATIONS_BYTES: usize = 256 * 1024;

const QUALIFIED: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const QUALIFIED_EXAMPLES: &str = " (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/// One field error: its path, kind (`FieldValueInvalid`, `FieldValueTooLong`) and text.
struct FieldError {
    field: String,
    reason: &'static str,
    message: String,
}

fn name_part_ok(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

fn dns_subdomain_ok(prefix: &str) -> bool {
    prefix.len() <= 253
        && prefix.split('.').all(|l| {
            let b = l.as_bytes();
            !b.is_empty()
                && b.len() <= 63
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        })
}

/// `IsQualifiedName`: `[prefix/]name`.
fn qualified_name(key: &str) -> Vec<String> {
    let parts: Vec<&str> = key.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                return vec!["prefix part must be non-empty".to_owned()];
            }
            if !dns_subdomain_ok(prefix) {
                return vec![
                    "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".to_owned(),
                ];
            }
            name
        }
        _ => {
            return vec![format!(
                "a qualified name {QUALIFIED}{QUALIFIED_EXAMPLES} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        return vec!["name part must be non-empty".to_owned()];
    }
    let mut errs = Vec::new();
    if name.len() > 63 {
        errs.push("name part must be no more than 63 characters".to_owned());
    }
    if !name_part_ok(name) {
        errs.push(format!("name part {QUALIFIED}{QUALIFIED_EXAMPLES}"));
    }
    errs
}

fn label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 characters".to_owned());
    }
    if !value.is_empty() && !name_part_ok(value) {
        errs.push("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".to_owned());
    }
    errs
}

fn invalid(field: &str, value: &str, message: String) -> FieldError {
    FieldError {
        field: field.to_owned(),
        reason: "FieldValueInvalid",
        message: format!("Invalid value: {value:?}: {message}"),
    }
}

fn too_long(field: &str, limit: usize) -> FieldError {
    FieldError {
        field: field.to_owned(),
        reason: "FieldValueTooLong",
        message: format!("Too long: may not be more than {limit} bytes"),
    }
}

/// Bytes of a `data`-like map; `base64` when its values are base64 (Secret data, binaryData).
fn data_bytes(map: &Value, base64: bool) -> usize {
    map.as_object()
        .into_iter()
        .flatten()
        .map(|(_, v)| {
            let s = v.as_str().unwrap_or_default();
            if base64 {
                let pad = s.bytes().rev().take_while(|&b| b == b'=').count();
                s.len() / 4 * 3 - pad.min(2)
            } else {
                s.len()
            }
        })
        .sum()
}

/// Checks an object about to be stored; the 422 answer when it is invalid.
pub(super) fn validate(ty: &ResourceType, obj: &Value) -> Result<(), Response<Body>> {
    let meta = &obj["metadata"];
    let mut errors = Vec::new();
    for (k, v) in meta["labels"].as_object().into_iter().flatten() {
        for m in qualified_name(k) {
            errors.push(invalid("metadata.labels", k, m));
        }
        for m in label_value(v.as_str().unwrap_or_default()) {
            errors.push(invalid(
                "metadata.labels",
                v.as_str().unwrap_or_default(),
                m,
            ));
        }
    }
    let mut annotation_bytes = 0;
    for (k, v) in meta["annotations"].as_object().into_iter().flatten() {
        annotation_bytes += k.len() + v.as_str().map_or(0, str::len);
        for m in qualified_name(&k.to_lowercase()) {
            errors.push(invalid("metadata.annotations", k, m));
        }
    }
    if annotation_bytes > MAX_ANNOTATIONS_BYTES {
        errors.push(too_long("metadata.annotations", MAX_ANNOTATIONS_BYTES));
    }
    match (ty.group.as_str(), ty.kind.as_str()) {
        ("", "Secret") if data_bytes(&obj["data"], true) > MAX_DATA_BYTES => {
            errors.push(too_long("data", MAX_DATA_BYTES));
        }
        ("", "ConfigMap")
            if data_bytes(&obj["data"], false) + data_bytes(&obj["binaryData"], true)
                > MAX_DATA_BYTES =>
        {
            errors.push(too_long("[]", MAX_DATA_BYTES));
        }
        _ => {}
    }
    if errors.is_empty() {
        return Ok(());
    }
    let name = meta["name"].as_str().unwrap_or_default();
    let kind = if ty.group.is_empty() {
        ty.kind.clone()
    } else {
        format!("{}.{}", ty.kind, ty.group)
    };
    let texts: Vec<String> = errors
        .iter()
        .map(|e| format!("{}: {}", e.field, e.message))
        .collect();
    let joined = if texts.len() == 1 {
        texts[0].clone()
    } else {
        format!("[{}]", texts.join(", "))
    };
    let causes: Vec<Value> = errors
        .iter()
        .map(|e| json!({"reason": e.reason, "message": e.message, "field": e.field}))
        .collect();
    Err(status_error(
        422,
        "Invalid",
        &format!("{kind} \"{name}\" is invalid: {joined}"),
        json!({"name": name, "group": ty.group, "kind": ty.kind, "causes": causes}),
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn keys_are_qualified_names() {
        use super::{QUALIFIED, QUALIFIED_EXAMPLES, label_value, qualified_name};
        assert!(qualified_name("helm.sh/resource-group").is_empty());
        assert!(qualified_name("app").is_empty());
        assert!(qualified_name("app.kubernetes.io/managed-by").is_empty());
        assert_eq!(
            qualified_name("helm.sh/depends-on/resource-groups"),
            [format!(
                "a qualified name {QUALIFIED}{QUALIFIED_EXAMPLES} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )]
        );
        assert!(!qualified_name("Bad_Prefix/x").is_empty());
        assert!(!qualified_name("-x").is_empty());
        assert!(label_value("").is_empty() && label_value("1.16.0").is_empty());
        assert!(!label_value("a b").is_empty());
    }
}
