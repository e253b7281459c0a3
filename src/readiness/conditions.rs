//! Readiness conditions other tools wait on, judged by the same engine as HIP-0025's
//! (DIALECTS.md §1.4, §4.1): [`Exists`] (an object is there at all: werf's external
//! dependencies, KOTS' "ready" for kinds it has no status informer for) and
//! [`AllPropertiesEqual`] (KOTS `kots.io/wait-for-properties`: every `path=value` pair holds).
//!
//! KOTS reads each path as client-go's `JSONPath` wrapped in `{ … }`, on the **whole object**
//! (`.status.x`, `.spec.x`, `.metadata.x` alike), prints the result as kubectl does, and
//! compares that text with the value **exactly** (no number or boolean typing, no trimming).
//! A path that does not resolve is no match (KOTS logs it and polls again); there is no failure
//! condition, so such a wait is ready or in progress, never failed.

use std::time::SystemTime;

use serde_json::Value;

use super::jsonpath::{self, ExecOptions, JsonPath};
use super::{Condition, Engine, ExprKind, ExprResult, Judgement, Status};

/// Ready as soon as the object exists: whoever calls it has found the object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Exists;

impl Condition for Exists {
    fn judge(&self, _object: &Value, _now: SystemTime) -> Judgement {
        Judgement {
            status: Status::Ready,
            engine: Engine::Exists,
            reason: "the object exists".to_owned(),
            expressions: Vec::new(),
        }
    }

    fn status(&self, _object: &Value, _now: SystemTime) -> Status {
        Status::Ready
    }
}

/// One `path=value` pair of `kots.io/wait-for-properties`.
#[derive(Clone, Debug, PartialEq)]
pub struct PropertyPair {
    /// The path as written (without braces), e.g. `.status.ready`.
    pub path_text: String,
    path: JsonPath,
    /// The exact text the printed path must equal.
    pub value: String,
}

impl PropertyPair {
    /// Parses the path as KOTS does: wrapped as `{ <path> }` and read by client-go's parser.
    pub fn new(path: &str, value: &str) -> Result<Self, jsonpath::PathError> {
        let template = format!("{{ {path} }}");
        let parsed = jsonpath::parse(&template).map_err(|mut e| {
            // Offsets count in the path as written, not in the wrapped template.
            e.offset = e.offset.saturating_sub(2).min(path.len());
            e
        })?;
        Ok(Self {
            path_text: path.to_owned(),
            path: parsed,
            value: value.to_owned(),
        })
    }

    /// A pair whose path was parsed already (`{ <path> }`, as [`PropertyPair::new`] parses it).
    #[must_use]
    pub fn parsed(path_text: String, path: JsonPath, value: String) -> Self {
        Self {
            path_text,
            path,
            value,
        }
    }

    /// `path=value`, as written in the annotation.
    #[must_use]
    pub fn text(&self) -> String {
        format!("{}={}", self.path_text, self.value)
    }

    /// The printed value of the path on the whole object (`None`: it does not resolve) and
    /// whether it equals the value exactly.
    fn observe(&self, object: &Value) -> (Option<String>, bool) {
        match self.path.execute(object, ExecOptions::default()) {
            Ok(printed) => {
                let met = printed == self.value;
                (Some(printed), met)
            }
            Err(_) => (None, false),
        }
    }
}

/// Every pair must hold (KOTS waits for them one after another: all of them, AND).
#[derive(Clone, Debug, PartialEq)]
pub struct AllPropertiesEqual {
    pairs: Vec<PropertyPair>,
}

impl AllPropertiesEqual {
    /// At least one pair; `None` for none (nothing to wait for).
    #[must_use]
    pub fn new(pairs: Vec<PropertyPair>) -> Option<Self> {
        (!pairs.is_empty()).then_some(Self { pairs })
    }

    /// Parses `(path, value)` pairs; the first path that does not parse is the error, with
    /// its pair's position.
    pub fn parse<P: AsRef<str>, V: AsRef<str>>(
        pairs: &[(P, V)],
    ) -> Result<Option<Self>, (usize, jsonpath::PathError)> {
        let parsed = pairs
            .iter()
            .enumerate()
            .map(|(i, (p, v))| PropertyPair::new(p.as_ref(), v.as_ref()).map_err(|e| (i, e)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::new(parsed))
    }

    #[must_use]
    pub fn pairs(&self) -> &[PropertyPair] {
        &self.pairs
    }
}

impl Condition for AllPropertiesEqual {
    fn judge(&self, object: &Value, _now: SystemTime) -> Judgement {
        let expressions: Vec<ExprResult> = self
            .pairs
            .iter()
            .map(|pair| {
                let (observed, met) = pair.observe(object);
                ExprResult {
                    expr: pair.text(),
                    kind: ExprKind::Success,
                    observed,
                    met,
                    note: None,
                }
            })
            .collect();
        let unmet = expressions.iter().filter(|e| !e.met).count();
        let (status, reason) = if unmet == 0 {
            (Status::Ready, "every property has its value".to_owned())
        } else {
            (
                Status::InProgress,
                format!(
                    "{unmet} of {} properties not equal to their value yet",
                    expressions.len()
                ),
            )
        };
        Judgement {
            status,
            engine: Engine::Properties,
            reason,
            expressions,
        }
    }

