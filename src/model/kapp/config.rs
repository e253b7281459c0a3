//! kapp configuration a chart carries (`config/conf.go`, `config/config.go`,
//! `config/resource_matchers.go`, `resources/matchers.go` at a89576c): a `Config` object
//! (`kapp.k14s.io/v1alpha1`), never applied, and a `v1` `ConfigMap` labelled
//! `kapp.k14s.io/config` whose `data."config.yml"` holds one (applied as an ordinary
//! `ConfigMap` as well).
//!
//! kapp decodes the configuration as Go's `encoding/json` does after converting YAML: keys
//! match field names without regard to case, unknown keys are dropped, a value of the wrong
//! type fails the deploy. Read here: `minimumRequiredVersion`, `changeGroupBindings`,
//! `changeRuleBindings` and `waitRules` with their `resourceMatchers`; the other rules (rebase,
//! diff, ownership, templates) do not order or wait and are not read. Default configuration
//! first, then the chart's configurations in document order: a binding's index counts from the
//! default configuration's, and the first wait rule that matches an object is its rule.

use crate::parse::{Node, ScalarKind, Span};

/// The kapp release whose code is modelled (a89576c is 0.60.0 and 16 commits).
pub const KAPP_VERSION: (u64, u64, u64) = (0, 60, 0);

/// The label that makes a `ConfigMap` hold kapp configuration, and its data key.
pub const CONFIG_LABEL: &str = "kapp.k14s.io/config";
pub const CONFIG_MAP_KEY: &str = "config.yml";

/// One path part of an `emptyFieldMatcher`.
#[derive(Clone, Debug, PartialEq)]
pub enum PathPart {
    Key(String),
    Index(usize),
    /// `{allIndexes: true}`.
    All,
    /// `{regex: …}`: kapp's empty-field matcher panics on it; kept to refuse.
    Regex,
}

/// A resource matcher, as kapp's `AsResourceMatcher` picks the first one set.
#[derive(Clone, Debug, PartialEq)]
pub enum Matcher {
    All,
    Any(Vec<Matcher>),
    And(Vec<Matcher>),
    Not(Box<Matcher>),
    KindNamespaceName {
        kind: String,
        namespace: String,
        name: String,
    },
    ApiGroupKind {
        api_group: String,
        kind: String,
    },
    ApiVersionKind {
        api_version: String,
        kind: String,
    },
    HasAnnotation(Vec<String>),
    HasNamespace(Vec<String>),
    CustomResource,
    EmptyField(Vec<PathPart>),
}

/// An object as kapp's matchers see it (its namespace as kapp places it).
pub struct Subject<'a> {
    pub api_version: &'a str,
    pub group: &'a str,
    pub kind: &'a str,
    pub name: &'a str,
    /// `None`: cluster-scoped.
    pub namespace: Option<&'a str>,
    /// Annotation keys (with `metadata.annotations` read as Go reads a map).
    pub annotations: &'a [&'a str],
    /// The whole object, for `emptyFieldMatcher` only.
    pub object: &'a dyn Fn() -> serde_json::Value,
}

impl Matcher {
    #[must_use]
    pub fn matches(&self, s: &Subject<'_>) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Any(ms) => ms.iter().any(|m| m.matches(s)),
            Matcher::And(ms) => ms.iter().all(|m| m.matches(s)),
            Matcher::Not(m) => !m.matches(s),
            Matcher::KindNamespaceName {
                kind,
                namespace,
                name,
            } => s.kind == kind && s.namespace.unwrap_or_default() == namespace && s.name == name,
            Matcher::ApiGroupKind { api_group, kind } => s.group == api_group && s.kind == kind,
            Matcher::ApiVersionKind { api_version, kind } => {
                s.api_version == api_version && s.kind == kind
            }
            Matcher::HasAnnotation(keys) => {
                keys.iter().all(|k| s.annotations.contains(&k.as_str()))
            }
            Matcher::HasNamespace(names) => match s.namespace {
                None | Some("") => false,
                Some(ns) => names.is_empty() || names.iter().any(|n| n == ns),
            },
            Matcher::CustomResource => !super::BUILTIN_GROUPS.contains(&s.group),
            Matcher::EmptyField(path) => empty_at(&(s.object)(), path),
        }
    }

    /// Whether any matcher inside needs the object's tree.
    #[must_use]
    pub fn needs_object(&self) -> bool {
        match self {
            Matcher::Any(ms) | Matcher::And(ms) => ms.iter().any(Matcher::needs_object),
            Matcher::Not(m) => m.needs_object(),
            Matcher::EmptyField(_) => true,
            _ => false,
        }
    }
}

