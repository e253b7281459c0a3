//! Snippets with labels, rendered by codespan-reporting: the template line to edit and, when
//! it differs, the rendered line, in one diagnostic. Secret `data`/`stringData` values are
//! replaced by `<redacted>` before any text is shown.

use std::collections::BTreeMap;
use std::io::{self, Write};

use codespan_reporting::diagnostic::{Diagnostic, Label, Severity as CsSeverity};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, Config, termcolor};

use super::{Reporter, safe};
use crate::lint::{Report, Severity};
use crate::model::{Content, Model};
use crate::source::FileId;

pub struct Human {
    pub color: bool,
}

const REDACTED: &str = "<redacted>";

/// A file's text with secret values cut out and control characters escaped, and how offsets
/// move.
struct Redacted {
    text: String,
    /// (start, end, replacement length) of each cut in the original, sorted, disjoint.
    cuts: Vec<(u32, u32, usize)>,
}

impl Redacted {
    /// `secrets` are replaced by `<redacted>`, `escapes` by their text (a cut inside a secret
    /// is dropped: the secret's text never shows).
    fn new(bytes: &[u8], secrets: Vec<(u32, u32)>, escapes: Vec<(u32, u32, String)>) -> Self {
        let mut all: Vec<(u32, u32, String)> = secrets
            .into_iter()
            .map(|(s, e)| (s, e, REDACTED.to_owned()))
            .chain(escapes)
            .collect();
        // At one start, the longest cut first: a secret wins over an escape inside it.
        all.sort_by_key(|cut| (cut.0, std::cmp::Reverse(cut.1)));
        let mut text = String::with_capacity(bytes.len());
        let mut cuts = Vec::with_capacity(all.len());
        let mut at = 0usize;
        for (s, e, replacement) in all {
            let (s, e) = (s as usize, e as usize);
            if s < at || e > bytes.len() || e < s {
                continue;
            }
            text.push_str(&String::from_utf8_lossy(&bytes[at..s]));
            text.push_str(&replacement);
            cuts.push((s as u32, e as u32, replacement.len()));
            at = e;
        }
        text.push_str(&String::from_utf8_lossy(&bytes[at.min(bytes.len())..]));
        Self { text, cuts }
    }

    /// Where an original offset lands in the redacted text (inside a cut: at its start).
    fn map(&self, offset: u32) -> usize {
        let (mut removed, mut added) = (0usize, 0usize);
        for &(s, e, len) in &self.cuts {
            if offset >= e && e > s {
                removed += (e - s) as usize;
                added += len;
            } else if offset > s {
                return (s as usize + added).saturating_sub(removed);
            }
        }
        (offset as usize + added).saturating_sub(removed)
    }
}

impl Reporter for Human {
    fn report(&self, out: &mut dyn Write, model: &Model, report: &Report) -> io::Result<()> {
        self.findings(out, model, report)?;
        totals(out, report.summary, report.findings.is_empty())
    }

