//! From a [`Mapping`] to line edits of the template files a person owns.
//!
//! Every rendered annotation is traced back to its template line with the mapping lint uses
//! ([`crate::lint::locate::template_loc`]). A line is edited only when it is the literal
//! source of what was rendered (the same text); when the value comes from values
//! (`{{ .Values.syncWave }}`) or the key from a helper, the change is listed as a manual edit
//! with the exact lines and the place. New annotations go right after the source annotation,
//! with its indentation and quoting; a resource with no source annotation gets them in its
//! template's `metadata` (a new `annotations:` block, or the literal one it has). A template
//! line shared by several rendered resources (a `range`) is edited only when they all need the
//! same lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{FileEdit, Manual, ManualEdit, Mapping, Res};
use crate::lint::locate::{line_bounds, template_loc, written_elsewhere};
use crate::model::annotations::{DEPENDS_ON_GROUPS, RESOURCE_GROUP};
use crate::model::{DocId, Model};
use crate::parse::Span;
use crate::source::{FileId, Loc, Origin};

/// One edited template.
#[derive(Clone, Debug)]
pub(super) struct EditedFile {
    /// Path relative to the chart directory.
    pub rel: PathBuf,
    /// Path to write (as the user names it).
    pub disk_path: PathBuf,
    pub new_text: String,
}

/// Every edit, the manual ones, and the diff.
#[derive(Clone, Debug, Default)]
pub(super) struct Edited {
    pub files: Vec<EditedFile>,
    pub edits: Vec<FileEdit>,
    pub manual: Vec<ManualEdit>,
    pub diff: String,
}

/// How a template writes an annotation value.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Quote {
    Double,
    Single,
    Plain,
}

/// A requested line operation: insert `lines` after template line `line` (0-based), and/or
/// remove that line.
#[derive(Clone, Debug, PartialEq)]
struct Op {
    file: FileId,
    line: usize,
    insert: Vec<String>,
    remove: bool,
}

/// Why a change cannot be made in place.
struct Refusal {
    at: Option<Loc>,
    reason: String,
}

pub(super) fn apply(model: &Model, chart_dir: &Path, mapping: &Mapping, drop: bool) -> Edited {
    let mut out = Edited::default();
    // (file, line) → requests, each with its document.
    let mut requests: BTreeMap<(FileId, usize), Vec<(DocId, Op)>> = BTreeMap::new();
    let mut manual: Vec<Manual> = mapping.manual.clone();
    let wants = rechain(model, mapping, drop);
    for (&doc, want) in &wants {
        match plan_doc(model, doc, want, drop) {
            Ok(ops) => {
                for op in ops {
                    requests
                        .entry((op.file, op.line))
                        .or_default()
                        .push((doc, op));
                }
            }
            Err((refusal, snippet)) => {
                let grouped = want.set.iter().any(|(k, _)| k == RESOURCE_GROUP);
                manual.push(Manual {
                    doc,
                    at: refusal.at,
                    reason: if grouped {
                        format!(
                            "{} (then run chartseq migrate again: it chains the groups after this one to it)",
                            refusal.reason
                        )
                    } else {
                        refusal.reason
                    },
                    snippet,
                });
            }
        }
    }
    // A shared template line is edited only when every resource it renders wants the same.
    let mut ops: BTreeMap<FileId, BTreeMap<usize, Op>> = BTreeMap::new();
    for ((file, line), reqs) in requests {
        let first = &reqs[0].1;
        if reqs.iter().all(|(_, op)| op == first) {
            ops.entry(file).or_default().insert(line, first.clone());
            continue;
        }
        for (doc, op) in &reqs {
            manual.push(Manual {
                doc: *doc,
                at: Some(Loc {
                    file,
                    span: line_span(model, file, line),
                }),
                reason: "this template line renders several resources that need different annotations: split them or compute the values in the template".to_owned(),
                snippet: op.insert.join("\n"),
            });
        }
    }
    for (file, lines_ops) in ops {
        let source = model.sources.get(file);
        let old = String::from_utf8_lossy(&source.bytes).into_owned();
        let disk_path = PathBuf::from(&source.name);
        let rel = (source.origin == Origin::Disk)
            .then(|| relative(chart_dir, &disk_path))
            .flatten();
        let Some(rel) = rel else {
            for op in lines_ops.values() {
                manual.push(Manual {
                    doc: usize::MAX,
                    at: Some(Loc {
                        file,
                        span: line_span(model, file, op.line),
                    }),
                    reason: "the template is not a file inside the chart directory (a chart archive, or a link out of the chart): edit it where it lives".to_owned(),
                    snippet: op.insert.join("\n"),
                });
            }
            continue;
        };
        let lines: Vec<&str> = old.split_inclusive('\n').collect();
        let mut new = String::with_capacity(old.len() + 256);
        for (i, line) in lines.iter().enumerate() {
            let op = lines_ops.get(&i);
            if !op.is_some_and(|o| o.remove) {
                new.push_str(line);
            }
            if let Some(op) = op {
                let eol = if line.ends_with("\r\n") { "\r\n" } else { "\n" };
                if !line.ends_with('\n') && !op.insert.is_empty() {
                    new.push_str(eol);
                }
                for added in &op.insert {
                    new.push_str(added);
                    new.push_str(eol);
                }
                out.edits.push(FileEdit {
                    file: source.name.clone(),
                    line: i + 1,
                    added: op.insert.clone(),
                    removed: if op.remove {
                        vec![line.trim_end_matches(['\n', '\r']).to_owned()]
                    } else {
                        Vec::new()
                    },
                });
            }
        }
        let rel_text = rel.to_string_lossy().replace('\\', "/");
        let diff = similar::TextDiff::from_lines(&old, &new);
        out.diff.push_str(
            &diff
                .unified_diff()
                .context_radius(3)
                .header(&format!("a/{rel_text}"), &format!("b/{rel_text}"))
                .to_string(),
        );
        out.files.push(EditedFile {
            rel,
            disk_path,
            new_text: new,
        });
    }
    manual.sort_by_key(|m| m.doc);
    manual.dedup();
    out.manual = manual
        .into_iter()
        .map(|m| locate_manual(model, &m))
        .collect();
    out
}