/// kapp's `AnyMatcher` over a rule's `resourceMatchers`: none matches nothing.
#[must_use]
pub fn any_matches(matchers: &[Matcher], s: &Subject<'_>) -> bool {
    matchers.iter().any(|m| m.matches(s))
}

/// `EmptyFieldMatcher.check`: a missing key or index is empty; so are null, `[]` and `{}`.
fn empty_at(object: &serde_json::Value, path: &[PathPart]) -> bool {
    use serde_json::Value as J;
    let mut at = object;
    for (i, part) in path.iter().enumerate() {
        match part {
            PathPart::Key(key) => {
                let J::Object(map) = at else {
                    return at.is_null();
                };
                match map.get(key) {
                    Some(next) => at = next,
                    None => return true,
                }
            }
            PathPart::Index(index) => {
                let J::Array(items) = at else {
                    return at.is_null();
                };
                match items.get(*index) {
                    Some(next) => at = next,
                    None => return true,
                }
            }
            PathPart::All => {
                let J::Array(items) = at else {
                    return at.is_null();
                };
                return items.iter().all(|item| empty_at(item, &path[i + 1..]));
            }
            // Refused when read.
            PathPart::Regex => return false,
        }
    }
    match at {
        J::Null => true,
        J::Array(items) => items.is_empty(),
        J::Object(map) => map.is_empty(),
        _ => false,
    }
}

/// `changeGroupBindings[]`: the group every matching object is in.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupBinding {
    pub name: String,
    pub matchers: Vec<Matcher>,
    /// Where `name` is written.
    pub at: Span,
}

/// `changeRuleBindings[]`: rules every matching object gets.
#[derive(Clone, Debug, PartialEq)]
pub struct RuleBinding {
    /// Each rule as written, with where.
    pub rules: Vec<(String, Span)>,
    pub ignore_if_cyclical: bool,
    pub matchers: Vec<Matcher>,
}

/// `waitRules[]`.
#[derive(Clone, Debug, PartialEq)]
pub struct WaitRule {
    pub conditions: crate::readiness::KappConditions,
    /// A `ytt` rule (Starlark): not evaluated.
    pub ytt: bool,
    pub matchers: Vec<Matcher>,
    /// Where the rule is written.
    pub at: Span,
}

/// What one configuration says that orders or waits.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Config {
    pub group_bindings: Vec<GroupBinding>,
    pub rule_bindings: Vec<RuleBinding>,
    pub wait_rules: Vec<WaitRule>,
}

/// A value kapp refuses, with where it is written and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    pub at: Span,
    pub value: String,
    pub reason: String,
}

type Read<T> = Result<T, Refusal>;

fn refuse<T>(node: &Node, reason: impl Into<String>) -> Read<T> {
    // A mapping is named by its first key.
    let value = node
        .as_scalar()
        .or_else(|| node.as_map()?.first()?.0.as_scalar())
        .unwrap_or_default();
    Err(Refusal {
        at: node.span,
        value: value.to_owned(),
        reason: reason.into(),
    })
}

/// The value of a field as `encoding/json` finds it: the last key equal to the name without
/// regard to case. A null counts as absent (Go leaves the field as it is).
fn field<'a>(node: &'a Node, name: &str) -> Option<&'a Node> {
    node.as_map()?
        .iter()
        .rev()
        .find(|(k, _)| k.as_scalar().is_some_and(|k| k.eq_ignore_ascii_case(name)))
        .map(|(_, v)| v)
        .filter(|v| !v.is_null())
}

fn string(node: &Node, what: &str) -> Read<String> {
    match node.as_str() {
        Some(text) => Ok(text.to_owned()),
        None => refuse(
            node,
            format!("`{what}` is {}, and kapp expects a string", node.describe()),
        ),
    }
}

fn opt_string(parent: &Node, name: &str) -> Read<String> {
    field(parent, name).map_or(Ok(String::new()), |n| string(n, name))
}

