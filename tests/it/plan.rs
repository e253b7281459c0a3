//! `chartseq plan` and `chartseq template` end to end: fixture charts, the HIP-0025 reference
//! implementation's conformance charts, exit codes, and real helm where available.

use crate::{chartseq, fixture, run, snapshot_settings, tool};

/// Fixture charts whose rendered stream (by real helm) is committed beside them.
const CHARTS: [&str; 10] = [
    "cycle-nested",
    "cycle-self",
    "cycle-two",
    "demotions",
    "diamond",
    "isolated-multi",
    "isolated-single",
    "platform",
    "two-groups",
    "unknown-subchart",
];

fn plan_stream(name: &str, args: &[&str]) -> (i32, String, String) {
    let rendered = format!("fixtures/charts/{name}.rendered.yaml");
    let chart = format!("fixtures/charts/{name}");
    run(chartseq()
        .args(["plan", &rendered, "--chart", &chart])
        .args(args))
}

#[test]
fn plan_text_json_and_dot_for_every_fixture_chart() {
    let settings = snapshot_settings();
    for name in CHARTS {
        let (code, text, text_err) = plan_stream(name, &[]);
        let (json_code, json, json_err) = plan_stream(name, &["--format", "json"]);
        let (dot_code, dot, dot_err) = plan_stream(name, &["--format", "dot"]);
        assert_eq!(
            code, json_code,
            "{name}: text and json disagree on the exit code"
        );
        assert_eq!(
            code, dot_code,
            "{name}: text and dot disagree on the exit code"
        );
        if code != 0 {
            // No plan: every format reports the same diagnostics (snapshotted below), and
            // prints no partial plan.
            assert!(text_err.contains("error"), "{name}: {text_err}");
            assert_eq!(json_err, text_err, "{name}: json reports other diagnostics");
            assert_eq!(dot_err, text_err, "{name}: dot reports other diagnostics");
            assert!(
                text.is_empty() && json.is_empty() && dot.is_empty(),
                "{name}"
            );
        }
        settings.bind(|| {
            insta::assert_snapshot!(
                format!("plan_{name}"),
                format!("exit {code}\n--- stdout\n{text}--- stderr\n{text_err}")
            );
            if code == 0 {
                let parsed: serde_json::Value =
                    serde_json::from_str(&json).expect("plan json parses");
                assert_eq!(parsed["version"], 1);
                insta::assert_snapshot!(format!("plan_json_{name}"), json);
                insta::assert_snapshot!(format!("plan_dot_{name}"), dot);
            }
        });
    }
}

#[test]
fn plan_errors_exit_one_and_name_the_cycle_path() {
    let (code, out, err) = plan_stream("cycle-two", &[]);
    assert_eq!(code, 1);
    assert!(out.is_empty(), "no partial plan: {out}");
    assert!(err.contains("app -> db -> app"), "{err}");
    let (code, _, err) = plan_stream("cycle-nested", &[]);
    assert_eq!(code, 1);
    assert!(
        err.contains("cycle-nested/inner")
            && err.contains("ingest -> publish -> process -> ingest"),
        "{err}"
    );
    let (code, _, err) = plan_stream("two-groups", &[]);
    assert_eq!(code, 1);
    assert!(
        err.contains("ConfigMap/shared") && err.contains("two resource groups"),
        "{err}"
    );
    let (code, _, err) = plan_stream("unknown-subchart", &[]);
    assert_eq!(code, 1);
    assert!(err.contains("`b`") && err.contains("`nope`"), "{err}");
}

