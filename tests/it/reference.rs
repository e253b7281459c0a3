//! The split HIP-0025 pull requests' own tests (`caretak3r/helm`, the reference
//! implementation), converted: each test names the file it comes from. Their charts become
//! rendered streams (`# Source: testchart/templates/…`) that `chartseq lint` and `chartseq plan`
//! read as the reference's `helm lint` and install read its templates. Where chartseq differs on
//! purpose, the test asserts chartseq's behaviour and the README's "What chartseq follows"
//! section says why.

use std::fmt::Write as _;

use crate::{chartseq, run};

/// A plan's root level: its group batches and unsequenced resources (`Kind/name`).
type Level = (Vec<Vec<String>>, Vec<String>);

/// The key the reference's current code reads for group dependencies
/// (`internal/release/v2/resourcegroup/resource_group.go`, `AnnotationDependsOnResourceGroups`).
const REFERENCE_DEPENDS_ON: &str = "helm.sh/depends-on-resource-groups";
/// HIP-0025's spelling of it.
const HIP_DEPENDS_ON: &str = "helm.sh/depends-on/resource-groups";
const GROUP: &str = "helm.sh/resource-group";
const HOOK: &str = "helm.sh/hook";

/// One template of the reference tests' `groupLintManifestYAML(kind, name, annotations)`:
/// its annotations sorted and double-quoted as Go's `%q` writes them.
fn manifest(template: &str, kind: &str, name: &str, annotations: &[(&str, &str)]) -> String {
    let mut text = format!(
        "---\n# Source: testchart/templates/{template}\napiVersion: v1\nkind: {kind}\nmetadata:\n  name: {name}\n"
    );
    if !annotations.is_empty() {
        text.push_str("  annotations:\n");
        let mut sorted = annotations.to_vec();
        sorted.sort_unstable();
        for (k, v) in sorted {
            let quoted = serde_json::to_string(v).expect("a string");
            let _ = writeln!(text, "    {k}: {quoted}");
        }
    }
    text
}

/// A stream written to a temporary directory (kept alive by the returned guard).
fn stream(docs: &[String]) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("rendered.yaml");
    std::fs::write(&path, docs.concat()).expect("written");
    let path = path.to_str().expect("UTF-8").to_owned();
    (dir, path)
}

