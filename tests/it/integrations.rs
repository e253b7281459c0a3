//! The places findings are read outside a terminal, each tested with the real consumer: SARIF
//! against the official 2.1.0 schema (check-jsonschema) and Microsoft's validator with
//! GitHub's ingestion rules (sarif-multitool); GitHub annotations and step summary through the
//! action's own script in a simulated `GITHUB_*` environment; the action and workflows against
//! GitHub's schemas and actionlint; the pre-commit hooks through `pre-commit try-repo`; the
//! helm plugin through `helm plugin install`; the `JUnit` report through junitparser;
//! `--changed-since` in a scratch git repository.
//!
//! The consumers come from `scripts/get-ci-tools.sh` through `$CHARTSEQ_CHECK_JSONSCHEMA`,
//! `$CHARTSEQ_ACTIONLINT`, `$CHARTSEQ_PRE_COMMIT`, `$CHARTSEQ_SARIF_MULTITOOL`,
//! `$CHARTSEQ_SHELLCHECK` and `$CHARTSEQ_JUNITPARSER` (see [`crate::tool`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{chartseq, fixture, root, run, snapshot_settings, tool};

const SARIF_SCHEMA: &str = "fixtures/schemas/sarif-schema-2.1.0.json";

/// A command with the same scrubbed environment as [`chartseq`].
pub(crate) fn scrubbed(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(root());
    for var in ["KUBECONFIG", "NO_COLOR", "CI", "TERM", "CHARTSEQ_BIN"] {
        cmd.env_remove(var);
    }
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GITHUB_") {
            cmd.env_remove(key);
        }
    }
    cmd
}

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_chartseq"))
}

/// The cycle fixture as a rendered stream with its chart: no helm needed.
fn cycle_stream() -> [&'static str; 3] {
    [
        "fixtures/charts/cycle-two.rendered.yaml",
        "--chart",
        "fixtures/charts/cycle-two",
    ]
}

fn lint_stream(format: &str) -> (i32, String, String) {
    run(chartseq()
        .arg("lint")
        .args(cycle_stream())
        .args(["--format", format]))
}

fn sarif_of(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout).expect("SARIF is JSON")
}

/// Checks a SARIF file with the official 2.1.0 schema (check-jsonschema) and with Microsoft's
/// validator, SARIF rules and GitHub's ingestion rules (sarif-multitool). Validator errors
/// and warnings fail, except the rule ids in `allowed`.
fn validate_sarif(path: &Path, allowed: &[&str]) {
    if let Some(checker) = tool("check_jsonschema") {
        let (code, out, err) = run(scrubbed(checker)
            .arg("--schemafile")
            .arg(root().join(SARIF_SCHEMA))
            .arg(path));
        assert_eq!(code, 0, "SARIF fails the 2.1.0 schema:\n{out}{err}");
    }
    if let Some(multitool) = tool("sarif_multitool") {
        let problems: Vec<String> = multitool_problems(&multitool, path)
            .into_iter()
            .filter(|(rule, _)| !allowed.contains(&rule.as_str()))
            .map(|(rule, text)| format!("{rule}: {text}"))
            .collect();
        assert!(problems.is_empty(), "sarif-multitool: {problems:#?}");
    }
}

/// The errors and warnings of `sarif-multitool validate` (SARIF and GitHub rules): rule id and
/// message.
fn multitool_problems(multitool: &Path, path: &Path) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("validation.sarif");
    let (code, out, err) = run(scrubbed(multitool)
        .arg("validate")
        .arg(path)
        .args(["--rule-kind", "Sarif;Gh", "--level", "Error;Warning"])
        .args(["--log", "ForceOverwrite", "-o"])
        .arg(&log));
    assert_eq!(code, 0, "sarif-multitool: {out}{err}");
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&log).expect("validation log"))
            .expect("validation log is JSON");
    log["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            (
                r["ruleId"].as_str().unwrap_or("").to_owned(),
                r["message"].to_string(),
            )
        })
        .collect()
}

#[test]
fn every_integration_format_is_snapshotted() {
    let settings = snapshot_settings();
    for format in ["github", "junit"] {
        let (code, stdout, stderr) = lint_stream(format);
        assert_eq!(code, 1, "{stderr}");
        settings.bind(|| insta::assert_snapshot!(format!("integrations_{format}"), stdout));
    }
    let (code, stdout, stderr) = lint_stream("sarif");
    assert_eq!(code, 1, "{stderr}");
    let sarif = sarif_of(&stdout);
    let results = serde_json::to_string_pretty(&sarif["runs"][0]["results"]).expect("json");
    settings.bind(|| insta::assert_snapshot!("integrations_sarif_results", results));
}