/// `template` prints what the reference's `helm template` prints (Helm's kind order, no
/// markers, the depends-on key kept); `--markers` the install order with Helm's markers,
/// without the key, as helm/helm#32314's ordered `helm template` did.
#[test]
fn template_output_for_fixture_charts() {
    let settings = snapshot_settings();
    for name in ["diamond", "demotions", "platform", "isolated-multi"] {
        let rendered = format!("fixtures/charts/{name}.rendered.yaml");
        let chart = format!("fixtures/charts/{name}");
        let (code, out, err) = run(chartseq().args(["template", &rendered, "--chart", &chart]));
        assert_eq!(code, 0, "{name}: {err}");
        assert!(!out.contains("## START"), "{name}: {out}");
        settings.bind(|| insta::assert_snapshot!(format!("template_{name}"), out));
        let (code, out, err) =
            run(chartseq().args(["template", &rendered, "--chart", &chart, "--markers"]));
        assert_eq!(code, 0, "{name}: {err}");
        assert!(
            !out.contains("helm.sh/depends-on/resource-groups"),
            "{name}: --markers removes the invalid key"
        );
        settings.bind(|| insta::assert_snapshot!(format!("template_markers_{name}"), out));
    }
}

/// The reference's `helm template` is Helm's own order whatever the sequencing: a stream that
/// released helm rendered is printed back byte for byte, and a chart whose groups form a
/// cycle is printed all the same (the plan's error on standard error).
#[test]
fn template_prints_what_helm_template_prints() {
    for case in [
        "tc-sequenced-chart",
        "tc-sequenced-hook-chart",
        "tc-sequenced-isolated-chart",
    ] {
        let rendered = fixture(&format!("conformance/{case}/rendered-helm-v4.1.4.yaml"));
        let (code, out, err) = run(chartseq().arg("template").arg(&rendered));
        assert_eq!(code, 0, "{case}: {err}");
        let input = std::fs::read_to_string(&rendered).expect("rendered");
        assert_eq!(out, input, "{case}");
    }
    // Reordered (as `--markers` prints it): Helm's order again, hooks last.
    let dir = tempfile::tempdir().expect("tempdir");
    let cycle = "---\n# Source: c/templates/b.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: b\n  annotations:\n    helm.sh/resource-group: b\n    helm.sh/depends-on/resource-groups: '[\"a\"]'\n---\n# Source: c/templates/hook.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hook\n  annotations:\n    helm.sh/hook: pre-install\n---\n# Source: c/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    helm.sh/resource-group: a\n    helm.sh/depends-on/resource-groups: '[\"b\"]'\n";
    let path = dir.path().join("cycle.yaml");
    std::fs::write(&path, cycle).expect("write");
    let (code, out, err) = run(chartseq().arg("template").arg(&path));
    assert_eq!(code, 1, "the cycle is an error: {err}");
    assert!(err.contains("cycle"), "{err}");
    let names: Vec<&str> = out
        .lines()
        .filter_map(|l| l.strip_prefix("  name: "))
        .collect();
    assert_eq!(names, ["a", "b", "hook"], "{out}");
    assert_eq!(out.matches("---\n").count(), 3, "{out}");
    assert!(
        !out.contains("\n\n"),
        "no blank line between documents: {out}"
    );
}

#[test]
fn template_keeps_every_document_once_and_reads_its_own_output() {
    let (code, first, err) = run(chartseq().args([
        "template",
        "fixtures/charts/platform.rendered.yaml",
        "--chart",
        "fixtures/charts/platform",
        "--markers",
        "--keep-sequencing-annotations",
    ]));
    assert_eq!(code, 0, "{err}");
    let input = std::fs::read_to_string(fixture("charts/platform.rendered.yaml")).expect("fixture");
    assert_eq!(
        first.matches("\n---\n").count() + 1,
        input.matches("---\n").count(),
        "same number of documents"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let again = dir.path().join("again.yaml");
    std::fs::write(&again, &first).expect("write");
    let (code, second, err) = run(chartseq().arg("template").arg(&again).args([
        "--chart",
        "fixtures/charts/platform",
        "--markers",
        "--keep-sequencing-annotations",
    ]));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        first, second,
        "template output is a fixed point: markers are read back, not duplicated"
    );
}

