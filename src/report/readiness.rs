//! `chartseq readiness` output: each object's judgement, as text or JSON.

use std::io::{self, Write};

use serde_json::{Value, json};

use crate::readiness::Judgement;
use crate::safe::one_line;
use crate::source::objects::Object;

fn field<'a>(object: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .try_fold(object, |v, k| v.get(k))
        .and_then(Value::as_str)
}

/// `Kind/name (namespace ns)`.
#[must_use]
pub fn display_name(object: &Value) -> String {
    let kind = field(object, &["kind"]).unwrap_or("<no kind>");
    let name = field(object, &["metadata", "name"]).unwrap_or("<no name>");
    match field(object, &["metadata", "namespace"]) {
        Some(ns) => format!("{kind}/{name} (namespace {ns})"),
        None => format!("{kind}/{name}"),
    }
}

/// One line per object, then one per expression it was judged by.
pub fn write_text(out: &mut dyn Write, judged: &[(&Object, Judgement)]) -> io::Result<()> {
    for (object, j) in judged {
        // Names, reasons and observed values come from the input: each shown on one line.
        writeln!(
            out,
            "{}: {} [{}] {}",
            one_line(&display_name(&object.value)),
            j.status,
            j.engine.as_str(),
            one_line(&j.reason)
        )?;
        for e in &j.expressions {
            let observed = match &e.observed {
                Some(v) => format!("observed {}", if v.is_empty() { "\"\"" } else { v }),
                None => "not found".to_owned(),
            };
            let met = if e.met { "met" } else { "not met" };
            write!(
                out,
                "  {:<7} {} → {} ({met})",
                e.kind.as_str(),
                one_line(&e.expr),
                one_line(&observed)
            )?;
            if let Some(note) = &e.note {
                write!(out, ": {}", one_line(note))?;
            }
            writeln!(out)?;
        }
    }
    Ok(())
}

/// `{"version": 1, "objects": [...]}`.
pub fn write_json(out: &mut dyn Write, judged: &[(&Object, Judgement)]) -> io::Result<()> {
    let objects: Vec<Value> = judged
        .iter()
        .map(|(object, j)| {
            let v = &object.value;
            let mut resource = serde_json::Map::new();
            for (key, value) in [
                ("apiVersion", field(v, &["apiVersion"])),
                ("kind", field(v, &["kind"])),
                ("namespace", field(v, &["metadata", "namespace"])),
                ("name", field(v, &["metadata", "name"])),
            ] {
                if let Some(value) = value {
                    resource.insert(key.to_owned(), Value::String(value.to_owned()));
                }
            }
            let expressions: Vec<Value> = j
                .expressions
                .iter()
                .map(|e| {
                    let mut entry = json!({
                        "expr": e.expr,
                        "kind": e.kind.as_str(),
                        "observed": e.observed,
                        "met": e.met,
                    });
                    if let (Some(note), Some(map)) = (&e.note, entry.as_object_mut()) {
                        map.insert("note".to_owned(), Value::String(note.clone()));
                    }
                    entry
                })
                .collect();
            json!({
                "resource": resource,
                "status": j.status.as_str(),
                "engine": j.engine.as_str(),
                "reason": j.reason,
                "expressions": expressions,
            })
        })
        .collect();
    let doc = json!({"version": 1, "objects": objects});
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}
