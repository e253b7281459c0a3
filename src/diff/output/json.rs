//! The diff as JSON (SPEC §6, `"version": 1`; fields are added, never renamed). `order`
//! lists every (before, after) pair; `findings` have the shape of `chartseq lint --format
//! json` diagnostics.

use std::io::{self, Write};

use serde_json::{Value, json};

use crate::diff::{Diff, OrderChange, Place, Wait};
use crate::lint::ResourceRef;
use crate::report::json::diagnostic;

fn res(r: &ResourceRef) -> Value {
    json!({
        "apiVersion": r.api_version,
        "kind": r.kind,
        "namespace": r.namespace,
        "name": r.name,
    })
}

fn place(p: &Place) -> Value {
    json!({"chart": p.chart, "group": p.group, "phase": p.phase.as_str()})
}

fn wait(w: &Wait) -> Value {
    match w {
        Wait::Kstatus => json!({"engine": "kstatus"}),
        Wait::Custom { success, failure } => {
            json!({"engine": "custom", "success": success, "failure": failure})
        }
    }
}

fn pairs(changes: &[OrderChange]) -> Vec<Value> {
    changes
        .iter()
        .flat_map(|c| {
            c.pairs().map(|(b, a)| {
                json!({
                    "before": res(b),
                    "after": res(a),
                    "before_step": place(&c.before_place),
                    "after_step": place(&c.after_place),
                })
            })
        })
        .collect()
}

pub(super) fn write(out: &mut dyn Write, diff: &Diff) -> io::Result<()> {
    let located = |l: &crate::diff::Located| {
        let mut v = res(&l.resource);
        v["place"] = place(&l.place);
        v
    };
    let doc = json!({
        "version": 1,
        "same": diff.is_empty(),
        "plans": {"old": diff.old_planned, "new": diff.new_planned},
        "resources": {
            "added": diff.added.iter().map(located).collect::<Vec<_>>(),
            "removed": diff.removed.iter().map(located).collect::<Vec<_>>(),
        },
        "moved": diff.moved.iter().map(|m| json!({
            "resource": res(&m.resource),
            "from": place(&m.from),
            "to": place(&m.to),
        })).collect::<Vec<_>>(),
        "order": {
            "gained": pairs(&diff.gained),
            "lost": pairs(&diff.lost),
        },
        "waits": diff.waits.iter().map(|w| json!({
            "resource": res(&w.resource),
            "step": place(&w.place),
            "from": wait(&w.from),
            "to": wait(&w.to),
        })).collect::<Vec<_>>(),
        "findings": {
            "new": diff.new_findings.iter().map(diagnostic).collect::<Vec<_>>(),
            "fixed": diff.fixed_findings.iter().map(diagnostic).collect::<Vec<_>>(),
        },
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}
