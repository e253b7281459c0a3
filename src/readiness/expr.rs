//! HIP-0025 readiness expressions, `{<jsonpath>} <op> <value>` (SPEC §3): parsed once into an
//! [`Expression`] that lint validates and the deployer evaluates, with the same rules as Helm
//! (PR #32314): the path is scoped under `.status`, the operator must stand between
//! whitespace, one pair of quotes around the value is removed, and values compare as numbers,
//! then booleans, then strings.

use std::fmt;

use serde_json::Value;

use super::gofmt;
use super::jsonpath::{self, ExecOptions, JsonPath};

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        }
    }

    /// `<`, `<=`, `>`, `>=`: meaningful only between numbers.
    #[must_use]
    pub fn is_ordering(self) -> bool {
        !matches!(self, Op::Eq | Op::Ne)
    }

    fn parse(text: &str) -> Option<Op> {
        Some(match text {
            "==" => Op::Eq,
            "!=" => Op::Ne,
            "<" => Op::Lt,
            "<=" => Op::Le,
            ">" => Op::Gt,
            ">=" => Op::Ge,
            _ => return None,
        })
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An expression that does not parse: `offset` is the byte in the expression text (as given
/// to [`parse`], before trimming) where the problem is.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ExprError {
    pub offset: usize,
    pub message: String,
}

/// A byte range in the expression text.
pub type Range = std::ops::Range<usize>;

/// A parsed readiness expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expression {
    /// The expression as written, trimmed.
    text: String,
    /// The path between the braces, trimmed (`.readyReplicas`).
    path: String,
    /// The template that is evaluated (`{.status.readyReplicas}`).
    template: String,
    compiled: JsonPath,
    op: Op,
    /// The value as written (`"True"`).
    raw_value: String,
    /// The value compared: one pair of quotes removed.
    value: String,
    number: Option<f64>,
    boolean: Option<bool>,
    path_range: Range,
    op_range: Range,
    value_range: Range,
}

/// What evaluating one expression against an object found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observation {
    /// The printed value of the path, or `None` when the path does not resolve.
    pub observed: Option<String>,
    pub met: bool,
    /// Why the expression could not be judged (an ordering operator on non-numbers, a path
    /// that failed for another reason than a missing key).
    pub note: Option<String>,
}

fn err(offset: usize, message: impl Into<String>) -> ExprError {
    ExprError {
        offset,
        message: message.into(),
    }
}

/// Go's `strings.Fields` separators (`unicode.IsSpace`).
fn is_go_space(c: char) -> bool {
    c.is_whitespace()
}

/// The operator meant by a common misspelling: reversed (`=>`, `=<`, `=!`), a single `=`,
/// JavaScript's `===`/`!==`, SQL's `<>`.
fn reversed_operator(text: &str) -> Option<&'static str> {
    match text {
        "=>" => Some(">="),
        "=<" => Some("<="),
        "=!" | "!==" | "<>" => Some("!="),
        "=" | "===" => Some("=="),
        _ => None,
    }
}

