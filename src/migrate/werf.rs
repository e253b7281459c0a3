//! werf/nelm → HIP-0025 (DIALECTS.md §7.3, the werf rows), over what werf's planner reads.
//!
//! - Regular resources of the install stage become their level's chain of `weight-N` groups
//!   ([`super::ordinal`]); templated CRDs and Namespaces (werf applies them before everything)
//!   join their level's first group.
//! - On a hook, `werf.io/weight` wins over `helm.sh/hook-weight` in werf: the Helm weight is set
//!   to it. `werf.io/deploy-on` with only hook events becomes `helm.sh/hook`.
//! - A resource with a manual dependency has no weight in werf: it is left without a group
//!   (deployed after its level's groups) and listed as a manual edit.
//! - External dependencies and delete dependencies have no HIP-0025 form: lost.

use super::ordinal::{self, Entry};
use super::{Lost, Manual, Mapping, Res};
use crate::model::annotations::{HOOK, HOOK_WEIGHT};
use crate::model::werf::{DEPLOY_ON, ExternalObject, Stage, WEIGHT};
use crate::model::{DocId, Model, Placement, Resource};
use crate::plan::Plan;

/// `werf.io/deploy-on` events that are Helm hook events of the same name.
const HOOK_EVENTS: [&str; 9] = [
    "pre-install",
    "post-install",
    "pre-upgrade",
    "post-upgrade",
    "pre-rollback",
    "post-rollback",
    "pre-delete",
    "post-delete",
    "test",
];

/// Maps a werf-ordered chart. The plan has already refused what werf rejects.
#[must_use]
pub fn map(model: &Model, _plan: &Plan) -> Mapping {
    let mut mapping = Mapping::default();
    let mut entries = Vec::new();
    for (doc, d) in model.documents.iter().enumerate() {
        let Some(r) = model.resource(doc) else {
            continue;
        };
        if d.placement != Placement::Template {
            continue;
        }
        let carried: Vec<_> = r
            .annotations
            .iter()
            .filter(|a| a.key == WEIGHT || a.key == DEPLOY_ON)
            .map(|a| a.key_loc)
            .collect();
        if !carried.is_empty() {
            mapping.want(doc).carried = carried;
        }
        let anchor = [WEIGHT, DEPLOY_ON, HOOK_WEIGHT]
            .iter()
            .find_map(|k| r.annotation(k))
            .map(|a| a.key_loc);
        lost_dependencies(model, doc, r, &mut mapping);
        if r.werf.stages == [Stage::PrePreInstall] {
            entries.push(Entry {
                doc,
                ordinal: None,
                anchor,
            });
            continue;
        }
        if let Some(hook) = &r.hook {
            // werf.io/weight wins over helm.sh/hook-weight in werf; Helm reads only the latter.
            if let (Some(w), Some(_)) = (r.werf.weight, r.annotation(WEIGHT)) {
                if w != hook.weight {
                    let want = mapping.want(doc);
                    want.anchor = anchor;
                    want.set.push((HOOK_WEIGHT.to_owned(), w.to_string()));
                }
            }
            continue;
        }
        if let Some(events) = r.annotation(DEPLOY_ON).and_then(|a| a.value.as_str()) {
            let events: Vec<&str> = events.split(',').map(str::trim).collect();
            if events.iter().all(|e| HOOK_EVENTS.contains(e)) {
                let want = mapping.want(doc);
                want.anchor = anchor;
                want.set.push((HOOK.to_owned(), events.join(",")));
                if let Some(w) = r.werf.weight.filter(|w| *w != 0) {
                    want.set.push((HOOK_WEIGHT.to_owned(), w.to_string()));
                }
                continue;
            }
            let main = ["install", "upgrade", "rollback"];
            if !main.iter().all(|e| events.contains(e)) {
                mapping.manual.push(Manual {
                    doc,
                    at: r.annotation(DEPLOY_ON).map(|a| a.key_loc),
                    reason: format!(
                        "werf.io/deploy-on `{}` applies it only on some operations; Helm renders regular resources on every one: make it a Helm hook or render it under a value",
                        events.join(",")
                    ),
                    snippet: format!("helm.sh/hook: {}", events.join(",")),
                });
                continue;
            }
        }
        if !r.werf.stages.contains(&Stage::Install) {
            continue;
        }
        if let Some(w) = r.werf.weight {
            entries.push(Entry {
                doc,
                ordinal: Some(w),
                anchor,
            });
        } else {
            let first = r.werf.dependencies.first();
            let key = first.map_or_else(String::new, |d| d.key.value.clone());
            mapping.manual.push(Manual {
                    doc,
                    at: first.map(|d| d.key.loc),
                    reason: format!(
                        "{key} makes werf wait for one resource and ignore the weight: left without a group (deployed after its level's groups); to wait for exactly its target, give it a group of its own that depends on the target's group"
                    ),
                    snippet: "helm.sh/resource-group: <own group>\nhelm.sh/depends-on/resource-groups: '[\"<target's group>\"]'".to_owned(),
                });
        }
    }
    ordinal::chain(model, &entries, "weight", &mut mapping);
    manual_dependencies(model, &mut mapping);
    mapping
}

