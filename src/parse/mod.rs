//! YAML documents to span-carrying trees.
//!
//! This is the only module that knows the YAML parser (`saphyr-parser`). Everything above it
//! sees [`Node`]: a scalar, sequence or mapping whose [`Span`] is a byte range in the source
//! buffer it came from. Line and column are derived from that range through
//! [`crate::source::LineIndex`], so a node costs two `u32`s of position.
//!
//! The tree is built iteratively (no recursion), with caps on nesting depth and alias expansion
//! so that hostile input fails with a located error instead of exhausting the stack or memory.

mod scalar;

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span as YamlSpan};

pub use scalar::{ScalarKind, parse_float, resolve_plain};

/// A byte range `[start, end)` in a source buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    #[must_use]
    pub fn new(start: usize, end: usize) -> Self {
        Self {
            start: start as u32,
            end: end as u32,
        }
    }

    #[must_use]
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    #[must_use]
    pub fn shifted(self, by: u32) -> Self {
        Self {
            start: self.start + by,
            end: self.end + by,
        }
    }
}

/// How a scalar was written; decides whether `true` is a boolean or a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

impl Style {
    #[must_use]
    pub fn is_quoted(self) -> bool {
        !matches!(self, Style::Plain)
    }
}

/// One YAML node with the bytes it was written with.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub span: Span,
    pub value: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Scalar {
        text: String,
        style: Style,
        tag: Option<Box<str>>,
    },
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

impl Node {
    /// The scalar text, whatever its resolved type.
    #[must_use]
    pub fn as_scalar(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The resolved kind of a scalar under the Kubernetes (YAML 1.1) schema.
    #[must_use]
    pub fn scalar_kind(&self) -> Option<ScalarKind> {
        match &self.value {
            Value::Scalar { text, style, tag } => Some(match tag.as_deref() {
                Some("tag:yaml.org,2002:str" | "!!str") => ScalarKind::String,
                _ if style.is_quoted() => ScalarKind::String,
                _ => resolve_plain(text),
            }),
            _ => None,
        }
    }

    /// A scalar that Kubernetes reads as a string.
    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match self.scalar_kind()? {
            ScalarKind::String => self.as_scalar(),
            _ => None,
        }
    }

    #[must_use]
    pub fn as_map(&self) -> Option<&[(Node, Node)]> {
        match &self.value {
            Value::Map(entries) => Some(entries),
            _ => None,
        }
    }

    #[must_use]
    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(items) => Some(items),
            _ => None,
        }
    }

    /// The mapping entry for `key`; with duplicate keys the last one wins, as in Helm.
    #[must_use]
    pub fn entry(&self, key: &str) -> Option<(&Node, &Node)> {
        self.as_map()?
            .iter()
            .rev()
            .find(|(k, _)| k.as_scalar() == Some(key))
            .map(|(k, v)| (k, v))
    }

    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|(_, v)| v)
    }

    /// Follows a path of mapping keys.
    #[must_use]
    pub fn path(&self, keys: &[&str]) -> Option<&Node> {
        keys.iter().try_fold(self, |node, key| node.get(key))
    }

    #[must_use]
    pub fn is_null(&self) -> bool {
        self.scalar_kind() == Some(ScalarKind::Null)
    }

    /// What kind of YAML value this is, for messages.
    #[must_use]
    pub fn describe(&self) -> &'static str {
        match &self.value {
            Value::Seq(_) => "a list",
            Value::Map(_) => "a mapping",
            Value::Scalar { .. } => match self.scalar_kind() {
                Some(ScalarKind::Null) => "null",
                Some(ScalarKind::Bool(_)) => "a boolean",
                Some(ScalarKind::Int(_) | ScalarKind::Float) => "a number",
                _ => "a string",
            },
        }
    }

    /// The JSON value Kubernetes would see for this node.
    #[must_use]
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Scalar { text, .. } => match self.scalar_kind() {
                Some(ScalarKind::Null) => J::Null,
                Some(ScalarKind::Bool(b)) => J::Bool(b),
                Some(ScalarKind::Int(i)) => J::from(i),
                Some(ScalarKind::Float) => scalar::parse_float(text)
                    .and_then(serde_json::Number::from_f64)
                    .map_or_else(|| J::String(text.clone()), J::Number),
                _ => J::String(text.clone()),
            },
            Value::Seq(items) => J::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(entries) => {
                let mut map = serde_json::Map::with_capacity(entries.len());
                for (k, v) in entries {
                    let key = k
                        .as_scalar()
                        .map_or_else(|| k.to_json().to_string(), str::to_owned);
                    map.insert(key, v.to_json());
                }
                J::Object(map)
            }
        }
    }

    fn count(&self) -> usize {
        match &self.value {
            Value::Scalar { .. } => 1,
            Value::Seq(items) => 1 + items.iter().map(Node::count).sum::<usize>(),
            Value::Map(entries) => {
                1 + entries
                    .iter()
                    .map(|(k, v)| k.count() + v.count())
                    .sum::<usize>()
            }
        }
    }
}

