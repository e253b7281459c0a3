//! The plan as JSON (`"version": 1`; fields are added, never renamed).

use std::io::{self, Write};

use serde_json::{Value, json};

use crate::model::{Content, DocId, Model};
use crate::plan::Plan;

/// `{"apiVersion", "kind", "namespace", "name", "source"}` of a document.
pub(crate) fn resource_json(model: &Model, doc: DocId) -> Value {
    let d = &model.documents[doc];
    match &d.content {
        Content::Resource(r) => json!({
            "apiVersion": r.api_version,
            "kind": r.id.kind,
            "namespace": r.id.namespace,
            "name": r.id.name,
            "source": d.source_path,
            "template": d.template.map(|f| &model.sources.get(f).name),
        }),
        Content::Empty => {
            json!({"apiVersion": null, "kind": null, "namespace": null, "name": null, "source": d.source_path, "empty": true})
        }
        Content::Invalid { message, .. } | Content::NotAnObject { message, .. } => json!({
            "apiVersion": null, "kind": null, "namespace": null, "name": null, "source": d.source_path, "error": message,
        }),
    }
}

pub(super) fn write(
    out: &mut dyn Write,
    model: &Model,
    plan: &Plan,
    uninstall: bool,
) -> io::Result<()> {
    // Written one element at a time: a 50 MB release would otherwise hold its whole JSON
    // tree in memory at once.
    let level_json = |l: &crate::plan::Level| {
        json!({
            "chart": model.charts[l.chart].display,
            "depth": l.depth,
            "subchart_batches": l.subchart_batches,
            "undeclared_subcharts": l.undeclared,
            "group_batches": l.group_batches,
            "unsequenced": l.unsequenced.iter().map(|&d| resource_json(model, d)).collect::<Vec<_>>(),
        })
    };
    let step_json = |i: usize| {
        let s = &plan.steps[i];
        json!({
            "chart": model.charts[s.chart].display,
            "group": s.group,
            "resources": s.resources.iter().map(|&d| resource_json(model, d)).collect::<Vec<_>>(),
            "after": s.after,
        })
    };
    let hook_json = |d: DocId| {
        let hook = model.resource(d).and_then(|r| r.hook.as_ref());
        json!({
            "events": hook.map(|h| &h.events),
            "weight": hook.map_or(0, |h| h.weight),
            "delete_policies": hook.map(|h| &h.delete_policies),
            "resource": resource_json(model, d),
        })
    };
    let order = if uninstall { "uninstall" } else { "install" };
    writeln!(out, "{{\n  \"version\": 1,\n  \"order\": \"{order}\",")?;
    write_array(out, "levels", plan.levels.iter().map(level_json), false)?;
    write_array(
        out,
        "crds",
        plan.crds.iter().map(|&d| resource_json(model, d)),
        false,
    )?;
    write_array(
        out,
        "hooks",
        plan.hooks.iter().map(|&d| hook_json(d)),
        false,
    )?;
    let steps: Box<dyn Iterator<Item = usize>> = if uninstall {
        Box::new((0..plan.steps.len()).rev())
    } else {
        Box::new(0..plan.steps.len())
    };
    write_array(out, "steps", steps.map(step_json), true)?;
    writeln!(out, "}}")
}

/// Writes `"name": [ … ]` as a member of the top-level object, pretty-printed.
fn write_array(
    out: &mut dyn Write,
    name: &str,
    items: impl Iterator<Item = Value>,
    last: bool,
) -> io::Result<()> {
    write!(out, "  \"{name}\": [")?;
    let mut first = true;
    for item in items {
        out.write_all(if first { b"\n" } else { b",\n" })?;
        first = false;
        let text = serde_json::to_string_pretty(&item).map_err(io::Error::other)?;
        for (i, line) in text.lines().enumerate() {
            if i > 0 {
                out.write_all(b"\n")?;
            }
            write!(out, "    {line}")?;
        }
    }
    if !first {
        out.write_all(b"\n  ")?;
    }
    writeln!(out, "]{}", if last { "" } else { "," })
}
