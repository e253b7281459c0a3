//! The object store's verbs: get, list (field and label selectors), create (POST), replace
//! (PUT), delete (with a uid precondition, and a delay when the scenario sets one), and what
//! the API server itself fills in or refuses.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use hyper::{Response, StatusCode};
use serde_json::{Value, json};

use super::codec::{bad_request, not_found, parse_body, respond, status_error};
use super::discovery::{ResourceType, Target};
use super::merge::{apply, spec_part};
use super::selector::Selector;
use super::validation::validate;
use super::{Body, Key, Server, State, now_rfc3339};

pub(super) fn key(t: &Target, name: &str) -> Key {
    (
        t.ty.group.clone(),
        t.ty.plural.clone(),
        t.namespace.clone(),
        name.to_owned(),
    )
}

pub(super) fn get(server: &Server, t: &Target, name: &str) -> Response<Body> {
    let st = server.lock();
    match st.objects.get(&key(t, name)) {
        Some(s) => respond(StatusCode::OK, &s.object),
        None => {
            drop(st);
            not_found(&t.ty, name)
        }
    }
}

pub(super) fn in_scope(t: &Target, group: &str, plural: &str, ns: Option<&str>) -> bool {
    group == t.ty.group
        && plural == t.ty.plural
        && (t.namespace.is_none() || t.namespace.as_deref() == ns)
}

pub(super) fn list(server: &Server, t: &Target, q: &BTreeMap<String, String>) -> Response<Body> {
    let sel = match Selector::from_query(q) {
        Ok(sel) => sel,
        Err(e) => return bad_request(&e),
    };
    let st = server.lock();
    let items: Vec<Value> = st
        .objects
        .iter()
        .filter(|((g, p, ns, _), s)| in_scope(t, g, p, ns.as_deref()) && sel.matches(&s.object))
        .map(|(_, s)| {
            // As a real API server encodes a list: the type is the list's, not each item's.
            let mut item = s.object.clone();
            if let Some(map) = item.as_object_mut() {
                map.remove("apiVersion");
                map.remove("kind");
            }
            item
        })
        .collect();
    let body = json!({"kind": format!("{}List", t.ty.kind), "apiVersion": t.ty.api_version(),
                      "metadata": {"resourceVersion": st.rv.to_string()}, "items": items});
    drop(st);
    respond(StatusCode::OK, &body)
}

pub(super) fn put(server: &Arc<Server>, t: &Target, name: &str, body: &[u8]) -> Response<Body> {
    let obj = match parse_body(body) {
        Ok(v) => v,
        Err(e) => return bad_request(&e),
    };
    if let Err(resp) = check_identity(t, name, &obj) {
        return resp;
    }
    let mut st = server.lock();
    let Some(stored) = st.objects.get(&key(t, name)) else {
        drop(st);
        return not_found(&t.ty, name);
    };
    if let Some(rv) = obj["metadata"]["resourceVersion"].as_str() {
        if stored.object["metadata"]["resourceVersion"].as_str() != Some(rv) {
            drop(st);
            return status_error(
                409,
                "Conflict",
                &format!(
                    "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
                    t.ty.qualified()
                ),
                json!({"name": name, "kind": t.ty.plural}),
            );
        }
    }
    let mut next = stored.object.clone();
    if t.subresource.as_deref() == Some("status") {
        next["status"] = obj["status"].clone();
    } else {
        let status = next["status"].clone();
        let meta = next["metadata"].clone();
        next = obj;
        next["status"] = status;
        for k in ["uid", "creationTimestamp", "generation", "namespace"] {
            next["metadata"][k] = meta[k].clone();
        }
        if spec_part(&next) != spec_part(&stored.object) {
            next["metadata"]["generation"] = json!(meta["generation"].as_i64().unwrap_or(1) + 1);
        }
    }
    if !t.ty.status {
        if let Some(m) = next.as_object_mut() {
            m.remove("status");
        }
    }
    fold_string_data(&mut next, &t.ty);
    if let Err(refused) = validate(&t.ty, &next) {
        return refused;
    }
    let managers = stored.managers.clone();
    server.record(&mut st, "update", &next, false);
    let out = server.store(
        &mut st,
        &t.ty,
        t.namespace.as_deref(),
        name,
        next,
        managers,
        false,
    );
    drop(st);
    respond(StatusCode::OK, &out)
}