/// Parses one expression (SPEC §3). Offsets in errors index `text` as given.
pub fn parse(text: &str) -> Result<Expression, ExprError> {
    let lead = text.len() - text.trim_start().len();
    let expr = text.trim();
    if expr.is_empty() {
        return Err(err(0, "expression cannot be empty"));
    }
    if !expr.starts_with('{') {
        return Err(err(
            lead,
            "expression must start with {<jsonpath>}, e.g. `{.phase} == \"Ready\"`",
        ));
    }
    let Some(close) = expr.find('}') else {
        return Err(err(
            lead + expr.len(),
            "expression is missing the closing } of its JSONPath",
        ));
    };
    let inner = &expr[1..close];
    let path = inner.trim();
    let path_start = lead + 1 + (inner.len() - inner.trim_start().len());
    if path.is_empty() {
        return Err(err(
            lead + 1,
            "expression is missing its JSONPath between { and }",
        ));
    }
    let after = &expr[close + 1..];
    let rest = after.trim_start();
    let rest_start = lead + close + 1 + (after.len() - rest.len());
    if rest.is_empty() {
        return Err(err(
            lead + expr.len(),
            "expression is missing an operator and a value after its JSONPath",
        ));
    }
    let op_text = rest.split(is_go_space).next().unwrap_or(rest);
    let Some(op) = Op::parse(op_text) else {
        let is_op_char = |c: char| matches!(c, '=' | '!' | '<' | '>');
        let glued = ["==", "!=", "<=", ">=", "<", ">"].iter().any(|op| {
            op_text
                .strip_prefix(op)
                .is_some_and(|tail| !tail.starts_with(is_op_char))
        });
        let hint = if let Some(meant) = reversed_operator(op_text) {
            format!(" (did you mean `{meant}`?)")
        } else if glued {
            " (the operator must be separated from the value by whitespace, e.g. `{.x} == 1`)"
                .to_owned()
        } else {
            String::new()
        };
        return Err(err(
            rest_start,
            format!("unsupported operator `{op_text}`: use one of == != < <= > >={hint}"),
        ));
    };
    let after_op = &rest[op_text.len()..];
    let raw_value = after_op.trim();
    if raw_value.is_empty() {
        return Err(err(
            rest_start + op_text.len(),
            "expression is missing the value to compare with after its operator",
        ));
    }
    let value_start = rest_start + op_text.len() + (after_op.len() - after_op.trim_start().len());
    if raw_value.starts_with(['{', '[']) {
        return Err(err(
            value_start,
            "the comparison value must be a scalar (a number, true/false or a string), not a JSONPath, list or map",
        ));
    }
    let template = scoped_template(path).map_err(|message| err(path_start, message))?;
    let compiled = jsonpath::parse(&template).map_err(|e| {
        let prefix = template.len() - path.len() - 1;
        let local = e.offset.saturating_sub(prefix).min(path.len());
        err(
            path_start + local,
            format!("invalid JSONPath: {}", e.message),
        )
    })?;
    let prefix = template.len() - path.len() - 1;
    if let Some(problem) = compiled.unusable() {
        let local = problem.offset.saturating_sub(prefix).min(path.len());
        return Err(err(
            path_start + local,
            format!("invalid JSONPath: {}", problem.message),
        ));
    }
    let value = unquote(raw_value).to_owned();
    Ok(Expression {
        text: expr.to_owned(),
        path: path.to_owned(),
        template,
        compiled,
        op,
        raw_value: raw_value.to_owned(),
        number: gofmt::parse_float(&value),
        boolean: parse_bool(&value),
        value,
        path_range: path_start..path_start + path.len(),
        op_range: rest_start..rest_start + op_text.len(),
        value_range: value_start..value_start + raw_value.len(),
    })
}

/// `{.x}` means `.status.x`; a path already rooted at `.status` is kept.
fn scoped_template(path: &str) -> Result<String, String> {
    if path.starts_with(".status.") || path.starts_with(".status[") {
        Ok(format!("{{{path}}}"))
    } else if path.starts_with('.') || path.starts_with('[') {
        Ok(format!("{{.status{path}}}"))
    } else {
        Err(format!(
            "the JSONPath must start with . or [ (it is read under .status), not `{}`",
            path.chars().next().unwrap_or(' ')
        ))
    }
}

/// One pair of surrounding `"` or `'` removed.
fn unquote(value: &str) -> &str {
    let b = value.as_bytes();
    if b.len() >= 2 && (b[0] == b'"' || b[0] == b'\'') && b[b.len() - 1] == b[0] {
        &value[1..value.len() - 1]
    } else {
        value
    }
}

