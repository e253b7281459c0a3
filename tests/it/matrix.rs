//! `chartseq lint --values-matrix`: a subchart another one depends on, disabled by its
//! condition only when flipped, is found by the matrix and not by a plain lint, in every
//! output format and through the GitHub Action.

use std::process::Command;

use crate::{chartseq, fixture, root, run, snapshot_settings, tool};

const CHART: &str = "fixtures/lint/values-matrix/shop";
const ONLY: &str = "(only with: subchart `db` disabled)";

fn lint(helm: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    run(chartseq()
        .args(["lint", CHART, "--color", "never", "--helm"])
        .arg(helm)
        .args(args))
}

#[test]
fn plain_lint_is_clean_and_the_matrix_names_the_flipped_condition() {
    let Some(helm) = tool("helm") else { return };
    let (code, out, err) = lint(&helm, &["--format", "concise"]);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    let (code, out, _) = lint(&helm, &["--format", "concise", "--ci-values"]);
    assert_eq!((code, out.as_str()), (0, ""));

    let (code, out, err) = lint(&helm, &["--format", "concise", "--values-matrix"]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(
        out,
        format!(
            "{CHART}/Chart.yaml:10:17: CS102 [error] subchart `db` of chart shop is disabled (condition `db.enabled`), so nothing can depend on it {ONLY}\n"
        )
    );
    assert_eq!(
        err,
        format!(
            "chartseq: values matrix of chart shop: 3 renderings: default values; values {CHART}/ci/prod-values.yaml; subchart `db` disabled (--set db.enabled=false)\n"
        )
    );

    let (code, out, _) = lint(&helm, &["--values-matrix"]);
    assert_eq!(code, 1);
    snapshot_settings().bind(|| insta::assert_snapshot!("values_matrix_human", out));

    let (_, out, _) = lint(&helm, &["--format", "json", "--values-matrix"]);
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(json["diagnostics"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        json["diagnostics"][0]["value_sets"],
        serde_json::json!(["subchart `db` disabled"])
    );
    assert_eq!(json["values_matrix"][0]["renderings"], 3);
    assert_eq!(json["summary"]["errors"], 1);

    let (_, out, _) = lint(&helm, &["--format", "sarif", "--values-matrix"]);
    let sarif: serde_json::Value = serde_json::from_str(&out).expect("SARIF");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 1);
    assert!(
        results[0]["message"]["text"]
            .as_str()
            .is_some_and(|t| t.contains(ONLY))
    );
    assert_eq!(
        results[0]["properties"]["valueSets"],
        serde_json::json!(["subchart `db` disabled"])
    );

    for format in ["github", "junit"] {
        let (code, out, _) = lint(&helm, &["--format", format, "--values-matrix"]);
        assert_eq!(code, 1);
        assert!(out.contains(ONLY), "{format}: {out}");
    }
}

#[test]
fn the_cap_says_what_it_left_out() {
    let Some(helm) = tool("helm") else { return };
    let (code, out, err) = lint(
        &helm,
        &[
            "--format",
            "concise",
            "--values-matrix",
            "--values-matrix-max",
            "2",
        ],
    );
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(
        err.contains("has 3 value sets, more than --values-matrix-max 2: linted the first 2; not linted: subchart `db` disabled"),
        "{err}"
    );
    assert!(
        err.contains("values matrix of chart shop: 2 renderings"),
        "{err}"
    );
}

#[test]
fn the_action_runs_the_matrix() {
    let Some(helm) = tool("helm") else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let summary = dir.path().join("summary.md");
    let mut cmd = Command::new("bash");
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GITHUB_") {
            cmd.env_remove(key);
        }
    }
    cmd.env_remove("KUBECONFIG").env_remove("CI");
    cmd.current_dir(root())
        .arg(root().join("scripts/action-lint.sh"))
        .env("CHARTSEQ", env!("CARGO_BIN_EXE_chartseq"))
        .env("CHARTSEQ_HELM", &helm)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("INPUT_FAIL_ON", "error")
        .env("INPUT_SARIF", "")
        .env("INPUT_CHARTS", CHART);
    let (code, out, err) = run(&mut cmd);
    assert_eq!((code, out.as_str()), (0, ""), "without the input: {err}");
    let (code, out, err) = run(cmd.env("INPUT_VALUES_MATRIX", "true"));
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.starts_with(&format!("::error file={CHART}/Chart.yaml,line=10,col=17,")),
        "{out}"
    );
    assert!(out.contains(ONLY), "{out}");
    let summary = std::fs::read_to_string(&summary).expect("summary");
    assert!(
        summary.contains(&format!("Values matrix of shop: 3 renderings (default values; values {CHART}/ci/prod-values.yaml; subchart `db` disabled)")),
        "{summary}"
    );
    assert!(fixture("lint/values-matrix/shop/ci/prod-values.yaml").is_file());
}

