//! Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`), for what typed
//! clients send and read that way. Helm's release storage is a client-go typed client: helm
//! 4.1.4 creates, updates and deletes its release Secrets and ConfigMaps with protobuf bodies
//! and asks for protobuf answers (`Accept: application/vnd.kubernetes.protobuf,
//! application/json`).
//!
//! The envelope is the four bytes `k8s\0` then a `runtime.Unknown` (type meta, raw message);
//! messages follow `k8s.io/api/core/v1/generated.proto` and
//! `k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto` (v0.35). Covered: Secret,
//! ConfigMap, their lists, Status and DeleteOptions. Any other kind is answered in JSON, which
//! the same `Accept` header allows; a protobuf body of another kind is refused (415).

use serde_json::{Map, Value, json};

const MAGIC: &[u8] = b"k8s\0";

/// The media type.
pub(super) const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

// ---------------------------------------------------------------------------------------------
// Wire format

#[derive(Clone, Copy)]
enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

fn varint(bytes: &[u8], pos: &mut usize) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*pos).ok_or("truncated varint")?;
        *pos += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("varint too long".to_owned())
}

/// The fields of one message, in order.
fn fields(bytes: &[u8]) -> Result<Vec<(u64, Wire<'_>)>, String> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let tag = varint(bytes, &mut pos)?;
        let wire = match tag & 7 {
            0 => Wire::Varint(varint(bytes, &mut pos)?),
            2 => {
                let len = usize::try_from(varint(bytes, &mut pos)?).map_err(|e| e.to_string())?;
                let end = pos.checked_add(len).filter(|&e| e <= bytes.len());
                let end = end.ok_or("truncated field")?;
                let slice = &bytes[pos..end];
                pos = end;
                Wire::Bytes(slice)
            }
            1 => {
                pos += 8;
                Wire::Fixed
            }
            5 => {
                pos += 4;
                Wire::Fixed
            }
            w => return Err(format!("unsupported wire type {w}")),
        };
        out.push((tag >> 3, wire));
    }
    if pos > bytes.len() {
        return Err("truncated message".to_owned());
    }
    Ok(out)
}

fn text(w: Wire<'_>) -> Result<String, String> {
    match w {
        Wire::Bytes(b) => String::from_utf8(b.to_vec()).map_err(|e| e.to_string()),
        _ => Err("expected a string".to_owned()),
    }
}

fn bytes_of(w: Wire<'_>) -> Result<&[u8], String> {
    match w {
        Wire::Bytes(b) => Ok(b),
        _ => Err("expected bytes".to_owned()),
    }
}

fn number(w: Wire<'_>) -> Result<u64, String> {
    match w {
        Wire::Varint(v) => Ok(v),
        _ => Err("expected a number".to_owned()),
    }
}

#[derive(Default)]
struct Out(Vec<u8>);

