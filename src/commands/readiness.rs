//! `chartseq readiness OBJECT.yaml`: judge recorded objects offline with the readiness engine
//! `apply` uses (SPEC §3), so expressions can be tried against `kubectl get -o yaml` output
//! before anything is deployed. Hooks are judged as `apply` judges them (kstatus, their
//! readiness annotations ignored), and at the instant `--now` names (the clock otherwise).

use std::io::{self, Write};
use std::path::PathBuf;
use std::time::SystemTime;

use serde_json::{Value, json};

use super::{Failure, Outcome};
use crate::error::Error;
use crate::parse::{self, Limits};
use crate::readiness::expr::{self, Expression};
use crate::readiness::{
    Condition, ExprKind, Judgement, KstatusOptions, Readiness, ReadinessError, Status,
    annotation_expressions, is_hook, parse_expressions,
};
use crate::safe::one_line;
use crate::source::{LineIndex, split_stream};

/// Output formats of `chartseq readiness`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadinessFormat {
    Text,
    Json,
}

/// What `chartseq readiness` was asked to do.
#[derive(Clone, Debug)]
pub struct ReadinessSettings {
    /// A YAML file, or `-` for stdin.
    pub object: PathBuf,
    /// `--success` expressions; when given they replace the objects' success annotation.
    pub success: Vec<String>,
    /// `--failure` expressions; when given they replace the objects' failure annotation.
    pub failure: Vec<String>,
    pub format: ReadinessFormat,
    pub kstatus: KstatusOptions,
    /// The instant to judge at (`--now`); the system clock when `None`.
    pub now: Option<SystemTime>,
    pub limits: Limits,
}

/// One object read from the input, with where it starts.
struct Object {
    value: Value,
    line: u32,
}

fn read_input(settings: &ReadinessSettings) -> Result<(String, Vec<u8>), Error> {
    let path = &settings.object;
    let cap = crate::source::read::Cap {
        limit: crate::source::read::MAX_INPUT_BYTES,
        raise: None,
    };
    if path.as_os_str() == "-" {
        let bytes = crate::source::read::bounded(io::stdin().lock(), cap.limit)
            .map_err(|e| e.describe("standard input", cap))?;
        return Ok(("-".to_owned(), bytes));
    }
    let name = crate::source::display_path(path);
    let bytes = crate::source::read::file(path, cap.limit).map_err(|e| e.describe(&name, cap))?;
    Ok((name, bytes))
}

