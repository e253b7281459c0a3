//! Expensive `JSONPath`s on large objects end with "cannot be evaluated", within a memory cap,
//! whichever step multiplies the values: repeated unions make 512 copies of a list of 100,000
//! items, which `..`, `*`, a slice or a filter would then walk 51 million times, or which
//! would print 600 MB.

use std::fmt::Write as _;

use chartseq::readiness::jsonpath::{self, ExecOptions};
use serde_json::Value;

use crate::memory::{capped, in_child, run_test_capped};
use crate::{chartseq, run};

/// Address-space cap for each run: a correct run needs a small part of it (the object, a
/// million values of 24 bytes, 64 MiB of printed text), a blow-up needs gigabytes.
const CAP_MIB: u64 = 512;

const UNION: &str = "[0,0,0,0,0,0,0,0]";

/// The status: `items`, three lists deep around 100,000 small maps.
fn status_json() -> String {
    let mut list = String::from("[");
    for i in 0..100_000 {
        if i > 0 {
            list.push(',');
        }
        write!(list, "{{\"x\":{i}}}").expect("write");
    }
    list.push(']');
    format!("{{\"items\":[[[{list}]]]}}")
}

/// Each multiplying step, and the printed text, behind three unions (512 copies).
fn paths() -> Vec<(String, &'static str)> {
    let copies = format!(".items{UNION}{UNION}{UNION}");
    let values = "produces more than 1048576 values; it cannot be evaluated";
    vec![
        (format!("{copies}..x"), values),
        (format!("{copies}[*]"), values),
        (format!("{copies}[0:]"), values),
        (format!("{copies}[?(@.x)]"), values),
        (format!("{copies}[?(@.x >= 0)]"), values),
        (
            copies.clone(),
            "prints more than 64 MiB; it cannot be evaluated",
        ),
    ]
}

#[test]
fn readiness_command_stops_expensive_paths_within_a_memory_cap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let object = dir.path().join("big.yaml");
    std::fs::write(
        &object,
        format!(
            "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: big\nstatus: {}\n",
            status_json()
        ),
    )
    .expect("write");
    for (path, message) in paths() {
        let mut cmd = chartseq();
        cmd.arg("readiness")
            .arg(&object)
            .arg("--success")
            .arg(format!("{{{path}}} == 1"))
            .arg("--failure")
            .arg("{.never} == 1");
        let (code, stdout, stderr) = run(&mut capped(&cmd, CAP_MIB));
        assert_eq!(
            code, 1,
            "{path}: exit {code}, not a clean verdict: {stderr}"
        );
        assert!(
            stdout.contains("Widget/big: in-progress [custom]") && stdout.contains(message),
            "{path}: {stdout}{stderr}"
        );
    }
}

/// The library call the deployer's waits make (`execute_into`, through `Readiness::judge`),
/// run in a child process under the cap.
#[test]
fn library_evaluation_stops_expensive_paths_within_a_memory_cap() {
    if !in_child() {
        let (code, stdout, stderr) = run_test_capped(
            "readiness::expensive::library_evaluation_stops_expensive_paths_within_a_memory_cap",
            CAP_MIB,
        );
        assert_eq!(code, 0, "the capped child failed: {stdout}{stderr}");
        assert!(stdout.contains("1 passed"), "{stdout}");
        return;
    }
    let status: Value = serde_json::from_str(&status_json()).expect("JSON");
    let object = serde_json::json!({"status": status});
    let mut buffer = String::new();
    for (path, message) in paths() {
        let template = jsonpath::parse(&format!("{{.status{path}}}")).expect("parses");
        for allow_missing_keys in [false, true] {
            let err = template
                .execute_into(&object, ExecOptions { allow_missing_keys }, &mut buffer)
                .expect_err(path.as_str());
            assert!(err.message.ends_with(message), "{path}: {err}");
            assert!(buffer.is_empty(), "{path}: no partial text is left");
        }
        let expression = chartseq::readiness::expr::parse(&format!("{{{path}}} == 1"))
            .expect("the expression parses");
        let seen = expression.observe(&object);
        assert!(!seen.met, "{path}");
        assert!(
            seen.note.as_deref().is_some_and(|n| n.ends_with(message)),
            "{path}: {:?}",
            seen.note
        );
    }
    // What is within the budget still evaluates: one copy of each.
    let one = jsonpath::parse("{.status.items[0][0][0][0:2]}").expect("parses");
    assert_eq!(
        one.execute(&object, ExecOptions::default())
            .expect("evaluates"),
        "{\"x\":0} {\"x\":1}"
    );
    let all = jsonpath::parse("{.status.items[0][0][0][*].x}").expect("parses");
    let printed = all
        .execute(&object, ExecOptions::default())
        .expect("evaluates");
    assert_eq!(printed.split(' ').count(), 100_000);
}
