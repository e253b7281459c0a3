//! Object names and namespaces, checked as the API server checks them, before any request.
//!
//! Every name and namespace ends up in a request's URL path. The API server accepts, for every
//! kind, only names that are valid path segments (not `.` or `..`, no `/` or `%`; client-go,
//! and so helm, refuses the others before sending anything), and for most kinds only a
//! DNS-1123 subdomain; a namespace is always a DNS-1123 label (apimachinery's
//! `ValidateNamespaceName`, `NameIsDNSSubdomain`, `NameIsDNSLabel`, `NameIsDNS1035Label`,
//! `IsValidPathSegmentName`). A kind chartseq does not know (a custom or aggregated resource)
//! is held to the path-segment rule only, which every server applies: what its own server
//! accepts beyond that is for it to decide, and [`segment`] keeps anything else from changing
//! the URL.

use std::borrow::Cow;
use std::fmt::Write as _;

/// What a kind's names must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Lowercase letters, digits, `-` and `.`, at most 253 characters (most kinds).
    Subdomain,
    /// One label: lowercase letters, digits and `-`, at most 63 characters (Namespace).
    Label,
    /// One label starting with a letter (Service).
    Label1035,
    /// Any valid path segment (RBAC kinds, kinds chartseq does not know).
    PathSegment,
}

/// Built-in kinds by API group: their name rule and whether they are namespaced.
const KINDS: &[(&str, &str, Rule, bool)] = &[
    ("", "Namespace", Rule::Label, false),
    ("", "Service", Rule::Label1035, true),
    ("", "ConfigMap", Rule::Subdomain, true),
    ("", "Secret", Rule::Subdomain, true),
    ("", "Pod", Rule::Subdomain, true),
    ("", "PodTemplate", Rule::Subdomain, true),
    ("", "ServiceAccount", Rule::Subdomain, true),
    ("", "PersistentVolumeClaim", Rule::Subdomain, true),
    ("", "PersistentVolume", Rule::Subdomain, false),
    ("", "ReplicationController", Rule::Subdomain, true),
    ("", "Endpoints", Rule::Subdomain, true),
    ("", "LimitRange", Rule::Subdomain, true),
    ("", "ResourceQuota", Rule::Subdomain, true),
    ("", "Node", Rule::Subdomain, false),
    ("apps", "Deployment", Rule::Subdomain, true),
    ("apps", "StatefulSet", Rule::Subdomain, true),
    ("apps", "DaemonSet", Rule::Subdomain, true),
    ("apps", "ReplicaSet", Rule::Subdomain, true),
    ("apps", "ControllerRevision", Rule::Subdomain, true),
    ("batch", "Job", Rule::Subdomain, true),
    ("batch", "CronJob", Rule::Subdomain, true),
    ("networking.k8s.io", "Ingress", Rule::Subdomain, true),
    ("networking.k8s.io", "NetworkPolicy", Rule::Subdomain, true),
    ("networking.k8s.io", "IngressClass", Rule::Subdomain, false),
    ("policy", "PodDisruptionBudget", Rule::Subdomain, true),
    (
        "autoscaling",
        "HorizontalPodAutoscaler",
        Rule::Subdomain,
        true,
    ),
    ("storage.k8s.io", "StorageClass", Rule::Subdomain, false),
    ("storage.k8s.io", "CSIDriver", Rule::Subdomain, false),
    ("scheduling.k8s.io", "PriorityClass", Rule::Subdomain, false),
    ("coordination.k8s.io", "Lease", Rule::Subdomain, true),
    (
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        Rule::Subdomain,
        false,
    ),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        Rule::Subdomain,
        false,
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
        Rule::Subdomain,
        false,
    ),
    // RBAC names are path segments only (`system:controller:...`).
    ("rbac.authorization.k8s.io", "Role", Rule::PathSegment, true),
    (
        "rbac.authorization.k8s.io",
        "RoleBinding",
        Rule::PathSegment,
        true,
    ),
    (
        "rbac.authorization.k8s.io",
        "ClusterRole",
        Rule::PathSegment,
        false,
    ),
    (
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        Rule::PathSegment,
        false,
    ),
];

fn known(group: &str, kind: &str) -> Option<(Rule, bool)> {
    KINDS
        .iter()
        .find(|(g, k, _, _)| *g == group && *k == kind)
        .map(|(_, _, rule, namespaced)| (*rule, *namespaced))
}

/// Why `name` is not a valid path segment, if it is not.
fn path_segment(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("it is empty (helm does not support generateName)".to_owned());
    }
    if name == "." || name == ".." {
        return Some(format!("{name:?} may not be a name"));
    }
    for bad in ['/', '%'] {
        if name.contains(bad) {
            return Some(format!("it may not contain {bad:?}"));
        }
    }
    if name.chars().any(char::is_control) {
        return Some("it may not contain control characters".to_owned());
    }
    None
}

