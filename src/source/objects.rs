//! Objects as the cluster returns them (`kubectl get -o yaml`, a `List` of them, a YAML
//! stream), read from a file or standard input for `chartseq readiness`.

use std::io;
use std::path::Path;

use serde_json::Value;

use super::{LineIndex, split_stream};
use crate::error::Error;
use crate::parse::{self, Limits};

/// One object read from the input, with where it starts.
pub struct Object {
    pub value: Value,
    /// The line its document starts on.
    pub line: u32,
}

/// The bytes of a file, or of standard input for `-`, with the name to show.
pub fn read(path: &Path) -> Result<(String, Vec<u8>), Error> {
    let cap = super::read::Cap {
        limit: super::read::MAX_INPUT_BYTES,
        raise: None,
    };
    if path.as_os_str() == "-" {
        let bytes = super::read::bounded(io::stdin().lock(), cap.limit)
            .map_err(|e| e.describe("standard input", cap))?;
        return Ok(("-".to_owned(), bytes));
    }
    let name = super::display_path(path);
    let bytes = super::read::file(path, cap.limit).map_err(|e| e.describe(&name, cap))?;
    Ok((name, bytes))
}

/// Every object of the stream; a list (`kind: List`, `PodList`, …) contributes its `items`.
pub fn objects(name: &str, bytes: &[u8], limits: Limits) -> Result<Vec<Object>, Error> {
    let index = LineIndex::new(bytes);
    let mut objects = Vec::new();
    for doc in split_stream(bytes) {
        let Ok(text) = std::str::from_utf8(&bytes[doc.range.clone()]) else {
            let at = index.line_col(bytes, doc.range.start as u32);
            return Err(Error::invalid(format!(
                "{name}:{}: the document is not valid UTF-8",
                at.line
            )));
        };
        let start = doc.range.start as u32;
        let node = parse::parse_document(text, start, limits).map_err(|e| {
            let at = index.line_col(bytes, e.offset);
            Error::invalid(format!("{name}:{}:{}: {}", at.line, at.column, e.message))
        })?;
        let Some(node) = node else { continue };
        let line = index.line_col(bytes, node.span.start).line;
        let value = node.to_json();
        if !value.is_object() {
            return Err(Error::invalid(format!(
                "{name}:{line}: the document is {}, not a Kubernetes object",
                node.describe()
            )));
        }
        // `kubectl get -o yaml` writes `kind: List`; the API itself answers `PodList` & co.
        let has_items = value.get("items").is_some_and(Value::is_array);
        let is_list = match value.get("kind").and_then(Value::as_str) {
            Some(kind) => kind == "List" || (kind.ends_with("List") && has_items),
            None => has_items,
        };
        if is_list {
            let items = value
                .get("items")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            objects.extend(
                items
                    .into_iter()
                    .filter(Value::is_object)
                    .map(|value| Object { value, line }),
            );
        } else {
            objects.push(Object { value, line });
        }
    }
    Ok(objects)
}
