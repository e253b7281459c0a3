//! Readiness: the kubectl `JSONPath` differential table, kstatus tables, and `chartseq
//! readiness` end to end.

mod clock_and_hooks;
mod command;
mod expensive;
mod expressions;
mod fuzz;
mod jsonpath_table;
mod kstatus_table;

use serde_json::Value;

use crate::fixture;

/// A fixture YAML file's documents as the JSON objects Kubernetes would see.
pub fn load_objects(rel: &str) -> Vec<Value> {
    let path = fixture(rel);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    chartseq::source::split_stream(&bytes)
        .into_iter()
        .filter_map(|doc| {
            let text = std::str::from_utf8(&bytes[doc.range.clone()]).expect("fixtures are UTF-8");
            chartseq::parse::parse_document(
                text,
                doc.range.start as u32,
                chartseq::parse::Limits::default(),
            )
            .expect("fixtures parse")
            .map(|node| node.to_json())
        })
        .collect()
}
