//! Kubernetes `JSONPath`, the kubectl dialect (SPEC §3): parse a template once, evaluate it
//! against many `serde_json::Value`s.
//!
//! The evaluator follows client-go's `util/jsonpath` step by step, quirks included (each
//! top-level action starts again from the root, `range` re-runs the rest of the template per
//! item, an error inside a filter operand can still select an item), because the point is to
//! print exactly what `kubectl -o jsonpath` prints and to judge readiness exactly as Helm
//! does. Map keys are visited in sorted order where Go's order is random.

mod parser;

use serde_json::Value;

use super::gofmt::{self, GoNumber};

/// A template that does not parse: the byte offset of the problem in the template text and
/// client-go's wording.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PathError {
    pub offset: usize,
    pub message: String,
}

/// Evaluation failed (client-go would return an error from `Execute`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct EvalError {
    pub message: String,
}

fn eval_error(message: impl Into<String>) -> EvalError {
    EvalError {
        message: message.into(),
    }
}

/// One bound of `[start:end:step]`; `derived` marks the implicit end of `[n]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Param {
    known: bool,
    value: i64,
    derived: bool,
}

/// A template piece outside or inside `{…}`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Top {
    Text(String),
    List(Vec<Node>),
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Node {
    Text(String),
    /// A key, with its offset in the template.
    Field(String, usize),
    Array([Param; 3]),
    Filter {
        left: Vec<Node>,
        right: Vec<Node>,
        op: String,
    },
    Int(i64),
    Float(f64),
    Bool(bool),
    Wildcard,
    Recursive,
    Union(Vec<Vec<Node>>),
    /// A bare word such as `range` or `end`, with its offset in the template.
    Identifier(String, usize),
}

/// A parsed template.
#[derive(Clone, Debug, PartialEq)]
pub struct JsonPath {
    tops: Vec<Top>,
}

/// How missing keys are treated: kubectl allows them (prints nothing), Helm's readiness does
/// not (the expression is not met).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExecOptions {
    pub allow_missing_keys: bool,
}

/// Parses a template such as `{.status.phase}` or `{range .items[*]}{.name} {end}`.
pub fn parse(text: &str) -> Result<JsonPath, PathError> {
    Ok(JsonPath {
        tops: parser::parse_template(text)?,
    })
}

/// A construct that parses but can never work in a readiness expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unusable {
    /// Byte offset in the template.
    pub offset: usize,
    pub message: String,
}

impl JsonPath {
    /// The first construct that fails on every object, or can never match: a bare word other
    /// than `range`/`end` (kubectl fails with "unrecognized identifier"), `range`/`end`
    /// themselves (a readiness value is one path, not a loop), and a function call, which
    /// kubectl reads as a field named `length()` that never exists.
    #[must_use]
    pub fn unusable(&self) -> Option<Unusable> {
        fn walk(nodes: &[Node]) -> Option<Unusable> {
            nodes.iter().find_map(|node| match node {
                Node::Identifier(name, at) => Some(Unusable {
                    offset: *at,
                    message: if name == "range" || name == "end" {
                        format!("`{name}` belongs to `range … end` loops, which print lists; a readiness expression reads one value")
                    } else if name.contains('(') {
                        format!("functions such as `{name}…)` are not part of kubectl's JSONPath (kubectl fails with \"unrecognized identifier {name}\")")
                    } else {
                        format!("unrecognized identifier {name}: a bare word is not a path (write `.{name}`)")
                    },
                }),
                Node::Field(name, at) if name.ends_with(')') && name.contains('(') => Some(Unusable {
                    offset: *at,
                    message: format!(
                        "functions such as `{name}` are not part of kubectl's JSONPath: it reads a field named `{name}`, which never exists"
                    ),
                }),
                Node::Filter { left, right, .. } => walk(left).or_else(|| walk(right)),
                Node::Union(lists) => lists.iter().find_map(|l| walk(l)),
                _ => None,
            })
        }
        self.tops.iter().find_map(|top| match top {
            Top::List(nodes) => walk(nodes),
            Top::Text(_) => None,
        })
    }
}

