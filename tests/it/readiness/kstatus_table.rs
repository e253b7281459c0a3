//! Readiness tables: every object under `fixtures/readiness/` carries the status and reason it
//! must be judged (`chartseq.test/expect-status`, `chartseq.test/expect-reason`, a prefix),
//! at the fixed instant [`NOW`].

use serde_json::Value;

use chartseq::readiness::clock::parse_rfc3339;
use chartseq::readiness::{Condition, KstatusOptions};

const FILES: [(&str, bool); 6] = [
    ("readiness/kstatus/workloads.yaml", false),
    ("readiness/kstatus/pods-jobs.yaml", false),
    ("readiness/kstatus/others.yaml", false),
    ("readiness/kstatus/wait-for-jobs.yaml", true),
    ("readiness/custom.yaml", false),
    ("readiness/hooks.yaml", false),
];

/// The instant every fixture is judged at (the unschedulable Pods' timestamps are around it).
pub const NOW: &str = "2025-01-01T00:00:00Z";

fn annotation<'a>(object: &'a Value, key: &str) -> &'a str {
    object["metadata"]["annotations"][key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} missing on {}", object["metadata"]["name"]))
}

#[test]
fn every_fixture_object_is_judged_as_it_expects() {
    let now = parse_rfc3339(NOW).expect("NOW is RFC 3339");
    let mut failures = Vec::new();
    let mut count = 0;
    for (file, wait_for_jobs) in FILES {
        for object in super::load_objects(file) {
            count += 1;
            let options = KstatusOptions {
                wait_for_jobs,
                hook: false,
            };
            let readiness = chartseq::model::live::readiness_of(&object, options)
                .expect("fixture annotations parse");
            let judgement = readiness.judge(&object, now);
            let status = annotation(&object, "chartseq.test/expect-status");
            let reason = annotation(&object, "chartseq.test/expect-reason");
            // The fast path a deployer polls must agree with the full judgement.
            assert_eq!(
                readiness.status(&object, now),
                judgement.status,
                "{file} {}",
                object["metadata"]["name"]
            );
            if judgement.status.as_str() != status || !judgement.reason.starts_with(reason) {
                failures.push(format!(
                    "{file} {}: expected {status} \"{reason}…\", got {} \"{}\"",
                    object["metadata"]["name"], judgement.status, judgement.reason
                ));
            }
        }
    }
    assert!(count >= 50, "only {count} fixture objects");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
