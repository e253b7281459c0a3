//! Helm's document separator rule.
//!
//! Helm (`releaseutil.SplitManifests`) splits a stream wherever a line starts with `---`
//! (regex `(?:^|\s*\n)---\s*`): the rest of that line, if any, belongs to the next document,
//! an indented `---` does not split, and whitespace-only pieces are dropped. We keep byte
//! ranges instead of copies, and recover each document's `# Source:` template path.

use std::ops::Range;

/// One document of a rendered stream, as byte ranges into the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawDoc {
    /// The document's content: leading blank lines, trailing whitespace and any
    /// `## START/END resource-group` marker lines at either edge removed.
    pub range: Range<usize>,
    /// The template path from the `# Source:` comment, or the previous document's when this
    /// one has none (a `crds/` file with several documents carries it only once).
    pub source_path: Option<String>,
    /// `source_path` was taken from an earlier document.
    pub source_inherited: bool,
}

const MARKERS: [&[u8]; 2] = [b"## START resource-group:", b"## END resource-group:"];

/// Splits a stream into documents by Helm's rule.
#[must_use]
pub fn split_stream(bytes: &[u8]) -> Vec<RawDoc> {
    let mut docs = Vec::new();
    let mut previous_source: Option<String> = None;
    let mut piece_start = 0usize;
    let mut push = |start: usize, end: usize, docs: &mut Vec<RawDoc>| {
        if let Some(range) = trim_document(bytes, start, end) {
            let own = source_path(&bytes[range.clone()]);
            let inherited = own.is_none() && previous_source.is_some();
            let source_path = own.or_else(|| previous_source.clone());
            previous_source.clone_from(&source_path);
            docs.push(RawDoc {
                range,
                source_path,
                source_inherited: inherited,
            });
        }
    };
    // Separators are lines starting with `---`: at offset 0, or right after a newline.
    let starts = bytes.starts_with(b"---").then_some(0).into_iter();
    for line_start in starts.chain(memchr::memmem::find_iter(bytes, b"\n---").map(|p| p + 1)) {
        push(piece_start, line_start, &mut docs);
        piece_start = line_start + 3;
    }
    push(piece_start, bytes.len(), &mut docs);
    docs
}

fn memchr_newline(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |p| from + p)
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

fn is_marker(line: &[u8]) -> bool {
    let trimmed = trim_ascii(line);
    MARKERS.iter().any(|m| trimmed.starts_with(m))
}

fn trim_ascii(line: &[u8]) -> &[u8] {
    line.trim_ascii()
}

/// Narrows `[start, end)` to the document's content, or `None` when nothing is left.
fn trim_document(bytes: &[u8], mut start: usize, mut end: usize) -> Option<Range<usize>> {
    // Whitespace right after `---` on the separator line goes with the separator.
    while start < end && matches!(bytes[start], b' ' | b'\t' | b'\r') {
        start += 1;
    }
    loop {
        // Drop blank and marker lines at the start.
        let line_end = memchr_newline(bytes, start).min(end);
        let line = &bytes[start..line_end];
        if start < end && (is_blank(line) || is_marker(line)) {
            start = (line_end + 1).min(end);
            continue;
        }
        break;
    }
    loop {
        while end > start && bytes[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        let line_start = bytes[start..end]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(start, |p| start + p + 1);
        if end > start && is_marker(&bytes[line_start..end]) {
            end = line_start;
            continue;
        }
        break;
    }
    (start < end).then_some(start..end)
}

/// The `# Source:` path among the document's leading comment lines.
fn source_path(doc: &[u8]) -> Option<String> {
    for line in doc.split(|&b| b == b'\n') {
        let line = trim_ascii(line);
        if line.is_empty() {
            continue;
        }
        if !line.starts_with(b"#") {
            return None;
        }
        if let Some(path) = line.strip_prefix(b"# Source:") {
            let path = trim_ascii(path);
            return (!path.is_empty()).then(|| String::from_utf8_lossy(path).into_owned());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(stream: &str) -> Vec<&str> {
        split_stream(stream.as_bytes())
            .into_iter()
            .map(|d| &stream[d.range])
            .collect()
    }

    #[test]
    fn splits_on_column_zero_dashes_only() {
        let stream = "---\n# Source: a/templates/x.yaml\na: 1\n\n---\nb: |\n  ---\n  c\n---\n\n";
        assert_eq!(
            texts(stream),
            vec!["# Source: a/templates/x.yaml\na: 1", "b: |\n  ---\n  c"]
        );
    }

    #[test]
    fn text_after_dashes_belongs_to_the_next_document() {
        assert_eq!(
            texts("---apiVersion: v1\n--- # c\nkind: X\n"),
            vec!["apiVersion: v1", "# c\nkind: X"]
        );
    }

    #[test]
    fn markers_on_either_side_of_the_separator_are_dropped() {
        let stream = "## START resource-group: c g\n---\n# Source: c/templates/a.yaml\na: 1\n\n## END resource-group: c g\n## START resource-group: c h\n---\nb: 2\n## END resource-group: c h\n";
        assert_eq!(
            texts(stream),
            vec!["# Source: c/templates/a.yaml\na: 1", "b: 2"]
        );
    }

    #[test]
    fn documents_without_source_inherit_the_previous_one() {
        let docs = split_stream(b"---\n# Source: c/crds/x.yaml\n# only a comment\n---\nkind: A\n");
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1].source_path.as_deref(), Some("c/crds/x.yaml"));
        assert!(docs[1].source_inherited);
    }

    #[test]
    fn stream_without_separators_is_one_document() {
        assert_eq!(texts("\n\nkind: A\n"), vec!["kind: A"]);
        assert!(texts("\n  \n---\n---\n").is_empty());
    }
}