/// A value during evaluation: a piece of the object, or a literal of the template.
#[derive(Clone, Copy, Debug)]
enum Item<'a> {
    V(&'a Value),
    Text(&'a str),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// A byte of a string (Go indexes strings by byte when `*` or `..` meets one).
    Byte(u8),
    /// The nil a `range` over nothing evaluates its body with.
    Nil,
}

impl<'a> Item<'a> {
    /// Go's `template.Indirect`: nil interfaces are skipped by most steps.
    fn is_nil(self) -> bool {
        matches!(self, Item::V(Value::Null) | Item::Nil)
    }

    fn as_array(self) -> Option<&'a [Value]> {
        match self {
            Item::V(Value::Array(items)) => Some(items),
            _ => None,
        }
    }

    /// Go's type name, for error messages.
    fn go_type(self) -> &'static str {
        match self {
            Item::V(Value::Object(_)) => "map[string]interface {}",
            Item::V(Value::Array(_)) => "[]interface {}",
            Item::V(Value::String(_)) | Item::Text(_) => "string",
            Item::V(Value::Number(n)) => match gofmt::go_number(n) {
                GoNumber::Int(_) => "int64",
                GoNumber::Float(_) => "float64",
            },
            Item::V(Value::Bool(_)) | Item::Bool(_) => "bool",
            Item::Int(_) => "int",
            Item::Float(_) => "float64",
            Item::Byte(_) => "uint8",
            Item::V(Value::Null) | Item::Nil => "<nil>",
        }
    }

    /// How many items `*` steps into: known before any is collected, so that the budget is
    /// charged before the result grows.
    fn child_count(self) -> usize {
        match self {
            Item::V(Value::Object(map)) => map.len(),
            Item::V(Value::Array(items)) => items.len(),
            Item::V(Value::String(s)) => s.len(),
            Item::Text(s) => s.len(),
            _ => 0,
        }
    }

    /// The items `*` and `..` step into.
    fn children(self, out: &mut Vec<Item<'a>>) {
        match self {
            Item::V(Value::Object(map)) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.extend(keys.into_iter().filter_map(|k| map.get(k)).map(Item::V));
            }
            Item::V(Value::Array(items)) => out.extend(items.iter().map(Item::V)),
            Item::V(Value::String(s)) => out.extend(s.bytes().map(Item::Byte)),
            Item::Text(s) => out.extend(s.bytes().map(Item::Byte)),
            _ => {}
        }
    }

    /// Prints the item; `false` once `out` holds more than `cap` bytes (it stops early, so a
    /// large map or list is never printed whole past the cap).
    fn write(self, out: &mut String, cap: usize) -> bool {
        match self {
            Item::V(v @ (Value::Object(_) | Value::Array(_))) => {
                return gofmt::write_json_capped(out, v, cap);
            }
            Item::V(Value::String(s)) => out.push_str(s),
            Item::Text(s) => out.push_str(s),
            Item::V(Value::Number(n)) => out.push_str(&gofmt::number_text(n)),
            Item::V(Value::Bool(true)) | Item::Bool(true) => out.push_str("true"),
            Item::V(Value::Bool(false)) | Item::Bool(false) => out.push_str("false"),
            Item::V(Value::Null) | Item::Nil => out.push_str("null"),
            Item::Int(i) => out.push_str(&i.to_string()),
            Item::Float(f) => out.push_str(&gofmt::float_text(f)),
            Item::Byte(b) => out.push_str(&b.to_string()),
        }
        out.len() <= cap
    }
}

/// Go's `text/template` comparison kinds.
#[derive(Debug, PartialEq)]
enum Basic<'a> {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'a str),
}

const BAD_TYPE: &str = "invalid type for comparison";
const BAD_COMPARISON: &str = "incompatible types for comparison";