/// Every object of the stream; a list (`kind: List`, `PodList`, …) contributes its `items`.
fn load_objects(name: &str, bytes: &[u8], limits: Limits) -> Result<Vec<Object>, Error> {
    let index = LineIndex::new(bytes);
    let mut objects = Vec::new();
    for doc in split_stream(bytes) {
        let Ok(text) = std::str::from_utf8(&bytes[doc.range.clone()]) else {
            let at = index.line_col(bytes, doc.range.start as u32);
            return Err(Error::new(format!(
                "{name}:{}: the document is not valid UTF-8",
                at.line
            )));
        };
        let start = doc.range.start as u32;
        let node = parse::parse_document(text, start, limits).map_err(|e| {
            let at = index.line_col(bytes, e.offset);
            Error::new(format!("{name}:{}:{}: {}", at.line, at.column, e.message))
        })?;
        let Some(node) = node else { continue };
        let line = index.line_col(bytes, node.span.start).line;
        let value = node.to_json();
        if !value.is_object() {
            return Err(Error::new(format!(
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

fn field<'a>(object: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .try_fold(object, |v, k| v.get(k))
        .and_then(Value::as_str)
}

/// `Kind/name (namespace ns)`.
fn display_name(object: &Value) -> String {
    let kind = field(object, &["kind"]).unwrap_or("<no kind>");
    let name = field(object, &["metadata", "name"]).unwrap_or("<no name>");
    match field(object, &["metadata", "namespace"]) {
        Some(ns) => format!("{kind}/{name} (namespace {ns})"),
        None => format!("{kind}/{name}"),
    }
}

/// An invalid expression as a tool error: what, where, and a caret under the character.
fn expression_error(context: &str, e: &ReadinessError) -> Error {
    let error = Error::new(format!("{context}: {}", e.message));
    match &e.expression {
        Some((text, err)) => {
            let caret = expr::caret(text, err.offset)
                .lines()
                .map(|l| format!("  {l}"))
                .collect::<Vec<_>>()
                .join("\n");
            error.with_detail(caret)
        }
        None => error,
    }
}

fn flag_expressions(kind: ExprKind, texts: &[String]) -> Result<Option<Vec<Expression>>, Error> {
    if texts.is_empty() {
        return Ok(None);
    }
    let flag = match kind {
        ExprKind::Success => "--success",
        ExprKind::Failure => "--failure",
    };
    parse_expressions(kind, texts).map(Some).map_err(|e| {
        let n = e.index.map_or(String::new(), |i| format!(" #{}", i + 1));
        expression_error(&format!("{flag}{n}"), &e)
    })
}

/// `chartseq readiness`.
pub fn readiness(
    settings: &ReadinessSettings,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    let success_flags = flag_expressions(ExprKind::Success, &settings.success)?;
    let failure_flags = flag_expressions(ExprKind::Failure, &settings.failure)?;
    let (name, bytes) = read_input(settings)?;
    let objects = load_objects(&name, &bytes, settings.limits)?;
    if objects.is_empty() {
        return Err(Error::new(format!("{name}: no objects to judge")).into());
    }
    let now = settings.now.unwrap_or_else(SystemTime::now);
    let mut judged = Vec::with_capacity(objects.len());
    for object in &objects {
        let who = display_name(&object.value);
        let context = one_line(&format!("{name}:{}: {who}", object.line)).into_owned();
        if is_hook(&object.value) {
            let asked = success_flags.is_some()
                || failure_flags.is_some()
                || [ExprKind::Success, ExprKind::Failure]
                    .into_iter()
                    .any(|kind| has_annotation(&object.value, kind));
            if asked {
                writeln!(
                    err,
                    "warning: {context}: is a hook (helm.sh/hook): Helm ignores readiness \
                     expressions on hooks, so kstatus decides, as Helm's hook readers do \
                     (CS401)"
                )?;
            }
            let readiness = Readiness::for_hook(settings.kstatus);
            judged.push((object, readiness.judge(&object.value, now)));
            continue;
        }
        let side = |kind: ExprKind, flags: &Option<Vec<Expression>>| match flags {
            Some(list) => Ok(list.clone()),
            None => annotation_expressions(&object.value, kind)
                .map_err(|e| expression_error(&context, &e)),
        };
        // A side given on the command line replaces that annotation; the other side still
        // comes from the object.
        let success = side(ExprKind::Success, &success_flags)?;
        let failure = side(ExprKind::Failure, &failure_flags)?;
        let one_sided = match (success.is_empty(), failure.is_empty()) {
            (false, true) => Some(ExprKind::Success),
            (true, false) => Some(ExprKind::Failure),
            _ => None,
        };
        let readiness = Readiness::new(success, failure, settings.kstatus);
        if let Some(side) = one_sided {
            writeln!(
                err,
                "warning: {context}: only {} expressions are set; custom readiness needs both \
                 helm.sh/readiness-success and helm.sh/readiness-failure (or --success and \
                 --failure), so kstatus decides",
                side.as_str()
            )?;
        }
        judged.push((object, readiness.judge(&object.value, now)));
    }
    match settings.format {
        ReadinessFormat::Text => write_text(out, &judged)?,
        ReadinessFormat::Json => write_json(out, &judged)?,
    }
    Ok(if judged.iter().all(|(_, j)| j.status == Status::Ready) {
        Outcome::Clean
    } else {
        Outcome::Findings
    })
}

/// Whether a readiness annotation is set to something other than blanks.
fn has_annotation(object: &Value, kind: ExprKind) -> bool {
    field(object, &["metadata", "annotations", kind.annotation()])
        .is_some_and(|v| !v.trim().is_empty())
}

fn write_text(out: &mut dyn Write, judged: &[(&Object, Judgement)]) -> io::Result<()> {
    for (object, j) in judged {
        // Names, reasons and observed values come from the input: each shown on one line.
        writeln!(
            out,
            "{}: {} [{}] {}",
            one_line(&display_name(&object.value)),
            j.status,
            j.engine.as_str(),
            one_line(&j.reason)
        )?;
        for e in &j.expressions {
            let observed = match &e.observed {
                Some(v) => format!("observed {}", if v.is_empty() { "\"\"" } else { v }),
                None => "not found".to_owned(),
            };
            let met = if e.met { "met" } else { "not met" };
            write!(
                out,
                "  {:<7} {} → {} ({met})",
                e.kind.as_str(),
                one_line(&e.expr),
                one_line(&observed)
            )?;
            if let Some(note) = &e.note {
                write!(out, ": {}", one_line(note))?;
            }
            writeln!(out)?;
        }
    }
    Ok(())
}

fn write_json(out: &mut dyn Write, judged: &[(&Object, Judgement)]) -> io::Result<()> {
    let objects: Vec<Value> = judged
        .iter()
        .map(|(object, j)| {
            let v = &object.value;
            let mut resource = serde_json::Map::new();
            for (key, value) in [
                ("apiVersion", field(v, &["apiVersion"])),
                ("kind", field(v, &["kind"])),
                ("namespace", field(v, &["metadata", "namespace"])),
                ("name", field(v, &["metadata", "name"])),
            ] {
                if let Some(value) = value {
                    resource.insert(key.to_owned(), Value::String(value.to_owned()));
                }
            }
            let expressions: Vec<Value> = j
                .expressions
                .iter()
                .map(|e| {
                    let mut entry = json!({
                        "expr": e.expr,
                        "kind": e.kind.as_str(),
                        "observed": e.observed,
                        "met": e.met,
                    });
                    if let (Some(note), Some(map)) = (&e.note, entry.as_object_mut()) {
                        map.insert("note".to_owned(), Value::String(note.clone()));
                    }
                    entry
                })
                .collect();
            json!({
                "resource": resource,
                "status": j.status.as_str(),
                "engine": j.engine.as_str(),
                "reason": j.reason,
                "expressions": expressions,
            })
        })
        .collect();
    let doc = json!({"version": 1, "objects": objects});
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}