fn opt_bool(parent: &Node, name: &str) -> Read<bool> {
    let Some(node) = field(parent, name) else {
        return Ok(false);
    };
    match node.scalar_kind() {
        Some(ScalarKind::Bool(b)) => Ok(b),
        _ => refuse(
            node,
            format!(
                "`{name}` is {}, and kapp expects a boolean",
                node.describe()
            ),
        ),
    }
}

fn list<'a>(parent: &'a Node, name: &str) -> Read<&'a [Node]> {
    let Some(node) = field(parent, name) else {
        return Ok(&[]);
    };
    node.as_seq().map_or_else(
        || {
            refuse(
                node,
                format!("`{name}` is {}, and kapp expects a list", node.describe()),
            )
        },
        Ok,
    )
}

fn object<'a>(node: &'a Node, what: &str) -> Read<&'a Node> {
    if node.as_map().is_some() {
        Ok(node)
    } else {
        refuse(
            node,
            format!(
                "`{what}` is {}, and kapp expects a mapping",
                node.describe()
            ),
        )
    }
}

fn strings(parent: &Node, name: &str) -> Read<Vec<String>> {
    list(parent, name)?
        .iter()
        .map(|n| string(n, name))
        .collect()
}

fn matchers(parent: &Node) -> Read<Vec<Matcher>> {
    list(parent, "resourceMatchers")?
        .iter()
        .map(matcher)
        .collect()
}

fn matcher_list(node: &Node) -> Read<Vec<Matcher>> {
    list(node, "matchers")?.iter().map(matcher).collect()
}

/// One resource matcher: the first of kapp's switch that is set (a mapping, even `{}`).
fn matcher(node: &Node) -> Read<Matcher> {
    let node = object(node, "resourceMatchers[]")?;
    let set = |name: &str| field(node, name).map(|n| object(n, name)).transpose();
    if set("allMatcher")?.is_some() {
        return Ok(Matcher::All);
    }
    if let Some(m) = set("anyMatcher")? {
        return Ok(Matcher::Any(matcher_list(m)?));
    }
    if let Some(m) = set("andMatcher")? {
        return Ok(Matcher::And(matcher_list(m)?));
    }
    if let Some(m) = set("notMatcher")? {
        // A missing inner matcher is an empty one: kapp panics on it.
        let inner = field(m, "matcher").map_or_else(
            || refuse(m, "a `notMatcher` without a `matcher` (kapp stops on it)"),
            matcher,
        )?;
        return Ok(Matcher::Not(Box::new(inner)));
    }
    if let Some(m) = set("kindNamespaceNameMatcher")? {
        return Ok(Matcher::KindNamespaceName {
            kind: opt_string(m, "kind")?,
            namespace: opt_string(m, "namespace")?,
            name: opt_string(m, "name")?,
        });
    }
    if let Some(m) = set("apiGroupKindMatcher")? {
        return Ok(Matcher::ApiGroupKind {
            api_group: opt_string(m, "apiGroup")?,
            kind: opt_string(m, "kind")?,
        });
    }
    if let Some(m) = set("apiVersionKindMatcher")? {
        return Ok(Matcher::ApiVersionKind {
            api_version: opt_string(m, "apiVersion")?,
            kind: opt_string(m, "kind")?,
        });
    }
    if let Some(m) = set("hasAnnotationMatcher")? {
        return Ok(Matcher::HasAnnotation(strings(m, "keys")?));
    }
    if let Some(m) = set("hasNamespaceMatcher")? {
        return Ok(Matcher::HasNamespace(strings(m, "names")?));
    }
    if set("customResourceMatcher")?.is_some() {
        return Ok(Matcher::CustomResource);
    }
    if let Some(m) = set("emptyFieldMatcher")? {
        let path = list(m, "path")?
            .iter()
            .map(path_part)
            .collect::<Read<Vec<_>>>()?;
        return Ok(Matcher::EmptyField(path));
    }
    refuse(
        node,
        "a resource matcher kapp does not know (kapp stops on it): expected one of allMatcher, anyMatcher, andMatcher, notMatcher, kindNamespaceNameMatcher, apiGroupKindMatcher, apiVersionKindMatcher, hasAnnotationMatcher, hasNamespaceMatcher, customResourceMatcher, emptyFieldMatcher",
    )
}