    fn status(&self, object: &Value, _now: SystemTime) -> Status {
        if self.pairs.iter().all(|p| p.observe(object).1) {
            Status::Ready
        } else {
            Status::InProgress
        }
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "test inputs are fixed")]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: SystemTime = SystemTime::UNIX_EPOCH;

    fn props(pairs: &[(&str, &str)]) -> AllPropertiesEqual {
        AllPropertiesEqual::parse(pairs).unwrap().unwrap()
    }

    #[test]
    fn exists_is_ready_whatever_the_object_says() {
        let failing = json!({"kind": "Job", "status": {"conditions": [{"type": "Failed", "status": "True"}]}});
        let j = Exists.judge(&failing, NOW);
        assert_eq!((j.status, j.engine), (Status::Ready, Engine::Exists));
        assert_eq!(Exists.status(&json!({}), NOW), Status::Ready);
    }

    #[test]
    fn every_pair_must_hold() {
        // KOTS' own test input: `.status.ready=true,.status.something-else=1`.
        let c = props(&[(".status.ready", "true"), (".status.something-else", "1")]);
        let half = json!({"status": {"ready": true, "something-else": 2}});
        let j = c.judge(&half, NOW);
        assert_eq!(j.status, Status::InProgress);
        assert_eq!(j.engine, Engine::Properties);
        assert_eq!(j.expressions.len(), 2);
        assert!(j.expressions[0].met);
        assert_eq!(j.expressions[1].observed.as_deref(), Some("2"));
        assert!(!j.expressions[1].met);
        assert_eq!(c.status(&half, NOW), Status::InProgress);
        let both = json!({"status": {"ready": true, "something-else": 1}});
        assert_eq!(c.judge(&both, NOW).status, Status::Ready);
        assert_eq!(c.status(&both, NOW), Status::Ready);
    }

    #[test]
    fn paths_read_the_whole_object_not_only_status() {
        let c = props(&[(".spec.replicas", "3"), (".metadata.labels.tier", "db")]);
        let o = json!({"metadata": {"labels": {"tier": "db"}}, "spec": {"replicas": 3}});
        assert_eq!(c.status(&o, NOW), Status::Ready);
        // No `.status` at all is no reason to wait when no path reads it.
        assert!(o.get("status").is_none());
    }

    #[test]
    fn values_compare_as_exact_text() {
        // `True` is not `true`, `01` is not `1`, and a space counts.
        for (value, object) in [
            ("True", json!({"status": {"ready": true}})),
            ("01", json!({"status": {"ready": 1}})),
            ("1", json!({"status": {"ready": " 1"}})),
        ] {
            let c = props(&[(".status.ready", value)]);
            assert_eq!(
                c.status(&object, NOW),
                Status::InProgress,
                "{value} {object}"
            );
        }
        // Numbers print as Go prints them: 1.0 is `1`.
        let c = props(&[(".status.ready", "1")]);
        assert_eq!(
            c.status(&json!({"status": {"ready": 1.0}}), NOW),
            Status::Ready
        );
        let c = props(&[(".status.tasks.extract", "true")]);
        let o = json!({"status": {"tasks": {"extract": "true"}}});
        assert_eq!(c.status(&o, NOW), Status::Ready);
    }

    #[test]
    fn a_missing_path_is_no_match_never_a_failure() {
        let c = props(&[(".status.phase", "Ready")]);
        let j = c.judge(&json!({"kind": "Widget"}), NOW);
        assert_eq!(j.status, Status::InProgress);
        assert_eq!(j.expressions[0].observed, None);
    }

    #[test]
    fn a_path_that_does_not_parse_is_an_error_with_its_pair() {
        let (index, e) =
            AllPropertiesEqual::parse(&[(".status.ok", "1"), (".status[", "x")]).unwrap_err();
        assert_eq!(index, 1);
        assert!(!e.message.is_empty());
        assert!(e.offset <= ".status[".len());
        assert!(
            AllPropertiesEqual::parse::<&str, &str>(&[])
                .unwrap()
                .is_none()
        );
    }
}