#[test]
fn sarif_is_valid_and_complete() {
    let (code, stdout, stderr) = lint_stream("sarif");
    assert_eq!(code, 1, "{stderr}");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("out.sarif");
    std::fs::write(&path, &stdout).expect("write");
    validate_sarif(&path, &[]);
    // The validator does reject what GitHub would: a result without a location.
    if let Some(multitool) = tool("sarif_multitool") {
        let mut broken = sarif_of(&stdout);
        broken["runs"][0]["results"][0]
            .as_object_mut()
            .expect("result")
            .remove("locations");
        let bad = dir.path().join("bad.sarif");
        std::fs::write(&bad, broken.to_string()).expect("write");
        let problems = multitool_problems(&multitool, &bad);
        assert!(
            problems.iter().any(|(rule, _)| rule.starts_with("GH")),
            "{problems:?}"
        );
    }

    let sarif = sarif_of(&stdout);
    assert_eq!(sarif["version"], "2.1.0");
    let runs = sarif["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1);
    let driver = &runs[0]["tool"]["driver"];
    assert_eq!(driver["name"], "chartseq");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    // Every rule, documented, with its page and default level.
    let (_, table, _) = run(chartseq().args(["rules", "--format", "json"]));
    let listed: serde_json::Value = serde_json::from_str(&table).expect("rules json");
    let rules = driver["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), listed.as_array().expect("array").len());
    for (rule, listed) in rules.iter().zip(listed.as_array().expect("array")) {
        assert_eq!(rule["id"], listed["code"]);
        assert!(
            rule["fullDescription"]["text"]
                .as_str()
                .is_some_and(|t| t.contains("## What it does")),
            "{rule}"
        );
        let page = format!(
            "/rules/{}-{}.md",
            listed["code"].as_str().expect("code"),
            listed["name"].as_str().expect("name")
        );
        let uri = rule["helpUri"].as_str().expect("helpUri");
        assert!(uri.starts_with("https://") && uri.ends_with(&page), "{uri}");
        assert!(
            root().join(&page[1..]).is_file(),
            "{page} is not in the repository"
        );
        let level = match listed["severity"].as_str() {
            Some("info") => "note",
            other => other.expect("severity"),
        };
        assert_eq!(rule["defaultConfiguration"]["level"], level);
    }
    // The cycle: rule, level, the template line (not a placeholder), a fingerprint.
    let results = runs[0]["results"].as_array().expect("results");
    let cycle = results
        .iter()
        .find(|r| r["ruleId"] == "CS001")
        .expect("CS001 result");
    assert_eq!(cycle["level"], "error");
    let physical = &cycle["locations"][0]["physicalLocation"];
    assert_eq!(
        physical["artifactLocation"]["uri"],
        "fixtures/charts/cycle-two/templates/app.yaml"
    );
    assert_eq!(physical["region"]["startLine"], 7);
    assert_eq!(physical["region"]["startColumn"], 41);
    assert_eq!(physical["region"]["endLine"], 7);
    assert_eq!(physical["region"]["endColumn"], 49);
    assert!(
        cycle["partialFingerprints"]["chartseqFindingHash/v1"]
            .as_str()
            .is_some_and(|f| f.len() == 16)
    );
}

/// A key written by a helper is located at the helper's line in `_helpers.tpl`, the template's
/// `include` of it as a related location, and the validators accept it.
#[test]
fn sarif_of_a_helper_line_is_the_helper_line() {
    let Some(helm) = tool("helm") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("e2e.sarif");
    let (code, stdout, stderr) = run(chartseq()
        .args([
            "lint",
            "fixtures/lint/e2e/mychart",
            "--format",
            "sarif",
            "-o",
        ])
        .arg(&path)
        .arg("--helm")
        .arg(&helm));
    assert_eq!(code, 1, "{stdout}{stderr}");
    validate_sarif(&path, &[]);
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("sarif")).expect("json");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    let helper = results
        .iter()
        .find(|r| r["ruleId"] == "CS305")
        .expect("CS305");
    let physical = &helper["locations"][0]["physicalLocation"];
    assert_eq!(
        physical["artifactLocation"]["uri"],
        "fixtures/lint/e2e/mychart/templates/_helpers.tpl"
    );
    assert_eq!(physical["region"]["startLine"], 2, "{helper}");
    assert_eq!(physical["region"]["startColumn"], 25, "{helper}");
    let include = helper["relatedLocations"]
        .as_array()
        .expect("related locations")
        .iter()
        .find(|r| {
            r["physicalLocation"]["artifactLocation"]["uri"]
                == "fixtures/lint/e2e/mychart/templates/job.yaml"
        })
        .expect("the template's include");
    assert_eq!(
        include["physicalLocation"]["region"]["startLine"], 6,
        "{include}"
    );
    assert_eq!(
        include["message"]["text"],
        "includes `mychart.gate`, which writes this line"
    );
    // Every result has its template line.
    for r in results {
        let region = &r["locations"][0]["physicalLocation"]["region"];
        assert!(region["startLine"].as_u64().is_some_and(|l| l > 1), "{r}");
    }
}

/// Copies a chart directory (flat enough for fixtures) into `to`.
pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

fn fingerprints(dir: &Path) -> Vec<(String, String, u64)> {
    let (_, stdout, stderr) = run(chartseq().current_dir(dir).args([
        "lint",
        "stream.yaml",
        "--chart",
        "chart",
        "--format",
        "sarif",
    ]));
    let sarif = sarif_of(&format!("{stdout}{stderr}"));
    sarif["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            (
                r["ruleId"].as_str().expect("rule").to_owned(),
                r["partialFingerprints"]["chartseqFindingHash/v1"]
                    .as_str()
                    .expect("fingerprint")
                    .to_owned(),
                r["locations"][0]["physicalLocation"]["region"]["startLine"]
                    .as_u64()
                    .expect("line"),
            )
        })
        .collect()
}

