//! Readiness (SPEC §3): when a released resource counts as ready, failed or still in progress.
//!
//! One engine serves lint (which validates expressions with [`expr::parse`]) and `apply`
//! (which evaluates the very same parsed [`expr::Expression`]s): the kubectl `JSONPath`
//! dialect in [`jsonpath`], HIP-0025 expressions in [`expr`], the kstatus rules in
//! [`kstatus`], and the conditions other tools wait on in [`conditions`] (an object exists;
//! every `path=value` pair holds). Every engine is a [`Condition`] judging a
//! `serde_json::Value`; [`Readiness`] picks one per object the way Helm does: custom
//! expressions when both annotations are present and non-empty, kstatus otherwise; a hook
//! always gets kstatus (its readiness annotations are ignored). A deployer following another
//! tool's waits builds [`Readiness::Exists`], [`Readiness::Properties`] or (Argo CD's built-in
//! health checks, [`argo`]) [`Readiness::ArgoHealth`] instead. No I/O
//! happens here, not even the clock: callers pass the instant to judge at.

pub mod argo;
mod argo_lua;
pub mod argo_script;
pub mod clock;
pub mod conditions;
pub mod expr;
mod gofmt;
pub mod jsonpath;
pub mod kstatus;

use std::fmt;
use std::time::SystemTime;

use serde_json::Value;

use crate::model::annotations::{READINESS_FAILURE, READINESS_SUCCESS};
pub use argo::ArgoHealth;
pub use conditions::{
    AllPropertiesEqual, Exists, KappConditionMatcher, KappConditions, PropertyPair,
};
use expr::Expression;
pub use kstatus::KstatusOptions;

/// The judgement of one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    Ready,
    Failed,
    InProgress,
}

impl Status {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ready => "ready",
            Status::Failed => "failed",
            Status::InProgress => "in-progress",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which engine decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    Custom,
    Kstatus,
    /// The object exists ([`Exists`]).
    Exists,
    /// Every `path=value` pair holds ([`AllPropertiesEqual`]).
    Properties,
    /// Argo CD's built-in health checks ([`ArgoHealth`]).
    ArgoHealth,
    /// A kapp wait rule's condition matchers ([`KappConditions`]).
    KappConditions,
}

impl Engine {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Custom => "custom",
            Engine::Kstatus => "kstatus",
            Engine::Exists => "exists",
            Engine::Properties => "all-properties-equal",
            Engine::ArgoHealth => "argo-health",
            Engine::KappConditions => "kapp-conditions",
        }
    }
}

/// Which annotation an expression comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExprKind {
    Success,
    Failure,
}

impl ExprKind {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            ExprKind::Success => "success",
            ExprKind::Failure => "failure",
        }
    }

    #[must_use]
    pub fn annotation(self) -> &'static str {
        match self {
            ExprKind::Success => READINESS_SUCCESS,
            ExprKind::Failure => READINESS_FAILURE,
        }
    }
}

/// What one custom expression saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExprResult {
    pub expr: String,
    pub kind: ExprKind,
    /// The printed value of its path; `None` when the path did not resolve (or there is no
    /// `.status` yet).
    pub observed: Option<String>,
    pub met: bool,
    /// Why it could not be judged (an ordering operator on non-numbers).
    pub note: Option<String>,
}

/// A verdict with its reasons.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judgement {
    pub status: Status,
    pub engine: Engine,
    pub reason: String,
    /// Each custom expression, failure expressions first (empty for kstatus).
    pub expressions: Vec<ExprResult>,
}

/// Something that judges an object's readiness (kube-rs' `Condition`, with reasons) at the
/// instant `now` (kstatus reads the clock for unschedulable Pods; custom expressions do not).
pub trait Condition {
    /// Judges the object and explains why, evaluating every expression for the report.
    fn judge(&self, object: &Value, now: SystemTime) -> Judgement;

    /// Only the status: what a deployer polls. Engines may stop at the first met expression.
    fn status(&self, object: &Value, now: SystemTime) -> Status {
        self.judge(object, now).status
    }
}

/// HIP-0025 custom readiness: failure expressions first (any met → failed), then success
/// expressions (any met → ready), else in progress; no `.status` yet → in progress.
#[derive(Clone, Debug, PartialEq)]
pub struct Custom {
    success: Vec<Expression>,
    failure: Vec<Expression>,
}

impl Custom {
    /// Both lists must be non-empty (SPEC §3); otherwise there is no custom readiness.
    #[must_use]
    pub fn new(success: Vec<Expression>, failure: Vec<Expression>) -> Option<Self> {
        (!success.is_empty() && !failure.is_empty()).then_some(Self { success, failure })
    }

    #[must_use]
    pub fn success(&self) -> &[Expression] {
        &self.success
    }