/// Five lower-case letters and digits, different for every resource version.
fn generated_suffix(rv: u64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut n = rv.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (0..5)
        .map(|_| {
            let c = ALPHABET[(n % ALPHABET.len() as u64) as usize];
            n /= ALPHABET.len() as u64;
            char::from(c)
        })
        .collect()
}

pub(super) fn post(
    server: &Arc<Server>,
    t: &Target,
    body: &[u8],
    q: &BTreeMap<String, String>,
) -> Response<Body> {
    let mut obj = match parse_body(body) {
        Ok(v) => v,
        Err(e) => return bad_request(&e),
    };
    let name = match (
        obj["metadata"]["name"].as_str().filter(|n| !n.is_empty()),
        obj["metadata"]["generateName"]
            .as_str()
            .filter(|g| !g.is_empty()),
    ) {
        (Some(name), _) => name.to_owned(),
        // The server names it: the prefix and five characters, as the API server does.
        (None, Some(prefix)) => {
            let name = format!("{prefix}{}", generated_suffix(server.lock().rv));
            obj["metadata"]["name"] = json!(name);
            name
        }
        (None, None) => {
            return bad_request("metadata.name: Required value: name or generateName is required");
        }
    };
    if server.lock().objects.contains_key(&key(t, &name)) {
        return status_error(
            409,
            "AlreadyExists",
            &format!("{} \"{name}\" already exists", t.ty.qualified()),
            json!({"name": name, "kind": t.ty.plural}),
        );
    }
    let manager = format!(
        "{}\u{0}Update",
        q.get("fieldManager").map_or("unknown", String::as_str)
    );
    apply(
        server,
        t,
        &name,
        &obj,
        &manager,
        true,
        q.get("dryRun").is_some_and(|v| v == "All"),
    )
}

pub(super) fn delete(server: &Arc<Server>, t: &Target, name: &str, body: &[u8]) -> Response<Body> {
    let delay = server.scenario.delete_delay_ms.unwrap_or(0);
    let options = if body.is_empty() {
        Value::Null
    } else {
        match parse_body(body) {
            Ok(v) => v,
            Err(e) => return bad_request(&e),
        }
    };
    let mut st = server.lock();
    let Some(stored) = st.objects.get(&key(t, name)) else {
        drop(st);
        return not_found(&t.ty, name);
    };
    if let Some(want) = options["preconditions"]["uid"].as_str() {
        let have = stored.object["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if want != have {
            drop(st);
            return status_error(
                409,
                "Conflict",
                &format!(
                    "Precondition failed: UID in precondition: {want}, UID in object meta: {have}"
                ),
                json!({"name": name, "kind": t.ty.plural}),
            );
        }
    }
    let mut obj = stored.object.clone();
    let managers = stored.managers.clone();
    server.record(&mut st, "delete", &obj, false);
    if delay == 0 && t.ty.kind != "Namespace" {
        remove_object(server, &mut st, &t.ty, t.namespace.as_deref(), name);
        drop(st);
        return respond(
            StatusCode::OK,
            &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                                "details": {"name": name, "group": t.ty.group, "kind": t.ty.plural, "uid": obj["metadata"]["uid"]}}),
        );
    }
    if obj["metadata"]["deletionTimestamp"].is_null() {
        obj["metadata"]["deletionTimestamp"] = json!(now_rfc3339());
        if t.ty.kind == "Namespace" {
            obj["status"]["phase"] = json!("Terminating");
        }
        obj = server.store(
            &mut st,
            &t.ty,
            t.namespace.as_deref(),
            name,
            obj,
            managers,
            false,
        );
        let server = server.clone();
        let ty = t.ty.clone();
        let ns = t.namespace.clone();
        let name = name.to_owned();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(delay.max(10))).await;
            let mut st = server.lock();
            if ty.kind == "Namespace" {
                let inside: Vec<(ResourceType, String)> = st
                    .objects
                    .keys()
                    .filter(|(_, _, n, _)| n.as_deref() == Some(name.as_str()))
                    .filter_map(|(g, p, _, n)| {
                        st.types
                            .iter()
                            .find(|t| &t.group == g && &t.plural == p)
                            .map(|t| (t.clone(), n.clone()))
                    })
                    .collect();
                for (t, n) in inside {
                    remove_object(&server, &mut st, &t, Some(&name), &n);
                }
            }
            remove_object(&server, &mut st, &ty, ns.as_deref(), &name);
        });
    }
    drop(st);
    respond(StatusCode::OK, &obj)
}

