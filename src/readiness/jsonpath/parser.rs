//! The kubectl `JSONPath` template parser (SPEC §3): the grammar of client-go's
//! `util/jsonpath`, including its quirks, so that an expression accepted or rejected here is
//! accepted or rejected the same way by kubectl and by Helm.
//!
//! The grammar is token-driven: inside `{…}` each character picks the next token (`.` a field,
//! `[` an index, slice, union or dict key, `[?(` a filter, `..` recursive descent, a quote a
//! literal, a digit a number, a letter an identifier such as `range` or `end`). Unions, dict
//! keys and filter operands are re-parsed as templates of their own, as client-go does, which
//! is why `['a.b']` means `.a.b`. Errors carry the byte offset of the problem in the text the
//! caller gave, also from inside those re-parsed pieces.

use super::{Node, Param, PathError, Top};

/// Maps an offset in a re-parsed piece back to the text the caller gave.
#[derive(Clone, Copy)]
struct Origin<'p> {
    /// Where the piece's own text starts in the parent's coordinates.
    base: usize,
    /// Bytes the re-parse added in front of the piece (`{[`, `{.`, `{`).
    prefix: usize,
    /// Length of the piece's own text.
    len: usize,
    parent: Option<&'p Origin<'p>>,
}

impl Origin<'_> {
    fn map(&self, local: usize) -> usize {
        let inside = local.saturating_sub(self.prefix).min(self.len);
        let up = self.base + inside;
        match self.parent {
            Some(parent) => parent.map(up),
            None => up,
        }
    }
}

const EOF: Option<char> = None;

struct Parser<'s, 'p> {
    input: &'s str,
    pos: usize,
    start: usize,
    width: usize,
    origin: Origin<'p>,
}

/// Parses a whole template (`text {.a} more {range .b[*]}…{end}`).
pub(super) fn parse_template(text: &str) -> Result<Vec<Top>, PathError> {
    let origin = Origin {
        base: 0,
        prefix: 0,
        len: text.len(),
        parent: None,
    };
    parse_with(text, origin)
}

fn parse_with(text: &str, origin: Origin<'_>) -> Result<Vec<Top>, PathError> {
    let mut parser = Parser {
        input: text,
        pos: 0,
        start: 0,
        width: 0,
        origin,
    };
    let mut tops = Vec::new();
    parser.parse_text(&mut tops)?;
    Ok(tops)
}

/// Re-parses `piece` (found at `base` in the current text) wrapped as `{prefix piece}`, and
/// returns the nodes of its first action, as client-go's `parseAction` does.
fn parse_action(
    prefix: &str,
    piece: &str,
    base: usize,
    parent: &Origin<'_>,
) -> Result<Vec<Node>, PathError> {
    let wrapped = format!("{{{prefix}{piece}}}");
    let origin = Origin {
        base,
        prefix: 1 + prefix.len(),
        len: piece.len(),
        parent: Some(parent),
    };
    let tops = parse_with(&wrapped, origin)?;
    Ok(match tops.into_iter().next() {
        Some(Top::List(nodes)) => nodes,
        _ => Vec::new(),
    })
}

fn is_space(c: char) -> bool {
    c == ' ' || c == '\t'
}

fn is_end_of_line(c: char) -> bool {
    c == '\r' || c == '\n'
}

fn is_terminator(c: Option<char>) -> bool {
    match c {
        None => true,
        Some(c) => {
            is_space(c)
                || is_end_of_line(c)
                || matches!(c, '.' | ',' | '[' | ']' | '$' | '@' | '{' | '}')
        }
    }
}

/// Go's `unicode.IsDigit`: decimal digits of any script.
fn is_digit(c: char) -> bool {
    c.is_ascii_digit() || (!c.is_ascii() && c.is_numeric())
}

fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || is_digit(c)
}

/// Go's `%#U` rendering of a character in error messages (`U+0026 '&'`).
pub(super) fn go_char(c: char) -> String {
    if c.is_control() {
        format!("U+{:04X}", u32::from(c))
    } else {
        format!("U+{:04X} '{c}'", u32::from(c))
    }
}

impl Parser<'_, '_> {
    fn error(&self, at: usize, message: impl Into<String>) -> PathError {
        PathError {
            offset: self.origin.map(at),
            message: message.into(),
        }
    }

    fn next(&mut self) -> Option<char> {
        let Some(c) = self.input[self.pos..].chars().next() else {
            self.width = 0;
            return EOF;
        };
        self.width = c.len_utf8();
        self.pos += self.width;
        Some(c)
    }

