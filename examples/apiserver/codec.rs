//! Request and response bodies: query strings, JSON, YAML or protobuf bodies, `Status` errors
//! as the API server words them, and answers in the encoding the client accepts first (JSON,
//! protobuf for the kinds [`super::protobuf`] covers, or a `Table` as `kubectl get` and
//! `helm status` ask for).

use std::collections::BTreeMap;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use serde_json::{Value, json};

use super::Body;
use super::discovery::ResourceType;

pub(super) fn respond(code: StatusCode, body: &Value) -> Response<Body> {
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())).boxed_unsync())
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed_unsync()))
}

pub(super) fn status_error(
    code: u16,
    reason: &str,
    message: &str,
    details: Value,
) -> Response<Body> {
    respond(
        StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": message, "reason": reason, "details": details, "code": code}),
    )
}

pub(super) fn not_found(ty: &ResourceType, name: &str) -> Response<Body> {
    status_error(
        404,
        "NotFound",
        &format!("{} \"{name}\" not found", ty.qualified()),
        json!({"name": name, "group": ty.group, "kind": ty.plural}),
    )
}

pub(super) fn query(req: &Request<Incoming>) -> BTreeMap<String, String> {
    req.uri()
        .query()
        .unwrap_or_default()
        .split('&')
        .filter(|s| !s.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), decode(v))
        })
        .collect()
}

pub(super) fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                if let Ok(b) = u8::from_str_radix(hex, 16) {
                    out.push(b);
                    i += 2;
                } else {
                    out.push(b'%');
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub(super) fn parse_body(body: &[u8]) -> Result<Value, String> {
    let text = std::str::from_utf8(body).map_err(|e| format!("body is not UTF-8: {e}"))?;
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return Ok(v);
    }
    chartseq::parse::parse_document(text, 0, chartseq::parse::Limits::default())
        .map_err(|e| format!("error decoding YAML: {}", e.message))?
        .map(|n| n.to_json())
        .ok_or_else(|| "empty body".to_owned())
}

pub(super) fn bad_request(message: &str) -> Response<Body> {
    status_error(400, "BadRequest", message, json!({}))
}

/// A request body as JSON: protobuf bodies (typed clients such as Helm's release storage send
/// them) are decoded; a protobuf body this server cannot read is refused as kube-apiserver
/// refuses an unknown format.
pub(super) fn request_body(content_type: &str, body: Bytes) -> Result<Bytes, Response<Body>> {
    if !content_type.starts_with(super::protobuf::MEDIA_TYPE) {
        return Ok(body);
    }
    match super::protobuf::decode(&body) {
        Ok(v) => Ok(Bytes::from(v.to_string())),
        Err(e) => Err(status_error(
            415,
            "UnsupportedMediaType",
            &format!(
                "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf: {e}"
            ),
            json!({}),
        )),
    }
}

/// The media types of an `Accept` header, in order of preference (ties keep their order).
fn accepted(accept: &str) -> Vec<String> {
    let mut types: Vec<(f32, usize, String)> = accept
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .enumerate()
        .map(|(i, t)| {
            let q = t
                .split(';')
                .find_map(|p| p.trim().strip_prefix("q="))
                .and_then(|q| q.parse().ok())
                .unwrap_or(1.0);
            (q, i, t.to_owned())
        })
        .collect();
    types.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    types.into_iter().map(|(_, _, t)| t).collect()
}

/// Re-encodes a JSON answer as the client prefers: the first accepted type this server can
/// produce for the body's kind.
pub(super) async fn negotiate(accept: &str, response: Response<Body>) -> Response<Body> {
    let json_body = response
        .headers()
        .get("content-type")
        .is_some_and(|c| c == "application/json");
    if !json_body {
        return response;
    }
    let (parts, body) = response.into_parts();
    let bytes = body
        .collect()
        .await
        .map(http_body_util::Collected::to_bytes)
        .unwrap_or_default();
    let rebuilt = |content_type: &str, bytes: Bytes| {
        let mut r = Response::from_parts(parts.clone(), Full::new(bytes).boxed_unsync());
        if let Ok(v) = content_type.parse() {
            r.headers_mut().insert("content-type", v);
        }
        r
    };
    let Ok(value) = serde_json::from_slice::<Value>(&bytes) else {
        return rebuilt("application/json", bytes);
    };
    for media in accepted(accept) {
        let params: Vec<&str> = media.split(';').map(str::trim).collect();
        let wants_table = params.contains(&"as=Table");
        match params[0] {
            m if m == super::protobuf::MEDIA_TYPE && !wants_table => {
                if let Some(encoded) = super::protobuf::encode(&value) {
                    return rebuilt(super::protobuf::MEDIA_TYPE, Bytes::from(encoded));
                }
            }
            "application/json" if wants_table => {
                if let Some(table) = table(&value) {
                    return rebuilt("application/json", Bytes::from(table.to_string()));
                }
            }
            "application/json" | "*/*" | "application/*" => break,
            _ => {}
        }
    }
    rebuilt("application/json", bytes)
}

/// An object or a list as the server-side printing `Table` of kube-apiserver's default
/// convertor: a row per object with its name and creation time, and its metadata.
fn table(value: &Value) -> Option<Value> {
    let kind = value["kind"].as_str()?;
    if kind == "Status" {
        return None;
    }
    let objects: Vec<&Value> = if kind.ends_with("List") {
        value["items"].as_array()?.iter().collect()
    } else {
        vec![value]
    };
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let meta = &o["metadata"];
            json!({"cells": [meta["name"], meta["creationTimestamp"]],
                "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                    "metadata": meta}})
        })
        .collect();
    Some(json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": value["metadata"]["resourceVersion"]},
        "columnDefinitions": [
            {"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within a namespace.", "priority": 0},
            {"name": "Created At", "type": "date", "format": "", "description": "CreationTimestamp is a timestamp representing the server time when this object was created.", "priority": 0},
        ],
        "rows": rows,
    }))
}