#[test]
fn sarif_fingerprints_survive_lines_moving() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_dir(&fixture("charts/cycle-two"), &dir.path().join("chart"));
    let stream =
        std::fs::read_to_string(fixture("charts/cycle-two.rendered.yaml")).expect("stream");
    std::fs::write(dir.path().join("stream.yaml"), &stream).expect("write");
    let before = fingerprints(dir.path());
    assert_eq!(before, fingerprints(dir.path()), "two runs differ");
    // An unrelated edit above the finding moves it down three lines.
    let moved = stream.replacen(
        "metadata:\n  name: app\n",
        "metadata:\n  labels:\n    tier: web\n    owner: team\n  name: app\n",
        1,
    );
    assert_ne!(moved, stream);
    std::fs::write(dir.path().join("stream.yaml"), &moved).expect("write");
    let template = dir.path().join("chart/templates/app.yaml");
    let text = std::fs::read_to_string(&template).expect("template");
    std::fs::write(
        &template,
        text.replacen(
            "metadata:\n  name: app\n",
            "metadata:\n  labels:\n    tier: web\n    owner: team\n  name: app\n",
            1,
        ),
    )
    .expect("write");
    let after = fingerprints(dir.path());
    assert_eq!(before.len(), after.len());
    for (b, a) in before.iter().zip(&after) {
        assert_eq!((&b.0, &b.1), (&a.0, &a.1), "fingerprint changed");
        // CS203 points at Chart.yaml's `apiVersion`, which the edit did not touch.
        let moved_by = if b.0 == "CS203" { 0 } else { 3 };
        assert_eq!(
            b.2 + moved_by,
            a.2,
            "the finding did not move with its line"
        );
    }
}

#[test]
fn github_annotations_escape_and_cut_notes() {
    let (code, stdout, _) = lint_stream("github");
    assert_eq!(code, 1);
    assert!(stdout.lines().any(|l| l
        == "::error file=fixtures/charts/cycle-two/templates/app.yaml,line=7,col=41,endLine=7,endColumn=49,title=CS001 resource-group-cycle::resource groups of chart cycle-two form a cycle: app -> db -> app%0Ahelp: no group of a cycle can ever start; remove one of these depends-on edges%0Anote: helm lint checks this only in apiVersion v3 charts (this chart is v2)"), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("::warning file=") && l.contains("title=CS203 ")),
        "{stdout}"
    );
    // Without $GITHUB_STEP_SUMMARY nothing else is written; with it, the summary is appended.
    let dir = tempfile::tempdir().expect("tempdir");
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "previous step\n").expect("write");
    let (code, _, _) = run(chartseq()
        .arg("lint")
        .args(cycle_stream())
        .args(["--format", "github"])
        .env("GITHUB_STEP_SUMMARY", &summary));
    assert_eq!(code, 1);
    let text = std::fs::read_to_string(&summary).expect("summary");
    assert!(
        text.starts_with("previous step\n## chartseq lint"),
        "{text}"
    );
    assert!(
        text.contains("| CS001 resource-group-cycle | error | 1 |"),
        "{text}"
    );
    assert!(text.contains("No install order"), "{text}");
    // Other formats ignore the variable.
    let before = std::fs::read_to_string(&summary).expect("summary");
    run(chartseq()
        .arg("lint")
        .args(cycle_stream())
        .args(["--format", "concise"])
        .env("GITHUB_STEP_SUMMARY", &summary));
    assert_eq!(before, std::fs::read_to_string(&summary).expect("summary"));
}