#[test]
fn stream_traps_are_kept_and_reported() {
    let (code, out, err) =
        run(chartseq().args(["plan", "fixtures/streams/traps.yaml", "--format", "json"]));
    assert_eq!(code, 1, "unreadable documents are findings: {err}");
    assert!(
        err.contains("fixtures/streams/traps.yaml:55:16"),
        "located parse error: {err}"
    );
    let plan: serde_json::Value = serde_json::from_str(&out).expect("json");
    let planned: usize = plan["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| s["resources"].as_array().map_or(0, Vec::len))
        .sum();
    // Ten documents, two of them only comments (the preamble and `empty.yaml`): no resources.
    assert_eq!(planned, 8, "every document is planned exactly once");
    // `yes` is read by Helm as the string "true": that is the group name.
    let groups: Vec<&str> = plan["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|s| s["group"].as_str())
        .collect();
    assert_eq!(groups, vec!["inner", "db", "app", "true"]);
    let (_, text, _) = run(chartseq().args([
        "template",
        "fixtures/streams/traps.yaml",
        "--markers",
        "--keep-sequencing-annotations",
    ]));
    assert_eq!(text.matches("## START resource-group: traps db").count(), 1);
    settings_snapshot("template_traps", &text);
}

fn settings_snapshot(name: &str, value: &str) {
    snapshot_settings().bind(|| insta::assert_snapshot!(name.to_owned(), value));
}

/// The wording of the uninstall order (every format is checked against install in
/// `helm_parity::uninstall_is_the_exact_reverse_in_every_format`).
#[test]
fn uninstall_order_is_the_exact_reverse() {
    let (code, text, _) = plan_stream("diamond", &["--uninstall"]);
    assert_eq!(code, 0);
    settings_snapshot("plan_uninstall_diamond", &text);
}

#[test]
fn mermaid_output() {
    let (code, out, _) = plan_stream("platform", &["--format", "mermaid"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("flowchart TD\n"));
    settings_snapshot("plan_mermaid_platform", &out);
}

#[test]
fn tool_failures_exit_two() {
    let (code, _, err) = run(chartseq().args(["plan", "fixtures/does-not-exist.yaml"]));
    assert_eq!(code, 2);
    assert!(
        err.contains("fixtures/does-not-exist.yaml: no such path"),
        "{err}"
    );
    let (code, _, err) = run(chartseq().args([
        "plan",
        "fixtures/charts/diamond",
        "--helm",
        "/nonexistent/helm",
    ]));
    assert_eq!(code, 2);
    assert!(
        err.contains("helm template") && err.contains("chartseq <command> -"),
        "says how to do without helm: {err}"
    );
    let (code, _, err) = run(chartseq()
        .env("PATH", "/nonexistent")
        .env_remove("CHARTSEQ_HELM")
        .args(["plan", "fixtures/charts/diamond"]));
    assert_eq!(code, 2);
    assert!(err.contains("helm not found"), "{err}");
    let (code, _, _) = run(chartseq().args(["plan", "--format", "nope", "x"]));
    assert_eq!(code, 2);
}

#[test]
fn stdin_is_a_target() {
    let input = std::fs::read(fixture("charts/diamond.rendered.yaml")).expect("fixture");
    let mut child = chartseq()
        .args(["plan", "-", "--chart", "fixtures/charts/diamond"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), &input).expect("write");
    let output = child.wait_with_output().expect("wait");
    assert!(output.status.success());
    let (_, from_file, _) = plan_stream("diamond", &[]);
    assert_eq!(String::from_utf8_lossy(&output.stdout), from_file);
}

/// The reference implementation's conformance charts (helm/helm PR #32314, testdata), with
/// the `helm dag` and `helm template --wait=ordered` outputs its tests pin.
#[test]
fn conformance_with_the_reference_implementation() {
    for case in ["tc-sequenced-chart", "tc-sequenced-isolated-chart"] {
        let dir = fixture(&format!("conformance/{case}"));
        let chart = std::fs::read_dir(&dir)
            .expect("case dir")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.join("Chart.yaml").is_file())
            .expect("chart dir");
        let rendered = dir.join("rendered-helm-v4.1.4.yaml");
        let (code, plan, err) = run(chartseq()
            .arg("plan")
            .arg(&rendered)
            .arg("--chart")
            .arg(&chart));
        assert_eq!(code, 0, "{case}: {err}");
        // chartseq names nested levels `parent/sub` everywhere, where `helm dag` writes
        // `parent/charts/sub`: the only difference allowed.
        let dag = std::fs::read_to_string(dir.join("dag.txt"))
            .expect("dag.txt")
            .replace("/charts/", "/");
        // The text plan adds each resource group's resources below its batch: only the
        // lines `helm dag` has are compared.
        let dag_line = |l: &str| {
            let l = l.trim_start();
            [
                "Chart:",
                "Subchart batches",
                "Resource-group batches",
                "Batch ",
                "Unsequenced",
                "Undeclared",
            ]
            .iter()
            .any(|p| l.starts_with(p))
        };
        let chart_section: String = plan
            .lines()
            .filter(|l| !l.contains("hooks:") && !l.starts_with("CRDs") && dag_line(l))
            .flat_map(|l| [l, "\n"])
            .collect();
        assert_eq!(chart_section, dag, "{case}: plan differs from `helm dag`");
        // That pull request's `helm template` stripped the key, as `--markers` does; the split
        // ones keep it.
        let (code, template, err) = run(chartseq()
            .arg("template")
            .arg(&rendered)
            .arg("--chart")
            .arg(&chart)
            .arg("--markers"));
        assert_eq!(code, 0, "{case}: {err}");
        let expected = std::fs::read_to_string(dir.join("template-ordered.txt"))
            .expect("template-ordered.txt");
        assert_eq!(
            template, expected,
            "{case}: template differs from `helm template --wait=ordered`"
        );
    }
}

/// The same, rendering the chart directories with real helm.
#[test]
fn chart_directories_render_through_real_helm() {
    let Some(helm) = tool("helm") else { return };
    for name in CHARTS {
        let chart = format!("fixtures/charts/{name}");
        let direct = run(chartseq()
            .args(["plan", &chart])
            .env("CHARTSEQ_HELM", &helm));
        let streamed = plan_stream(name, &[]);
        assert_eq!(direct.0, streamed.0, "{name}: exit codes differ");
        assert_eq!(
            direct.1, streamed.1,
            "{name}: plans differ between the chart and its rendered stream"
        );
        // A chart that cannot plan gives the same diagnostics at the same template lines
        // (only the rendered location differs: helm's output, or the stream file).
        let template_dir = format!("─ {chart}/");
        let diagnostics = |stderr: &str| -> Vec<String> {
            stderr
                .lines()
                .filter(|l| {
                    l.starts_with("error[")
                        || l.starts_with("warning[")
                        || l.contains(&template_dir)
                })
                .map(str::to_owned)
                .collect()
        };
        assert_eq!(
            diagnostics(&direct.2),
            diagnostics(&streamed.2),
            "{name}: diagnostics differ between the chart and its rendered stream\n{}\n{}",
            direct.2,
            streamed.2
        );
        if streamed.0 != 0 {
            assert!(
                diagnostics(&streamed.2)
                    .iter()
                    .any(|l| l.starts_with("error[")),
                "{name}: {}",
                streamed.2
            );
        }
    }
    let dir = fixture("conformance/tc-sequenced-chart/sequenced-chart");
    // The golden is helm/helm#32314's ordered `helm template`, which removed the depends-on key.
    let (code, template, err) = run(chartseq()
        .arg("template")
        .arg(&dir)
        .arg("--markers")
        .env("CHARTSEQ_HELM", &helm));
    assert_eq!(code, 0, "{err}");
    let expected = std::fs::read_to_string(fixture(
        "conformance/tc-sequenced-chart/template-ordered.txt",
    ))
    .expect("golden");
    assert_eq!(template, expected);
}

#[test]
fn values_flags_reach_helm_and_the_conditions() {
    let Some(helm) = tool("helm") else { return };
    let (code, out, err) = run(chartseq()
        .args([
            "plan",
            "fixtures/charts/platform",
            "--set",
            "cache.enabled=true",
        ])
        .env("CHARTSEQ_HELM", &helm));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Batch 1: cache, database, metrics"),
        "cache enabled by --set: {out}"
    );
    assert!(out.contains("Chart: platform/cache"), "{out}");
    let values = fixture("values/queue-on.yaml");
    let (code, out, err) = run(chartseq()
        .args(["plan", "fixtures/charts/platform", "-f"])
        .arg(&values)
        .env("CHARTSEQ_HELM", &helm));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("queue"), "tag enabled by -f: {out}");
    // Helm's trap: a string "false" is not a boolean, so the condition is ignored and the
    // subchart stays enabled; chartseq must agree with what helm rendered.
    let (code, out, _) = run(chartseq()
        .args([
            "plan",
            "fixtures/charts/platform",
            "--set-string",
            "cache.enabled=false",
            "--namespace",
            "prod",
            "--release-name",
            "r1",
        ])
        .env("CHARTSEQ_HELM", &helm));
    assert_eq!(code, 0);
    assert!(
        out.contains("Batch 1: cache, database, metrics") && out.contains("Chart: platform/cache"),
        "{out}"
    );
    assert!(
        out.contains("Widget/r1-widget"),
        "release name passed through: {out}"
    );
}