fn basic(item: Item<'_>) -> Result<Basic<'_>, EvalError> {
    Ok(match item {
        Item::V(Value::Bool(b)) => Basic::Bool(*b),
        Item::Bool(b) => Basic::Bool(b),
        Item::V(Value::Number(n)) => match gofmt::go_number(n) {
            GoNumber::Int(i) => Basic::Int(i),
            GoNumber::Float(f) => Basic::Float(f),
        },
        Item::Int(i) => Basic::Int(i),
        Item::Byte(b) => Basic::Int(i64::from(b)),
        Item::Float(f) => Basic::Float(f),
        Item::V(Value::String(s)) => Basic::Str(s),
        Item::Text(s) => Basic::Str(s),
        _ => return Err(eval_error(BAD_TYPE)),
    })
}

fn equal(a: &Basic<'_>, b: &Basic<'_>) -> Result<bool, EvalError> {
    match (a, b) {
        (Basic::Bool(x), Basic::Bool(y)) => Ok(x == y),
        (Basic::Int(x), Basic::Int(y)) => Ok(x == y),
        #[expect(clippy::float_cmp, reason = "Go compares floats exactly")]
        (Basic::Float(x), Basic::Float(y)) => Ok(x == y),
        (Basic::Str(x), Basic::Str(y)) => Ok(x == y),
        _ => Err(eval_error(BAD_COMPARISON)),
    }
}

fn less(a: &Basic<'_>, b: &Basic<'_>) -> Result<bool, EvalError> {
    match (a, b) {
        (Basic::Int(x), Basic::Int(y)) => Ok(x < y),
        (Basic::Float(x), Basic::Float(y)) => Ok(x < y),
        (Basic::Str(x), Basic::Str(y)) => Ok(x < y),
        (Basic::Bool(_), Basic::Bool(_)) => Err(eval_error(BAD_TYPE)),
        _ => Err(eval_error(BAD_COMPARISON)),
    }
}

fn compare(op: &str, left: Item<'_>, right: Item<'_>) -> Result<bool, EvalError> {
    let a = basic(left)?;
    let b = basic(right)?;
    match op {
        "<" => less(&a, &b),
        ">" => Ok(!(less(&a, &b)? || equal(&a, &b)?)),
        "==" => equal(&a, &b),
        "!=" => Ok(!equal(&a, &b)?),
        "<=" => Ok(less(&a, &b)? || equal(&a, &b)?),
        ">=" => Ok(!less(&a, &b)?),
        _ => Err(eval_error(format!("unrecognized filter operator {op}"))),
    }
}

/// A failed step: the error, and the values client-go hands on with it (a filter's `exists`
/// test still looks at them).
type Step<'a> = Result<Vec<Item<'a>>, (Vec<Item<'a>>, EvalError)>;

/// Items an evaluation may produce in all, counting every item each step adds to its result
/// (and every copy a union or a literal makes). Nested `range` over `..` multiplies without
/// bound (kubectl spins on such templates), and repeated unions before `*`, `..` or a slice
/// multiply a large list; past this the evaluation stops with an error. Each step charges the
/// budget before it adds items, so no result is ever built past it.
const WORK_BUDGET: usize = 1 << 20;

/// Bytes the printed result may hold: far above any object the API server stores (etcd keeps
/// objects under 1.5 MiB), yet one list printed a million times is refused before it fills
/// memory.
pub const MAX_OUTPUT_BYTES: usize = 64 << 20;

fn budget_error() -> EvalError {
    eval_error(format!(
        "the template produces more than {WORK_BUDGET} values; it cannot be evaluated"
    ))
}

fn output_error() -> EvalError {
    eval_error(format!(
        "the template prints more than {} MiB; it cannot be evaluated",
        MAX_OUTPUT_BYTES >> 20
    ))
}

/// What is left of [`WORK_BUDGET`]. Once spent it stays spent: an error swallowed on the way
/// (a filter's `exists` test ignores its operand's errors) still ends the evaluation.
struct Budget {
    left: usize,
    exhausted: bool,
}

impl Budget {
    /// Takes `n` before `n` items are added to a result.
    fn take<'a>(&mut self, n: usize) -> Result<(), (Vec<Item<'a>>, EvalError)> {
        match self.left.checked_sub(n) {
            Some(left) if !self.exhausted => {
                self.left = left;
                Ok(())
            }
            _ => {
                self.exhausted = true;
                self.left = 0;
                Err((Vec::new(), budget_error()))
            }
        }
    }
}

struct Evaluator<'a> {
    tops: &'a [Top],
    options: ExecOptions,
    budget: Budget,
    begin_range: usize,
    in_range: usize,
    end_range: usize,
    last_end: Option<usize>,
}

