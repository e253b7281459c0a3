//! `chartseq lint` end to end: rule fixtures carry their expectations (`# ~ CS101` marks the
//! line where a finding starts; a valid fixture starts with `# should not generate
//! diagnostics`), snapshots check the wording of every format, and lint agrees with plan.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::{chartseq, fixture, root, run, snapshot_settings};

/// One rule fixture: a rendered stream, optionally with the chart it came from.
struct Fixture {
    /// The stream file.
    stream: PathBuf,
    /// `--chart` directory.
    chart: Option<PathBuf>,
    /// Every file whose markers count.
    files: Vec<PathBuf>,
    args: Vec<String>,
}

fn rel(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("fixture directory")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn fixtures_of(code: &str) -> Vec<Fixture> {
    let dir = fixture("rules").join(code);
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|_| panic!("{code} has no fixture directory"))
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    entries
        .into_iter()
        .map(|path| {
            let (stream, chart, files) = if path.is_dir() {
                let mut files = Vec::new();
                walk(&path, &mut files);
                (path.join("stream.yaml"), Some(path.join("app")), files)
            } else {
                (path.clone(), None, vec![path.clone()])
            };
            let text = std::fs::read_to_string(&stream).expect("stream.yaml");
            let args = text
                .lines()
                .filter_map(|l| l.strip_prefix("# chartseq-args:"))
                .flat_map(|a| a.split_whitespace().map(str::to_owned))
                .collect();
            Fixture {
                stream,
                chart,
                files,
                args,
            }
        })
        .collect()
}

fn is_valid(f: &Fixture) -> bool {
    std::fs::read_to_string(&f.stream)
        .expect("stream")
        .starts_with("# should not generate diagnostics")
}

/// (file, line, code) of every `# ~ CODE` marker: a trailing marker names its own line, a
/// marker alone on a line names the next one.
fn markers(f: &Fixture) -> BTreeSet<(String, u32, String)> {
    let mut out = BTreeSet::new();
    for file in &f.files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            let Some((before, codes)) = line.split_once("# ~ ") else {
                continue;
            };
            let line_no = if before.trim().is_empty() {
                i + 2
            } else {
                i + 1
            };
            for code in codes.split(',') {
                out.insert((rel(file), line_no as u32, code.trim().to_owned()));
            }
        }
    }
    out
}

fn lint_json(f: &Fixture, extra: &[&str]) -> serde_json::Value {
    let mut cmd = chartseq();
    cmd.arg("lint").arg(rel(&f.stream));
    if let Some(chart) = &f.chart {
        cmd.arg("--chart").arg(rel(chart));
    }
    cmd.args(["--format", "json", "--fail-on", "never"])
        .args(&f.args)
        .args(extra);
    let (code, stdout, stderr) = run(&mut cmd);
    assert_eq!(code, 0, "lint failed on {}: {stderr}", rel(&f.stream));
    serde_json::from_str(&stdout).expect("json output")
}

fn findings(json: &serde_json::Value) -> BTreeSet<(String, u32, String)> {
    json["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| {
            let at = if d["rendered"].is_null() {
                &d["location"]
            } else {
                &d["rendered"]
            };
            (
                at["file"].as_str().expect("file").to_owned(),
                at["line"].as_u64().expect("line") as u32,
                d["code"].as_str().expect("code").to_owned(),
            )
        })
        .collect()
}

fn codes() -> Vec<(String, String, String)> {
    let mut cmd = chartseq();
    cmd.args(["rules", "--format", "json"]);
    let (code, stdout, _) = run(&mut cmd);
    assert_eq!(code, 0);
    let rules: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    rules
        .as_array()
        .expect("array")
        .iter()
        .map(|r| {
            (
                r["code"].as_str().expect("code").to_owned(),
                r["name"].as_str().expect("name").to_owned(),
                r["severity"].as_str().expect("severity").to_owned(),
            )
        })
        .collect()
}