/// Caps that keep hostile input bounded.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Deepest nesting of sequences and mappings.
    pub max_depth: usize,
    /// Nodes that alias expansion may add to one document.
    pub max_alias_nodes: usize,
    /// Bytes of one document.
    pub max_document_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_depth: 1000,
            max_alias_nodes: 100_000,
            max_document_bytes: 64 * 1024 * 1024,
        }
    }
}

/// A document that is not valid YAML (or breaks a cap), with its byte position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub message: String,
    /// Byte offset of the problem in the source buffer.
    pub offset: u32,
}

enum Frame {
    Seq {
        start: u32,
        anchor: usize,
        items: Vec<Node>,
    },
    Map {
        start: u32,
        anchor: usize,
        entries: Vec<(Node, Node)>,
        key: Option<Node>,
    },
}

/// Converts the parser's character positions to byte offsets.
struct Offsets<'a> {
    text: &'a str,
    /// Byte offset of every character; empty when the text is ASCII.
    chars: Vec<u32>,
    base: u32,
}

impl<'a> Offsets<'a> {
    fn new(text: &'a str, base: u32) -> Self {
        let chars = if text.is_ascii() {
            Vec::new()
        } else {
            let mut v: Vec<u32> = text.char_indices().map(|(i, _)| i as u32).collect();
            v.push(text.len() as u32);
            v
        };
        Self { text, chars, base }
    }

    fn byte(&self, char_index: usize) -> u32 {
        let local = if self.chars.is_empty() {
            char_index.min(self.text.len()) as u32
        } else {
            self.chars
                .get(char_index)
                .copied()
                .unwrap_or(self.text.len() as u32)
        };
        local + self.base
    }

    fn span(&self, span: &YamlSpan) -> Span {
        let start = self.byte(span.start.index());
        let end = self.byte(span.end.index()).max(start);
        Span { start, end }
    }
}

/// The deepest flow-style nesting (`[`, `{`) the YAML scanner reads, whatever the limits.
const SCANNER_FLOW_DEPTH: usize = 255;

/// The scanner's own error, in the words of our limits: its flow-nesting cap reports
/// "recursion limit exceeded", which must name `--max-depth` like block-style nesting does.
fn scan_error_message(info: &str, limits: Limits) -> String {
    if info != "recursion limit exceeded" {
        return info.to_owned();
    }
    if limits.max_depth <= SCANNER_FLOW_DEPTH {
        format!(
            "nesting deeper than {} levels (raise it with --max-depth)",
            limits.max_depth
        )
    } else {
        format!(
            "nesting deeper than {SCANNER_FLOW_DEPTH} levels of flow style ([ ] or {{ }}), the most the YAML parser reads (--max-depth {} applies to block style)",
            limits.max_depth
        )
    }
}