#[test]
fn junit_is_one_case_per_finding_and_a_passing_case_when_clean() {
    let (_, stdout, _) = lint_stream("junit");
    assert_eq!(stdout.matches("<testcase ").count(), 2, "{stdout}");
    assert_eq!(stdout.matches("<failure ").count(), 2, "{stdout}");
    assert!(stdout.contains("app -&gt; db -&gt; app"), "{stdout}");
    let (code, clean, _) = run(chartseq().args([
        "lint",
        "fixtures/rules/CS001/valid.yaml",
        "--format",
        "junit",
    ]));
    assert_eq!(code, 0, "{clean}");
    assert!(clean.contains("<testcase name=\"no findings\""), "{clean}");
    assert!(!clean.contains("<failure"), "{clean}");
    // A JUnit reader parses both and sees failures exactly when lint does.
    if let Some(junitparser) = tool("junitparser") {
        let dir = tempfile::tempdir().expect("tempdir");
        for (name, text, failing) in [
            ("findings.xml", &stdout, true),
            ("clean.xml", &clean, false),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, text).expect("write");
            let (code, out, err) = run(scrubbed(&junitparser).arg("verify").arg(&path));
            assert_eq!(code, i32::from(failing), "{name}: {out}{err}");
            assert!(!err.contains("Error"), "{name}: {err}");
        }
        let merged = dir.path().join("merged.xml");
        let (code, out, err) = run(scrubbed(&junitparser)
            .arg("merge")
            .arg(dir.path().join("findings.xml"))
            .arg(dir.path().join("clean.xml"))
            .arg(&merged));
        assert_eq!(code, 0, "{out}{err}");
        let merged = std::fs::read_to_string(&merged).expect("merged");
        assert!(
            merged.contains("tests=\"3\"") && merged.contains("failures=\"2\""),
            "{merged}"
        );
    }
}

fn git(dir: &Path, args: &[&str]) {
    let (code, out, err) = run(scrubbed("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args));
    assert_eq!(code, 0, "git {args:?}: {out}{err}");
}

/// A scratch git repository holding the integration fixture charts (and their config).
pub(crate) fn scratch_repo(charts: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    git(dir.path(), &["init", "-q", "-b", "main"]);
    std::fs::copy(
        fixture("integrations/charts/.chartseq.toml"),
        dir.path().join(".chartseq.toml"),
    )
    .expect("config");
    for (from, to) in charts {
        copy_dir(
            &fixture("integrations/charts").join(from),
            &dir.path().join(to),
        );
    }
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "charts"]);
    dir
}

