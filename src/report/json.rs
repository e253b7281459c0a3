//! The machine-readable report: `{"version": 1, "diagnostics": [...], "summary": {...}}`.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::Reporter;
use crate::lint::{Position, Report};
use crate::model::Model;

pub struct Json;

fn position(p: &Position) -> Value {
    json!({
        "file": p.file,
        "line": p.line,
        "column": p.column,
        "end_line": p.end_line,
        "end_column": p.end_column,
    })
}

/// The template position; `exact` is false when the line is counted in the rendered
/// document (no chart on disk).
fn location(f: &crate::lint::Finding) -> Value {
    let mut location = position(&f.location);
    location["exact"] = json!(!f.guessed && !f.approximate);
    location
}

impl Reporter for Json {
    fn report(&self, out: &mut dyn Write, _model: &Model, report: &Report) -> io::Result<()> {
        write(out, report, &[])
    }

    /// Several charts make one document: their findings in order, the counts summed (the
    /// report reads nothing else from the model), and each values matrix that ran.
    fn report_all(&self, out: &mut dyn Write, runs: &[super::Run<'_>]) -> io::Result<()> {
        let mut merged = Report::default();
        let mut matrices = Vec::new();
        for run in runs {
            merged.findings.extend(run.report.findings.iter().cloned());
            merged.summary.errors += run.report.summary.errors;
            merged.summary.warnings += run.report.summary.warnings;
            merged.summary.infos += run.report.summary.infos;
            if let Some(sets) = &run.report.matrix {
                matrices.push(json!({
                    "chart": run.model.charts.first().map(|c| c.display.as_str()),
                    "renderings": sets.len(),
                    "value_sets": sets,
                }));
            }
        }
        write(out, &merged, &matrices)
    }
}

/// One finding as `lint --format json` writes it (SPEC's DIAGNOSTIC; `diff` reports findings
/// the same way); `value_sets` only when a values matrix ran.
pub(crate) fn diagnostic(f: &crate::lint::Finding) -> Value {
    let mut d = json!({
        "code": f.code,
        "name": f.name,
        "severity": f.severity.as_str(),
        "message": f.message,
        "help": f.help,
        "notes": f.notes,
        "chart": f.chart,
        "resource": f.resource.as_ref().map(|r| json!({
            "apiVersion": r.api_version,
            "kind": r.kind,
            "namespace": r.namespace,
            "name": r.name,
        })),
        "location": location(f),
        "rendered": f.rendered.as_ref().map(|r| json!({
            "file": r.file,
            "line": r.line,
            "column": r.column,
        })),
    });
    if let Some(p) = &f.inserted_by {
        d["inserted_by"] = json!({ "file": p.file, "line": p.line, "column": p.column });
    }
    if !f.value_sets.is_empty() {
        d["value_sets"] = json!(f.value_sets);
    }
    if let Some(reference) = f.reference_severity {
        d["reference_severity"] = json!(reference);
    }
    d
}

/// The document; `values_matrix` only when a matrix ran.
fn write(out: &mut dyn Write, report: &Report, matrices: &[Value]) -> io::Result<()> {
    let diagnostics: Vec<Value> = report.findings.iter().map(diagnostic).collect();
    let mut doc = json!({
        "version": 1,
        "diagnostics": diagnostics,
        "summary": {
            "errors": report.summary.errors,
            "warnings": report.summary.warnings,
            "infos": report.summary.infos,
        },
    });
    if !matrices.is_empty() {
        doc["values_matrix"] = json!(matrices);
    }
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}