pub(super) fn remove_object(
    server: &Server,
    st: &mut State,
    ty: &ResourceType,
    ns: Option<&str>,
    name: &str,
) {
    let key = (
        ty.group.clone(),
        ty.plural.clone(),
        ns.map(str::to_owned),
        name.to_owned(),
    );
    let Some(stored) = st.objects.remove(&key) else {
        return;
    };
    st.rv += 1;
    let mut obj = stored.object;
    obj["metadata"]["resourceVersion"] = json!(st.rv.to_string());
    server.record(st, "gone", &obj, false);
    server.emit(st, ty, ns, "DELETED", obj);
    if ty.kind == "CustomResourceDefinition" {
        let served: Vec<ResourceType> = st
            .types
            .iter()
            .filter(|t| t.crd.as_deref() == Some(name))
            .cloned()
            .collect();
        st.types.retain(|t| t.crd.as_deref() != Some(name));
        for t in served {
            let keys: Vec<Key> = st
                .objects
                .keys()
                .filter(|(g, p, _, _)| *g == t.group && *p == t.plural)
                .cloned()
                .collect();
            for (_, _, ns, n) in keys {
                let key = (t.group.clone(), t.plural.clone(), ns.clone(), n.clone());
                if let Some(s) = st.objects.remove(&key) {
                    st.rv += 1;
                    server.emit(st, &t, ns.as_deref(), "DELETED", s.object);
                }
            }
        }
    }
}

pub(super) fn namespace_exists(st: &State, ns: &str) -> bool {
    st.objects
        .contains_key(&(String::new(), "namespaces".to_owned(), None, ns.to_owned()))
}

/// Checks what the body says about itself against the URL.
pub(super) fn check_identity(t: &Target, name: &str, obj: &Value) -> Result<(), Response<Body>> {
    if obj["apiVersion"].as_str() != Some(&t.ty.api_version())
        || obj["kind"].as_str() != Some(&t.ty.kind)
    {
        return Err(bad_request(&format!(
            "the body of the request was in an unknown format: apiVersion {} kind {} does not match {} {}",
            obj["apiVersion"],
            obj["kind"],
            t.ty.api_version(),
            t.ty.kind
        )));
    }
    if obj["metadata"]["name"].as_str() != Some(name) {
        return Err(bad_request(
            "the name of the object does not match the name on the URL",
        ));
    }
    if let (Some(want), Some(have)) = (&t.namespace, obj["metadata"]["namespace"].as_str()) {
        if want != have {
            return Err(bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
    }
    Ok(())
}

/// What the API server (not a controller) fills in at creation.
/// A Secret's `stringData` folded into `data` (base64; a key in both takes the `stringData`
/// value), as kube-apiserver converts it before storing: `stringData` is write-only and
/// never read back, dry runs included.
pub(super) fn fold_string_data(obj: &mut Value, ty: &ResourceType) {
    if !(ty.group.is_empty() && ty.kind == "Secret") {
        return;
    }
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    let Some(Value::Object(strings)) = map.remove("stringData") else {
        return;
    };
    let data = map
        .entry("data")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    if !data.is_object() {
        *data = Value::Object(serde_json::Map::new());
    }
    if let Some(data) = data.as_object_mut() {
        for (k, v) in strings {
            let text = v.as_str().unwrap_or_default();
            data.insert(
                k,
                Value::String(super::protobuf::base64_encode(text.as_bytes())),
            );
        }
    }
}

pub(super) fn defaults_on_create(obj: &mut Value, ty: &ResourceType, rv: u64) {
    match ty.kind.as_str() {
        "Service" => {
            if obj["spec"]["clusterIP"].is_null() {
                obj["spec"]["clusterIP"] =
                    json!(format!("10.96.{}.{}", (rv / 250) % 250, rv % 250 + 1));
            }
            if obj["spec"]["type"].is_null() {
                obj["spec"]["type"] = json!("ClusterIP");
            }
        }
        "Namespace" => obj["status"] = json!({"phase": "Active"}),
        _ => {}
    }
}
