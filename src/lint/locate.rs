//! From a span in the rendered stream to the template line a person edits (SPEC §4,
//! "Locations").
//!
//! The document's `# Source:` path names the template file; when the chart is on disk the
//! rendered line is looked up in the template text: first the whole line as written, then its
//! key (`helm.sh/depends-on/resource-groups:`). A template that renders several documents (a
//! `range`) is matched occurrence by occurrence. When neither is in the template, the line a
//! values file sets (inserted whole by `toYaml`) or, failing that, the line of a helper the
//! template includes (a `define` of the chart's templates, helpers it includes followed) is
//! shown, with the template line that puts it in as a related label; found nowhere, the
//! rendered line is shown and a note says so. Without the chart on disk, the location is the
//! `# Source:` path with the line counted from the start of the rendered document.

use std::borrow::Cow;
use std::collections::BTreeSet;

use super::{Context, Diagnostic, Finding, Label, Position, ResourceRef};
use crate::lint::Severity;
use crate::model::{DocId, Model};
use crate::parse::Span;
use crate::source::{FileId, Loc, SourceFile};

/// Builds the reportable finding of a diagnostic.
#[must_use]
pub fn finding(ctx: &Context, d: Diagnostic) -> Finding {
    let model = ctx.model;
    let severity = ctx.settings.selection.severity(d.rule);
    let resource = d
        .doc
        .and_then(|doc| model.resource(doc))
        .map(|r| ResourceRef {
            api_version: r.api_version.clone(),
            kind: r.id.kind.clone(),
            namespace: r.id.namespace.clone(),
            name: r.id.name.clone(),
        });
    let mut d = d;
    d.loc = trim_quoted(model, d.loc);
    let mut notes = d.notes;
    let mut labels = Vec::new();
    let primary = map(model, d.loc);
    if let Some(note) = &primary.fallback {
        notes.push(crate::safe::one_line(note).into_owned());
    }
    if let Some(why) = &primary.approximate {
        notes.push(why.clone());
    }
    let mut guessed = false;
    let location = match (primary.template, primary.doc) {
        (Some(t), _) => {
            labels.push(Label {
                loc: t,
                message: d.label.clone(),
                primary: true,
            });
            if let Some((at, message)) = &primary.inserted_by {
                labels.push(Label {
                    loc: *at,
                    message: message.clone(),
                    primary: false,
                });
            }
            if primary.rendered.is_some() {
                labels.push(Label {
                    loc: d.loc,
                    message: "rendered here".into(),
                    primary: false,
                });
            }
            position(model.sources.get(t.file), t.span, None)
        }
        (None, doc) => {
            labels.push(Label {
                loc: d.loc,
                message: d.label.clone(),
                primary: true,
            });
            // With the template on disk but the line not in it, the rendered line is the
            // honest location; without the chart, the `# Source:` path is the best name.
            let on_disk = doc.is_some_and(|doc| model.documents[doc].template.is_some());
            match doc
                .filter(|_| !on_disk)
                .and_then(|doc| document_relative(model, doc, d.loc))
            {
                Some(p) => {
                    guessed = true;
                    p
                }
                None => position(model.sources.get(d.loc.file), d.loc.span, None),
            }
        }
    };
    for (loc, message) in d.secondary {
        let loc = trim_quoted(model, loc);
        let mapped = map(model, loc);
        labels.push(Label {
            loc: mapped.template.unwrap_or(loc),
            message,
            primary: false,
        });
    }
    let source_path = primary
        .doc
        .and_then(|doc| model.documents[doc].source_path.clone());
    let reference_severity = reference_note(model, d.rule.code, severity, &mut notes);
    let inserted_by = primary
        .inserted_by
        .as_ref()
        .map(|(at, _)| position(model.sources.get(at.file), at.span, None));
    Finding {
        code: d.rule.code,
        name: d.rule.name,
        severity,
        message: d.message,
        help: d.help,
        notes,
        chart: model.charts[d.chart].display.clone(),
        resource,
        location,
        rendered: primary.rendered,
        labels,
        source_path,
        guessed,
        approximate: primary.approximate.is_some(),
        inserted_by,
        value_sets: Vec::new(),
        reference_severity,
    }
}

