use std::collections::BTreeMap;

use crate::lint::{Context, Diagnostic, Sink};
use crate::model::DocId;

declare_rule! {
    /// ## What it does
    /// Reports a workload (`Deployment`, `StatefulSet`, `DaemonSet`, `ReplicaSet`, `Job`,
    /// `CronJob`, `Pod`) whose Pod spec uses a `ConfigMap`, `Secret`, `ServiceAccount` or
    /// `PersistentVolumeClaim` of the same release that is not installed before it: in a later group, in a group
    /// that is not among its prerequisites, or with the unsequenced resources after it.
    /// References are read from `envFrom`, `env[].valueFrom`, `volumes` (configMap, secret,
    /// projected, persistentVolumeClaim), `serviceAccountName` and `imagePullSecrets`, in
    /// init containers too. References marked `optional: true` are skipped.
    ///
    /// ## Why is this bad?
    /// The Pods cannot start until the object exists; if the object's group waits for the
    /// workload (directly or not), the install stalls until the timeout.
    ///
    /// ## Example
    /// ```yaml
    /// kind: Deployment   # helm.sh/resource-group: app
    /// spec: {template: {spec: {containers: [{envFrom: [{configMapRef: {name: settings}}]}]}}}
    /// ---
    /// kind: ConfigMap    # helm.sh/resource-group: config, depends on app
    /// metadata: {name: settings}
    /// ```
    ///
    /// Use instead: put the `ConfigMap` in the workload's group, or in a group the workload's
    /// group depends on.
    pub static REFERENCE_DEPLOYED_LATER = ("CS501", "reference-deployed-later", Warning,
        "a workload uses a ConfigMap, Secret, ServiceAccount or PVC of the same release that is not ordered before it", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    let model = ctx.model;
    // Referenceable objects of the plan by (kind, name).
    let mut targets: BTreeMap<(&str, &str), Vec<DocId>> = BTreeMap::new();
    for (doc, r) in ctx.resources() {
        if r.id.group.is_empty()
            && matches!(
                r.id.kind.as_str(),
                "ConfigMap" | "Secret" | "ServiceAccount" | "PersistentVolumeClaim"
            )
            && ctx.step_of(doc).is_some()
        {
            targets
                .entry((r.id.kind.as_str(), r.id.name.as_str()))
                .or_default()
                .push(doc);
        }
    }
    if targets.is_empty() {
        return;
    }
    for (doc, r) in ctx.resources() {
        if r.facts.pod_refs.is_empty() {
            continue;
        }
        let Some(step) = ctx.step_of(doc) else {
            continue;
        };
        for reference in &r.facts.pod_refs {
            let Some(candidates) = targets.get(&(reference.kind.kind(), reference.name.as_str()))
            else {
                continue;
            };
            let same_namespace = |t: &DocId| {
                model.resource(*t).is_some_and(|tr| {
                    tr.id.namespace.is_none()
                        || r.id.namespace.is_none()
                        || tr.id.namespace == r.id.namespace
                })
            };
            let Some(&target) = candidates.iter().find(|t| same_namespace(t)) else {
                continue;
            };
            let Some(target_step) = ctx.step_of(target) else {
                continue;
            };
            if target_step == step || ctx.step_before(target_step, step) {
                continue;
            }
            let Some(tr) = model.resource(target) else {
                continue;
            };
            let later = ctx.step_before(step, target_step);
            sink.push(
                Diagnostic::new(
                    &REFERENCE_DEPLOYED_LATER,
                    model.documents[doc].chart,
                    reference.loc,
                    format!(
                        "the {} `{}` uses {} `{}` ({}) which is {} it",
                        r.id.kind,
                        r.id.name,
                        tr.id.kind,
                        tr.id.name,
                        reference.path,
                        if later {
                            "installed after"
                        } else {
                            "not ordered before"
                        }
                    ),
                )
                .doc(doc)
                .label(format!("`{}` is used here", tr.id.name))
                .secondary(
                    tr.kind_loc,
                    format!("{} `{}` is declared here", tr.id.kind, tr.id.name),
                )
                .note(format!(
                    "the {} is in {}; the {} is in {}",
                    r.id.kind,
                    ctx.step_name(step),
                    tr.id.kind,
                    ctx.step_name(target_step)
                ))
                .help(format!(
                    "put {} `{}` in the same group as {} `{}`, or in a group that group depends on",
                    tr.id.kind, tr.id.name, r.id.kind, r.id.name
                )),
            );
        }
    }
}