    /// Each run in turn; the runs of one values matrix as one: a line naming its value sets,
    /// their findings, one count. Of several charts (or values files), each count names its
    /// chart, and a last line sums them up.
    fn report_all(&self, out: &mut dyn Write, runs: &[super::Run<'_>]) -> io::Result<()> {
        let mut units: Vec<&[super::Run<'_>]> = Vec::new();
        let mut i = 0;
        while i < runs.len() {
            let len = runs[i]
                .report
                .matrix
                .as_ref()
                .map_or(1, |sets| sets.len().clamp(1, runs.len() - i));
            units.push(&runs[i..i + len]);
            i += len;
        }
        let several = units.len() > 1;
        let mut total = crate::lint::Summary::default();
        let mut all_empty = true;
        for unit in &units {
            let first = &unit[0];
            if let Some(sets) = &first.report.matrix {
                writeln!(
                    out,
                    "values matrix of chart {}: {} rendering{} ({})",
                    safe::one_line(
                        first
                            .model
                            .charts
                            .first()
                            .map_or("", |c| c.display.as_str())
                    ),
                    sets.len(),
                    plural(sets.len()),
                    safe::one_line(&sets.join("; "))
                )?;
            }
            let mut sum = crate::lint::Summary::default();
            let mut empty = true;
            for run in *unit {
                self.findings(out, run.model, run.report)?;
                sum.errors += run.report.summary.errors;
                sum.warnings += run.report.summary.warnings;
                sum.infos += run.report.summary.infos;
                empty &= run.report.findings.is_empty();
            }
            if several {
                write!(out, "{}: ", safe::one_line(&first.target()))?;
            }
            totals(out, sum, empty)?;
            total.errors += sum.errors;
            total.warnings += sum.warnings;
            total.infos += sum.infos;
            all_empty &= empty;
        }
        if several {
            let charts: std::collections::BTreeSet<String> = units
                .iter()
                .map(|u| {
                    super::Run {
                        values: None,
                        ..u[0]
                    }
                    .target()
                })
                .collect();
            let values: std::collections::BTreeSet<&str> = units
                .iter()
                .filter(|u| u[0].report.matrix.is_none())
                .filter_map(|u| u[0].values)
                .collect();
            write!(out, "{} chart{}", charts.len(), plural(charts.len()))?;
            if !values.is_empty() {
                write!(
                    out,
                    ", {} values file{}",
                    values.len(),
                    plural(values.len())
                )?;
            }
            write!(out, ": ")?;
            totals(out, total, all_empty)?;
        }
        Ok(())
    }
}

impl Human {
    fn findings(&self, out: &mut dyn Write, model: &Model, report: &Report) -> io::Result<()> {
        let mut files = SimpleFiles::new();
        let mut ids: BTreeMap<FileId, (usize, Redacted)> = BTreeMap::new();
        let mut redactions: Option<Vec<(u32, u32)>> = None;
        let config = Config::default();
        for f in &report.findings {
            let mut labels = Vec::new();
            for label in &f.labels {
                let file = label.loc.file;
                let (id, redacted) = ids.entry(file).or_insert_with(|| {
                    let source = model.sources.get(file);
                    let cuts = if file == model.stream {
                        redactions
                            .get_or_insert_with(|| secret_spans(model))
                            .clone()
                    } else {
                        Vec::new()
                    };
                    let redacted = Redacted::new(&source.bytes, cuts, safe::cuts(&source.bytes));
                    let id = files.add(
                        safe::terminal_safe(&source.name).into_owned(),
                        redacted.text.clone(),
                    );
                    (id, redacted)
                });
                let start = redacted.map(label.loc.span.start);
                let end = redacted.map(label.loc.span.end).max(start);
                let id = *id;
                let l = if label.primary {
                    Label::primary(id, start..end)
                } else {
                    Label::secondary(id, start..end)
                };
                labels.push(l.with_message(safe::one_line(&label.message)));
            }
            let mut notes = Vec::new();
            let primary_in_stream = f.labels.first().is_some_and(|l| l.loc.file == model.stream);
            if primary_in_stream
                && f.rendered
                    .as_ref()
                    .is_some_and(|r| r.file != f.location.file)
            {
                notes.push(safe::one_line(&if f.guessed {
                    format!(
                        "template: {}, near line {} (counted in the rendered document; lint the chart, or pass --chart, for the exact line)",
                        f.location.file, f.location.line
                    )
                } else {
                    format!(
                        "template: {}:{}:{}",
                        f.location.file, f.location.line, f.location.column
                    )
                }).into_owned());
            }
            if !f.help.is_empty() {
                notes.push(format!("help: {}", safe::one_line(&f.help)));
            }
            // Notes are one line each, or lines each made one line (`Diagnostic::note_lines`).
            notes.extend(f.notes.iter().map(|n| format!("note: {n}")));
            let severity = match f.severity {
                Severity::Error => CsSeverity::Error,
                Severity::Warning => CsSeverity::Warning,
                Severity::Info => CsSeverity::Note,
            };
            let notes = notes
                .iter()
                .map(|n| safe::terminal_safe(n).into_owned())
                .collect();
            let diagnostic = Diagnostic::new(severity)
                .with_message(safe::one_line(&f.message))
                .with_code(format!("{}/{}", f.code, f.name))
                .with_labels(labels)
                .with_notes(notes);
            let result = if self.color {
                let mut buffer = termcolor::Ansi::new(Vec::new());
                term::emit_to_write_style(&mut buffer, &config, &files, &diagnostic)
                    .map(|()| buffer.into_inner())
            } else {
                let mut buffer = Vec::new();
                term::emit_to_io_write(&mut buffer, &config, &files, &diagnostic).map(|()| buffer)
            };
            match result {
                Ok(bytes) => out.write_all(&bytes)?,
                Err(e) => writeln!(
                    out,
                    "{}[{}]: {} ({e})",
                    f.severity.as_str(),
                    f.code,
                    safe::one_line(&f.message)
                )?,
            }
        }
        Ok(())
    }
}

/// The count line under a report.
fn totals(out: &mut dyn Write, s: crate::lint::Summary, empty: bool) -> io::Result<()> {
    if empty {
        writeln!(out, "no findings")
    } else {
        writeln!(
            out,
            "{} error{}, {} warning{}, {} info{}",
            s.errors,
            plural(s.errors),
            s.warnings,
            plural(s.warnings),
            s.infos,
            plural(s.infos)
        )
    }
}

/// Every Secret `data`/`stringData` span of the stream. Documents that did not parse have no
/// spans: when they look like a Secret, everything under a top-level `data:`/`stringData:`
/// key is cut by line.
fn secret_spans(model: &Model) -> Vec<(u32, u32)> {
    let stream = model.sources.get(model.stream);
    let mut out = Vec::new();
    for d in &model.documents {
        match &d.content {
            Content::Resource(r) => out.extend(r.redact.iter().map(|s| (s.start, s.end))),
            Content::Invalid { .. } | Content::NotAnObject { .. } => {
                let text = stream.text(d.span);
                if text.contains("Secret") {
                    out.extend(textual_secret_spans(&text, d.span.start));
                }
            }
            Content::Empty => {}
        }
    }
    out
}

/// Cuts the values under top-level `data:` / `stringData:` keys of YAML text, line by line.
fn textual_secret_spans(text: &str, base: u32) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut inside = false;
    let mut offset = 0usize;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let body = line.trim_end_matches(['\n', '\r']);
        let indented = body.starts_with([' ', '\t']) || body.is_empty();
        if inside && indented {
            // Keep the key, cut the value (`  password: <redacted>`).
            let value_at = body.find(": ").map_or(0, |i| i + 2);
            if !body[value_at..].trim().is_empty() {
                out.push((
                    base + (start + value_at) as u32,
                    base + (start + body.len()) as u32,
                ));
            }
            continue;
        }
        inside = false;
        for key in ["data:", "stringData:"] {
            if let Some(rest) = body.strip_prefix(key) {
                inside = true;
                if !rest.trim().is_empty() {
                    let at = start + key.len();
                    out.push((base + at as u32, base + (start + body.len()) as u32));
                }
            }
        }
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_cuts_values_and_moves_offsets() {
        let text = "kind: Secret\nstringData:\n  password: hunter2\nkind2: x\n";
        let cuts = textual_secret_spans(text, 0);
        let redacted = Redacted::new(text.as_bytes(), cuts, Vec::new());
        assert_eq!(
            redacted.text,
            "kind: Secret\nstringData:\n  password: <redacted>\nkind2: x\n"
        );
        let after = text.find("kind2").expect("present") as u32;
        assert_eq!(&redacted.text[redacted.map(after)..], "kind2: x\n");
        let inside = text.find("hunter2").expect("present") as u32 + 2;
        assert_eq!(
            &redacted.text[redacted.map(inside)..redacted.map(inside) + 10],
            "<redacted>"
        );
        assert_eq!(redacted.map(0), 0);
    }

    #[test]
    fn escapes_move_offsets_and_never_open_a_secret() {
        let text = "a: \u{1b}[31mx\nb: y\n";
        let escaped = Redacted::new(text.as_bytes(), Vec::new(), safe::cuts(text.as_bytes()));
        assert_eq!(escaped.text, "a: \\x1b[31mx\nb: y\n");
        let b = text.find("b:").expect("present") as u32;
        assert_eq!(&escaped.text[escaped.map(b)..], "b: y\n");
        let secret = "k: s\u{1b}cret\n";
        let cuts = vec![(3, 8)];
        let redacted = Redacted::new(secret.as_bytes(), cuts, safe::cuts(secret.as_bytes()));
        assert_eq!(redacted.text, "k: <redacted>t\n");
    }
}
