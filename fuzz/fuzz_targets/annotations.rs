//! Annotation value parsing: list annotations, as strings and as YAML values.
#![no_main]

use chartseq::model::annotations::{AnnotationValue, parse_name_list, parse_yaml_name_list};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = parse_name_list(&AnnotationValue::Str(text.to_owned()));
    if let Ok(Some(node)) = chartseq::parse::parse_document(text, 0, chartseq::parse::Limits::default()) {
        let value = AnnotationValue::from_node(&node);
        let _ = parse_name_list(&value);
        let _ = parse_yaml_name_list(&node);
    }
});