    #[must_use]
    pub fn failure(&self) -> &[Expression] {
        &self.failure
    }

    fn tagged(&self) -> impl Iterator<Item = (ExprKind, &Expression)> {
        self.failure
            .iter()
            .map(|e| (ExprKind::Failure, e))
            .chain(self.success.iter().map(|e| (ExprKind::Success, e)))
    }
}

/// The status kstatus-free expressions read: `.status` must be an object.
fn has_status(object: &Value) -> bool {
    object.get("status").is_some_and(Value::is_object)
}

fn describe_observed(observed: Option<&str>) -> String {
    match observed {
        Some(v) => format!("observed {v:?}"),
        None => "path not found".to_owned(),
    }
}

impl Condition for Custom {
    fn judge(&self, object: &Value, _now: SystemTime) -> Judgement {
        if !has_status(object) {
            return Judgement {
                status: Status::InProgress,
                engine: Engine::Custom,
                reason: "no .status yet: custom readiness waits for the controller to report"
                    .to_owned(),
                expressions: self
                    .tagged()
                    .map(|(kind, e)| ExprResult {
                        expr: e.text().to_owned(),
                        kind,
                        observed: None,
                        met: false,
                        note: None,
                    })
                    .collect(),
            };
        }
        let expressions: Vec<ExprResult> = self
            .tagged()
            .map(|(kind, e)| {
                let seen = e.observe(object);
                ExprResult {
                    expr: e.text().to_owned(),
                    kind,
                    observed: seen.observed,
                    met: seen.met,
                    note: seen.note,
                }
            })
            .collect();
        let first = |kind: ExprKind| expressions.iter().find(|r| r.kind == kind && r.met);
        let (status, reason) = if let Some(r) = first(ExprKind::Failure) {
            let seen = describe_observed(r.observed.as_deref());
            (
                Status::Failed,
                format!("failure condition met: {} ({seen})", r.expr),
            )
        } else if let Some(r) = first(ExprKind::Success) {
            let seen = describe_observed(r.observed.as_deref());
            (
                Status::Ready,
                format!("success condition met: {} ({seen})", r.expr),
            )
        } else {
            (
                Status::InProgress,
                "no success or failure condition met yet".to_owned(),
            )
        };
        Judgement {
            status,
            engine: Engine::Custom,
            reason,
            expressions,
        }
    }

    fn status(&self, object: &Value, _now: SystemTime) -> Status {
        if !has_status(object) {
            return Status::InProgress;
        }
        let mut buffer = String::new();
        if self
            .failure
            .iter()
            .any(|e| e.observe_into(object, &mut buffer) == Some(true))
        {
            return Status::Failed;
        }
        if self
            .success
            .iter()
            .any(|e| e.observe_into(object, &mut buffer) == Some(true))
        {
            return Status::Ready;
        }
        Status::InProgress
    }
}

/// The kstatus engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Kstatus {
    pub options: KstatusOptions,
}

impl Condition for Kstatus {
    fn judge(&self, object: &Value, now: SystemTime) -> Judgement {
        let verdict = kstatus::compute(object, self.options, now);
        Judgement {
            status: verdict.status,
            engine: Engine::Kstatus,
            reason: verdict.reason,
            expressions: Vec::new(),
        }
    }
}

/// The readiness of one object: custom expressions or kstatus (HIP-0025), or a condition
/// another tool waits on.
#[derive(Clone, Debug, PartialEq)]
pub enum Readiness {
    Custom(Custom),
    Kstatus(Kstatus),
    /// Ready once it exists.
    Exists(Exists),
    /// Ready once every `path=value` pair holds.
    Properties(AllPropertiesEqual),
    /// Ready once Argo CD's built-in health check says so.
    ArgoHealth(ArgoHealth),
    /// Ready by a kapp wait rule's condition matchers.
    KappConditions(KappConditions),
}

impl Condition for Readiness {
    fn judge(&self, object: &Value, now: SystemTime) -> Judgement {
        match self {
            Readiness::Custom(c) => c.judge(object, now),
            Readiness::Kstatus(k) => k.judge(object, now),
            Readiness::Exists(e) => e.judge(object, now),
            Readiness::Properties(p) => p.judge(object, now),
            Readiness::ArgoHealth(a) => a.judge(object, now),
            Readiness::KappConditions(k) => k.judge(object, now),
        }
    }

    fn status(&self, object: &Value, now: SystemTime) -> Status {
        match self {
            Readiness::Custom(c) => c.status(object, now),
            Readiness::Kstatus(k) => k.status(object, now),
            Readiness::Exists(e) => e.status(object, now),
            Readiness::Properties(p) => p.status(object, now),
            Readiness::ArgoHealth(a) => a.status(object, now),
            Readiness::KappConditions(k) => k.status(object, now),
        }
    }
}