fn parse_bool(value: &str) -> Option<bool> {
    match value {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

impl Expression {
    /// The expression as written, trimmed.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The `JSONPath` between the braces, as written.
    #[must_use]
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The template evaluated against the object (`{.status…}`).
    #[must_use]
    pub fn template(&self) -> &str {
        &self.template
    }

    #[must_use]
    pub fn op(&self) -> Op {
        self.op
    }

    /// The value as written, quotes included.
    #[must_use]
    pub fn raw_value(&self) -> &str {
        &self.raw_value
    }

    /// The value compared with: one pair of quotes removed.
    #[must_use]
    pub fn value(&self) -> &str {
        &self.value
    }

    /// The value as a number, when it is one.
    #[must_use]
    pub fn number(&self) -> Option<f64> {
        self.number
    }

    /// The value as `true`/`false`, when it is one (and not a number).
    #[must_use]
    pub fn boolean(&self) -> Option<bool> {
        self.boolean
    }

    /// Byte ranges of the path, operator and value in the text given to [`parse`].
    #[must_use]
    pub fn path_range(&self) -> Range {
        self.path_range.clone()
    }

    #[must_use]
    pub fn op_range(&self) -> Range {
        self.op_range.clone()
    }

    #[must_use]
    pub fn value_range(&self) -> Range {
        self.value_range.clone()
    }

    /// An ordering operator with a value that is not a number: never met (lint CS303).
    #[must_use]
    pub fn ordering_on_non_number(&self) -> bool {
        self.op.is_ordering() && self.number.is_none()
    }

    /// The top-level key the written path reads when it is not status (`metadata`, `spec`):
    /// the path is read under `.status`, so it never matches (lint CS304).
    #[must_use]
    pub fn outside_status(&self) -> Option<&str> {
        let rest = self
            .path
            .strip_prefix('.')
            .or_else(|| self.path.strip_prefix("['").filter(|r| r.contains("']")))?;
        let end = rest.find(['.', '[', '\'']).unwrap_or(rest.len());
        let first = &rest[..end];
        matches!(
            first,
            "metadata" | "spec" | "apiVersion" | "kind" | "data" | "stringData"
        )
        .then_some(first)
    }

    /// Evaluates against an object (its `status` is what the path reads). `buffer` is reused
    /// between calls to avoid allocating.
    pub fn observe_into(&self, object: &Value, buffer: &mut String) -> Option<bool> {
        let options = ExecOptions {
            allow_missing_keys: false,
        };
        self.compiled.execute_into(object, options, buffer).ok()?;
        let trimmed = buffer.trim();
        Some(self.compare(trimmed).unwrap_or(false))
    }

    /// Evaluates against an object and reports what was seen.
    #[must_use]
    pub fn observe(&self, object: &Value) -> Observation {
        let options = ExecOptions {
            allow_missing_keys: false,
        };
        match self.compiled.execute(object, options) {
            // A missing key says it all; other failures (an index out of range, a filter
            // on a non-list) are worth showing.
            Err(e) => Observation {
                observed: None,
                met: false,
                note: (!e.message.ends_with(" is not found")).then_some(e.message),
            },
            Ok(out) => {
                let actual = out.trim().to_owned();
                let (met, note) = match self.compare(&actual) {
                    Ok(met) => (met, None),
                    Err(note) => (false, Some(note)),
                };
                Observation {
                    observed: Some(actual),
                    met,
                    note,
                }
            }
        }
    }

    /// Helm's `compareValues`: numbers, then `true`/`false`, then strings.
    fn compare(&self, actual: &str) -> Result<bool, String> {
        if let (Some(a), Some(b)) = (gofmt::parse_float(actual), self.number) {
            #[expect(clippy::float_cmp, reason = "Helm compares the parsed floats exactly")]
            return Ok(match self.op {
                Op::Eq => a == b,
                Op::Ne => a != b,
                Op::Lt => a < b,
                Op::Le => a <= b,
                Op::Gt => a > b,
                Op::Ge => a >= b,
            });
        }
        if let (Some(a), Some(b)) = (parse_bool(actual), self.boolean) {
            return match self.op {
                Op::Eq => Ok(a == b),
                Op::Ne => Ok(a != b),
                _ => Err(self.incomparable(actual)),
            };
        }
        match self.op {
            Op::Eq => Ok(actual == self.value),
            Op::Ne => Ok(actual != self.value),
            _ => Err(self.incomparable(actual)),
        }
    }

    fn incomparable(&self, actual: &str) -> String {
        format!(
            "cannot compare {actual:?} {} {:?}: ordering operators (<, <=, >, >=) require numeric values",
            self.op, self.value
        )
    }
}

impl fmt::Display for Expression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Renders an error under the text it is about: the text, then a caret under the offending
/// character (columns count characters, so a caret lines up under non-ASCII text too).
#[must_use]
pub fn caret(text: &str, offset: usize) -> String {
    let offset = offset.min(text.len());
    let mut at = offset;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let column = text[..at].chars().count();
    format!("{text}\n{}^", " ".repeat(column))
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "test inputs are fixed")]
mod tests {
    use super::*;
    use serde_json::json;

    fn met(expr: &str, object: &Value) -> bool {
        parse(expr).unwrap().observe(object).met
    }

    #[test]
    fn parses_the_parts() {
        let e = parse("  {.readyReplicas} >= \"3\" ").unwrap();
        assert_eq!(e.path(), ".readyReplicas");
        assert_eq!(e.template(), "{.status.readyReplicas}");
        assert_eq!(e.op(), Op::Ge);
        assert_eq!(e.value(), "3");
        assert_eq!(e.raw_value(), "\"3\"");
        assert_eq!(e.path_range(), 3..17);
        assert_eq!(e.op_range(), 19..21);
        assert_eq!(e.value_range(), 22..25);
        assert_eq!(
            parse("{.status.phase} == x").unwrap().template(),
            "{.status.phase}"
        );
        assert_eq!(
            parse("{['phase']} == x").unwrap().template(),
            "{.status['phase']}"
        );
    }

    #[test]
    fn errors_point_at_the_problem() {
        let cases = [
            ("", 0, "empty"),
            ("  .x == 1", 2, "must start with"),
            ("{.x == 1", 8, "closing }"),
            ("{ } == 1", 1, "missing its JSONPath"),
            ("{.x}", 4, "missing an operator"),
            ("{.x}==1", 4, "unsupported operator `==1`"),
            ("{.x} =~ 1", 5, "unsupported operator"),
            ("{.x} => 1", 5, "did you mean `>=`?"),
            ("{.x} =< 1", 5, "did you mean `<=`?"),
            ("{.x} = 1", 5, "did you mean `==`?"),
            ("{.x} <> 1", 5, "did you mean `!=`?"),
            ("{.x} ==", 7, "missing the value"),
            ("{x} == 1", 1, "must start with . or ["),
            ("{.a[?(@.b==1 && @.c==2)]} == 1", 13, "U+0026 '&'"),
            ("{.x} == [1]", 8, "scalar"),
            ("{.items.length()} == 1", 8, "functions"),
            ("{.a[?(@.b==x)]} == 1", 11, "unrecognized identifier x"),
            ("{.items[*] end} == 1", 11, "loops"),
        ];
        for (text, offset, needle) in cases {
            let e = parse(text).unwrap_err();
            assert_eq!(e.offset, offset, "{text}: {e:?}");
            assert!(e.message.contains(needle), "{text}: {e:?}");
        }
    }

    #[test]
    fn compares_like_helm() {
        let obj = json!({"status": {"n": 3, "phase": "Running", "ok": true, "f": 1.5, "s": "007"}});
        assert!(met("{.n} == 3", &obj));
        assert!(met("{.n} == 3.0", &obj));
        assert!(met("{.n} >= \"2\"", &obj));
        assert!(!met("{.n} < 3", &obj));
        assert!(met("{.phase} == Running", &obj));
        assert!(met("{.phase} == 'Running'", &obj));
        assert!(met("{.phase} != Pending", &obj));
        assert!(!met("{.phase} > Pending", &obj));
        assert!(met("{.ok} == true", &obj));
        assert!(!met("{.ok} == True", &obj));
        assert!(met("{.f} > 1", &obj));
        assert!(met("{.s} == 7", &obj));
        assert!(met("{.status.n} == 3", &obj));
        let missing = parse("{.nope} != 1").unwrap().observe(&obj);
        assert_eq!(missing.observed, None);
        assert!(!missing.met);
        let note = parse("{.phase} > 1").unwrap().observe(&obj);
        assert!(note.note.is_some() && !note.met);
        let note = parse("{.phase} > x").unwrap().observe(&obj);
        assert!(note.note.is_some());
    }

    #[test]
    fn flags_for_lint() {
        assert!(parse("{.x} > high").unwrap().ordering_on_non_number());
        assert!(!parse("{.x} > 1").unwrap().ordering_on_non_number());
        assert_eq!(
            parse("{.metadata.name} == x").unwrap().outside_status(),
            Some("metadata")
        );
        assert_eq!(
            parse("{['spec']} == x").unwrap().outside_status(),
            Some("spec")
        );
        assert_eq!(parse("{.phase} == x").unwrap().outside_status(), None);
    }

    #[test]
    fn caret_lines_up() {
        assert_eq!(caret("{.x}==1", 4), "{.x}==1\n    ^");
        assert_eq!(caret("é{", 2), "é{\n ^");
    }
}