/// Parses one document (`text` starts at byte `base` of its buffer).
///
/// Returns `Ok(None)` when the document holds only comments and whitespace.
pub fn parse_document(text: &str, base: u32, limits: Limits) -> Result<Option<Node>, ParseError> {
    if text.len() > limits.max_document_bytes {
        return Err(ParseError {
            message: format!(
                "the document has {} bytes, more than the limit of {} (raise it with --max-document-bytes)",
                text.len(),
                limits.max_document_bytes
            ),
            offset: base,
        });
    }
    let offsets = Offsets::new(text, base);
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: HashMap<usize, Node> = HashMap::new();
    let mut expanded = 0usize;
    let mut root: Option<Node> = None;
    let mut documents = 0usize;

    let error = |message: String, offset: u32| ParseError { message, offset };

    while let Some(event) = parser.next_event() {
        let (event, span) = event.map_err(|e| {
            let offset = offsets.byte(e.marker().index());
            error(scan_error_message(e.info(), limits), offset)
        })?;
        let span_bytes = offsets.span(&span);
        let completed: Option<(Node, usize)> = match event {
            Event::StreamStart | Event::StreamEnd | Event::Nothing | Event::DocumentEnd => None,
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(error(
                        "a second YAML document starts here without a `---` separator line".into(),
                        span_bytes.start,
                    ));
                }
                None
            }
            Event::Scalar(text, style, anchor, tag) => {
                let style = match style {
                    ScalarStyle::Plain => Style::Plain,
                    ScalarStyle::SingleQuoted => Style::SingleQuoted,
                    ScalarStyle::DoubleQuoted => Style::DoubleQuoted,
                    ScalarStyle::Literal => Style::Literal,
                    ScalarStyle::Folded => Style::Folded,
                };
                let tag = tag.map(|t| format!("{}{}", t.handle, t.suffix).into_boxed_str());
                Some((
                    Node {
                        span: span_bytes,
                        value: Value::Scalar {
                            text: text.into_owned(),
                            style,
                            tag,
                        },
                    },
                    anchor,
                ))
            }
            Event::SequenceStart(anchor, _) => {
                if stack.len() >= limits.max_depth {
                    return Err(error(
                        format!(
                            "nesting deeper than {} levels (raise it with --max-depth)",
                            limits.max_depth
                        ),
                        span_bytes.start,
                    ));
                }
                stack.push(Frame::Seq {
                    start: span_bytes.start,
                    anchor,
                    items: Vec::new(),
                });
                None
            }
            Event::MappingStart(anchor, _) => {
                if stack.len() >= limits.max_depth {
                    return Err(error(
                        format!(
                            "nesting deeper than {} levels (raise it with --max-depth)",
                            limits.max_depth
                        ),
                        span_bytes.start,
                    ));
                }
                stack.push(Frame::Map {
                    start: span_bytes.start,
                    anchor,
                    entries: Vec::new(),
                    key: None,
                });
                None
            }
            Event::SequenceEnd => match stack.pop() {
                Some(Frame::Seq {
                    start,
                    anchor,
                    items,
                }) => {
                    let end = items
                        .last()
                        .map_or(span_bytes.end, |n| n.span.end)
                        .max(span_bytes.start.min(span_bytes.end));
                    Some((
                        Node {
                            span: Span {
                                start,
                                end: end.max(start),
                            },
                            value: Value::Seq(items),
                        },
                        anchor,
                    ))
                }
                _ => return Err(error("unbalanced sequence end".into(), span_bytes.start)),
            },
            Event::MappingEnd => match stack.pop() {
                Some(Frame::Map {
                    start,
                    anchor,
                    entries,
                    ..
                }) => {
                    let end = entries.last().map_or(span_bytes.end, |(_, v)| v.span.end);
                    Some((
                        Node {
                            span: Span {
                                start,
                                end: end.max(start),
                            },
                            value: Value::Map(entries),
                        },
                        anchor,
                    ))
                }
                _ => return Err(error("unbalanced mapping end".into(), span_bytes.start)),
            },
            Event::Alias(id) => {
                let Some(target) = anchors.get(&id) else {
                    return Err(error(
                        "alias refers to an anchor that is not complete yet".into(),
                        span_bytes.start,
                    ));
                };
                expanded += target.count();
                if expanded > limits.max_alias_nodes {
                    return Err(error(
                        format!(
                            "alias expansion exceeds {} nodes (a YAML alias bomb?)",
                            limits.max_alias_nodes
                        ),
                        span_bytes.start,
                    ));
                }
                let mut node = target.clone();
                node.span = span_bytes;
                Some((node, 0))
            }
        };
        let Some((node, anchor)) = completed else {
            continue;
        };
        if anchor > 0 {
            anchors.insert(anchor, node.clone());
        }
        match stack.last_mut() {
            None => root = Some(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map { entries, key, .. }) => match key.take() {
                None => *key = Some(node),
                Some(k) => entries.push((k, node)),
            },
        }
    }
    Ok(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Node {
        parse_document(text, 0, Limits::default())
            .expect("parses")
            .expect("not empty")
    }

    #[test]
    fn spans_are_byte_offsets_even_after_multibyte_text() {
        let text = "a: \"é€\"\nb: x\n";
        let node = parse(text);
        let (k, v) = node.entry("b").expect("b");
        assert_eq!(&text[k.span.range()], "b");
        assert_eq!(&text[v.span.range()], "x");
    }

    #[test]
    fn quoted_true_is_a_string_plain_true_is_not() {
        let node = parse("a: 'true'\nb: true\nc: yes\n");
        assert_eq!(node.get("a").and_then(Node::as_str), Some("true"));
        assert_eq!(node.get("b").and_then(Node::as_str), None);
        assert_eq!(
            node.get("c").and_then(Node::scalar_kind),
            Some(ScalarKind::Bool(true))
        );
    }

    #[test]
    fn alias_bomb_is_capped() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            let refs = vec![format!("*a{p}"); 10].join(", ");
            text.push_str(
                &[
                    "a",
                    &i.to_string(),
                    ": &a",
                    &i.to_string(),
                    " [",
                    &refs,
                    "]\n",
                ]
                .concat(),
            );
        }
        let err = parse_document(&text, 0, Limits::default()).expect_err("bomb");
        assert!(err.message.contains("alias expansion"), "{}", err.message);
    }

    #[test]
    fn deep_nesting_is_capped_without_recursion() {
        let text = "[".repeat(20_000) + &"]".repeat(20_000);
        let err = parse_document(&text, 0, Limits::default()).expect_err("deep");
        assert!(
            err.message.contains("nesting") || err.message.contains("recursion"),
            "{}",
            err.message
        );
    }

    #[test]
    fn flow_nesting_names_max_depth() {
        for (depth, max_depth, needle) in [
            (
                300,
                100,
                "nesting deeper than 100 levels (raise it with --max-depth)",
            ),
            (
                50,
                10,
                "nesting deeper than 10 levels (raise it with --max-depth)",
            ),
            (300, 1000, "--max-depth 1000 applies to block style"),
        ] {
            let text = "[".repeat(depth) + &"]".repeat(depth);
            let limits = Limits {
                max_depth,
                ..Limits::default()
            };
            let err = parse_document(&text, 0, limits).expect_err("deep");
            assert!(
                err.message.contains(needle),
                "{depth}/{max_depth}: {}",
                err.message
            );
            let text = "{a: ".repeat(depth) + "1" + &"}".repeat(depth);
            let err = parse_document(&text, 0, limits).expect_err("deep");
            assert!(
                err.message.contains(needle),
                "{depth}/{max_depth}: {}",
                err.message
            );
        }
        // Within the limit, flow nesting parses.
        let text = "[".repeat(200) + &"]".repeat(200);
        assert!(parse_document(&text, 0, Limits::default()).is_ok());
    }

    #[test]
    fn comment_only_document_is_empty() {
        assert_eq!(
            parse_document("# just a comment\n", 0, Limits::default()),
            Ok(None)
        );
    }

    #[test]
    fn errors_carry_the_byte_offset() {
        let text = "a: b\nc: [d\n";
        let err = parse_document(text, 100, Limits::default()).expect_err("bad");
        assert!(err.offset >= 100, "{err:?}");
    }

    #[test]
    fn to_json_types_scalars_like_kubernetes() {
        let node = parse("n: 3\nf: 1.5\ns: '3'\nb: false\nz: ~\nl: [a]\n");
        assert_eq!(
            node.to_json(),
            serde_json::json!({"n": 3, "f": 1.5, "s": "3", "b": false, "z": null, "l": ["a"]})
        );
    }
}