/// A readiness annotation or expression that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ReadinessError {
    pub kind: ExprKind,
    /// The expression's position in its annotation's array, when the error is about one.
    pub index: Option<usize>,
    /// The expression text and the error, when an expression does not parse.
    pub expression: Option<(String, expr::ExprError)>,
    pub message: String,
}

/// Parses the expressions of one side; each error names the side and entry.
pub fn parse_expressions<S: AsRef<str>>(
    kind: ExprKind,
    texts: &[S],
) -> Result<Vec<Expression>, ReadinessError> {
    texts
        .iter()
        .enumerate()
        .map(|(index, text)| {
            let text = text.as_ref();
            expr::parse(text).map_err(|e| ReadinessError {
                kind,
                index: Some(index),
                message: format!("invalid {} expression: {}", kind.as_str(), e.message),
                expression: Some((text.to_owned(), e)),
            })
        })
        .collect()
}

impl Readiness {
    /// Custom readiness from explicit expressions when both sides are given, else kstatus.
    #[must_use]
    pub fn new(
        success: Vec<Expression>,
        failure: Vec<Expression>,
        options: KstatusOptions,
    ) -> Self {
        match Custom::new(success, failure) {
            Some(custom) => Readiness::Custom(custom),
            None => Readiness::Kstatus(Kstatus { options }),
        }
    }

    /// A hook's readiness (SPEC §3): never custom expressions, always kstatus, the way Helm's
    /// hook readers apply it (a Job must complete, a Pod must succeed).
    #[must_use]
    pub fn for_hook(options: KstatusOptions) -> Self {
        Readiness::Kstatus(Kstatus {
            options: KstatusOptions {
                hook: true,
                ..options
            },
        })
    }
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "test inputs are fixed")]
mod tests {
    use super::*;
    use serde_json::json;

    fn annotated(success: &str, failure: &str, status: &Value) -> Value {
        json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "j", "annotations": {
                READINESS_SUCCESS: success, READINESS_FAILURE: failure}},
            "status": status
        })
    }

    #[test]
    fn custom_applies_only_with_both_annotations() {
        let both = annotated(
            r#"["{.succeeded} == 1"]"#,
            r#"["{.failed} >= 1"]"#,
            &json!({"succeeded": 1}),
        );
        let r = crate::model::live::readiness_of(&both, KstatusOptions::default()).unwrap();
        let j = r.judge(&both, SystemTime::UNIX_EPOCH);
        assert_eq!((j.status, j.engine), (Status::Ready, Engine::Custom));
        assert_eq!(j.expressions.len(), 2);
        assert_eq!(j.expressions[0].kind, ExprKind::Failure);
        assert_eq!(j.expressions[0].observed, None);
        assert_eq!(r.status(&both, SystemTime::UNIX_EPOCH), Status::Ready);

        let one = annotated(r#"["{.succeeded} == 1"]"#, " ", &json!({"startTime": "x"}));
        let r = crate::model::live::readiness_of(&one, KstatusOptions::default()).unwrap();
        assert_eq!(
            r.judge(&one, SystemTime::UNIX_EPOCH).engine,
            Engine::Kstatus
        );
    }

    #[test]
    fn failure_wins_and_missing_status_waits() {
        let obj = annotated(
            r#"["{.succeeded} == 1"]"#,
            r#"["{.failed} >= 1"]"#,
            &json!({"succeeded": 1, "failed": 2}),
        );
        let r = crate::model::live::readiness_of(&obj, KstatusOptions::default()).unwrap();
        assert_eq!(r.judge(&obj, SystemTime::UNIX_EPOCH).status, Status::Failed);
        assert_eq!(r.status(&obj, SystemTime::UNIX_EPOCH), Status::Failed);
        let mut no_status = obj.clone();
        no_status.as_object_mut().unwrap().remove("status");
        assert_eq!(
            r.judge(&no_status, SystemTime::UNIX_EPOCH).status,
            Status::InProgress
        );
        assert_eq!(
            r.status(&no_status, SystemTime::UNIX_EPOCH),
            Status::InProgress
        );
    }

    #[test]
    fn bad_annotations_are_errors() {
        let obj = annotated("{.succeeded} == 1", r#"["{.failed} >= 1"]"#, &json!({}));
        let e = crate::model::live::readiness_of(&obj, KstatusOptions::default()).unwrap_err();
        assert!(
            e.message.starts_with("helm.sh/readiness-success: "),
            "{}",
            e.message
        );
        let obj = annotated(
            r#"["{.succeeded}==1"]"#,
            r#"["{.failed} >= 1"]"#,
            &json!({}),
        );
        let e = crate::model::live::readiness_of(&obj, KstatusOptions::default()).unwrap_err();
        let (text, err) = e.expression.unwrap();
        assert_eq!(text, "{.succeeded}==1");
        assert_eq!(err.offset, 12);
    }
}
