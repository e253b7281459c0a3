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
    let levels: Vec<Value> = plan
        .levels
        .iter()
        .map(|l| {
            json!({
                "chart": model.charts[l.chart].display,
                "depth": l.depth,
                "subchart_batches": l.subchart_batches,
                "undeclared_subcharts": l.undeclared,
                "group_batches": l.group_batches,
                "unsequenced": l.unsequenced.iter().map(|&d| resource_json(model, d)).collect::<Vec<_>>(),
            })
        })
        .collect();
    let step_json = |i: usize| {
        let s = &plan.steps[i];
        json!({
            "chart": model.charts[s.chart].display,
            "group": s.group,
            "resources": s.resources.iter().map(|&d| resource_json(model, d)).collect::<Vec<_>>(),
            "after": s.after,
        })
    };
    let steps: Vec<Value> = if uninstall {
        (0..plan.steps.len()).rev().map(step_json).collect()
    } else {
        (0..plan.steps.len()).map(step_json).collect()
    };
    let hooks: Vec<Value> = plan
        .hooks
        .iter()
        .filter_map(|&d| {
            let hook = model.resource(d)?.hook.as_ref()?;
            Some(json!({"events": hook.events, "weight": hook.weight, "delete_policies": hook.delete_policies, "resource": resource_json(model, d)}))
        })
        .collect();
    let doc = json!({
        "version": 1,
        "order": if uninstall { "uninstall" } else { "install" },
        "levels": levels,
        "crds": plan.crds.iter().map(|&d| resource_json(model, d)).collect::<Vec<_>>(),
        "hooks": hooks,
        "steps": steps,
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}
