//! The requests: hover, definition, references, completion and code actions, each answered
//! from the session's last analysis and the written names of the files, never waiting for a
//! render.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use lsp_server::{ErrorCode, Request, Response};
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CompletionItem, CompletionItemKind,
    Diagnostic, Hover, HoverContents, Location, MarkupContent, MarkupKind, Position, Range,
    TextEdit, Url, WorkspaceEdit,
};

use super::analysis::{self, DialectStep};
use super::index::{self, Kind, Occurrence};
use super::session::{Session, path_of};
use crate::model::annotations::{
    DEPENDS_ON_GROUPS, DEPENDS_ON_GROUPS_ONE_SLASH, DEPENDS_ON_SUBCHARTS, READINESS_FAILURE,
    READINESS_SUCCESS, RESOURCE_GROUP,
};

/// Answers one request.
pub fn handle(session: &Session, request: &Request) -> Response {
    let id = request.id.clone();
    let params = &request.params;
    let position = || -> Option<(PathBuf, Position)> {
        let uri = params.pointer("/textDocument/uri")?.as_str()?;
        let path = path_of(&Url::parse(uri).ok()?)?;
        let position: Position = serde_json::from_value(params.get("position")?.clone()).ok()?;
        Some((path, position))
    };
    let result = match request.method.as_str() {
        "textDocument/hover" => position().map(|(p, at)| to_value(hover(session, &p, at))),
        "textDocument/definition" => {
            position().map(|(p, at)| to_value(definition(session, &p, at)))
        }
        "textDocument/references" => position().map(|(p, at)| {
            let declaration = params
                .pointer("/context/includeDeclaration")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false);
            to_value(references(session, &p, at, declaration))
        }),
        "textDocument/completion" => {
            position().map(|(p, at)| to_value(completion(session, &p, at)))
        }
        "textDocument/codeAction" => code_actions(session, params).map(to_value),
        _ => {
            return Response::new_err(
                id,
                ErrorCode::MethodNotFound as i32,
                format!("chartseq lsp does not answer {}", request.method),
            );
        }
    };
    match result {
        Some(value) => Response::new_ok(id, value),
        None => Response::new_err(
            id,
            ErrorCode::InvalidParams as i32,
            "the request names no file position".to_owned(),
        ),
    }
}

fn to_value<T: serde::Serialize>(value: T) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

fn range(o: &Occurrence) -> Range {
    Range {
        start: Position {
            line: o.line,
            character: o.start,
        },
        end: Position {
            line: o.line,
            character: o.end,
        },
    }
}

fn location(path: &Path, o: &Occurrence) -> Option<Location> {
    Some(Location {
        uri: Url::from_file_path(path).ok()?,
        range: range(o),
    })
}

/// The chart level directory of a file (`Chart.yaml`'s own directory for it).
fn level_of(path: &Path) -> Option<PathBuf> {
    index::chart_dir(path)
}

/// The occurrence under the cursor, with the file's chart level and root.
fn at<'s>(
    session: &'s Session,
    path: &Path,
    pos: Position,
) -> Option<(&'s Occurrence, PathBuf, PathBuf)> {
    let occurrence = session.file_index(path)?.at(pos.line, pos.character)?;
    Some((occurrence, level_of(path)?, index::chart_root(path)?))
}

/// Every occurrence of a chart level matching `want`.
fn in_level(
    session: &Session,
    root: &Path,
    level: &Path,
    want: impl Fn(&Occurrence) -> bool,
) -> Vec<Location> {
    let mut out = Vec::new();
    for (path, file) in session.level_files(root, level) {
        for o in file.occurrences.iter().filter(|o| want(o)) {
            out.extend(location(path, o));
        }
    }
    out
}

fn definition(session: &Session, path: &Path, pos: Position) -> Vec<Location> {
    let Some((o, level, root)) = at(session, path, pos) else {
        return Vec::new();
    };
    let name = o.name.clone();
    match o.kind {
        Kind::GroupRef | Kind::GroupDecl => in_level(session, &root, &level, |x| {
            x.kind == Kind::GroupDecl && x.name == name
        }),
        Kind::SubchartRef => in_level(session, &root, &level, |x| {
            matches!(x.kind, Kind::DependencyName | Kind::DependencyAlias)
                && x.effective.as_deref() == Some(name.as_str())
                && (x.kind == Kind::DependencyAlias || x.name == name)
        }),
        Kind::DependencyName | Kind::DependencyAlias => location(path, o).into_iter().collect(),
        Kind::ReadinessSuccess | Kind::ReadinessFailure => Vec::new(),
    }
}

