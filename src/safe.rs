//! Text from the input made safe for each output: control characters shown as escapes.
//!
//! Beside the layers (`plan`, `lint`, `report`, `migrate` and the commands all write names
//! from the input), so that each uses the same escapes.
//!
//! A chart is untrusted input. Its bytes reach the human-facing outputs (snippets, messages,
//! file names, plan text, GitHub's log); an ESC sequence echoed raw would recolour the
//! terminal, retitle the window or hide text, and bidirectional overrides would reorder what
//! the reader sees. Every such character is written as a visible escape (`\x1b`,
//! `\u{202e}`); bytes that are not UTF-8 as `\xff`. Newlines and tabs are kept where the
//! format has lines.
//!
//! The other formats a name from the input reaches have their own escapes, all here so that
//! every writer uses the same ones: the quoted names of `chartseq template`'s markers
//! ([`marker_name`]), Markdown prose and code spans ([`markdown`], [`markdown_code`]) and
//! Mermaid labels ([`mermaid_label`]). Each keeps a name on one line, so that no name can
//! start a line of its own (a YAML document, a heading, a workflow command).

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether a character must not reach a terminal raw (newline and tab aside).
fn dangerous(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        // Line and paragraph separators end a line for YAML 1.1 readers (Helm's, kubectl's)
        // and for JavaScript; never a name's own.
        || matches!(c, '\u{2028}' | '\u{2029}')
}

/// The visible escape of a character.
fn escape_char(c: char, out: &mut String) {
    let code = u32::from(c);
    if code <= 0xff {
        let _ = write!(out, "\\x{code:02x}");
    } else {
        let _ = write!(out, "\\u{{{code:04x}}}");
    }
}

/// `text` with control characters escaped; newlines and tabs kept (a carriage return only
/// as part of a CRLF line end).
#[must_use]
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// As [`terminal_safe`], for one-line formats: newlines and tabs escaped too.
#[must_use]
pub fn one_line(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

fn escape(text: &str, single_line: bool) -> Cow<'_, str> {
    let bad = |c: char, next: Option<char>| {
        dangerous(c) && !(c == '\r' && next == Some('\n') && !single_line)
            || single_line && (c == '\n' || c == '\t')
    };
    let mut chars = text.chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        if bad(c, chars.peek().copied()) {
            any = true;
            break;
        }
    }
    if !any {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if bad(c, chars.peek().copied()) {
            escape_char(c, &mut out);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether a name can stand in a `chartseq template` marker line as it is: printable, on one
/// line, not starting or ending with blanks, and not starting with the `"` of a quoted name.
fn plain_marker_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(['"', ' '])
        && !name.ends_with(' ')
        && !name.chars().any(marker_escaped)
}

/// Whether a character of a marker name is written as an escape: anything that could end or
/// corrupt the comment line for a YAML reader (control characters, line breaks, blanks other
/// than the space, characters YAML does not allow in a stream, a byte order mark).
fn marker_escaped(c: char) -> bool {
    c != ' '
        && (dangerous(c) || c.is_whitespace() || matches!(c, '\u{feff}' | '\u{fffe}' | '\u{ffff}'))
}

/// A chart path or group name as `chartseq template` writes it in a
/// `## START resource-group:` / `## END` marker: as it is when it is plain (Helm's own form),
/// otherwise a JSON string (which is also a YAML double-quoted string) whose every control
/// character, line break or other unusual blank is a `\uXXXX` escape. No name can end the
/// comment line and start a document of its own.
#[must_use]
pub fn marker_name(name: &str) -> Cow<'_, str> {
    if plain_marker_name(name) {
        return Cow::Borrowed(name);
    }
    Cow::Owned(quoted(name))
}

/// Whether a value written into YAML must be a double-quoted string with escapes: it holds a
/// character that ends a line or that YAML does not allow raw in a stream.
#[must_use]
pub fn needs_yaml_escapes(text: &str) -> bool {
    text.chars().any(|c| c != '\t' && marker_escaped(c))
}