#[test]
fn changed_since_lints_only_changed_charts() {
    let Some(helm) = tool("helm") else {
        return;
    };
    let repo = scratch_repo(&[
        ("clean", "charts/a"),
        ("cycle", "charts/b"),
        ("clean", "charts/c"),
    ]);
    // The parent `c` vendors a subchart; a change to it re-lints the parent.
    copy_dir(
        &fixture("integrations/charts/clean"),
        &repo.path().join("charts/c/charts/sub"),
    );
    git(repo.path(), &["add", "-A"]);
    git(repo.path(), &["commit", "-q", "-m", "vendor"]);
    git(repo.path(), &["checkout", "-q", "-b", "feature"]);
    let lint = |since: &str| {
        run(chartseq()
            .current_dir(repo.path())
            .args([
                "lint",
                "--changed-since",
                since,
                ".",
                "--format",
                "json",
                "--helm",
            ])
            .arg(&helm))
    };
    // Nothing changed: nothing to lint, and the run says so; the report is there, empty.
    let (code, stdout, stderr) = lint("main");
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("no chart"), "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("a report");
    assert_eq!(json["diagnostics"].as_array().map(Vec::len), Some(0));
    let (code, stdout, _) = run(chartseq().current_dir(repo.path()).args([
        "lint",
        "--changed-since",
        "main",
        ".",
        "--format",
        "sarif",
    ]));
    assert_eq!(code, 0);
    assert_eq!(
        sarif_of(&stdout)["runs"][0]["results"]
            .as_array()
            .map(Vec::len),
        Some(0)
    );
    // A change to the vendored subchart lints its parent `c` (whose only finding is that it
    // does not declare the subchart); the cycle chart `b` is not touched, so not reported.
    std::fs::write(
        repo.path().join("charts/c/charts/sub/values.yaml"),
        "url: changed\n",
    )
    .expect("write");
    git(repo.path(), &["commit", "-q", "-am", "change sub"]);
    let (code, stdout, stderr) = lint("main");
    assert_eq!(code, 0, "{stdout}{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("one report");
    let charts: BTreeSet<&str> = json["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| d["location"]["file"].as_str().expect("file"))
        .collect();
    assert_eq!(charts, BTreeSet::from(["charts/c/Chart.yaml"]), "{stdout}");
    // Touching the cycle chart (uncommitted) reports it.
    let app = repo.path().join("charts/b/templates/app.yaml");
    let text = std::fs::read_to_string(&app).expect("read") + "# touched\n";
    std::fs::write(&app, text).expect("write");
    let (code, stdout, stderr) = run(chartseq()
        .current_dir(repo.path())
        .args([
            "lint",
            "--changed-since",
            "main",
            ".",
            "--format",
            "concise",
            "--helm",
        ])
        .arg(&helm));
    assert_eq!(code, 1, "{stdout}{stderr}");
    let files: BTreeSet<&str> = stdout.lines().filter_map(|l| l.split(':').next()).collect();
    // `c` still differs from main; `a` never did.
    assert_eq!(
        files,
        BTreeSet::from(["charts/b/templates/app.yaml", "charts/c/Chart.yaml"]),
        "{stdout}"
    );
    // A bad ref is a tool failure.
    let (code, _, stderr) = lint("no-such-ref");
    assert_eq!(code, 2, "{stderr}");
}

/// Runs `scripts/action-lint.sh` as the action does, in a simulated GitHub environment.
struct ActionRun {
    code: i32,
    stdout: String,
    summary: String,
    output: String,
    sarif: Option<PathBuf>,
    _dir: tempfile::TempDir,
}

fn run_action(helm: &Path, inputs: &[(&str, &str)]) -> ActionRun {
    let dir = tempfile::tempdir().expect("tempdir");
    let summary = dir.path().join("summary.md");
    let output = dir.path().join("output");
    let sarif = dir.path().join("reports/chartseq.sarif");
    let mut cmd = scrubbed("bash");
    cmd.current_dir(fixture("integrations"))
        .arg(root().join("scripts/action-lint.sh"))
        .env("CHARTSEQ", bin())
        .env("CHARTSEQ_HELM", helm)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_WORKSPACE", fixture("integrations"))
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &output)
        .env("INPUT_FAIL_ON", "error")
        .env("INPUT_SARIF", &sarif);
    for (key, value) in inputs {
        cmd.env(key, value);
    }
    let (code, stdout, stderr) = run(&mut cmd);
    assert!(code < 2, "the action failed: {stdout}{stderr}");
    ActionRun {
        code,
        stdout,
        summary: std::fs::read_to_string(&summary).unwrap_or_default(),
        output: std::fs::read_to_string(&output).unwrap_or_default(),
        sarif: sarif.is_file().then_some(sarif),
        _dir: dir,
    }
}

#[test]
fn action_script_annotates_summarises_and_writes_sarif() {
    let Some(helm) = tool("helm") else {
        return;
    };
    // Default inputs: every chart under the workspace.
    let action = run_action(&helm, &[]);
    assert_eq!(action.code, 1, "{}", action.stdout);
    let lines: Vec<&str> = action.stdout.lines().collect();
    assert!(lines.contains(&"::error file=fixtures/integrations/charts/cycle/templates/app.yaml,line=7,col=41,endLine=7,endColumn=49,title=CS001 resource-group-cycle::resource groups of chart cycle form a cycle: app -> db -> app%0Ahelp: no group of a cycle can ever start; remove one of these depends-on edges%0Anote: helm lint checks this only in apiVersion v3 charts (this chart is v2)"), "{}", action.stdout);
    let cs101 = lines
        .iter()
        .filter(|l| {
            l.starts_with(
                "::error file=fixtures/integrations/charts/warn/templates/groups.yaml,line=9,col=5,",
            ) && l.contains(",title=CS101 missing-resource-group::")
        })
        .count();
    assert_eq!(cs101, 12, "{}", action.stdout);
    assert_eq!(lines.len(), 13, "{}", action.stdout);
    let summary = &action.summary;
    assert!(summary.contains("Charts: clean, cycle, warn"), "{summary}");
    assert!(
        summary.contains("| CS101 missing-resource-group | error | 12 |"),
        "{summary}"
    );
    assert!(
        summary.contains("| CS001 resource-group-cycle | error | 1 |"),
        "{summary}"
    );
    // 13 errors: GitHub shows 10, and the summary says so.
    assert!(
        summary.contains("13 findings are `error` annotations; GitHub shows only 10"),
        "{summary}"
    );
    assert!(
        summary.contains(
            "| `fixtures/integrations/charts/cycle/templates/app.yaml:7:41` | CS001 resource-group-cycle | error |"
        ),
        "{summary}"
    );
    // The clean chart's install order as Mermaid; the cycle has none.
    assert!(
        summary.contains(
            "### Install order: clean\n\n```mermaid\nflowchart TD\n  subgraph c0[\"clean\"]\n    s0[\"db\"]\n    s1[\"app\"]"
        ),
        "{summary}"
    );
    assert!(
        summary.contains("### Install order: cycle\n\nNo install order"),
        "{summary}"
    );
    let sarif = action.sarif.as_ref().expect("the SARIF file");
    assert!(action.output.contains("sarif="), "{}", action.output);
    validate_sarif(sarif, &[]);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sarif).expect("sarif")).expect("json");
    assert_eq!(
        json["runs"][0]["results"].as_array().map(Vec::len),
        Some(13)
    );

    // Chosen charts, values and no SARIF: clean, quiet, summarised.
    let action = run_action(
        &helm,
        &[
            ("INPUT_CHARTS", "charts/cl*\nnope/*"),
            ("INPUT_VALUES", "charts/clean/values.yaml"),
            ("INPUT_ARGS", "--release-name web"),
            ("INPUT_SARIF", ""),
        ],
    );
    assert_eq!(action.code, 0, "{}", action.stdout);
    assert_eq!(
        action.stdout,
        "::warning title=chartseq::no chart matches nope/*\n"
    );
    assert!(
        action.summary.contains("Charts: clean\n"),
        "{}",
        action.summary
    );
    assert!(
        action.summary.contains("No findings."),
        "{}",
        action.summary
    );
    assert!(action.sarif.is_none());
    assert!(!action.output.contains("sarif="));

    // fail-on never: findings are annotated, the step passes.
    let action = run_action(
        &helm,
        &[("INPUT_CHARTS", "charts/cycle"), ("INPUT_FAIL_ON", "never")],
    );
    assert_eq!(action.code, 0, "{}", action.stdout);
    assert!(
        action.stdout.starts_with("::error file="),
        "{}",
        action.stdout
    );
}

