//! HIP-0025 readiness expressions: parse, then evaluate against a fixed object.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(expression) = chartseq::readiness::expr::parse(text) else { return };
    let object = serde_json::json!({"status": {"succeeded": 1, "failed": 0, "phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}});
    let mut buffer = String::new();
    let _ = expression.observe_into(&object, &mut buffer);
    let _ = expression.observe_into(&serde_json::json!({"spec": {}}), &mut buffer);
    let _ = expression.ordering_on_non_number();
    let _ = expression.outside_status();
});
