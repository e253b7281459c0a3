//! `JUnit` XML, the test-report format most CI systems display (GitLab, Jenkins, Azure
//! Pipelines): one test suite per file with findings, one failing test case per finding; a
//! clean run is one passing case, so the report is never empty.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Write};

use super::location::{locate, repository_root};
use super::{Reporter, Run};
use crate::lint::Finding;

pub struct Junit;

/// Escapes text for XML attributes and content. Characters XML 1.0 does not allow in a
/// document (control characters other than tab, newline and carriage return; U+FFFE, U+FFFF)
/// are written as visible escapes (`\x01`, `\u{fffe}`), so the report stays well-formed
/// whatever the input holds; a carriage return as a character reference, which XML keeps.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\r' => out.push_str("&#13;"),
            '\t' | '\n' => out.push(c),
            c if u32::from(c) < 0x20 || matches!(c, '\u{fffe}' | '\u{ffff}') => {
                let code = u32::from(c);
                if code <= 0xff {
                    let _ = write!(out, "\\x{code:02x}");
                } else {
                    let _ = write!(out, "\\u{{{code:04x}}}");
                }
            }
            c => out.push(c),
        }
    }
    out
}

impl Reporter for Junit {
    fn report_all(&self, out: &mut dyn Write, runs: &[Run<'_>]) -> io::Result<()> {
        let root = repository_root();
        let mut by_file: BTreeMap<String, Vec<(String, &Finding)>> = BTreeMap::new();
        for run in runs {
            for f in &run.report.findings {
                let (file, at) = match locate(run.model, f, root.as_deref()) {
                    Some(l) => match &l.region {
                        Some(p) => (
                            l.path.clone(),
                            format!("{}:{}:{}", l.path, p.line, p.column),
                        ),
                        None => (l.path.clone(), l.path.clone()),
                    },
                    None => (
                        f.location.file.clone(),
                        format!(
                            "{}:{}:{}",
                            f.location.file, f.location.line, f.location.column
                        ),
                    ),
                };
                by_file.entry(file).or_default().push((at, f));
            }
        }
        let total: usize = by_file.values().map(Vec::len).sum();
        let mut xml_out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            xml_out,
            "<testsuites name=\"chartseq lint\" tests=\"{}\" failures=\"{total}\" errors=\"0\">",
            total.max(1)
        );
        if by_file.is_empty() {
            xml_out.push_str(
                "  <testsuite name=\"chartseq lint\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"0\">\n    <testcase name=\"no findings\" classname=\"chartseq\"/>\n  </testsuite>\n",
            );
        }
        for (file, findings) in &by_file {
            let _ = writeln!(
                xml_out,
                "  <testsuite name=\"{}\" tests=\"{n}\" failures=\"{n}\" errors=\"0\" skipped=\"0\">",
                xml(file),
                n = findings.len()
            );
            for (at, f) in findings {
                let mut body = format!("{at}: {} [{}] {}", f.code, f.severity.as_str(), f.message);
                if !f.help.is_empty() {
                    let _ = write!(body, "\nhelp: {}", f.help);
                }
                for note in &f.notes {
                    let _ = write!(body, "\nnote: {note}");
                }
                let _ = writeln!(
                    xml_out,
                    "    <testcase name=\"{} {} at {}\" classname=\"{}\" file=\"{}\">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>",
                    f.code,
                    f.name,
                    xml(at),
                    xml(file),
                    xml(file),
                    xml(&f.message),
                    f.severity.as_str(),
                    xml(&body)
                );
            }
            xml_out.push_str("  </testsuite>\n");
        }
        xml_out.push_str("</testsuites>\n");
        out.write_all(xml_out.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::xml;

    #[test]
    fn characters_xml_forbids_become_visible() {
        assert_eq!(xml("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
        assert_eq!(xml("t\tn\nr\r"), "t\tn\nr&#13;");
        assert_eq!(
            xml("\u{0}\u{1b}\u{fffe}\u{ffff}\u{fffd}"),
            "\\x00\\x1b\\u{fffe}\\u{ffff}\u{fffd}"
        );
    }
}