/// `text` as a JSON string, which is also a YAML double-quoted string, on one line: quotes and
/// backslashes escaped, and every control character, line break or unusual blank as an escape.
#[must_use]
pub fn quoted(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 2);
    out.push('"');
    for c in name.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if marker_escaped(c) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Text from the input as Markdown prose (a heading, a paragraph, a table cell): on one line
/// (control characters as escapes), and every character that can open markup in GitHub's
/// Markdown backslash-escaped (emphasis, code, links and images, raw HTML and entities,
/// headings, strikethrough, math), so that the text renders as written. Parentheses and other
/// punctuation stay: with no `[`, they open nothing. A table cell escapes `|` itself.
#[must_use]
pub fn markdown(text: &str) -> String {
    let line = one_line(text);
    let mut out = String::with_capacity(line.len() + 8);
    for c in line.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '#' | '~' | '!' | '$'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A message of chartseq's own words with names from the input in code spans
/// (``group `db` depends on `x` ``) as Markdown: on one line, each code span kept (its content
/// is inert, whatever it holds), the words between escaped as [`markdown`] does, and a
/// backtick left without a partner (from a name) escaped.
#[must_use]
pub fn markdown_message(text: &str) -> String {
    let line = one_line(text);
    let parts: Vec<&str> = line.split('`').collect();
    let mut out = String::with_capacity(line.len() + 8);
    for (i, part) in parts.iter().enumerate() {
        let code = i % 2 == 1;
        if code && i + 1 < parts.len() && !part.is_empty() {
            out.push('`');
            out.push_str(part);
            out.push('`');
        } else if code {
            // An unpaired or empty span: its backticks as text.
            out.push_str("\\`");
            out.push_str(&markdown(part));
            if i + 1 < parts.len() {
                out.push_str("\\`");
            }
        } else {
            out.push_str(&markdown(part));
        }
    }
    out
}

/// Text from the input as a Markdown code span: on one line, its backticks written as `'` so
/// that the span cannot close early. A table cell escapes `|` itself.
#[must_use]
pub fn markdown_code(text: &str) -> String {
    format!("`{}`", one_line(text).replace('`', "'"))
}

/// Text from the input as a quoted Mermaid label (`["…"]`): on one line, and the characters
/// Mermaid or the Markdown around a diagram read (`"`, `<`, `>`, `&`, `` ` ``) as Mermaid's
/// `#…;` entity codes. (A `#` stays: at worst it spells an entity, one character.)
#[must_use]
pub fn mermaid_label(text: &str) -> String {
    let line = one_line(text);
    let mut out = String::with_capacity(line.len() + 8);
    for c in line.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '&' => out.push_str("#amp;"),
            '`' => out.push_str("#96;"),
            c => out.push(c),
        }
    }
    out
}

/// Bytes (possibly not UTF-8) made safe: the replacements of a buffer, as sorted
/// `(start, end, text)` cuts, so that a renderer can keep its offsets.
#[must_use]
pub fn cuts(bytes: &[u8]) -> Vec<(u32, u32, String)> {
    let mut out = Vec::new();
    let mut offset = 0usize;
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        let mut chars = valid.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            let next = chars.peek().map(|&(_, n)| n);
            if dangerous(c) && !(c == '\r' && next == Some('\n')) {
                let mut text = String::new();
                escape_char(c, &mut text);
                let start = offset + i;
                out.push((start as u32, (start + c.len_utf8()) as u32, text));
            }
        }
        offset += valid.len();
        for (i, byte) in chunk.invalid().iter().enumerate() {
            let at = offset + i;
            out.push((at as u32, at as u32 + 1, format!("\\x{byte:02x}")));
        }
        offset += chunk.invalid().len();
    }
    out
}

