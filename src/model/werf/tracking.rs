//! werf's tracking annotations (how kubedog, which nelm drives, decides that a resource it
//! waits for failed): read as nelm validates and reads them.

use std::time::Duration;

use super::{
    Annotation, Deserialize, FAIL_MODE, FAILURES_ALLOWED, Loc, NO_ACTIVITY_TIMEOUT, Node, Rejected,
    Serialize, Werf,
};

/// kubedog's no-activity timeout when none is given, or `0` is (`NewDynamicReadinessTracker`:
/// `if opts.NoActivityTimeout != 0 … else 4 * time.Minute`).
pub const DEFAULT_NO_ACTIVITY: Duration = Duration::from_secs(4 * 60);

/// What kubedog does when a resource it tracks fails (`werf.io/fail-mode`; kubedog
/// `pkg/trackers/rollout/multitrack/multitrack.go`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FailMode {
    /// The default: the resource fails once its failures exceed those allowed, and the
    /// deploy with it.
    FailWholeDeployProcessImmediately,
    /// Accepted by nelm and, in the readiness tracker nelm drives (kubedog
    /// `pkg/trackers/dyntracker/statestore/readiness_task_state.go`), the same as
    /// `FailWholeDeployProcessImmediately` (kubedog's constant is `LegacyHopeUntilEndOfDeployProcess`,
    /// "an equivalent to `FailWholeDeployProcessImmediately` at the moment").
    HopeUntilEndOfDeployProcess,
    /// Failures are never counted: the resource is waited for until it is ready or the wait
    /// times out.
    IgnoreAndContinueDeployProcess,
}

impl FailMode {
    pub const ALL: [FailMode; 3] = [
        FailMode::FailWholeDeployProcessImmediately,
        FailMode::HopeUntilEndOfDeployProcess,
        FailMode::IgnoreAndContinueDeployProcess,
    ];

    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            FailMode::FailWholeDeployProcessImmediately => "FailWholeDeployProcessImmediately",
            FailMode::HopeUntilEndOfDeployProcess => "HopeUntilEndOfDeployProcess",
            FailMode::IgnoreAndContinueDeployProcess => "IgnoreAndContinueDeployProcess",
        }
    }

    /// Whether failures are counted at all.
    #[must_use]
    pub fn counts_failures(self) -> bool {
        self != FailMode::IgnoreAndContinueDeployProcess
    }
}

/// How kubedog tracks one resource for nelm: when it counts as failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tracking {
    pub fail_mode: FailMode,
    /// Failures tolerated: the resource fails at the next one (nelm's `failuresAllowed`:
    /// per replica, times `spec.replicas` when the object has it; 0 for a Job and for a Pod
    /// template with `restartPolicy: Never`; without the annotation 1 per replica for a
    /// `Deployment`, `DaemonSet`, `StatefulSet` or flagger `Canary` and 0 for anything else).
    pub failures_allowed: u64,
    /// After this long without a change to the object, one failure is counted (and again
    /// after as long once more): only for the kinds kubedog tracks generically (anything but
    /// a `Deployment`, `DaemonSet`, `StatefulSet`, `Job`, `Pod` or flagger `Canary`); `None` otherwise.
    pub no_activity: Option<Duration>,
}

impl Default for Tracking {
    fn default() -> Self {
        Tracking {
            fail_mode: FailMode::FailWholeDeployProcessImmediately,
            failures_allowed: 0,
            no_activity: Some(DEFAULT_NO_ACTIVITY),
        }
    }
}