/// The wants with every group graph closed over the groups that will exist: when no resource
/// of a group can be edited (all of them are manual edits), what depended on it depends on
/// what it depended on instead (in a chain, on the group before it), so that the migrated
/// chart never names a missing group (which would demote its dependents to the unsequenced
/// batch) and keeps every other edge. Running the migration again after the manual edits puts
/// the group back in.
fn rechain(model: &Model, mapping: &Mapping, drop: bool) -> BTreeMap<DocId, super::Want> {
    let mut wants = mapping.wants.clone();
    let value_of =
        |w: &super::Want, key: &str| w.set.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    let list = |v: &str| serde_json::from_str::<Vec<String>>(v).ok();
    let failed: BTreeSet<DocId> = wants
        .iter()
        .filter(|(d, w)| {
            value_of(w, RESOURCE_GROUP).is_some() && plan_doc(model, **d, w, drop).is_err()
        })
        .map(|(d, _)| *d)
        .collect();
    if failed.is_empty() {
        return wants;
    }
    for (chart, groups) in &mapping.chains {
        let here = |d: &DocId| model.documents[*d].chart == *chart;
        let present: BTreeSet<String> = wants
            .iter()
            .filter(|(d, _)| !failed.contains(d) && here(d))
            .filter_map(|(_, w)| value_of(w, RESOURCE_GROUP))
            .collect();
        // What each group of the level waits for, as the mapping made it (its failed members
        // included).
        let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (_, w) in wants.iter().filter(|(d, _)| here(d)) {
            if let Some(g) = value_of(w, RESOURCE_GROUP) {
                let on = value_of(w, DEPENDS_ON_GROUPS)
                    .and_then(|v| list(&v))
                    .unwrap_or_default();
                deps.entry(g).or_default().extend(on);
            }
        }
        // A missing group of the level stands for what it waits for, transitively.
        let resolve = |g: &String| {
            let mut out = Vec::new();
            let mut seen = BTreeSet::new();
            let mut stack = vec![g.clone()];
            while let Some(g) = stack.pop() {
                if !seen.insert(g.clone()) {
                    continue;
                }
                if present.contains(&g) || !groups.contains(&g) {
                    out.push(g);
                } else {
                    stack.extend(deps.get(&g).into_iter().flatten().rev().cloned());
                }
            }
            out
        };
        for (d, w) in &mut wants {
            if failed.contains(d) || !here(d) {
                continue;
            }
            // A list the mapping did not write as JSON is left as it is.
            let Some(old) = value_of(w, DEPENDS_ON_GROUPS).and_then(|v| list(&v)) else {
                continue;
            };
            let mut on: Vec<String> = Vec::new();
            for g in &old {
                for r in resolve(g) {
                    if !on.contains(&r) {
                        on.push(r);
                    }
                }
            }
            if on.is_empty() {
                w.set.retain(|(k, _)| k != DEPENDS_ON_GROUPS);
            } else if on != old {
                let on: Vec<&str> = on.iter().map(String::as_str).collect();
                let new = super::ordinal::json_list(&on);
                for (k, v) in &mut w.set {
                    if k == DEPENDS_ON_GROUPS {
                        v.clone_from(&new);
                    }
                }
            }
        }
    }
    wants
}