/// One `conditionMatchers` entry of a kapp `waitRules` rule: a status condition of this
/// `type` with this `status` ends the wait (`success`, `failure`) or, with `unblockChanges`,
/// lets kapp start the changes that wait for the object while it goes on waiting.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
#[expect(
    clippy::struct_excessive_bools,
    reason = "kapp's own fields, each read and stored as kapp writes them"
)]
pub struct KappConditionMatcher {
    #[serde(rename = "type")]
    pub type_: String,
    pub status: String,
    #[serde(default)]
    pub success: bool,
    #[serde(default)]
    pub failure: bool,
    /// The condition counts only once its `observedGeneration` is `metadata.generation`.
    #[serde(default)]
    pub supports_observed_generation: bool,
    #[serde(default)]
    pub unblock_changes: bool,
}

/// A kapp wait rule with condition matchers (kapp's `CustomWaitingResource`): with
/// `supportsObservedGeneration`, nothing counts until `status.observedGeneration` is
/// `metadata.generation`; then a failure matcher that matches fails, then a success matcher
/// that matches is ready; anything else waits (kapp: "No failing or successful conditions
/// found"). A condition whose matcher wants its own `observedGeneration` and does not have it
/// yet is passed over.
// NOTE: `unblockChanges` lets kapp start the changes that wait for the object before it is
// done; judged alone, such a condition keeps the object in progress, and `apply` lets what
// waits for it go ahead by judging [`KappConditions::until_unblocked`] first.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KappConditions {
    #[serde(default)]
    pub supports_observed_generation: bool,
    #[serde(default)]
    pub condition_matchers: Vec<KappConditionMatcher>,
}

impl KappConditions {
    /// Whether a condition can let kapp start what waits for the object before it is done.
    #[must_use]
    pub fn unblocks(&self) -> bool {
        self.condition_matchers.iter().any(|m| m.unblock_changes)
    }

    /// The rule as far as what waits for the object is concerned: an `unblockChanges`
    /// condition counts as success.
    #[must_use]
    pub fn until_unblocked(&self) -> Self {
        let mut out = self.clone();
        for m in &mut out.condition_matchers {
            m.success |= m.unblock_changes;
        }
        out
    }

    /// `type == status`, as written.
    fn matched<'a>(&'a self, object: &'a Value) -> Vec<(&'a KappConditionMatcher, &'a Value)> {
        let conditions = object["status"]["conditions"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut out = Vec::new();
        for m in &self.condition_matchers {
            for c in conditions {
                let text = |k: &str| c[k].as_str().unwrap_or_default();
                if text("type") != m.type_ || text("status") != m.status {
                    continue;
                }
                out.push((m, c));
            }
        }
        out
    }
}

impl Condition for KappConditions {
    fn judge(&self, object: &Value, _now: SystemTime) -> Judgement {
        let generation = object["metadata"]["generation"].as_i64().unwrap_or(0);
        let judgement = |status: Status, reason: String| Judgement {
            status,
            engine: Engine::KappConditions,
            reason,
            expressions: Vec::new(),
        };
        if self.supports_observed_generation
            && object["status"]["observedGeneration"].as_i64().unwrap_or(0) != generation
        {
            return judgement(
                Status::InProgress,
                format!("waiting for generation {generation} to be observed"),
            );
        }
        let matched = self.matched(object);
        let mut waiting_for_generation = false;
        let current = |m: &KappConditionMatcher, c: &Value| {
            !m.supports_observed_generation
                || c["observedGeneration"].as_i64().unwrap_or(0) == generation
        };
        let describe = |m: &KappConditionMatcher, c: &Value| {
            format!(
                "condition {} == {}: {} (message: {})",
                m.type_,
                m.status,
                c["reason"].as_str().unwrap_or_default(),
                c["message"].as_str().unwrap_or_default()
            )
        };
        for &(m, c) in &matched {
            if !current(m, c) {
                waiting_for_generation = true;
            } else if m.failure {
                return judgement(Status::Failed, format!("failure {}", describe(m, c)));
            }
        }
        let mut unblock = None;
        for &(m, c) in &matched {
            if !current(m, c) {
                continue;
            }
            if m.success {
                return judgement(Status::Ready, format!("successful {}", describe(m, c)));
            }
            if m.unblock_changes {
                unblock = Some(describe(m, c));
            }
        }
        if waiting_for_generation {
            return judgement(
                Status::InProgress,
                format!(
                    "waiting for generation {generation} to be observed by status condition(s)"
                ),
            );
        }
        if let Some(what) = unblock {
            return judgement(
                Status::InProgress,
                format!("{what} unblocks changes in kapp; waiting for a successful condition"),
            );
        }
        judgement(
            Status::InProgress,
            "no failing or successful conditions found".to_owned(),
        )
    }
}