#[test]
fn packaged_charts_are_targets() {
    let Some(helm) = tool("helm") else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    // NOTE: `helm package` from a helm without HIP-0025 rewrites Chart.yaml and drops
    // `depends-on`; package with tar so the archive holds the chart as written.
    let status = std::process::Command::new("tar")
        .args(["-czf"])
        .arg(dir.path().join("platform-1.0.0.tgz"))
        .args(["-C", "fixtures/charts", "platform"])
        .current_dir(crate::root())
        .output()
        .expect("tar");
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let archive = dir.path().join("platform-1.0.0.tgz");
    let (code, packaged, err) = run(chartseq()
        .arg("plan")
        .arg(&archive)
        .env("CHARTSEQ_HELM", &helm));
    assert_eq!(code, 0, "{err}");
    let (_, streamed, _) = plan_stream("platform", &[]);
    assert_eq!(packaged, streamed);
}

#[test]
fn chart_problems_are_tool_failures_with_helm_wording() {
    let (code, _, err) = run(chartseq().args([
        "plan",
        "fixtures/charts/diamond.rendered.yaml",
        "--chart",
        "fixtures/broken/missing-dep",
    ]));
    assert_eq!(code, 2);
    assert!(
        err.contains("found in Chart.yaml, but missing in charts/ directory: postgresql, redis"),
        "{err}"
    );
    let (code, _, err) = run(chartseq().args([
        "plan",
        "fixtures/charts/diamond.rendered.yaml",
        "--chart",
        "fixtures/broken/not-yaml",
    ]));
    assert_eq!(code, 2);
    assert!(
        err.contains("fixtures/broken/not-yaml/Chart.yaml:3:1") && err.contains("invalid YAML"),
        "{err}"
    );
}

