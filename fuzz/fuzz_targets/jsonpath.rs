//! The kubectl JSONPath parser and evaluator on arbitrary templates, against a fixed object.
#![no_main]

use chartseq::readiness::jsonpath::{self, ExecOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(path) = jsonpath::parse(text) else { return };
    let object = serde_json::json!({
        "metadata": {"name": "x", "labels": {"a.b/c": "d"}},
        "status": {"replicas": 3, "ready": 1.5, "ok": true, "conditions": [
            {"type": "Ready", "status": "True"}, {"type": "Progressing", "status": "False"}
        ], "nested": [[1, 2], [3]], "empty": {}, "null": null}
    });
    for allow_missing_keys in [false, true] {
        let _ = path.execute(&object, ExecOptions { allow_missing_keys });
    }
});