    fn peek(&mut self) -> Option<char> {
        self.input[self.pos..].chars().next()
    }

    fn backup(&mut self) {
        self.pos -= self.width;
    }

    fn consume(&mut self) -> &str {
        let value = &self.input[self.start..self.pos];
        self.start = self.pos;
        value
    }

    fn rest(&self) -> &str {
        &self.input[self.pos..]
    }

    fn parse_text(&mut self, tops: &mut Vec<Top>) -> Result<(), PathError> {
        while let Some(i) = self.rest().find('{') {
            self.pos += i;
            if self.pos > self.start {
                tops.push(Top::Text(self.consume().to_owned()));
            }
            self.pos += 1;
            self.consume();
            let mut list = Vec::new();
            self.parse_inside_action(&mut list)?;
            tops.push(Top::List(list));
        }
        self.pos = self.input.len();
        if self.pos > self.start {
            tops.push(Top::Text(self.consume().to_owned()));
        }
        Ok(())
    }

    /// Reads tokens until the action's closing `}`.
    fn parse_inside_action(&mut self, cur: &mut Vec<Node>) -> Result<(), PathError> {
        loop {
            if self.rest().starts_with('}') {
                self.pos += 1;
                self.consume();
                return Ok(());
            }
            if self.rest().starts_with("[?(") {
                self.parse_filter(cur)?;
                continue;
            }
            if self.rest().starts_with("..") {
                self.parse_recursive(cur)?;
                continue;
            }
            let at = self.pos;
            match self.next() {
                None => return Err(self.error(at, "unclosed action")),
                Some(c) if is_end_of_line(c) => return Err(self.error(at, "unclosed action")),
                Some(' ' | '@' | '$') => {
                    self.consume();
                }
                Some('[') => self.parse_array(cur)?,
                Some(q @ ('"' | '\'')) => self.parse_quote(cur, q)?,
                Some('.') => self.parse_field(cur),
                Some(c) if c == '+' || c == '-' || is_digit(c) => {
                    self.backup();
                    self.parse_number(cur)?;
                }
                Some(c) if is_alphanumeric(c) => {
                    self.backup();
                    self.parse_identifier(cur);
                }
                Some(c) => {
                    return Err(self.error(
                        at,
                        format!("unrecognized character in action: {}", go_char(c)),
                    ));
                }
            }
        }
    }

    fn parse_identifier(&mut self, cur: &mut Vec<Node>) {
        let at = self.origin.map(self.pos);
        loop {
            let c = self.next();
            if is_terminator(c) {
                self.backup();
                break;
            }
        }
        let value = self.consume();
        cur.push(match value {
            "true" => Node::Bool(true),
            "false" => Node::Bool(false),
            _ => Node::Identifier(value.to_owned(), at),
        });
    }

    fn parse_recursive(&mut self, cur: &mut Vec<Node>) -> Result<(), PathError> {
        if matches!(cur.last(), Some(Node::Recursive)) {
            return Err(self.error(self.pos, "invalid multiple recursive descent"));
        }
        self.pos += 2;
        self.consume();
        cur.push(Node::Recursive);
        if self.peek().is_some_and(is_alphanumeric) {
            self.parse_field(cur);
        }
        Ok(())
    }

    fn parse_number(&mut self, cur: &mut Vec<Node>) -> Result<(), PathError> {
        let at = self.pos;
        if matches!(self.peek(), Some('+' | '-')) {
            self.next();
        }
        loop {
            match self.next() {
                Some(c) if c == '.' || is_digit(c) => {}
                _ => {
                    self.backup();
                    break;
                }
            }
        }
        let value = self.consume();
        if let Ok(i) = value.parse::<i64>() {
            cur.push(Node::Int(i));
            return Ok(());
        }
        if let Some(f) = crate::readiness::gofmt::parse_float(value) {
            cur.push(Node::Float(f));
            return Ok(());
        }
        let message = format!("cannot parse number {value}");
        Err(self.error(at, message))
    }

