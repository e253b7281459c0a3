//! HIP-0025 expression fixtures (`fixtures/readiness/expressions.json`). Each row's `spec` is
//! written by hand from SPEC §3 (what the expression reads, its operator and value, or why it
//! is invalid) and checked against chartseq, with kubectl as a second judge of the paths; the
//! `evaluations` are judged end to end by `chartseq readiness`. Each row's `result` records
//! chartseq's exact parse result (error offset and message, or the flags lint reads), so that
//! wording changes are seen. Lint's CS302/CS303/CS304 tests can read the same rows.

use std::process::Command;

use serde_json::{Value, json};

use chartseq::readiness::expr;

use crate::{chartseq, fixture, run, tool};

fn table() -> Value {
    let text = std::fs::read_to_string(fixture("readiness/expressions.json")).expect("exists");
    serde_json::from_str(&text).expect("JSON")
}

/// What a message says for each reason a row is invalid (SPEC §3 and rule CS302).
fn reason_words(reason: &str) -> &'static str {
    match reason {
        "empty" => "cannot be empty",
        "no-braces" => "must start with {",
        "unclosed" => "closing }",
        "empty-path" => "missing its JSONPath",
        "no-operator" => "missing an operator",
        "operator-without-space" => "separated from the value by whitespace",
        "unknown-operator" => "unsupported operator",
        "no-value" => "missing the value",
        "not-rooted" => "must start with . or [",
        "non-scalar" => "must be a scalar",
        "jsonpath" => "invalid JSONPath",
        "function" => "functions such as",
        other => panic!("unknown reason {other} in expressions.json"),
    }
}

