//! Replicated KOTS's ordering and wait annotations, read as KOTS reads them (DIALECTS.md §4.1).
//!
//! - `kots.io/creation-phase`, `kots.io/deletion-phase`: Go's `strconv.ParseInt(v, 10, 64)` of
//!   the raw value (no trimming; a sign and leading zeros are accepted, `"01"` is phase 1).
//!   Missing: phase 0. Not an integer: KOTS logs it and uses phase 0 (`GroupByPhaseAnnotation`).
//!   KOTS's documentation and its linter (`kots lint`) allow −9999…9999, but the deployer uses
//!   any 64-bit value as written.
//! - `kots.io/wait-for-ready`: only the exact string `true` makes KOTS wait, right after applying
//!   the object, until it is ready (`ShouldWaitForReady`).
//! - `kots.io/wait-for-properties`: `<path>=<value>[,<path>=<value>…]` (`GetWaitForProperties`):
//!   split on every `,`, each piece split at its first `=`, nothing trimmed; a piece without `=`
//!   is logged and skipped. KOTS then waits for every pair in turn: the path, written without
//!   braces, is wrapped as `{ <path> }` and evaluated with client-go's `JSONPath` on the whole
//!   object; a pair holds when the printed result equals the value exactly, and a path that
//!   finds nothing is no match (judged by `readiness::AllPropertiesEqual`). An empty path or a
//!   path that does not parse aborts the deploy at that object.
//!
//! KOTS decodes a manifest into client-go's `Unstructured`, whose `GetAnnotations` returns no
//! annotations at all when one value is not a string: such an object is read as unannotated.

use super::annotations::{Annotation, Rejected, Spanned};
use crate::parse::Span;
use crate::readiness::jsonpath::{self, JsonPath};
use crate::source::Loc;

pub const CREATION_PHASE: &str = "kots.io/creation-phase";
pub const DELETION_PHASE: &str = "kots.io/deletion-phase";
pub const WAIT_FOR_READY: &str = "kots.io/wait-for-ready";
pub const WAIT_FOR_PROPERTIES: &str = "kots.io/wait-for-properties";
/// `kots.io/keep: "true"`: KOTS never deletes the object (`diffAndDeleteManifests`).
pub const KEEP: &str = "kots.io/keep";

/// Every annotation key KOTS reads to order and wait.
pub const KEYS: [&str; 4] = [
    CREATION_PHASE,
    DELETION_PHASE,
    WAIT_FOR_READY,
    WAIT_FOR_PROPERTIES,
];

/// The phases KOTS documents and `kots lint` accepts.
pub const PHASE_RANGE: std::ops::RangeInclusive<i64> = -9999..=9999;

/// What is wrong with a phase value. KOTS deploys either way; its linter rejects both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PhaseProblem {
    /// Not an integer: KOTS logs it and uses phase 0.
    NotAnInteger,
    /// An integer outside −9999…9999: KOTS uses it as written.
    OutOfRange,
}

/// A creation or deletion phase as KOTS computes it.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    /// The phase KOTS uses (0 when missing or not an integer).
    pub value: i64,
    /// The annotation's value as written and where, when present.
    pub written: Option<Spanned<String>>,
    pub problem: Option<PhaseProblem>,
}

/// One `<path>=<value>` pair of `kots.io/wait-for-properties`.
#[derive(Clone, Debug, PartialEq)]
pub struct WaitForProperty {
    /// The `JSONPath` as written, without braces (`.status.ready`); evaluated on the whole object.
    pub path: Spanned<String>,
    /// The exact string the printed result must equal.
    pub value: Spanned<String>,
    /// `{ <path> }` parsed as KOTS parses it; `None` when KOTS refuses the pair (see
    /// [`Kots::rejected`]).
    pub jsonpath: Option<JsonPath>,
}