/// A manual edit with its file and line.
fn locate_manual(model: &Model, m: &Manual) -> ManualEdit {
    let resource = (m.doc < model.documents.len())
        .then(|| Res::of(model, m.doc))
        .flatten();
    let loc =
        m.at.map(|at| template_loc(model, at).unwrap_or(at))
            .or_else(|| {
                let r = model.resource(m.doc)?;
                Some(template_loc(model, r.kind_loc).unwrap_or(r.kind_loc))
            });
    let (file, line) = match loc {
        Some(loc) => {
            let f = model.sources.get(loc.file);
            (f.name.clone(), f.line_col(loc.span.start).line as usize)
        }
        None => (String::new(), 0),
    };
    ManualEdit {
        file,
        line,
        resource,
        reason: m.reason.clone(),
        snippet: m.snippet.clone(),
    }
}

/// The span of a template line (0-based).
fn line_span(model: &Model, file: FileId, line: usize) -> Span {
    let f = model.sources.get(file);
    let range = f
        .lines()
        .line_range(&f.bytes, u32::try_from(line + 1).unwrap_or(u32::MAX))
        .unwrap_or(0..0);
    Span {
        start: u32::try_from(range.start).unwrap_or(0),
        end: u32::try_from(range.end).unwrap_or(0),
    }
}

/// The template file relative to the chart directory, when it lies inside it.
fn relative(chart_dir: &Path, file: &Path) -> Option<PathBuf> {
    let root = std::fs::canonicalize(chart_dir).ok()?;
    let file = std::fs::canonicalize(file).ok()?;
    super::relative_to(&root, &file)
}

/// The rendered line holding a stream location.
fn rendered_line(model: &Model, loc: Loc) -> String {
    let f = model.sources.get(loc.file);
    let range = line_bounds(&f.bytes, loc.span.start as usize);
    String::from_utf8_lossy(&f.bytes[range]).into_owned()
}

/// One line of a template: its 0-based number, its byte offset and its text.
type Line = (usize, usize, String);

/// The lines of the template document (between `---` lines) that rendered `doc`.
///
/// `helm template` prints the documents of one template in Helm's kind order, not in the
/// order they are written, so the document is recognised by its literal `kind:` and `name:`
/// lines rather than by counting; a template with one document (a `range` included) is that
/// document.
fn segment(model: &Model, doc: DocId) -> Result<(FileId, Vec<Line>), Refusal> {
    let refuse = |reason: String| Refusal {
        at: model.resource(doc).map(|r| r.kind_loc),
        reason,
    };
    let Some(template) = model.documents[doc].template else {
        return Err(refuse(
            "the chart's template for this resource is not on disk".to_owned(),
        ));
    };
    let Some(r) = model.resource(doc) else {
        return Err(refuse("not a resource".to_owned()));
    };
    let f = model.sources.get(template);
    let text = String::from_utf8_lossy(&f.bytes);
    let mut segments: Vec<Vec<Line>> = vec![Vec::new()];
    let mut offset = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        let line = l.trim_end_matches(['\n', '\r']);
        if line.trim_end() == "---" || line.starts_with("--- ") {
            segments.push(Vec::new());
        } else if let Some(seg) = segments.last_mut() {
            seg.push((i, offset, line.to_owned()));
        }
        offset += l.len();
    }
    let has = |seg: &[Line], key: &str, value: &str| {
        seg.iter().any(|(_, _, l)| {
            l.trim()
                .strip_prefix(key)
                .and_then(|rest| rest.strip_prefix(':'))
                .is_some_and(|v| v.trim().trim_matches(['"', '\'']) == value)
        })
    };
    let with_kind = |seg: &Vec<Line>| {
        seg.iter()
            .any(|(_, _, l)| l.trim_start().starts_with("kind:"))
    };
    let documents: Vec<&Vec<Line>> = segments.iter().filter(|s| with_kind(s)).collect();
    let chosen = if documents.len() == 1 {
        Some(documents[0])
    } else {
        let by_kind: Vec<&&Vec<Line>> = documents
            .iter()
            .filter(|s| has(s, "kind", &r.id.kind))
            .collect();
        let by_name: Vec<&&Vec<Line>> = by_kind
            .iter()
            .copied()
            .filter(|s| has(s, "name", &r.id.name))
            .collect();
        match (by_name.as_slice(), by_kind.as_slice()) {
            ([one], _) | ([], [one]) => Some(**one),
            _ => None,
        }
    };
    chosen.map(|seg| (template, seg.clone())).ok_or_else(|| {
        refuse(format!(
            "{} holds several documents and this one cannot be told apart by its literal kind and name: edit it by hand",
            f.name
        ))
    })
}

