//! Where findings point, wherever lint runs: every path is relative to the current directory
//! (SARIF and GitHub annotations: to the repository root) for every way of naming the chart;
//! every SARIF result has a location and a guessed line is never shown as exact; no input is
//! a failure, not a clean result; input bytes never reach a terminal raw.
//!
//! The chart `fixtures/paths/mychart` has `helm.sh/depends-on/resource-groups` on line 8,
//! value at column 41, below a helper that renders three lines: counted in the rendered
//! document, the line would be 10.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{chartseq, fixture, root, run, tool};

const SARIF_SCHEMA: &str = "fixtures/schemas/sarif-schema-2.1.0.json";
/// `templates/configmap.yaml:8:41`, where CS101 points in the chart.
const LINE: u32 = 8;
const COLUMN: u32 = 41;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

fn git(dir: &Path, args: &[&str]) {
    let (code, out, err) = run(Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args));
    assert_eq!(code, 0, "git {args:?}: {out}{err}");
}

/// A scratch git repository; `chart_at` is where `mychart` goes in it (`""`: the root).
fn repo_with_chart(chart_at: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    // The repository's own path resolved, so that the test compares what the tool sees.
    let top = dir.path().canonicalize().expect("canonical");
    git(&top, &["init", "-q", "-b", "main"]);
    copy_dir(&fixture("paths/mychart"), &top.join(chart_at));
    git(&top, &["add", "-A"]);
    git(&top, &["commit", "-q", "-m", "chart"]);
    dir
}

/// `chartseq lint TARGET --format FORMAT` run in `cwd` (with `$PWD` as a shell sets it).
fn lint_in(cwd: &Path, target: &str, format: &str, helm: &Path) -> (i32, String, String) {
    run(chartseq()
        .current_dir(cwd)
        .env("PWD", cwd)
        .args(["lint", target, "--format", format, "--helm"])
        .arg(helm))
}

/// Validates with the schema and sarif-multitool; `allowed` rule ids are advice accepted here
/// (SARIF2017 asks for a region, which a file-level result deliberately has not).
fn validate_sarif_allowing(text: &str, allowed: &[&str]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("out.sarif");
    std::fs::write(&path, text).expect("write");
    if let Some(checker) = tool("check_jsonschema") {
        let (code, out, err) = run(Command::new(checker)
            .arg("--schemafile")
            .arg(root().join(SARIF_SCHEMA))
            .arg(&path));
        assert_eq!(code, 0, "SARIF fails the 2.1.0 schema:\n{out}{err}\n{text}");
    }
    if let Some(multitool) = tool("sarif_multitool") {
        let log = dir.path().join("validation.sarif");
        let (code, out, err) = run(Command::new(multitool)
            .arg("validate")
            .arg(&path)
            .args(["--rule-kind", "Sarif;Gh", "--level", "Error;Warning"])
            .args(["--log", "ForceOverwrite", "-o"])
            .arg(&log));
        assert_eq!(code, 0, "sarif-multitool: {out}{err}");
        let log: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&log).expect("log")).expect("json");
        let problems: Vec<&serde_json::Value> = log["runs"][0]["results"]
            .as_array()
            .expect("results")
            .iter()
            .filter(|r| !allowed.contains(&r["ruleId"].as_str().unwrap_or("")))
            .collect();
        assert!(
            problems.is_empty(),
            "sarif-multitool: {problems:#?}\n{text}"
        );
    }
}

fn validate_sarif(text: &str) {
    validate_sarif_allowing(text, &[]);
}

/// The CS101 result of a SARIF log.
fn sarif_cs101(text: &str) -> serde_json::Value {
    let sarif: serde_json::Value = serde_json::from_str(text).expect("SARIF is JSON");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert!(
        results
            .iter()
            .all(|r| r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].is_string()),
        "every result has a location: {text}"
    );
    results
        .iter()
        .find(|r| r["ruleId"] == "CS101")
        .expect("CS101")
        .clone()
}

