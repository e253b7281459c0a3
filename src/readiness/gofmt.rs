//! Go's number parsing and value printing, as kubectl and Helm apply them to readiness values
//! (SPEC §3): `strconv.ParseFloat` decides whether a side of a comparison is a number,
//! `fmt.Print` renders scalars and `encoding/json` renders maps and lists. Matching them
//! byte for byte is what makes `{.x} == 1e+06` or a `JSONPath`'s printed output agree with what
//! Helm observes at install time.

use serde_json::Value;

/// Go's `strconv.ParseFloat(s, 64)`: decimal numbers with optional sign, fraction and
/// exponent, and `inf`/`infinity`/`nan` in any case; out-of-range values are errors.
#[must_use]
pub fn parse_float(s: &str) -> Option<f64> {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let lower = body.to_ascii_lowercase();
    if matches!(lower.as_str(), "inf" | "infinity" | "nan") {
        return s.parse::<f64>().ok();
    }
    // NOTE: Go also accepts hexadecimal floats (`0x1p-2`) and `_` separators after a base
    // prefix; nobody writes those in a readiness value, so they are treated as strings.
    if body.is_empty()
        || !body
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    let value = s.parse::<f64>().ok()?;
    value.is_finite().then_some(value)
}

/// The shortest round-trip digits of a finite, non-zero `f` and its decimal exponent
/// (`1234.5` → `("12345", 3)`).
fn shortest_digits(f: f64) -> (String, i32) {
    let text = format!("{:e}", f.abs());
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    (digits, exp.parse().unwrap_or(0))
}

fn plain(digits: &str, exp: i32) -> String {
    let point = i64::from(exp) + 1;
    let len = i64::try_from(digits.len()).unwrap_or(i64::MAX);
    let count = |n: i64| usize::try_from(n).unwrap_or(0);
    if point <= 0 {
        format!("0.{}{digits}", "0".repeat(count(-point)))
    } else if point >= len {
        format!("{digits}{}", "0".repeat(count(point - len)))
    } else {
        let (a, b) = digits.split_at(count(point));
        format!("{a}.{b}")
    }
}

fn scientific(digits: &str, exp: i32, min_exp_digits: usize) -> String {
    let (first, rest) = digits.split_at(1.min(digits.len()));
    let sign = if exp < 0 { '-' } else { '+' };
    let mut out = first.to_owned();
    if !rest.is_empty() {
        out.push('.');
        out.push_str(rest);
    }
    format!(
        "{out}e{sign}{:0width$}",
        exp.unsigned_abs(),
        width = min_exp_digits
    )
}

/// Go's `fmt.Print` of a `float64` (`%v`: shortest `%g`, exponent from 1e+06 and below 1e-04).
#[must_use]
pub fn float_text(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN".to_owned()
        } else if f > 0.0 {
            "+Inf".to_owned()
        } else {
            "-Inf".to_owned()
        };
    }
    let (digits, exp) = shortest_digits(f);
    let sign = if f < 0.0 { "-" } else { "" };
    if (-4..6).contains(&exp) {
        format!("{sign}{}", plain(&digits, exp))
    } else {
        format!("{sign}{}", scientific(&digits, exp, 2))
    }
}

/// Go's `encoding/json` rendering of a `float64`.
#[must_use]
pub fn float_json(f: f64) -> String {
    if f == 0.0 || !f.is_finite() {
        return "0".to_owned();
    }
    let (digits, exp) = shortest_digits(f);
    let sign = if f < 0.0 { "-" } else { "" };
    let abs = f.abs();
    if (1e-6..1e21).contains(&abs) {
        format!("{sign}{}", plain(&digits, exp))
    } else {
        format!("{sign}{}", scientific(&digits, exp, 1))
    }
}

/// A JSON number as a Go program holding decoded Kubernetes JSON sees it: integers that fit
/// `int64` are integers (kubectl's YAML → JSON → object path turns `2.0` into `2`), the rest
/// are `float64`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GoNumber {
    Int(i64),
    Float(f64),
}