/// The reference's `helm lint` severity where it differs from chartseq's, and a note saying
/// so where a person would otherwise expect helm to agree (a check it has, at another
/// severity or not on this chart), and what its install does where chartseq's refuses.
fn reference_note(
    model: &Model,
    code: &str,
    severity: Severity,
    notes: &mut Vec<String>,
) -> Option<&'static str> {
    // A stream without its chart: no known apiVersion, read as the v3 the reference needs.
    let version = model
        .charts
        .first()
        .and_then(|c| c.info.as_ref())
        .map(|i| i.meta.api_version.as_deref().unwrap_or("v1"));
    let chart_v3 = version.is_none_or(|v| v == "v3");
    let reference = crate::rules::reference_severity(code, chart_v3);
    match (reference, version) {
        (None, Some(v)) if crate::rules::reference_severity(code, true).is_some() => {
            notes.push(format!(
                "helm lint checks this only in apiVersion v3 charts (this chart is {v})"
            ));
        }
        (Some(r), _) if r != severity => notes.push(format!(
            "helm lint reports this as {}, not {}",
            r.as_str(),
            severity.as_str()
        )),
        _ => {}
    }
    if code == "CS101" && chart_v3 {
        notes.push("helm install --wait=ordered installs anyway: it warns and moves the group to the unsequenced batch; chartseq apply refuses (`--no-lint` installs as helm does)".to_owned());
    }
    match reference {
        Some(r) if r == severity => None,
        Some(r) => Some(r.as_str()),
        None => Some("none"),
    }
}

/// A quoted scalar's span ends at its closing quote (the parser's may run on over a trailing
/// comment).
fn trim_quoted(model: &Model, loc: Loc) -> Loc {
    let file = model.sources.get(loc.file);
    let bytes = &file.bytes;
    let (start, end) = (
        loc.span.start as usize,
        (loc.span.end as usize).min(bytes.len()),
    );
    let Some(&quote) = bytes.get(start).filter(|b| **b == b'\'' || **b == b'"') else {
        return loc;
    };
    let text = &bytes[start..end.max(start)];
    if text.contains(&b'\n') {
        return loc;
    }
    let mut i = 1;
    while i < text.len() {
        if text[i] == b'\\' && quote == b'"' {
            i += 2;
            continue;
        }
        if text[i] == quote {
            // `''` is an escaped quote in single-quoted YAML.
            if quote == b'\'' && text.get(i + 1) == Some(&b'\'') {
                i += 2;
                continue;
            }
            return Loc {
                file: loc.file,
                span: Span {
                    start: loc.span.start,
                    end: loc.span.start + i as u32 + 1,
                },
            };
        }
        i += 1;
    }
    loc
}

struct Mapped {
    /// The template (or chart file) span, when found.
    template: Option<Loc>,
    /// The rendered position, when the span is in the stream.
    rendered: Option<Position>,
    doc: Option<DocId>,
    fallback: Option<String>,
    /// The line is written in several places and the one shown is a best guess: why.
    approximate: Option<String>,
    /// Where the document's template puts the line in: the `include` of the helper that writes
    /// it, or the line that inserts values; with what to say there.
    inserted_by: Option<(Loc, String)>,
    /// Where the line is written when not in the template, in a few words.
    elsewhere: Option<String>,
}

/// Where a span is shown to the user: its template line when it maps to one, else itself.
#[must_use]
pub(crate) fn shown_position(model: &Model, loc: Loc) -> Position {
    let at = map(model, loc).template.unwrap_or(loc);
    position(model.sources.get(at.file), at.span, None)
}

fn position(file: &SourceFile, span: Span, name: Option<&str>) -> Position {
    let start = file.line_col(span.start);
    let end = file.line_col(span.end.max(span.start));
    Position {
        file: name.unwrap_or(&file.name).to_owned(),
        line: start.line,
        column: start.column,
        end_line: end.line,
        end_column: end.column,
    }
}

/// The document of the stream that contains `offset`.
#[must_use]
pub fn document_at(model: &Model, offset: u32) -> Option<DocId> {
    let i = model
        .documents
        .partition_point(|d| d.span.start <= offset)
        .checked_sub(1)?;
    (model.documents[i].span.end >= offset).then_some(i)
}