/// werf's manual dependencies as constraints for the proof: nelm ties each to the first
/// resource of the install stage that matches (its own first-match rule).
fn manual_dependencies(model: &Model, mapping: &mut Mapping) {
    let installed: Vec<DocId> = (0..model.documents.len())
        .filter(|&d| {
            model
                .resource(d)
                .is_some_and(|r| r.werf.stages.contains(&Stage::Install))
        })
        .collect();
    for &doc in &installed {
        let Some(r) = model.resource(doc) else {
            continue;
        };
        for d in r.werf.dependencies.iter().filter(|d| !d.from_external_key) {
            let found = installed.iter().copied().find(|&t| {
                t != doc
                    && model.resource(t).is_some_and(|c| {
                        let version = c.api_version.rsplit('/').next().unwrap_or_default();
                        d.target.matches(
                            &c.id.group,
                            version,
                            &c.id.kind,
                            c.id.namespace.as_deref(),
                            &c.id.name,
                        )
                    })
            });
            if let Some(t) = found {
                mapping.constraints.push((t, doc));
            }
        }
    }
}

/// External and delete dependencies: HIP-0025 can say neither.
fn lost_dependencies(model: &Model, doc: DocId, r: &Resource, mapping: &mut Mapping) {
    let Some(after) = Res::of(model, doc) else {
        return;
    };
    for e in &r.werf.external {
        mapping.lost.push(Lost {
            before: external_res(&e.object),
            after: after.clone(),
            reason: format!(
                "{}: an external dependency; HIP-0025 cannot reference objects outside the release (keep the werf annotation for werf users)",
                e.key
            ),
        });
    }
    for a in &r.annotations {
        let value = a.value.as_str().unwrap_or_default().trim();
        let (before, reason) = if a
            .key
            .starts_with(crate::model::werf::DELETE_DEPENDENCY_PREFIX)
        {
            (
                properties_target(value),
                format!(
                    "{}: a delete dependency; HIP-0025 uninstalls in the reverse of the install order only",
                    a.key
                ),
            )
        } else {
            continue;
        };
        mapping.lost.push(Lost {
            before,
            after: after.clone(),
            reason,
        });
    }
}

/// An external dependency as a resource of the report (the legacy form's kubectl type stands
/// in for the kind).
fn external_res(object: &ExternalObject) -> Res {
    match object {
        ExternalObject::Typed {
            api_version,
            kind,
            namespace,
            name,
        } => res(api_version, kind, namespace.as_deref(), name),
        ExternalObject::Resource {
            resource,
            namespace,
            name,
        } => res("", resource, namespace.as_deref(), name),
    }
}

/// `state=absent,kind=K,name=N,namespace=NS,group=G,version=V`.
fn properties_target(value: &str) -> Res {
    let mut out = res("", "", None, "");
    let (mut group, mut version) = (String::new(), String::new());
    for (key, v) in crate::model::werf::parse_properties(value) {
        let Ok(v) = v else { continue };
        match key.as_str() {
            "kind" => out.kind = v,
            "name" => out.name = v,
            "namespace" => out.namespace = Some(v),
            "group" => group = v,
            "version" => version = v,
            _ => {}
        }
    }
    out.api_version = match (group.is_empty(), version.is_empty()) {
        (true, _) => version,
        (false, true) => group,
        (false, false) => format!("{group}/{version}"),
    };
    out
}

fn res(api: &str, kind: &str, ns: Option<&str>, name: &str) -> Res {
    Res {
        api_version: api.to_owned(),
        kind: kind.to_owned(),
        namespace: ns.map(str::to_owned),
        name: name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external_and_delete_targets_are_read() {
        let r = external_res(&ExternalObject::Typed {
            api_version: "v1".into(),
            kind: "Secret".into(),
            namespace: Some("ns".into()),
            name: "config".into(),
        });
        assert_eq!(
            (r.kind.as_str(), r.namespace.as_deref(), r.name.as_str()),
            ("Secret", Some("ns"), "config")
        );
        let r = external_res(&ExternalObject::Resource {
            resource: "serviceaccount".into(),
            namespace: None,
            name: "default".into(),
        });
        assert_eq!(
            (r.kind.as_str(), r.name.as_str()),
            ("serviceaccount", "default")
        );
        let r = properties_target("state=absent, Kind=Deployment,name=app,group=apps,version=v1");
        assert_eq!(
            (r.api_version.as_str(), r.kind.as_str(), r.name.as_str()),
            ("apps/v1", "Deployment", "app")
        );
    }
}
