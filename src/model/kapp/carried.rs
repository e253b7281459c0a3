//! The kapp configuration a chart carries, applied to each object (its bindings joined to
//! the defaults), and kapp's refusal of two different objects of one identity.

use super::{
    AppliedWaitRule, BTreeMap, CONFIG_API_VERSION, Content, DocId, Group, Kapp, Loc, Model, Origin,
    Rejected, Resource, Subject, config, parse_rule, substitute, validate_group,
};

/// The number of rule bindings in kapp's default configuration: a chart's bindings come after.
const DEFAULT_RULE_BINDINGS: usize = 9;

/// One kapp configuration the chart carries.
pub(super) struct Carried {
    doc: DocId,
    file: crate::source::FileId,
    /// The `config.yml` value of a `ConfigMap`: every place inside is reported there.
    embedded: Option<crate::parse::Span>,
    config: config::Config,
    /// The index of its first rule binding among every configuration's.
    first_binding: usize,
}

impl Carried {
    fn loc(&self, span: crate::parse::Span) -> Loc {
        Loc {
            file: self.file,
            span: self.embedded.unwrap_or(span),
        }
    }
}

/// The object's tree as JSON, parsed again (only `emptyFieldMatcher` and the identity check
/// need it, and only for the objects they look at).
pub(super) fn reparse(
    sources: &crate::source::SourceMap,
    file: crate::source::FileId,
    span: crate::parse::Span,
) -> serde_json::Value {
    let text = sources.get(file).text(span);
    crate::parse::parse_document(&text, span.start, crate::parse::Limits::default())
        .ok()
        .flatten()
        .map_or(serde_json::Value::Null, |n| n.to_json())
}

type Refused = BTreeMap<DocId, Vec<Rejected>>;

/// Finds the configurations in document order (`config/conf.go` `NewConfFromResources`) and
/// reads them; what kapp refuses is kept per configuration document.
pub(super) fn read_configs(model: &Model) -> (Vec<Carried>, Refused) {
    let mut carried = Vec::new();
    let mut refused: Refused = BTreeMap::new();
    let mut next_binding = DEFAULT_RULE_BINDINGS;
    for (doc, d) in model.documents.iter().enumerate() {
        let Content::Resource(r) = &d.content else {
            continue;
        };
        let labelled = r.labels.iter().any(|l| l.key == config::CONFIG_LABEL);
        if r.api_version != CONFIG_API_VERSION && !labelled {
            continue;
        }
        let reject = |refused: &mut Refused, loc: Loc, value: String, reason: String| {
            refused.entry(doc).or_default().push(Rejected {
                key: "kapp config".to_owned(),
                value,
                reason,
                loc,
            });
        };
        let text = model.sources.get(d.file).text(d.span);
        let tree =
            crate::parse::parse_document(&text, d.span.start, crate::parse::Limits::default())
                .ok()
                .flatten();
        let Some(tree) = tree else { continue };
        let (node, embedded) = if r.api_version == CONFIG_API_VERSION {
            (Some(tree), None)
        } else if r.api_version != "v1" || r.id.kind != "ConfigMap" {
            reject(
                &mut refused,
                r.kind_loc,
                r.id.kind.clone(),
                format!(
                    "labelled `{}`, and kapp expects kapp config within a v1 ConfigMap",
                    config::CONFIG_LABEL
                ),
            );
            continue;
        } else {
            match tree.path(&["data", config::CONFIG_MAP_KEY]) {
                None => {
                    reject(
                        &mut refused,
                        r.kind_loc,
                        r.id.name.clone(),
                        format!(
                            "labelled `{}` without `data.\"{}\"`, which kapp expects",
                            config::CONFIG_LABEL,
                            config::CONFIG_MAP_KEY
                        ),
                    );
                    continue;
                }
                Some(value) => {
                    let inner = value.as_str().and_then(|t| {
                        crate::parse::parse_document(t, 0, crate::parse::Limits::default())
                            .ok()
                            .flatten()
                    });
                    if inner.as_ref().is_none_or(|n| n.as_map().is_none()) {
                        reject(
                            &mut refused,
                            Loc {
                                file: d.file,
                                span: value.span,
                            },
                            config::CONFIG_MAP_KEY.to_owned(),
                            "not a kapp config kapp can parse (a YAML object with apiVersion and kind)"
                                .to_owned(),
                        );
                        continue;
                    }
                    (inner, Some(value.span))
                }
            }
        };
        let Some(node) = node else { continue };
        let at = |span| Loc {
            file: d.file,
            span: embedded.unwrap_or(span),
        };
        match config::read(&node) {
            Ok(config) => {
                let first_binding = next_binding;
                next_binding += config.rule_bindings.len();
                carried.push(Carried {
                    doc,
                    file: d.file,
                    embedded,
                    config,
                    first_binding,
                });
            }
            Err(e) => reject(&mut refused, at(e.at), e.value, e.reason),
        }
    }
    (carried, refused)
}

