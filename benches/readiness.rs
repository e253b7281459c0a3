//! Readiness evaluation speed: 1 million (expression, object) evaluations per case, parsed
//! once and evaluated many times, as `apply` polls. Target: under 2 µs per evaluation for
//! simple paths.
//!
//! Run: `cargo bench --bench readiness` (optionally `-- N` for another count).

#![expect(clippy::print_stdout, reason = "a bench binary reports on stdout")]

use std::hint::black_box;
use std::time::Instant;

use serde_json::{Value, json};

use chartseq::readiness::expr;
use chartseq::readiness::{Condition, KstatusOptions, Readiness};

fn deployment(ready: i64) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "generation": 7,
            "labels": {"app.kubernetes.io/name": "web", "app.kubernetes.io/instance": "shop"},
            "annotations": {
                "helm.sh/readiness-success": "[\"{.readyReplicas} >= 3\"]",
                "helm.sh/readiness-failure": "[\"{.conditions[?(@.type==\\\"Progressing\\\")].reason} == ProgressDeadlineExceeded\"]"
            }},
        "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "app", "image": "web:1"}]}}},
        "status": {"observedGeneration": 7, "replicas": 3, "updatedReplicas": 3,
            "readyReplicas": ready, "availableReplicas": ready,
            "conditions": [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}
            ]}
    })
}

fn measure(name: &str, n: u64, mut f: impl FnMut(u64) -> bool) {
    // Warm up caches and the branch predictor.
    let mut met = 0u64;
    for i in 0..n / 10 {
        met += u64::from(f(i));
    }
    let start = Instant::now();
    for i in 0..n {
        met += u64::from(f(i));
    }
    let elapsed = start.elapsed();
    #[expect(clippy::cast_precision_loss, reason = "reporting only")]
    let per = elapsed.as_nanos() as f64 / n as f64;
    println!("{name:<58} {per:>8.1} ns/eval  ({n} evals, {elapsed:.2?}, {met} met)");
}

fn main() {
    let n: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let objects = [deployment(1), deployment(3)];
    let pick = |i: u64| &objects[usize::from(i % 2 == 0)];

    let cases = [
        "{.readyReplicas} >= 3",
        "{.status.phase} == Running",
        "{.conditions[?(@.type==\"Available\")].status} == True",
        "{.conditions[*].type} == \"Available Progressing\"",
    ];
    for text in cases {
        let parsed = expr::parse(text).expect("bench expressions parse");
        let mut buffer = String::new();
        measure(&format!("expression {text}"), n, |i| {
            black_box(&parsed).observe_into(black_box(pick(i)), &mut buffer) == Some(true)
        });
    }

    let now = std::time::SystemTime::now();
    let custom = chartseq::model::live::readiness_of(&objects[0], KstatusOptions::default())
        .expect("annotations parse");
    measure(
        "custom readiness status (failure filter + success path)",
        n,
        |i| {
            black_box(&custom).status(black_box(pick(i)), now) == chartseq::readiness::Status::Ready
        },
    );
    let kstatus = Readiness::new(Vec::new(), Vec::new(), KstatusOptions::default());
    measure("kstatus status (Deployment)", n, |i| {
        black_box(&kstatus).status(black_box(pick(i)), now) == chartseq::readiness::Status::Ready
    });
    measure("expression parse (compile)", n / 10, |i| {
        expr::parse(black_box(cases[(i % 4) as usize])).is_ok()
    });
}