/// Everything KOTS reads from one object to order, wait for and delete it.
#[derive(Clone, Debug, PartialEq)]
pub struct Kots {
    pub creation_phase: Phase,
    pub deletion_phase: Phase,
    /// `kots.io/wait-for-ready: "true"`: after applying the object KOTS waits, with no timeout,
    /// until it is ready (`Deployment`, `StatefulSet`, `DaemonSet`, `Service`, `Ingress` and
    /// `PersistentVolumeClaim` by their status; any other kind as soon as it exists), holding
    /// back every object applied after it.
    pub wait_for_ready: bool,
    /// Where `kots.io/wait-for-ready` is written, when present (whatever its value).
    pub wait_for_ready_loc: Option<Loc>,
    /// `kots.io/wait-for-properties`: every pair, in order. After applying the object (and
    /// after its `wait_for_ready` wait) KOTS waits, with no timeout, for each pair in turn.
    pub wait_for_properties: Vec<WaitForProperty>,
    /// Pieces of `kots.io/wait-for-properties` without `=`, which KOTS logs and skips.
    pub skipped_properties: Vec<Spanned<String>>,
    /// Values KOTS refuses.
    pub rejected: Vec<Rejected>,
    /// `kots.io/keep: "true"` (exactly that string): KOTS skips the object when it deletes,
    /// on undeploy as on upgrade.
    pub keep: bool,
}

impl Kots {
    /// Reads one object. `source` is the text of the document the annotations come from and
    /// the byte offset it starts at, so that each property pair gets its own location when the
    /// value is written verbatim (else every pair is located at the whole value).
    #[must_use]
    pub fn read(annotations: &[Annotation], source: Option<(&str, u32)>) -> Self {
        let find = |key: &str| super::annotations::go_annotation(annotations, key);
        let mut kots = Kots {
            creation_phase: read_phase(find(CREATION_PHASE)),
            deletion_phase: read_phase(find(DELETION_PHASE)),
            wait_for_ready: false,
            wait_for_ready_loc: None,
            wait_for_properties: Vec::new(),
            skipped_properties: Vec::new(),
            rejected: Vec::new(),
            keep: find(KEEP).is_some_and(|(raw, _)| raw == "true"),
        };
        if let Some((raw, loc)) = find(WAIT_FOR_READY) {
            kots.wait_for_ready = raw == "true";
            kots.wait_for_ready_loc = Some(loc);
        }
        if let Some((raw, loc)) = find(WAIT_FOR_PROPERTIES) {
            kots.read_properties(raw, loc, source);
        }
        kots
    }

    fn read_properties(&mut self, raw: &str, loc: Loc, source: Option<(&str, u32)>) {
        // `ShouldWaitForProperties`: an empty value means no wait at all.
        if raw.is_empty() {
            return;
        }
        let at = verbatim_start(raw, loc, source);
        let sub = |start: usize, len: usize| match at {
            Some(base) => Loc {
                file: loc.file,
                span: Span {
                    start: base + start as u32,
                    end: base + (start + len) as u32,
                },
            },
            None => loc,
        };
        let mut offset = 0;
        for piece in raw.split(',') {
            let start = offset;
            offset += piece.len() + 1;
            let Some((path, value)) = piece.split_once('=') else {
                self.skipped_properties.push(Spanned {
                    value: piece.to_owned(),
                    loc: sub(start, piece.len()),
                });
                continue;
            };
            let path_loc = sub(start, path.len());
            let value_loc = sub(start + path.len() + 1, value.len());
            let jsonpath = if path.is_empty() {
                self.reject(
                    piece,
                    "a pair with an empty path".to_owned(),
                    sub(start, piece.len()),
                );
                None
            } else {
                match jsonpath::parse(&format!("{{ {path} }}")) {
                    Ok(parsed) => Some(parsed),
                    Err(e) => {
                        self.reject(
                            piece,
                            format!("a pair whose path does not parse ({e})"),
                            path_loc,
                        );
                        None
                    }
                }
            };
            self.wait_for_properties.push(WaitForProperty {
                path: Spanned {
                    value: path.to_owned(),
                    loc: path_loc,
                },
                value: Spanned {
                    value: value.to_owned(),
                    loc: value_loc,
                },
                jsonpath,
            });
        }
    }

