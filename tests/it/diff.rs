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

/// Runs `scripts/action-diff.sh` as the action does, in a simulated pull-request
/// environment: (exit code, stdout, step summary, comment file, `$GITHUB_OUTPUT`).
fn run_action_diff(
    repo: &Path,
    helm: &Path,
    inputs: &[(&str, &str)],
) -> (i32, String, String, String, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let summary = dir.path().join("summary.md");
    let output = dir.path().join("output");
    let comment = dir.path().join("pr/comment.md");
    let mut cmd = Command::new("bash");
    // The runner's environment only: nothing from the one the tests run in.
    for (key, _) in std::env::vars_os() {
        let key_text = key.to_string_lossy();
        if key_text.starts_with("GITHUB_") || key_text.starts_with("INPUT_") {
            cmd.env_remove(&key);
        }
    }
    cmd.current_dir(repo)
        .arg(crate::root().join("scripts/action-diff.sh"))
        .env("CHARTSEQ", env!("CARGO_BIN_EXE_chartseq"))
        .env("CHARTSEQ_HELM", helm)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_WORKSPACE", repo)
        .env("GITHUB_BASE_REF", "main")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &output)
        .env("INPUT_COMMENT_FILE", &comment);
    for (key, value) in inputs {
        cmd.env(key, value);
    }
    let (code, stdout, stderr) = run(&mut cmd);
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    (
        code,
        format!("{stdout}{stderr}"),
        read(&summary),
        read(&comment),
        read(&output),
    )
}

#[test]
fn action_diff_mode_summarises_changed_charts_against_the_base_branch() {
    let Some(helm) = tool("helm") else {
        return;
    };
    if let Some(shellcheck) = tool("shellcheck") {
        let (code, out, err) = run(Command::new(shellcheck)
            .current_dir(crate::root())
            .arg("scripts/action-diff.sh"));
        assert_eq!(code, 0, "shellcheck: {out}{err}");
    }
    // main: two charts; the pull request changes one, adds one, leaves one alone.
    let repo = tempfile::tempdir().expect("tempdir");
    let top = repo.path();
    git(top, &["init", "-q", "-b", "main"]);
    std::fs::copy(fixture("diff/.chartseq.toml"), top.join(".chartseq.toml")).expect("config");
    copy_dir(&fixture("diff/group-renamed/old"), &top.join("charts/web"));
    copy_dir(&fixture("diff/identical/old"), &top.join("charts/same"));
    git(top, &["add", "-A"]);
    git(top, &["commit", "-q", "-m", "main"]);
    git(top, &["checkout", "-q", "-b", "pr"]);
    std::fs::remove_dir_all(top.join("charts/web")).expect("rm");
    copy_dir(&fixture("diff/group-renamed/new"), &top.join("charts/web"));
    copy_dir(&fixture("diff/edge-added/new"), &top.join("charts/fresh"));
    git(top, &["add", "-A"]);
    git(top, &["commit", "-q", "-m", "pr"]);

    let (code, stdout, summary, comment, output) = run_action_diff(top, &helm, &[]);
    assert_eq!(code, 0, "{stdout}");
    assert!(
        summary.starts_with("## chartseq diff against main (merge base "),
        "{summary}"
    );
    assert!(summary.contains("### charts/web\n\n`"), "{summary}");
    assert!(summary.contains(":charts/web` → `charts/web`"), "{summary}");
    assert!(
        summary.contains("**3 moved, 1 order gained, 1 finding new**"),
        "{summary}"
    );
    assert!(summary.contains("```mermaid\nflowchart TD\n"), "{summary}");
    assert!(
        summary.contains("### charts/fresh\n\nA new chart: nothing to compare it with at main."),
        "{summary}"
    );
    assert!(!summary.contains("charts/same"), "unchanged: {summary}");
    // One heading per chart: the report's own title is dropped.
    assert_eq!(summary.matches("## chartseq diff").count(), 1, "{summary}");
    assert_eq!(comment, summary);
    assert!(output.contains("comment-file="), "{output}");
    // The new finding is annotated on its template line; the counts as a notice.
    assert!(
        stdout.lines().any(|l| l
            .starts_with("::error file=charts/web/templates/worker.yaml,line=7,col=41,")
            && l.contains("title=CS101 missing-resource-group::")),
        "{stdout}"
    );
    assert!(
        stdout.contains("::notice title=chartseq diff::"),
        "{stdout}"
    );

    // Chosen charts, an uncommitted change, no comment file.
    std::fs::write(
        top.join("charts/same/templates/extra.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n",
    )
    .expect("write");
    let (code, stdout, summary, comment, output) = run_action_diff(
        top,
        &helm,
        &[("INPUT_CHARTS", "charts/same"), ("INPUT_COMMENT_FILE", "")],
    );
    assert_eq!(code, 0, "{stdout}");
    assert!(summary.contains("**1 added**"), "{summary}");
    assert!(!summary.contains("charts/web"), "{summary}");
    assert!(comment.is_empty() && !output.contains("comment-file="));

    // A base that does not exist: the step fails, saying why.
    let (code, stdout, _, _, _) = run_action_diff(top, &helm, &[("INPUT_BASE", "no-such-branch")]);
    assert_eq!(code, 2);
    assert!(
        stdout.contains("::error title=chartseq::no merge base with no-such-branch"),
        "{stdout}"
    );
}

/// 2,000 config maps, half of them moved into a new group: the group now comes before the
/// other half, a million (before, after) pairs. Every format describes that within a memory
/// cap, and the JSON lists the first pairs, the totals and one step-level change whose two
/// resource sets are listed once: its size grows with the resources, not the pairs.
#[test]
fn a_million_order_pairs_stay_small_and_within_a_memory_cap() {
    use std::fmt::Write as _;
    const N: usize = 2000;
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut old, mut new) = (String::new(), String::new());
    for i in 0..N {
        let head = format!(
            "---\n# Source: c/templates/cm{i}.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i:04}\n"
        );
        old.push_str(&head);
        new.push_str(&head);
        if i < N / 2 {
            writeln!(new, "  annotations:\n    helm.sh/resource-group: moved").expect("write");
        }
    }
    let (old_path, new_path) = (dir.path().join("old.yaml"), dir.path().join("new.yaml"));
    std::fs::write(&old_path, old).expect("write");
    std::fs::write(&new_path, new).expect("write");
    let diff = |format: &str| {
        let mut cmd = chartseq();
        cmd.arg("diff")
            .arg(&old_path)
            .arg(&new_path)
            .args(["--format", format]);
        let (code, out, err) = run(&mut crate::memory::capped(&cmd, 512));
        assert_eq!(code, 1, "{format}: exit {code}: {err}");
        out
    };
    let json = diff("json");
    assert!(
        json.len() < N * 2048,
        "{} bytes of JSON for {N} resources",
        json.len()
    );
    let d: serde_json::Value = serde_json::from_str(&json).expect("diff JSON parses");
    let order = &d["order"];
    assert_eq!(order["gained"].as_array().map(Vec::len), Some(1000));
    assert_eq!(order["lost"], serde_json::json!([]));
    assert_eq!(order["truncated"], true);
    assert_eq!(
        order["pairs"],
        serde_json::json!({"gained": 1_000_000, "lost": 0})
    );
    assert_eq!(
        order["step_changes"],
        serde_json::json!({"gained": 1, "lost": 0})
    );
    let step = &order["steps"]["gained"][0];
    assert_eq!(step["pairs"], 1_000_000);
    assert_eq!(step["before_step"]["group"], "moved");
    assert_eq!(step["after_step"]["group"], serde_json::Value::Null);
    let set = |i: &serde_json::Value| -> Vec<String> {
        let i = usize::try_from(i.as_u64().expect("an index")).expect("small");
        order["sets"][i]
            .as_array()
            .expect("a set")
            .iter()
            .map(|r| r["name"].as_str().expect("a name").to_owned())
            .collect()
    };
    let (before, after) = (set(&step["before"]), set(&step["after"]));
    assert_eq!(before.len(), N / 2);
    assert_eq!(after.len(), N / 2);
    assert!(before.iter().all(|n| n.as_str() < "cm-1000"));
    assert!(after.iter().all(|n| n.as_str() >= "cm-1000"));
    assert_eq!(order["sets"].as_array().map(Vec::len), Some(2));
    // The first pair listed is the first of the step-level change.
    assert_eq!(order["gained"][0]["before"]["name"], before[0].as_str());
    assert_eq!(order["gained"][0]["after"]["name"], after[0].as_str());
    // The other formats count the same pairs, in the same memory.
    assert!(
        diff("text").contains("1000000 orders gained"),
        "the text summary counts every pair"
    );
    assert!(diff("markdown").contains("1000000 orders gained"));
}

