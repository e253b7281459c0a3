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
    location["exact"] = json!(!f.guessed);
    location
}

impl Reporter for Json {
    fn report(&self, out: &mut dyn Write, _model: &Model, report: &Report) -> io::Result<()> {
        let diagnostics: Vec<Value> = report
            .findings
            .iter()
            .map(|f| {
                json!({
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
                })
            })
            .collect();
        let doc = json!({
            "version": 1,
            "diagnostics": diagnostics,
            "summary": {
                "errors": report.summary.errors,
                "warnings": report.summary.warnings,
                "infos": report.summary.infos,
            },
        });
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        writeln!(out)
    }

    /// Several charts make one document: their findings in order, the counts summed (the
    /// report reads nothing else from the model).
    fn report_all(&self, out: &mut dyn Write, runs: &[super::Run<'_>]) -> io::Result<()> {
        let Some(first) = runs.first() else {
            let empty = json!({
                "version": 1,
                "diagnostics": [],
                "summary": { "errors": 0, "warnings": 0, "infos": 0 },
            });
            serde_json::to_writer_pretty(&mut *out, &empty)?;
            return writeln!(out);
        };
        let mut merged = Report::default();
        for run in runs {
            merged.findings.extend(run.report.findings.iter().cloned());
            merged.summary.errors += run.report.summary.errors;
            merged.summary.warnings += run.report.summary.warnings;
            merged.summary.infos += run.report.summary.infos;
        }
        self.report(out, first.model, &merged)
    }
}