/// `chartseq lint --format json`: (code, severity, message) of every finding.
fn lint(docs: &[String]) -> Vec<(String, String, String)> {
    let (_dir, path) = stream(docs);
    let (_, out, err) = run(chartseq().args(["lint", &path, "--format", "json"]));
    let json: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    json["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap_or_default().to_owned(),
                d["severity"].as_str().unwrap_or_default().to_owned(),
                d["message"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// `chartseq plan --format json`: the root level's group batches and unsequenced resources
/// (`Kind/name`), or the exit code and error when there is no plan.
fn plan(docs: &[String]) -> Result<Level, (i32, String)> {
    let (_dir, path) = stream(docs);
    let (code, out, err) = run(chartseq().args(["plan", &path, "--format", "json"]));
    if code != 0 {
        return Err((code, err));
    }
    let json: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    let level = &json["levels"][0];
    let batches = serde_json::from_value(level["group_batches"].clone()).expect("batches");
    let unsequenced = level["unsequenced"]
        .as_array()
        .expect("unsequenced")
        .iter()
        .map(|r| {
            format!(
                "{}/{}",
                r["kind"].as_str().unwrap_or(""),
                r["name"].as_str().unwrap_or("")
            )
        })
        .collect();
    Ok((batches, unsequenced))
}

fn codes(findings: &[(String, String, String)]) -> Vec<(&str, &str)> {
    findings
        .iter()
        .map(|(c, s, _)| (c.as_str(), s.as_str()))
        .collect()
}

/// Source: `internal/chart/v3/lint/rules/sequencing_groups_test.go`,
/// `TestSequencing_ResourceGroupDiagnostics`: each case's severity, as chartseq's rule. The
/// reference writes dependencies under its key, `helm.sh/depends-on-resource-groups`.
#[test]
fn reference_resource_group_diagnostics() {
    let cases: Vec<(&str, Vec<String>, (&str, &str))> = vec![
        (
            "cycle",
            vec![
                manifest(
                    "a.yaml",
                    "ConfigMap",
                    "a",
                    &[(GROUP, "a"), (REFERENCE_DEPENDS_ON, r#"["b"]"#)],
                ),
                manifest(
                    "b.yaml",
                    "ConfigMap",
                    "b",
                    &[(GROUP, "b"), (REFERENCE_DEPENDS_ON, r#"["a"]"#)],
                ),
            ],
            ("CS001", "error"),
        ),
        (
            "unknown group reference",
            vec![manifest(
                "app.yaml",
                "ConfigMap",
                "app",
                &[(GROUP, "app"), (REFERENCE_DEPENDS_ON, r#"["database"]"#)],
            )],
            ("CS101", "error"),
        ),
        (
            "malformed dependency JSON",
            vec![manifest(
                "app.yaml",
                "ConfigMap",
                "app",
                &[(GROUP, "app"), (REFERENCE_DEPENDS_ON, "not-json")],
            )],
            ("CS201", "error"),
        ),
        (
            "duplicate resource membership",
            vec![
                manifest("first.yaml", "ConfigMap", "shared", &[(GROUP, "first")]),
                manifest("second.yaml", "ConfigMap", "shared", &[(GROUP, "second")]),
            ],
            ("CS004", "error"),
        ),
        (
            "isolated groups",
            vec![
                manifest("a.yaml", "ConfigMap", "a", &[(GROUP, "a")]),
                manifest("b.yaml", "ConfigMap", "b", &[(GROUP, "b")]),
            ],
            ("CS003", "warning"),
        ),
    ];
    for (name, docs, want) in cases {
        let found = lint(&docs);
        assert!(codes(&found).contains(&want), "{name}: {found:?}");
        // Nothing else at error level: the one problem is reported once, by its rule.
        let errors: Vec<_> = codes(&found)
            .into_iter()
            .filter(|(_, s)| *s == "error")
            .collect();
        assert!(errors.iter().all(|e| *e == want), "{name}: {found:?}");
    }
    // The malformed value is named under the key it was read from.
    let found = lint(&[manifest(
        "app.yaml",
        "ConfigMap",
        "app",
        &[(GROUP, "app"), (REFERENCE_DEPENDS_ON, "not-json")],
    )]);
    assert!(
        found[0]
            .2
            .contains(&format!("`{REFERENCE_DEPENDS_ON}` is malformed")),
        "{found:?}"
    );
}

/// Source: `internal/chart/v3/lint/rules/sequencing_groups_test.go`,
/// `TestSequencing_CleanResourceGroups`: no findings, and the reference's key orders the
/// groups (it is read, not reported as unknown).
#[test]
fn reference_clean_resource_groups() {
    let docs = [
        manifest(
            "database.yaml",
            "ConfigMap",
            "database",
            &[(GROUP, "database")],
        ),
        manifest(
            "app.yaml",
            "ConfigMap",
            "app",
            &[(GROUP, "app"), (REFERENCE_DEPENDS_ON, r#"["database"]"#)],
        ),
    ];
    assert_eq!(lint(&docs), vec![]);
    let (batches, unsequenced) = plan(&docs).expect("a plan");
    assert_eq!(
        batches,
        vec![vec!["database".to_owned()], vec!["app".to_owned()]]
    );
    assert!(unsequenced.is_empty());
}

/// Source: `internal/chart/v3/lint/rules/sequencing_groups_test.go`,
/// `TestSequencing_HookResourcesExcludedFromResourceGroups`. Both leave the hook out of the
/// groups (no cycle through it); the reference's lint says nothing of the annotations on the
/// hook, chartseq warns (CS401) that they are ignored, a deliberate difference.
#[test]
fn reference_hook_resources_excluded_from_resource_groups() {
    let docs = [
        manifest("base.yaml", "ConfigMap", "base", &[(GROUP, "base")]),
        manifest(
            "app.yaml",
            "ConfigMap",
            "app",
            &[(GROUP, "app"), (REFERENCE_DEPENDS_ON, r#"["base"]"#)],
        ),
        manifest(
            "hook.yaml",
            "Job",
            "hook",
            &[
                (HOOK, "pre-install"),
                (GROUP, "base"),
                (REFERENCE_DEPENDS_ON, r#"["app"]"#),
            ],
        ),
    ];
    assert_eq!(codes(&lint(&docs)), vec![("CS401", "warning")]);
    let (batches, _) = plan(&docs).expect("a plan: the hook makes no cycle");
    assert_eq!(
        batches,
        vec![vec!["base".to_owned()], vec!["app".to_owned()]]
    );
}

/// Source: `internal/release/v2/resourcegroup/resource_group.go` (`AnnotationDependsOnResourceGroups
/// = "helm.sh/depends-on-resource-groups"`): chartseq orders by either spelling, the same
/// plan; both set and agreeing is one order, both set and disagreeing is CS205.
#[test]
fn both_dependency_keys_order_groups() {
    let with = |key: &str, extra: Option<(&str, &str)>| {
        let mut app = vec![(GROUP, "app"), (key, r#"["db"]"#)];
        app.extend(extra);
        vec![
            manifest("db.yaml", "ConfigMap", "db", &[(GROUP, "db")]),
            manifest("app.yaml", "ConfigMap", "app", &app),
        ]
    };
    let hip = plan(&with(HIP_DEPENDS_ON, None)).expect("a plan");
    let reference = plan(&with(REFERENCE_DEPENDS_ON, None)).expect("a plan");
    assert_eq!(hip, reference);
    assert_eq!(hip.0, vec![vec!["db".to_owned()], vec!["app".to_owned()]]);
    assert_eq!(lint(&with(REFERENCE_DEPENDS_ON, None)), vec![]);
    // Both, agreeing: no finding.
    let both = with(HIP_DEPENDS_ON, Some((REFERENCE_DEPENDS_ON, r#"["db"]"#)));
    assert_eq!(lint(&both), vec![]);
    // Both, disagreeing: an error that names both lists.
    let mut docs = with(
        HIP_DEPENDS_ON,
        Some((REFERENCE_DEPENDS_ON, r#"["db", "queue"]"#)),
    );
    docs.push(manifest(
        "queue.yaml",
        "ConfigMap",
        "queue",
        &[(GROUP, "queue")],
    ));
    let found = lint(&docs);
    // (queue is isolated too: chartseq plans with the two-`/` key's list.)
    assert_eq!(
        codes(&found),
        vec![("CS205", "error"), ("CS003", "warning")],
        "{found:?}"
    );
    assert!(found[0].2.contains("names [db] but"), "{found:?}");
}

/// A chart of the reference tests' `newSequencingChart`: `apiVersion: v3`, version 0.1.0,
/// with `Chart.yaml` extras (dependencies, annotations) and its subcharts under `charts/`.
struct Chart {
    name: &'static str,
    extra: String,
    subcharts: Vec<Chart>,
}

fn chart(name: &'static str, extra: impl Into<String>, subcharts: Vec<Chart>) -> Chart {
    Chart {
        name,
        extra: extra.into(),
        subcharts,
    }
}

fn write_chart(dir: &std::path::Path, c: &Chart) {
    std::fs::create_dir_all(dir.join("templates")).expect("chart dir");
    std::fs::write(
        dir.join("Chart.yaml"),
        format!(
            "apiVersion: v3\nname: {}\nversion: 0.1.0\n{}",
            c.name, c.extra
        ),
    )
    .expect("Chart.yaml");
    for sub in &c.subcharts {
        write_chart(&dir.join("charts").join(sub.name), sub);
    }
}

/// `chartseq lint` of `rendered` (documents with `# Source:` paths) with the chart on disk.
/// The reference's charts here have no templates; chartseq reads a stream that holds at
/// least one document, so the root chart renders one plain `ConfigMap` as well (it changes
/// no finding: it has no sequencing annotation).
fn lint_chart(root: &Chart, rendered: &str) -> Vec<(String, String, String)> {
    let rendered = config_map(&format!("{}/templates/cm.yaml", root.name), "root-cm") + rendered;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let chart_dir = dir.path().join(root.name);
    write_chart(&chart_dir, root);
    let stream = dir.path().join("rendered.yaml");
    std::fs::write(&stream, rendered).expect("written");
    let (_, out, err) = run(chartseq()
        .arg("lint")
        .arg(&stream)
        .arg("--chart")
        .arg(&chart_dir)
        .args(["--format", "json"]));
    let json: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    json["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap_or_default().to_owned(),
                d["severity"].as_str().unwrap_or_default().to_owned(),
                d["message"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// A `ConfigMap` of `manifestYAML(name)`, rendered from `source`.
fn config_map(source: &str, name: &str) -> String {
    format!("---\n# Source: {source}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n")
}

/// Source: `internal/chart/v3/lint/rules/sequencing_test.go`, `TestSequencing_SubchartCycle`.
#[test]
fn reference_subchart_cycle() {
    let root = chart(
        "testchart",
        "dependencies:\n- {name: subchart-a, version: 0.1.0, depends-on: [subchart-b]}\n- {name: subchart-b, version: 0.1.0, depends-on: [subchart-a]}\n",
        vec![
            chart("subchart-a", "", vec![]),
            chart("subchart-b", "", vec![]),
        ],
    );
    let found = lint_chart(&root, "");
    assert!(codes(&found).contains(&("CS002", "error")), "{found:?}");
}

/// Source: `internal/chart/v3/lint/rules/sequencing_test.go`,
/// `TestSequencing_AliasedSubchartDependsOnOriginalName`: a reference by the original name of
/// an aliased subchart is fine.
#[test]
fn reference_aliased_subchart_depends_on_original_name() {
    let root = chart(
        "testchart",
        "dependencies:\n- {name: subchart-a, version: 0.1.0, alias: aliased-a}\n- {name: subchart-b, version: 0.1.0, depends-on: [subchart-a]}\n",
        vec![
            chart("subchart-a", "", vec![]),
            chart("subchart-b", "", vec![]),
        ],
    );
    assert_eq!(lint_chart(&root, ""), vec![]);
}

/// Source: `internal/chart/v3/lint/rules/sequencing_test.go`,
/// `TestSequencing_AmbiguousDependsOnReported`.
#[test]
fn reference_ambiguous_depends_on_reported() {
    let root = chart(
        "testchart",
        "dependencies:\n- {name: subchart-a, version: 0.1.0, alias: first}\n- {name: subchart-a, version: 0.1.0, alias: second}\n- {name: subchart-b, version: 0.1.0, depends-on: [subchart-a]}\n",
        vec![
            chart("subchart-a", "", vec![]),
            chart("subchart-b", "", vec![]),
        ],
    );
    let found = lint_chart(&root, "");
    assert!(codes(&found).contains(&("CS103", "error")), "{found:?}");
}

/// Source: `internal/chart/v3/lint/rules/sequencing_test.go`,
/// `TestSequencing_ParentAnnotationUnknownRef`.
#[test]
fn reference_parent_annotation_unknown_ref() {
    let root = chart(
        "testchart",
        "annotations:\n  helm.sh/depends-on/subcharts: '[\"does-not-exist\"]'\n",
        vec![],
    );
    let found = lint_chart(&root, "");
    assert!(codes(&found).contains(&("CS102", "error")), "{found:?}");
}

/// Source: `internal/chart/v3/lint/rules/sequencing_test.go`,
/// `TestSequencing_NestedSubchartCycle`: the cycle is found one level down and the finding
/// names that level.
#[test]
fn reference_nested_subchart_cycle() {
    let child = chart(
        "child",
        "dependencies:\n- {name: grandchild-a, version: 0.1.0, depends-on: [grandchild-b]}\n- {name: grandchild-b, version: 0.1.0, depends-on: [grandchild-a]}\n",
        vec![
            chart("grandchild-a", "", vec![]),
            chart("grandchild-b", "", vec![]),
        ],
    );
    let root = chart(
        "testchart",
        "dependencies:\n- {name: child, version: 0.1.0}\n",
        vec![child],
    );
    let found = lint_chart(
        &root,
        &config_map("testchart/charts/child/templates/cm.yaml", "child-cm"),
    );
    let cycle = found
        .iter()
        .find(|(c, s, _)| c == "CS002" && s == "error")
        .unwrap_or_else(|| panic!("{found:?}"));
    assert!(cycle.2.contains("child"), "{found:?}");
}

/// Source: `internal/chart/v3/lint/rules/sequencing_test.go`,
/// `TestSequencing_NestedUnknownDependsOnRef`.
#[test]
fn reference_nested_unknown_depends_on_ref() {
    let child = chart(
        "child",
        "dependencies:\n- {name: grandchild, version: 0.1.0, depends-on: [missing]}\n",
        vec![chart("grandchild", "", vec![])],
    );
    let root = chart(
        "testchart",
        "dependencies:\n- {name: child, version: 0.1.0}\n",
        vec![child],
    );
    let found = lint_chart(
        &root,
        &config_map("testchart/charts/child/templates/cm.yaml", "child-cm"),
    );
    let unknown = found
        .iter()
        .find(|(c, s, _)| c == "CS102" && s == "error")
        .unwrap_or_else(|| panic!("{found:?}"));
    assert!(unknown.2.contains("missing"), "{found:?}");
}

/// Source: `internal/chart/v3/lint/rules/sequencing_test.go`,
/// `TestSequencing_UndeclaredRenderedSubchart`.
#[test]
fn reference_undeclared_rendered_subchart() {
    let root = chart("testchart", "", vec![chart("vendored", "", vec![])]);
    let found = lint_chart(
        &root,
        &config_map("testchart/charts/vendored/templates/cm.yaml", "vendored-cm"),
    );
    assert!(codes(&found).contains(&("CS104", "warning")), "{found:?}");
}

/// Source: `internal/chart/v3/lint/rules/sequencing_test.go`,
/// `TestSequencing_HookOnlyUndeclaredSubchartIgnored`.
#[test]
fn reference_hook_only_undeclared_subchart_ignored() {
    let root = chart("testchart", "", vec![chart("vendored", "", vec![])]);
    let hook = "---\n# Source: testchart/charts/vendored/templates/hook.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hook\n  annotations:\n    helm.sh/hook: pre-install\n";
    assert_eq!(lint_chart(&root, hook), vec![]);
}

/// A readiness case: its name, the annotations, the finding's code and words (if any).
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, Option<(&'a str, &'a str)>);

const SUCCESS: &str = "helm.sh/readiness-success";
const FAILURE: &str = "helm.sh/readiness-failure";

/// The reference's `readinessManifestYAML(annotations)`: a `ConfigMap` of chart
/// `readiness-test`.
fn readiness_manifest(annotations: &[(&str, &str)]) -> Vec<String> {
    let mut doc = manifest("configmap.yaml", "ConfigMap", "readiness-test", annotations)
        .replace("testchart/", "readiness-test/");
    doc.push_str("data:\n  key: value\n");
    vec![doc]
}

/// Source: `internal/chart/v3/lint/rules/readiness_test.go`, `TestReadinessRule_PresencePairs`:
/// every case the reference reports is an error here too. Where the reference reads a blank
/// or `null` value as absent (so the pair is one-sided), chartseq names the value malformed
/// (CS201): it is not a JSON array; both are errors and both fall back to kstatus.
#[test]
fn reference_readiness_presence_pairs() {
    let success = r#"["{.status.phase} == \"Ready\""]"#;
    let failure = r#"["{.status.phase} == \"Failed\""]"#;
    let cases: Vec<Case> = vec![
        (
            "success only",
            vec![(SUCCESS, success)],
            Some(("CS301", "without a non-empty")),
        ),
        (
            "failure only",
            vec![(FAILURE, failure)],
            Some(("CS301", "without a non-empty")),
        ),
        (
            "blank is absent",
            vec![(SUCCESS, ""), (FAILURE, failure)],
            Some(("CS201", "is malformed")),
        ),
        (
            "empty array is absent",
            vec![(SUCCESS, "[]"), (FAILURE, failure)],
            Some(("CS301", "without a non-empty")),
        ),
        (
            "null is absent",
            vec![(SUCCESS, "null"), (FAILURE, failure)],
            Some(("CS201", "JSON null")),
        ),
        (
            "malformed JSON",
            vec![
                (SUCCESS, r#"["{.status.phase} == \"Ready\"""#),
                (FAILURE, failure),
            ],
            Some(("CS201", "not valid JSON")),
        ),
        (
            "blank array element",
            vec![(SUCCESS, r#"[""]"#), (FAILURE, failure)],
            Some(("CS201", "empty string")),
        ),
        (
            "non-numeric ordering literal",
            vec![
                (SUCCESS, r#"["{.status.phase} > \"Running\""]"#),
                (FAILURE, failure),
            ],
            Some(("CS303", "not a number")),
        ),
        ("both absent", vec![], None),
        (
            "both valid",
            vec![(SUCCESS, success), (FAILURE, failure)],
            None,
        ),
        (
            "quoted numeric ordering",
            vec![
                (SUCCESS, r#"["{.status.readyReplicas} >= \"1\""]"#),
                (FAILURE, r#"["{.status.failed} > \"0\""]"#),
            ],
            None,
        ),
    ];
    for (name, annotations, want) in cases {
        let found = lint(&readiness_manifest(&annotations));
        match want {
            None => assert_eq!(found, vec![], "{name}"),
            Some((code, words)) => {
                assert_eq!(found.len(), 1, "{name}: {found:?}");
                let (c, severity, message) = &found[0];
                assert_eq!(
                    (c.as_str(), severity.as_str()),
                    (code, "error"),
                    "{name}: {found:?}"
                );
                assert!(message.contains(words), "{name}: {found:?}");
            }
        }
    }
}

/// Source: `internal/chart/v3/lint/rules/readiness_test.go`, `TestReadinessRule_HooksSkipped`:
/// a hook's readiness is never checked (a one-sided pair there is no error). The reference's
/// lint says nothing; chartseq warns (CS401) that the annotation is ignored.
#[test]
fn reference_readiness_hooks_skipped() {
    let found = lint(&readiness_manifest(&[
        (HOOK, "pre-install"),
        (SUCCESS, r#"["{.status.phase} == \"Ready\""]"#),
    ]));
    assert_eq!(codes(&found), vec![("CS401", "warning")], "{found:?}");
}

/// Source: `internal/chart/v3/lint/rules/readiness_test.go`,
/// `TestReadinessRule_QuietWithoutAnnotations`.
#[test]
fn reference_readiness_quiet_without_annotations() {
    assert_eq!(lint(&readiness_manifest(&[])), vec![]);
}

/// Source: `pkg/cmd/flags_test.go`, `TestReadinessTimeout`: install, upgrade and rollback take
/// `--readiness-timeout` (chartseq: `apply` and `rollback`) and `template` does not. The
/// reference's uninstall does not take it; chartseq's does, on purpose: its uninstall waits
/// for each step to be gone before the next (the exact reverse of install), and this bounds
/// each of those waits.
#[test]
fn reference_readiness_timeout_flag() {
    for (command, takes) in [
        ("apply", true),
        ("rollback", true),
        ("uninstall", true),
        ("template", false),
    ] {
        let (code, out, err) = run(chartseq().args([command, "--help"]));
        assert_eq!(code, 0, "{command}: {err}");
        assert_eq!(
            out.contains("--readiness-timeout"),
            takes,
            "{command}: {out}"
        );
    }
}

/// The reference's `makeManifest(name, sourcePath, annotations)`: a `ConfigMap`, its
/// dependencies under the reference's key.
fn cm(name: &str, annotations: &[(&str, &str)]) -> String {
    manifest(&format!("{name}.yaml"), "ConfigMap", name, annotations)
}

fn owned(batches: &[&[&str]]) -> Vec<Vec<String>> {
    batches
        .iter()
        .map(|b| b.iter().map(|s| (*s).to_owned()).collect())
        .collect()
}

/// Plans `docs` and returns the root level, failing the test when there is no plan.
fn planned(docs: &[String]) -> Level {
    plan(docs).unwrap_or_else(|(code, err)| panic!("exit {code}: {err}"))
}

/// Source: `internal/release/v2/resourcegroup/resource_group_test.go`: the parser's cases,
/// as the plans chartseq makes of them. Isolated groups: the parser keeps them in the first
/// batch, and the reference's sequence builder then moves them to the unsequenced batch when
/// the level has two or more groups (`pkg/cmd/testdata/output/dag-v3-sequenced-isolated.txt`),
/// as chartseq's plan does.
#[test]
fn reference_parse_resource_groups() {
    let dep = |on: &'static str| (REFERENCE_DEPENDS_ON, on);
    let g = |name: &'static str| (GROUP, name);

    // TestParseResourceGroups_NoAnnotations
    let (batches, unsequenced) = planned(&[cm("plain-a", &[]), cm("plain-b", &[])]);
    assert!(batches.is_empty());
    assert_eq!(unsequenced, ["ConfigMap/plain-a", "ConfigMap/plain-b"]);

    // TestParseResourceGroups_GroupWithDependency
    let (batches, unsequenced) = planned(&[
        cm("database", &[g("database")]),
        cm("app", &[g("app"), dep(r#"["database"]"#)]),
    ]);
    assert_eq!(batches, owned(&[&["database"], &["app"]]));
    assert!(unsequenced.is_empty());

    // TestParseResourceGroups_MultipleResourcesPerGroup
    let docs = [
        manifest(
            "database-config.yaml",
            "ConfigMap",
            "database-config",
            &[g("database")],
        ),
        manifest(
            "database-secret.yaml",
            "ConfigMap",
            "database-secret",
            &[g("database")],
        ),
        cm("app", &[g("app"), dep(r#"["database"]"#)]),
    ];
    assert_eq!(planned(&docs).0, owned(&[&["database"], &["app"]]));

    // TestParseResourceGroups_ResourceAssignedToMultipleGroups: no plan, both groups named.
    let (code, err) = plan(&[
        manifest("database.yaml", "ConfigMap", "shared", &[g("database")]),
        manifest("cache.yaml", "ConfigMap", "shared", &[g("cache")]),
    ])
    .expect_err("a resource in two groups");
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("database") && err.contains("cache"), "{err}");

    // TestParseResourceGroups_SameNameDifferentNamespaces: no collision.
    let with_ns = |doc: String, ns: &str| {
        doc.replace(
            "  name: shared\n",
            &format!("  name: shared\n  namespace: {ns}\n"),
        )
    };
    let docs = [
        with_ns(
            manifest("a.yaml", "ConfigMap", "shared", &[g("groupA")]),
            "ns-a",
        ),
        with_ns(
            manifest("b.yaml", "ConfigMap", "shared", &[g("groupB")]),
            "ns-b",
        ),
    ];
    assert!(plan(&docs).is_ok());

    // TestParseResourceGroups_NonExistentGroupReferenceWarning
    let docs = [cm("app", &[g("app"), dep(r#"["missing"]"#)])];
    let (batches, unsequenced) = planned(&docs);
    assert!(batches.is_empty());
    assert_eq!(unsequenced, ["ConfigMap/app"]);
    let found = lint(&docs);
    assert!(
        found
            .iter()
            .any(|(c, _, m)| c == "CS101" && m.contains("missing")),
        "{found:?}"
    );

    // TestParseResourceGroups_EmptyStringDependencyDemoted: demoted here too; chartseq names
    // the empty name malformed (CS201) where the reference calls it a missing group.
    let docs = [cm("app", &[g("app"), dep(r#"[""]"#)])];
    assert_eq!(planned(&docs), (vec![], vec!["ConfigMap/app".to_owned()]));
    assert_eq!(codes(&lint(&docs)), vec![("CS201", "error")]);

    // TestParseResourceGroups_CascadingMissingDeps: both demoted, whatever the input order.
    let docs = [
        cm("app", &[g("app"), dep(r#"["database"]"#)]),
        cm("database", &[g("database"), dep(r#"["missing"]"#)]),
    ];
    for docs in [docs.to_vec(), docs.iter().rev().cloned().collect()] {
        let (batches, mut unsequenced) = planned(&docs);
        assert!(batches.is_empty());
        unsequenced.sort();
        assert_eq!(unsequenced, ["ConfigMap/app", "ConfigMap/database"]);
    }

    // TestParseResourceGroups_InvalidDependsOnJSON
    let docs = [cm("app", &[g("app"), dep("not-valid-json")])];
    assert_eq!(planned(&docs), (vec![], vec!["ConfigMap/app".to_owned()]));

    // TestParseResourceGroups_MixedSequencedAndUnsequenced: one group alone is not isolated.
    let docs = [cm("database", &[g("database")]), cm("plain", &[])];
    assert_eq!(
        planned(&docs),
        (owned(&[&["database"]]), vec!["ConfigMap/plain".to_owned()])
    );

    // TestResourceGroupDAG_CycleDetection: no plan. chartseq names the cycle as its path
    // (`a -> c -> b -> a`: a depends on c), where the reference lists the nodes (`a, b, c`).
    let (code, err) = plan(&[
        cm("a", &[g("a"), dep(r#"["c"]"#)]),
        cm("b", &[g("b"), dep(r#"["a"]"#)]),
        cm("c", &[g("c"), dep(r#"["b"]"#)]),
    ])
    .expect_err("a cycle");
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("a -> c -> b -> a"), "{err}");

    // TestParseResourceGroups_DeduplicatesDependencies
    let docs = [
        cm("database", &[g("database")]),
        manifest(
            "app-config.yaml",
            "ConfigMap",
            "app-config",
            &[g("app"), dep(r#"["database"]"#)],
        ),
        manifest(
            "app-secret.yaml",
            "ConfigMap",
            "app-secret",
            &[g("app"), dep(r#"["database"]"#)],
        ),
    ];
    assert_eq!(planned(&docs).0, owned(&[&["database"], &["app"]]));

    // TestParseResourceGroups_IsolatedGroupsRemainInBatch0 (and the builder's demotion).
    let docs = [
        cm("database", &[g("database")]),
        cm("metrics", &[g("metrics")]),
        cm("app", &[g("app"), dep(r#"["database"]"#)]),
    ];
    assert_eq!(
        planned(&docs),
        (
            owned(&[&["database"], &["app"]]),
            vec!["ConfigMap/metrics".to_owned()]
        )
    );

    // TestParseResourceGroups_ComplexDAG
    let docs = [
        cm("cache", &[g("cache")]),
        cm("database", &[g("database")]),
        cm("queue", &[g("queue")]),
        cm("api", &[g("api"), dep(r#"["database","queue"]"#)]),
        cm("worker", &[g("worker"), dep(r#"["cache","queue"]"#)]),
        cm("frontend", &[g("frontend"), dep(r#"["api"]"#)]),
    ];
    assert_eq!(
        planned(&docs).0,
        owned(&[
            &["cache", "database", "queue"],
            &["api", "worker"],
            &["frontend"]
        ])
    );
}

/// A chart level (`parent`, `parent/sub`) and its subchart batches.
type LevelBatches = (String, Vec<Vec<String>>);

/// `chartseq plan --format json` of the chart on disk (its root renders one `ConfigMap`): each level's
/// subchart batches by level (`parent`, `parent/sub`), or the exit code and error.
fn subchart_batches(root: &Chart, values: &str) -> Result<Vec<LevelBatches>, (i32, String)> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let chart_dir = dir.path().join(root.name);
    write_chart(&chart_dir, root);
    std::fs::write(chart_dir.join("values.yaml"), values).expect("values.yaml");
    let stream = dir.path().join("rendered.yaml");
    std::fs::write(
        &stream,
        config_map(&format!("{}/templates/cm.yaml", root.name), "root-cm"),
    )
    .expect("written");
    let (code, out, err) = run(chartseq()
        .arg("plan")
        .arg(&stream)
        .arg("--chart")
        .arg(&chart_dir)
        .args(["--format", "json"]));
    if code != 0 {
        return Err((code, err));
    }
    let json: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}{err}"));
    Ok(json["levels"]
        .as_array()
        .expect("levels")
        .iter()
        .map(|l| {
            (
                l["chart"].as_str().unwrap_or_default().to_owned(),
                serde_json::from_value(l["subchart_batches"].clone()).expect("batches"),
            )
        })
        .collect())
}

/// The root level's subchart batches.
fn root_batches(root: &Chart, values: &str) -> Vec<Vec<String>> {
    let levels = subchart_batches(root, values).unwrap_or_else(|(c, e)| panic!("exit {c}: {e}"));
    levels[0].1.clone()
}

/// The plan fails (exit 1) with `words` in its error.
fn plan_refused(root: &Chart, words: &str) {
    let (code, err) = subchart_batches(root, "").expect_err("no plan");
    assert_eq!(code, 1, "{err}");
    assert!(err.contains(words), "{err}");
}

fn subs(names: &[&'static str]) -> Vec<Chart> {
    names.iter().map(|n| chart(n, "", vec![])).collect()
}

/// Source: `internal/chart/v3/util/subchart_dag_test.go`: the subchart DAG's batches, as
/// chartseq's plan orders the subcharts of a level.
#[test]
fn reference_build_subchart_dag() {
    // TestBuildSubchartDAG_Empty
    assert!(root_batches(&chart("parent", "", vec![]), "").is_empty());
    // TestBuildSubchartDAG_NoDependencies
    let c = chart(
        "parent",
        "dependencies:\n- {name: nginx, version: 0.1.0}\n- {name: rabbitmq, version: 0.1.0}\n- {name: postgres, version: 0.1.0}\n",
        subs(&["nginx", "rabbitmq", "postgres"]),
    );
    assert_eq!(
        root_batches(&c, ""),
        owned(&[&["nginx", "postgres", "rabbitmq"]])
    );
    // TestBuildSubchartDAG_LinearOrder
    let c = chart(
        "parent",
        "dependencies:\n- {name: postgres, version: 0.1.0}\n- {name: rabbitmq, version: 0.1.0, depends-on: [postgres]}\n- {name: app, version: 0.1.0, depends-on: [rabbitmq]}\n",
        subs(&["postgres", "rabbitmq", "app"]),
    );
    assert_eq!(
        root_batches(&c, ""),
        owned(&[&["postgres"], &["rabbitmq"], &["app"]])
    );
    // TestBuildSubchartDAG_AliasResolution
    let c = chart(
        "parent",
        "dependencies:\n- {name: primary-db, alias: primary-db, version: 0.1.0}\n- {name: app, version: 0.1.0, depends-on: [primary-db]}\n",
        subs(&["primary-db", "app"]),
    );
    assert_eq!(root_batches(&c, ""), owned(&[&["primary-db"], &["app"]]));
    // TestBuildSubchartDAG_DisabledSubchart
    let c = chart(
        "parent",
        "dependencies:\n- {name: cache, version: 0.1.0, condition: cache.enabled}\n- {name: app, version: 0.1.0, depends-on: [cache]}\n",
        subs(&["cache", "app"]),
    );
    let (code, err) = subchart_batches(&c, "cache: {enabled: false}\n").expect_err("no plan");
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("cache"), "{err}");
    // TestBuildSubchartDAG_DisabledSubchartNotReferenced
    let c = chart(
        "parent",
        "dependencies:\n- {name: cache, version: 0.1.0, condition: cache.enabled}\n- {name: app, version: 0.1.0}\n",
        subs(&["cache", "app"]),
    );
    assert_eq!(
        root_batches(&c, "cache: {enabled: false}\n"),
        owned(&[&["app"]])
    );
    // TestBuildSubchartDAG_CycleDetection: chartseq names the path.
    let c = chart(
        "parent",
        "dependencies:\n- {name: a, version: 0.1.0, depends-on: [b]}\n- {name: b, version: 0.1.0, depends-on: [c]}\n- {name: c, version: 0.1.0, depends-on: [a]}\n",
        subs(&["a", "b", "c"]),
    );
    plan_refused(&c, "cycle");
    // TestBuildSubchartDAG_AnnotationBasedParentDependencies: the parent's annotation orders
    // the parent after its subcharts, not the subcharts among themselves.
    let c = chart(
        "parent",
        "annotations:\n  helm.sh/depends-on/subcharts: '[\"nginx\"]'\ndependencies:\n- {name: postgres, version: 0.1.0}\n- {name: nginx, version: 0.1.0}\n",
        subs(&["postgres", "nginx"]),
    );
    assert_eq!(root_batches(&c, ""), owned(&[&["nginx", "postgres"]]));
    // TestBuildSubchartDAG_HIPExample
    let c = chart(
        "foo",
        "annotations:\n  helm.sh/depends-on/subcharts: '[\"bar\", \"rabbitmq\"]'\ndependencies:\n- {name: nginx, version: 0.1.0}\n- {name: rabbitmq, version: 0.1.0}\n- {name: bar, version: 0.1.0, depends-on: [nginx, rabbitmq]}\n",
        subs(&["nginx", "rabbitmq", "bar"]),
    );
    assert_eq!(
        root_batches(&c, ""),
        owned(&[&["nginx", "rabbitmq"], &["bar"]])
    );
    // TestBuildSubchartDAG_MixedDeclarations
    let c = chart(
        "parent",
        "annotations:\n  helm.sh/depends-on/subcharts: '[\"worker\"]'\ndependencies:\n- {name: database, version: 0.1.0}\n- {name: api, version: 0.1.0, depends-on: [database]}\n- {name: worker, version: 0.1.0}\n",
        subs(&["database", "api", "worker"]),
    );
    assert_eq!(
        root_batches(&c, ""),
        owned(&[&["database", "worker"], &["api"]])
    );
    // TestBuildSubchartDAG_InvalidAnnotationJSON and _ObjectAnnotationRejected
    for value in [r#"'["app",'"#, r#"'{"nginx":["postgres"]}'"#] {
        let extra = format!(
            "annotations:\n  helm.sh/depends-on/subcharts: {value}\ndependencies:\n- {{name: app, version: 0.1.0}}\n"
        );
        plan_refused(
            &chart("parent", extra, subs(&["app"])),
            "helm.sh/depends-on/subcharts",
        );
    }
    // TestBuildSubchartDAG_NonExistentReference
    let c = chart(
        "parent",
        "dependencies:\n- {name: app, version: 0.1.0, depends-on: [missing]}\n",
        subs(&["app"]),
    );
    plan_refused(&c, "missing");
    // TestBuildSubchartDAG_AnnotationUnknownSubchart
    let c = chart(
        "parent",
        "annotations:\n  helm.sh/depends-on/subcharts: '[\"app\"]'\ndependencies:\n- {name: postgres, version: 0.1.0}\n",
        subs(&["postgres"]),
    );
    plan_refused(&c, "app");
    // TestBuildSubchartDAG_NestedSubcharts
    let nested = chart(
        "application",
        "dependencies:\n- {name: cache, version: 0.1.0}\n- {name: worker, version: 0.1.0, depends-on: [cache]}\n",
        subs(&["cache", "worker"]),
    );
    let c = chart(
        "parent",
        "dependencies:\n- {name: database, version: 0.1.0}\n- {name: application, version: 0.1.0, depends-on: [database]}\n",
        vec![chart("database", "", vec![]), nested],
    );
    let levels = subchart_batches(&c, "").unwrap_or_else(|(c, e)| panic!("exit {c}: {e}"));
    assert_eq!(levels[0].1, owned(&[&["database"], &["application"]]));
    let application = levels
        .iter()
        .find(|(name, _)| name == "parent/application")
        .unwrap_or_else(|| panic!("{levels:?}"));
    assert_eq!(application.1, owned(&[&["cache"], &["worker"]]));
}

/// Source: `internal/chart/v3/util/subchart_dag_test.go`, the `TestProcessDependencies_…`
/// cases: `depends-on` may name a subchart by its original name or its alias; a name two
/// aliased copies share is ambiguous; the parent's annotation resolves the same way.
#[test]
fn reference_process_dependencies() {
    for by in ["postgres", "primary-db"] {
        let extra = format!(
            "dependencies:\n- {{name: postgres, alias: primary-db, version: 0.1.0}}\n- {{name: app, version: 0.1.0, depends-on: [{by}]}}\n"
        );
        let c = chart("parent", extra, subs(&["postgres", "app"]));
        assert_eq!(
            root_batches(&c, ""),
            owned(&[&["primary-db"], &["app"]]),
            "{by}"
        );
    }
    // TestProcessDependencies_AmbiguousDependsOnRejected
    let c = chart(
        "parent",
        "dependencies:\n- {name: postgres, alias: db1, version: 0.1.0}\n- {name: postgres, alias: db2, version: 0.1.0}\n- {name: app, version: 0.1.0, depends-on: [postgres]}\n",
        subs(&["postgres", "app"]),
    );
    plan_refused(&c, "postgres");
    // TestProcessDependencies_RewritesSubchartAnnotation
    let c = chart(
        "parent",
        "annotations:\n  helm.sh/depends-on/subcharts: '[\"postgres\", \"app\"]'\ndependencies:\n- {name: postgres, alias: primary-db, version: 0.1.0}\n- {name: app, version: 0.1.0}\n",
        subs(&["postgres", "app"]),
    );
    assert_eq!(root_batches(&c, ""), owned(&[&["app", "primary-db"]]));
}
