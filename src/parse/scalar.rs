//! Plain-scalar typing as Kubernetes and Helm see it.
//!
//! Helm and kubectl decode YAML with go-yaml v2 (through `sigs.k8s.io/yaml`), which follows
//! YAML 1.1: `yes`, `on` and `y` are booleans and `0755` is octal. Values typed here decide,
//! for example, whether an annotation value is the string Kubernetes requires.

/// The type a plain scalar resolves to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScalarKind {
    Null,
    Bool(bool),
    Int(i64),
    Float,
    String,
}

/// Resolves an unquoted scalar.
#[must_use]
pub fn resolve_plain(text: &str) -> ScalarKind {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return ScalarKind::Null,
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return ScalarKind::Bool(true);
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return ScalarKind::Bool(false);
        }
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => return ScalarKind::Float,
        _ => {}
    }
    let first = text.as_bytes()[0];
    if !(first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.')) {
        return ScalarKind::String;
    }
    if let Some(i) = parse_int(text) {
        return ScalarKind::Int(i);
    }
    if parse_float(text).is_some() {
        return ScalarKind::Float;
    }
    ScalarKind::String
}

fn parse_int(text: &str) -> Option<i64> {
    let plain = text.replace('_', "");
    let (negative, digits) = match plain.as_bytes().first()? {
        b'-' => (true, &plain[1..]),
        b'+' => (false, &plain[1..]),
        _ => (false, plain.as_str()),
    };
    if digits.is_empty() {
        return None;
    }
    let value = if let Some(hex) = digits.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).ok()?
    } else if let Some(bin) = digits.strip_prefix("0b") {
        i64::from_str_radix(bin, 2).ok()?
    } else if digits.len() > 1
        && digits.starts_with('0')
        && digits.bytes().all(|b| b.is_ascii_digit())
    {
        i64::from_str_radix(&digits[1..], 8).ok()?
    } else if digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse::<i64>().ok()?
    } else {
        return None;
    };
    Some(if negative { -value } else { value })
}

/// A YAML 1.1 float (`1.5`, `-2e3`, `.5`), or `None`.
#[must_use]
pub fn parse_float(text: &str) -> Option<f64> {
    let plain = text.replace('_', "");
    let body = plain.trim_start_matches(['-', '+']);
    let starts_well = body.starts_with(|c: char| c.is_ascii_digit() || c == '.');
    let has_digit = body.bytes().any(|b| b.is_ascii_digit());
    let allowed = body
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'));
    if !(starts_well && has_digit && allowed) {
        return None;
    }
    plain.parse::<f64>().ok().filter(|f| f.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_like_go_yaml_v2() {
        assert_eq!(resolve_plain("yes"), ScalarKind::Bool(true));
        assert_eq!(resolve_plain("Off"), ScalarKind::Bool(false));
        assert_eq!(resolve_plain("0755"), ScalarKind::Int(0o755));
        assert_eq!(resolve_plain("0x1F"), ScalarKind::Int(31));
        assert_eq!(resolve_plain("-12"), ScalarKind::Int(-12));
        assert_eq!(resolve_plain("1.5e3"), ScalarKind::Float);
        assert_eq!(resolve_plain("="), ScalarKind::String);
        assert_eq!(resolve_plain("1.2.3"), ScalarKind::String);
        assert_eq!(resolve_plain("db"), ScalarKind::String);
        assert_eq!(resolve_plain("~"), ScalarKind::Null);
    }
}