/// Every row parses (or fails) as its hand-written `spec` says.
#[test]
fn expressions_parse_as_the_spec_says() {
    let table = table();
    let rows = table["rows"].as_array().expect("rows");
    assert!(rows.len() >= 40, "{} rows", rows.len());
    let mut failures = Vec::new();
    for row in rows {
        let text = row["expr"].as_str().expect("expr");
        let spec = &row["spec"];
        let got = match (expr::parse(text), spec["valid"].as_bool().expect("valid")) {
            (Ok(e), true) => {
                let got = json!({
                    "valid": true,
                    "reads": e.template().strip_prefix('{').and_then(|t| t.strip_suffix('}')),
                    "op": e.op().as_str(),
                    "value": e.value(),
                    "ordering_on_non_number": e.ordering_on_non_number(),
                    "outside_status": e.outside_status(),
                });
                (got != *spec).then(|| {
                    format!(
                        "{text:?}: spec {spec}
  chartseq {got}"
                    )
                })
            }
            (Err(e), false) => {
                let reason = spec["reason"].as_str().expect("reason");
                (!e.message.contains(reason_words(reason)))
                    .then(|| format!("{text:?}: {reason} expected, chartseq says {}", e.message))
            }
            (Ok(_), false) => Some(format!("{text:?}: accepted, the spec says invalid: {spec}")),
            (Err(e), true) => Some(format!(
                "{text:?}: refused ({}), the spec says valid",
                e.message
            )),
        };
        failures.extend(got);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// kubectl judges the paths: it runs what every valid row reads and refuses the path of
/// every row the spec calls invalid `JSONPath`.
#[test]
fn kubectl_agrees_with_the_spec_on_every_path() {
    let Some(kubectl) = tool("kubectl") else {
        return;
    };
    let empty = tempfile::NamedTempFile::new().expect("temp file");
    let table = table();
    let mut checked = 0;
    for row in table["rows"].as_array().expect("rows") {
        let text = row["expr"].as_str().expect("expr");
        let spec = &row["spec"];
        let path = if spec["valid"] == true {
            spec["reads"].as_str().expect("reads").to_owned()
        } else if spec["reason"] == "jsonpath" {
            // The path runs from the first `{` to the first `}`, read under `.status`.
            let inner = text.trim().strip_prefix('{').expect("starts with {");
            let inner = inner.split_once('}').map_or(inner, |(p, _)| p);
            format!(".status{inner}")
        } else {
            continue;
        };
        let output = Command::new(&kubectl)
            .env("KUBECONFIG", empty.path())
            .args(["label", "--local", "-f"])
            .arg(fixture("jsonpath/objects/pod.yaml"))
            .args(["x=y", "-o"])
            .arg(format!("jsonpath={{{path}}}"))
            .output()
            .expect("kubectl runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        // kubectl refuses some paths while parsing and others (a bare word in a filter) only
        // when it runs them; a readiness expression must be refused either way.
        let refused = !output.status.success();
        assert!(
            !refused || stderr.contains("jsonpath"),
            "{text:?}: kubectl failed otherwise: {stderr}"
        );
        assert_eq!(
            refused,
            spec["valid"] == false,
            "{text:?}: kubectl on {{{path}}}: {stderr}"
        );
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} rows checked");
}

/// Each evaluation row, judged by `chartseq readiness` with `--success` / `--failure`.
#[test]
fn evaluations_follow_the_spec() {
    let table = table();
    let dir = tempfile::tempdir().expect("tempdir");
    let rows = table["evaluations"].as_array().expect("evaluations");
    assert!(rows.len() >= 15);
    let mut failures = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let mut object = json!({
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": format!("w{i}")},
        });
        if !row["status"].is_null() {
            object["status"] = row["status"].clone();
        }
        let path = dir.path().join(format!("w{i}.json"));
        std::fs::write(&path, object.to_string()).expect("write");
        let mut command = chartseq();
        command
            .arg("readiness")
            .arg(&path)
            .args(["--format", "json"]);
        for (flag, key) in [("--success", "success"), ("--failure", "failure")] {
            for e in row[key].as_array().expect("expressions") {
                command.arg(flag).arg(e.as_str().expect("expression"));
            }
        }
        let (code, out, err) = run(&mut command);
        let report: Value = serde_json::from_str(&out).unwrap_or_else(|_| json!({}));
        let status = &report["objects"][0]["status"];
        let engine = &report["objects"][0]["engine"];
        let expected = &row["expect"];
        let expected_code = i32::from(expected != "ready");
        if status != expected || engine != "custom" || code != expected_code {
            failures.push(format!(
                "{}: expected {expected}, got {status} [{engine}] exit {code}\n{out}{err}",
                row["why"]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn describe(text: &str) -> Value {
    match expr::parse(text) {
        Ok(e) => json!({
            "valid": true,
            "template": e.template(),
            "op": e.op().as_str(),
            "value": e.value(),
            "ordering_on_non_number": e.ordering_on_non_number(),
            "outside_status": e.outside_status(),
        }),
        Err(e) => json!({
            "valid": false,
            "offset": e.offset,
            "message": e.message,
            "caret": expr::caret(text, e.offset),
        }),
    }
}

/// The recorded parse results: offsets and wording do not change unnoticed.
#[test]
fn expressions_parse_as_recorded() {
    let path = fixture("readiness/expressions.json");
    let mut table: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("exists")).expect("JSON");
    let record = std::env::var("CHARTSEQ_RECORD_EXPRESSIONS").as_deref() == Ok("1");
    let mut changed = Vec::new();
    for row in table["rows"].as_array_mut().expect("rows") {
        let text = row["expr"].as_str().expect("expr").to_owned();
        let category = row["category"].as_str().expect("category").to_owned();
        let actual = describe(&text);
        let valid = actual["valid"] == true;
        let expect_valid = category.starts_with("valid")
            || category == "ordering-non-numeric"
            || category == "outside-status";
        assert_eq!(valid, expect_valid, "{category} {text:?}: {actual}");
        if record {
            row["result"] = actual;
        } else if row["result"] != actual {
            changed.push(format!(
                "{text:?}\n  recorded {}\n  now      {actual}",
                row["result"]
            ));
        }
    }
    if record {
        let out = serde_json::to_string_pretty(&table).expect("serializes") + "\n";
        std::fs::write(&path, out).expect("writes");
    }
    assert!(changed.is_empty(), "{}", changed.join("\n"));
}

/// Every `JSONPath` kubectl refuses to parse is refused inside an expression with kubectl's
/// message, pointing into the path.
#[test]
fn kubectl_parse_errors_are_expression_errors() {
    let text = std::fs::read_to_string(fixture("jsonpath/table.json")).expect("exists");
    let table: Value = serde_json::from_str(&text).expect("JSON");
    let mut checked = 0;
    for row in table["rows"].as_array().expect("rows") {
        let template = row["expr"].as_str().expect("expr");
        let Some(inner) = template.strip_prefix('{').and_then(|t| t.strip_suffix('}')) else {
            continue;
        };
        // Helm trims the path, so padding that kubectl rejects (a newline) is not comparable.
        if inner.contains('}')
            || inner.trim() != inner
            || !(inner.starts_with('.') || inner.starts_with('['))
        {
            continue;
        }
        let kubectl = &row["kubectl"];
        let expression = format!("{{{inner}}} == 1");
        let parsed = expr::parse(&expression);
        if kubectl["error"] == "parse" {
            checked += 1;
            let e = parsed.expect_err(&expression);
            let message = kubectl["message"].as_str().expect("message");
            assert_eq!(
                e.message,
                format!("invalid JSONPath: {message}"),
                "{expression}"
            );
            assert!(
                (1..=inner.len() + 1).contains(&e.offset),
                "{expression}: {e:?}"
            );
        } else if kubectl.get("stdout").is_some() && row["category"] != "function-as-field" {
            assert!(parsed.is_ok(), "{expression}: {parsed:?}");
        }
    }
    assert!(checked >= 5, "only {checked} rows checked");
}