/// The template line a rendered line was written on, when it is written there literally:
/// (its location, text, 0-based line, indentation).
fn literal_line(
    model: &Model,
    doc: DocId,
    rendered: Loc,
) -> Result<(Loc, String, usize, usize), Refusal> {
    let (file, seg) = segment(model, doc)?;
    let wanted = rendered_line(model, rendered);
    let wanted = wanted.trim();
    let at = |(line, offset, text): &Line| {
        let loc = Loc {
            file,
            span: Span {
                start: u32::try_from(*offset).unwrap_or(u32::MAX),
                end: u32::try_from(offset + text.len()).unwrap_or(u32::MAX),
            },
        };
        (
            loc,
            text.clone(),
            *line,
            text.len() - text.trim_start().len(),
        )
    };
    if let Some(found) = seg.iter().find(|(_, _, l)| l.trim() == wanted) {
        return Ok(at(found));
    }
    let key = wanted
        .split_once(':')
        .map_or(wanted, |(k, _)| k)
        .trim_matches(['"', '\'']);
    let same_key = seg.iter().find(|(_, _, l)| {
        l.trim()
            .split_once(':')
            .is_some_and(|(k, _)| k.trim_matches(['"', '\'']) == key)
    });
    match same_key {
        Some(found) => Err(Refusal {
            at: Some(at(found).0),
            reason: format!(
                "the value is computed (`{}`): set the new annotations where the value is decided",
                found.2.trim()
            ),
        }),
        None => Err(Refusal {
            at: Some(rendered),
            reason: match written_elsewhere(model, rendered) {
                Some(where_) => {
                    format!("the annotation is not written in the template ({where_}): change it there")
                }
                None => "the annotation comes from a helper or from values, not from the template: change it where it is written".to_owned(),
            },
        }),
    }
}

