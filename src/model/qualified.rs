//! Kubernetes' rules for metadata keys and label values (apimachinery's `IsQualifiedName`,
//! `IsValidLabelValue`, `IsDNS1123Subdomain`): what the API server refuses, checked before
//! anything is applied.

/// The longest name part of a qualified name, and the longest label value.
const NAME_MAX: usize = 63;
/// The longest DNS-1123 subdomain (a qualified name's prefix).
const SUBDOMAIN_MAX: usize = 253;

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`, the name part of a key and a label value.
fn is_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    let (Some(first), Some(last)) = (b.first(), b.last()) else {
        return false;
    };
    first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// A DNS-1123 subdomain: dot-separated lowercase labels of `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
#[must_use]
pub fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= SUBDOMAIN_MAX
        && !s.is_empty()
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            matches!((b.first(), b.last()), (Some(f), Some(l))
                if (f.is_ascii_lowercase() || f.is_ascii_digit())
                    && (l.is_ascii_lowercase() || l.is_ascii_digit()))
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        })
}

/// Why the API server refuses `key` as a qualified name (`prefix/name`), if it does.
#[must_use]
pub fn qualified_name_problem(key: &str) -> Option<String> {
    let (prefix, name) = match key.split('/').collect::<Vec<_>>()[..] {
        [name] => (None, name),
        [prefix, name] => (Some(prefix), name),
        _ => {
            return Some(format!(
                "it has {} `/`; a key is an optional prefix and a name separated by one `/`",
                key.matches('/').count()
            ));
        }
    };
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            return Some("its prefix before `/` is empty".to_owned());
        }
        if !is_dns1123_subdomain(prefix) {
            return Some(format!(
                "its prefix `{prefix}` is not a DNS-1123 subdomain (lowercase letters, digits, `-` and `.`, at most {SUBDOMAIN_MAX} characters)"
            ));
        }
    }
    if name.is_empty() {
        return Some("its name is empty".to_owned());
    }
    if name.len() > NAME_MAX {
        return Some(format!(
            "its name is {} characters long, over the limit of {NAME_MAX}",
            name.len()
        ));
    }
    if !is_name_part(name) {
        return Some(format!(
            "its name `{name}` must begin and end with a letter or digit and hold only letters, digits, `-`, `_` and `.`"
        ));
    }
    None
}

/// Why the API server refuses `value` as a label value, if it does.
#[must_use]
pub fn label_value_problem(value: &str) -> Option<String> {
    if value.is_empty() {
        return None;
    }
    if value.len() > NAME_MAX {
        return Some(format!(
            "it is {} characters long, over the limit of {NAME_MAX}",
            value.len()
        ));
    }
    (!is_name_part(value)).then(|| {
        "it must begin and end with a letter or digit and hold only letters, digits, `-`, `_` and `.`".to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_judged_as_the_api_server_judges_them() {
        for ok in [
            "app",
            "helm.sh/resource-group",
            "app.kubernetes.io/name",
            "a_b.c-d",
            "x/y",
            "1",
        ] {
            assert_eq!(qualified_name_problem(ok), None, "{ok}");
        }
        for bad in [
            "helm.sh/depends-on/resource-group",
            "/name",
            "prefix/",
            "-lead",
            "trail-",
            "has space",
            "UPPER.example.com/x",
            "a..b/x",
            "",
        ] {
            assert!(qualified_name_problem(bad).is_some(), "{bad}");
        }
        assert!(qualified_name_problem(&"n".repeat(64)).is_some());
        assert_eq!(qualified_name_problem(&"n".repeat(63)), None);
        assert!(qualified_name_problem(&format!("{}/n", "p".repeat(254))).is_some());
    }

    #[test]
    fn label_values_are_judged_as_the_api_server_judges_them() {
        assert_eq!(label_value_problem(""), None);
        assert_eq!(label_value_problem("v1.2_3-x"), None);
        assert!(label_value_problem("a b").is_some());
        assert!(label_value_problem("-a").is_some());
        assert!(label_value_problem(&"v".repeat(64)).is_some());
    }
}
