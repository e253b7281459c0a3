//! The plan as JSON (`"version": 1`; fields are added, never renamed).

use std::io::{self, Write};

use serde_json::{Value, json};

use crate::model::{Content, DocId, Model};
use crate::plan::{External, ExternalType, Plan};

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
        // Named only by `generateName` (an Argo CD hook): no name until it is created.
        Content::NotAnObject {
            generated: Some(r),
            message,
            ..
        } => {
            let mut v = json!({
                "apiVersion": r.api_version,
                "kind": r.id.kind,
                "namespace": r.id.namespace,
                "name": null,
                "generateName": r.id.name,
                "source": d.source_path,
                "template": d.template.map(|f| &model.sources.get(f).name),
            });
            // Only Argo CD creates a hook of this kind; for every other reader it is an error.
            if !r.argo.is_hook {
                v["error"] = json!(message);
            }
            v
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
    // Streamed element by element (resources included): a release with a million documents
    // would otherwise hold its whole JSON tree in memory at once.
    let levels = plan.levels.iter().map(|l| {
        Node::Object(vec![
            ("chart", Member::Value(json!(model.charts[l.chart].display))),
            ("depth", Member::Value(json!(l.depth))),
            ("subchart_batches", Member::Value(json!(l.subchart_batches))),
            ("undeclared_subcharts", Member::Value(json!(l.undeclared))),
            ("group_batches", Member::Value(json!(l.group_batches))),
            ("unsequenced", resources(model, &l.unsequenced)),
        ])
    });
    let hooks = plan.hooks.iter().map(|&d| {
        let hook = model.resource(d).and_then(|r| r.hook.as_ref());
        Node::Value(json!({
            "events": hook.map(|h| &h.events),
            "weight": hook.map_or(0, |h| h.weight),
            "delete_policies": hook.map(|h| &h.delete_policies),
            "resource": resource_json(model, d),
        }))
    });
    // Uninstall lists the exact reverse: steps and their resources reversed, `after` naming
    // the steps (in this list) that must be gone first.
    // `step` numbers a step from 1, as the text plan does, and `after_steps` names its
    // prerequisites by those numbers; `after` (kept for readers of earlier output) holds the
    // same as 0-based indices into `steps`.
    let ordered = super::steps_in_order(plan, uninstall);
    let steps = ordered.iter().enumerate().map(|(i, s)| {
        let after_steps: Vec<usize> = s.after.iter().map(|a| a + 1).collect();
        Node::Object(vec![
            ("step", Member::Value(json!(i + 1))),
            (
                "chart",
                // A release-wide dialect's step spans the whole release.
                Member::Value(if plan.dialect.release_wide() {
                    Value::Null
                } else {
                    json!(model.charts[s.chart].display)
                }),
            ),
            ("group", Member::Value(json!(s.group))),
            ("resources", resources(model, &s.resources)),
            ("after", Member::Value(json!(s.after))),
            ("after_steps", Member::Value(json!(after_steps))),
        ])
    });
    let mut top = vec![("version", Member::Value(json!(1)))];
    if plan.dialect != crate::plan::Dialect::Hip {
        top.push(("dialect", Member::Value(json!(plan.dialect.name()))));
    }
    // Argo CD's deletion: the CRDs it leaves (not what it applies first), its delete hooks,
    // and what its annotations keep.
    let argo_uninstall = uninstall && plan.dialect == crate::plan::Dialect::Argo;
    let crds = if argo_uninstall {
        Member::Value(docs_json(model, &crate::plan::argo::kept_crds(model, plan)))
    } else {
        resources(model, &plan.crds)
    };
    top.extend([
        (
            "order",
            Member::Value(json!(if uninstall { "uninstall" } else { "install" })),
        ),
        ("levels", Member::Items(Box::new(levels))),
        ("crds", crds),
        ("hooks", Member::Items(Box::new(hooks))),
        ("steps", Member::Items(Box::new(steps))),
    ]);
    if plan.dialect.release_wide() {
        top.push(("not_installed", resources(model, &plan.not_installed)));
    }
    if argo_uninstall {
        use crate::model::argo::HookType;
        use crate::plan::argo::{delete_hooks, kept_on_uninstall};
        top.push((
            "delete_hooks",
            Member::Value(json!({
                "pre": docs_json(model, &delete_hooks(model, HookType::PreDelete)),
                "post": docs_json(model, &delete_hooks(model, HookType::PostDelete)),
            })),
        ));
        let kept: Vec<Value> = kept_on_uninstall(model, plan)
            .into_iter()
            .filter_map(|(d, why)| {
                Some(json!({"resource": resource_json(model, d), "annotation": why?.written()}))
            })
            .collect();
        top.push(("kept", Member::Value(Value::Array(kept))));
    }
    // Added only when the tool waits for something outside the release.
    if !plan.external.is_empty() {
        let external = plan.external.iter().flat_map(|(&doc, external)| {
            external.iter().map(move |e| {
                Node::Value(json!({
                    "resource": resource_json(model, doc),
                    "annotation": e.key,
                    "waits_for": external_json(e),
                }))
            })
        });
        top.push(("external", Member::Items(Box::new(external))));
    }
    // Added only when the chart writes werf's tracking annotations.
    let tracking = crate::plan::werf::written_tracking(model, plan);
    if !tracking.is_empty() {
        let tracking = tracking.into_iter().map(|(doc, tracked, written)| {
            let t = &tracked.tracking;
            let annotations: serde_json::Map<String, Value> = written
                .iter()
                .map(|(key, value, _)| (key.clone(), json!(value)))
                .collect();
            Node::Value(json!({
                "resource": resource_json(model, doc),
                "fail_mode": t.fail_mode.name(),
                "failures_allowed": t.failures_allowed,
                "no_activity_timeout": t.no_activity.map(crate::duration::go_duration),
                "annotations": annotations,
            }))
        });
        top.push(("tracking", Member::Items(Box::new(tracking))));
    }
    let hooks_as_resources = super::hooks_as_resources(model, plan);
    if plan.dialect.hooks_are_resources() {
        top.push((
            "hooks_as_resources",
            Member::Value(Value::Array(
                hooks_as_resources
                    .iter()
                    .map(|&d| resource_json(model, d))
                    .collect(),
            )),
        ));
    }
    let top = Node::Object(top);
    write_node(out, top, 0)?;
    writeln!(out)
}