#[must_use]
pub fn go_number(n: &serde_json::Number) -> GoNumber {
    if let Some(i) = n.as_i64() {
        return GoNumber::Int(i);
    }
    let f = n.as_f64().unwrap_or(0.0);
    #[expect(
        clippy::cast_precision_loss,
        reason = "the bounds of i64 are compared as floats on purpose"
    )]
    let fits = f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64;
    if fits && n.as_u64().is_none() {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "integral and within i64 range, checked above"
        )]
        return GoNumber::Int(f as i64);
    }
    GoNumber::Float(f)
}

/// The text `fmt.Print` gives a decoded JSON scalar.
#[must_use]
pub fn number_text(n: &serde_json::Number) -> String {
    match go_number(n) {
        GoNumber::Int(i) => i.to_string(),
        GoNumber::Float(f) => float_text(f),
    }
}

/// Go's `json.Marshal` of a decoded JSON value: keys sorted, `<`, `>`, `&` escaped. Stops once
/// `out` holds more than `cap` bytes, returning `false` (the text is then incomplete). It checks after every scalar, so it stops within one scalar of
/// the cap however large the value is.
pub fn write_json_capped(out: &mut String, value: &Value, cap: usize) -> bool {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match go_number(n) {
            GoNumber::Int(i) => out.push_str(&i.to_string()),
            GoNumber::Float(f) => out.push_str(&float_json(f)),
        },
        Value::String(s) => write_json_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if !write_json_capped(out, item, cap) {
                    return false;
                }
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(out, k);
                out.push(':');
                if !write_json_capped(out, v, cap) {
                    return false;
                }
            }
            out.push('}');
        }
    }
    out.len() <= cap
}

/// A JSON string the way Go's encoder escapes it.
pub fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => push_unicode_escape(out, c),
            c if u32::from(c) < 0x20 => push_unicode_escape(out, c),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn push_unicode_escape(out: &mut String, c: char) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let code = u32::from(c);
    out.push_str("\\u");
    for shift in [12, 8, 4, 0] {
        out.push(char::from(HEX[((code >> shift) & 0xf) as usize]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_like_go() {
        assert_eq!(float_text(1_234_567.5), "1.2345675e+06");
        assert_eq!(float_text(123_456.5), "123456.5");
        assert_eq!(float_text(0.00001), "1e-05");
        assert_eq!(float_text(0.0001), "0.0001");
        assert_eq!(float_text(1.5e300), "1.5e+300");
        assert_eq!(float_text(-2.5), "-2.5");
        assert_eq!(float_json(1e-7), "1e-7");
        assert_eq!(float_json(0.00001), "0.00001");
        assert_eq!(float_json(1e21), "1e+21");
        assert_eq!(
            float_json(1.234_567_890_123_456_7e19),
            "12345678901234567000"
        );
    }

    #[test]
    fn parse_float_matches_go() {
        assert_eq!(parse_float("1"), Some(1.0));
        assert_eq!(parse_float("-1.5e3"), Some(-1500.0));
        assert_eq!(parse_float(".5"), Some(0.5));
        assert_eq!(parse_float("1e400"), None);
        assert_eq!(parse_float(""), None);
        assert_eq!(parse_float("True"), None);
        assert_eq!(parse_float("1_000"), None);
        assert!(parse_float("Inf").is_some_and(f64::is_infinite));
    }

    #[test]
    fn json_matches_go() {
        let v: Value = serde_json::json!({"z": 1, "a": "<&>", "m": [1.5, null, true]});
        let mut out = String::new();
        assert!(write_json_capped(&mut out, &v, usize::MAX));
        assert_eq!(
            out,
            r#"{"a":"\u003c\u0026\u003e","m":[1.5,null,true],"z":1}"#
        );
    }
}
