//! GitHub Actions workflow commands (`::error file=…,line=…::message`), which the runner turns
//! into annotations on the pull request, and the Markdown step summary written to
//! `$GITHUB_STEP_SUMMARY`: counts per rule, the findings, and each chart's install order as a
//! Mermaid flowchart.
//!
//! In a GitHub run every line chartseq prints is read by the runner, which takes any line
//! starting (after blanks) with `::` as a workflow command. Text from a chart therefore reaches
//! the log only escaped: inside the tool's own commands through [`escape_data`] (GitHub's
//! `escapeData`; a message is one line), and everywhere else, stdout and stderr, helm's
//! messages included, through the [`Log`] writer, which passes every line through
//! [`log_line`]. The step summary escapes Markdown and HTML in chart text
//! (`safe::markdown`), so that it renders as written.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::PathBuf;

use super::location::{fallback, locate, repository_root};
use super::{Reporter, Run};
use crate::lint::{Finding, Severity};
use crate::plan::output::{PlanFormat, write_plan};
use crate::safe::{markdown, markdown_code, markdown_message};

/// GitHub shows at most this many annotations of each type (error, warning, notice) per step.
pub const ANNOTATION_LIMIT: usize = 10;

pub struct Github {
    /// The step summary file to append to (`$GITHUB_STEP_SUMMARY`), when set.
    pub summary: Option<PathBuf>,
}

fn command(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "notice",
    }
}

/// Escapes a command's message (GitHub's `escapeData`); other control characters are shown
/// as escapes, since the runner's log is a terminal.
pub(crate) fn escape_data(text: &str) -> String {
    crate::safe::terminal_safe(text)
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// One line of a GitHub run's log that is not the tool's own workflow command: control
/// characters shown as escapes (a carriage return too, which would hide the line's start), and
/// a line that the runner would read as a command (`::` after blanks) has its first `:` written
/// `%3A`, so that the text is shown, not obeyed. `line` holds no newline.
#[must_use]
pub fn log_line(line: &str) -> String {
    let line = crate::safe::terminal_safe(line);
    let blanks = line.len() - line.trim_start().len();
    if line[blanks..].starts_with("::") {
        format!("{}%3A{}", &line[..blanks], &line[blanks + 1..])
    } else {
        line.into_owned()
    }
}

/// A writer for the log of a GitHub run: every complete line written through it goes out as
/// [`log_line`] makes it; an unfinished last line goes out when the writer is dropped.
pub struct Log<W: Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: Write> Log<W> {
    pub fn new(inner: W) -> Self {
        Log {
            inner,
            pending: Vec::new(),
        }
    }

    fn emit(&mut self, line: &[u8], newline: bool) -> io::Result<()> {
        let text = String::from_utf8_lossy(line);
        let text = text.strip_suffix('\r').unwrap_or(&text);
        self.inner.write_all(log_line(text).as_bytes())?;
        if newline {
            self.inner.write_all(b"\n")?;
        }
        Ok(())
    }
}

impl<W: Write> Write for Log<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        while let Some(end) = self.pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            self.emit(&line[..end], true)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<W: Write> Drop for Log<W> {
    fn drop(&mut self) {
        if !self.pending.is_empty() {
            let line = std::mem::take(&mut self.pending);
            let _ = self.emit(&line, true);
        }
        let _ = self.inner.flush();
    }
}

/// Escapes a property value (GitHub's `escapeProperty`): also `:` and `,`, which delimit
/// properties.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

pub(crate) fn annotation(
    run: &Run<'_>,
    finding: &Finding,
    root: Option<&std::path::Path>,
) -> String {
    let mut properties = Vec::new();
    if let Some(location) =
        locate(run.model, finding, root).or_else(|| fallback(run.model, finding, root))
    {
        properties.push(format!("file={}", escape_property(&location.path)));
        if let Some(p) = &location.region {
            properties.push(format!("line={}", p.line));
            properties.push(format!("col={}", p.column));
            properties.push(format!("endLine={}", p.end_line));
            properties.push(format!("endColumn={}", p.end_column));
        }
    }
    properties.push(format!(
        "title={}",
        escape_property(&format!("{} {}", finding.code, finding.name))
    ));
    let mut message = finding.message.clone();
    if !finding.help.is_empty() {
        let _ = write!(message, "\nhelp: {}", finding.help);
    }
    for note in &finding.notes {
        let _ = write!(message, "\nnote: {note}");
    }
    if let Some(note) = finding.guess_note() {
        let _ = write!(message, "\nnote: {note}");
    }
    format!(
        "::{} {}::{}",
        command(finding.severity),
        properties.join(","),
        escape_data(&message)
    )
}

/// A Markdown table cell (already Markdown, chart text escaped): no line breaks, no unescaped
/// pipes.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\r', '\n'], " ")
}

