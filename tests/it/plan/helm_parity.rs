//! The plan where Helm's own tests pin behaviour: uninstall is the exact reverse in every
//! format, documents of only comments are no resources, and hooks of equal weight and name
//! follow Helm's kind order.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::{chartseq, run};

fn plan(args: &[&str]) -> String {
    let (code, out, err) = run(chartseq().arg("plan").args(args));
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

/// A fixture chart's rendered stream with its chart, plus `extra` flags.
fn chart_args(name: &str, extra: &[&str]) -> Vec<String> {
    let mut args = vec![
        format!("fixtures/charts/{name}.rendered.yaml"),
        "--chart".to_owned(),
        format!("fixtures/charts/{name}"),
    ];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args
}

fn plan_of(name: &str, extra: &[&str]) -> String {
    let args = chart_args(name, extra);
    plan(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// A step as the formats name it: chart display path and group (`None` when unsequenced).
type StepKey = (String, Option<String>);
/// Prerequisite → dependent edges between steps.
type Edges = BTreeSet<(StepKey, StepKey)>;

/// Steps in listed order and edges `(prerequisite, dependent)` of a JSON plan.
fn json_graph(text: &str) -> (Vec<(StepKey, Vec<String>)>, Edges) {
    let doc: Value = serde_json::from_str(text).expect("json");
    let steps = doc["steps"].as_array().expect("steps");
    let key = |s: &Value| -> StepKey {
        (
            s["chart"].as_str().expect("chart").to_owned(),
            s["group"].as_str().map(str::to_owned),
        )
    };
    let listed = steps
        .iter()
        .map(|s| {
            let resources = s["resources"]
                .as_array()
                .expect("resources")
                .iter()
                .map(|r| format!("{}/{}", r["kind"].as_str().expect("kind"), r["name"]))
                .collect();
            (key(s), resources)
        })
        .collect();
    let edges = steps
        .iter()
        .flat_map(|s| {
            s["after"]
                .as_array()
                .expect("after")
                .iter()
                .map(move |b| (key(&steps[b.as_u64().expect("index") as usize]), key(s)))
        })
        .collect();
    (listed, edges)
}

/// Steps in listed order and edges of a DOT or Mermaid plan.
fn drawn_graph(text: &str) -> (Vec<StepKey>, Edges) {
    let mut chart = String::new();
    let mut nodes: Vec<(String, StepKey)> = Vec::new();
    let mut edges = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("label=\"").or_else(|| {
            line.strip_prefix("subgraph c")
                .and_then(|r| r.split_once("[\""))
                .map(|(_, r)| r)
        }) {
            rest.split('"')
                .next()
                .expect("label")
                .clone_into(&mut chart);
        } else if let Some((a, b)) = line.split_once(" -> ").or_else(|| line.split_once(" --> ")) {
            edges.push((a.to_owned(), b.trim_end_matches(';').to_owned()));
        } else if line
            .strip_prefix('s')
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        {
            let id = line.split(['[', ' ', '(']).next().expect("id").to_owned();
            let name = line.split('"').nth(1).expect("name");
            let name = name.split("\\n").next().expect("name");
            let group = (!matches!(name, "(unsequenced)" | "unsequenced")).then(|| name.to_owned());
            nodes.push((id, (chart.clone(), group)));
        }
    }
    let key = |id: &str| {
        nodes.iter().find(|(n, _)| n == id).map_or_else(
            || panic!("edge to an undeclared node {id}: {text}"),
            |(_, k)| k.clone(),
        )
    };
    let edges = edges.iter().map(|(a, b)| (key(a), key(b))).collect();
    (nodes.into_iter().map(|(_, k)| k).collect(), edges)
}

fn turned(edges: &Edges) -> Edges {
    edges.iter().map(|(a, b)| (b.clone(), a.clone())).collect()
}

#[test]
fn uninstall_is_the_exact_reverse_in_every_format() {
    let mut several = false;
    for name in ["diamond", "platform"] {
        let (install, edges) = json_graph(&plan_of(name, &["--format", "json"]));
        let (uninstall, reversed_edges) =
            json_graph(&plan_of(name, &["--format", "json", "--uninstall"]));
        let expected: Vec<(StepKey, Vec<String>)> = install
            .iter()
            .rev()
            .map(|(k, r)| (k.clone(), r.iter().rev().cloned().collect()))
            .collect();
        assert_eq!(
            uninstall, expected,
            "{name}: json steps and resources reversed"
        );
        several |= install.iter().any(|(_, r)| r.len() > 1);
        assert_eq!(reversed_edges, turned(&edges), "{name}: json edges turned");
        assert!(!edges.is_empty());

        // Text: the same steps with the same resource order as JSON.
        let text = plan_of(name, &["--uninstall"]);
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("  ") && l.contains(". "))
            .collect();
        assert_eq!(lines.len(), expected.len(), "{name}: {text}");
        for (line, ((chart, group), resources)) in lines.iter().zip(&expected) {
            let what = group
                .as_ref()
                .map_or_else(|| "unsequenced".to_owned(), |g| format!("group {g}"));
            let listed: Vec<String> = resources.iter().map(|r| r.replace('"', "")).collect();
            assert!(
                line.ends_with(&format!("{chart} {what}: {}", listed.join(", "))),
                "{name}: {line}"
            );
        }

        for format in ["dot", "mermaid"] {
            let (nodes, drawn) = drawn_graph(&plan_of(name, &["--format", format]));
            let (reversed_nodes, reversed_drawn) =
                drawn_graph(&plan_of(name, &["--format", format, "--uninstall"]));
            let install_keys: Vec<StepKey> = install.iter().map(|(k, _)| k.clone()).collect();
            assert_eq!(
                nodes.iter().collect::<BTreeSet<_>>(),
                install_keys.iter().collect::<BTreeSet<_>>(),
                "{name} {format}: every step drawn"
            );
            assert_eq!(drawn, edges, "{name} {format}: install edges as in json");
            let mut backwards = nodes.clone();
            backwards.reverse();
            assert_eq!(reversed_nodes, backwards, "{name} {format}: steps reversed");
            assert_eq!(
                reversed_drawn,
                turned(&edges),
                "{name} {format}: edges turned"
            );
        }
    }
    assert!(several, "a step with several resources shows their order");
}

#[test]
fn documents_of_only_comments_are_no_resources() {
    let stream = "fixtures/streams/comments.yaml";
    let json = plan(&[stream, "--format", "json"]);
    let doc: Value = serde_json::from_str(&json).expect("json");
    let mut resources = Vec::new();
    for step in doc["steps"].as_array().expect("steps") {
        resources.extend(
            step["resources"]
                .as_array()
                .expect("resources")
                .iter()
                .cloned(),
        );
    }
    for level in doc["levels"].as_array().expect("levels") {
        resources.extend(
            level["unsequenced"]
                .as_array()
                .expect("unsequenced")
                .iter()
                .cloned(),
        );
    }
    resources.extend(doc["crds"].as_array().expect("crds").iter().cloned());
    resources.extend(
        doc["hooks"]
            .as_array()
            .expect("hooks")
            .iter()
            .map(|h| h["resource"].clone()),
    );
    assert!(
        resources.iter().all(|r| r["kind"].is_string()),
        "no resource without a kind: {json}"
    );
    assert_eq!(resources.len(), 8, "two resources and six hooks: {json}");
    assert!(!json.contains("\"empty\""), "{json}");
    // A subchart that rendered only comments is still a chart Helm loaded: a level, with
    // nothing in it.
    let levels = doc["levels"].as_array().expect("levels");
    assert_eq!(levels.len(), 2, "{json}");
    assert_eq!(levels[1]["unsequenced"], serde_json::json!([]), "{json}");
    assert_eq!(levels[1]["group_batches"], serde_json::json!([]), "{json}");

    let text = plan(&[stream]);
    assert!(!text.contains("empty document"), "{text}");
    assert!(
        !text.contains("Unsequenced"),
        "nothing is unsequenced: {text}"
    );
    for format in ["dot", "mermaid"] {
        let drawn = plan(&[stream, "--format", format]);
        assert!(!drawn.contains("unsequenced"), "{format}: {drawn}");
    }
    let uninstall = plan(&[stream, "--format", "json", "--uninstall"]);
    assert!(!uninstall.contains("\"kind\": null"), "{uninstall}");

    // `template` still prints them, byte for byte.
    let (code, template, err) = run(chartseq().args(["template", stream]));
    assert_eq!(code, 0, "{err}");
    let input = std::fs::read_to_string(crate::fixture("streams/comments.yaml")).expect("fixture");
    for comment in [
        "# Source: web/templates/pdb.yaml\n# PDB is not supported for DaemonSets.\n# https://github.com/kubernetes/kubernetes/issues/108124\n",
        "# Source: web/charts/cache/templates/cache.yaml\n# the cache is disabled: nothing rendered\n",
    ] {
        assert!(input.contains(comment));
        assert_eq!(template.matches(comment).count(), 1, "{template}");
    }
    assert_eq!(
        template.matches("---\n").count(),
        input.matches("---\n").count(),
        "every document once: {template}"
    );

    // Lint: no finding and nothing counted for them.
    let (code, lint, err) = run(chartseq().args(["lint", stream, "--format", "json"]));
    assert_eq!(code, 0, "{lint}\n{err}");
    let report: Value = serde_json::from_str(&lint).expect("json");
    assert_eq!(report["diagnostics"], serde_json::json!([]), "{lint}");
}

/// A subchart that renders only comments renders no resources: no CS104 for it.
#[test]
fn a_subchart_of_only_comments_renders_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let chart = dir.path().join("web");
    std::fs::create_dir_all(chart.join("charts/cache")).expect("mkdir");
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    )
    .expect("write");
    std::fs::write(
        chart.join("charts/cache/Chart.yaml"),
        "apiVersion: v2\nname: cache\nversion: 0.1.0\n",
    )
    .expect("write");
    let stream = dir.path().join("s.yaml");
    let only_comments = "---\n# Source: web/charts/cache/templates/cache.yaml\n# disabled\n";
    let resource = "---\n# Source: web/charts/cache/templates/cache.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cache\n";
    for (body, findings) in [(only_comments, 0), (resource, 1)] {
        std::fs::write(&stream, body).expect("write");
        let (_, out, err) = run(chartseq()
            .arg("lint")
            .arg(&stream)
            .arg("--chart")
            .arg(&chart)
            .args(["--format", "json"]));
        let report: Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
        let cs104 = report["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .filter(|d| d["code"] == "CS104")
            .count();
        assert_eq!(cs104, findings, "{body}: {out}");
    }
}