#[test]
fn helm_failures_show_helms_error() {
    let Some(helm) = tool("helm") else { return };
    let (code, _, err) = run(chartseq()
        .args(["plan", "fixtures/broken/bad-template"])
        .env("CHARTSEQ_HELM", &helm));
    assert_eq!(code, 2);
    assert!(
        err.contains("helm template failed") && err.contains("name is required"),
        "{err}"
    );
}

#[test]
fn documents_map_to_their_template_files() {
    let (code, out, _) = plan_stream("platform", &["--format", "json"]);
    assert_eq!(code, 0);
    let plan: serde_json::Value = serde_json::from_str(&out).expect("json");
    let templates: Vec<&str> = plan["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .flat_map(|s| s["resources"].as_array().expect("resources").iter())
        .map(|r| {
            r["template"]
                .as_str()
                .expect("every fixture document has a template on disk")
        })
        .collect();
    assert!(
        templates.contains(
            &"fixtures/charts/platform/charts/api/charts/auth/charts/tokens/templates/tokens.yaml"
        ),
        "{templates:?}"
    );
    assert!(
        templates.contains(&"fixtures/charts/platform/charts/postgres/templates/db.yaml"),
        "aliased subchart maps to its directory: {templates:?}"
    );
    assert!(
        templates.contains(
            &"fixtures/charts/platform/charts/metrics-0.1.0.tgz:metrics/templates/metrics.yaml"
        ),
        "{templates:?}"
    );
}

#[test]
fn crds_come_from_disk_when_the_stream_has_none() {
    let input = std::fs::read_to_string(fixture("charts/platform.rendered.yaml")).expect("fixture");
    let without_crds: String = input
        .split("\n---\n")
        .filter(|d| !d.contains("# Source: platform/crds/"))
        .collect::<Vec<_>>()
        .join("\n---\n");
    assert!(!without_crds.contains("platform/crds/"));
    let dir = tempfile::tempdir().expect("tempdir");
    let stream = dir.path().join("no-crds.yaml");
    std::fs::write(&stream, without_crds).expect("write");
    let (code, out, err) = run(chartseq()
        .arg("plan")
        .arg(&stream)
        .args(["--chart", "fixtures/charts/platform"]));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("CRDs (applied first): CustomResourceDefinition/widgets.example.com\n"),
        "{out}"
    );
}