    fn parse_array(&mut self, cur: &mut Vec<Node>) -> Result<(), PathError> {
        let open = self.start;
        loop {
            match self.next() {
                None | Some('\n') => return Err(self.error(open, "unterminated array")),
                Some(']') => break,
                Some(_) => {}
            }
        }
        let whole = self.consume();
        let text_base = open + 1;
        let mut text = &whole[1..whole.len() - 1];
        if text == "*" {
            text = ":";
        }
        let text = text.to_owned();

        if text.contains(',') {
            let mut union = Vec::new();
            let mut at = text_base;
            for part in text.split(',') {
                let trimmed = part.trim_matches(' ');
                let lead = part.len() - part.trim_start_matches(' ').len();
                let piece = format!("{trimmed}]");
                union.push(parse_action("[", &piece, at + lead, &self.origin)?);
                at += part.len() + 1;
            }
            cur.push(Node::Union(union));
            return Ok(());
        }

        if let Some(key) = text
            .strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .filter(|k| !k.contains('\''))
        {
            let nodes = parse_action(".", key, text_base + 1, &self.origin)?;
            cur.extend(nodes);
            return Ok(());
        }

        match slice_params(&text) {
            Ok(params) => {
                cur.push(Node::Array(params));
                Ok(())
            }
            Err(message) => Err(self.error(text_base, message)),
        }
    }

    fn parse_filter(&mut self, cur: &mut Vec<Node>) -> Result<(), PathError> {
        let open = self.pos;
        self.pos += 3;
        self.consume();
        let mut begin = false;
        let mut end = false;
        let mut pair = '"';
        loop {
            let c = self.next();
            match c {
                None | Some('\n') => return Err(self.error(open, "unterminated filter")),
                Some(q @ ('"' | '\'')) => {
                    if !begin {
                        begin = true;
                        pair = q;
                        continue;
                    }
                    if self.input.as_bytes()[self.pos - 2] != b'\\' && q == pair {
                        end = true;
                    }
                }
                Some(')') => {
                    if begin == end {
                        break;
                    }
                }
                Some(_) => {}
            }
        }
        let at = self.pos;
        if self.next() != Some(']') {
            return Err(self.error(at, "unclosed array expect ]"));
        }
        let text_base = self.start;
        let whole = self.consume();
        let text = whole[..whole.len() - 2].to_owned();
        match split_filter(&text) {
            None => {
                let left = parse_action("", &text, text_base, &self.origin)?;
                cur.push(Node::Filter {
                    left,
                    right: Vec::new(),
                    op: "exists".to_owned(),
                });
            }
            Some((l, op, r)) => {
                let left = parse_action("", &text[..l], text_base, &self.origin)?;
                let right = parse_action("", &text[r..], text_base + r, &self.origin)?;
                cur.push(Node::Filter {
                    left,
                    right,
                    op: text[l..op].to_owned(),
                });
            }
        }
        Ok(())
    }

    fn parse_quote(&mut self, cur: &mut Vec<Node>, end: char) -> Result<(), PathError> {
        let open = self.pos - 1;
        loop {
            match self.next() {
                None | Some('\n') => return Err(self.error(open, "unterminated quoted string")),
                Some(c) if c == end && self.input.as_bytes()[self.pos - 2] != b'\\' => break,
                Some(_) => {}
            }
        }
        let value = self.consume().to_owned();
        match unquote_extend(&value) {
            Some(s) => {
                cur.push(Node::Text(s));
                Ok(())
            }
            None => Err(self.error(open, format!("unquote string {value} error invalid syntax"))),
        }
    }

    fn parse_field(&mut self, cur: &mut Vec<Node>) {
        self.consume();
        let at = self.origin.map(self.pos);
        loop {
            let c = self.next();
            if c == Some('\\') {
                self.next();
            } else if is_terminator(c) {
                self.backup();
                break;
            }
        }
        let value = self.consume();
        if value == "*" {
            cur.push(Node::Wildcard);
        } else {
            cur.push(Node::Field(value.replace('\\', ""), at));
        }
    }
}

/// The filter split of client-go, `^([^!<>=]+)([!<>=]+)(.+?)$`: returns the end of the left
/// operand, the end of the operator and the start of the right operand.
fn split_filter(text: &str) -> Option<(usize, usize, usize)> {
    let is_op = |b: u8| matches!(b, b'!' | b'<' | b'>' | b'=');
    let bytes = text.as_bytes();
    let left_end = bytes.iter().position(|&b| is_op(b))?;
    if left_end == 0 {
        return None;
    }
    let run = bytes[left_end..].iter().take_while(|&&b| is_op(b)).count();
    let mut op_end = left_end + run;
    if op_end == bytes.len() {
        // The right operand needs one character: the regex gives it the last operator byte.
        if run < 2 {
            return None;
        }
        op_end -= 1;
    }
    Some((left_end, op_end, op_end))
}