/// Every format, run in `cwd` on `target`, points at `shown` (relative to `cwd`) and, for
/// SARIF and GitHub, at `in_repo` (relative to the repository root).
fn assert_paths(cwd: &Path, target: &str, shown: &str, in_repo: &str, helm: &Path) {
    let context = format!("`chartseq lint {target}` in {}", cwd.display());
    let (code, out, err) = lint_in(cwd, target, "concise", helm);
    assert_eq!(code, 1, "{context}: {out}{err}");
    assert!(
        out.lines()
            .any(|l| l.starts_with(&format!("{shown}:{LINE}:{COLUMN}: CS101 [error]"))),
        "{context}, concise: {out}"
    );
    let (_, out, _) = lint_in(cwd, target, "human", helm);
    assert!(
        out.contains(&format!("┌─ {shown}:{LINE}:{COLUMN}\n")),
        "{context}, human: {out}"
    );
    let (_, out, _) = lint_in(cwd, target, "json", helm);
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let cs101 = json["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .find(|d| d["code"] == "CS101")
        .expect("CS101")
        .clone();
    assert_eq!(cs101["location"]["file"], shown, "{context}, json: {out}");
    assert_eq!(cs101["location"]["line"], LINE, "{context}, json: {out}");
    assert_eq!(cs101["location"]["exact"], true, "{context}, json: {out}");
    let rendered = cs101["rendered"]["file"].as_str().expect("rendered file");
    assert!(
        rendered.ends_with("(helm template)") && !rendered.starts_with(' '),
        "{context}, json: {rendered}"
    );
    let (_, out, _) = lint_in(cwd, target, "sarif", helm);
    validate_sarif(&out);
    let result = sarif_cs101(&out);
    let physical = &result["locations"][0]["physicalLocation"];
    assert_eq!(
        physical["artifactLocation"],
        serde_json::json!({ "uri": in_repo, "uriBaseId": "%SRCROOT%" }),
        "{context}, sarif: {out}"
    );
    assert_eq!(physical["region"]["startLine"], LINE, "{context}, sarif");
    let (_, out, _) = lint_in(cwd, target, "github", helm);
    assert!(
        out.lines()
            .any(|l| l.starts_with(&format!("::error file={in_repo},line={LINE},col={COLUMN},"))),
        "{context}, github: {out}"
    );
    for format in ["concise", "human", "json", "github", "sarif"] {
        let (_, out, _) = lint_in(cwd, target, format, helm);
        // No path that starts at `/templates` (a chart root shown as the empty string).
        let rooted = out
            .match_indices("/templates/configmap.yaml")
            .any(|(i, _)| {
                out[..i]
                    .chars()
                    .next_back()
                    .is_none_or(|c| " =\"\n/:".contains(c))
            });
        assert!(
            !rooted,
            "{context}, {format}: a path from the file system root: {out}"
        );
        assert!(
            !out.contains("file:///templates"),
            "{context}, {format}: {out}"
        );
    }
}

#[test]
fn paths_are_relative_to_the_current_directory_however_the_chart_is_named() {
    let Some(helm) = tool("helm") else {
        return;
    };
    let repo = repo_with_chart("charts/mychart");
    let top = repo.path().canonicalize().expect("canonical");
    let chart = top.join("charts/mychart");
    let in_repo = "charts/mychart/templates/configmap.yaml";
    // Inside the chart, named every way.
    let absolute = chart.to_string_lossy().into_owned();
    for target in [".", "./", absolute.as_str(), "../mychart"] {
        assert_paths(&chart, target, "templates/configmap.yaml", in_repo, &helm);
    }
    // From a directory inside the chart, the chart is `..`.
    assert_paths(
        &chart.join("templates"),
        "..",
        "configmap.yaml",
        in_repo,
        &helm,
    );
    // From the repository root.
    assert_paths(&top, "charts/mychart", in_repo, in_repo, &helm);
    assert_paths(&top, "./charts/mychart/", in_repo, in_repo, &helm);
    // Through a symbolic link: shown as named; the repository's file for code scanning.
    std::os::unix::fs::symlink("charts/mychart", top.join("linked")).expect("symlink");
    assert_paths(
        &top,
        "linked",
        "linked/templates/configmap.yaml",
        in_repo,
        &helm,
    );
    // Inside the linked directory (the shell's `$PWD` names the link).
    let linked = top.join("linked");
    assert_paths(&linked, ".", "templates/configmap.yaml", in_repo, &helm);
    let through_link = linked.to_string_lossy().into_owned();
    assert_paths(
        &linked,
        &through_link,
        "templates/configmap.yaml",
        in_repo,
        &helm,
    );
}

/// The chart is the repository (pre-commit and the action on a chart repository).
#[test]
fn a_chart_at_the_repository_root_through_action_and_pre_commit() {
    let Some(helm) = tool("helm") else {
        return;
    };
    let repo = repo_with_chart("");
    let top = repo.path().canonicalize().expect("canonical");
    assert_paths(
        &top,
        ".",
        "templates/configmap.yaml",
        "templates/configmap.yaml",
        &helm,
    );

    // The action's script, in a workspace that is the chart.
    let work = tempfile::tempdir().expect("tempdir");
    let sarif = work.path().join("chartseq.sarif");
    let (code, out, err) = run(Command::new("bash")
        .current_dir(&top)
        .arg(root().join("scripts/action-lint.sh"))
        .env("CHARTSEQ", env!("CARGO_BIN_EXE_chartseq"))
        .env("CHARTSEQ_HELM", &helm)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_WORKSPACE", &top)
        .env("GITHUB_STEP_SUMMARY", work.path().join("summary.md"))
        .env("GITHUB_OUTPUT", work.path().join("output"))
        .env("INPUT_FAIL_ON", "error")
        .env("INPUT_SARIF", &sarif)
        .env_remove("INPUT_CHARTS"));
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.lines().any(|l| l.starts_with(&format!(
            "::error file=templates/configmap.yaml,line={LINE},col={COLUMN},"
        ))),
        "action: {out}{err}"
    );
    assert!(!out.contains("file=/"), "action: {out}");
    let text = std::fs::read_to_string(&sarif).expect("the action writes SARIF");
    validate_sarif(&text);
    assert_eq!(
        sarif_cs101(&text)["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "templates/configmap.yaml"
    );

    // pre-commit, with the chartseq built for these tests on PATH.
    let Some(pre_commit) = tool("pre_commit") else {
        return;
    };
    let home = tempfile::tempdir().expect("tempdir");
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_chartseq"));
    let path = format!(
        "{}:{}",
        bin.parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let (code, out, err) = run(Command::new(pre_commit)
        .current_dir(&top)
        .env("PRE_COMMIT_HOME", home.path())
        .env("PATH", path)
        .env("CHARTSEQ_HELM", &helm)
        .args(["try-repo"])
        .arg(root())
        .arg("chartseq-lint-system")
        .args(["--files", "templates/configmap.yaml", "Chart.yaml"]));
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(&format!(
            "\ntemplates/configmap.yaml:{LINE}:{COLUMN}: CS101 [error]"
        )),
        "pre-commit: {out}{err}"
    );
    assert!(
        !out.contains("/templates/configmap.yaml"),
        "pre-commit: {out}"
    );
}

/// `helm template` of the chart, as a stream a pipeline would feed on standard input.
fn rendered() -> Vec<u8> {
    std::fs::read(fixture("paths/mychart.rendered.yaml")).expect("rendered fixture")
}

fn lint_stdin(args: &[&str], input: &[u8]) -> (i32, String, String) {
    let mut child = chartseq()
        .arg("lint")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn sarif_from_standard_input_is_uploadable_and_honest_about_guessed_lines() {
    // Without the chart: the stream itself is the place (exact), the template line a guess.
    let (code, out, err) = lint_stdin(&["-", "--format", "sarif"], &rendered());
    assert_eq!(code, 1, "{err}");
    validate_sarif(&out);
    let sarif: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(sarif["runs"][0]["artifacts"][0]["location"]["uri"], "stdin");
    let result = sarif_cs101(&out);
    let physical = &result["locations"][0]["physicalLocation"];
    assert_eq!(physical["artifactLocation"]["uri"], "stdin", "{out}");
    // The line of the annotation in the stream itself.
    let stream = String::from_utf8(rendered()).expect("text");
    let stream_line = stream
        .lines()
        .position(|l| l.contains("depends-on/resource-groups"))
        .expect("annotation")
        + 1;
    assert_eq!(physical["region"]["startLine"], stream_line, "{out}");
    let message = result["message"]["text"].as_str().expect("message");
    assert!(
        message.contains("counted in the rendered document"),
        "the guess is said: {message}"
    );
    let guess = &result["relatedLocations"]
        .as_array()
        .expect("related")
        .iter()
        .find(|r| {
            r["physicalLocation"]["artifactLocation"]["uri"] == "mychart/templates/configmap.yaml"
        })
        .expect("the guessed template")["physicalLocation"];
    assert!(
        guess["region"].is_null(),
        "no guessed line as a region: {guess}"
    );

    // The other formats do not pass the guess off as exact either.
    let (_, out, _) = lint_stdin(&["-", "--format", "json"], &rendered());
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let cs101 = json["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .find(|d| d["code"] == "CS101")
        .expect("CS101")
        .clone();
    assert_eq!(cs101["location"]["exact"], false, "{out}");
    assert_ne!(
        cs101["location"]["line"], LINE,
        "the guess is off here: {out}"
    );
    let (_, out, _) = lint_stdin(&["-", "--format", "concise"], &rendered());
    assert!(
        out.lines()
            .any(|l| l.contains("CS101") && l.ends_with("(line counted in the rendered document)")),
        "{out}"
    );
    let (_, out, _) = lint_stdin(&["-"], &rendered());
    assert!(out.contains("near line"), "{out}");

    // With the chart on disk the line is the template's, exact.
    let (code, out, err) = lint_stdin(
        &[
            "-",
            "--chart",
            "fixtures/paths/mychart",
            "--format",
            "sarif",
        ],
        &rendered(),
    );
    assert_eq!(code, 1, "{err}");
    validate_sarif(&out);
    let result = sarif_cs101(&out);
    let physical = &result["locations"][0]["physicalLocation"];
    assert_eq!(
        physical["artifactLocation"]["uri"],
        "fixtures/paths/mychart/templates/configmap.yaml"
    );
    assert_eq!(physical["region"]["startLine"], LINE);
    assert_eq!(physical["region"]["startColumn"], COLUMN);
    assert!(
        !result["message"]["text"]
            .as_str()
            .expect("message")
            .contains("counted in the rendered document")
    );
    let (_, out, _) = lint_stdin(
        &["-", "--chart", "fixtures/paths/mychart", "--format", "json"],
        &rendered(),
    );
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(json["diagnostics"][0]["location"]["exact"], true, "{out}");
}

#[test]
fn no_input_is_a_failure_not_a_clean_result() {
    let dir = tempfile::tempdir().expect("tempdir");
    let empty = dir.path().join("empty.yaml");
    std::fs::write(&empty, "").expect("write");
    let comments = dir.path().join("comments.yaml");
    std::fs::write(
        &comments,
        "---\n# Source: x/templates/a.yaml\n# nothing rendered\n",
    )
    .expect("write");
    let binary = dir.path().join("image.yaml");
    std::fs::write(&binary, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").expect("write");
    let not_a_chart = dir.path().join("docs");
    std::fs::create_dir(&not_a_chart).expect("mkdir");

    for input in [&b""[..], b"\n\n", b"---\n"] {
        let (code, out, err) = lint_stdin(&["-"], input);
        assert_eq!(code, 2, "empty standard input: {out}{err}");
        assert!(err.contains("no documents in input"), "{err}");
    }
    let (code, _, err) = run(chartseq()
        .args(["lint", "-"])
        .stdin(std::fs::File::open("/dev/null").expect("/dev/null")));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no documents in input"), "{err}");
    // Only comments is what a chart with every template disabled renders: a clean result.
    let (code, out, err) = run(chartseq().arg("lint").arg(&comments));
    assert_eq!(code, 0, "{out}{err}");
    for (path, says) in [
        (&empty, "no documents in input"),
        (&binary, "a binary file"),
        (&not_a_chart, "no Chart.yaml in"),
    ] {
        for command in ["lint", "plan"] {
            let (code, out, err) = run(chartseq().arg(command).arg(path));
            assert_eq!(code, 2, "{command} {}: {out}{err}", path.display());
            assert!(err.contains(says), "{command} {}: {err}", path.display());
            assert!(!out.contains("CS000"), "{out}");
            assert!(!err.contains("Is a directory"), "{err}");
        }
    }

    // A glob over a charts directory: what is not a chart is skipped and named.
    let readme = dir.path().join("README.md");
    std::fs::write(&readme, "# charts\n").expect("write");
    let (code, out, err) = run(chartseq()
        .args(["lint", "--format", "concise"])
        .arg(&not_a_chart)
        .arg(&readme)
        .arg("fixtures/rules/CS101/missing.yaml"));
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("CS101"), "{out}");
    assert!(
        err.contains("skipped") && err.contains("docs: not a chart (no Chart.yaml)"),
        "{err}"
    );
    assert!(err.contains("README.md: not a chart"), "{err}");
    // Nothing left to lint is a failure.
    let (code, _, err) = run(chartseq().args(["lint"]).arg(&not_a_chart).arg(&readme));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no chart among the targets"), "{err}");
}

#[test]
fn input_bytes_never_reach_the_terminal_raw() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stream = dir.path().join("evil.yaml");
    // ESC sequences that would retitle the window and clear the screen, in a name, a group
    // (decoded by YAML's double quotes and JSON's escapes), and raw in a line that does not
    // parse.
    std::fs::write(
        &stream,
        b"---\n# Source: app/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"evil\\e]0;pwned\\a\"\n  annotations:\n    helm.sh/resource-group: \"g\\e[31m\"\n    helm.sh/depends-on/resource-groups: '[\"db\\u001b[2J\"]'\n---\n# Source: app/templates/b.yaml\nkind: [\x1b[2J\n",
    )
    .expect("write");
    for format in ["human", "concise", "github"] {
        let (code, out, err) = run(chartseq()
            .arg("lint")
            .arg(&stream)
            .args(["--format", format, "--color", "never"]));
        assert_eq!(code, 1, "{format}: {out}{err}");
        assert!(
            !out.contains('\u{1b}') && !out.contains('\u{7}') && !err.contains('\u{1b}'),
            "{format}: raw control characters: {out:?}"
        );
        assert!(out.contains("\\x1b"), "{format}: shown escaped: {out}");
    }
    // Colour still works: only the input is escaped.
    let (_, out, _) = run(chartseq()
        .arg("lint")
        .arg(&stream)
        .args(["--color", "always"]));
    assert!(out.contains("\u{1b}[") && out.contains("\\x1b"), "{out:?}");
    let (_, out, err) = run(chartseq().arg("plan").arg(&stream));
    assert!(
        !out.contains('\u{1b}') && !err.contains('\u{1b}') && !out.contains('\u{7}'),
        "plan: {out:?}{err:?}"
    );
    assert!(out.contains("evil\\x1b]0;pwned\\x07"), "plan: {out}");
}

/// The release profile ships a binary without debug information or symbols (cargo install,
/// the pre-commit hook and the action build it).
#[test]
fn release_binary_is_stripped() {
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml"))
            .expect("TOML");
    let release = &manifest["profile"]["release"];
    assert_eq!(
        release.get("strip").and_then(toml::Value::as_str),
        Some("symbols")
    );
    assert_eq!(
        release.get("debug").and_then(toml::Value::as_bool),
        Some(false)
    );
}

/// A packaged chart has no template file on disk: its results point at the archive.
#[test]
fn sarif_of_a_packaged_chart_points_at_the_archive() {
    let Some(helm) = tool("helm") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, out, err) = run(Command::new(&helm)
        .current_dir(dir.path())
        .arg("package")
        .arg(fixture("paths/mychart")));
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = lint_in(dir.path(), "mychart-0.1.0.tgz", "sarif", &helm);
    assert_eq!(code, 1, "{err}");
    validate_sarif_allowing(&out, &["SARIF2017"]);
    assert_eq!(
        sarif_cs101(&out)["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "mychart-0.1.0.tgz"
    );
    let (_, out, _) = lint_in(dir.path(), "mychart-0.1.0.tgz", "github", &helm);
    assert!(
        out.lines()
            .any(|l| l.starts_with("::error file=mychart-0.1.0.tgz,title=CS101")),
        "{out}"
    );
}