impl Werf {
    /// Reads the tracking annotations as nelm validates (`validateTrack`) and reads them
    /// (`failMode`, `failuresAllowed`, `noActivityTimeout`): values trimmed; a value nelm
    /// refuses is kept in `rejected` (nelm refuses the release) and the default used.
    /// `group` and `kind` are the object's; `object` is the whole object (for `spec.replicas`
    /// and a Pod template's `restartPolicy`).
    pub fn read_tracking(
        &mut self,
        annotations: &[Annotation],
        group: &str,
        kind: &str,
        object: &Node,
    ) {
        let find = |key: &str| {
            annotations
                .iter()
                .rev()
                .find(|a| a.key == key)
                .map(|a| (a.value.as_str().unwrap_or_default().trim(), a.value_loc))
        };
        let mut tracking = Tracking::default();
        let mut reject = |key: &str, value: &str, reason: &str, loc: Loc| {
            self.rejected.push(Rejected {
                key: key.to_owned(),
                value: value.to_owned(),
                reason: reason.to_owned(),
                loc,
            });
        };
        let mut written = Vec::new();
        if let Some((raw, loc)) = find(FAIL_MODE) {
            match FailMode::ALL.iter().find(|m| m.name() == raw) {
                Some(&mode) => {
                    tracking.fail_mode = mode;
                    written.push((FAIL_MODE.to_owned(), raw.to_owned(), loc));
                }
                None if raw.is_empty() => reject(FAIL_MODE, raw, "empty", loc),
                None => reject(
                    FAIL_MODE,
                    raw,
                    "not a fail mode werf knows (FailWholeDeployProcessImmediately, HopeUntilEndOfDeployProcess or IgnoreAndContinueDeployProcess)",
                    loc,
                ),
            }
        }
        let mut per_replica = None;
        if let Some((raw, loc)) = find(FAILURES_ALLOWED) {
            match crate::model::argo::atoi(raw) {
                _ if raw.is_empty() => reject(FAILURES_ALLOWED, raw, "empty", loc),
                None => reject(FAILURES_ALLOWED, raw, "not an integer", loc),
                Some(n) if n < 0 => reject(FAILURES_ALLOWED, raw, "negative", loc),
                Some(n) => {
                    per_replica = Some(n.unsigned_abs());
                    written.push((FAILURES_ALLOWED.to_owned(), raw.to_owned(), loc));
                }
            }
        }
        let mut no_activity = None;
        if let Some((raw, loc)) = find(NO_ACTIVITY_TIMEOUT) {
            match go_duration(raw) {
                Ok(d) => {
                    no_activity = Some(d);
                    written.push((NO_ACTIVITY_TIMEOUT.to_owned(), raw.to_owned(), loc));
                }
                Err(why) => reject(NO_ACTIVITY_TIMEOUT, raw, why, loc),
            }
        }
        tracking.failures_allowed = failures_allowed(group, kind, object, per_replica);
        let generic = !matches!(
            (group, kind),
            ("apps" | "extensions", "Deployment" | "DaemonSet")
                | ("apps", "StatefulSet")
                | ("batch", "Job")
                | ("", "Pod")
                | ("flagger.app", "Canary")
        );
        tracking.no_activity = generic.then(|| {
            no_activity
                .filter(|d| !d.is_zero())
                .unwrap_or(DEFAULT_NO_ACTIVITY)
        });
        self.rejected.sort_by_key(|r| r.loc.span.start);
        self.tracking = tracking;
        self.tracking_written = written;
    }
}

/// nelm's `failuresAllowed`: 0 for a Job and for a Pod template with `restartPolicy: Never`;
/// else the annotation's value (`per_replica`) or, without it, 1 for a `Deployment`, `DaemonSet`,
/// `StatefulSet` or flagger `Canary` and 0 for anything else (returned at once); times
/// `spec.replicas` when the object has an integer there.
fn failures_allowed(group: &str, kind: &str, object: &Node, per_replica: Option<u64>) -> u64 {
    if (group, kind) == ("batch", "Job") {
        return 0;
    }
    let restart_policy = object.path(&["spec", "template", "spec", "restartPolicy"]);
    if restart_policy.and_then(Node::as_str) == Some("Never") {
        return 0;
    }
    let per_replica = match per_replica {
        Some(n) => n,
        None => match (group, kind) {
            ("apps" | "extensions", "Deployment" | "DaemonSet")
            | ("flagger.app", "Canary")
            | ("apps", "StatefulSet") => 1,
            _ => return 0,
        },
    };
    let replicas = match object
        .path(&["spec", "replicas"])
        .and_then(Node::scalar_kind)
    {
        Some(crate::parse::ScalarKind::Int(r)) => Some(r),
        _ => None,
    };
    match replicas {
        // nelm multiplies Go ints; a negative count allows nothing.
        Some(r) => per_replica.saturating_mul(u64::try_from(r).unwrap_or(0)),
        None => per_replica,
    }
}

/// Go's `time.ParseDuration` as nelm's `validateTrack` uses it: a unit is required (except
/// for `0`), and a negative duration is refused.
fn go_duration(raw: &str) -> Result<Duration, &'static str> {
    if raw.is_empty() {
        return Err("empty");
    }
    let (negative, rest) = match raw.as_bytes()[0] {
        b'-' => (true, &raw[1..]),
        b'+' => (false, &raw[1..]),
        _ => (false, raw),
    };
    let not_a_duration =
        "not a Go duration (a number and a unit: h, m, s, ms, us or ns, e.g. 30s, 5m or 1m30s)";
    if rest == "0" {
        return Ok(Duration::ZERO);
    }
    if rest.is_empty()
        || rest.starts_with(char::is_whitespace)
        || rest.starts_with(['+', '-'])
        || rest.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(not_a_duration);
    }
    let d = crate::duration::parse_duration(rest).map_err(|_| not_a_duration)?;
    if negative && !d.is_zero() {
        return Err("negative");
    }
    Ok(d)
}