#[test]
fn hooks_of_equal_weight_and_name_follow_helms_kind_order() {
    let stream = "fixtures/streams/comments.yaml";
    let expected = [
        "Secret/early",
        "ServiceAccount/setup",
        "ConfigMap/setup",
        "Job/setup",
        // Unknown kinds last, by kind name, as Helm's kind sorter puts them.
        "Gadget/setup",
        "Widget/setup",
    ];
    let doc: Value = serde_json::from_str(&plan(&[stream, "--format", "json"])).expect("json");
    let hooks: Vec<String> = doc["hooks"]
        .as_array()
        .expect("hooks")
        .iter()
        .map(|h| {
            format!(
                "{}/{}",
                h["resource"]["kind"].as_str().expect("kind"),
                h["resource"]["name"].as_str().expect("name")
            )
        })
        .collect();
    assert_eq!(hooks, expected);
    let text = plan(&[stream]);
    let listed = expected
        .iter()
        .zip(["-1", "0", "0", "0", "0", "0"])
        .map(|(h, w)| format!("{h} (weight {w})"))
        .collect::<Vec<_>>()
        .join(", ");
    // The list is wrapped below its title: read as one line.
    let unwrapped = text.replace(",\n    ", ", ").replace(":\n    ", ": ");
    assert!(
        unwrapped.contains(&format!("pre-install hooks (6): {listed}\n")),
        "{text}"
    );
    let (code, template, err) = run(chartseq().args(["template", stream, "--markers"]));
    assert_eq!(code, 0, "{err}");
    let printed: Vec<String> = template
        .split("\n---\n")
        .filter(|d| d.contains("helm.sh/hook:"))
        .map(|d| {
            let field = |key: &str| {
                d.lines()
                    .find_map(|l| l.trim().strip_prefix(key))
                    .expect("field")
                    .trim()
                    .to_owned()
            };
            format!("{}/{}", field("kind:"), field("name:"))
        })
        .collect();
    assert_eq!(
        printed, expected,
        "template --markers prints hooks in the order they run"
    );
}