fn references(session: &Session, path: &Path, pos: Position, declaration: bool) -> Vec<Location> {
    let Some((o, level, root)) = at(session, path, pos) else {
        return Vec::new();
    };
    match o.kind {
        Kind::GroupRef | Kind::GroupDecl => {
            let name = o.name.clone();
            in_level(session, &root, &level, |x| {
                x.name == name
                    && (x.kind == Kind::GroupRef || declaration && x.kind == Kind::GroupDecl)
            })
        }
        Kind::SubchartRef | Kind::DependencyName | Kind::DependencyAlias => {
            let name = o.effective.clone().unwrap_or_else(|| o.name.clone());
            in_level(session, &root, &level, |x| {
                (x.kind == Kind::SubchartRef && x.name == name)
                    || declaration
                        && x.kind == Kind::DependencyAlias
                        && x.effective.as_deref() == Some(name.as_str())
                    || declaration
                        && x.kind == Kind::DependencyName
                        && x.effective.as_deref() == Some(name.as_str())
                        && x.name == name
            })
        }
        Kind::ReadinessSuccess | Kind::ReadinessFailure => Vec::new(),
    }
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "nothing".to_owned()
    } else {
        items
            .iter()
            .map(|i| format!("`{i}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn hover(session: &Session, path: &Path, pos: Position) -> Option<Hover> {
    let root = index::chart_root(path)?;
    let chart = session.charts.get(&root)?;
    let text = match at(session, path, pos) {
        Some((o, level, _)) => hover_text(session, chart, path, o, &level),
        None => dialect_hover(session, chart, path, pos.line)?,
    };
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: text,
        }),
        range: None,
    })
}

fn hover_text(
    session: &Session,
    chart: &super::session::ChartState,
    path: &Path,
    o: &Occurrence,
    level: &Path,
) -> String {
    let good = chart.good.as_ref();
    let stale = chart.last.as_ref().is_some_and(|l| l.render_failed);
    let mut text = match o.kind {
        Kind::GroupRef | Kind::GroupDecl => {
            let Some(info) =
                good.and_then(|g| g.groups.get(&(level.to_path_buf(), o.name.clone())))
            else {
                let why = good
                    .and_then(|g| g.plan_error.clone())
                    .unwrap_or_else(|| "no resource of this chart level declares it".to_owned());
                return format!("**resource group `{}`**: not in the plan: {why}", o.name);
            };
            let mut s = format!(
                "**resource group `{}`** of chart {}: batch {}\n\n- waits for: {}\n- waited for by: {}\n- resources:\n",
                o.name,
                info.chart,
                info.batch,
                list(&info.waits_for),
                list(&info.waited_by)
            );
            for r in &info.resources {
                let _ = writeln!(s, "  - {r}");
            }
            s
        }
        Kind::SubchartRef | Kind::DependencyName | Kind::DependencyAlias => {
            let name = o.effective.clone().unwrap_or_else(|| o.name.clone());
            match good.and_then(|g| g.subcharts.get(&(level.to_path_buf(), name.clone()))) {
                Some(info) => format!(
                    "**subchart `{name}`** of chart {}: batch {} of its subcharts\n\n- installed with: {}",
                    info.parent,
                    info.batch,
                    list(&info.with)
                ),
                None => format!(
                    "**subchart `{name}`**: not among the enabled dependencies of this chart level"
                ),
            }
        }
        Kind::ReadinessSuccess | Kind::ReadinessFailure => readiness_hover(session, chart, path, o),
    };
    if stale {
        text.push_str("\n\n_helm cannot render the chart now: this is the last order it rendered_");
    }
    text
}

