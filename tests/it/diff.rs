//! `chartseq diff` end to end: the fixture pairs under `fixtures/diff/` in every format, a
//! chart at a git revision in a scratch repository, and the exit codes (0 same, 1 different,
//! 2 could not run).

use std::path::Path;
use std::process::Command;

use crate::{chartseq, fixture, run, snapshot_settings, tool};

/// The fixture pairs (`old/` and `new/` charts) and whether their plans differ.
const PAIRS: [(&str, bool); 5] = [
    ("edge-added", true),
    ("group-renamed", true),
    ("identical", false),
    ("readiness-changed", true),
    ("subchart-dependency-removed", true),
];

fn diff_pair(helm: &Path, name: &str, args: &[&str]) -> (i32, String, String) {
    run(chartseq()
        .arg("diff")
        .arg(format!("fixtures/diff/{name}/old"))
        .arg(format!("fixtures/diff/{name}/new"))
        .args(args)
        .env("CHARTSEQ_HELM", helm))
}

#[test]
fn diff_fixture_pairs_in_every_format() {
    let Some(helm) = tool("helm") else {
        return;
    };
    let settings = snapshot_settings();
    for (name, differs) in PAIRS {
        let expected = i32::from(differs);
        let (code, text, err) = diff_pair(&helm, name, &[]);
        assert_eq!(code, expected, "{name}: {text}{err}");
        assert!(err.is_empty(), "{name}: {err}");
        let (code, json, err) = diff_pair(&helm, name, &["--format", "json"]);
        assert_eq!(code, expected, "{name}: {err}");
        let parsed: serde_json::Value = serde_json::from_str(&json).expect("diff JSON parses");
        assert_eq!(parsed["version"], 1);
        assert_eq!(parsed["same"], !differs, "{name}");
        let (code, markdown, err) = diff_pair(&helm, name, &["--format", "markdown"]);
        assert_eq!(code, expected, "{name}: {err}");
        // The github format: annotations on stdout, the Markdown appended to the summary.
        let dir = tempfile::tempdir().expect("tempdir");
        let summary = dir.path().join("summary.md");
        std::fs::write(&summary, "previous step\n").expect("write");
        let (code, github, err) = run(chartseq()
            .arg("diff")
            .arg(format!("fixtures/diff/{name}/old"))
            .arg(format!("fixtures/diff/{name}/new"))
            .args(["--format", "github"])
            .env("CHARTSEQ_HELM", &helm)
            .env("GITHUB_STEP_SUMMARY", &summary));
        assert_eq!(code, expected, "{name}: {err}");
        let appended = std::fs::read_to_string(&summary).expect("summary");
        assert_eq!(
            appended.strip_prefix("previous step\n"),
            Some(markdown.as_str()),
            "{name}: the step summary is the Markdown report, appended"
        );
        settings.bind(|| {
            insta::assert_snapshot!(format!("diff_text_{name}"), text);
            insta::assert_snapshot!(format!("diff_json_{name}"), json);
            insta::assert_snapshot!(format!("diff_markdown_{name}"), markdown);
            insta::assert_snapshot!(format!("diff_github_{name}"), github);
        });
    }
}