#[test]
fn action_and_workflows_satisfy_github_schemas_and_actionlint() {
    let workflows = [
        root().join(".github/workflows/chartseq-example.yml"),
        fixture("integrations/github-workflow.yml"),
    ];
    if let Some(checker) = tool("check_jsonschema") {
        let (code, out, err) = run(scrubbed(&checker)
            .args(["--builtin-schema", "vendor.github-actions"])
            .arg(root().join("action.yml")));
        assert_eq!(code, 0, "action.yml: {out}{err}");
        let (code, out, err) = run(scrubbed(&checker)
            .args(["--builtin-schema", "vendor.github-workflows"])
            .args(&workflows));
        assert_eq!(code, 0, "workflows: {out}{err}");
        // The checker does reject a broken action (so the pass above means something).
        let dir = tempfile::tempdir().expect("tempdir");
        let broken = dir.path().join("action.yml");
        std::fs::write(&broken, "name: x\nruns:\n  using: composite\n  steps: 3\n").expect("write");
        let (code, _, _) = run(scrubbed(&checker)
            .args(["--builtin-schema", "vendor.github-actions"])
            .arg(&broken));
        assert_ne!(code, 0);
    }
    if let Some(actionlint) = tool("actionlint") {
        let (code, out, err) = run(scrubbed(&actionlint).args(&workflows));
        assert_eq!(code, 0, "actionlint: {out}{err}");
    }
    // The scripts the action, the plugin and CI run.
    if let Some(shellcheck) = tool("shellcheck") {
        let (code, out, err) = run(scrubbed(&shellcheck).args([
            "scripts/action-lint.sh",
            "scripts/helm-plugin.sh",
            "scripts/get-ci-tools.sh",
            "scripts/test.sh",
        ]));
        assert_eq!(code, 0, "shellcheck: {out}{err}");
    }
    // The action runs the script that the tests above exercise, and exposes every input.
    let action = std::fs::read_to_string(root().join("action.yml")).expect("action.yml");
    assert!(action.contains("$GITHUB_ACTION_PATH/scripts/action-lint.sh"));
    for input in [
        "charts",
        "values",
        "args",
        "fail-on",
        "sarif",
        "helm-version",
        "version",
    ] {
        assert!(action.contains(&format!("\n  {input}:\n")), "input {input}");
        assert!(
            input == "helm-version"
                || input == "version"
                || action.contains(&format!("${{{{ inputs.{input} }}}}")),
            "input {input} is not used"
        );
    }
}