/// The slice grammar `^(-?\d*)(:-?\d*)?(:-?\d*)?$` and client-go's defaults for missing parts.
fn slice_params(text: &str) -> Result<[Param; 3], String> {
    let invalid = || format!("invalid array index {text}");
    let mut groups: [Option<&str>; 3] = [None, None, None];
    let mut rest = text;
    for (i, group) in groups.iter_mut().enumerate() {
        let mut len = 0;
        let bytes = rest.as_bytes();
        if i > 0 {
            if bytes.first() != Some(&b':') {
                break;
            }
            len = 1;
        }
        if bytes.get(len) == Some(&b'-') {
            len += 1;
        }
        len += bytes[len..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        *group = Some(&rest[..len]);
        rest = &rest[len..];
    }
    if !rest.is_empty() {
        return Err(invalid());
    }
    let mut params = [Param::default(); 3];
    for i in 0..3 {
        match groups[i].filter(|g| !g.is_empty()) {
            Some(group) => {
                let digits = if i > 0 { &group[1..] } else { group };
                if i > 0 && digits.is_empty() {
                    params[i].known = false;
                } else {
                    params[i].known = true;
                    params[i].value = digits
                        .parse::<i64>()
                        .map_err(|_| format!("array index {digits} is not a number"))?;
                }
            }
            None if i == 1 => {
                params[1] = Param {
                    known: true,
                    value: params[0].value.saturating_add(1),
                    derived: true,
                };
            }
            None => {}
        }
    }
    Ok(params)
}

/// Go's `strconv.Unquote`, extended to single quotes (client-go's `UnquoteExtend`).
fn unquote_extend(s: &str) -> Option<String> {
    let quote = s.chars().next()?;
    if s.len() < 2 || !s.ends_with(quote) || (quote != '"' && quote != '\'') {
        return None;
    }
    let inner = &s[1..s.len() - 1];
    if !inner.contains('\\') && !inner.contains(quote) {
        return Some(inner.to_owned());
    }
    let mut out: Vec<u8> = Vec::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c == quote {
            return None;
        }
        if c != '\\' {
            let mut buf = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            continue;
        }
        let e = chars.next()?;
        let simple = match e {
            'a' => Some(7u8),
            'b' => Some(8),
            'f' => Some(12),
            'n' => Some(b'\n'),
            'r' => Some(b'\r'),
            't' => Some(b'\t'),
            'v' => Some(11),
            '\\' => Some(b'\\'),
            '\'' | '"' if e == quote => Some(e as u8),
            _ => None,
        };
        if let Some(b) = simple {
            out.push(b);
            continue;
        }
        let (digits, radix) = match e {
            'x' => (2, 16),
            'u' => (4, 16),
            'U' => (8, 16),
            '0'..='7' => (2, 8),
            _ => return None,
        };
        let mut value: u32 = if radix == 8 { e.to_digit(8)? } else { 0 };
        for _ in 0..digits {
            let d = chars.next()?.to_digit(radix)?;
            value = value.checked_mul(radix)?.checked_add(d)?;
        }
        match e {
            'x' | '0'..='7' => out.push(u8::try_from(value).ok()?),
            _ => {
                let c = char::from_u32(value)?;
                let mut buf = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    // NOTE: Go keeps raw bytes from `\xff`; a Rust string cannot, so they become U+FFFD.
    Some(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "test inputs are fixed")]
mod tests {
    use super::*;

    #[test]
    fn filter_split_follows_the_regex() {
        assert_eq!(split_filter("@.a==\"x\""), Some((3, 5, 5)));
        assert_eq!(split_filter("@.a=="), Some((3, 4, 4)));
        assert_eq!(split_filter("@.a="), None);
        assert_eq!(split_filter("@.a"), None);
        assert_eq!(split_filter("==1"), None);
    }

    #[test]
    fn slices_get_client_go_defaults() {
        let p = slice_params("-1").unwrap();
        assert!(p[0].known && p[0].value == -1 && p[1].derived && p[1].value == 0);
        let p = slice_params("1:").unwrap();
        assert!(p[0].known && !p[1].known && !p[2].known);
        let p = slice_params("::2").unwrap();
        assert!(!p[0].known && !p[1].known && p[2].known && p[2].value == 2);
        assert!(slice_params("a").is_err());
        assert_eq!(
            slice_params("-").unwrap_err(),
            "array index - is not a number"
        );
    }

    #[test]
    fn unquote_handles_escapes() {
        assert_eq!(unquote_extend(r#""a\"b""#).as_deref(), Some("a\"b"));
        assert_eq!(unquote_extend(r"'a\'b'").as_deref(), Some("a'b"));
        assert_eq!(unquote_extend(r#"'a\"b'"#), None);
        assert_eq!(unquote_extend(r#""\u00e9""#).as_deref(), Some("é"));
    }
}