impl JsonPath {
    /// Evaluates the template and prints the results as kubectl does: the values of one
    /// action joined by spaces, maps and lists as JSON.
    pub fn execute(&self, data: &Value, options: ExecOptions) -> Result<String, EvalError> {
        let mut out = String::new();
        self.execute_into(data, options, &mut out)?;
        Ok(out)
    }

    /// [`JsonPath::execute`] into a reusable buffer (cleared first). A template that would
    /// produce more than a million values, or print more than [`MAX_OUTPUT_BYTES`], is an
    /// error, found before the values or the text are held in memory.
    pub fn execute_into(
        &self,
        data: &Value,
        options: ExecOptions,
        out: &mut String,
    ) -> Result<(), EvalError> {
        out.clear();
        let mut evaluator = Evaluator {
            tops: &self.tops,
            options,
            budget: Budget {
                left: WORK_BUDGET,
                exhausted: false,
            },
            begin_range: 0,
            in_range: 0,
            end_range: 0,
            last_end: None,
        };
        let results = evaluator.find_results(0, Item::V(data));
        if evaluator.budget.exhausted {
            return Err(budget_error());
        }
        for group in results? {
            for (i, item) in group.iter().enumerate() {
                if !item.write(out, MAX_OUTPUT_BYTES)
                    || (i + 1 != group.len() && !push_within(out, ' '))
                {
                    out.clear();
                    return Err(output_error());
                }
            }
        }
        Ok(())
    }
}

fn push_within(out: &mut String, c: char) -> bool {
    out.push(c);
    out.len() <= MAX_OUTPUT_BYTES
}