/// Writes `text` to `path`, creating its directory.
fn put(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// `(Source, kind, name)` of every object in a rendered stream, sorted.
fn rendered_objects(stream: &str) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = stream
        .split("\n---\n")
        .filter_map(|doc| {
            let field = |key: &str| {
                doc.lines()
                    .find_map(|l| l.strip_prefix(key))
                    .map(|v| v.trim().to_owned())
            };
            Some((field("# Source: ")?, field("kind: ")?, field("  name: ")?))
        })
        .collect();
    out.sort();
    out
}

/// A monorepo whose application chart links shared charts into `charts/` (one relative link,
/// one absolute), compared with what real helm v4.1.4 renders from it.
#[cfg(unix)]
#[test]
fn symlinked_subcharts_are_followed_like_helm() {
    let Some(helm) = crate::tool("helm") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("monorepo");
    let configmap = |name: &str, group: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{{{ .Release.Name }}}}-{name}\n  annotations:\n    helm.sh/resource-group: {group}\ndata:\n  from: {name}\n"
        )
    };
    put(
        &repo.join("libs/common/Chart.yaml"),
        "apiVersion: v2\nname: common\nversion: 0.1.0\n",
    );
    put(
        &repo.join("libs/common/templates/common.yaml"),
        &configmap("common", "base"),
    );
    put(
        &repo.join("libs/db/Chart.yaml"),
        "apiVersion: v2\nname: db\nversion: 0.1.0\n",
    );
    put(
        &repo.join("libs/db/templates/db.yaml"),
        &configmap("db", "data"),
    );
    put(
        &repo.join("apps/shop/Chart.yaml"),
        "apiVersion: v2\nname: shop\nversion: 0.1.0\ndependencies:\n  - name: common\n    version: 0.1.0\n  - name: db\n    version: 0.1.0\n    depends-on: [common]\n",
    );
    put(
        &repo.join("apps/shop/templates/app.yaml"),
        &configmap("app", "app"),
    );
    std::fs::create_dir_all(repo.join("apps/shop/charts")).expect("mkdir");
    std::os::unix::fs::symlink("../../../libs/common", repo.join("apps/shop/charts/common"))
        .expect("relative link");
    std::os::unix::fs::symlink(repo.join("libs/db"), repo.join("apps/shop/charts/db"))
        .expect("absolute link");
    let chart = repo.join("apps/shop");

    let output = std::process::Command::new(&helm)
        .arg("template")
        .arg("shop")
        .arg(&chart)
        .env("KUBECONFIG", "/dev/null")
        .output()
        .expect("helm runs");
    assert!(
        output.status.success(),
        "helm renders the monorepo: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let by_helm = rendered_objects(&String::from_utf8_lossy(&output.stdout));
    assert_eq!(by_helm.len(), 3, "{by_helm:?}");

    let chartseq_with_helm = |args: &[&str]| {
        run(chartseq()
            .args(args)
            .arg(&chart)
            .args(["--release-name", "shop"])
            .env("CHARTSEQ_HELM", &helm))
    };
    let (code, template, err) = chartseq_with_helm(&["template", "--keep-sequencing-annotations"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        rendered_objects(&template),
        by_helm,
        "the same objects as helm"
    );

    let (code, json, err) = chartseq_with_helm(&["plan", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&json).expect("json");
    assert_eq!(
        doc["levels"][0]["subchart_batches"],
        serde_json::json!([["common"], ["db"]]),
        "the linked subcharts are ordered by their depends-on: {json}"
    );
    let steps: Vec<(String, String)> = doc["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            (
                s["chart"].as_str().expect("chart").to_owned(),
                s["group"].as_str().expect("group").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [
            ("shop/common".to_owned(), "base".to_owned()),
            ("shop/db".to_owned(), "data".to_owned()),
            ("shop".to_owned(), "app".to_owned()),
        ]
    );

    // Findings point at the file a person edits: the link's target. (CS203 sits at the
    // chart's apiVersion; its label on the first sequencing annotation is in the linked
    // subchart.)
    let (_, lint, _) = chartseq_with_helm(&["lint", "--color", "never"]);
    let files: Vec<&str> = lint
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("┌─ "))
        .collect();
    assert!(
        files
            .iter()
            .any(|f| f.contains("libs/common/templates/common.yaml:")),
        "{lint}"
    );
    assert!(!files.iter().any(|f| f.contains("charts/common")), "{lint}");
}