/// Nested conditions are set under their parent's path, a disabled subchart is flipped on,
/// tags are flipped by name; each flip really changes what renders.
#[test]
fn every_condition_and_tag_is_flipped_once_in_a_fixed_order() {
    let Some(helm) = tool("helm") else { return };
    let chart = "fixtures/lint/values-matrix/tags";
    let (code, out, err) = run(chartseq()
        .args([
            "lint",
            chart,
            "--format",
            "concise",
            "--values-matrix",
            "--helm",
        ])
        .arg(&helm));
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert_eq!(
        err,
        "chartseq: values matrix of chart site: 4 renderings: default values; subchart `front/assets` disabled (--set front.assets.enabled=false); subchart `cache` enabled (--set cache.enabled=true); tag `web` disabled (--set tags.web=false)\n"
    );
    let levels = |set: Option<&str>| {
        let mut cmd = chartseq();
        cmd.args(["plan", chart, "--helm"]).arg(&helm);
        if let Some(s) = set {
            cmd.args(["--set", s]);
        }
        let (code, out, err) = run(&mut cmd);
        assert_eq!(code, 0, "{err}");
        out.lines()
            .filter(|l| l.trim_start().starts_with("Chart:"))
            .count()
    };
    assert_eq!(levels(None), 3);
    assert_eq!(levels(Some("front.assets.enabled=false")), 2);
    assert_eq!(levels(Some("cache.enabled=true")), 4);
    assert_eq!(levels(Some("tags.web=false")), 1);
}

/// A Bitnami chart's `common` library (tag `bitnami-common`) is never flipped off: helm
/// cannot render the chart without its helpers. Before, the matrix stopped there with no
/// findings at all.
#[test]
fn library_charts_and_their_tags_are_not_flipped() {
    let Some(helm) = tool("helm") else { return };
    let chart = "fixtures/lint/values-matrix/bitnami-nginx";
    let (code, out, err) = run(chartseq()
        .args([
            "lint",
            chart,
            "--values-matrix",
            "--color",
            "never",
            "--helm",
        ])
        .arg(&helm));
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        out,
        "values matrix of chart nginx: 1 rendering (default values)\nno findings\n"
    );
    assert!(!err.contains("bitnami-common"), "{err}");
}

/// A flip helm cannot render is one CS900 finding naming the value set, and the other value
/// sets are still linted.
#[test]
fn a_flip_helm_cannot_render_is_reported_once_and_the_matrix_goes_on() {
    let Some(helm) = tool("helm") else { return };
    let chart = "fixtures/lint/values-matrix/exporter";
    let (code, out, err) = run(chartseq()
        .args([
            "lint",
            chart,
            "--values-matrix",
            "--format",
            "concise",
            "--helm",
        ])
        .arg(&helm));
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(
        out,
        format!(
            "{chart}/charts/exporter/templates/secret.yaml:6:15: CS900 [error] helm cannot render the chart: execution error at (app/charts/exporter/templates/secret.yaml:6:15): exporter.password is required when the exporter is enabled (only with: subchart `exporter` enabled)\n"
        )
    );
    assert!(
        err.contains("values matrix of chart app: 3 renderings: default values; subchart `exporter` enabled (--set exporter.enabled=true); subchart `cache` disabled (--set cache.enabled=false)"),
        "{err}"
    );
}