/// CS203 is one finding of the chart at its `apiVersion` line: when the first annotated
/// resource changes between two versions of a v2 chart, `diff` shows it neither new nor
/// fixed.
#[test]
fn cs203_stays_put_when_the_first_sequenced_resource_changes() {
    let Some(helm) = tool("helm") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let chart = |side: &str, grouped: &str| {
        let at = dir.path().join(side);
        std::fs::create_dir_all(at.join("templates")).expect("mkdir");
        std::fs::write(
            at.join("Chart.yaml"),
            "apiVersion: v2\nname: app\nversion: 0.1.0\n",
        )
        .expect("write");
        for name in ["a", "b"] {
            let annotations = if name == grouped {
                "  annotations:\n    helm.sh/resource-group: g\n"
            } else {
                ""
            };
            std::fs::write(
                at.join(format!("templates/{name}.yaml")),
                format!(
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n{annotations}"
                ),
            )
            .expect("write");
        }
        at
    };
    let old = chart("old", "a");
    let new = chart("new", "b");
    let (_, out, err) = run(chartseq()
        .arg("diff")
        .arg(&old)
        .arg(&new)
        .args(["--format", "json"])
        .env("CHARTSEQ_HELM", &helm));
    let json: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|_| panic!("{out}{err}"));
    for side in ["new", "fixed"] {
        let codes: Vec<&serde_json::Value> = json["findings"][side]
            .as_array()
            .expect("findings")
            .iter()
            .map(|f| &f["code"])
            .collect();
        assert!(
            !codes.contains(&&serde_json::json!("CS203")),
            "{side}: {out}"
        );
    }
}
