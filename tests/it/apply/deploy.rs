//! The test API server's own scenario format. The deploy tests run on the real control plane
//! (`tests/it/cluster/deploy.rs`), and its faults come from a proxy in front of it
//! (`tests/it/cluster/faults.rs`).

use super::apiserver::Scenario;
use crate::fixture;

#[test]
fn the_sample_scenario_parses() {
    let text = std::fs::read_to_string(fixture("apply/scenario.yaml")).expect("the sample reads");
    let scenario = Scenario::parse(&text).expect("the sample scenario parses");
    assert_eq!(scenario.resources.len(), 5);
    assert_eq!(scenario.resources[4].status.len(), 2);
    assert!(
        Scenario::parse("resources: [{kind: Job, name: x, readyAftrMs: 1}]").is_err(),
        "unknown fields are errors"
    );
}
