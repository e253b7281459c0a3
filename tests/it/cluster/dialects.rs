//! Other tools' orders deployed on the real control plane: every step written only once the
//! steps it waits for were ready, on the API server's clock, for the tools' own documented
//! examples (`fixtures/dialects/`, sources named there).

use super::order::{assert_waits_held, plan};
use super::{Ns, ok};
use crate::fixture;

fn deploys_in_order(dialect: &str, example: &str, pairs: usize) {
    let Some(ns) = Ns::new(&format!("dialect-{dialect}")) else {
        return;
    };
    // In the test's own namespace, where an example names `default`.
    let text = std::fs::read_to_string(fixture(&format!("dialects/{example}")))
        .expect("the example reads")
        .replace("namespace: default", &format!("namespace: {}", ns.name));
    let path = ns.file("example.yaml", &text);
    let path = path.as_str();
    let out = ok(ns.chartseq(&[
        "apply",
        path,
        "--dialect",
        dialect,
        "--release",
        "docs",
        "--timeout",
        "2m",
    ]));
    assert!(out.contains("status deployed"), "{out}");
    let steps = plan(path, &["--dialect", dialect]);
    assert_eq!(assert_waits_held(&ns, &steps), pairs);
}

#[test]
fn argo_sync_waves_wait_wave_by_wave() {
    // Wave 1 (2 objects) after wave 0 (3); PostSync (2) after wave 1 (2).
    deploys_in_order("argo", "argo/sync-waves.yaml", 10);
}

#[test]
fn kapp_change_rules_wait_for_their_groups() {
    // redis-replica's Deployment after redis-primary (2); the ungrouped Job after all 4.
    deploys_in_order("kapp", "kapp/resource-ordering.yaml", 6);
}
