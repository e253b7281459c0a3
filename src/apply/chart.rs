//! The chart as a Helm release records it (`pkg/chart/v2`: `Chart`, `Metadata`,
//! `Dependency`), so that `helm history`, `helm list` and `helm get values --all` read a
//! chartseq revision as their own.
//!
//! `Chart.yaml` is converted field by field into Helm's types (strings stay strings even when
//! YAML reads `version: 1.0` as a number): a value Go cannot decode would make Helm skip the
//! whole revision. Dependencies keep `depends-on`, as helm/helm PR #32314 records it.

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::model::Model;
use crate::model::annotations::AnnotationValue;
use crate::parse::Node;
use crate::source::SourceMap;
use crate::source::chart::LoadedChart;

/// Helm's `Chart` JSON: metadata, lock, templates, values, schema, files. Without a chart on
/// disk (a rendered stream) the metadata is what [`stream_metadata`] finds.
#[must_use]
pub fn chart_json(
    loaded: Option<&LoadedChart>,
    sources: &SourceMap,
    name: &str,
    model: &Model,
) -> Value {
    let Some(chart) = loaded else {
        return json!({"metadata": stream_metadata(model, name), "lock": null,
            "templates": null, "values": null, "schema": null, "files": null});
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

/// The metadata of a chart known only from its rendered stream. `helm list` and `helm
/// history` print the chart as `name-version`, so a version is always recorded: the one the
/// root chart's own objects carry in their `helm.sh/chart` label (`name-version`, with Helm's
/// chart helpers writing `+` as `_`) when they all agree, else `0.0.0`. `appVersion` is the
/// `app.kubernetes.io/version` label when those objects all carry the same one.
#[must_use]
pub fn stream_metadata(model: &Model, name: &str) -> Value {
    // One value when every root-chart object that has the label agrees on it.
    let agreed = |key: &str| -> Option<String> {
        let mut values = model
            .documents
            .iter()
            .enumerate()
            .filter(|(_, d)| d.chart == 0)
            .filter_map(|(i, _)| model.resource(i))
            .filter_map(|r| r.labels.iter().rev().find(|l| l.key == key))
            .map(|l| match &l.value {
                AnnotationValue::Str(s) => s.clone(),
                AnnotationValue::Coerced { text, .. } => text.clone(),
                AnnotationValue::NotString { .. } => String::new(),
            });
        let first = values.next()?;
        values.all(|v| v == first).then_some(first)
    };
    let version = agreed("helm.sh/chart")
        .and_then(|label| {
            label
                .strip_prefix(name)
                .and_then(|rest| rest.strip_prefix('-'))
                .filter(|v| {
                    !v.is_empty()
                        && v.chars()
                            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
                })
                .map(|v| v.replace('_', "+"))
        })
        .unwrap_or_else(|| "0.0.0".to_owned());
    let mut meta = json!({"name": name, "version": version});
    if let Some(app) = agreed("app.kubernetes.io/version").filter(|v| !v.is_empty()) {
        meta["appVersion"] = json!(app);
    }
    meta
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

    fn stream(text: &str) -> Model {
        crate::model::load_stream(
            "s.yaml",
            text.as_bytes().to_vec(),
            crate::parse::Limits::default(),
        )
    }

    #[test]
    fn a_stream_without_labels_records_version_0_0_0() {
        let model = stream(
            "---\n# Source: shop/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
        );
        let v = chart_json(None, &SourceMap::default(), "shop", &model);
        assert_eq!(v["metadata"], json!({"name": "shop", "version": "0.0.0"}));
        assert!(v["templates"].is_null());
    }

    #[test]
    fn a_stream_records_the_version_its_root_chart_labels_agree_on() {
        let doc = |chart: &str, name: &str, label: &str| {
            format!(
                "---\n# Source: {chart}/templates/{name}.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  labels:\n    helm.sh/chart: {label}\n    app.kubernetes.io/version: \"2.1\"\n"
            )
        };
        // A subchart's own label does not count.
        let text = doc("shop", "a", "shop-1.2.0_build.3")
            + &doc("shop", "b", "shop-1.2.0_build.3")
            + &doc("shop/charts/db", "c", "db-9.0.0");
        let v = chart_json(None, &SourceMap::default(), "shop", &stream(&text));
        assert_eq!(
            v["metadata"],
            json!({"name": "shop", "version": "1.2.0+build.3", "appVersion": "2.1"})
        );
        // Labels that disagree, or name another chart: no version can be trusted.
        let text = doc("shop", "a", "shop-1.2.0") + &doc("shop", "b", "shop-1.3.0");
        let v = chart_json(None, &SourceMap::default(), "shop", &stream(&text));
        assert_eq!(v["metadata"]["version"], "0.0.0");
        let text = doc("shop", "a", "other-1.2.0");
        let v = chart_json(None, &SourceMap::default(), "shop", &stream(&text));
        assert_eq!(v["metadata"]["version"], "0.0.0");
    }
}