fn map(model: &Model, loc: Loc) -> Mapped {
    if loc.file != model.stream {
        return Mapped {
            template: Some(loc),
            rendered: None,
            doc: None,
            fallback: None,
            approximate: None,
            inserted_by: None,
            elsewhere: None,
        };
    }
    let stream = model.sources.get(model.stream);
    let rendered = Some(position(stream, loc.span, None));
    let doc = document_at(model, loc.span.start);
    let Some((doc_id, template)) = doc.and_then(|d| Some((d, model.documents[d].template?))) else {
        return Mapped {
            template: None,
            rendered,
            doc,
            fallback: None,
            approximate: None,
            inserted_by: None,
            elsewhere: None,
        };
    };
    let (found, approximate) = match find_in_template(model, doc_id, template, loc) {
        Some((found, approximate)) => (Some(found), approximate),
        None => (None, false),
    };
    // Not in the template: a value it inserts (`toYaml .Values.x.annotations`) is written in a
    // values file; its line there is the one to edit. Else a helper it includes may write it.
    if found.is_none() {
        if let Some(mapped) = from_values(model, template, loc) {
            return Mapped {
                rendered,
                doc,
                ..mapped
            };
        }
        if let Some(hit) = find_in_helpers(model, template, loc) {
            let include = position(model.sources.get(template), hit.include.span, None);
            let through = if hit.included == hit.name {
                String::new()
            } else {
                format!(" through `{}`", hit.included)
            };
            return Mapped {
                template: Some(hit.at),
                rendered,
                doc,
                fallback: Some(format!(
                    "the helper `{}` writes this line and {}:{} includes it{through}: the helper's line is shown",
                    hit.name, include.file, include.line
                )),
                approximate: (hit.several.len() > 1).then(|| {
                    format!(
                        "several helper lines write this line ({}) and which one rendered it cannot be told: the line shown is approximate",
                        hit.several
                            .iter()
                            .map(|n| format!("`{n}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }),
                elsewhere: Some(format!(
                    "the helper `{}` writes it and {}:{} includes it{through}",
                    hit.name, include.file, include.line
                )),
                inserted_by: Some((
                    hit.include,
                    if hit.included == hit.name {
                        format!("includes `{}`, which writes this line", hit.name)
                    } else {
                        format!(
                            "includes `{}`, whose helper `{}` writes this line",
                            hit.included, hit.name
                        )
                    },
                )),
            };
        }
    }
    let fallback = found.is_none().then(|| {
        format!(
            "{} does not contain this line (it comes from a helper or from values): the rendered line is shown",
            model.sources.get(template).name
        )
    });
    Mapped {
        template: found,
        rendered,
        doc,
        fallback,
        approximate: approximate.then(|| "the template writes this line in several places (a `range` or an `if`) and which one rendered it cannot be told: the line shown is approximate".to_owned()),
        inserted_by: None,
        elsewhere: None,
    }
}

/// A line the template inserts whole from values, at its line in the values file, with the
/// template's line (or `include` of the helper) that inserts it.
fn from_values(model: &Model, template: FileId, loc: Loc) -> Option<Mapped> {
    let (at, several) = find_in_values(model, loc)?;
    let template_file = model.sources.get(template);
    // The template's own `toYaml` line, else the `include` of the helper that has one.
    let (inserted_by, through) = match inserting_line(template_file) {
        Some(l) => {
            let range = template_file
                .lines()
                .line_range(&template_file.bytes, u32::try_from(l).ok()?)?;
            let text = String::from_utf8_lossy(&template_file.bytes[range.clone()]);
            let indent = text.len() - text.trim_start().len();
            let end = range.start + text.trim_end().len();
            let at = Loc {
                file: template,
                span: Span {
                    start: (range.start + indent) as u32,
                    end: end as u32,
                },
            };
            (
                Some((at, "inserts this line from values".to_owned())),
                format!("{}:{l}", template_file.name),
            )
        }
        None => match inserting_helper(model, template) {
            Some((include, name)) => {
                let p = position(template_file, include.span, None);
                (
                    Some((
                        include,
                        format!("includes `{name}`, which inserts this line from values"),
                    )),
                    format!("{}:{} (through `{name}`)", p.file, p.line),
                )
            }
            None => (None, template_file.name.clone()),
        },
    };
    Some(Mapped {
        template: Some(at),
        rendered: None,
        doc: None,
        fallback: Some(format!(
            "{through} inserts this line from values: the values file's line is shown"
        )),
        elsewhere: Some(format!(
            "{} sets it and {through} inserts it",
            model.sources.get(at.file).name
        )),
        approximate: several.then(|| "several lines of the values files read as this line and helm merges the later files over the earlier: the last is shown, approximate".to_owned()),
        inserted_by,
    })
}

/// The template (or chart file) location of a span in the rendered stream, when the line is
/// found in the template on disk (the same mapping every diagnostic uses).
#[must_use]
pub fn template_loc(model: &Model, loc: Loc) -> Option<Loc> {
    map(model, loc).template
}

/// Where a rendered line that its template does not write comes from, when that is found (a
/// helper's line, a values file's line), in a few words.
#[must_use]
pub fn written_elsewhere(model: &Model, loc: Loc) -> Option<String> {
    map(model, loc).elsewhere
}

/// The `# Source:` path with the line counted from the start of the rendered document.
fn document_relative(model: &Model, doc: DocId, loc: Loc) -> Option<Position> {
    let d = &model.documents[doc];
    let source = d.source_path.as_deref()?;
    let stream = model.sources.get(model.stream);
    let text = stream.text(d.span);
    let marker = text.find("# Source:")?;
    let marker_line = stream.line_col(d.span.start + marker as u32).line;
    let mut p = position(stream, loc.span, Some(source));
    p.line = p.line.checked_sub(marker_line)?;
    p.end_line = p.end_line.saturating_sub(marker_line).max(p.line);
    (p.line > 0).then_some(p)
}

/// What a template line must look like to be the one that rendered a stream line.
enum Needle {
    /// The whole trimmed line.
    Line(String),
    /// A mapping key.
    Key(String),
}

impl Needle {
    fn matches(&self, line: &str) -> bool {
        let trimmed = line.trim();
        match self {
            Needle::Line(l) => trimmed == l,
            Needle::Key(k) => line_key(trimmed).is_some_and(|lk| lk == k),
        }
    }
}

/// The mapping key a YAML line starts with (`- name: x` → `name`).
fn line_key(trimmed: &str) -> Option<&str> {
    let body = trimmed.strip_prefix("- ").unwrap_or(trimmed).trim_start();
    let (key, _) = body.split_once(':')?;
    let key = key.trim().trim_matches(['"', '\'']);
    (!key.is_empty() && !key.contains(' ') && !key.contains("{{")).then_some(key)
}

fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut offset = 0;
    text.split_inclusive('\n').map(move |l| {
        let start = offset;
        offset += l.len();
        (start, l.trim_end_matches(['\n', '\r']))
    })
}

/// The byte range of the line holding `offset`, without its newline.
#[must_use]
pub fn line_bounds(bytes: &[u8], offset: usize) -> std::ops::Range<usize> {
    let offset = offset.min(bytes.len());
    let start = memchr::memrchr(b'\n', &bytes[..offset]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &bytes[offset..]).map_or(bytes.len(), |i| offset + i);
    let end = if end > start && bytes[end - 1] == b'\r' {
        end - 1
    } else {
        end
    };
    start..end
}

/// Trimmed lines that say something about where a line sits (no blanks, no template actions).
fn context_lines<'t>(lines: impl Iterator<Item = &'t str>) -> BTreeSet<&'t str> {
    lines
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.contains("{{") && *l != "---")
        .collect()
}

/// Whether a template line opens, divides or closes a branch (`if`, `else`, `range`, `with`,
/// `end`): context read across it would belong to another branch.
fn is_branch_line(line: &str) -> bool {
    let t = line
        .trim()
        .trim_start_matches("{{")
        .trim_start_matches('-')
        .trim_start();
    line.trim().starts_with("{{")
        && ["if ", "else", "range ", "with ", "end", "define "]
            .iter()
            .any(|w| t.starts_with(w))
}

/// Among template lines that all match a rendered line, the one whose neighbourhood (read
/// within its own branch, before and after apart) looks most like the rendered line's: the
/// branch that rendered, when a `range` or an `if` writes the same key in several places.
/// `None` on a tie.
fn by_context(
    rendered: &str,
    rendered_at: usize,
    template: &str,
    candidates: &[(usize, &str)],
) -> Option<usize> {
    const WINDOW: usize = 8;
    let rendered_lines: Vec<&str> = lines(rendered).map(|(_, l)| l).collect();
    let at = lines(rendered)
        .position(|(start, l)| start <= rendered_at && rendered_at <= start + l.len())?;
    let before = context_lines(
        rendered_lines[at.saturating_sub(WINDOW)..at]
            .iter()
            .copied(),
    );
    let after = context_lines(
        rendered_lines
            [(at + 1).min(rendered_lines.len())..(at + 1 + WINDOW).min(rendered_lines.len())]
            .iter()
            .copied(),
    );
    let template_lines: Vec<&str> = lines(template).map(|(_, l)| l).collect();
    let starts: Vec<usize> = lines(template).map(|(s, _)| s).collect();
    let scores: Vec<usize> = candidates
        .iter()
        .map(|&(start, _)| {
            let i = starts.partition_point(|&s| s < start);
            let up = context_lines(
                template_lines[..i]
                    .iter()
                    .rev()
                    .take(WINDOW)
                    .take_while(|l| !is_branch_line(l))
                    .copied(),
            );
            let down = context_lines(
                template_lines[(i + 1).min(template_lines.len())..]
                    .iter()
                    .take(WINDOW)
                    .take_while(|l| !is_branch_line(l))
                    .copied(),
            );
            up.intersection(&before).count() + down.intersection(&after).count()
        })
        .collect();
    let best = *scores.iter().max()?;
    (scores.iter().filter(|&&s| s == best).count() == 1)
        .then(|| scores.iter().position(|&s| s == best))
        .flatten()
}

/// The template line that rendered a stream line, and whether it is a best guess (the template
/// writes the line in several places and nothing tells which one rendered it).
/// The template line (1-based) that most likely inserts values whole: the first that writes
/// `toYaml` of `.Values`, else none (a guess is not named).
fn inserting_line(template: &SourceFile) -> Option<usize> {
    String::from_utf8_lossy(&template.bytes)
        .lines()
        .position(|l| l.contains("toYaml") && l.contains(".Values"))
        .map(|i| i + 1)
}

/// The line of a values file (the chart's `values.yaml` or one given with `-f`) that reads as
/// the rendered line at `loc` (the same text, or its key and value), and whether several
/// did (then the last file, as helm merges the later over the earlier, and not exact).
fn find_in_values(model: &Model, loc: Loc) -> Option<(Loc, bool)> {
    let stream = model.sources.get(model.stream);
    let range = line_bounds(&stream.bytes, loc.span.start as usize);
    let rendered_line = String::from_utf8_lossy(&stream.bytes[range.clone()]).into_owned();
    let trimmed = rendered_line.trim();
    let (key, value) = trimmed.split_once(':')?;
    let unquote = |v: &str| v.trim().trim_matches(|c| c == '"' || c == '\'').to_owned();
    let (key, value) = (
        key.trim().trim_matches(|c| c == '"' || c == '\''),
        unquote(value),
    );
    if key.is_empty() {
        return None;
    }
    // Files that are neither the stream nor a file of a chart's templates or Chart.yaml.
    let chart_files: BTreeSet<FileId> = model
        .charts
        .iter()
        .filter_map(|c| c.info.as_ref())
        .flat_map(|i| i.files.values().copied().chain([i.meta.file]))
        .collect();
    let mut hits = Vec::new();
    for id in (0..model.sources.len() as u32).map(FileId) {
        let file = model.sources.get(id);
        if id == model.stream
            || chart_files.contains(&id)
            || file.origin == crate::source::Origin::Rendered
            || !std::path::Path::new(&file.name)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
        {
            continue;
        }
        let text = String::from_utf8_lossy(&file.bytes);
        let mut offset = 0usize;
        for line in text.split_inclusive('\n') {
            let t = line.trim();
            if let Some((k, v)) = t.split_once(':') {
                let k = k.trim().trim_matches(|c| c == '"' || c == '\'');
                if k == key && unquote(v) == value {
                    let start = offset + (line.len() - line.trim_start().len());
                    hits.push(Loc {
                        file: id,
                        span: Span {
                            start: start as u32,
                            end: (start + t.len()) as u32,
                        },
                    });
                }
            }
            offset += line.len();
        }
    }
    let several = hits.len() > 1;
    hits.pop().map(|at| (at, several))
}

fn find_in_template(model: &Model, doc: DocId, template: FileId, loc: Loc) -> Option<(Loc, bool)> {
    let stream = model.sources.get(model.stream);
    let range = line_bounds(&stream.bytes, loc.span.start as usize);
    let rendered_line = String::from_utf8_lossy(&stream.bytes[range.clone()]).into_owned();
    let trimmed = rendered_line.trim();
    if trimmed.is_empty() {
        return None;
    }
    let template_file = model.sources.get(template);
    let template_text: Cow<str> = String::from_utf8_lossy(&template_file.bytes);
    let mut needles = vec![Needle::Line(trimmed.to_owned())];
    if let Some(key) = line_key(trimmed) {
        // Generic keys (`name`) would match the wrong line; annotation-like keys or keys
        // written once in the template are safe.
        let once = lines(&template_text)
            .filter(|(_, l)| line_key(l.trim()) == Some(key))
            .count()
            == 1;
        if key.contains('/') || key.contains('.') || once {
            needles.push(Needle::Key(key.to_owned()));
        }
    }
    for needle in needles {
        // Which occurrence this is among documents rendered from the same template.
        let mut occurrence = 0usize;
        for (i, d) in model.documents[..doc].iter().enumerate() {
            if d.template == Some(template) && i < doc {
                occurrence += lines(&stream.text(d.span))
                    .filter(|(_, l)| needle.matches(l))
                    .count();
            }
        }
        let this = &model.documents[doc];
        let before = Span {
            start: this.span.start,
            end: (range.start as u32).max(this.span.start),
        };
        occurrence += lines(&stream.text(before))
            .filter(|(_, l)| needle.matches(l))
            .count();
        let candidates: Vec<(usize, &str)> = lines(&template_text)
            .filter(|(_, l)| needle.matches(l))
            .collect();
        // Counting occurrences is right when every template line rendered once, in order;
        // a `range` or an `if` breaks that, and the neighbourhood decides instead.
        let rendered_total: usize = model
            .documents
            .iter()
            .filter(|d| d.template == Some(template))
            .map(|d| {
                lines(&stream.text(d.span))
                    .filter(|(_, l)| needle.matches(l))
                    .count()
            })
            .sum();
        let mut approximate = false;
        let pick = if candidates.len() > 1 && rendered_total != candidates.len() {
            let this_text = stream.text(this.span);
            let at = range.start.saturating_sub(this.span.start as usize);
            by_context(&this_text, at, &template_text, &candidates).or_else(|| {
                approximate = true;
                None
            })
        } else {
            None
        };
        let chosen = match pick {
            Some(i) => candidates.get(i),
            None => candidates.get(occurrence).or_else(|| candidates.last()),
        };
        let Some(&(start, line)) = chosen else {
            continue;
        };
        let (col_start, col_end) = columns(&needle, line, loc, &range, &rendered_line);
        return Some((
            Loc {
                file: template,
                span: Span {
                    start: (start + col_start) as u32,
                    end: (start + col_end) as u32,
                },
            },
            approximate,
        ));
    }
    None
}

/// A `define` block of a chart template: its name and its body (the bytes between the
/// `define` action and its `end`).
struct Define {
    name: String,
    file: FileId,
    body: std::ops::Range<usize>,
}

/// The template actions of a text: the byte range of each `{{ … }}` and its words with the
/// trim markers and blanks taken off. Comments (`{{/* … */}}`) are left out.
fn actions(text: &str) -> Vec<(std::ops::Range<usize>, &str)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(open) = text[from..].find("{{").map(|i| from + i) {
        let Some(close) = text[open + 2..].find("}}").map(|i| open + 2 + i) else {
            break;
        };
        let inner = text[open + 2..close]
            .strip_prefix('-')
            .unwrap_or(&text[open + 2..close]);
        let inner = inner.strip_suffix('-').unwrap_or(inner).trim();
        if !inner.starts_with("/*") {
            out.push((open..close + 2, inner));
        }
        from = close + 2;
    }
    out
}

