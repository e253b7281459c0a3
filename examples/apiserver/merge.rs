//! Server-side apply and merge patches: field ownership per field manager, conflicts, the
//! `managedFields` a real server reports, and `metadata.generation` bumped when the spec
//! changes.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use hyper::{Response, StatusCode};
use serde_json::{Map, Value, json};

use super::codec::{bad_request, not_found, parse_body, respond, status_error};
use super::controllers::schedule_controller;
use super::discovery::Target;
use super::storage::{check_identity, defaults_on_create, key, namespace_exists};
use super::{Body, FieldPath, Server, now_rfc3339};

pub(super) fn leaves(v: &Value, prefix: &mut Vec<String>, out: &mut BTreeMap<FieldPath, Value>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, child) in m {
                prefix.push(k.clone());
                leaves(child, prefix, out);
                prefix.pop();
            }
        }
        _ => {
            out.insert(prefix.clone(), v.clone());
        }
    }
}

pub(super) fn at<'v>(v: &'v Value, path: &[String]) -> Option<&'v Value> {
    path.iter().try_fold(v, |cur, k| cur.as_object()?.get(k))
}

pub(super) fn set_at(v: &mut Value, path: &[String], value: Value) {
    let mut cur = v;
    for (i, k) in path.iter().enumerate() {
        if !cur.is_object() {
            *cur = Value::Object(Map::new());
        }
        let Some(m) = cur.as_object_mut() else { return };
        if i + 1 == path.len() {
            m.insert(k.clone(), value);
            return;
        }
        cur = m
            .entry(k.clone())
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

pub(super) fn remove_at(v: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = v;
    for k in parents {
        match cur.as_object_mut().and_then(|m| m.get_mut(k)) {
            Some(next) => cur = next,
            None => return,
        }
    }
    if let Some(m) = cur.as_object_mut() {
        m.remove(last);
    }
}

pub(super) fn managed_fields(
    managers: &BTreeMap<String, BTreeSet<FieldPath>>,
    api_version: &str,
) -> Value {
    let mut out = Vec::new();
    for (manager, paths) in managers {
        let mut tree = Value::Object(Map::new());
        for p in paths {
            let f: Vec<String> = p.iter().map(|k| format!("f:{k}")).collect();
            set_at(&mut tree, &f, json!({}));
        }
        let (manager, operation) = manager.split_once('\u{0}').unwrap_or((manager, "Apply"));
        out.push(
            json!({"manager": manager, "operation": operation, "apiVersion": api_version,
                        "time": now_rfc3339(), "fieldsType": "FieldsV1", "fieldsV1": tree}),
        );
    }
    Value::Array(out)
}

/// The fields of an object that bump `metadata.generation` when they change.
pub(super) fn spec_part(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("metadata");
        m.remove("status");
    }
    v
}

pub(super) fn patch(
    server: &Arc<Server>,
    t: &Target,
    name: &str,
    content_type: &str,
    body: &[u8],
    q: &BTreeMap<String, String>,
) -> Response<Body> {
    let obj = match parse_body(body) {
        Ok(v) => v,
        Err(e) => return bad_request(&e),
    };
    let dry_run = q.get("dryRun").is_some_and(|v| v == "All");
    if content_type.starts_with("application/apply-patch") {
        let Some(manager) = q.get("fieldManager").filter(|m| !m.is_empty()) else {
            return bad_request(
                "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
            );
        };
        let force = q.get("force").is_some_and(|v| v == "true");
        apply(server, t, name, &obj, manager, force, dry_run)
    } else if content_type.starts_with("application/merge-patch+json")
        || content_type.starts_with("application/strategic-merge-patch+json")
    {
        let mut st = server.lock();
        let Some(stored) = st.objects.get(&key(t, name)) else {
            drop(st);
            return not_found(&t.ty, name);
        };
        let mut merged = stored.object.clone();
        merge_patch(&mut merged, &obj);
        let managers = stored.managers.clone();
        if t.subresource.as_deref() != Some("status") && t.ty.status {
            merged["status"] = stored.object["status"].clone();
        }
        if spec_part(&merged) != spec_part(&stored.object) {
            let g = merged["metadata"]["generation"].as_i64().unwrap_or(1);
            merged["metadata"]["generation"] = json!(g + 1);
        }
        if dry_run {
            return respond(StatusCode::OK, &merged);
        }
        let out = server.store(
            &mut st,
            &t.ty,
            t.namespace.as_deref(),
            name,
            merged,
            managers,
            false,
        );
        drop(st);
        schedule_controller(server, &t.ty, t.namespace.as_deref(), name);
        respond(StatusCode::OK, &out)
    } else {
        status_error(
            415,
            "UnsupportedMediaType",
            &format!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml; got {content_type}"
            ),
            json!({}),
        )
    }
}

pub(super) fn merge_patch(target: &mut Value, patch: &Value) {
    match patch {
        Value::Object(p) => {
            if !target.is_object() {
                *target = Value::Object(Map::new());
            }
            if let Some(t) = target.as_object_mut() {
                for (k, v) in p {
                    if v.is_null() {
                        t.remove(k);
                    } else {
                        merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
                    }
                }
            }
        }
        other => *target = other.clone(),
    }
}