    fn reject(&mut self, piece: &str, reason: String, loc: Loc) {
        self.rejected.push(Rejected {
            key: WAIT_FOR_PROPERTIES.to_owned(),
            value: piece.to_owned(),
            reason,
            loc,
        });
    }

    /// Whether KOTS waits after applying this object.
    #[must_use]
    pub fn waits(&self) -> bool {
        self.wait_for_ready || !self.wait_for_properties.is_empty()
    }
}

fn read_phase(written: Option<(&str, Loc)>) -> Phase {
    let Some((raw, loc)) = written else {
        return Phase {
            value: 0,
            written: None,
            problem: None,
        };
    };
    // `strconv.ParseInt(v, 10, 64)` accepts exactly what Go's `Atoi` accepts on 64 bits.
    let (value, problem) = match super::argo::atoi(raw) {
        Some(v) if PHASE_RANGE.contains(&v) => (v, None),
        Some(v) => (v, Some(PhaseProblem::OutOfRange)),
        None => (0, Some(PhaseProblem::NotAnInteger)),
    };
    Phase {
        value,
        written: Some(Spanned {
            value: raw.to_owned(),
            loc,
        }),
        problem,
    }
}

/// Where the value's first character is in the file, when the value is written verbatim at
/// `loc` (plain, or quoted without escapes) on one line.
fn verbatim_start(raw: &str, loc: Loc, source: Option<(&str, u32)>) -> Option<u32> {
    let (text, base) = source?;
    let start = loc.span.start.checked_sub(base)? as usize;
    let end = loc.span.end.checked_sub(base)? as usize;
    let written = text.get(start..end)?;
    if written.contains('\n') {
        return None;
    }
    let inner = match written.as_bytes().first() {
        Some(b'\'' | b'"') if written.len() >= 2 => &written[1..written.len() - 1],
        _ => written,
    };
    let offset = written.len() - inner.len();
    (inner == raw).then(|| loc.span.start + u32::from(offset > 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::annotations::AnnotationValue;
    use crate::model::annotations::test_annotation as ann;

    #[test]
    fn phases_are_go_parse_int_with_zero_for_the_rest() {
        let k = Kots::read(
            &[ann(CREATION_PHASE, "-1", 1), ann(DELETION_PHASE, "01", 2)],
            None,
        );
        assert_eq!((k.creation_phase.value, k.deletion_phase.value), (-1, 1));
        assert_eq!(k.creation_phase.problem, None);
        for bad in [
            "",
            " 1",
            "1.5",
            "one",
            "0x10",
            "1_000",
            "9223372036854775808",
        ] {
            let k = Kots::read(&[ann(CREATION_PHASE, bad, 3)], None);
            assert_eq!(k.creation_phase.value, 0, "{bad:?}");
            assert_eq!(k.creation_phase.problem, Some(PhaseProblem::NotAnInteger));
            assert_eq!(
                k.creation_phase.written.map(|w| w.loc.span.start),
                Some(3),
                "{bad:?}"
            );
        }
        // Outside the documented range: used as written, flagged for the linter.
        let k = Kots::read(&[ann(CREATION_PHASE, "+10000", 1)], None);
        assert_eq!(k.creation_phase.value, 10000);
        assert_eq!(k.creation_phase.problem, Some(PhaseProblem::OutOfRange));
        let k = Kots::read(&[ann(CREATION_PHASE, "-9999", 1)], None);
        assert_eq!(k.creation_phase.problem, None);
        let k = Kots::read(&[], None);
        assert_eq!(k.creation_phase.value, 0);
        assert!(k.creation_phase.written.is_none());
    }

    #[test]
    fn only_the_exact_string_true_keeps() {
        assert!(Kots::read(&[ann(KEEP, "true", 1)], None).keep);
        for other in ["True", " true", "1", "yes", ""] {
            assert!(!Kots::read(&[ann(KEEP, other, 1)], None).keep, "{other:?}");
        }
        assert!(!Kots::read(&[], None).keep);
    }

    #[test]
    fn only_the_exact_string_true_waits_for_ready() {
        assert!(Kots::read(&[ann(WAIT_FOR_READY, "true", 1)], None).wait_for_ready);
        for other in ["True", "TRUE", " true", "1", "yes", ""] {
            let k = Kots::read(&[ann(WAIT_FOR_READY, other, 1)], None);
            assert!(!k.wait_for_ready && !k.waits(), "{other:?}");
            assert!(k.wait_for_ready_loc.is_some());
        }
    }

    #[test]
    fn property_pairs_as_kots_splits_them() {
        // KOTS's own test input (`types_test.go`).
        let k = Kots::read(
            &[ann(
                WAIT_FOR_PROPERTIES,
                ".status.ready=true,.status.something-else=1",
                1,
            )],
            None,
        );
        let pairs: Vec<(&str, &str)> = k
            .wait_for_properties
            .iter()
            .map(|p| (p.path.value.as_str(), p.value.value.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [(".status.ready", "true"), (".status.something-else", "1")]
        );
        assert!(k.wait_for_properties.iter().all(|p| p.jsonpath.is_some()));
        assert!(k.rejected.is_empty() && k.waits());
        // The value keeps its `=`; nothing is trimmed; a piece without `=` is skipped.
        let k = Kots::read(&[ann(WAIT_FOR_PROPERTIES, ".a=b=c, .d=e,junk", 1)], None);
        let pairs: Vec<(&str, &str)> = k
            .wait_for_properties
            .iter()
            .map(|p| (p.path.value.as_str(), p.value.value.as_str()))
            .collect();
        assert_eq!(pairs, [(".a", "b=c"), (" .d", "e")]);
        assert_eq!(k.skipped_properties[0].value, "junk");
        // Empty: no wait at all.
        let k = Kots::read(&[ann(WAIT_FOR_PROPERTIES, "", 1)], None);
        assert!(!k.waits() && k.rejected.is_empty());
    }

    #[test]
    fn kots_refuses_empty_and_unparsable_paths() {
        let k = Kots::read(
            &[ann(WAIT_FOR_PROPERTIES, "=true,.status[=1,.ok=yes", 1)],
            None,
        );
        assert_eq!(k.rejected.len(), 2);
        assert_eq!(k.rejected[0].value, "=true");
        assert!(
            k.rejected[1].reason.contains("does not parse"),
            "{:?}",
            k.rejected
        );
        // Every pair is still recorded, in order.
        assert_eq!(k.wait_for_properties.len(), 3);
        assert!(k.wait_for_properties[2].jsonpath.is_some());
    }

    #[test]
    fn a_non_string_annotation_hides_every_annotation() {
        let mut coerced = ann(CREATION_PHASE, "-1", 3);
        coerced.value = AnnotationValue::Coerced {
            text: "-1".into(),
            what: "an integer",
        };
        let k = Kots::read(&[coerced, ann(WAIT_FOR_READY, "true", 4)], None);
        assert_eq!(k.creation_phase.value, 0);
        assert!(!k.wait_for_ready);
    }

    #[test]
    fn pairs_are_located_inside_a_verbatim_value() {
        let text = "x: '.a=1,.b=2'";
        let loc = Loc {
            file: crate::source::FileId(0),
            span: Span {
                start: 103,
                end: 114,
            },
        };
        let annotation = Annotation {
            key: WAIT_FOR_PROPERTIES.into(),
            key_loc: loc,
            value: AnnotationValue::Str(".a=1,.b=2".into()),
            value_loc: loc,
        };
        let k = Kots::read(&[annotation], Some((text, 100)));
        let spans: Vec<(u32, u32)> = k
            .wait_for_properties
            .iter()
            .flat_map(|p| [p.path.loc.span, p.value.loc.span])
            .map(|s| (s.start, s.end))
            .collect();
        assert_eq!(spans, [(104, 106), (107, 108), (109, 111), (112, 113)]);
    }
}