/// What a readiness annotation checks, read by the parsers `apply` evaluates with: each
/// expression's path, operator and value as compared, or its parse error; and whether the
/// other half is set.
fn readiness_hover(
    session: &Session,
    chart: &super::session::ChartState,
    path: &Path,
    o: &Occurrence,
) -> String {
    let failure = o.kind == Kind::ReadinessFailure;
    let (this, other) = if failure {
        (READINESS_FAILURE, READINESS_SUCCESS)
    } else {
        (READINESS_SUCCESS, READINESS_FAILURE)
    };
    // The last render's reading of this annotation, when it is at this line still.
    let rendered = chart
        .good
        .as_ref()
        .and_then(|g| g.readiness.get(path))
        .and_then(|r| {
            r.iter()
                .find(|(line, at)| *line == o.line && at.failure == failure)
        })
        .map(|(_, at)| at);
    // A value written in full is read as written (the buffer may be newer than the render);
    // one a template action writes, as it was rendered.
    let (list, rendered_note) = match rendered {
        Some(at) if o.templated => (
            at.parsed.clone(),
            "\n\n_as rendered with the default values_",
        ),
        _ => (analysis::readiness_list(&o.name.replace("''", "'")), ""),
    };
    let mut s = format!(
        "**`{this}`**: {} when any expression holds\n\n",
        if failure { "failed" } else { "ready" }
    );
    match &list {
        Err(why) => {
            let _ = writeln!(
                s,
                "not a readiness list: {why}; write a JSON array of expressions: `'[\"{{.phase}} == Running\"]'`"
            );
        }
        Ok(items) if items.is_empty() => s.push_str("no expression\n"),
        Ok(items) => {
            for (text, parsed) in items {
                let _ = writeln!(s, "- {}", expression_words(text, parsed));
            }
        }
    }
    s.push_str(rendered_note);
    let paired = match rendered {
        Some(at) => at.paired,
        None => session.file_index(path).is_some_and(|f| {
            let other_kind = if failure {
                Kind::ReadinessSuccess
            } else {
                Kind::ReadinessFailure
            };
            f.occurrences
                .iter()
                .any(|x| x.kind == other_kind && x.line.abs_diff(o.line) <= 20)
        }),
    };
    s.truncate(s.trim_end().len());
    if !paired {
        let _ = write!(
            s,
            "\n\n`{other}` is not set: Helm ignores this half and judges the resource by its default status checks (kstatus) (CS301)"
        );
    }
    s
}

/// One expression in words: what `apply` reads and compares, or why it cannot.
fn expression_words(
    text: &str,
    parsed: &Result<crate::readiness::expr::Expression, crate::readiness::expr::ExprError>,
) -> String {
    let shown = text.replace('`', "'");
    match parsed {
        Err(e) => {
            let column = text
                .get(..e.offset.min(text.len()))
                .map_or(e.offset, |t| t.chars().count())
                + 1;
            format!(
                "`{shown}`: does not parse (CS302) at column {column}: {}; never evaluated",
                e.message
            )
        }
        Ok(e) => {
            let kind = if e.number().is_some() {
                "a number"
            } else if e.boolean().is_some() {
                "a boolean"
            } else {
                "a string"
            };
            let mut words = format!(
                "`{shown}`: reads `{}` and compares it `{}` `{}` ({kind})",
                e.template(),
                e.op(),
                e.value().replace('`', "'")
            );
            if e.ordering_on_non_number() {
                let _ = write!(
                    words,
                    "; never holds: `{}` compares numbers only (CS303)",
                    e.op()
                );
            }
            if let Some(key) = e.outside_status() {
                let _ = write!(
                    words,
                    "; never holds: `{key}` is read under `.status` (CS304)"
                );
            }
            words
        }
    }
}

/// Where the resources of the YAML document under the cursor land in the order of the tool
/// whose annotations the chart carries.
fn dialect_hover(
    session: &Session,
    chart: &super::session::ChartState,
    path: &Path,
    line: u32,
) -> Option<String> {
    let places = chart.good.as_ref()?.dialects.get(path)?;
    let text = session.docs.get(path).map(|d| d.text.clone());
    let text = text.or_else(|| std::fs::read_to_string(path).ok())?;
    let (start, end) = document_lines(&text, line);
    let mut shown: Vec<String> = Vec::new();
    for (_, place) in places.iter().filter(|(l, _)| (start..end).contains(l)) {
        let (tool, resource) = (&place.tool, &place.resource);
        let words = match &place.at {
            DialectStep::Step(step, name) => format!(
                "**{tool}** installs `{resource}` in step {step} of {}: {name}",
                place.steps
            ),
            DialectStep::First => {
                format!("**{tool}** applies `{resource}` first, before its steps")
            }
            DialectStep::NotApplied => {
                format!("**{tool}** does not apply `{resource}` on install")
            }
        };
        if !shown.contains(&words) {
            shown.push(words);
        }
    }
    (!shown.is_empty()).then(|| shown.join("\n\n"))
}

/// The 0-based lines `[start, end)` of the YAML document of a template that holds `line`:
/// between the `---` separators around it.
fn document_lines(text: &str, line: u32) -> (u32, u32) {
    let mut start = 0;
    let mut end = u32::MAX;
    for (i, l) in text.lines().enumerate() {
        let i = u32::try_from(i).unwrap_or(u32::MAX);
        if !l.starts_with("---") {
            continue;
        }
        if i <= line {
            start = i + 1;
        } else {
            end = i;
            break;
        }
    }
    (start, end)
}