impl<'a> Evaluator<'a> {
    fn find_results(
        &mut self,
        start: usize,
        data: Item<'a>,
    ) -> Result<Vec<Vec<Item<'a>>>, EvalError> {
        let tops = self.tops;
        let mut full = Vec::new();
        let mut i = start;
        while i < tops.len() {
            self.spend(1).map_err(|(_, e)| e)?;
            let results = match &tops[i] {
                Top::Text(text) => vec![Item::Text(text)],
                Top::List(nodes) => self.eval_list(vec![data], nodes).map_err(|(_, e)| e)?,
            };
            if self.end_range > 0 && self.end_range <= self.in_range {
                self.end_range -= 1;
                self.last_end = Some(i);
                break;
            }
            if self.begin_range > 0 {
                self.begin_range -= 1;
                self.in_range += 1;
                if results.is_empty() {
                    self.find_results(i + 1, Item::Nil)?;
                } else {
                    for value in results {
                        let nested = self.find_results(i + 1, value)?;
                        self.spend(nested.len()).map_err(|(_, e)| e)?;
                        full.extend(nested);
                    }
                }
                self.in_range -= 1;
                if let Some(k) = self.last_end.filter(|&k| k > i) {
                    i = k;
                }
                i += 1;
                continue;
            }
            full.push(results);
            i += 1;
        }
        Ok(full)
    }

    fn eval_list(&mut self, input: Vec<Item<'a>>, nodes: &'a [Node]) -> Step<'a> {
        let mut cur = input;
        for node in nodes {
            cur = self.walk(cur, node)?;
        }
        Ok(cur)
    }

    /// Takes `n` from the work budget.
    fn spend(&mut self, n: usize) -> Result<(), (Vec<Item<'a>>, EvalError)> {
        self.budget.take(n)
    }

    fn walk(&mut self, input: Vec<Item<'a>>, node: &'a Node) -> Step<'a> {
        // Each step pays for what it adds as it adds it; one more for the step itself.
        self.spend(1)?;
        self.walk_node(input, node)
    }

    fn walk_node(&mut self, input: Vec<Item<'a>>, node: &'a Node) -> Step<'a> {
        match node {
            Node::Text(text) => Ok(vec![Item::Text(text)]),
            Node::Int(i) => self.repeat(Item::Int(*i), input.len()),
            Node::Float(f) => self.repeat(Item::Float(*f), input.len()),
            Node::Bool(b) => self.repeat(Item::Bool(*b), input.len()),
            Node::Field(name, _) => self.eval_field(&input, name),
            Node::Array(params) => eval_array(input, params, &mut self.budget),
            Node::Filter { left, right, op } => self.eval_filter(input, left, right, op),
            Node::Wildcard => {
                let mut out = Vec::new();
                for item in input {
                    if !item.is_nil() {
                        self.spend(item.child_count())?;
                        item.children(&mut out);
                    }
                }
                Ok(out)
            }
            Node::Recursive => {
                let mut out = Vec::new();
                for item in input {
                    recursive(item, &mut out, &mut self.budget)?;
                }
                Ok(out)
            }
            Node::Union(lists) => {
                let mut out = Vec::new();
                for list in lists {
                    // Each member starts from its own copy of the input.
                    self.spend(input.len())?;
                    match self.eval_list(input.clone(), list) {
                        Ok(items) => out.extend(items),
                        Err((_, e)) => return Err((input, e)),
                    }
                }
                Ok(out)
            }
            Node::Identifier(name, _) => match name.as_str() {
                "range" => {
                    self.begin_range += 1;
                    Ok(input)
                }
                "end" => {
                    if self.in_range > 0 {
                        self.end_range += 1;
                        Ok(Vec::new())
                    } else {
                        Err((Vec::new(), eval_error("not in range, nothing to end")))
                    }
                }
                _ => Err((input, eval_error(format!("unrecognized identifier {name}")))),
            },
        }
    }

    /// A literal, once per input.
    fn repeat(&mut self, item: Item<'a>, n: usize) -> Step<'a> {
        self.spend(n)?;
        Ok(vec![item; n])
    }

    fn eval_field(&mut self, input: &[Item<'a>], name: &str) -> Step<'a> {
        let mut out = Vec::with_capacity(1);
        if input.is_empty() {
            return Ok(out);
        }
        for item in input {
            if let Item::V(Value::Object(map)) = item {
                if let Some(v) = map.get(name) {
                    self.spend(1)?;
                    out.push(Item::V(v));
                }
            }
        }
        if out.is_empty() && !self.options.allow_missing_keys {
            return Err((out, eval_error(format!("{name} is not found"))));
        }
        Ok(out)
    }

    fn eval_filter(
        &mut self,
        input: Vec<Item<'a>>,
        left: &'a [Node],
        right: &'a [Node],
        op: &str,
    ) -> Step<'a> {
        let mut out = Vec::new();
        for item in &input {
            let Some(items) = item.as_array() else {
                let message = format!(
                    "{} is not array or slice and cannot be filtered",
                    item.go_type()
                );
                return Err((input, eval_error(message)));
            };
            for element in items {
                let lefts = self.eval_list(vec![Item::V(element)], left);
                if self.budget.exhausted {
                    return Err((Vec::new(), budget_error()));
                }
                if op == "exists" {
                    let found = match &lefts {
                        Ok(v) | Err((v, _)) => !v.is_empty(),
                    };
                    if found {
                        self.spend(1)?;
                        out.push(Item::V(element));
                    }
                    continue;
                }
                let lefts = match lefts {
                    Ok(v) => v,
                    Err((_, e)) => return Err((input, e)),
                };
                let l = match lefts.as_slice() {
                    [] => continue,
                    [one] => *one,
                    _ => return Err((input, eval_error("can only compare one element at a time"))),
                };
                let rights = match self.eval_list(vec![Item::V(element)], right) {
                    Ok(v) => v,
                    Err((_, e)) => return Err((input, e)),
                };
                let r = match rights.as_slice() {
                    [] => continue,
                    [one] => *one,
                    _ => return Err((input, eval_error("can only compare one element at a time"))),
                };
                match compare(op, l, r) {
                    Ok(true) => {
                        self.spend(1)?;
                        out.push(Item::V(element));
                    }
                    Ok(false) => {}
                    Err(e) => return Err((out, e)),
                }
            }
        }
        Ok(out)
    }
}

fn eval_array<'a>(input: Vec<Item<'a>>, params: &[Param; 3], budget: &mut Budget) -> Step<'a> {
    let mut out = Vec::new();
    for item in &input {
        if item.is_nil() {
            continue;
        }
        let Some(items) = item.as_array() else {
            let message = format!("{} is not array or slice", item.go_type());
            return Err((input, eval_error(message)));
        };
        let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
        let mut p = *params;
        if !p[0].known {
            p[0].value = 0;
        }
        if p[0].value < 0 {
            p[0].value += len;
        }
        if !p[1].known {
            p[1].value = len;
        }
        if p[1].value < 0 || (p[1].value == 0 && p[1].derived) {
            p[1].value += len;
        }
        if p[1].value == p[0].value {
            // NOTE: client-go returns here, skipping any further inputs.
            return Ok(out);
        }
        if p[0].value >= len || p[0].value < 0 {
            let message = format!(
                "array index out of bounds: index {}, length {len}",
                p[0].value
            );
            return Err((input, eval_error(message)));
        }
        if p[1].value > len || p[1].value < 0 {
            let message = format!(
                "array index out of bounds: index {}, length {len}",
                p[1].value.saturating_sub(1)
            );
            return Err((input, eval_error(message)));
        }
        if p[0].value > p[1].value {
            let message = format!(
                "starting index {} is greater than ending index {}",
                p[0].value, p[1].value
            );
            return Err((input, eval_error(message)));
        }
        let step = if p[2].known {
            if p[2].value <= 0 {
                return Err((input, eval_error("step must be > 0")));
            }
            usize::try_from(p[2].value).unwrap_or(usize::MAX)
        } else {
            1
        };
        #[expect(
            clippy::cast_sign_loss,
            reason = "both bounds were checked to lie in 0..=len"
        )]
        let slice = &items[p[0].value as usize..p[1].value as usize];
        budget.take(slice.len().div_ceil(step))?;
        out.extend(slice.iter().step_by(step).map(Item::V));
    }
    Ok(out)
}