/// Whole bytes made safe (plan text, which has no offsets to keep).
#[must_use]
pub fn bytes(input: &[u8]) -> Vec<u8> {
    let cuts = cuts(input);
    if cuts.is_empty() {
        return input.to_vec();
    }
    let mut out = Vec::with_capacity(input.len() + cuts.len() * 4);
    let mut at = 0usize;
    for (start, end, text) in cuts {
        out.extend_from_slice(&input[at..start as usize]);
        out.extend_from_slice(text.as_bytes());
        at = end as usize;
    }
    out.extend_from_slice(&input[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_visible() {
        assert_eq!(terminal_safe("plain\ttext\n"), "plain\ttext\n");
        assert!(matches!(terminal_safe("plain"), Cow::Borrowed(_)));
        assert_eq!(terminal_safe("a\u{1b}[31mred"), "a\\x1b[31mred");
        assert_eq!(terminal_safe("bell\u{7}\u{7f}"), "bell\\x07\\x7f");
        assert_eq!(terminal_safe("csi\u{9b}"), "csi\\x9b");
        assert_eq!(terminal_safe("rtl\u{202e}x"), "rtl\\u{202e}x");
        assert_eq!(terminal_safe("crlf\r\nlone\r"), "crlf\r\nlone\\x0d");
        assert_eq!(one_line("two\nlines\t"), "two\\x0alines\\x09");
    }

    #[test]
    fn marker_names_stay_on_their_line() {
        assert_eq!(marker_name("db"), "db");
        assert!(matches!(marker_name("my group/x:1"), Cow::Borrowed(_)));
        assert_eq!(marker_name("db\n---\nkind: X"), "\"db\\n---\\nkind: X\"");
        assert_eq!(marker_name("\"q\\"), "\"\\\"q\\\\\"");
        assert_eq!(marker_name(" lead"), "\" lead\"");
        assert_eq!(
            marker_name("a\u{2028}b\u{0}\u{85}\u{fffe}"),
            "\"a\\u2028b\\u0000\\u0085\\ufffe\""
        );
        for name in ["x\ny", "x\ry", "\u{2029}", "\u{1b}[1m", "\"", "a\u{feff}"] {
            let quoted = marker_name(name);
            assert!(!quoted.contains(['\n', '\r', '\u{2028}', '\u{2029}', '\u{85}']));
            let back: String = serde_json::from_str(&quoted).expect("a JSON string");
            assert_eq!(back, name);
        }
    }

    #[test]
    fn markdown_and_mermaid_text_is_inert() {
        assert_eq!(markdown("db-1 (shop)"), "db-1 (shop)");
        assert_eq!(
            markdown("# h\n![i](x) <b>&</b> `c` *e* ~s~ $m$ a|b"),
            "\\# h\\\\x0a\\!\\[i\\](x) \\<b\\>\\&\\</b\\> \\`c\\` \\*e\\* \\~s\\~ \\$m\\$ a|b"
        );
        assert_eq!(markdown_code("a`b\nc"), "`a'b\\x0ac`");
        assert_eq!(
            markdown_message("group `db<b>` needs `x` <i>"),
            "group `db<b>` needs `x` \\<i\\>"
        );
        assert_eq!(markdown_message("a `b` `c"), "a `b` \\`c");
        assert_eq!(markdown_message("a `` b"), "a \\`\\` b");
        assert_eq!(
            mermaid_label("a\"b<c>&`\n```"),
            "a#quot;b#lt;c#gt;#amp;#96;\\x0a#96;#96;#96;"
        );
    }

    #[test]
    fn bytes_keep_text_and_escape_the_rest() {
        assert_eq!(bytes(b"ok\n"), b"ok\n");
        assert_eq!(
            bytes(b"a\x1b]0;title\x07b\xffc"),
            b"a\\x1b]0;title\\x07b\\xffc"
        );
        let cut = cuts("é\u{1b}".as_bytes());
        assert_eq!(cut, vec![(2, 3, "\\x1b".to_owned())]);
    }
}