#[cfg(test)]
mod kapp_tests {
    use super::*;
    use serde_json::json;

    fn matcher(type_: &str, status: &str) -> KappConditionMatcher {
        KappConditionMatcher {
            type_: type_.to_owned(),
            status: status.to_owned(),
            ..KappConditionMatcher::default()
        }
    }

    /// The rule of kapp's `TestSupportUnblockingChanges` (`test/e2e/order_test.go` @ a89576c).
    fn unblocking() -> KappConditions {
        KappConditions {
            supports_observed_generation: false,
            condition_matchers: vec![
                KappConditionMatcher {
                    unblock_changes: true,
                    ..matcher("Progressing", "True")
                },
                KappConditionMatcher {
                    success: true,
                    ..matcher("Available", "True")
                },
            ],
        }
    }

    fn status(rule: &KappConditions, object: &Value) -> Status {
        rule.judge(object, SystemTime::UNIX_EPOCH).status
    }

    fn with(conditions: &Value) -> Value {
        json!({"metadata": {"generation": 2}, "status": {"observedGeneration": 2, "conditions": conditions}})
    }

    #[test]
    fn kapp_conditions_fail_first_then_succeed_else_wait() {
        // The second example of kapp's docs (config.md "waitRules").
        let rule = KappConditions {
            supports_observed_generation: true,
            condition_matchers: vec![
                KappConditionMatcher {
                    failure: true,
                    ..matcher("Ready", "False")
                },
                KappConditionMatcher {
                    success: true,
                    supports_observed_generation: true,
                    ..matcher("Ready", "True")
                },
            ],
        };
        let ready = json!([{"type": "Ready", "status": "True", "observedGeneration": 2}]);
        assert_eq!(status(&rule, &with(&ready)), Status::Ready);
        let j = rule.judge(&with(&json!([{"type": "Ready", "status": "False", "reason": "Crash", "message": "boom"}])), SystemTime::UNIX_EPOCH);
        assert_eq!(j.status, Status::Failed);
        assert_eq!(
            j.reason,
            "failure condition Ready == False: Crash (message: boom)"
        );
        // The condition of an older generation does not count.
        let stale = json!([{"type": "Ready", "status": "True", "observedGeneration": 1}]);
        let j = rule.judge(&with(&stale), SystemTime::UNIX_EPOCH);
        assert_eq!(j.status, Status::InProgress);
        assert!(
            j.reason.contains("observed by status condition"),
            "{}",
            j.reason
        );
        // Nothing counts before the object's generation is observed.
        let unobserved = json!({"metadata": {"generation": 3}, "status": {"observedGeneration": 2, "conditions": ready}});
        assert_eq!(
            rule.judge(&unobserved, SystemTime::UNIX_EPOCH).reason,
            "waiting for generation 3 to be observed"
        );
        // No status, or no matching condition: kapp waits.
        assert_eq!(status(&rule, &json!({"metadata": {}})), Status::InProgress);
        let other = json!([{"type": "Synced", "status": "True"}]);
        assert_eq!(
            status(&KappConditions::default(), &with(&other)),
            Status::InProgress
        );
    }

    #[test]
    fn an_unblock_condition_unblocks_what_waits_but_the_object_waits_on() {
        let rule = unblocking();
        assert!(rule.unblocks());
        let progressing = with(&json!([{"type": "Progressing", "status": "True"}]));
        let j = rule.judge(&progressing, SystemTime::UNIX_EPOCH);
        assert_eq!(j.status, Status::InProgress);
        assert!(j.reason.contains("unblocks changes"), "{}", j.reason);
        assert_eq!(status(&rule.until_unblocked(), &progressing), Status::Ready);
        let available = with(&json!([{"type": "Available", "status": "True"}]));
        assert_eq!(status(&rule, &available), Status::Ready);
        // Serialized as kapp writes it.
        let json = serde_json::to_value(&rule).expect("serializes");
        assert_eq!(json["conditionMatchers"][0]["unblockChanges"], true);
        assert_eq!(
            serde_json::from_value::<KappConditions>(json).expect("reads"),
            rule
        );
    }
}
