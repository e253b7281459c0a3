//! The kubectl differential table (`fixtures/jsonpath/table.json`): every row's expression,
//! evaluated by chartseq against its object, must print exactly what kubectl 1.35.2 printed,
//! or fail the same way (parse or execute) with client-go's message. A second test re-runs
//! kubectl on every row so the recorded outputs cannot drift; with
//! `CHARTSEQ_RECORD_JSONPATH=1` it rewrites them instead.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use chartseq::readiness::jsonpath::{self, ExecOptions};

use crate::{fixture, tool};

/// What a template did: printed something, or failed to parse or to execute.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Stdout(String),
    Parse(String),
    Execute(String),
}

impl Outcome {
    fn from_json(v: &Value) -> Outcome {
        if let Some(s) = v.get("stdout").and_then(Value::as_str) {
            return Outcome::Stdout(s.to_owned());
        }
        let message = v["message"]
            .as_str()
            .expect("an error row has a message")
            .to_owned();
        match v["error"].as_str() {
            Some("parse") => Outcome::Parse(message),
            Some("execute") => Outcome::Execute(message),
            other => panic!("unknown error kind {other:?}"),
        }
    }

    fn to_json(&self) -> Value {
        match self {
            Outcome::Stdout(s) => json!({"stdout": s}),
            Outcome::Parse(m) => json!({"error": "parse", "message": m}),
            Outcome::Execute(m) => json!({"error": "execute", "message": m}),
        }
    }
}

fn table() -> Value {
    let text = std::fs::read_to_string(fixture("jsonpath/table.json")).expect("the table exists");
    serde_json::from_str(&text).expect("the table is JSON")
}

fn rows(table: &Value) -> &Vec<Value> {
    table["rows"].as_array().expect("rows")
}

/// The object kubectl evaluates: `kubectl label … x=y` adds that label first.
fn labelled_object(file: &str) -> Value {
    let mut objects = super::load_objects(&format!("jsonpath/objects/{file}"));
    assert_eq!(objects.len(), 1, "{file} holds one object");
    let mut object = objects.remove(0);
    let metadata = object["metadata"].as_object_mut().expect("metadata");
    let labels = metadata.entry("labels").or_insert_with(|| json!({}));
    labels
        .as_object_mut()
        .expect("labels")
        .insert("x".into(), json!("y"));
    object
}

fn chartseq_eval(object: &Value, expr: &str) -> Outcome {
    match jsonpath::parse(expr) {
        Err(e) => Outcome::Parse(e.message),
        Ok(path) => match path.execute(
            object,
            ExecOptions {
                allow_missing_keys: true,
            },
        ) {
            Ok(out) => Outcome::Stdout(out),
            Err(e) => Outcome::Execute(e.message),
        },
    }
}

fn kubectl_eval(kubectl: &Path, file: &str, expr: &str) -> Outcome {
    let empty = tempfile::NamedTempFile::new().expect("temp file");
    let output = Command::new(kubectl)
        .env("KUBECONFIG", empty.path())
        .args(["label", "--local", "-f"])
        .arg(fixture(&format!("jsonpath/objects/{file}")))
        .args(["x=y", "-o"])
        .arg(format!("jsonpath={expr}"))
        .output()
        .expect("kubectl runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.success() {
        return Outcome::Stdout(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    let parse_prefix = format!("error: error parsing jsonpath {expr}, ");
    if let Some(rest) = stderr.strip_prefix(&parse_prefix) {
        return Outcome::Parse(rest.trim_end().to_owned());
    }
    let exec_prefix = "Error executing template: ";
    if let Some(at) = stderr.find(exec_prefix) {
        let rest = &stderr[at + exec_prefix.len()..];
        let end = rest
            .find(". Printing more information")
            .unwrap_or(rest.len());
        return Outcome::Execute(rest[..end].to_owned());
    }
    panic!("kubectl failed in an unexpected way on {expr}: {stderr}");
}

/// Execution errors that print a Go value (`%v`) are compared by kind only: the value's Go
/// rendering is not part of the contract.
fn same(expected: &Outcome, actual: &Outcome) -> bool {
    match (expected, actual) {
        (Outcome::Execute(e), Outcome::Execute(a))
            if e.ends_with("is not array or slice and cannot be filtered") =>
        {
            a.ends_with("is not array or slice and cannot be filtered")
        }
        _ => expected == actual,
    }
}

#[test]
fn chartseq_prints_what_kubectl_printed() {
    let table = table();
    let rows = rows(&table);
    assert!(rows.len() >= 60, "the table has {} rows", rows.len());
    let mut failures = Vec::new();
    for row in rows {
        let file = row["object"].as_str().expect("object");
        let expr = row["expr"].as_str().expect("expr");
        let expected = Outcome::from_json(&row["kubectl"]);
        let actual = chartseq_eval(&labelled_object(file), expr);
        if !same(&expected, &actual) {
            failures.push(format!(
                "{file} {expr}\n  kubectl:  {expected:?}\n  chartseq: {actual:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} rows differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_row_has_a_category_and_invalid_rows_are_marked() {
    let table = table();
    for row in rows(&table) {
        let category = row["category"].as_str().unwrap_or("");
        assert!(!category.is_empty(), "row without category: {row}");
        let outcome = Outcome::from_json(&row["kubectl"]);
        if category.starts_with("unsupported") || category == "error-parse" {
            assert!(
                matches!(outcome, Outcome::Parse(_) | Outcome::Execute(_)),
                "{category} row is accepted by kubectl: {row}"
            );
        }
    }
}

#[test]
fn recorded_kubectl_outputs_are_current() {
    let Some(kubectl) = tool("kubectl") else {
        return;
    };
    let mut table = table();
    let record = std::env::var("CHARTSEQ_RECORD_JSONPATH").as_deref() == Ok("1");
    let mut stale = Vec::new();
    for row in table["rows"].as_array_mut().expect("rows") {
        let file = row["object"].as_str().expect("object").to_owned();
        let expr = row["expr"].as_str().expect("expr").to_owned();
        let actual = kubectl_eval(&kubectl, &file, &expr);
        if record {
            row["kubectl"] = actual.to_json();
        } else if Outcome::from_json(&row["kubectl"]) != actual {
            stale.push(format!("{file} {expr}: kubectl now gives {actual:?}"));
        }
    }
    if record {
        let text = serde_json::to_string_pretty(&table).expect("serializes") + "\n";
        std::fs::write(fixture("jsonpath/table.json"), text).expect("writes the table");
    }
    assert!(
        stale.is_empty(),
        "recorded outputs are stale:\n{}",
        stale.join("\n")
    );
}