/// An object outside the release: `{"apiVersion", "kind", "namespace", "name"}`, or for werf's
/// legacy form `{"resource", "namespace", "name"}` (a kubectl resource type the cluster
/// resolves).
fn external_json(object: &External) -> Value {
    match &object.target {
        ExternalType::Kind { api_version, kind } => json!({
            "apiVersion": api_version,
            "kind": kind,
            "namespace": object.namespace,
            "name": object.name,
        }),
        ExternalType::Resource { .. } => json!({
            "resource": object.resource_type(),
            "namespace": object.namespace,
            "name": object.name,
        }),
    }
}

/// An array of documents, whole.
fn docs_json(model: &Model, docs: &[DocId]) -> Value {
    Value::Array(docs.iter().map(|&d| resource_json(model, d)).collect())
}

/// An array of documents, streamed.
fn resources<'a>(model: &'a Model, docs: &'a [DocId]) -> Member<'a> {
    Member::Items(Box::new(
        docs.iter()
            .map(move |&d| Node::Value(resource_json(model, d))),
    ))
}

/// A JSON value to write: whole, or an object some of whose members are streamed.
enum Node<'a> {
    Value(Value),
    Object(Vec<(&'static str, Member<'a>)>),
}

enum Member<'a> {
    Value(Value),
    Items(Box<dyn Iterator<Item = Node<'a>> + 'a>),
}

/// Writes a node in `serde_json`'s pretty layout, its first line already indented by `indent`.
fn write_node(out: &mut dyn Write, node: Node<'_>, indent: usize) -> io::Result<()> {
    match node {
        Node::Value(value) => {
            let text = serde_json::to_string_pretty(&value).map_err(io::Error::other)?;
            for (i, line) in text.lines().enumerate() {
                if i > 0 {
                    write!(out, "\n{:indent$}", "")?;
                }
                out.write_all(line.as_bytes())?;
            }
            Ok(())
        }
        Node::Object(members) => {
            out.write_all(b"{")?;
            let count = members.len();
            for (i, (key, member)) in members.into_iter().enumerate() {
                write!(out, "\n{:width$}\"{key}\": ", "", width = indent + 2)?;
                match member {
                    Member::Value(value) => write_node(out, Node::Value(value), indent + 2)?,
                    Member::Items(items) => write_items(out, items, indent + 2)?,
                }
                if i + 1 < count {
                    out.write_all(b",")?;
                }
            }
            if count > 0 {
                write!(out, "\n{:indent$}", "")?;
            }
            out.write_all(b"}")
        }
    }
}

fn write_items<'a>(
    out: &mut dyn Write,
    items: impl Iterator<Item = Node<'a>>,
    indent: usize,
) -> io::Result<()> {
    out.write_all(b"[")?;
    let mut first = true;
    for item in items {
        out.write_all(if first { b"\n" } else { b",\n" })?;
        first = false;
        write!(out, "{:width$}", "", width = indent + 2)?;
        write_node(out, item, indent + 2)?;
    }
    if !first {
        write!(out, "\n{:indent$}", "")?;
    }
    out.write_all(b"]")
}
