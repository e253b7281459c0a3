//! Chart loading (Chart.yaml, values.yaml, subcharts) from arbitrary archive bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut sources = chartseq::source::SourceMap::default();
    let limits = chartseq::source::chart::ChartLimits { max_archive_bytes: 1 << 22, max_files: 1000, max_depth: 8 };
    let _ = chartseq::source::chart::load_archive("fuzz.tgz", data, &mut sources, limits);
});
