//! What lint says must hold where it runs: the advice of CS203 follows the helm that rendered
//! the chart, the GitHub Action lints each chart once per `ci/*-values.yaml` file and renders
//! it once for every format, limits and flags apply where they are offered.

use std::path::{Path, PathBuf};

use crate::{chartseq, fixture, root, run, tool};

/// A helm in front of the real one that logs every call (one line of arguments each) and,
/// with `accepts_v3`, renders `apiVersion: v3` charts (as a HIP-0025 helm would) under
/// `version`.
fn logging_helm(dir: &Path, real: &Path, accepts_v3: Option<&str>) -> (PathBuf, PathBuf) {
    let log = dir.join("helm.log");
    let script = dir.join("helm");
    let v3 = accepts_v3.map_or(String::new(), |version| {
        format!(
            "case \"$1\" in\n  version) echo {version}; exit 0 ;;\n  template) if grep -q '^apiVersion: v3' \"$3/Chart.yaml\" 2>/dev/null; then exit 0; fi ;;\nesac\n"
        )
    });
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\n{v3}exec '{}' \"$@\"\n",
            log.display(),
            real.display()
        ),
    )
    .expect("write helm");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    (script, log)
}

fn calls(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// CS203's (help, notes) of each finding.
fn cs203_help(helm: &Path, charts: &[&str]) -> Vec<(String, Vec<String>)> {
    let (code, stdout, stderr) = run(chartseq()
        .arg("lint")
        .args(charts)
        .args(["--format", "json", "--fail-on", "never", "--helm"])
        .arg(helm));
    assert_eq!(code, 0, "{stdout}{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    json["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["code"] == "CS203")
        .map(|d| {
            (
                d["help"].as_str().expect("help").to_owned(),
                d["notes"]
                    .as_array()
                    .expect("notes")
                    .iter()
                    .map(|n| n.as_str().expect("note").to_owned())
                    .collect(),
            )
        })
        .collect()
}

/// CS203's help is one actionable text whatever the helm (deploy with `chartseq apply` now,
/// set `apiVersion: v3` once helm accepts it), never "ignore this"; a note says what the helm
/// that rendered the chart does with v3 charts. That helm is asked once per run, however many
/// charts.
#[test]
fn cs203_advice_follows_the_helm_that_renders() {
    const HELP: &str = "install with `chartseq apply` to get this order now; set `apiVersion: v3` in Chart.yaml once the helm you deploy with accepts v3 charts (helm up to v4.1.4 refuses them)";
    let Some(real) = tool("helm") else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let chart = "fixtures/rules/CS203/v2/app";

    let (refusing, log) = logging_helm(dir.path(), &real, None);
    let help = cs203_help(&refusing, &[chart, "fixtures/action/charts/web"]);
    assert_eq!(help.len(), 2, "{help:?}");
    for (h, notes) in &help {
        assert_eq!(h, HELP);
        assert!(!h.contains("ignore"), "{h}");
        assert_eq!(
            notes,
            &["helm v4.1.4, which rendered the chart, refuses `apiVersion: v3` charts"]
        );
    }
    let probes: Vec<String> = calls(&log)
        .into_iter()
        .filter(|c| c.starts_with("version") || c.contains("chartseq-v3-probe"))
        .collect();
    assert_eq!(
        probes.len(),
        2,
        "asked once (version, then a v3 chart): {probes:?}"
    );

    let other = tempfile::tempdir().expect("tempdir");
    let (accepting, _) = logging_helm(other.path(), &real, Some("v4.9.0"));
    let help = cs203_help(&accepting, &[chart]);
    assert_eq!(
        help,
        [(
            HELP.to_owned(),
            vec![
                "helm v4.9.0, which rendered the chart, accepts `apiVersion: v3` charts: you can set it now"
                    .to_owned()
            ]
        )]
    );
}

/// A v2 chart with sequencing: `plan`, `template` and `lint` each say what the reference does
/// (refuses `--wait=ordered`, installs all at once without it) and what chartseq does
/// (sequences it), with the same words and help, once; a v3 chart plans without a word.
/// `apply` prints the same warning through the same function.
#[test]
fn v2_charts_are_sequenced_and_every_command_says_what_helm_does() {
    const REFERENCE: &str =
        "--wait=ordered requires chart apiVersion v3 (chart \"app\" has apiVersion v2)";
    const CHARTSEQ: &str = "chartseq plans and applies it sequenced, as if it were v3";
    for (case, v2) in [("v2", true), ("valid", false)] {
        let stream = format!("fixtures/rules/CS203/{case}/stream.yaml");
        let chart = format!("fixtures/rules/CS203/{case}/app");
        let (code, plan, plan_err) = run(chartseq().args(["plan", &stream, "--chart", &chart]));
        assert_eq!(code, 0, "{plan_err}");
        assert!(
            plan.contains("Resource-group batches:\n    Batch 1: db"),
            "{case}: sequenced either way: {plan}"
        );
        let (code, template, template_err) =
            run(chartseq().args(["template", &stream, "--chart", &chart, "--markers"]));
        assert_eq!(code, 0, "{template_err}");
        assert!(
            template.contains("## START resource-group: app db"),
            "{template}"
        );
        let (_, lint, _) =
            run(chartseq().args(["lint", &stream, "--chart", &chart, "--format", "json"]));
        let lint: serde_json::Value = serde_json::from_str(&lint).expect("json");
        let cs203: Vec<&serde_json::Value> = lint["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .filter(|d| d["code"] == "CS203")
            .collect();
        if v2 {
            assert_eq!(cs203.len(), 1, "one finding per chart: {lint}");
            let message = cs203[0]["message"].as_str().expect("message");
            let help = cs203[0]["help"].as_str().expect("help");
            assert!(
                message.contains(REFERENCE) && message.contains(CHARTSEQ),
                "{message}"
            );
            for err in [&plan_err, &template_err] {
                assert_eq!(err.matches("CS203").count(), 1, "{err}");
                assert!(err.contains(message) && err.contains(help), "{err}");
            }
        } else {
            assert!(cs203.is_empty(), "{lint}");
            assert!(!plan_err.contains("CS203") && !template_err.contains("CS203"));
        }
    }
}

/// The action's script lints each chart once per `ci/*-values.yaml` file, names the file in
/// each finding, renders each (chart, values file) once for annotations and SARIF together,
/// and passes the `set` and `namespace` inputs to helm.
#[test]
fn action_lints_once_per_ci_values_file_and_renders_once() {
    let Some(real) = tool("helm") else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let (helm, log) = logging_helm(dir.path(), &real, None);
    let summary = dir.path().join("summary.md");
    let output = dir.path().join("output");
    let sarif = dir.path().join("reports/chartseq.sarif");
    let mut cmd = std::process::Command::new("bash");
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GITHUB_") {
            cmd.env_remove(key);
        }
    }
    cmd.env_remove("KUBECONFIG").env_remove("CI");
    cmd.current_dir(fixture("action"))
        .arg(root().join("scripts/action-lint.sh"))
        .env("CHARTSEQ", env!("CARGO_BIN_EXE_chartseq"))
        .env("CHARTSEQ_HELM", &helm)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &output)
        .env("INPUT_FAIL_ON", "error")
        .env("INPUT_SARIF", &sarif)
        .env("INPUT_SET", "tier=gold plus\nother=x")
        .env("INPUT_NAMESPACE", "prod");
    let (code, stdout, stderr) = run(&mut cmd);
    assert_eq!(code, 1, "the typo is an error: {stdout}{stderr}");

    // One CS101, from the values file with the typo, which the finding names.
    let cs101: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("title=CS101"))
        .collect();
    assert_eq!(cs101.len(), 1, "{stdout}");
    assert!(
        cs101[0].contains("depends on `dbb`")
            && cs101[0].contains("(with values charts/web/ci/typo-values.yaml)"),
        "{stdout}"
    );
    // Every finding of the chart with ci/ files names its values file.
    for line in stdout.lines().filter(|l| l.contains("charts/web/")) {
        assert!(line.contains("(with values charts/web/ci/"), "{line}");
    }

    // helm rendered web once per values file and plain once (the chart without ci/), for
    // annotations and SARIF together, with the set and namespace inputs.
    let renders: Vec<String> = calls(&log)
        .into_iter()
        .filter(|c| c.starts_with("template ") && c.contains(" -- release-name "))
        .collect();
    assert_eq!(renders.len(), 3, "{renders:?}");
    assert_eq!(
        renders
            .iter()
            .filter(|c| c.contains("charts/web/ci/good-values.yaml"))
            .count(),
        1,
        "{renders:?}"
    );
    assert_eq!(
        renders
            .iter()
            .filter(|c| c.contains("charts/web/ci/typo-values.yaml"))
            .count(),
        1,
        "{renders:?}"
    );
    for c in &renders {
        assert!(c.contains("--namespace=prod"), "{c}");
        assert!(c.contains("--set=tier=gold plus"), "{c}");
        assert!(c.contains("--set=other=x"), "{c}");
    }

    // The step summary tells the runs of one chart apart.
    let summary = std::fs::read_to_string(&summary).expect("summary");
    assert!(
        summary.contains(
            "Charts: plain, web (charts/web/ci/good-values.yaml), web (charts/web/ci/typo-values.yaml)"
        ),
        "{summary}"
    );
    assert!(
        summary.contains("### Install order: web (charts/web/ci/typo-values.yaml)"),
        "{summary}"
    );

    // The SARIF of the same run holds the same findings, values files named.
    assert!(
        std::fs::read_to_string(&output)
            .expect("output")
            .contains("sarif=")
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).expect("sarif")).expect("json");
    let messages: Vec<&str> = json["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r["ruleId"] == "CS101")
        .map(|r| r["message"]["text"].as_str().expect("text"))
        .collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].contains("(with values charts/web/ci/typo-values.yaml)"),
        "{messages:?}"
    );
}