#[test]
fn rule_fixtures_match_their_markers() {
    let mut failures = Vec::new();
    for (code, _, _) in codes() {
        let fixtures = fixtures_of(&code);
        assert!(
            fixtures.iter().any(is_valid),
            "{code} needs a fixture starting with `# should not generate diagnostics`"
        );
        assert!(
            fixtures.iter().any(|f| !is_valid(f)),
            "{code} needs a fixture that triggers it"
        );
        for f in &fixtures {
            let expected = markers(f);
            if is_valid(f) {
                assert!(
                    expected.is_empty(),
                    "{} is valid but has markers",
                    rel(&f.stream)
                );
            } else {
                assert!(
                    expected.iter().any(|(_, _, c)| *c == code),
                    "{} has no `# ~ {code}` marker",
                    rel(&f.stream)
                );
            }
            let got = findings(&lint_json(f, &[]));
            if got != expected {
                failures.push(format!(
                    "{}:\n  expected {expected:?}\n  found    {got:?}",
                    rel(&f.stream)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn registry_codes_are_unique_ordered_documented_and_worded() {
    let rules = codes();
    let list: Vec<&String> = rules.iter().map(|(c, _, _)| c).collect();
    let mut sorted = list.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(list, sorted, "codes must be unique and in order");
    for (code, name, _) in &rules {
        assert!(
            name.chars()
                .all(|c| c.is_ascii_lowercase() || c == '-' || c.is_ascii_digit()),
            "{code}: `{name}` is not kebab-case"
        );
        let page = root().join("rules").join(format!("{code}-{name}.md"));
        assert!(page.is_file(), "{code} has no docs page {}", rel(&page));
    }
    // Every message of every fixture: lowercase start, no trailing period.
    for (code, _, _) in &rules {
        for f in fixtures_of(code) {
            for d in lint_json(&f, &[])["diagnostics"].as_array().expect("array") {
                for key in ["message", "help"] {
                    let text = d[key].as_str().expect("text");
                    assert!(
                        !text.starts_with(|c: char| c.is_uppercase()),
                        "{code} {key} starts uppercase: {text}"
                    );
                    assert!(
                        !text.ends_with('.'),
                        "{code} {key} ends with a period: {text}"
                    );
                }
            }
        }
    }
}

#[test]
fn rule_docs_are_up_to_date() {
    let dir = root().join("rules");
    let update = std::env::var_os("UPDATE_RULE_DOCS").is_some();
    let mut cmd = chartseq();
    cmd.args(["rules", "--format", "json"]);
    let mut stale = Vec::new();
    for (code, name, _) in codes() {
        let mut cmd = chartseq();
        cmd.args(["explain", &code, "--format", "json"]);
        let (status, stdout, _) = run(&mut cmd);
        assert_eq!(status, 0);
        let doc: serde_json::Value = serde_json::from_str(&stdout).expect("json");
        let page = doc["page"].as_str().expect("page").to_owned();
        let path = dir.join(format!("{code}-{name}.md"));
        if std::fs::read_to_string(&path).ok().as_deref() != Some(page.as_str()) {
            if update {
                std::fs::create_dir_all(&dir).expect("rules/");
                std::fs::write(&path, &page).expect("write page");
            } else {
                stale.push(rel(&path));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale rule pages (regenerate with `UPDATE_RULE_DOCS=1 cargo test --test it rule_docs`): {stale:?}"
    );
}

#[test]
fn every_format_is_snapshotted_per_rule() {
    let settings = snapshot_settings();
    for (code, _, _) in codes() {
        let mut text = String::new();
        for f in fixtures_of(&code).iter().filter(|f| !is_valid(f)) {
            for format in ["human", "concise", "json"] {
                let mut cmd = chartseq();
                cmd.arg("lint").arg(rel(&f.stream));
                if let Some(chart) = &f.chart {
                    cmd.arg("--chart").arg(rel(chart));
                }
                cmd.args(["--format", format]).args(&f.args);
                let (status, stdout, stderr) = run(&mut cmd);
                let _ = writeln!(
                    text,
                    "### {} --format {format} (exit {status})\n{stdout}{stderr}",
                    rel(&f.stream)
                );
            }
        }
        settings.bind(|| insta::assert_snapshot!(format!("lint_{code}"), text));
    }
}

#[test]
fn lint_and_plan_agree_on_every_fixture() {
    let fatal = ["CS001", "CS002", "CS004", "CS102", "CS103"];
    for (code, _, _) in codes() {
        for f in fixtures_of(&code) {
            let json = lint_json(&f, &[]);
            let lint: BTreeSet<String> = json["diagnostics"]
                .as_array()
                .expect("array")
                .iter()
                .map(|d| d["code"].as_str().expect("code").to_owned())
                .filter(|c| fatal.contains(&c.as_str()))
                .collect();
            let mut cmd = chartseq();
            cmd.arg("plan").arg(rel(&f.stream));
            if let Some(chart) = &f.chart {
                cmd.arg("--chart").arg(rel(chart));
            }
            let (status, _, stderr) = run(&mut cmd);
            let plan: BTreeSet<String> = fatal
                .iter()
                .filter(|c| stderr.contains(&format!("[{c}/")))
                .map(|c| (*c).to_owned())
                .collect();
            assert_eq!(lint, plan, "{}: lint and plan disagree", rel(&f.stream));
            if !lint.is_empty() {
                assert_eq!(status, 1, "{}: plan must fail", rel(&f.stream));
            }
        }
    }
}

#[test]
fn exit_codes_follow_fail_on() {
    let stream = "fixtures/rules/CS003/isolated.yaml";
    let (code, _, _) = run(chartseq().args(["lint", stream]));
    assert_eq!(code, 0, "a warning does not fail by default");
    let (code, _, _) = run(chartseq().args(["lint", stream, "--fail-on", "warning"]));
    assert_eq!(code, 1);
    let (code, _, _) = run(chartseq().args(["lint", "fixtures/rules/CS101/missing.yaml"]));
    assert_eq!(code, 1);
    let (code, _, _) = run(chartseq().args([
        "lint",
        "fixtures/rules/CS101/missing.yaml",
        "--fail-on",
        "never",
    ]));
    assert_eq!(code, 0);
    let (code, _, stderr) = run(chartseq().args(["lint", "no/such/file.yaml"]));
    assert_eq!(code, 2, "{stderr}");
    let (code, _, stderr) = run(chartseq().args(["lint", stream, "--select", "CS9x"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("selects no rule"), "{stderr}");
    let (code, _, stderr) = run(chartseq().args(["lint", stream, "--readiness-timeout", "10m"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("must not exceed"), "{stderr}");
}

#[test]
fn stdin_and_colour() {
    use std::io::Write as _;
    let mut child = chartseq()
        .args(["lint", "-", "--format", "concise"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let text = std::fs::read(fixture("rules/CS101/missing.yaml")).expect("fixture");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&text)
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("app/templates/app.yaml:7:41: CS101 [error]"),
        "{stdout}"
    );
    let (_, plain, _) = run(chartseq().args(["lint", "fixtures/rules/CS101/missing.yaml"]));
    assert!(!plain.contains('\u{1b}'), "no colour when not a terminal");
    let (_, coloured, _) = run(chartseq().args([
        "lint",
        "fixtures/rules/CS101/missing.yaml",
        "--color",
        "always",
    ]));
    assert!(coloured.contains("\u{1b}["), "{coloured}");
}

#[test]
fn select_ignore_and_prefixes() {
    let stream = "fixtures/rules/CS501/later.yaml";
    let f = Fixture {
        stream: root().join(stream),
        chart: None,
        files: vec![],
        args: vec![],
    };
    let all = findings(&lint_json(&f, &[]));
    assert!(all.iter().any(|(_, _, c)| c == "CS501"));
    let none = findings(&lint_json(&f, &["--ignore", "CS5"]));
    assert!(none.iter().all(|(_, _, c)| c != "CS501"), "{none:?}");
    let named = findings(&lint_json(&f, &["--select", "reference-deployed-later"]));
    assert!(!named.is_empty() && named.iter().all(|(_, _, c)| c == "CS501"));
    let extended = findings(&lint_json(
        &f,
        &["--select", "CS0", "--extend-select", "CS501"],
    ));
    assert_eq!(extended, named);
}

#[test]
fn configuration_file_is_found_upward_and_applied() {
    // fixtures/lint/config/.chartseq.toml: selects CS0, CS1, CS2 and CS5 (no CS3 rule),
    // ignores CS003, makes CS305 an error, and silences CS501 in templates/app.yaml.
    // Without it the stream gives CS003, CS305 and CS501 (warnings).
    let lint = |extra: &[&str]| {
        run(chartseq()
            .args([
                "lint",
                "fixtures/lint/config/nested/stream.yaml",
                "--format",
                "concise",
            ])
            .args(extra))
    };
    let (code, stdout, stderr) = lint(&[]);
    assert_eq!(
        code, 0,
        "the configuration selects no finding: {stdout}{stderr}"
    );
    assert!(!stdout.contains("CS305"), "CS3 is not selected: {stdout}");
    assert!(!stdout.contains("CS501"), "silenced in app.yaml: {stdout}");
    // The command line wins over the configuration's select; its ignore and severity hold.
    let (code, stdout, stderr) = lint(&["--select", "CS3"]);
    assert_eq!(code, 1, "CS305 became an error: {stdout}{stderr}");
    assert!(stdout.contains("CS305 [error]"), "{stdout}");
    assert!(!stdout.contains("CS003"), "{stdout}");
    assert!(stdout.lines().all(|l| l.contains(" CS3")), "{stdout}");
    let (_, stdout, _) = lint(&["--select", "ALL"]);
    assert!(stdout.contains("CS305 [error]"), "{stdout}");
    assert!(
        !stdout.contains("CS003") && !stdout.contains("CS501"),
        "{stdout}"
    );
    // A bad configuration is a tool failure with its line marked.
    let (code, _, stderr) = run(chartseq().args([
        "lint",
        "fixtures/rules/CS003/isolated.yaml",
        "--config",
        "fixtures/lint/bad-config.toml",
    ]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("CS9x") && stderr.contains("selects no rule"),
        "{stderr}"
    );
}

#[test]
fn output_file_and_secret_redaction() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("report.json");
    let (code, stdout, _) = run(chartseq()
        .args([
            "lint",
            "fixtures/lint/secret.yaml",
            "--format",
            "json",
            "--output",
        ])
        .arg(&out));
    assert_eq!(code, 1, "the invalid document is an error");
    assert!(stdout.is_empty());
    let written = std::fs::read_to_string(&out).expect("report written");
    assert!(written.contains("\"CS000\""), "{written}");
    for format in ["human", "concise", "json"] {
        let (_, stdout, stderr) =
            run(chartseq().args(["lint", "fixtures/lint/secret.yaml", "--format", format]));
        assert!(
            !stdout.contains("hunter2") && !stderr.contains("hunter2"),
            "{format}: {stdout}"
        );
        if format == "human" {
            assert!(stdout.contains("<redacted>"), "{stdout}");
        }
    }
}

#[test]
fn explain_and_rules() {
    let (code, stdout, _) = run(chartseq().args(["explain", "CS101"]));
    assert_eq!(code, 0);
    assert!(
        stdout.starts_with("CS101 missing-resource-group (error)"),
        "{stdout}"
    );
    assert!(stdout.contains("## Why is this bad?"));
    let (code, stdout, _) =
        run(chartseq().args(["explain", "missing-resource-group", "--format", "json"]));
    assert_eq!(code, 0);
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(doc["code"], "CS101");
    let (code, _, _) = run(chartseq().args(["explain", "CS999"]));
    assert_eq!(code, 2);
    let (code, stdout, _) = run(chartseq().args(["rules"]));
    assert_eq!(code, 0);
    settings_snapshot("lint_rules_table", &stdout);
}

fn settings_snapshot(name: &str, text: &str) {
    snapshot_settings().bind(|| insta::assert_snapshot!(name, text));
}

/// Real helm renders fixture charts; the reported template lines are those of the files.
#[test]
fn template_lines_through_real_helm() {
    let Some(helm) = crate::tool("helm") else {
        return;
    };
    let (code, stdout, stderr) = run(chartseq()
        .args([
            "lint",
            "fixtures/lint/e2e/mychart",
            "--format",
            "json",
            "--helm",
        ])
        .arg(&helm));
    assert_eq!(code, 1, "{stdout}{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let diagnostics = json["diagnostics"].as_array().expect("array");
    // What helm renders, to find rendered lines without chartseq.
    let rendered = Command::new(&helm)
        .args([
            "template",
            "release-name",
            "fixtures/lint/e2e/mychart",
            "--include-crds",
        ])
        .current_dir(root())
        .env("KUBECONFIG", "/dev/null")
        .output()
        .expect("helm runs");
    assert!(rendered.status.success(), "helm template failed");
    let rendered = String::from_utf8_lossy(&rendered.stdout).into_owned();
    let rendered_file = "fixtures/lint/e2e/mychart (helm template)";
    // A marker `# ~ CODE TEXT` (helm keeps comments) says which finding starts on its line
    // and the exact text it points at: its columns follow from the line itself. The same
    // marker in helm's output gives the rendered location.
    let span_of = |file: &str, text: &str, marker: &str| -> Option<serde_json::Value> {
        text.lines().enumerate().find_map(|(i, line)| {
            let (before, rest) = line.split_once("# ~ ")?;
            let (code, target) = rest.split_once(' ')?;
            if format!("# ~ {code} {target}") != marker {
                return None;
            }
            let column = before.find(target)? + 1;
            Some(json!({
                "file": file,
                "line": i + 1,
                "column": column,
                "end_line": i + 1,
                "end_column": column + target.len(),
                "exact": true,
            }))
        })
    };
    let mut expected = BTreeMap::new();
    let mut files = Vec::new();
    walk(&fixture("lint/e2e/mychart"), &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).expect("template");
        for line in text.lines() {
            let Some((_, rest)) = line.split_once("# ~ ") else {
                continue;
            };
            let marker = format!("# ~ {rest}");
            let code = rest.split(' ').next().expect("a code").to_owned();
            let location = span_of(&rel(&file), &text, &marker).expect("the marked text");
            let in_helm = span_of(rendered_file, &rendered, &marker).map(|mut r| {
                let r = r.as_object_mut().expect("object");
                r.remove("end_line");
                r.remove("end_column");
                r.remove("exact");
                serde_json::Value::Object(r.clone())
            });
            expected.insert(code, (location, in_helm));
        }
    }
    assert_eq!(expected.len(), 4, "{expected:?}");
    for (code, (location, in_helm)) in &expected {
        let found = diagnostics
            .iter()
            .filter(|d| d["code"] == code.as_str())
            .collect::<Vec<_>>();
        assert_eq!(found.len(), 1, "{code}: {stdout}");
        assert_eq!(&found[0]["location"], location, "{code}: {}", found[0]);
        assert_eq!(
            found[0]["rendered"],
            in_helm.clone().unwrap_or(serde_json::Value::Null),
            "{code}: {}",
            found[0]
        );
    }
    // A key written by a helper is located at the helper's line (the value `migrate`), the
    // template's `include` of it in a note and as `inserted_by`; the rendered line beside.
    let helpers: Vec<_> = diagnostics
        .iter()
        .filter(|d| d["code"] == "CS305")
        .collect();
    assert_eq!(
        helpers.len() + expected.len(),
        diagnostics.len(),
        "{stdout}"
    );
    let helper = helpers.first().expect("the CS305 finding from the helper");
    assert!(
        helper["notes"].to_string().contains(
            "the helper `mychart.gate` writes this line and fixtures/lint/e2e/mychart/templates/job.yaml:6 includes it"
        ),
        "{helper}"
    );
    assert_eq!(
        helper["location"],
        json!({"file": "fixtures/lint/e2e/mychart/templates/_helpers.tpl", "line": 2, "column": 25,
               "end_line": 2, "end_column": 32, "exact": true})
    );
    assert_eq!(
        helper["inserted_by"],
        json!({"file": "fixtures/lint/e2e/mychart/templates/job.yaml", "line": 6, "column": 5})
    );
    let (line, text) = rendered
        .lines()
        .enumerate()
        .find(|(_, l)| l.trim() == "helm.sh/resource-group: migrate")
        .expect("the helper's line in helm's output");
    let column = text.find("migrate").expect("value") + 1;
    assert_eq!(
        helper["rendered"],
        json!({"file": rendered_file, "line": line + 1, "column": column})
    );
}

/// A dialect's finding names the template line (and each cycle edge's template line) in every
/// format, read from the chart on disk.
#[test]
fn dialect_findings_point_at_template_lines_in_every_format() {
    let stream = "fixtures/rules/CS605/chart/stream.yaml";
    let chart = "fixtures/rules/CS605/chart/app";
    let api = "fixtures/rules/CS605/chart/app/templates/api.yaml";
    let lint = |format: &str| {
        let (code, out, err) =
            run(chartseq().args(["lint", stream, "--chart", chart, "--format", format]));
        assert_eq!(code, 1, "{format}: {err}");
        out
    };
    assert!(
        lint("concise").contains(&format!(
            "{api}:10:5: CS605 [error] the werf order forms a cycle"
        )),
        "concise"
    );
    assert!(
        lint("github").contains(&format!("::error file={api},line=10,col=5,")),
        "github"
    );
    let json: serde_json::Value = serde_json::from_str(&lint("json")).expect("json");
    let cycle = json["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .find(|d| d["code"] == "CS605")
        .expect("CS605");
    assert_eq!(cycle["location"]["file"], api);
    assert_eq!(cycle["location"]["line"], 10);
    let sarif: serde_json::Value = serde_json::from_str(&lint("sarif")).expect("sarif");
    let result = sarif["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|r| r["ruleId"] == "CS605")
        .expect("CS605");
    let at = &result["locations"][0]["physicalLocation"];
    assert_eq!(at["artifactLocation"]["uri"], api);
    assert_eq!(at["region"]["startLine"], 10);
    // The other edge of the cycle, at its own template line.
    let edges: Vec<(String, u64)> = result["relatedLocations"]
        .as_array()
        .expect("related")
        .iter()
        .map(|r| {
            let p = &r["physicalLocation"];
            (
                p["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned(),
                p["region"]["startLine"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert!(
        edges.contains(&(
            "fixtures/rules/CS605/chart/app/templates/worker.yaml".to_owned(),
            7
        )),
        "{edges:?}"
    );
}

/// Each finding carries the reference implementation's `helm lint` severity where it differs
/// from chartseq's: `none` for a check it does not have, or for its sequencing checks on a chart
/// that is not v3 (said in a note too); nothing where they agree. A missing group, which its
/// install only warns about, says what `helm install --wait=ordered` does and which flag
/// installs as it does.
#[test]
fn findings_carry_the_reference_severity_where_it_differs() {
    let lint = |args: &[&str]| {
        let (_, out, _) = run(chartseq().arg("lint").args(args).args(["--format", "json"]));
        let doc: serde_json::Value = serde_json::from_str(&out).expect("json");
        doc["diagnostics"].as_array().expect("diagnostics").clone()
    };
    let of = |ds: &[serde_json::Value], code: &str| {
        ds.iter()
            .find(|d| d["code"] == code)
            .cloned()
            .unwrap_or_else(|| panic!("{code} in {ds:?}"))
    };
    // A stream without its chart: read as the v3 the reference sequences.
    let missing = of(&lint(&["fixtures/rules/CS101/missing.yaml"]), "CS101");
    assert!(missing.get("reference_severity").is_none(), "{missing}");
    let notes = missing["notes"].to_string();
    assert!(
        notes.contains("--no-lint") && notes.contains("unsequenced batch"),
        "{notes}"
    );
    let job = of(&lint(&["fixtures/rules/CS305/job_gate.yaml"]), "CS305");
    assert_eq!(job["reference_severity"], "none", "{job}");
    // A v2 chart: the reference's lint does not look at its groups.
    let cycle = of(
        &lint(&[
            "fixtures/charts/cycle-two.rendered.yaml",
            "--chart",
            "fixtures/charts/cycle-two",
        ]),
        "CS001",
    );
    assert_eq!(cycle["reference_severity"], "none", "{cycle}");
    assert!(
        cycle["notes"]
            .to_string()
            .contains("only in apiVersion v3 charts (this chart is v2)"),
        "{cycle}"
    );
}

/// A readiness annotation written in both branches of an `if` inside a `range`: the finding
/// names the template line of the branch that rendered, as an exact line.
#[test]
fn a_finding_names_the_branch_that_rendered() {
    let (_, out, err) = run(chartseq().args([
        "lint",
        "fixtures/rules/CS301/range_branches/stream.yaml",
        "--chart",
        "fixtures/rules/CS301/range_branches/app",
        "--format",
        "json",
    ]));
    let doc: serde_json::Value = serde_json::from_str(&out).expect(&err);
    let location = &doc["diagnostics"][0]["location"];
    assert_eq!(doc["diagnostics"][0]["code"], "CS301", "{doc}");
    assert_eq!(location["line"], 28, "{location}");
    assert_eq!(location["exact"], true, "{location}");
}

/// A `depends-on` that names no dependency, on a subchart its default values disable, is
/// reported with those values too (it fails the install once the subchart is enabled), and
/// `plan` still plans: helm leaves a disabled subchart out.
#[test]
fn depends_on_a_non_dependency_is_reported_on_a_disabled_subchart() {
    let Some(helm) = crate::tool("helm") else {
        return;
    };
    let chart = "fixtures/lint/disabled-depends-on";
    for set in [&[][..], &["--set", "cache.enabled=true"][..]] {
        let (code, out, err) = run(chartseq()
            .args(["lint", chart, "--format", "concise", "--helm"])
            .arg(&helm)
            .args(set));
        assert_eq!(code, 1, "{out}{err}");
        assert!(
            out.contains(&format!(
                "{chart}/Chart.yaml:8:17: CS102 [error] `ghost` is not a dependency of chart disabled-depends-on"
            )),
            "{set:?}: {out}"
        );
    }
    let (code, _, err) = run(chartseq().args(["plan", chart, "--helm"]).arg(&helm));
    assert_eq!(code, 0, "{err}");
}

/// Annotations a template inserts whole from values (`toYaml .Values.annotations`, as
/// ingress-nginx's `controller.annotations`) are located at the values file's line in every
/// format, the template line that inserts them in a note; several values files with the line
/// would make it approximate, never `exact`.
#[test]
fn annotations_from_values_are_located_in_the_values_file_in_every_format() {
    let Some(helm) = crate::tool("helm") else {
        return;
    };
    let dir = "fixtures/lint/annotations-from-values";
    let lint = |format: &str| {
        let (code, out, err) = run(chartseq()
            .args([
                "lint",
                &format!("{dir}/chart"),
                "-f",
                &format!("{dir}/values-prod.yaml"),
            ])
            .args(["--ignore", "CS203", "--format", format, "--helm"])
            .arg(&helm));
        assert_eq!(code, 1, "{format}: {out}{err}");
        out
    };
    let place = format!("{dir}/values-prod.yaml");
    let json: serde_json::Value = serde_json::from_str(&lint("json")).expect("json");
    let d = &json["diagnostics"][0];
    assert_eq!(d["code"], "CS101");
    assert_eq!(
        d["location"],
        json!({"file": place, "line": 5, "column": 3, "end_line": 5, "end_column": 53, "exact": true})
    );
    assert!(
        d["notes"].as_array().expect("notes").iter().any(|n| n
            == &json!(format!("{dir}/chart/templates/deploy.yaml:6 inserts this line from values: the values file's line is shown"))),
        "{d}"
    );
    assert!(lint("concise").starts_with(&format!("{place}:5:3: CS101")));
    assert!(lint("github").starts_with(&format!("::error file={place},line=5,col=3,")));
    let sarif: serde_json::Value = serde_json::from_str(&lint("sarif")).expect("sarif");
    let at = &sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"];
    assert_eq!(at["artifactLocation"]["uri"], json!(place), "{at}");
    assert_eq!(at["region"]["startLine"], 5, "{at}");
    let junit = lint("junit");
    assert!(junit.contains(&format!("{place}:5:3")), "{junit}");
}

/// Annotations a helper writes (`{{ include "web.annotations" . }}`, a `define` in
/// `templates/_helpers.tpl`, through a nested helper too) are located at the helper's line in
/// every format, with the template's `include` as a related location and in a note; a line two
/// helpers write is not `exact`; a value the helper computes leaves its key's line; a helper that
/// inserts values whole leaves the values file's line.
#[test]
fn annotations_from_helpers_are_located_at_the_helper_line_in_every_format() {
    let Some(helm) = crate::tool("helm") else {
        return;
    };
    let dir = "fixtures/lint/annotations-from-helpers/chart";
    let lint = |format: &str| {
        let (code, out, err) = run(chartseq()
            .args([
                "lint", dir, "--ignore", "CS203", "--format", format, "--helm",
            ])
            .arg(&helm));
        assert_eq!(code, 1, "{format}: {out}{err}");
        out
    };
    let helpers = format!("{dir}/templates/_helpers.tpl");
    // (finding's place, line, column, end column, exact, the template's include line)
    let expected = [
        (
            &helpers,
            12,
            37,
            51,
            true,
            format!("{dir}/templates/web.yaml"),
            8,
        ),
        (
            &helpers,
            21,
            37,
            48,
            false,
            format!("{dir}/templates/job.yaml"),
            7,
        ),
        // A value the helper computes: its key's line, whole.
        (
            &helpers,
            31,
            1,
            90,
            true,
            format!("{dir}/templates/store-client.yaml"),
            6,
        ),
        (
            &format!("{dir}/values.yaml"),
            5,
            5,
            52,
            true,
            format!("{dir}/templates/worker.yaml"),
            6,
        ),
    ];
    let json: serde_json::Value = serde_json::from_str(&lint("json")).expect("json");
    let sarif: serde_json::Value = serde_json::from_str(&lint("sarif")).expect("sarif");
    let concise = lint("concise");
    let concise: Vec<&str> = concise.lines().collect();
    let github = lint("github");
    let github: Vec<&str> = github.lines().collect();
    let junit = lint("junit");
    let human = lint("human");
    assert_eq!(
        json["diagnostics"].as_array().map(Vec::len),
        Some(4),
        "{json}"
    );
    for (i, (file, line, column, end_column, exact, include, include_line)) in
        expected.iter().enumerate()
    {
        let d = &json["diagnostics"][i];
        assert_eq!(d["code"], "CS101");
        assert_eq!(
            d["location"],
            json!({"file": file, "line": line, "column": column, "end_line": line, "end_column": end_column, "exact": exact}),
            "{d}"
        );
        assert_eq!(
            d["inserted_by"],
            json!({"file": include, "line": include_line, "column": 5}),
            "{d}"
        );
        let note = format!("{include}:{include_line}");
        assert!(
            d["notes"]
                .as_array()
                .expect("notes")
                .iter()
                .any(|n| n.as_str().is_some_and(|n| n.contains(&note))),
            "{d}"
        );
        let approximate = if *exact { "" } else { " (approximate line)" };
        assert!(
            concise[i].starts_with(&format!("{file}:{line}:{column}: CS101 [error] "))
                && concise[i].ends_with(&format!(
                    "{approximate} (inserted by {include}:{include_line})"
                )),
            "{}",
            concise[i]
        );
        assert!(
            github[i].starts_with(&format!(
                "::error file={file},line={line},col={column},endLine={line},endColumn={end_column},"
            )) && github[i].contains(&note),
            "{}",
            github[i]
        );
        let result = &sarif["runs"][0]["results"][i];
        let at = &result["locations"][0]["physicalLocation"];
        assert_eq!(at["artifactLocation"]["uri"], json!(file), "{at}");
        assert_eq!(at["region"]["startLine"], json!(line), "{at}");
        assert_eq!(at["region"]["startColumn"], json!(column), "{at}");
        assert!(
            result["relatedLocations"]
                .as_array()
                .expect("related locations")
                .iter()
                .any(
                    |r| r["physicalLocation"]["artifactLocation"]["uri"] == json!(include)
                        && r["physicalLocation"]["region"]["startLine"] == json!(include_line)
                ),
            "{result}"
        );
        assert!(
            junit.contains(&format!(
                "{file}:{line}:{column}: CS101 [error] resource group"
            )) && junit.contains(&note),
            "{junit}"
        );
        assert!(
            human.contains(&format!("┌─ {file}:{line}:{column}\n"))
                && human.contains(&format!("┌─ {include}:{include_line}:5\n")),
            "{human}"
        );
    }
}