pub(super) fn apply(
    server: &Arc<Server>,
    t: &Target,
    name: &str,
    config: &Value,
    manager: &str,
    force: bool,
    dry_run: bool,
) -> Response<Body> {
    if let Err(resp) = check_identity(t, name, config) {
        return resp;
    }
    let status_only = t.subresource.as_deref() == Some("status");
    let mut config = config.clone();
    if let Some(meta) = config["metadata"].as_object_mut() {
        for k in [
            "managedFields",
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "generation",
            "deletionTimestamp",
        ] {
            meta.remove(k);
        }
    }
    if t.ty.status && !status_only {
        if let Some(m) = config.as_object_mut() {
            m.remove("status");
        }
    }
    let mut st = server.lock();
    if let Some(ns) = &t.namespace {
        if !namespace_exists(&st, ns) {
            drop(st);
            return status_error(
                404,
                "NotFound",
                &format!("namespaces \"{ns}\" not found"),
                json!({"name": ns, "kind": "namespaces"}),
            );
        }
    }
    let existing = st.objects.get(&key(t, name));
    if existing.is_some_and(|s| !s.object["metadata"]["deletionTimestamp"].is_null()) {
        drop(st);
        return status_error(
            409,
            "Conflict",
            &format!(
                "object is being deleted: {} \"{name}\" already exists",
                t.ty.qualified()
            ),
            json!({"name": name, "kind": t.ty.plural}),
        );
    }
    let created = existing.is_none();
    let (mut live, mut managers) = match existing {
        Some(s) => (s.object.clone(), s.managers.clone()),
        None => (json!({}), BTreeMap::new()),
    };
    let mut applied = BTreeMap::new();
    leaves(&config, &mut Vec::new(), &mut applied);
    for k in [
        ["metadata", "name"],
        ["metadata", "namespace"],
        ["apiVersion", ""],
        ["kind", ""],
    ] {
        let p: FieldPath = k
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| (*s).to_owned())
            .collect();
        applied.remove(&p);
    }
    let mut conflicts = Vec::new();
    for (p, value) in &applied {
        for (other, owned) in &managers {
            if other != manager && owned.contains(p) && at(&live, p) != Some(value) {
                conflicts.push((other.clone(), p.clone()));
            }
        }
    }
    if !conflicts.is_empty() && !force {
        drop(st);
        let list: Vec<String> = conflicts
            .iter()
            .map(|(m, p)| {
                format!(
                    "conflict with \"{}\" using {}: .{}",
                    m.split('\u{0}').next().unwrap_or(m),
                    t.ty.api_version(),
                    p.join(".")
                )
            })
            .collect();
        let message = if list.len() == 1 {
            format!("Apply failed with 1 conflict: {}", list[0])
        } else {
            format!(
                "Apply failed with {} conflicts: {}",
                list.len(),
                list.join("\n")
            )
        };
        return status_error(
            409,
            "Conflict",
            &message,
            json!({"name": name, "group": t.ty.group, "kind": t.ty.plural}),
        );
    }
    for (other, p) in &conflicts {
        if let Some(owned) = managers.get_mut(other) {
            owned.remove(p);
        }
    }
    let before = live.clone();
    let previous = managers.remove(manager).unwrap_or_default();
    for p in previous.iter().filter(|p| !applied.contains_key(*p)) {
        if !managers.values().any(|o| o.contains(p)) {
            remove_at(&mut live, p);
        }
    }
    for (p, value) in &applied {
        set_at(&mut live, p, value.clone());
    }
    managers.insert(manager.to_owned(), applied.keys().cloned().collect());
    managers.retain(|_, paths| !paths.is_empty());
    live["apiVersion"] = json!(t.ty.api_version());
    live["kind"] = json!(t.ty.kind);
    live["metadata"]["name"] = json!(name);
    if let Some(ns) = &t.namespace {
        live["metadata"]["namespace"] = json!(ns);
    }
    super::storage::fold_string_data(&mut live, &t.ty);
    if created {
        live["metadata"]["uid"] = json!(format!("00000000-0000-4000-8000-{:012x}", st.rv + 1));
        live["metadata"]["creationTimestamp"] = json!(now_rfc3339());
        live["metadata"]["generation"] = json!(1);
        defaults_on_create(&mut live, &t.ty, st.rv);
    } else if spec_part(&live) != spec_part(&before) {
        let g = live["metadata"]["generation"].as_i64().unwrap_or(1);
        live["metadata"]["generation"] = json!(g + 1);
    }
    if let Err(refused) = super::validation::validate(&t.ty, &live) {
        drop(st);
        return refused;
    }
    if dry_run {
        server.record(&mut st, "apply", &live, true);
        drop(st);
        return respond(
            if created {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            },
            &live,
        );
    }
    st.counters.applies += 1;
    server.record(&mut st, "apply", &live, false);
    let changed = created || live != before;
    let out = if changed {
        server.store(
            &mut st,
            &t.ty,
            t.namespace.as_deref(),
            name,
            live,
            managers,
            created,
        )
    } else {
        before
    };
    drop(st);
    if changed && !status_only {
        schedule_controller(server, &t.ty, t.namespace.as_deref(), name);
    }
    respond(
        if created {
            StatusCode::CREATED
        } else {
            StatusCode::OK
        },
        &out,
    )
}
