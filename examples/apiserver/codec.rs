//! Request and response bodies: query strings, JSON or YAML bodies, `Status` errors as the
//! API server words them.

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
