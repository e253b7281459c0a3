//! The stream splitter, the YAML loader and every plan output on arbitrary bytes.
#![no_main]

use chartseq::plan::output::{self, PlanFormat, TemplateOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let limits = chartseq::parse::Limits { max_depth: 200, max_alias_nodes: 10_000, max_document_bytes: 1 << 20 };
    let model = chartseq::model::load_stream("fuzz.yaml", data.to_vec(), limits);
    let (plan, issues) = chartseq::plan::analyze(&model);
    let mut sink = Vec::new();
    if issues.is_empty() {
        for format in [PlanFormat::Text, PlanFormat::Dag, PlanFormat::Json, PlanFormat::Dot, PlanFormat::Mermaid] {
            for verbose in [false, true] {
                let _ = output::write_plan(&mut sink, &model, &plan, format, false, verbose);
            }
        }
        for markers in [false, true] {
            let options = TemplateOptions { markers, ..TemplateOptions::default() };
            let _ = output::write_template(&mut sink, &model, &plan, options);
        }
    } else {
        let error = chartseq::plan::PlanError { issues };
        let _ = output::write_plan_error(&mut sink, &model, &error);
    }
});