/// `chartseq lint --ci-values` without the action: the same expansion; a stream target and
/// a chart without `ci/` are linted once.
#[test]
fn ci_values_and_also_report_on_the_command_line() {
    let Some(helm) = tool("helm") else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let sarif = dir.path().join("out/lint.sarif");
    let (code, stdout, stderr) = run(chartseq()
        .args([
            "lint",
            "fixtures/action/charts/web",
            "fixtures/action/charts/plain",
            "--ci-values",
            "--format",
            "concise",
            "--select",
            "CS101",
            "--helm",
        ])
        .arg(&helm)
        .arg("--also-report")
        .arg(format!("sarif={}", sarif.display())));
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(
        stdout.contains("(with values fixtures/action/charts/web/ci/typo-values.yaml)"),
        "{stdout}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).expect("sarif")).expect("json");
    assert_eq!(json["runs"][0]["results"].as_array().map(Vec::len), Some(1));
    // Without --ci-values: chart values only, no finding.
    let (code, stdout, _) = run(chartseq()
        .args([
            "lint",
            "fixtures/action/charts/web",
            "--format",
            "concise",
            "--select",
            "CS101",
            "--helm",
        ])
        .arg(&helm));
    assert_eq!(code, 0, "{stdout}");
    // A malformed --also-report is a usage error.
    let (code, _, stderr) = run(chartseq().args([
        "lint",
        "fixtures/rules/CS101/missing.yaml",
        "--also-report",
        "sarif",
    ]));
    assert_eq!(code, 2);
    assert!(stderr.contains("FORMAT=FILE"), "{stderr}");
}

/// The action exposes and passes its `set` and `namespace` inputs, and the example workflow
/// uses them (`integrations::action_and_workflows_satisfy_github_schemas_and_actionlint`
/// validates action.yml with GitHub's schema and the workflow with actionlint; actionlint does
/// not check a `uses: ./` action's input names, hence the checks here).
#[test]
fn action_has_set_and_namespace_inputs() {
    let action = std::fs::read_to_string(root().join("action.yml")).expect("action.yml");
    for input in ["set", "namespace"] {
        assert!(action.contains(&format!("\n  {input}:\n")), "input {input}");
        assert!(
            action.contains(&format!("${{{{ inputs.{input} }}}}")),
            "input {input} unused"
        );
    }
    let example = std::fs::read_to_string(root().join(".github/workflows/chartseq-example.yml"))
        .expect("example workflow");
    assert!(
        example.contains("namespace:") && example.contains("set:"),
        "{example}"
    );
}

/// A values file over `--max-document-bytes` is refused before helm runs.
#[test]
fn oversized_values_file_is_refused_before_helm() {
    let Some(real) = tool("helm") else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let (helm, log) = logging_helm(dir.path(), &real, None);
    let values = dir.path().join("big-values.yaml");
    std::fs::write(&values, format!("pad: \"{}\"\n", "x".repeat(4096))).expect("values");
    let (code, _, stderr) = run(chartseq()
        .args([
            "plan",
            "fixtures/charts/platform",
            "--max-document-bytes",
            "1024",
            "--helm",
        ])
        .arg(&helm)
        .arg("-f")
        .arg(&values));
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(
            "has 4104 bytes, more than the limit of 1024 (raise it with --max-document-bytes)"
        ),
        "{stderr}"
    );
    assert!(calls(&log).is_empty(), "helm ran: {:?}", calls(&log));
    // Within the limit, the same file renders.
    let (code, _, stderr) = run(chartseq()
        .args(["plan", "fixtures/charts/platform", "--helm"])
        .arg(&helm)
        .arg("-f")
        .arg(&values));
    assert_eq!(code, 0, "{stderr}");
    // One rendering of the chart (the other calls ask helm whether it takes v3 charts).
    let renders: Vec<String> = calls(&log)
        .into_iter()
        .filter(|c| c.contains("fixtures/charts/platform"))
        .collect();
    assert_eq!(renders.len(), 1, "{renders:?}");
}