/// The quoted name an action word is followed by (`define "x.labels"` → `x.labels`).
fn quoted_after<'t>(inner: &'t str, word: &str) -> Vec<&'t str> {
    let mut names = Vec::new();
    let mut rest = inner;
    while let Some(i) = rest.find(word) {
        let before = rest[..i].chars().next_back();
        let after = rest[i + word.len()..].trim_start();
        rest = &rest[i + word.len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.') {
            continue;
        }
        let Some(quote) = after.chars().next().filter(|c| *c == '"' || *c == '`') else {
            continue;
        };
        if let Some(end) = after[1..].find(quote) {
            names.push(&after[1..=end]);
        }
    }
    names
}

/// Every `define` of the charts' templates (`_helpers.tpl` and any other file under
/// `templates/`): helm shares them across a chart and its subcharts.
fn defines(model: &Model) -> Vec<Define> {
    let mut out = Vec::new();
    for info in model.charts.iter().filter_map(|c| c.info.as_ref()) {
        for (rel, &file) in &info.files {
            if !rel.starts_with("templates/") {
                continue;
            }
            let text = String::from_utf8_lossy(&model.sources.get(file).bytes);
            // Open blocks: the body's start and the name for a `define`, `None` otherwise.
            let mut open: Vec<Option<(String, usize)>> = Vec::new();
            for (range, inner) in actions(&text) {
                let word = inner.split_whitespace().next().unwrap_or_default();
                match word {
                    "define" => open.push(
                        quoted_after(inner, "define")
                            .first()
                            .map(|n| ((*n).to_owned(), range.end)),
                    ),
                    "if" | "range" | "with" | "block" => open.push(None),
                    "end" => {
                        if let Some(Some((name, start))) = open.pop() {
                            out.push(Define {
                                name,
                                file,
                                body: start..range.start,
                            });
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

/// Where a helper writes a rendered line.
struct HelperHit {
    /// The helper's line (the columns of the rendered span when the whole line is there).
    at: Loc,
    /// Several helper lines could have written it: the first is shown, not exact.
    several: Vec<String>,
    /// The helper's name.
    name: String,
    /// The helper the document's template includes to reach it (the same, or one that
    /// includes it), and that `include` action.
    included: String,
    include: Loc,
}

/// A helper reached from a template: the index of its `define`, and the helper the template
/// includes to reach it with that action's byte range.
type Reached = (usize, String, std::ops::Range<usize>);

/// The names an action calls a helper by (`include "x"`, `template "x"`).
fn called(inner: &str) -> Vec<&str> {
    let mut names = quoted_after(inner, "include");
    names.extend(quoted_after(inner, "template"));
    names
}

/// The helpers a template includes, helpers included by helpers followed (each once).
fn reached_helpers(model: &Model, template: FileId) -> (Vec<Define>, Vec<Reached>) {
    let template_text = String::from_utf8_lossy(&model.sources.get(template).bytes).into_owned();
    if !template_text.contains("include") && !template_text.contains("template") {
        return (Vec::new(), Vec::new());
    }
    let defines = defines(model);
    let mut reached = Vec::new();
    let mut queue: std::collections::VecDeque<(String, String, std::ops::Range<usize>)> =
        actions(&template_text)
            .into_iter()
            .flat_map(|(range, inner)| {
                called(inner)
                    .into_iter()
                    .map(move |n| (n.to_owned(), n.to_owned(), range.clone()))
            })
            .collect();
    let mut seen = BTreeSet::new();
    while let Some((name, top, call)) = queue.pop_front() {
        if !seen.insert(name.clone()) {
            continue;
        }
        for (i, d) in defines.iter().enumerate().filter(|(_, d)| d.name == name) {
            reached.push((i, top.clone(), call.clone()));
            let text = String::from_utf8_lossy(&model.sources.get(d.file).bytes);
            for (_, inner) in actions(&text[d.body.clone()]) {
                queue.extend(
                    called(inner)
                        .into_iter()
                        .map(|n| (n.to_owned(), top.clone(), call.clone())),
                );
            }
        }
    }
    (defines, reached)
}

/// The action of a template that includes a helper inserting values whole (`toYaml .Values…`
/// in its body): the `include` and the helper's name, when exactly one such helper is reached.
fn inserting_helper(model: &Model, template: FileId) -> Option<(Loc, String)> {
    let (defines, reached) = reached_helpers(model, template);
    let mut inserting = reached.iter().filter(|(i, _, _)| {
        let d = &defines[*i];
        let text = String::from_utf8_lossy(&model.sources.get(d.file).bytes);
        text[d.body.clone()]
            .lines()
            .any(|l| l.contains("toYaml") && l.contains(".Values"))
    });
    let (_, top, call) = inserting.next()?;
    inserting.next().is_none().then(|| {
        (
            Loc {
                file: template,
                span: Span {
                    start: call.start as u32,
                    end: call.end as u32,
                },
            },
            top.clone(),
        )
    })
}

/// The line of a helper (`define` reached from the document's template through `include` or
/// `template`, helpers that include helpers followed) that writes the rendered line at `loc`:
/// first the whole line as written, then its key when the key names a domain (an
/// annotation's).
fn find_in_helpers(model: &Model, template: FileId, loc: Loc) -> Option<HelperHit> {
    let stream = model.sources.get(model.stream);
    let range = line_bounds(&stream.bytes, loc.span.start as usize);
    let rendered_line = String::from_utf8_lossy(&stream.bytes[range.clone()]).into_owned();
    let trimmed = rendered_line.trim();
    if trimmed.is_empty() {
        return None;
    }
    let (defines, reached) = reached_helpers(model, template);
    let mut needles = vec![Needle::Line(trimmed.to_owned())];
    // Only a key a person would not write in two helpers by chance (an annotation's, with a
    // domain): `name:` in some helper is no evidence that it wrote this `name:`.
    if let Some(key) = line_key(trimmed).filter(|k| k.contains('/') || k.contains('.')) {
        needles.push(Needle::Key(key.to_owned()));
    }
    for needle in needles {
        // (define, line start in its file, line text, the included helper, its action)
        let mut hits: Vec<(usize, usize, String, String, std::ops::Range<usize>)> = Vec::new();
        for (i, top, call) in &reached {
            let d = &defines[*i];
            let text = String::from_utf8_lossy(&model.sources.get(d.file).bytes);
            for (start, line) in lines(&text[d.body.clone()]) {
                if needle.matches(line) {
                    hits.push((
                        *i,
                        d.body.start + start,
                        line.to_owned(),
                        top.clone(),
                        call.clone(),
                    ));
                }
            }
        }
        hits.dedup_by(|a, b| defines[a.0].file == defines[b.0].file && a.1 == b.1);
        let Some((i, start, line, top, call)) = hits.first().cloned() else {
            continue;
        };
        let (col_start, col_end) = columns(&needle, &line, loc, &range, &rendered_line);
        let d = &defines[i];
        let several = if hits.len() > 1 {
            let mut names: Vec<String> = hits.iter().map(|h| defines[h.0].name.clone()).collect();
            names.dedup();
            names
        } else {
            Vec::new()
        };
        return Some(HelperHit {
            at: Loc {
                file: d.file,
                span: Span {
                    start: (start + col_start) as u32,
                    end: (start + col_end) as u32,
                },
            },
            several,
            name: d.name.clone(),
            included: top,
            include: Loc {
                file: template,
                span: Span {
                    start: call.start as u32,
                    end: call.end as u32,
                },
            },
        });
    }
    None
}

/// The columns (from the line's start) of the template line that rendered `loc`: those of
/// the rendered span when the whole line is the same, else the line's text.
fn columns(
    needle: &Needle,
    line: &str,
    loc: Loc,
    range: &std::ops::Range<usize>,
    rendered_line: &str,
) -> (usize, usize) {
    let indent = rendered_line.len() - rendered_line.trim_start().len();
    let t_indent = line.len() - line.trim_start().len();
    let t_trimmed = line.trim();
    match needle {
        Needle::Line(_) => {
            let rel_start = (loc.span.start as usize).saturating_sub(range.start + indent);
            let rel_end = (loc.span.end as usize)
                .min(range.end)
                .saturating_sub(range.start + indent)
                .max(rel_start);
            (
                t_indent + rel_start.min(t_trimmed.len()),
                t_indent + rel_end.min(t_trimmed.len()),
            )
        }
        Needle::Key(_) => (t_indent, t_indent + t_trimmed.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_branch_that_rendered_is_told_by_its_neighbours() {
        let template = "{{- if .a }}\nkind: Job\nmetadata:\n  k: 1\n{{- else }}\nkind: Probe\nmetadata:\n  k: 2\n{{- end }}\n";
        let candidates: Vec<(usize, &str)> = lines(template)
            .filter(|(_, l)| l.trim_start().starts_with("k:"))
            .collect();
        let rendered = "kind: Probe\nmetadata:\n  k: 2\n";
        let at = rendered.find("k:").expect("k");
        assert_eq!(by_context(rendered, at, template, &candidates), Some(1));
        // Nothing around the line tells the branches apart: no answer, the caller says so.
        let same = "{{- if .a }}\nmetadata:\n  k: 1\n{{- else }}\nmetadata:\n  k: 2\n{{- end }}\n";
        let candidates: Vec<(usize, &str)> = lines(same)
            .filter(|(_, l)| l.trim_start().starts_with("k:"))
            .collect();
        assert_eq!(
            by_context("metadata:\n  k: 3\n", 12, same, &candidates),
            None
        );
    }

    #[test]
    fn helpers_are_read_from_actions() {
        let text = "{{/* a comment: {{ define \"no\" }} */}}\n{{- define \"x.a\" -}}\n{{- if .v }}\nk: 1\n{{- end }}\n{{ include \"x.b\" . | nindent 2 }}\n{{- end }}\n";
        let found: Vec<&str> = actions(text).into_iter().map(|(_, inner)| inner).collect();
        assert_eq!(
            found,
            [
                "define \"x.a\"",
                "if .v",
                "end",
                "include \"x.b\" . | nindent 2",
                "end"
            ]
        );
        assert_eq!(called("include \"x.b\" . | nindent 2"), ["x.b"]);
        assert_eq!(called("template `x.c` ."), ["x.c"]);
        // `tpl` and names that merely end in the word are not calls.
        assert!(called("tpl .Values.x . | myinclude \"y\"").is_empty());
        assert_eq!(quoted_after("define \"x.a\"", "define"), ["x.a"]);
    }

    #[test]
    fn keys_are_read_from_yaml_lines() {
        assert_eq!(
            line_key("helm.sh/resource-group: db"),
            Some("helm.sh/resource-group")
        );
        assert_eq!(line_key("- configMapRef:"), Some("configMapRef"));
        assert_eq!(line_key("\"helm.sh/hook\": x"), Some("helm.sh/hook"));
        assert_eq!(line_key("{{ include \"x\" . }}: y"), None);
        assert_eq!(line_key("plain text"), None);
    }
}