/// Adds the chart's bindings that match the object (after kapp's default ones) and its wait
/// rule; a group or rule kapp would refuse for this object is kept once, at its binding.
pub(super) fn apply_configs(
    kapp: &mut Kapp,
    r: &Resource,
    carried: &[Carried],
    object: &dyn Fn() -> serde_json::Value,
    refused: &mut Refused,
) {
    let cached = std::cell::OnceCell::new();
    let object = || cached.get_or_init(object).clone();
    let mut keys: Vec<&str> = r.annotations.iter().map(|a| a.key.as_str()).collect();
    keys.dedup();
    let matcher_subject = config::Subject {
        api_version: &r.api_version,
        group: &r.id.group,
        kind: &r.id.kind,
        name: &r.id.name,
        namespace: kapp.namespace.as_deref(),
        annotations: &keys,
        object: &object,
    };
    let subject = Subject {
        api_version: &r.api_version,
        group: &r.id.group,
        kind: &r.id.kind,
        name: &r.id.name,
        namespace: kapp.namespace.as_deref(),
        crd: kapp.crd.as_ref(),
    };
    let mut groups = Vec::new();
    let mut rules = Vec::new();
    for c in carried {
        let mut refuse = |loc: Loc, value: &str, reason: String| {
            let list = refused.entry(c.doc).or_default();
            let x = Rejected {
                key: "kapp config".to_owned(),
                value: value.to_owned(),
                reason: format!("{reason} (for {})", r.id),
                loc,
            };
            if !list.iter().any(|y| y.loc == x.loc && y.value == x.value) {
                list.push(x);
            }
        };
        for b in &c.config.group_bindings {
            if !config::any_matches(&b.matchers, &matcher_subject) {
                continue;
            }
            let loc = c.loc(b.at);
            match substitute(&b.name, &subject).and_then(|n| validate_group(&n).map(|()| n)) {
                Ok(name) => groups.push(Group {
                    name,
                    origin: Origin::Config { binding: 0, loc },
                }),
                Err(reason) => refuse(loc, &b.name, reason),
            }
        }
        for (i, b) in c.config.rule_bindings.iter().enumerate() {
            if !config::any_matches(&b.matchers, &matcher_subject) {
                continue;
            }
            for (text, span) in &b.rules {
                let loc = c.loc(*span);
                let origin = Origin::Config {
                    binding: c.first_binding + i,
                    loc,
                };
                match substitute(text, &subject)
                    .and_then(|t| parse_rule(&t, b.ignore_if_cyclical, origin))
                {
                    Ok(rule) => rules.push(rule),
                    Err(reason) => refuse(loc, text, reason),
                }
            }
        }
        if kapp.wait_rule.is_none() {
            if let Some(w) = c
                .config
                .wait_rules
                .iter()
                .find(|w| config::any_matches(&w.matchers, &matcher_subject))
            {
                kapp.wait_rule = Some(AppliedWaitRule {
                    conditions: w.conditions.clone(),
                    ytt: w.ytt,
                    loc: c.loc(w.at),
                });
            }
        }
    }
    kapp.groups.extend(groups);
    kapp.rules.extend(rules);
}

/// kapp's `UniqueResources`: the identity is the namespace as written (before kapp places
/// objects), API group, kind and name; the same object twice is kept once, two different ones
/// fail the deploy (`Found resource '…' multiple times with different content`).
pub(super) fn refuse_duplicates(model: &mut Model) {
    let mut first: BTreeMap<(&str, &str, &str, &str), DocId> = BTreeMap::new();
    let mut found: Vec<(DocId, Option<Rejected>)> = Vec::new();
    for (doc, d) in model.documents.iter().enumerate() {
        let Content::Resource(r) = &d.content else {
            continue;
        };
        if r.kapp.config {
            continue;
        }
        let key = (
            r.id.namespace.as_deref().unwrap_or_default(),
            r.id.group.as_str(),
            r.id.kind.as_str(),
            r.id.name.as_str(),
        );
        let Some(&earlier) = first.get(&key) else {
            first.insert(key, doc);
            continue;
        };
        let e = &model.documents[earlier];
        let same =
            reparse(&model.sources, e.file, e.span) == reparse(&model.sources, d.file, d.span);
        let rejected = (!same).then(|| {
            let description = format!(
                "{}/{} ({}) {}",
                r.id.kind.to_lowercase(),
                r.id.name,
                r.api_version,
                r.id.namespace
                    .as_deref()
                    .map_or_else(|| "cluster".to_owned(), |ns| format!("namespace: {ns}"))
            );
            Rejected {
                key: "kapp resource identity".to_owned(),
                value: description.clone(),
                reason: format!(
                    "found multiple times with different content (kapp: \"Found resource '{description}' multiple times with different content\"); kapp refuses two different objects of one namespace, API group, kind and name"
                ),
                loc: r.kind_loc,
            }
        });
        found.push((doc, rejected));
    }
    for (doc, rejected) in found {
        if let Content::Resource(r) = &mut model.documents[doc].content {
            match rejected {
                Some(x) => r.kapp.rejected.push(x),
                None => r.kapp.duplicate = true,
            }
        }
    }
}
