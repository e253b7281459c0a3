//! The chart as a Helm release records it (`pkg/chart/v2`: `Chart`, `Metadata`,
//! `Dependency`), so that `helm history`, `helm list` and `helm get values --all` read a
//! chartseq revision as their own.
//!
//! `Chart.yaml` is converted field by field into Helm's types (strings stay strings even when
//! YAML reads `version: 1.0` as a number): a value Go cannot decode would make Helm skip the
//! whole revision. Dependencies keep `depends-on`, as helm/helm PR #32314 records it.

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::parse::Node;
use crate::source::SourceMap;
use crate::source::chart::LoadedChart;

/// Helm's `Chart` JSON: metadata, lock, templates, values, schema, files. Without a chart on
/// disk (a rendered stream) only the name is known.
#[must_use]
pub fn chart_json(loaded: Option<&LoadedChart>, sources: &SourceMap, name: &str) -> Value {
    let Some(chart) = loaded else {
        return json!({"metadata": {"name": name}, "lock": null, "templates": null,
            "values": null, "schema": null, "files": null});
    };
    let file = |(path, id): (&String, &crate::source::FileId)| json!({"name": path, "data": base64::engine::general_purpose::STANDARD.encode(&sources.get(*id).bytes)});
    let templates: Vec<Value> = chart
        .files
        .iter()
        .filter(|(p, _)| p.starts_with("templates/"))
        .map(file)
        .collect();
    // Helm keeps every other file of the chart, `crds/` among them, in `files`.
    let files: Vec<Value> = chart
        .files
        .iter()
        .filter(|(p, _)| !p.starts_with("templates/"))
        .map(file)
        .collect();
    json!({
        "metadata": metadata_json(&chart.meta.node),
        "lock": null,
        "templates": templates,
        "values": chart.values,
        "schema": null,
        "files": files,
    })
}

fn text(node: Option<&Node>) -> Option<Value> {
    node.filter(|n| !n.is_null())
        .and_then(Node::as_scalar)
        .map(|s| Value::String(s.to_owned()))
}

fn texts(node: Option<&Node>) -> Option<Value> {
    let items: Vec<Value> = node?
        .as_seq()?
        .iter()
        .filter_map(|n| text(Some(n)))
        .collect();
    Some(Value::Array(items))
}

fn boolean(node: Option<&Node>) -> Option<Value> {
    match node?.as_scalar()? {
        "true" | "True" | "TRUE" => Some(json!(true)),
        "false" | "False" | "FALSE" => Some(json!(false)),
        _ => None,
    }
}

/// `Chart.yaml` as Helm's `Metadata` JSON.
#[must_use]
pub fn metadata_json(node: &Node) -> Value {
    let mut out = Map::new();
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(v) = value {
            out.insert(key.to_owned(), v);
        }
    };
    for key in [
        "name",
        "home",
        "version",
        "description",
        "icon",
        "apiVersion",
        "condition",
        "tags",
        "appVersion",
        "kubeVersion",
        "type",
    ] {
        put(key, text(node.get(key)));
    }
    put("sources", texts(node.get("sources")));
    put("keywords", texts(node.get("keywords")));
    put("deprecated", boolean(node.get("deprecated")));
    let maintainers = node.get("maintainers").and_then(Node::as_seq).map(|list| {
        Value::Array(
            list.iter()
                .map(|m| {
                    let mut entry = Map::new();
                    for key in ["name", "email", "url"] {
                        if let Some(v) = text(m.get(key)) {
                            entry.insert(key.to_owned(), v);
                        }
                    }
                    Value::Object(entry)
                })
                .collect(),
        )
    });
    put("maintainers", maintainers);
    let annotations = node.get("annotations").and_then(Node::as_map).map(|map| {
        Value::Object(
            map.iter()
                .filter_map(|(k, v)| Some((k.as_scalar()?.to_owned(), text(Some(v))?)))
                .collect(),
        )
    });
    put("annotations", annotations);
    let dependencies = node
        .get("dependencies")
        .and_then(Node::as_seq)
        .map(|list| Value::Array(list.iter().map(dependency_json).collect()));
    put("dependencies", dependencies);
    Value::Object(out)
}

/// A `dependencies[]` entry as Helm's `Dependency` JSON (`name` and `repository` are always
/// written, as Go writes them).
fn dependency_json(node: &Node) -> Value {
    let mut out = Map::new();
    out.insert(
        "name".into(),
        text(node.get("name")).unwrap_or_else(|| json!("")),
    );
    if let Some(v) = text(node.get("version")) {
        out.insert("version".into(), v);
    }
    out.insert(
        "repository".into(),
        text(node.get("repository")).unwrap_or_else(|| json!("")),
    );
    for key in ["condition", "alias"] {
        if let Some(v) = text(node.get(key)) {
            out.insert(key.to_owned(), v);
        }
    }
    for key in ["tags", "depends-on"] {
        if let Some(v) =
            texts(node.get(key)).filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
        {
            out.insert(key.to_owned(), v);
        }
    }
    if let Some(v) = boolean(node.get("enabled")).filter(|v| *v == json!(true)) {
        out.insert("enabled".into(), v);
    }
    if let Some(values) = node.get("import-values").filter(|n| !n.is_null()) {
        out.insert("import-values".into(), values.to_json());
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Node {
        crate::parse::parse_document(text, 0, crate::parse::Limits::default())
            .expect("parses")
            .expect("a document")
    }

    #[test]
    fn metadata_keeps_helm_types() {
        let node = parse(
            "apiVersion: v2\nname: shop\nversion: 1.10\nappVersion: 2\ndeprecated: false\nkeywords: [a, 3]\nannotations:\n  helm.sh/depends-on/subcharts: '[\"db\"]'\n  n: 5\nmaintainers: [{name: me, email: me@x}]\ndependencies:\n- name: db\n  version: 1.x\n  alias: database\n  depends-on: [cache]\n  tags: []\nunknown: 1\n",
        );
        assert_eq!(
            metadata_json(&node),
            json!({
                "name": "shop", "version": "1.10", "apiVersion": "v2", "appVersion": "2",
                "keywords": ["a", "3"], "deprecated": false,
                "maintainers": [{"name": "me", "email": "me@x"}],
                "annotations": {"helm.sh/depends-on/subcharts": "[\"db\"]", "n": "5"},
                "dependencies": [{"name": "db", "version": "1.x", "repository": "", "alias": "database", "depends-on": ["cache"]}],
            })
        );
    }

    #[test]
    fn a_stream_without_its_chart_names_the_chart_only() {
        let v = chart_json(None, &SourceMap::default(), "shop");
        assert_eq!(v["metadata"], json!({"name": "shop"}));
        assert!(v["templates"].is_null());
    }
}
