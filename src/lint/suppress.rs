//! Inline suppressions: the annotation `chartseq.io/ignore: "CS305,CS501"` on a resource, and
//! the comment `# chartseq: ignore[CS305]` on the line above a finding (comments survive
//! `helm template`, so the comment is read from the rendered stream or the chart file the
//! finding points into). A suppression that silences nothing is reported as CS901.

use std::collections::BTreeSet;

use super::config::matching;
use super::{Context, Diagnostic};
use crate::model::DocId;
use crate::parse::Span;
use crate::rules::UNUSED_SUPPRESSION;
use crate::source::{FileId, Loc};

/// The annotation that suppresses findings on its resource.
pub const IGNORE_ANNOTATION: &str = "chartseq.io/ignore";
const COMMENT: &str = "chartseq: ignore[";

struct Suppression {
    /// Codes (a selector may name several).
    codes: BTreeSet<&'static str>,
    /// As written, for the CS901 message.
    written: String,
    loc: Loc,
    target: Target,
    used: bool,
    chart: usize,
    doc: Option<DocId>,
}

enum Target {
    /// Every finding about this resource.
    Resource(DocId),
    /// Findings whose primary span starts on this line of this file.
    Line(FileId, u32),
}

/// Removes suppressed diagnostics; returns CS901 findings for suppressions that silenced
/// nothing among the enabled rules.
pub fn apply(ctx: &Context, diagnostics: &mut Vec<Diagnostic>) -> Vec<Diagnostic> {
    let model = ctx.model;
    let mut suppressions = Vec::new();
    for (doc, r) in ctx.resources() {
        if let Some(a) = r.annotation(IGNORE_ANNOTATION) {
            let written = a.value.as_str().unwrap_or_default().to_owned();
            suppressions.push(Suppression {
                codes: parse_codes(&written),
                written,
                loc: a.value_loc,
                target: Target::Resource(doc),
                used: false,
                chart: model.documents[doc].chart,
                doc: Some(doc),
            });
        }
    }
    let mut files: BTreeSet<FileId> = diagnostics.iter().map(|d| d.loc.file).collect();
    files.insert(model.stream);
    for file in files {
        comments(ctx, file, &mut suppressions);
    }
    diagnostics.retain(|d| {
        let line = model
            .sources
            .get(d.loc.file)
            .line_col(d.loc.span.start)
            .line;
        let mut keep = true;
        for s in &mut suppressions {
            if !s.codes.contains(d.rule.code) {
                continue;
            }
            let hit = match s.target {
                Target::Resource(doc) => d.doc == Some(doc),
                Target::Line(file, l) => file == d.loc.file && l == line,
            };
            if hit {
                s.used = true;
                keep = false;
            }
        }
        keep
    });
    let mut unused = Vec::new();
    for s in suppressions {
        // Unknown names are reported; codes of rules that did not run are not.
        let live = s.codes.is_empty()
            || s.codes
                .iter()
                .any(|c| crate::rules::find(c).is_some_and(|r| ctx.settings.selection.enabled(r)));
        if s.used || !live {
            continue;
        }
        let mut d = Diagnostic::new(
            &UNUSED_SUPPRESSION,
            s.chart,
            s.loc,
            format!("suppression `{}` silences nothing", s.written),
        )
        .label("nothing to silence here");
        d = match nearest(ctx, &s, diagnostics) {
            // A comment silences only the line right below it: say where to move it.
            Some(found) => {
                let at = super::locate::shown_position(model, found.loc);
                d.help(format!(
                    "a comment silences the line right below it only: move it to the line above {}:{}, where the nearest {} finding is",
                    at.file, at.line, found.rule.code
                ))
                .secondary(found.loc, format!("the nearest {} finding", found.rule.code))
            }
            None => d.help("remove it, or move it next to the finding it is meant for"),
        };
        if s.codes.is_empty() {
            d = d.note("no rule code or name was recognised in it");
        }
        if let Some(doc) = s.doc {
            d = d.doc(doc);
        }
        unused.push(d);
    }
    unused
}

/// For a comment that silenced nothing, the finding it names that is nearest to the line it
/// silences, in the same file.
fn nearest<'d>(
    ctx: &Context,
    s: &Suppression,
    diagnostics: &'d [Diagnostic],
) -> Option<&'d Diagnostic> {
    let Target::Line(file, target) = s.target else {
        return None;
    };
    let source = ctx.model.sources.get(file);
    diagnostics
        .iter()
        .filter(|d| d.loc.file == file && s.codes.contains(d.rule.code))
        .min_by_key(|d| {
            let line = source.line_col(d.loc.span.start).line;
            (line.abs_diff(target), line, d.loc.span.start)
        })
}

fn parse_codes(text: &str) -> BTreeSet<&'static str> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .flat_map(matching)
        .collect()
}

/// Finds `# chartseq: ignore[...]` comments in one file.
fn comments(ctx: &Context, file: FileId, out: &mut Vec<Suppression>) {
    let model = ctx.model;
    let source = model.sources.get(file);
    let bytes = &source.bytes;
    let finder = memchr::memmem::Finder::new(COMMENT.as_bytes());
    for at in finder.find_iter(bytes) {
        let line = source.line_col(at as u32).line;
        let range = super::locate::line_bounds(bytes, at);
        let text = String::from_utf8_lossy(&bytes[range.clone()]);
        let trimmed = text.trim_start();
        let Some(rest) = trimmed
            .strip_prefix('#')
            .map(str::trim_start)
            .and_then(|r| r.strip_prefix(COMMENT))
        else {
            continue;
        };
        let Some((inner, _)) = rest.split_once(']') else {
            continue;
        };
        // The next line that is not itself a comment.
        let mut target = line + 1;
        let mut next = range.end + 1;
        while next < bytes.len() {
            let r = super::locate::line_bounds(bytes, next);
            if !String::from_utf8_lossy(&bytes[r.clone()])
                .trim_start()
                .starts_with('#')
            {
                break;
            }
            target += 1;
            next = r.end + 1;
        }
        let doc = (file == model.stream)
            .then(|| super::locate::document_at(model, at as u32))
            .flatten();
        let chart = doc.map_or(0, |d| model.documents[d].chart);
        out.push(Suppression {
            codes: parse_codes(inner),
            written: inner.to_owned(),
            loc: Loc {
                file,
                span: Span::new(range.start, range.end),
            },
            target: Target::Line(file, target),
            used: false,
            chart,
            doc: None,
        });
    }
}
