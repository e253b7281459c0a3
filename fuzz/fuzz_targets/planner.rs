//! The planner on arbitrary group graphs: each byte pair is a resource (group) and one edge.
#![no_main]

use std::fmt::Write;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut stream = String::new();
    for (i, pair) in data.chunks(3).enumerate() {
        let group = pair[0] % 16;
        let level = if pair.get(2).is_some_and(|b| b % 4 == 0) { "c/charts/sub" } else { "c" };
        let deps = match pair.get(1) {
            Some(b) if b % 5 == 0 => String::new(),
            Some(b) if b % 7 == 0 => "    helm.sh/depends-on/resource-groups: 'g1, g2'\n".to_owned(),
            Some(b) => format!("    helm.sh/depends-on/resource-groups: '[\"g{}\"]'\n", b % 17),
            None => String::new(),
        };
        let _ = write!(
            stream,
            "---\n# Source: {level}/templates/r{i}.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: r{}\n  annotations:\n    helm.sh/resource-group: g{group}\n{deps}",
            i % 40
        );
    }
    let model = chartseq::model::load_stream("fuzz.yaml", stream.into_bytes(), chartseq::parse::Limits::default());
    let (plan, issues) = chartseq::plan::analyze(&model);
    if issues.is_empty() {
        // Every document is planned exactly once.
        let mut seen = vec![0u8; model.documents.len()];
        for &d in plan.steps.iter().flat_map(|s| &s.resources).chain(&plan.crds).chain(&plan.hooks) {
            seen[d] += 1;
        }
        assert!(seen.iter().all(|&c| c == 1), "a document is lost or planned twice");
        for (i, step) in plan.steps.iter().enumerate() {
            assert!(step.after.iter().all(|&a| a < i), "a step waits for a later step");
        }
    }
});