impl Out {
    fn varint(&mut self, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.0.push(b);
                return;
            }
            self.0.push(b | 0x80);
        }
    }

    fn tag(&mut self, field: u64, wire: u64) {
        self.varint(field << 3 | wire);
    }

    fn bytes(&mut self, field: u64, b: &[u8]) {
        self.tag(field, 2);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
    }

    fn string(&mut self, field: u64, v: &Value) {
        if let Some(s) = v.as_str() {
            self.bytes(field, s.as_bytes());
        }
    }

    fn number(&mut self, field: u64, v: &Value) {
        if let Some(n) = v.as_i64() {
            self.tag(field, 0);
            self.varint(n as u64);
        }
    }

    fn boolean(&mut self, field: u64, v: &Value) {
        if let Some(b) = v.as_bool() {
            self.tag(field, 0);
            self.varint(u64::from(b));
        }
    }

    fn message(&mut self, field: u64, m: &Out) {
        self.bytes(field, &m.0);
    }

    /// A `map<string, string>` (or `bytes` when `binary`, from base64 JSON values).
    fn map(&mut self, field: u64, v: &Value, binary: bool) -> Result<(), String> {
        for (k, value) in v.as_object().into_iter().flatten() {
            let mut entry = Out::default();
            entry.bytes(1, k.as_bytes());
            let s = value.as_str().unwrap_or_default();
            if binary {
                entry.bytes(2, &base64_decode(s)?);
            } else {
                entry.bytes(2, s.as_bytes());
            }
            self.message(field, &entry);
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Messages

fn map_entry(b: &[u8], binary: bool) -> Result<(String, Value), String> {
    let mut key = String::new();
    let mut value = Value::String(String::new());
    for (f, w) in fields(b)? {
        match f {
            1 => key = text(w)?,
            2 if binary => value = Value::String(base64_encode(bytes_of(w)?)),
            2 => value = Value::String(text(w)?),
            _ => {}
        }
    }
    Ok((key, value))
}

fn insert_entry(
    obj: &mut Map<String, Value>,
    key: &str,
    w: Wire<'_>,
    binary: bool,
) -> Result<(), String> {
    let (k, v) = map_entry(bytes_of(w)?, binary)?;
    let map = obj
        .entry(key.to_owned())
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(m) = map.as_object_mut() {
        m.insert(k, v);
    }
    Ok(())
}

fn push(obj: &mut Map<String, Value>, key: &str, v: Value) {
    if let Some(list) = obj
        .entry(key.to_owned())
        .or_insert_with(|| Value::Array(Vec::new()))
        .as_array_mut()
    {
        list.push(v);
    }
}

fn decode_time(b: &[u8]) -> Result<Value, String> {
    let mut secs = 0i64;
    for (f, w) in fields(b)? {
        if f == 1 {
            secs = number(w)? as i64;
        }
    }
    Ok(Value::String(rfc3339(secs)))
}

fn decode_metadata(b: &[u8]) -> Result<Value, String> {
    let mut m = Map::new();
    for (f, w) in fields(b)? {
        match f {
            1 => _ = m.insert("name".into(), json!(text(w)?)),
            2 => _ = m.insert("generateName".into(), json!(text(w)?)),
            3 => _ = m.insert("namespace".into(), json!(text(w)?)),
            5 => _ = m.insert("uid".into(), json!(text(w)?)),
            6 => _ = m.insert("resourceVersion".into(), json!(text(w)?)),
            7 => _ = m.insert("generation".into(), json!(number(w)? as i64)),
            8 => _ = m.insert("creationTimestamp".into(), decode_time(bytes_of(w)?)?),
            11 => insert_entry(&mut m, "labels", w, false)?,
            12 => insert_entry(&mut m, "annotations", w, false)?,
            13 => {
                let mut r = Map::new();
                for (f, w) in fields(bytes_of(w)?)? {
                    match f {
                        1 => _ = r.insert("kind".into(), json!(text(w)?)),
                        3 => _ = r.insert("name".into(), json!(text(w)?)),
                        4 => _ = r.insert("uid".into(), json!(text(w)?)),
                        5 => _ = r.insert("apiVersion".into(), json!(text(w)?)),
                        6 => _ = r.insert("controller".into(), json!(number(w)? != 0)),
                        7 => _ = r.insert("blockOwnerDeletion".into(), json!(number(w)? != 0)),
                        _ => {}
                    }
                }
                push(&mut m, "ownerReferences", Value::Object(r));
            }
            14 => push(&mut m, "finalizers", json!(text(w)?)),
            _ => {}
        }
    }
    // Go writes every field, set or not: empty strings, zero numbers and the zero time
    // stand for "unset", as their JSON form would omit them.
    let zero_time = json!(rfc3339(-62_135_596_800));
    m.retain(|_, v| {
        *v != json!("") && *v != json!(0) && *v != zero_time && *v != json!(rfc3339(0))
    });
    Ok(Value::Object(m))
}

fn decode_secret(b: &[u8]) -> Result<Value, String> {
    let mut m = Map::new();
    m.insert("apiVersion".into(), json!("v1"));
    m.insert("kind".into(), json!("Secret"));
    for (f, w) in fields(b)? {
        match f {
            1 => _ = m.insert("metadata".into(), decode_metadata(bytes_of(w)?)?),
            2 => insert_entry(&mut m, "data", w, true)?,
            3 => {
                let t = text(w)?;
                if !t.is_empty() {
                    m.insert("type".into(), json!(t));
                }
            }
            4 => insert_entry(&mut m, "stringData", w, false)?,
            5 => _ = m.insert("immutable".into(), json!(number(w)? != 0)),
            _ => {}
        }
    }
    Ok(Value::Object(m))
}

fn decode_config_map(b: &[u8]) -> Result<Value, String> {
    let mut m = Map::new();
    m.insert("apiVersion".into(), json!("v1"));
    m.insert("kind".into(), json!("ConfigMap"));
    for (f, w) in fields(b)? {
        match f {
            1 => _ = m.insert("metadata".into(), decode_metadata(bytes_of(w)?)?),
            2 => insert_entry(&mut m, "data", w, false)?,
            3 => insert_entry(&mut m, "binaryData", w, true)?,
            4 => _ = m.insert("immutable".into(), json!(number(w)? != 0)),
            _ => {}
        }
    }
    Ok(Value::Object(m))
}

fn decode_delete_options(b: &[u8]) -> Result<Value, String> {
    let mut m = Map::new();
    m.insert("apiVersion".into(), json!("v1"));
    m.insert("kind".into(), json!("DeleteOptions"));
    for (f, w) in fields(b)? {
        match f {
            1 => _ = m.insert("gracePeriodSeconds".into(), json!(number(w)? as i64)),
            2 => {
                let mut p = Map::new();
                for (f, w) in fields(bytes_of(w)?)? {
                    match f {
                        1 => _ = p.insert("uid".into(), json!(text(w)?)),
                        2 => _ = p.insert("resourceVersion".into(), json!(text(w)?)),
                        _ => {}
                    }
                }
                m.insert("preconditions".into(), Value::Object(p));
            }
            3 => _ = m.insert("orphanDependents".into(), json!(number(w)? != 0)),
            4 => _ = m.insert("propagationPolicy".into(), json!(text(w)?)),
            5 => push(&mut m, "dryRun", json!(text(w)?)),
            _ => {}
        }
    }
    Ok(Value::Object(m))
}

/// A protobuf request body as the JSON object it stands for.
pub(super) fn decode(body: &[u8]) -> Result<Value, String> {
    let rest = body.strip_prefix(MAGIC).ok_or(
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]",
    )?;
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), &[][..]);
    for (f, w) in fields(rest)? {
        match f {
            1 => {
                for (f, w) in fields(bytes_of(w)?)? {
                    match f {
                        1 => api_version = text(w)?,
                        2 => kind = text(w)?,
                        _ => {}
                    }
                }
            }
            2 => raw = bytes_of(w)?,
            _ => {}
        }
    }
    match (api_version.as_str(), kind.as_str()) {
        ("v1", "Secret") => decode_secret(raw),
        ("v1", "ConfigMap") => decode_config_map(raw),
        ("v1" | "meta.k8s.io/v1", "DeleteOptions") => decode_delete_options(raw),
        _ => Err(format!(
            "this test server decodes protobuf for v1 Secret, ConfigMap and DeleteOptions only, not {api_version} {kind}"
        )),
    }
}