/// The sequencing annotation keys, for completion.
const KEYS: [&str; 5] = [
    RESOURCE_GROUP,
    DEPENDS_ON_GROUPS,
    DEPENDS_ON_SUBCHARTS,
    READINESS_SUCCESS,
    READINESS_FAILURE,
];

fn completion(session: &Session, path: &Path, pos: Position) -> Vec<CompletionItem> {
    let Some(text) = session.docs.get(path).map(|d| d.text.as_str()) else {
        return Vec::new();
    };
    let Some(line) = text.lines().nth(pos.line as usize) else {
        return Vec::new();
    };
    // The text before the cursor (UTF-16 columns).
    let mut units = 0;
    let cut = line
        .char_indices()
        .find(|(_, c)| {
            let done = units >= pos.character as usize;
            units += c.len_utf16();
            done
        })
        .map_or(line.len(), |(i, _)| i);
    let before = &line[..cut];
    let (Some(level), Some(root)) = (level_of(path), index::chart_root(path)) else {
        return Vec::new();
    };
    let is_chart_yaml = path.file_name().is_some_and(|n| n == "Chart.yaml");
    let names = |kind: &[Kind], detail: &str| -> Vec<CompletionItem> {
        let mut seen = std::collections::BTreeSet::new();
        for (_, file) in session.level_files(&root, &level) {
            for o in &file.occurrences {
                if kind.contains(&o.kind) && !o.templated {
                    seen.insert(o.effective.clone().unwrap_or_else(|| o.name.clone()));
                }
            }
        }
        seen.into_iter()
            .map(|n| CompletionItem {
                label: n,
                kind: Some(CompletionItemKind::VALUE),
                detail: Some(detail.to_owned()),
                ..CompletionItem::default()
            })
            .collect()
    };
    if before.contains(DEPENDS_ON_GROUPS) || before.contains(DEPENDS_ON_GROUPS_ONE_SLASH) {
        return names(&[Kind::GroupDecl], "resource group of this chart level");
    }
    let in_depends_on = is_chart_yaml
        && (before.trim_start().starts_with("depends-on:")
            || before.trim_start().starts_with("- ") && !before.contains(':'));
    if before.contains(DEPENDS_ON_SUBCHARTS) || in_depends_on {
        return names(
            &[Kind::DependencyName, Kind::DependencyAlias],
            "subchart of this chart level",
        );
    }
    let word_start = before
        .rfind(|c: char| !(c.is_alphanumeric() || matches!(c, '.' | '/' | '-' | '"')))
        .map_or(0, |i| i + 1);
    let word = before[word_start..].trim_start_matches('"');
    if before[..word_start].trim().is_empty() && !before.contains(':') {
        return KEYS
            .iter()
            .filter(|k| k.starts_with(word))
            .map(|k| CompletionItem {
                label: (*k).to_owned(),
                kind: Some(CompletionItemKind::PROPERTY),
                detail: Some("HIP-0025 sequencing annotation".to_owned()),
                ..CompletionItem::default()
            })
            .collect();
    }
    Vec::new()
}