#[test]
fn diff_reports_what_each_pair_changes() {
    let Some(helm) = tool("helm") else {
        return;
    };
    let json = |name: &str| -> serde_json::Value {
        let (_, out, err) = diff_pair(&helm, name, &["--format", "json"]);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{name}: {e}: {out}{err}"))
    };
    let d = json("group-renamed");
    let moved: Vec<(&str, &str)> = d["moved"]
        .as_array()
        .expect("moved")
        .iter()
        .map(|m| {
            (
                m["resource"]["name"].as_str().unwrap_or_default(),
                m["to"]["group"].as_str().unwrap_or("(unsequenced)"),
            )
        })
        .collect();
    assert_eq!(
        moved,
        [
            ("db-config", "database"),
            ("db", "database"),
            ("worker", "(unsequenced)")
        ]
    );
    assert_eq!(d["findings"]["new"][0]["code"], "CS101");
    let d = json("edge-added");
    assert_eq!(d["resources"]["added"][0]["name"], "worker-config");
    let gained: Vec<(&str, &str)> = d["order"]["gained"]
        .as_array()
        .expect("gained")
        .iter()
        .map(|p| {
            (
                p["before"]["name"].as_str().unwrap_or_default(),
                p["after"]["name"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    // Only between resources present in both: worker-config is new, so it gains no order.
    assert_eq!(gained, [("app", "worker")]);
    let d = json("subchart-dependency-removed");
    assert_eq!(d["order"]["lost"][0]["before"]["name"], "db");
    assert_eq!(d["order"]["lost"][0]["after"]["name"], "api");
    assert_eq!(d["order"]["gained"], serde_json::json!([]));
    let d = json("readiness-changed");
    assert_eq!(d["resources"]["removed"][0]["name"], "legacy");
    assert_eq!(d["waits"][0]["from"]["engine"], "kstatus");
    assert_eq!(d["waits"][0]["to"]["engine"], "custom");
    assert_eq!(d["waits"][1]["from"]["success"][0], "{.succeeded} == 1");
    assert_eq!(d["waits"][1]["to"]["success"][0], "{.succeeded} >= 1");
}

fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn copy_dir(from: &Path, to: &Path) {
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

#[test]
fn diff_reads_a_chart_at_a_git_revision() {
    let Some(helm) = tool("helm") else {
        return;
    };
    let repo = tempfile::tempdir().expect("tempdir");
    let top = repo.path();
    git(top, &["init", "-q", "-b", "main"]);
    std::fs::copy(fixture("diff/.chartseq.toml"), top.join(".chartseq.toml")).expect("config");
    copy_dir(&fixture("diff/group-renamed/old"), &top.join("chart"));
    git(top, &["add", "-A"]);
    git(top, &["commit", "-q", "-m", "old"]);
    std::fs::remove_dir_all(top.join("chart")).expect("rm");
    copy_dir(&fixture("diff/group-renamed/new"), &top.join("chart"));
    git(top, &["add", "-A"]);
    git(top, &["commit", "-q", "-m", "new"]);
    let diff = |args: &[&str]| {
        run(chartseq()
            .current_dir(top)
            .arg("diff")
            .args(args)
            .env("CHARTSEQ_HELM", &helm))
    };
    // The revision against the working tree: what the fixture pair reports.
    let (code, out, err) = diff(&["HEAD~1:chart", "chart"]);
    assert_eq!(code, 1, "{out}{err}");
    let (_, pair, _) = diff_pair(&helm, "group-renamed", &[]);
    let body = |text: &str| text.lines().skip(2).collect::<Vec<_>>().join("\n");
    assert_eq!(
        body(&out).replace("chart/templates", "T"),
        body(&pair).replace("fixtures/diff/group-renamed/new/templates", "T"),
    );
    assert!(out.starts_with("--- HEAD~1:chart\n+++ chart\n"), "{out}");
    // Findings on the revision's side name it, not the temporary checkout.
    let (code, out, err) = diff(&["HEAD:chart", "HEAD~1:chart", "--format", "json"]);
    assert_eq!(code, 1, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        json["findings"]["fixed"][0]["location"]["file"],
        "HEAD:chart/templates/worker.yaml"
    );
    // The same revision on both sides, and a revision equal to the working tree.
    let (code, out, err) = diff(&["HEAD:chart", "chart"]);
    assert_eq!(code, 0, "{out}{err}");
    // From a subdirectory, the path is relative to it (as every other target is).
    let (code, out, err) = run(chartseq()
        .current_dir(top.join("chart"))
        .args(["diff", "HEAD~1:.", "."])
        .env("CHARTSEQ_HELM", &helm));
    assert_eq!(code, 1, "{out}{err}");
    // A revision or a path that does not exist: exit 2, saying which.
    let (code, _, err) = diff(&["nope:chart", "chart"]);
    assert_eq!(code, 2);
    assert!(err.contains("`nope` is not a git revision"), "{err}");
    let (code, _, err) = diff(&["HEAD~1:charts/web", "chart"]);
    assert_eq!(code, 2);
    assert!(err.contains("no `charts/web` at revision HEAD~1"), "{err}");
    // An existing path with a `:` in its name is a path, not a revision.
    copy_dir(&top.join("chart"), &top.join("v1:chart"));
    let (code, out, err) = diff(&["v1:chart", "chart"]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn diff_exit_codes() {
    // Rendered streams need no helm.
    let stream = "fixtures/charts/diamond.rendered.yaml";
    let (code, out, err) = run(chartseq().args(["diff", stream, stream]));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("no differences"), "{out}");
    let (code, out, err) = run(chartseq().args([
        "diff",
        stream,
        "fixtures/charts/demotions.rendered.yaml",
        "--format",
        "json",
    ]));
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&out).expect("json")["same"],
        false
    );
    let (code, _, err) = run(chartseq().args(["diff", stream, "fixtures/diff/no-such-chart"]));
    assert_eq!(code, 2);
    assert!(
        err.contains("fixtures/diff/no-such-chart: no such chart, stream or file"),
        "{err}"
    );
    let (code, _, err) = run(chartseq().args(["diff", "-", "-"]));
    assert_eq!(code, 2);
    assert!(err.contains("cannot both be standard input"), "{err}");
    let (code, _, err) = run(chartseq().args(["diff", stream]));
    assert_eq!(code, 2, "{err}");
}
