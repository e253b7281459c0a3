//! The `chartseq` binary against the test API server: the faults it injects (server errors,
//! dropped watches), until a fault proxy in front of the real control plane does, and the
//! server's own scenario format. Every other deploy test runs on the real control plane
//! (`tests/it/cluster/deploy.rs`).

use super::apiserver::Scenario;
use super::support::start;
use crate::fixture;

#[test]
fn survives_injected_server_errors_and_watch_drops() {
    let env = start("defaultDelayMs: 30\nfaults: {errorRate: 0.1, watchDropMs: 150, seed: 7}\n");
    let (code, out, err) = env.apply("shop.yaml", &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        env.server.server.counters().injected_faults > 0,
        "faults were injected"
    );
    for (kind, name) in [
        ("StatefulSet", "db"),
        ("ConfigMap", "db-config"),
        ("Deployment", "queue"),
        ("Deployment", "app"),
        ("Service", "web"),
    ] {
        assert!(env.exists(kind, name), "{kind}/{name}");
    }
    let (code, _, err) = env.run(&["uninstall", "shop", "-n", "default"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(env.leftovers(), Vec::<String>::new());
}

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