/// The reference implementation strips `helm.sh/depends-on/resource-groups` from hooks too, and
/// keeps `helm.sh/resource-group` (`TestTemplateStripsHelmInternalAnnotations`).
#[test]
fn conformance_hook_chart_strips_the_invalid_key_from_hooks() {
    let dir = fixture("conformance/tc-sequenced-hook-chart");
    let (code, out, err) = run(chartseq()
        .arg("template")
        .arg(dir.join("rendered-helm-v4.1.4.yaml"))
        .arg("--chart")
        .arg(dir.join("sequenced-hook-chart"))
        .arg("--strip-sequencing-annotations"));
    assert_eq!(code, 0, "{err}");
    let hook = out
        .split("\n---\n")
        .find(|d| d.contains("name: hook-configmap"))
        .expect("the hook is printed");
    assert!(hook.contains("helm.sh/resource-group: hooks"), "{hook}");
    assert!(!out.contains("helm.sh/depends-on/resource-groups"), "{out}");
    assert!(
        out.trim_end().ends_with("data:\n  key: value"),
        "hooks come last: {out}"
    );
    let (_, lint, _) = run(chartseq()
        .args(["lint", "--format", "concise"])
        .arg(dir.join("rendered-helm-v4.1.4.yaml"))
        .arg("--chart")
        .arg(dir.join("sequenced-hook-chart")));
    assert!(
        lint.contains("CS401"),
        "sequencing annotations on a hook are reported: {lint}"
    );
}