/// One DNS label of at most `max` characters.
fn label_ok(label: &str, first_letter: bool, max: usize) -> bool {
    let b = label.as_bytes();
    !b.is_empty()
        && b.len() <= max
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && (b[0].is_ascii_lowercase() || (!first_letter && b[0].is_ascii_digit()))
        && b[b.len() - 1] != b'-'
}

/// Why `name` breaks `rule`, if it does.
fn broken(rule: Rule, name: &str) -> Option<String> {
    if let Some(why) = path_segment(name) {
        return Some(why);
    }
    let ok = match rule {
        Rule::PathSegment => true,
        Rule::Label => label_ok(name, false, 63),
        Rule::Label1035 => label_ok(name, true, 63),
        Rule::Subdomain => crate::model::qualified::is_dns1123_subdomain(name),
    };
    (!ok).then(|| {
        match rule {
            Rule::Label => "it must be a lowercase RFC 1123 label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit",
            Rule::Label1035 => "it must be a lowercase RFC 1035 label: at most 63 lowercase letters, digits and '-', starting with a letter and ending with a letter or digit",
            Rule::Subdomain | Rule::PathSegment => "it must be a lowercase RFC 1123 subdomain: at most 253 lowercase letters, digits, '-' and '.', each part starting and ending with a letter or digit",
        }
        .to_owned()
    })
}

/// Why `namespace` is not a namespace name, if it is not.
#[must_use]
pub fn check_namespace(namespace: &str) -> Option<String> {
    broken(Rule::Label, namespace)
}

/// Every problem with one object's name and namespace (`None` namespace: cluster-scoped or
/// unset), each as a message naming it and `place` (where it comes from).
#[must_use]
pub fn check_object(
    api_version: &str,
    kind: &str,
    namespace: Option<&str>,
    name: &str,
    place: &str,
) -> Vec<String> {
    let group = crate::model::kinds::api_group(api_version);
    let (rule, namespaced) = known(group, kind).unwrap_or((Rule::PathSegment, true));
    let mut out = Vec::new();
    if let Some(why) = broken(rule, name) {
        out.push(format!(
            "invalid name {name:?} for a {kind} ({place}): {why}"
        ));
    }
    // A namespace only reaches a URL for a namespaced kind; one that may be namespaced (a kind
    // chartseq does not know) is checked when its URL is built.
    if let (Some(ns), true) = (namespace, namespaced && known(group, kind).is_some()) {
        if let Some(why) = check_namespace(ns) {
            out.push(format!(
                "invalid namespace {ns:?} for {kind} {name:?} ({place}): {why}"
            ));
        }
    }
    out
}

/// Every problem with the names and namespaces of a revision's objects, each naming the
/// object and its template; the release namespace first.
#[must_use]
pub fn check_record(record: &super::release::Record) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(why) = check_namespace(&record.namespace) {
        out.push(format!(
            "invalid release namespace {:?}: {why}",
            record.namespace
        ));
    }
    for item in &record.items {
        let place = item
            .source
            .as_deref()
            .map_or_else(|| "in the stream".to_owned(), |s| format!("from {s}"));
        // Named only by `generateName` (an Argo CD hook): the server appends five letters
        // and digits, and checks the whole name.
        let generated = item.object["metadata"]["name"].as_str().is_none();
        let name = if generated {
            Cow::Owned(format!("{}abcde", item.name))
        } else {
            Cow::Borrowed(item.name.as_str())
        };
        out.extend(
            check_object(
                &item.api_version,
                &item.kind,
                item.namespace.as_deref(),
                &name,
                &place,
            )
            .into_iter()
            .map(|m| {
                if generated {
                    m.replace(
                        &format!("{name:?}"),
                        &format!("{:?} (generateName)", item.name),
                    )
                } else {
                    m
                }
            }),
        );
    }
    out
}

/// Why an `apiVersion` cannot name an API group and version, if it cannot: it is part of
/// the discovery request's path.
#[must_use]
pub fn check_api_version(api_version: &str) -> Option<String> {
    let (group, version) = match api_version.split_once('/') {
        Some((group, version)) => (Some(group), version),
        None => (None, api_version),
    };
    let group_ok =
        group.is_none_or(|g| g.len() <= 253 && g.split('.').all(|l| label_ok(l, false, 63)));
    (!group_ok || !label_ok(version, true, 63)).then(|| {
        format!("invalid apiVersion {api_version:?}: expected group/version, like apps/v1, or a core version, like v1")
    })
}