fn code_actions(session: &Session, params: &serde_json::Value) -> Option<Vec<CodeActionOrCommand>> {
    let uri: Url = serde_json::from_value(params.pointer("/textDocument/uri")?.clone()).ok()?;
    let path = path_of(&uri)?;
    let asked: Range = serde_json::from_value(params.get("range")?.clone()).ok()?;
    let mut out = Vec::new();
    let Some(doc) = session.docs.get(&path) else {
        return Some(out);
    };
    // The server's own findings on the lines asked about: a client need not send back the
    // data it was given.
    let diagnostics: Vec<Diagnostic> = index::chart_root(&path)
        .and_then(|root| session.charts.get(&root))
        .and_then(|c| c.last.as_ref())
        .and_then(|a| a.diagnostics.get(&path))
        .map(|list| {
            list.iter()
                .filter(|d| {
                    d.range.start.line <= asked.end.line && asked.start.line <= d.range.end.line
                })
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    for d in diagnostics {
        let Some(data) = &d.data else { continue };
        let line = d.range.start.line;
        let edit = if let (Some(written), Some(meant)) = (
            data.get("replace").and_then(serde_json::Value::as_str),
            data.get("with").and_then(serde_json::Value::as_str),
        ) {
            doc.index
                .occurrences
                .iter()
                .find(|o| {
                    o.line == line
                        && o.name == written
                        && matches!(o.kind, Kind::GroupRef | Kind::SubchartRef)
                        && !o.templated
                })
                .map(|o| {
                    (
                        format!("Replace `{written}` with `{meant}`"),
                        TextEdit {
                            range: range(o),
                            new_text: meant.to_owned(),
                        },
                    )
                })
        } else if let (Some(key), Some(expression)) = (
            data.get("add").and_then(serde_json::Value::as_str),
            data.get("expression").and_then(serde_json::Value::as_str),
        ) {
            add_readiness(doc, line, key, expression)
        } else if let Some(own) = data.get("remove").and_then(serde_json::Value::as_str) {
            remove_name(doc, line, own)
        } else if let (Some(written), Some(to)) = (
            data.get("rename").and_then(serde_json::Value::as_str),
            data.get("to").and_then(serde_json::Value::as_str),
        ) {
            // The key exactly where the finding is, as the buffer has it now.
            (text_at(&doc.text, d.range) == Some(written)).then(|| {
                (
                    format!("Rename `{written}` to `{to}`"),
                    TextEdit {
                        range: d.range,
                        new_text: to.to_owned(),
                    },
                )
            })
        } else {
            None
        };
        let Some((title, edit)) = edit else { continue };
        let mut changes = std::collections::HashMap::new();
        changes.insert(uri.clone(), vec![edit]);
        out.push(CodeActionOrCommand::CodeAction(CodeAction {
            title,
            kind: Some(CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![d.clone()]),
            edit: Some(WorkspaceEdit {
                changes: Some(changes),
                ..WorkspaceEdit::default()
            }),
            is_preferred: Some(true),
            ..CodeAction::default()
        }));
    }
    Some(out)
}

/// The missing half of a readiness pair, on the line after the half that is written.
fn add_readiness(
    doc: &super::session::Doc,
    line: u32,
    key: &str,
    expression: &str,
) -> Option<(String, TextEdit)> {
    let present = doc.index.occurrences.iter().find(|o| {
        o.line == line
            && matches!(o.kind, Kind::ReadinessSuccess | Kind::ReadinessFailure)
            && !o.templated
    })?;
    let text = doc.text.lines().nth(present.line as usize)?;
    let indent = &text[..text.len() - text.trim_start().len()];
    let json = serde_json::to_string(&vec![expression]).ok()?;
    let value = format!("'{}'", json.replace('\'', "''"));
    let at = Position {
        line: present.line + 1,
        character: 0,
    };
    Some((
        format!("Add `{key}: {value}`"),
        TextEdit {
            range: Range { start: at, end: at },
            new_text: format!("{indent}{key}: {value}\n"),
        },
    ))
}

/// The text of a one-line range (UTF-16 columns).
fn text_at(text: &str, range: Range) -> Option<&str> {
    if range.start.line != range.end.line {
        return None;
    }
    let line = text.lines().nth(range.start.line as usize)?;
    let byte = |units: u32| {
        let mut seen = 0;
        for (i, c) in line.char_indices() {
            if seen == units as usize {
                return Some(i);
            }
            seen += c.len_utf16();
        }
        (seen == units as usize).then_some(line.len())
    };
    line.get(byte(range.start.character)?..byte(range.end.character)?)
}

/// The edit that takes a group's own name out of its depends-on list, with its quotes and
/// one separating comma.
fn remove_name(doc: &super::session::Doc, line: u32, own: &str) -> Option<(String, TextEdit)> {
    let o =
        doc.index.occurrences.iter().find(|o| {
            o.line == line && o.kind == Kind::GroupRef && o.name == own && !o.templated
        })?;
    let text = doc.text.lines().nth(line as usize)?;
    let byte = |units: u32| {
        let mut seen = 0;
        for (i, c) in text.char_indices() {
            if seen >= units as usize {
                return i;
            }
            seen += c.len_utf16();
        }
        text.len()
    };
    let (mut start, mut end) = (byte(o.start), byte(o.end));
    // The quotes around it: `"a"` or `\"a\"`.
    for quote in ["\\\"", "\""] {
        if text[..start].ends_with(quote) && text[end..].starts_with(quote) {
            start -= quote.len();
            end += quote.len();
            break;
        }
    }
    let after = &text[end..];
    let trimmed = after.trim_start();
    if let Some(rest) = trimmed.strip_prefix(',') {
        end += after.len() - rest.trim_start().len();
    } else {
        let before = text[..start].trim_end();
        if let Some(kept) = before.strip_suffix(',') {
            start = kept.len();
        }
    }
    let col = |b: usize| index::utf16_len(&text[..b]);
    Some((
        format!("Remove `{own}`: a group cannot wait for itself"),
        TextEdit {
            range: Range {
                start: Position {
                    line,
                    character: col(start),
                },
                end: Position {
                    line,
                    character: col(end),
                },
            },
            new_text: String::new(),
        },
    ))
}