/// `..` from one item: the item when it has children, then the same for each child, depth
/// first, charging the budget per item added. A string's bytes are its children but have
/// none of their own, so they are never visited one by one.
fn recursive<'a>(
    item: Item<'a>,
    out: &mut Vec<Item<'a>>,
    budget: &mut Budget,
) -> Result<(), (Vec<Item<'a>>, EvalError)> {
    if item.is_nil() || item.child_count() == 0 {
        return Ok(());
    }
    budget.take(1)?;
    out.push(item);
    match item {
        Item::V(Value::Object(map)) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            for value in keys.into_iter().filter_map(|k| map.get(k)) {
                recursive(Item::V(value), out, budget)?;
            }
        }
        Item::V(Value::Array(items)) => {
            for value in items {
                recursive(Item::V(value), out, budget)?;
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "test inputs are fixed")]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(template: &str, data: &Value) -> Result<String, String> {
        let path = parse(template).map_err(|e| format!("parse@{}: {}", e.offset, e.message))?;
        path.execute(
            data,
            ExecOptions {
                allow_missing_keys: true,
            },
        )
        .map_err(|e| format!("exec: {e}"))
    }

    #[test]
    fn evaluates_the_kubectl_dialect() {
        let data = json!({
            "status": {"conditions": [
                {"type": "Available", "status": "True"},
                {"type": "Progressing", "status": "False", "n": 2}
            ], "r": 3, "a.b": "dotted"},
            "items": [1, 2, 3, 4, 5]
        });
        assert_eq!(run("{.status.r}", &data).unwrap(), "3");
        assert_eq!(
            run(
                "{.status.conditions[?(@.type==\"Available\")].status}",
                &data
            )
            .unwrap(),
            "True"
        );
        assert_eq!(
            run("{.status.conditions[*].type}", &data).unwrap(),
            "Available Progressing"
        );
        assert_eq!(run("{.items[-2:]}", &data).unwrap(), "4 5");
        assert_eq!(run("{.items[::2]}", &data).unwrap(), "1 3 5");
        assert_eq!(run("{.items[0,2]}", &data).unwrap(), "1 3");
        assert_eq!(run("{.status.a\\.b}", &data).unwrap(), "dotted");
        assert_eq!(run("{.status['a.b']}", &data).unwrap(), "");
        assert_eq!(
            run("{range .items[0:2]}[{@}]{end}", &data).unwrap(),
            "[1][2]"
        );
        assert_eq!(run("x{.status.r}y", &data).unwrap(), "x3y");
        assert_eq!(
            run("{.status.conditions[?(@.n)].type}", &data).unwrap(),
            "Progressing"
        );
        assert_eq!(run("{..n}", &data).unwrap(), "2");
    }

    #[test]
    fn rejects_what_kubectl_rejects() {
        let err = parse("{.a[?(@.x==\"a\" && @.y==\"b\")]}").unwrap_err();
        assert_eq!(err.message, "unrecognized character in action: U+0026 '&'");
        assert_eq!(err.offset, 15);
        let err = parse("{.a[?@.x]}").unwrap_err();
        assert_eq!(err.message, "invalid array index ?@.x");
        assert_eq!(err.offset, 4);
        let err = parse("{.a").unwrap_err();
        assert_eq!(err.message, "unclosed action");
        assert_eq!(err.offset, 3);
    }

    /// Each step pays for what it adds before adding it: `.*` on a string of two million
    /// bytes is refused, while `..` on it adds only the string itself; 1331 copies of a list
    /// of 1000 maps are refused by every step that would walk them, 121 copies are not.
    #[test]
    fn steps_charge_the_budget_for_what_they_add() {
        let maps: Vec<Value> = (0..1000).map(|i| json!({"x": i})).collect();
        let data = json!({"s": "a".repeat(2 << 20), "n": [[[maps]]]});
        let err = run("{.s.*}", &data).map(|text| text.len()).unwrap_err();
        assert!(
            err.ends_with("produces more than 1048576 values; it cannot be evaluated"),
            "{err}"
        );
        assert_eq!(run("{.s..}", &data).unwrap().len(), 2 << 20);
        let eleven = "[0,0,0,0,0,0,0,0,0,0,0]";
        for step in ["[*]", ".*", "..", "[0:]", "[?(@.x)]", "[?(@.x >= 0)]"] {
            let path = format!("{{.n{eleven}{eleven}{eleven}{step}}}");
            let outcome = run(&path, &data).map(|text| text.len());
            assert!(
                outcome
                    .as_ref()
                    .is_err_and(|e| e.contains("produces more than 1048576 values")),
                "{path}: {outcome:?}"
            );
            let path = format!("{{.n[0]{eleven}{eleven}{step}}}");
            assert!(run(&path, &data).is_ok(), "{path}");
        }
    }

    #[test]
    fn missing_keys_are_errors_unless_allowed() {
        let data = json!({"a": 1});
        let path = parse("{.b}").unwrap();
        assert!(path.execute(&data, ExecOptions::default()).is_err());
        assert_eq!(
            path.execute(
                &data,
                ExecOptions {
                    allow_missing_keys: true
                }
            )
            .unwrap(),
            ""
        );
    }
}

#[cfg(test)]
mod offset_tests {
    use super::parse;

    /// Errors inside re-parsed pieces (union members, dict keys, filter operands) point into
    /// the text as written.
    #[test]
    fn offsets_point_into_the_original_text() {
        let cases = [
            ("{.a[0, x]}", 7, "invalid array index x"),
            ("{.a['b', 'c\"]}", 9, "invalid array index 'c\""),
            (
                "{.a['b (']}",
                7,
                "unrecognized character in action: U+0028 '('",
            ),
            (
                "{.a[?(@.b==\"x\" & 1)]}",
                15,
                "unrecognized character in action: U+0026 '&'",
            ),
            (
                "{.a[?(@.b ~ 1)]}",
                10,
                "unrecognized character in action: U+007E '~'",
            ),
            ("x {.a[1:y]}", 6, "invalid array index 1:y"),
        ];
        for (text, offset, message) in cases {
            let Err(e) = parse(text) else {
                panic!("{text} parsed");
            };
            assert_eq!((e.offset, e.message.as_str()), (offset, message), "{text}");
        }
    }
}