/// `PathPart.UnmarshalJSON`: a string is a key, `{regex: …}` a regex, else an array index.
fn path_part(node: &Node) -> Read<PathPart> {
    if let Some(key) = node.as_str() {
        return Ok(PathPart::Key(key.to_owned()));
    }
    if node.as_map().is_none() {
        return refuse(node, "not a path part kapp reads (a key or a mapping)");
    }
    if field(node, "regex").is_some() {
        return refuse(
            node,
            "a regex path part, which kapp's emptyFieldMatcher stops on",
        );
    }
    if opt_bool(node, "allIndexes")? {
        return Ok(PathPart::All);
    }
    if let Some(index) = field(node, "index") {
        return match index.scalar_kind() {
            Some(ScalarKind::Int(i)) if i >= 0 => {
                Ok(PathPart::Index(usize::try_from(i).unwrap_or(usize::MAX)))
            }
            _ => refuse(index, "`index` must be a non-negative integer"),
        };
    }
    refuse(
        node,
        "an array index with neither `index` nor `allIndexes` (kapp stops on it)",
    )
}

/// `minimumRequiredVersion`: `>=` it must hold for the modelled kapp (hashicorp go-version).
fn check_version(node: &Node) -> Read<()> {
    let text = string(node, "minimumRequiredVersion")?;
    if text.is_empty() {
        return Ok(());
    }
    if text.starts_with('v') {
        return refuse(
            node,
            "`minimumRequiredVersion` must not have prefix 'v' (e.g. '0.8.0'), as kapp says",
        );
    }
    let first = text.split(',').next().unwrap_or_default().trim();
    let (core, pre) = match first.find(['-', '+']) {
        Some(i) => (&first[..i], first[i..].starts_with('-')),
        None => (first, false),
    };
    let parts: Option<Vec<u64>> = core.split('.').map(|p| p.parse().ok()).collect();
    let Some(parts) = parts.filter(|p| !p.is_empty()) else {
        return refuse(
            node,
            format!("`minimumRequiredVersion` `{text}` is not a version kapp can parse"),
        );
    };
    let at = |i: usize| parts.get(i).copied().unwrap_or(0);
    let wanted = (at(0), at(1), at(2));
    let extra = parts.iter().skip(3).any(|&p| p > 0);
    let newer = wanted > KAPP_VERSION || (wanted == KAPP_VERSION && extra && !pre);
    if newer {
        let (a, b, c) = KAPP_VERSION;
        return refuse(
            node,
            format!(
                "kapp version '{a}.{b}.{c}' (the kapp whose code chartseq follows) does not meet the minimum required version '{text}'"
            ),
        );
    }
    Ok(())
}

