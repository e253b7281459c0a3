use std::collections::BTreeMap;

use crate::lint::{Context, Diagnostic, Sink};
use crate::model::{DocId, Placement};

declare_rule! {
    /// ## What it does
    /// Reports a custom resource whose `CustomResourceDefinition` is rendered from `templates/`
    /// of the same release but is not installed in an earlier step (a group the resource's
    /// group depends on, directly or not). CRDs in `crds/` are applied before everything and
    /// are fine.
    ///
    /// ## Why is this bad?
    /// The API server rejects a custom resource until its CRD is established; in the same
    /// step, or a later one, the install fails with "no matches for kind".
    ///
    /// ## Example
    /// ```yaml
    /// kind: CustomResourceDefinition   # no group
    /// spec: {group: example.com, names: {kind: Widget}}
    /// ---
    /// apiVersion: example.com/v1
    /// kind: Widget                     # no group either: same step
    /// ```
    ///
    /// Use instead: move the CRD to `crds/`, or put it in a group the resource's group
    /// depends on.
    pub static CUSTOM_RESOURCE_BEFORE_CRD = ("CS502", "custom-resource-before-crd", Warning,
        "a custom resource whose CRD is rendered in the same release is not ordered after it", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    let model = ctx.model;
    let mut crds: BTreeMap<(&str, &str), DocId> = BTreeMap::new();
    for (doc, r) in ctx.resources() {
        if let Some(crd) = &r.facts.crd {
            if model.documents[doc].placement == Placement::Template && r.hook.is_none() {
                crds.insert((crd.group.as_str(), crd.kind.as_str()), doc);
            }
        }
    }
    if crds.is_empty() {
        return;
    }
    for (doc, r) in ctx.resources() {
        let Some(&crd_doc) = crds.get(&(r.id.group.as_str(), r.id.kind.as_str())) else {
            continue;
        };
        let Some(step) = ctx.step_of(doc) else {
            continue;
        };
        let Some(crd_step) = ctx.step_of(crd_doc) else {
            continue;
        };
        if ctx.step_before(crd_step, step) {
            continue;
        }
        let Some(crd) = model.resource(crd_doc) else {
            continue;
        };
        sink.push(
            Diagnostic::new(
                &CUSTOM_RESOURCE_BEFORE_CRD,
                model.documents[doc].chart,
                r.kind_loc,
                format!(
                    "the custom resource {} `{}` is installed {} its CustomResourceDefinition `{}`",
                    r.id.kind,
                    r.id.name,
                    if crd_step == step { "in the same step as" } else { "without waiting for" },
                    crd.id.name
                ),
            )
            .doc(doc)
            .label("custom resource")
            .secondary(crd.kind_loc, "its CRD is rendered here")
            .note(format!(
                "the resource is in {}; the CRD is in {}",
                ctx.step_name(step),
                ctx.step_name(crd_step)
            ))
            .help("move the CRD to the chart's crds/ directory, or put it in a group that the resource's group depends on"),
        );
    }
}
