//! `chartseq migrate --format json` (SPEC §6): `{"version": 1, "from", "edits", "manual",
//! "lost", "stricter"}`.

use std::io::{self, Write};

use serde_json::{Value, json};

use crate::migrate::{Migration, Res};

/// As the plan's JSON names it: an object named only by `metadata.generateName` has
/// `"name": null` and its `"generateName"`.
fn res(r: &Res) -> Value {
    if r.generated {
        return json!({
            "apiVersion": r.api_version,
            "kind": r.kind,
            "namespace": r.namespace,
            "name": null,
            "generateName": r.name,
        });
    }
    json!({
        "apiVersion": r.api_version,
        "kind": r.kind,
        "namespace": r.namespace,
        "name": r.name,
    })
}

/// Writes the report as one JSON document.
pub fn write(out: &mut dyn Write, m: &Migration) -> io::Result<()> {
    let value = json!({
        "version": 1,
        "from": m.from.map(crate::plan::Dialect::name),
        "edits": m.edits.iter().map(|e| json!({
            "file": e.file,
            "line": e.line,
            "added": e.added,
            "removed": e.removed,
        })).collect::<Vec<_>>(),
        "manual": m.manual.iter().map(|e| json!({
            "file": e.file,
            "line": e.line,
            "reason": e.reason,
            "snippet": e.snippet,
        })).collect::<Vec<_>>(),
        "lost": m.proof.lost.iter().map(|l| json!({
            "before": res(&l.before),
            "after": res(&l.after),
            "reason": l.reason,
        })).collect::<Vec<_>>(),
        "stricter": m.proof.stricter.iter().map(|s| json!({
            "resource": res(&s.resource),
            "reason": s.reason,
        })).collect::<Vec<_>>(),
    });
    serde_json::to_writer_pretty(&mut *out, &value)?;
    writeln!(out)
}