/// Reads a configuration (the object, or what a `ConfigMap`'s `config.yml` holds); `Err`: what
/// kapp refuses, first in its order.
pub fn read(node: &Node) -> Result<Config, Refusal> {
    let api_version = opt_string(node, "apiVersion")?;
    if api_version != super::CONFIG_API_VERSION {
        return refuse(
            field(node, "apiVersion").unwrap_or(node),
            format!(
                "kapp config must have apiVersion '{}', not '{api_version}'",
                super::CONFIG_API_VERSION
            ),
        );
    }
    let kind = opt_string(node, "kind")?;
    if kind != "Config" {
        return refuse(
            field(node, "kind").unwrap_or(node),
            format!("kapp config must have kind 'Config', not '{kind}'"),
        );
    }
    if let Some(v) = field(node, "minimumRequiredVersion") {
        check_version(v)?;
    }
    let mut config = Config::default();
    for b in list(node, "changeGroupBindings")? {
        let b = object(b, "changeGroupBindings[]")?;
        config.group_bindings.push(GroupBinding {
            name: opt_string(b, "name")?,
            matchers: matchers(b)?,
            at: field(b, "name").map_or(b.span, |n| n.span),
        });
    }
    for b in list(node, "changeRuleBindings")? {
        let b = object(b, "changeRuleBindings[]")?;
        let rules = list(b, "rules")?
            .iter()
            .map(|r| string(r, "rules").map(|text| (text, r.span)))
            .collect::<Read<Vec<_>>>()?;
        config.rule_bindings.push(RuleBinding {
            rules,
            ignore_if_cyclical: opt_bool(b, "ignoreIfCyclical")?,
            matchers: matchers(b)?,
        });
    }
    for w in list(node, "waitRules")? {
        let w = object(w, "waitRules[]")?;
        let mut conditions = crate::readiness::KappConditions {
            supports_observed_generation: opt_bool(w, "supportsObservedGeneration")?,
            condition_matchers: Vec::new(),
        };
        for c in list(w, "conditionMatchers")? {
            let c = object(c, "conditionMatchers[]")?;
            conditions
                .condition_matchers
                .push(crate::readiness::KappConditionMatcher {
                    type_: opt_string(c, "type")?,
                    status: opt_string(c, "status")?,
                    success: opt_bool(c, "success")?,
                    failure: opt_bool(c, "failure")?,
                    supports_observed_generation: opt_bool(c, "supportsObservedGeneration")?,
                    unblock_changes: opt_bool(c, "unblockChanges")?,
                });
        }
        let ytt = match field(w, "ytt") {
            Some(y) => {
                object(y, "ytt")?;
                true
            }
            None => false,
        };
        config.wait_rules.push(WaitRule {
            conditions,
            ytt,
            matchers: matchers(w)?,
            at: w.span,
        });
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{Limits, parse_document};

    fn tree(text: &str) -> Node {
        parse_document(text, 0, Limits::default())
            .expect("parses")
            .expect("a document")
    }

    fn config(text: &str) -> Result<Config, Refusal> {
        read(&tree(&format!(
            "apiVersion: kapp.k14s.io/v1alpha1\nkind: Config\n{text}"
        )))
    }

    fn subject_matches(
        m: &Matcher,
        kind: &str,
        namespace: Option<&str>,
        annotations: &[&str],
    ) -> bool {
        let object = || serde_json::json!({"spec": {"items": [], "x": {"y": 1}}});
        m.matches(&Subject {
            api_version: "apps/v1",
            group: "apps",
            kind,
            name: "app",
            namespace,
            annotations,
            object: &object,
        })
    }

    #[test]
    fn bindings_and_wait_rules_are_read_with_keys_in_any_case() {
        // The example of kapp's docs (docs/config.md, "changeGroupBindings",
        // "changeRuleBindings", "waitRules").
        let c = config(
            "changeGroupBindings:\n- name: change-groups.kapp.k14s.io/pod-related\n  resourceMatchers:\n  - apiVersionKindMatcher: {kind: ConfigMap, apiVersion: v1}\nChangeRuleBindings:\n- rules:\n  - \"upsert after upserting change-groups.kapp.k14s.io/pod-related\"\n  ignoreIfCyclical: true\n  resourceMatchers:\n  - anyMatcher:\n      matchers:\n      - apiGroupKindMatcher: {kind: Deployment, apiGroup: apps}\nwaitRules:\n- supportsObservedGeneration: true\n  conditionMatchers:\n  - type: Failed\n    status: \"True\"\n    failure: true\n  - type: Deployed\n    status: \"True\"\n    success: true\n  resourceMatchers:\n  - apiVersionKindMatcher: {apiVersion: corp.com/v1, kind: DatabaseInstance}\n",
        )
        .expect("reads");
        assert_eq!(c.group_bindings.len(), 1);
        assert_eq!(
            c.group_bindings[0].matchers,
            [Matcher::ApiVersionKind {
                api_version: "v1".into(),
                kind: "ConfigMap".into()
            }]
        );
        assert!(c.rule_bindings[0].ignore_if_cyclical);
        assert!(subject_matches(
            &c.rule_bindings[0].matchers[0],
            "Deployment",
            Some("ns"),
            &[]
        ));
        let w = &c.wait_rules[0];
        assert!(w.conditions.supports_observed_generation && !w.ytt);
        assert_eq!(w.conditions.condition_matchers[1].type_, "Deployed");
        assert!(w.conditions.condition_matchers[0].failure);
    }

    #[test]
    fn kapp_refuses_unknown_matchers_wrong_types_and_newer_versions() {
        for (text, why) in [
            (
                "changeGroupBindings:\n- name: x\n  resourceMatchers:\n  - {}\n",
                "does not know",
            ),
            (
                "changeGroupBindings:\n- name: x\n  resourceMatchers:\n  - bogusMatcher: {}\n",
                "does not know",
            ),
            (
                "changeRuleBindings:\n- rules: upsert after upserting x\n",
                "expects a list",
            ),
            (
                "changeRuleBindings:\n- rules: [x]\n  ignoreIfCyclical: maybe\n",
                "boolean",
            ),
            ("minimumRequiredVersion: v0.1.0\n", "prefix 'v'"),
            ("minimumRequiredVersion: 0.61.0\n", "does not meet"),
            ("minimumRequiredVersion: \"1.0\"\n", "does not meet"),
            // Unquoted, YAML makes it a number: Go cannot decode it into a string.
            ("minimumRequiredVersion: 1.0\n", "expects a string"),
            ("minimumRequiredVersion: abc\n", "can parse"),
            (
                "changeGroupBindings:\n- name: x\n  resourceMatchers:\n  - emptyFieldMatcher: {path: [{regex: a}]}\n",
                "regex",
            ),
        ] {
            let err = config(text).expect_err(text);
            assert!(err.reason.contains(why), "{text}: {}", err.reason);
        }
        for ok in [
            "minimumRequiredVersion: 0.60.0\n",
            "minimumRequiredVersion: 0.60.0-rc.1\n",
            "minimumRequiredVersion: \"0.8\"\n",
            "unknownKey: [1]\nrebaseRules: []\n",
            "changeGroupBindings:\n- name: x\n  resourceMatchers:\n  - allMatcher: {}\n    anyMatcher: {}\n",
        ] {
            assert!(config(ok).is_ok(), "{ok}");
        }
        let err =
            read(&tree("apiVersion: kapp.k14s.io/v1alpha1\nkind: Other\n")).expect_err("kind");
        assert!(err.reason.contains("kind 'Config'"), "{}", err.reason);
    }

    #[test]
    fn matchers_follow_kapps_resource_matchers() {
        let has = Matcher::HasAnnotation(vec!["a".into(), "b".into()]);
        assert!(subject_matches(&has, "Deployment", None, &["a", "b", "c"]));
        assert!(!subject_matches(&has, "Deployment", None, &["a"]));
        assert!(subject_matches(
            &Matcher::HasAnnotation(vec![]),
            "X",
            None,
            &[]
        ));
        let ns = Matcher::HasNamespace(vec![]);
        assert!(subject_matches(&ns, "Deployment", Some("shop"), &[]));
        assert!(!subject_matches(&ns, "Deployment", None, &[]));
        let only = Matcher::HasNamespace(vec!["other".into()]);
        assert!(!subject_matches(&only, "Deployment", Some("shop"), &[]));
        let knn = Matcher::KindNamespaceName {
            kind: "Deployment".into(),
            namespace: String::new(),
            name: "app".into(),
        };
        assert!(subject_matches(&knn, "Deployment", None, &[]));
        assert!(!subject_matches(&knn, "Deployment", Some("shop"), &[]));
        assert!(!subject_matches(
            &Matcher::CustomResource,
            "Deployment",
            None,
            &[]
        ));
        assert!(subject_matches(
            &Matcher::Not(Box::new(Matcher::CustomResource)),
            "Deployment",
            None,
            &[]
        ));
        assert!(subject_matches(&Matcher::And(vec![]), "X", None, &[]));
        assert!(!subject_matches(&Matcher::Any(vec![]), "X", None, &[]));
        assert!(!any_matches(
            &[],
            &Subject {
                api_version: "v1",
                group: "",
                kind: "X",
                name: "x",
                namespace: None,
                annotations: &[],
                object: &|| serde_json::Value::Null,
            }
        ));
        let key = |k: &str| PathPart::Key(k.to_owned());
        for (path, empty) in [
            (vec![key("spec"), key("items")], true),
            (vec![key("spec"), key("missing")], true),
            (vec![key("spec"), key("x")], false),
            (vec![key("spec"), key("x"), key("y")], false),
            (vec![key("spec"), key("items"), PathPart::Index(3)], true),
            (
                vec![key("spec"), key("items"), PathPart::All, key("z")],
                true,
            ),
            (vec![key("spec"), key("x"), key("y"), key("z")], false),
        ] {
            assert_eq!(
                subject_matches(&Matcher::EmptyField(path.clone()), "X", None, &[]),
                empty,
                "{path:?}"
            );
        }
    }
}