fn encode_time(v: &Value) -> Option<Out> {
    let secs = parse_rfc3339(v.as_str()?)?;
    let mut t = Out::default();
    t.tag(1, 0);
    t.varint(secs as u64);
    t.tag(2, 0);
    t.varint(0);
    Some(t)
}

fn encode_metadata(m: &Value) -> Result<Out, String> {
    let mut o = Out::default();
    for (field, key) in [
        (1, "name"),
        (2, "generateName"),
        (3, "namespace"),
        (4, "selfLink"),
        (5, "uid"),
        (6, "resourceVersion"),
    ] {
        o.string(field, &m[key]);
    }
    o.number(7, &m["generation"]);
    for (field, key) in [(8, "creationTimestamp"), (9, "deletionTimestamp")] {
        if let Some(t) = encode_time(&m[key]) {
            o.message(field, &t);
        }
    }
    o.number(10, &m["deletionGracePeriodSeconds"]);
    o.map(11, &m["labels"], false)?;
    o.map(12, &m["annotations"], false)?;
    for r in m["ownerReferences"].as_array().into_iter().flatten() {
        let mut e = Out::default();
        e.string(1, &r["kind"]);
        e.string(3, &r["name"]);
        e.string(4, &r["uid"]);
        e.string(5, &r["apiVersion"]);
        e.boolean(6, &r["controller"]);
        e.boolean(7, &r["blockOwnerDeletion"]);
        o.message(13, &e);
    }
    for f in m["finalizers"].as_array().into_iter().flatten() {
        o.string(14, f);
    }
    for mf in m["managedFields"].as_array().into_iter().flatten() {
        let mut e = Out::default();
        e.string(1, &mf["manager"]);
        e.string(2, &mf["operation"]);
        e.string(3, &mf["apiVersion"]);
        if let Some(t) = encode_time(&mf["time"]) {
            e.message(4, &t);
        }
        e.string(6, &mf["fieldsType"]);
        if mf["fieldsV1"].is_object() {
            let mut raw = Out::default();
            raw.bytes(1, mf["fieldsV1"].to_string().as_bytes());
            e.message(7, &raw);
        }
        e.string(8, &mf["subresource"]);
        o.message(17, &e);
    }
    Ok(o)
}