/// `helm template` of the split pull requests keeps `helm.sh/depends-on/resource-groups` (Helm
/// removes it only before it applies an object, and keeps it in the stored release): so does
/// `chartseq template`, byte for byte; `--strip-sequencing-annotations` removes it for
/// `kubectl apply` pipelines.
#[test]
fn template_keeps_the_depends_on_key_as_helm_template_does() {
    let dir = fixture("conformance/tc-sequenced-chart");
    let template = |extra: &[&str]| {
        run(chartseq()
            .arg("template")
            .arg(dir.join("rendered-helm-v4.1.4.yaml"))
            .arg("--chart")
            .arg(dir.join("sequenced-chart"))
            .args(extra))
    };
    let input = std::fs::read_to_string(dir.join("rendered-helm-v4.1.4.yaml")).expect("input");
    let kept = input.matches("helm.sh/depends-on/resource-groups").count();
    assert!(kept > 0);
    let (code, out, err) = template(&[]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.matches("helm.sh/depends-on/resource-groups").count(),
        kept,
        "{out}"
    );
    let (code, old, err) = template(&["--keep-sequencing-annotations"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(old, out, "without --markers the key is kept anyway");
    let (code, marked, err) = template(&["--markers"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !marked.contains("helm.sh/depends-on/resource-groups"),
        "{marked}"
    );
    let (code, marked, err) = template(&["--markers", "--keep-sequencing-annotations"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        marked.matches("helm.sh/depends-on/resource-groups").count(),
        kept,
        "{marked}"
    );
    let (code, stripped, err) = template(&["--strip-sequencing-annotations"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !stripped.contains("helm.sh/depends-on/resource-groups"),
        "{stripped}"
    );
}

mod helm_parity;

/// `plan --format dag` prints exactly what the split HIP-0025 pull requests' `helm dag`
/// prints: their golden files (`fixtures/conformance/dag-v3/README.md` names each source).
#[test]
fn dag_format_is_the_reference_output() {
    for case in [
        "linear",
        "diamond",
        "nested",
        "sequenced-groups",
        "sequenced-isolated",
    ] {
        let dir = fixture(&format!("conformance/dag-v3/{case}"));
        let chart = std::fs::read_dir(&dir)
            .expect("case dir")
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.join("Chart.yaml").is_file())
            .expect("chart dir");
        let (code, dag, err) = run(chartseq()
            .arg("plan")
            .arg(dir.join("rendered.yaml"))
            .arg("--chart")
            .arg(&chart)
            .args(["--format", "dag"]));
        assert_eq!(code, 0, "{case}: {err}");
        assert_eq!(err, "", "{case}: a v3 chart plans without a word");
        let expected = std::fs::read_to_string(dir.join("dag.txt")).expect("dag.txt");
        assert_eq!(dag, expected, "{case}: differs from `helm dag`");
    }
}

/// `--format dag` is the install order of HIP-0025 only, as `helm dag` prints it.
#[test]
fn dag_format_takes_no_uninstall_or_other_dialect() {
    let dir = fixture("conformance/dag-v3/linear");
    for extra in [&["--uninstall"][..], &["--dialect", "argo"][..]] {
        let (code, out, err) = run(chartseq()
            .arg("plan")
            .arg(dir.join("rendered.yaml"))
            .arg("--chart")
            .arg(dir.join("linear"))
            .args(["--format", "dag"])
            .args(extra));
        assert_eq!(code, 2, "{extra:?}: {err}");
        assert!(out.is_empty());
        assert!(err.contains("--format dag"), "{err}");
    }
}

/// Every loaded chart is a level of the plan, in text and JSON alike: a subchart with values
/// but no `templates/` folder (Helm's `frobnitz` fixture: `mariner`'s `albatross`) as much as
/// one whose templates render nothing. `--format dag` leaves it out, as `helm dag` does.
#[test]
fn a_subchart_without_templates_is_a_level() {
    let args = |format: &str| {
        run(chartseq()
            .args(["plan", "fixtures/plan-levels/rendered.yaml"])
            .args([
                "--chart",
                "fixtures/plan-levels/mariner",
                "--format",
                format,
            ]))
    };
    let (code, text, err) = args("text");
    assert_eq!(code, 0, "{err}");
    assert!(
        text.contains("    Batch 1: albatross\n")
            && text.contains("  Chart: mariner/albatross\n    Subchart batches: (none)\n"),
        "{text}"
    );
    let (_, json, _) = args("json");
    let doc: serde_json::Value = serde_json::from_str(&json).expect("json");
    let charts: Vec<&str> = doc["levels"]
        .as_array()
        .expect("levels")
        .iter()
        .map(|l| l["chart"].as_str().expect("chart"))
        .collect();
    assert_eq!(charts, ["mariner", "mariner/albatross"]);
    let (_, dag, _) = args("dag");
    assert!(
        dag.contains("Batch 1: albatross") && !dag.contains("Chart: mariner/charts/albatross"),
        "{dag}"
    );
}

/// A group that depends on a group that does not exist is planned with the unsequenced
/// resources, as Helm plans it: `plan` still succeeds, but says so for each group moved.
#[test]
fn plan_warns_about_every_group_moved_for_a_missing_dependency() {
    let (code, out, err) = run(chartseq().args(["plan", "fixtures/rules/CS101/missing.yaml"]));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Unsequenced"), "{out}");
    assert!(
        err.contains("group `app` of chart app depends on `databse`, which is no group there")
            && err.contains(
                "group `web` of chart app depends on `app`, which was moved there itself"
            ),
        "{err}"
    );
}

/// A stream with a 30-resource group, a 3-resource group after it and 40 unsequenced
/// resources, each name 40 characters long.
fn big_plan_stream() -> tempfile::NamedTempFile {
    use std::fmt::Write as _;
    let mut text = String::new();
    let mut doc = |name: String, annotations: &str| {
        let _ = write!(
            text,
            "---\n# Source: big/templates/all.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  annotations:\n{annotations}    x: y\n"
        );
    };
    for i in 0..30 {
        doc(
            format!("database-configuration-fragment-{i:03}xyz"),
            "    helm.sh/resource-group: db\n",
        );
    }
    for i in 0..3 {
        doc(
            format!("application-configuration-part-{i:03}xyz"),
            "    helm.sh/resource-group: app\n    helm.sh/depends-on/resource-groups: '[\"db\"]'\n",
        );
    }
    for i in 0..40 {
        doc(format!("unsequenced-configuration-item-{i:03}xyz"), "");
    }
    let file = tempfile::Builder::new()
        .suffix(".yaml")
        .tempfile()
        .expect("tempfile");
    std::fs::write(file.path(), text).expect("write");
    file
}

/// The text plan at a terminal lists each group's resources, wraps every list at 100 columns
/// and cuts a long one after ten names with the count of the rest; `--verbose` lists them all.
/// Its step numbers are the JSON plan's `step`, its `after` the JSON `after_steps`.
#[test]
fn the_text_plan_is_readable_at_any_size_and_numbered_as_json() {
    let stream = big_plan_stream();
    let path = stream.path().to_str().expect("utf-8 path");
    let screen = crate::pty::run_in_terminal(
        chartseq().args(["plan", path]),
        120,
        std::time::Duration::from_secs(60),
    );
    assert_eq!(screen.code, Some(0), "{}", screen.bytes);
    let text = screen.bytes.replace("\r\n", "\n");
    for line in text.lines() {
        assert!(
            line.chars().count() <= 100,
            "a line over 100 columns: {line}"
        );
    }
    assert!(text.contains("    Batch 1: db\n      db (30):\n"), "{text}");
    assert!(
        text.contains(
            "      app (3):\n          ConfigMap/application-configuration-part-000xyz,\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("  Unsequenced (deployed last) (40):\n"),
        "{text}"
    );
    assert!(
        text.contains("          … and 20 more (--verbose lists them all)\n"),
        "{text}"
    );
    assert!(
        text.contains("      … and 30 more (--verbose lists them all)\n"),
        "{text}"
    );
    assert!(!text.contains("item-039xyz"), "{text}");

    let screen = crate::pty::run_in_terminal(
        chartseq().args(["plan", path, "--verbose"]),
        120,
        std::time::Duration::from_secs(60),
    );
    assert_eq!(screen.code, Some(0), "{}", screen.bytes);
    assert!(screen.bytes.contains("item-039xyz"), "{}", screen.bytes);
    assert!(screen.bytes.contains("fragment-029xyz"), "{}", screen.bytes);
    assert!(
        !screen.bytes.contains("more (--verbose"),
        "{}",
        screen.bytes
    );

    // The uninstall order: `N. …` in text is `"step": N` in JSON; `after_steps` are step
    // numbers, `after` the same 0-based.
    let (code, text, _) = run(chartseq().args(["plan", path, "--uninstall"]));
    assert_eq!(code, 0);
    let (code, out, _) = run(chartseq().args(["plan", path, "--uninstall", "--format", "json"]));
    assert_eq!(code, 0);
    let json: serde_json::Value = serde_json::from_str(&out).expect("json");
    let steps = json["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 3);
    for (i, step) in steps.iter().enumerate() {
        assert_eq!(step["step"], i + 1);
        let what = match step["group"].as_str() {
            Some(g) => format!("group {g}"),
            None => "unsequenced".to_owned(),
        };
        assert!(
            text.contains(&format!("  {}. big {what}", i + 1)),
            "step {} is not {what}: {text}",
            i + 1
        );
        let after: Vec<u64> = step["after"]
            .as_array()
            .expect("after")
            .iter()
            .map(|a| a.as_u64().expect("index") + 1)
            .collect();
        let after_steps: Vec<u64> = step["after_steps"]
            .as_array()
            .expect("after_steps")
            .iter()
            .map(|a| a.as_u64().expect("number"))
            .collect();
        assert_eq!(after, after_steps);
    }
    assert_eq!(steps[2]["after_steps"], serde_json::json!([2]), "{out}");
}