/// The line operations one resource needs, or why they cannot be made in place (with the
/// lines to add by hand).
fn plan_doc(
    model: &Model,
    doc: DocId,
    want: &super::Want,
    drop: bool,
) -> Result<Vec<Op>, (Refusal, String)> {
    let Some(r) = model.resource(doc) else {
        return Ok(Vec::new());
    };
    let mut ops: Vec<Op> = Vec::new();
    let mut new_keys: Vec<(String, String)> = Vec::new();
    let snippet_of = |set: &[(String, String)]| {
        set.iter()
            .map(|(k, v)| format!("{k}: {}", scalar(v, Quote::Plain)))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let all = snippet_of(&want.set);
    for (key, value) in &want.set {
        match r.annotation(key) {
            Some(a) if a.value.as_str() == Some(value.as_str()) => {}
            Some(a) => {
                // A different value already set: replaced on its own line.
                let (t, text, line, indent) =
                    literal_line(model, doc, a.key_loc).map_err(|e| (e, all.clone()))?;
                let quote = quote_of(&text);
                ops.push(Op {
                    file: t.file,
                    line,
                    insert: vec![entry(indent, key, value, quote, key_quote_of(&text))],
                    remove: true,
                });
            }
            None => new_keys.push((key.clone(), value.clone())),
        }
    }
    // Groups first, then readiness, then hooks: the order a person reads them in.
    new_keys.sort_by_key(|(k, _)| key_rank(k));
    if !new_keys.is_empty() {
        let snippet = snippet_of(&new_keys);
        if let Some(anchor) = want.anchor {
            let (t, text, line, indent) =
                literal_line(model, doc, anchor).map_err(|e| (e, snippet.clone()))?;
            let quote = quote_of(&text);
            let insert = new_keys
                .iter()
                .map(|(k, v)| entry(indent, k, v, quote, key_quote_of(&text)))
                .collect();
            merge(
                &mut ops,
                Op {
                    file: t.file,
                    line,
                    insert,
                    remove: false,
                },
            );
        } else {
            let op = metadata_op(model, doc, &new_keys).map_err(|e| (e, snippet.clone()))?;
            merge(&mut ops, op);
        }
    }
    if drop {
        for &carried in &want.carried {
            let (t, _, line, _) = literal_line(model, doc, carried).map_err(|mut e| {
                e.reason = format!("cannot drop the source annotation: {}", e.reason);
                (e, String::new())
            })?;
            match ops.iter_mut().find(|o| o.file == t.file && o.line == line) {
                Some(op) => op.remove = true,
                None => ops.push(Op {
                    file: t.file,
                    line,
                    insert: Vec::new(),
                    remove: true,
                }),
            }
        }
    }
    Ok(ops)
}

/// Adds an operation, joining one at the same line.
fn merge(ops: &mut Vec<Op>, op: Op) {
    match ops
        .iter_mut()
        .find(|o| o.file == op.file && o.line == op.line)
    {
        Some(existing) => existing.insert.extend(op.insert),
        None => ops.push(op),
    }
}

/// New annotations in a resource's template `metadata`.
fn metadata_op(model: &Model, doc: DocId, set: &[(String, String)]) -> Result<Op, Refusal> {
    let refuse = |reason: &str| Refusal {
        at: model.resource(doc).map(|r| r.kind_loc),
        reason: reason.to_owned(),
    };
    let (file, seg) = segment(model, doc)?;
    let Some(start) = seg.iter().position(|(_, _, l)| l.trim_end() == "metadata:") else {
        return Err(refuse(
            "the template has no literal top-level `metadata:` line to add the annotations to",
        ));
    };
    let line = seg[start].0;
    let indent = 0;
    let mut child: Option<usize> = None;
    let mut annotations: Option<usize> = None;
    for (pos, (_, _, l)) in seg.iter().enumerate().skip(start + 1) {
        let trimmed = l.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let ind = l.len() - l.trim_start().len();
        if trimmed.starts_with("{{") {
            if trimmed.contains("annotations") || trimmed.contains("Annotations") {
                // Annotations taken from a value (`{{- with .Values.podAnnotations }}`): the
                // value is where they go.
                let value = trimmed
                    .split_once(".Values.")
                    .map(|(_, rest)| {
                        rest.chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.'))
                            .collect::<String>()
                    })
                    .filter(|v| !v.is_empty());
                return Err(refuse(&match value {
                    Some(v) => format!(
                        "the template's metadata writes annotations from the value `{v}`: set them in it (in values.yaml, or in the values files the chart is deployed with)"
                    ),
                    None => "the template's metadata writes annotations through a template expression: add them there".to_owned(),
                }));
            }
            continue;
        }
        if ind <= indent {
            break;
        }
        if child.is_none() {
            child = Some(ind);
        }
        if Some(ind) == child && trimmed.starts_with("annotations:") {
            annotations = Some(pos);
        }
        if trimmed.contains("annotations") && annotations != Some(pos) {
            return Err(refuse(
                "the template's metadata writes annotations in a way migrate does not edit: add them by hand",
            ));
        }
    }
    let Some(child) = child else {
        return Err(refuse(
            "the template's metadata has no literal key to align the annotations with",
        ));
    };
    if let Some(i) = annotations {
        let next = seg[i + 1..]
            .iter()
            .map(|(_, _, l)| l.as_str())
            .find(|l| !l.trim().is_empty());
        let ok = seg[i].2.trim() == "annotations:"
            && next.is_some_and(|n| {
                let ind = n.len() - n.trim_start().len();
                ind > child && !n.trim().starts_with("{{")
            });
        let Some(next) = next.filter(|_| ok) else {
            return Err(refuse(
                "the template's annotations are not a literal block migrate can add to",
            ));
        };
        let ind = next.len() - next.trim_start().len();
        Ok(Op {
            file,
            line: seg[i].0,
            insert: set
                .iter()
                .map(|(k, v)| entry(ind, k, v, quote_of(next), key_quote_of(next)))
                .collect(),
            remove: false,
        })
    } else {
        let mut insert = vec![format!("{}annotations:", " ".repeat(child))];
        insert.extend(
            set.iter()
                .map(|(k, v)| entry(child + 2, k, v, Quote::Double, Quote::Plain)),
        );
        Ok(Op {
            file,
            line,
            insert,
            remove: false,
        })
    }
}

/// Where a new annotation goes among the others a resource gets.
fn key_rank(key: &str) -> usize {
    [
        RESOURCE_GROUP,
        DEPENDS_ON_GROUPS,
        crate::model::annotations::READINESS_SUCCESS,
        crate::model::annotations::READINESS_FAILURE,
        crate::model::annotations::HOOK,
        crate::model::annotations::HOOK_WEIGHT,
        crate::model::annotations::HOOK_DELETE_POLICY,
    ]
    .iter()
    .position(|k| *k == key)
    .unwrap_or(usize::MAX)
}

/// One `key: value` line.
fn entry(indent: usize, key: &str, value: &str, quote: Quote, key_quote: Quote) -> String {
    let key = match key_quote {
        Quote::Double => format!("\"{key}\""),
        Quote::Single => format!("'{key}'"),
        Quote::Plain => key.to_owned(),
    };
    format!("{}{key}: {}", " ".repeat(indent), scalar(value, quote))
}

/// The quoting of a `key: value` line's key.
fn key_quote_of(line: &str) -> Quote {
    match line.trim_start().chars().next() {
        Some('"') => Quote::Double,
        Some('\'') => Quote::Single,
        _ => Quote::Plain,
    }
}

/// The quoting of a `key: value` line's value.
fn quote_of(line: &str) -> Quote {
    let value = line.split_once(": ").map_or("", |(_, v)| v.trim_start());
    match value.chars().next() {
        Some('"') => Quote::Double,
        Some('\'') => Quote::Single,
        _ => Quote::Plain,
    }
}

/// A string value written in the template's quoting; a value with `"` (a JSON array) is
/// single-quoted, as HIP-0025's examples write it, and a value YAML would not read as this
/// string is quoted.
fn scalar(value: &str, quote: Quote) -> String {
    let single = || format!("'{}'", value.replace('\'', "''"));
    let double = || format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""));
    // A line break or control character cannot stand raw in either quoting (YAML folds it, and
    // Helm splits a template at a `---` line before YAML reads it): escaped in a double-quoted
    // string instead.
    if crate::safe::needs_yaml_escapes(value) {
        return crate::safe::quoted(value);
    }
    if value.contains('"') {
        return single();
    }
    match quote {
        Quote::Single => single(),
        Quote::Double => double(),
        Quote::Plain => {
            let plain_safe = !value.is_empty()
                && value
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./,".contains(c))
                && value.starts_with(|c: char| c.is_ascii_alphabetic())
                && !matches!(
                    value.to_ascii_lowercase().as_str(),
                    "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "null"
                );
            if plain_safe {
                value.to_owned()
            } else {
                double()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_follow_the_templates_quoting() {
        assert_eq!(scalar("wave-0", Quote::Double), "\"wave-0\"");
        assert_eq!(scalar("wave-0", Quote::Single), "'wave-0'");
        assert_eq!(scalar("wave-0", Quote::Plain), "wave-0");
        assert_eq!(scalar("-20", Quote::Plain), "\"-20\"");
        assert_eq!(scalar("yes", Quote::Plain), "\"yes\"");
        for quote in [Quote::Plain, Quote::Single, Quote::Double] {
            assert_eq!(
                scalar("a\n---\nb\u{2028}\"", quote),
                r#""a\n---\nb\u2028\"""#
            );
        }
        assert_eq!(scalar(r#"["wave-0"]"#, Quote::Double), r#"'["wave-0"]'"#);
        assert_eq!(
            quote_of("    argocd.argoproj.io/sync-wave: \"-20\""),
            Quote::Double
        );
        assert_eq!(quote_of("  werf.io/weight: '10'"), Quote::Single);
        assert_eq!(quote_of("  x: 10"), Quote::Plain);
    }

    #[test]
    fn relative_paths_stay_inside_the_chart() {
        let root = std::env::temp_dir();
        assert!(relative(&root, Path::new("/definitely/not/here.yaml")).is_none());
    }
}