fn encode_list_meta(m: &Value) -> Out {
    let mut o = Out::default();
    o.string(1, &m["selfLink"]);
    o.string(2, &m["resourceVersion"]);
    o.string(3, &m["continue"]);
    o.number(4, &m["remainingItemCount"]);
    o
}

fn encode_secret(v: &Value) -> Result<Out, String> {
    let mut o = Out::default();
    o.message(1, &encode_metadata(&v["metadata"])?);
    o.map(2, &v["data"], true)?;
    o.string(3, &v["type"]);
    o.boolean(5, &v["immutable"]);
    Ok(o)
}

fn encode_config_map(v: &Value) -> Result<Out, String> {
    let mut o = Out::default();
    o.message(1, &encode_metadata(&v["metadata"])?);
    o.map(2, &v["data"], false)?;
    o.map(3, &v["binaryData"], true)?;
    o.boolean(4, &v["immutable"]);
    Ok(o)
}

fn encode_status(v: &Value) -> Out {
    let mut o = Out::default();
    o.message(1, &encode_list_meta(&v["metadata"]));
    o.string(2, &v["status"]);
    o.string(3, &v["message"]);
    o.string(4, &v["reason"]);
    let d = &v["details"];
    if d.is_object() {
        let mut details = Out::default();
        details.string(1, &d["name"]);
        details.string(2, &d["group"]);
        details.string(3, &d["kind"]);
        for c in d["causes"].as_array().into_iter().flatten() {
            let mut cause = Out::default();
            cause.string(1, &c["reason"]);
            cause.string(2, &c["message"]);
            cause.string(3, &c["field"]);
            details.message(4, &cause);
        }
        details.number(5, &d["retryAfterSeconds"]);
        details.string(6, &d["uid"]);
        o.message(5, &details);
    }
    o.number(6, &v["code"]);
    o
}

/// A JSON response body in protobuf, when its kind is one this server encodes.
pub(super) fn encode(v: &Value) -> Option<Vec<u8>> {
    let api_version = v["apiVersion"].as_str()?;
    let kind = v["kind"].as_str()?;
    let raw = match (api_version, kind) {
        ("v1", "Secret") => encode_secret(v).ok()?,
        ("v1", "ConfigMap") => encode_config_map(v).ok()?,
        ("v1", "Status") => encode_status(v),
        ("v1", "SecretList" | "ConfigMapList") => {
            let mut o = Out::default();
            o.message(1, &encode_list_meta(&v["metadata"]));
            for item in v["items"].as_array().into_iter().flatten() {
                let m = if kind == "SecretList" {
                    encode_secret(item)
                } else {
                    encode_config_map(item)
                };
                o.message(2, &m.ok()?);
            }
            o
        }
        _ => return None,
    };
    let mut type_meta = Out::default();
    type_meta.bytes(1, api_version.as_bytes());
    type_meta.bytes(2, kind.as_bytes());
    let mut unknown = Out::default();
    unknown.message(1, &type_meta);
    unknown.bytes(2, &raw.0);
    unknown.bytes(3, b"");
    unknown.bytes(4, b"");
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&unknown.0);
    Some(out)
}

// ---------------------------------------------------------------------------------------------
// Helpers

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

pub(super) fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, &b)| acc | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(B64[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes().filter(|&c| c != b'=') {
        let v = B64
            .iter()
            .position(|&b| b == c)
            .ok_or_else(|| format!("not base64: {:?}", char::from(c)))?;
        acc = acc << 6 | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits & 0xff) as u8);
        }
    }
    Ok(out)
}

/// Seconds since the epoch of an RFC 3339 time, read as chartseq's readiness clock reads it.
fn parse_rfc3339(t: &str) -> Option<i64> {
    let at = chartseq::readiness::clock::parse_rfc3339(t)?;
    let secs = at.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs();
    i64::try_from(secs).ok()
}

fn rfc3339(secs: i64) -> String {
    chartseq::apply::release::rfc3339(secs, 0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_secret_round_trips() {
        let secret = serde_json::json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "sh.helm.release.v1.shop.v1", "namespace": "default",
                "labels": {"owner": "helm", "name": "shop"}, "resourceVersion": "7",
                "creationTimestamp": "2024-02-29T12:00:01Z"},
            "type": "helm.sh/release.v1", "data": {"release": "SDRzSQ=="}});
        let bytes = super::encode(&secret).expect("encodes");
        assert!(bytes.starts_with(super::MAGIC));
        assert_eq!(super::decode(&bytes).expect("decodes"), secret);
    }
}