/// `pre-commit try-repo` of this repository in a scratch repository holding a clean chart
/// and a chart with a cycle.
fn try_repo(pre_commit: &Path, helm: &Path, hook: &str, files: &[&str]) -> (i32, String) {
    let repo = scratch_repo(&[("clean", "clean"), ("cycle", "cyc")]);
    let home = tempfile::tempdir().expect("tempdir");
    let path = format!(
        "{}:{}",
        bin().parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let (code, out, err) = run(scrubbed(pre_commit)
        .current_dir(repo.path())
        .env("PRE_COMMIT_HOME", home.path())
        .env("PATH", path)
        .env("CHARTSEQ_HELM", helm)
        .args(["try-repo"])
        .arg(root())
        .arg(hook)
        .arg("--files")
        .args(files));
    (code, format!("{out}{err}"))
}

#[test]
fn pre_commit_hooks_lint_the_charts_of_changed_files() {
    let (Some(pre_commit), Some(helm)) = (tool("pre_commit"), tool("helm")) else {
        return;
    };
    // Both hooks' manifest is valid.
    let (code, out, err) = run(scrubbed(&pre_commit)
        .args(["validate-manifest"])
        .arg(root().join(".pre-commit-hooks.yaml")));
    assert_eq!(code, 0, "{out}{err}");
    let hook = "chartseq-lint-system";
    let (code, out) = try_repo(
        &pre_commit,
        &helm,
        hook,
        &[
            "clean/templates/app.yaml",
            "clean/values.yaml",
            "clean/Chart.yaml",
        ],
    );
    assert_eq!(code, 0, "{hook} on the clean chart: {out}");
    assert!(out.contains("Passed"), "{out}");
    let (code, out) = try_repo(
        &pre_commit,
        &helm,
        hook,
        &[
            "cyc/templates/app.yaml",
            "cyc/templates/db.yaml",
            "clean/values.yaml",
        ],
    );
    assert_eq!(code, 1, "{hook} on the cycle: {out}");
    // Two files of one chart: linted once.
    assert_eq!(out.matches(CYCLE_LINE).count(), 1, "{out}");
}

pub(crate) const CYCLE_LINE: &str = "cyc/templates/app.yaml:7:41: CS001 [error] resource groups of chart cycle form a cycle: app -> db -> app";

/// The `language: rust` hook: pre-commit builds chartseq from this repository with cargo
/// (a release build, a few minutes), then runs it on the cycle.
#[test]
fn pre_commit_rust_hook_builds_chartseq_and_lints() {
    let (Some(pre_commit), Some(helm)) = (tool("pre_commit"), tool("helm")) else {
        return;
    };
    let (code, out) = try_repo(
        &pre_commit,
        &helm,
        "chartseq-lint",
        &["cyc/templates/app.yaml", "cyc/Chart.yaml"],
    );
    assert_eq!(code, 1, "{out}");
    assert_eq!(out.matches(CYCLE_LINE).count(), 1, "{out}");
}

#[test]
fn owning_charts_maps_files_to_chart_roots_once() {
    let Some(helm) = tool("helm") else {
        return;
    };
    let (code, stdout, stderr) = run(chartseq()
        .args(["lint", "--owning-charts", "--format", "concise", "--helm"])
        .arg(&helm)
        .args([
            "fixtures/integrations/charts/cycle/templates/app.yaml",
            "fixtures/integrations/charts/cycle/Chart.yaml",
            "fixtures/integrations/charts/clean/values.yaml",
            "README.md",
        ]));
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(stdout.contains("CS001"), "{stdout}");
    // Files outside any chart: nothing to do.
    let (code, stdout, _) = run(chartseq().args(["lint", "--owning-charts", "README.md"]));
    assert_eq!((code, stdout.as_str()), (0, ""));
}

#[test]
fn helm_plugin_runs_through_real_helm() {
    let Some(helm) = tool("helm") else {
        return;
    };
    let home = tempfile::tempdir().expect("tempdir");
    let data = home.path().join("data");
    let helm_cmd = || {
        let mut cmd = scrubbed(&helm);
        cmd.env("HELM_DATA_HOME", &data)
            .env("HELM_PLUGINS", data.join("plugins"))
            .env("HELM_CONFIG_HOME", home.path().join("config"))
            .env("HELM_CACHE_HOME", home.path().join("cache"))
            .env("CHARTSEQ_BIN", bin())
            .env_remove("CHARTSEQ_HELM");
        cmd
    };
    let (code, out, err) = run(helm_cmd().args(["plugin", "install"]).arg(root()));
    assert_eq!(code, 0, "{out}{err}");
    let (_, list, _) = run(helm_cmd().args(["plugin", "list"]));
    assert!(list.contains("chartseq"), "{list}");
    // lint renders with the calling helm ($HELM_BIN) and exits as chartseq does.
    let (code, out, err) = run(helm_cmd().args([
        "chartseq",
        "lint",
        "fixtures/integrations/charts/cycle",
        "--format",
        "concise",
    ]));
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.starts_with(
            "fixtures/integrations/charts/cycle/templates/app.yaml:7:41: CS001 [error]"
        ),
        "{out}{err}"
    );
    // helm's values flags pass through.
    let (code, out, err) = run(helm_cmd().args([
        "chartseq",
        "template",
        "--markers",
        "fixtures/integrations/charts/clean",
        "-f",
        "fixtures/integrations/charts/clean/values.yaml",
        "--set",
        "url=from-set",
        "--release-name",
        "web",
        "-n",
        "prod",
    ]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("url: \"from-set\""), "{out}");
    // helm takes `-n` for itself; the plugin hands it on.
    assert!(out.contains("namespace: prod"), "{out}");
    assert!(out.contains("name: web-db"), "{out}");
    assert!(
        out.find("## START resource-group: clean db")
            < out.find("## START resource-group: clean app")
    );
    let (code, out, err) =
        run(helm_cmd().args(["chartseq", "plan", "fixtures/integrations/charts/clean"]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("Batch 1: db\n      db: ConfigMap/release-name-db\n    Batch 2: app"),
        "{out}"
    );
}

#[test]
fn several_targets_make_one_report() {
    let targets = [
        "fixtures/charts/cycle-two.rendered.yaml",
        "fixtures/charts/two-groups.rendered.yaml",
    ];
    let (code, stdout, stderr) = run(chartseq()
        .arg("lint")
        .args(targets)
        .args(["--format", "json"]));
    assert_eq!(code, 1, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    let codes: Vec<&str> = json["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| d["code"].as_str().expect("code"))
        .collect();
    assert_eq!(codes, ["CS001", "CS004"], "{stdout}");
    assert_eq!(json["summary"]["errors"], 2);
    let (_, stdout, _) = run(chartseq()
        .arg("lint")
        .args(targets)
        .args(["--format", "sarif"]));
    let sarif = sarif_of(&stdout);
    assert_eq!(sarif["runs"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        sarif["runs"][0]["results"].as_array().map(Vec::len),
        Some(2)
    );
    // Exit status: findings in any target count.
    let (code, _, _) = run(chartseq()
        .args(["lint", "fixtures/rules/CS001/valid.yaml", targets[1]])
        .args(["--format", "concise"]));
    assert_eq!(code, 1);
}

/// A stream linted without its chart points at the stream's own lines; a file outside the
/// repository is an absolute `file:` URI. Both pass the validators.
#[test]
fn sarif_of_streams_inside_and_outside_the_repository() {
    let (code, stdout, _) = run(chartseq().args([
        "lint",
        "fixtures/charts/cycle-two.rendered.yaml",
        "--format",
        "sarif",
    ]));
    assert_eq!(code, 1);
    let dir = tempfile::tempdir().expect("tempdir");
    let inside = dir.path().join("inside.sarif");
    std::fs::write(&inside, &stdout).expect("write");
    validate_sarif(&inside, &[]);
    let sarif = sarif_of(&stdout);
    let cycle = sarif["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|r| r["ruleId"] == "CS001")
        .expect("CS001")
        .clone();
    let physical = &cycle["locations"][0]["physicalLocation"];
    assert_eq!(
        physical["artifactLocation"],
        serde_json::json!({
            "uri": "fixtures/charts/cycle-two.rendered.yaml",
            "uriBaseId": "%SRCROOT%",
        })
    );
    assert_eq!(physical["region"]["startLine"], 9);

    let outside = dir.path().join("my charts");
    std::fs::create_dir_all(&outside).expect("mkdir");
    let stream = outside.join("cycle.yaml");
    std::fs::copy(fixture("charts/cycle-two.rendered.yaml"), &stream).expect("copy");
    let (_, stdout, _) = run(chartseq()
        .arg("lint")
        .arg(&stream)
        .args(["--format", "sarif"]));
    let path = dir.path().join("outside.sarif");
    std::fs::write(&path, &stdout).expect("write");
    validate_sarif(&path, &[]);
    let uri = sarif_of(&stdout)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
        ["artifactLocation"]["uri"]
        .as_str()
        .expect("uri")
        .to_owned();
    assert!(
        uri.starts_with("file:///") && uri.ends_with("/my%20charts/cycle.yaml"),
        "{uri}"
    );
}