/// The step summary in Markdown.
#[must_use]
pub fn summary(runs: &[Run<'_>]) -> String {
    let root = repository_root();
    let findings: Vec<(&Run<'_>, &Finding)> = runs
        .iter()
        .flat_map(|run| run.report.findings.iter().map(move |f| (run, f)))
        .collect();
    let mut md = String::from("## chartseq lint\n\n");
    let charts: Vec<String> = runs
        .iter()
        .filter_map(super::Run::name)
        .map(|n| markdown_message(&n))
        .collect();
    if !charts.is_empty() {
        let _ = writeln!(md, "Charts: {}\n", charts.join(", "));
    }
    for run in runs {
        if let Some(sets) = &run.report.matrix {
            let _ = writeln!(
                md,
                "Values matrix of {}: {} renderings ({})\n",
                markdown(run.model.charts.first().map_or("", |c| c.display.as_str())),
                sets.len(),
                markdown_message(&sets.join("; "))
            );
        }
    }
    if runs.is_empty() {
        md.push_str("No chart to lint.\n\n");
    } else if findings.is_empty() {
        md.push_str("No findings.\n\n");
    } else {
        let mut per_rule: BTreeMap<(&str, &str), (usize, Severity)> = BTreeMap::new();
        let mut per_type: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, f) in &findings {
            per_rule
                .entry((f.code, f.name))
                .or_insert((0, f.severity))
                .0 += 1;
            *per_type.entry(command(f.severity)).or_default() += 1;
        }
        md.push_str("| Rule | Severity | Findings |\n|---|---|---:|\n");
        for ((code, name), (count, severity)) in &per_rule {
            let _ = writeln!(md, "| {code} {name} | {} | {count} |", severity.as_str());
        }
        md.push('\n');
        for (kind, count) in &per_type {
            if *count > ANNOTATION_LIMIT {
                let _ = writeln!(
                    md,
                    "> [!NOTE]\n> {count} findings are `{kind}` annotations; GitHub shows only {ANNOTATION_LIMIT} of each type per step, so {} are not annotated: all are listed below.\n",
                    count - ANNOTATION_LIMIT
                );
            }
        }
        md.push_str("| Location | Rule | Severity | Message |\n|---|---|---|---|\n");
        for (run, f) in &findings {
            let at = match locate(run.model, f, root.as_deref()) {
                Some(l) => match &l.region {
                    Some(p) => format!("{}:{}:{}", l.path, p.line, p.column),
                    None => l.path.clone(),
                },
                None => format!(
                    "{}:{}:{}",
                    f.location.file, f.location.line, f.location.column
                ),
            };
            let _ = writeln!(
                md,
                "| {} | {} {} | {} | {} |",
                cell(&markdown_code(&at)),
                f.code,
                f.name,
                f.severity.as_str(),
                cell(&markdown_message(&f.message))
            );
        }
        md.push('\n');
    }
    for run in runs {
        let name = run
            .name()
            .map_or_else(|| "the stream".to_owned(), |n| markdown_message(&n));
        let _ = writeln!(md, "### Install order: {name}\n");
        if run
            .report
            .findings
            .iter()
            .any(|f| f.code == crate::rules::RENDER_FAILED.code)
        {
            md.push_str(
                "No install order: helm cannot render the chart (see the findings above).\n\n",
            );
            continue;
        }
        match crate::plan::plan(run.model) {
            Ok(plan) => {
                let mut mermaid = Vec::new();
                if write_plan(
                    &mut mermaid,
                    run.model,
                    &plan,
                    PlanFormat::Mermaid,
                    false,
                    false,
                )
                .is_ok()
                {
                    let _ = writeln!(md, "```mermaid\n{}```\n", String::from_utf8_lossy(&mermaid));
                }
            }
            Err(_) => md.push_str(
                "No install order: the sequencing has errors (see the findings above).\n\n",
            ),
        }
    }
    md
}

impl Reporter for Github {
    fn report_all(&self, out: &mut dyn Write, runs: &[Run<'_>]) -> io::Result<()> {
        let root = repository_root();
        for run in runs {
            for finding in &run.report.findings {
                writeln!(out, "{}", annotation(run, finding, root.as_deref()))?;
            }
        }
        if let Some(path) = &self.summary {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?;
            file.write_all(summary(runs).as_bytes())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_github() {
        assert_eq!(escape_data("50% done\r\nnext"), "50%25 done%0D%0Anext");
        assert_eq!(escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
        assert_eq!(escape_data("x\u{1b}]0;t\u{7}"), "x\\x1b]0;t\\x07");
    }

    #[test]
    fn log_lines_are_never_commands() {
        assert_eq!(log_line("plain: text"), "plain: text");
        assert_eq!(log_line("::error::x"), "%3A:error::x");
        assert_eq!(log_line("   ::warning::x"), "   %3A:warning::x");
        assert_eq!(log_line("a\r::error::x"), "a\\x0d::error::x");
        let mut out = Vec::new();
        {
            let mut log = Log::new(&mut out);
            log.write_all(b"one\n::error::two\n  ::notice")
                .expect("write");
            log.write_all(b"::three\r\nfour").expect("write");
        }
        assert_eq!(
            String::from_utf8(out).expect("utf-8"),
            "one\n%3A:error::two\n  %3A:notice::three\nfour\n"
        );
    }
}