/// A flow-style nesting error names the `--max-depth` in force, as block style does.
#[test]
fn flow_nesting_error_names_max_depth() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stream = dir.path().join("deep.yaml");
    let deep = "[".repeat(300) + &"]".repeat(300);
    std::fs::write(
        &stream,
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n  x: {deep}\n"),
    )
    .expect("stream");
    let (_, stdout, stderr) = run(chartseq().arg("lint").arg(&stream).args([
        "--format",
        "concise",
        "--max-depth",
        "100",
    ]));
    assert!(
        stdout.contains("CS000")
            && stdout.contains("nesting deeper than 100 levels (raise it with --max-depth)"),
        "{stdout}{stderr}"
    );
}

/// `--include-crds` is offered where it does something: `template` of a chart.
#[test]
fn include_crds_is_a_template_flag_only() {
    for command in ["plan", "lint"] {
        let (code, _, stderr) = run(chartseq().args([
            command,
            "fixtures/charts/platform.rendered.yaml",
            "--include-crds",
        ]));
        assert_eq!(code, 2, "{command}: {stderr}");
        assert!(stderr.contains("--include-crds"), "{stderr}");
        let (_, help, _) = run(chartseq().args([command, "--help"]));
        assert!(
            !help.contains("--include-crds"),
            "{command} --help offers it"
        );
    }
    let (_, help, _) = run(chartseq().args(["template", "--help"]));
    assert!(help.contains("--include-crds"), "{help}");
    let (code, _, stderr) = run(chartseq().args([
        "template",
        "fixtures/charts/platform.rendered.yaml",
        "--chart",
        "fixtures/charts/platform",
        "--include-crds",
    ]));
    assert_eq!(code, 0, "{stderr}");
}