/// One segment of a URL path, as sent: a name or namespace that is not a valid path segment
/// is refused, and any character that would change the URL (`?`, `#`, a space, non-ASCII) is
/// percent-encoded, so that no text reaches a request's path unchecked.
pub fn segment(text: &str) -> Result<Cow<'_, str>, String> {
    if let Some(why) = path_segment(text) {
        return Err(format!("{text:?} cannot be part of a request path: {why}"));
    }
    let plain = |b: u8| b.is_ascii_alphanumeric() || b"-._~:@!$&'()*+,;=".contains(&b);
    if text.bytes().all(plain) {
        return Ok(Cow::Borrowed(text));
    }
    let mut out = String::with_capacity(text.len() * 3);
    for b in text.bytes() {
        if plain(b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    Ok(Cow::Owned(out))
}

/// A namespace as a URL path segment: it must be a namespace name.
pub fn namespace_segment(namespace: &str) -> Result<&str, String> {
    match check_namespace(namespace) {
        None => Ok(namespace),
        Some(why) => Err(format!("invalid namespace {namespace:?}: {why}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_each_kinds_rule() {
        let ok = |v: &str, k: &str, n: &str| check_object(v, k, Some("default"), n, "t").is_empty();
        assert!(ok("v1", "ConfigMap", "app.config-1"));
        assert!(!ok("v1", "ConfigMap", "x?y"));
        assert!(!ok("v1", "ConfigMap", "cfg/../../secrets/topsecret"));
        assert!(!ok("v1", "ConfigMap", ".."));
        assert!(!ok("v1", "ConfigMap", "Upper"));
        assert!(!ok("v1", "ConfigMap", ""));
        assert!(!ok("v1", "ConfigMap", &"a".repeat(254)));
        assert!(ok("v1", "ConfigMap", &"a".repeat(253)));
        assert!(ok("v1", "ConfigMap", &"a".repeat(100)));
        assert!(!ok("v1", "Service", &"a".repeat(64)));
        assert!(ok("v1", "Service", "web"));
        assert!(!ok("v1", "Service", "1web"));
        assert!(!ok("v1", "Service", "web.internal"));
        assert!(ok("v1", "Namespace", "team-1"));
        assert!(!ok("v1", "Namespace", "team.1"));
        // RBAC names are path segments: colons and capitals are fine, a slash is not.
        let rbac = "rbac.authorization.k8s.io/v1";
        assert!(ok(rbac, "ClusterRole", "system:controller:Foo"));
        assert!(!ok(rbac, "ClusterRole", "a/b"));
        // Kinds chartseq does not know: the path-segment rule only.
        assert!(ok("example.com/v1", "Widget", "Odd_Name"));
        assert!(!ok("example.com/v1", "Widget", "a%2F"));
        assert!(!ok("example.com/v1", "Widget", "."));
    }

    #[test]
    fn namespaces_are_labels_where_they_reach_a_url() {
        let ns = |k: &str, ns: &str| check_object("v1", k, Some(ns), "x", "t").is_empty();
        assert!(ns("ConfigMap", "default"));
        assert!(!ns("ConfigMap", "x?y=/configmaps/victim"));
        assert!(!ns("ConfigMap", "a/b"));
        assert!(!ns("ConfigMap", "Default"));
        // A cluster-scoped kind ignores its namespace, as the server does.
        assert!(ns("Namespace", "Not_Used"));
        let e = check_object("v1", "ConfigMap", Some("a/b"), "x?y", "shop/t.yaml");
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(
            e[0].contains("shop/t.yaml") && e[0].contains("\"x?y\""),
            "{e:?}"
        );
    }

    #[test]
    fn api_versions_are_group_and_version() {
        for ok in [
            "v1",
            "apps/v1",
            "networking.k8s.io/v1beta1",
            "example.com/v1alpha2",
        ] {
            assert_eq!(check_api_version(ok), None, "{ok}");
        }
        for bad in [
            "",
            "../v1",
            "apps/v1/../x",
            "v1?x=y",
            "apps/",
            "/v1",
            "Apps/v1",
        ] {
            assert!(check_api_version(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn segments_are_refused_or_encoded_never_passed_raw() {
        assert_eq!(segment("web-1").as_deref(), Ok("web-1"));
        assert_eq!(segment("system:x").as_deref(), Ok("system:x"));
        assert_eq!(segment("x?y").as_deref(), Ok("x%3Fy"));
        assert_eq!(segment("a b#c").as_deref(), Ok("a%20b%23c"));
        assert_eq!(segment("é").as_deref(), Ok("%C3%A9"));
        for bad in ["", ".", "..", "a/b", "a%2Fb", "a\nb"] {
            assert!(segment(bad).is_err(), "{bad:?}");
        }
        assert!(namespace_segment("default").is_ok());
        assert!(namespace_segment("x?y").is_err());
        assert!(namespace_segment("..").is_err());
    }
}
