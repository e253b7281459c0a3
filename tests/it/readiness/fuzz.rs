//! Property tests: the `JSONPath` and expression parsers never panic, whatever the input, and
//! every error offset can be underlined.

use serde_json::json;

use chartseq::readiness::expr;
use chartseq::readiness::jsonpath::{self, ExecOptions};

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Pieces that exercise every branch of the grammar, glued at random.
const PIECES: &[&str] = &[
    "{",
    "}",
    ".",
    "..",
    "[",
    "]",
    "[?(",
    ")",
    "@",
    "$",
    "*",
    ",",
    ":",
    "-",
    "1",
    "0",
    "-1",
    "'",
    "\"",
    "\\",
    " ",
    "==",
    "!=",
    "<",
    ">=",
    "=",
    "!",
    "&&",
    "||",
    "a",
    "status",
    "name",
    "range",
    "end",
    "true",
    "1.5",
    "é",
    "\n",
    "\t",
    "(",
    "x/y",
    "a-b",
    "length()",
    "[*]",
    "[0]",
    "[1:2:3]",
    "['a.b']",
    "[?(@.t==\"R\")]",
    "{.status.x}",
    " == ",
    " > ",
    "1e3",
    "\"q\"",
    "\u{2028}",
    "\u{0}",
];

fn random_text(rng: &mut Rng) -> String {
    let len = rng.below(24);
    (0..len).map(|_| PIECES[rng.below(PIECES.len())]).collect()
}

#[test]
fn parsers_never_panic_and_offsets_are_in_range() {
    let object = json!({
        "status": {"x": [1, 2, {"t": "R", "a": {"b": 1}}], "a.b": "s", "name": "n", "phase": "Ready"},
        "items": [{"name": "a"}, {"name": "b"}], "a": {"b": [true, null, 1.5]}
    });
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut parsed = 0;
    for _ in 0..20_000 {
        let text = random_text(&mut rng);
        match jsonpath::parse(&text) {
            Ok(path) => {
                parsed += 1;
                for allow in [false, true] {
                    let _ = path.execute(
                        &object,
                        ExecOptions {
                            allow_missing_keys: allow,
                        },
                    );
                }
            }
            Err(e) => assert!(e.offset <= text.len(), "{text:?}: {e:?}"),
        }
        let candidate = format!("{{{text}}} == 1");
        for input in [&text, &candidate] {
            match expr::parse(input) {
                Ok(e) => {
                    let _ = e.observe(&object);
                }
                Err(e) => {
                    assert!(e.offset <= input.len(), "{input:?}: {e:?}");
                    let rendered = expr::caret(input, e.offset);
                    assert!(rendered.ends_with('^'), "{rendered}");
                }
            }
        }
    }
    // The generator must reach the evaluator, not only the error paths.
    assert!(parsed > 1_000, "only {parsed} templates parsed");
}

#[test]
fn deep_and_long_inputs_do_not_overflow() {
    let long = format!("{{{}}}", ".a".repeat(50_000));
    assert!(jsonpath::parse(&long).is_ok());
    let filters = format!("{{{}}}", "[?(@.a)]".repeat(5_000));
    assert!(jsonpath::parse(&filters).is_ok());
    let unclosed = "[".repeat(10_000);
    assert!(jsonpath::parse(&format!("{{{unclosed}")).is_err());
}
