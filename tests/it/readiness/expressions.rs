//! HIP-0025 expression fixtures (`fixtures/readiness/expressions.json`): the parse result of
//! each expression (error offset and message, or the flags lint reads) is recorded and must
//! not change unnoticed. Lint's CS302/CS303/CS304 tests can read the same rows.

use serde_json::{Value, json};

use chartseq::readiness::expr;

use crate::fixture;

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
