//! kstatus, the default readiness judgement (SPEC §3): the rules of cli-utils
//! `pkg/kstatus/status` that Helm's `--wait` applies, per kind, with a reason for every
//! outcome.
//!
//! Order matters and follows kstatus: a deletion timestamp, then an unobserved generation, then
//! the `Reconciling`/`Stalled` conditions, then the rules of the object's kind (keyed by API
//! group and kind, so a custom `Deployment` in another group is not judged as apps'), then a
//! `Ready` condition, else ready. Traps kept on purpose because Helm has them: a Job that has
//! started counts as ready (unless `wait_for_jobs`), a Failed Pod counts as ready, a custom
//! resource without conditions counts as ready at once.
//!
//! One rule reads the clock, as kstatus does: a Pending Pod that cannot be scheduled fails
//! once 15 s have passed since its creation. The time is an input (`now`), never read here.

use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::Status;
use super::clock::parse_rfc3339;

/// Options mirroring Helm's wait flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KstatusOptions {
    /// Helm's `--wait-for-jobs`: a Job counts only once it is Complete.
    pub wait_for_jobs: bool,
    /// The object is a hook: judged by Helm's hook readers, which wait for a Job to complete
    /// and a Pod to succeed (a failed hook Pod fails).
    pub hook: bool,
}

/// kstatus' `ScheduleWindow`: how long a Pod may stay unschedulable before it counts as failed.
pub const SCHEDULE_WINDOW: Duration = Duration::from_secs(15);

/// A kstatus outcome and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub status: Status,
    pub reason: String,
}

fn verdict(status: Status, reason: impl Into<String>) -> Verdict {
    Verdict {
        status,
        reason: reason.into(),
    }
}

fn path<'a>(object: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().try_fold(object, |v, k| v.get(k))
}

/// kstatus' `GetIntField`: an integer at the path, else the default.
fn int(object: &Value, keys: &[&str], default: i64) -> i64 {
    path(object, keys)
        .and_then(Value::as_i64)
        .unwrap_or(default)
}

fn string<'a>(object: &'a Value, keys: &[&str]) -> Option<&'a str> {
    path(object, keys).and_then(Value::as_str)
}

/// One `status.conditions[]` entry.
struct Cond<'a> {
    kind: &'a str,
    status: &'a str,
    reason: &'a str,
    message: &'a str,
}

fn conditions(object: &Value) -> Vec<Cond<'_>> {
    let Some(items) = path(object, &["status", "conditions"]).and_then(Value::as_array) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|c| {
            Some(Cond {
                kind: c.get("type")?.as_str()?,
                status: c.get("status").and_then(Value::as_str).unwrap_or(""),
                reason: c.get("reason").and_then(Value::as_str).unwrap_or(""),
                message: c.get("message").and_then(Value::as_str).unwrap_or(""),
            })
        })
        .collect()
}

/// `reason: message` of a condition, or a fallback when it has neither.
fn explain(c: &Cond<'_>, fallback: &str) -> String {
    match (c.reason.is_empty(), c.message.is_empty()) {
        (true, true) => fallback.to_owned(),
        (false, true) => c.reason.to_owned(),
        (true, false) => c.message.to_owned(),
        (false, false) => format!("{}: {}", c.reason, c.message),
    }
}

/// The API group of an object (`apps` for `apps/v1`, empty for `v1`).
fn group(object: &Value) -> &str {
    let api_version = string(object, &["apiVersion"]).unwrap_or("");
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

/// Judges an object by kstatus at the instant `now`.
#[must_use]
pub fn compute(object: &Value, options: KstatusOptions, now: SystemTime) -> Verdict {
    let kind = string(object, &["kind"]).unwrap_or("");
    let who = if kind.is_empty() { "object" } else { kind };
    if let Some(ts) = string(object, &["metadata", "deletionTimestamp"]).filter(|t| !t.is_empty()) {
        return verdict(
            Status::InProgress,
            format!("{who}: terminating (scheduled for deletion at {ts})"),
        );
    }
    if let (Some(generation), Some(observed)) = (
        path(object, &["metadata", "generation"]).and_then(Value::as_i64),
        path(object, &["status", "observedGeneration"]).and_then(Value::as_i64),
    ) {
        if generation != observed {
            return verdict(
                Status::InProgress,
                format!(
                    "{who}: generation {generation} not yet observed by its controller (observedGeneration {observed})"
                ),
            );
        }
    }
    for c in conditions(object) {
        if c.kind == "Reconciling" && c.status == "True" {
            let why = explain(&c, "no reason given");
            return verdict(Status::InProgress, format!("{who}: Reconciling ({why})"));
        }
        if c.kind == "Stalled" && c.status == "True" {
            let why = explain(&c, "no reason given");
            return verdict(Status::Failed, format!("{who}: Stalled ({why})"));
        }
    }
    let (status, reason) = match (group(object), kind) {
        ("apps" | "extensions", "Deployment") => replicated(object, &DEPLOYMENT),
        ("apps", "StatefulSet") => replicated(object, &STATEFULSET),
        ("apps" | "extensions", "DaemonSet") => replicated(object, &DAEMONSET),
        ("apps" | "extensions", "ReplicaSet") => replicated(object, &REPLICASET),
        ("", "Pod") if options.hook => hook_pod(object),
        ("", "Pod") => pod(object, now),
        ("batch", "Job") if options.wait_for_jobs || options.hook => job_complete(object),
        ("batch", "Job") => job(object),
        ("", "PersistentVolumeClaim") => pvc(object),
        ("", "Service") => service(object),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => crd(object),
        ("batch", "CronJob") | ("", "ConfigMap" | "Secret") => {
            (Status::Ready, "always ready once created".to_owned())
        }
        ("policy", "PodDisruptionBudget") => (
            Status::Ready,
            "ready once its controller has observed it".to_owned(),
        ),
        _ => generic(object),
    };
    verdict(status, format!("{who}: {reason}"))
}

type Outcome = (Status, String);

fn in_progress(reason: impl Into<String>) -> Outcome {
    (Status::InProgress, reason.into())
}

/// A count from an object's spec or status, read as kstatus' `GetIntField` does: an integer
/// at the path, else the default.
#[derive(Clone, Copy)]
struct Count(&'static [&'static str], i64);

impl Count {
    fn read(self, o: &Value) -> i64 {
        int(o, self.0, self.1)
    }
}

const SPEC_REPLICAS: Count = Count(&["spec", "replicas"], 1);
const REPLICAS: Count = Count(&["status", "replicas"], 0);
const UPDATED: Count = Count(&["status", "updatedReplicas"], 0);
const READY: Count = Count(&["status", "readyReplicas"], 0);
const AVAILABLE: Count = Count(&["status", "availableReplicas"], 0);
const CURRENT: Count = Count(&["status", "currentReplicas"], 0);
const LABELLED: Count = Count(&["status", "fullyLabeledReplicas"], 0);
const DESIRED: Count = Count(&["status", "desiredNumberScheduled"], -1);
const SCHEDULED: Count = Count(&["status", "currentNumberScheduled"], 0);
const UPDATED_SCHEDULED: Count = Count(&["status", "updatedNumberScheduled"], 0);
const NUMBER_AVAILABLE: Count = Count(&["status", "numberAvailable"], 0);
const NUMBER_READY: Count = Count(&["status", "numberReady"], 0);

/// What a replica comparison says while it holds.
#[derive(Clone, Copy)]
enum Says {
    /// `"{lesser} of {greater} {noun}"`: not all there yet.
    Of(&'static str),
    /// `"{greater - lesser} {noun}"`: too many still there.
    Surplus(&'static str),
}

impl Says {
    fn text(self, greater: i64, lesser: i64) -> String {
        match self {
            Says::Of(noun) => format!("{lesser} of {greater} {noun}"),
            Says::Surplus(noun) => format!("{} {noun}", greater - lesser),
        }
    }
}

/// One kstatus replica comparison: while `greater > lesser`, the object is in progress.
#[derive(Clone, Copy)]
struct Gate {
    greater: Count,
    lesser: Count,
    says: Says,
}

const fn gate(greater: Count, lesser: Count, says: Says) -> Gate {
    Gate {
        greater,
        lesser,
        says,
    }
}

/// The first comparison that holds, as an in-progress outcome.
fn first_unmet(o: &Value, gates: &[Gate]) -> Option<Outcome> {
    gates.iter().find_map(|g| {
        let (greater, lesser) = (g.greater.read(o), g.lesser.read(o));
        (greater > lesser).then(|| in_progress(g.says.text(greater, lesser)))
    })
}

/// kstatus' rules for one replicated workload kind: what it checks before the counts, the
/// counts compared in kstatus' order, what it checks after them, and how a ready object is
/// described (`"{have} of {want} {noun}"`).
type Check = fn(&Value) -> Option<Outcome>;

struct Workload {
    before: Check,
    gates: &'static [Gate],
    after: Option<Check>,
    ready: (Count, Count, &'static str),
}

/// Judges a replicated workload by its table row.
fn replicated(o: &Value, w: &Workload) -> Outcome {
    if let Some(outcome) = (w.before)(o).or_else(|| first_unmet(o, w.gates)) {
        return outcome;
    }
    if let Some(outcome) = w.after.and_then(|after| after(o)) {
        return outcome;
    }
    let (have, want, noun) = w.ready;
    (
        Status::Ready,
        format!("{} of {} {noun}", have.read(o), want.read(o)),
    )
}

const DEPLOYMENT: Workload = Workload {
    before: deployment_deadline,
    gates: &[
        gate(SPEC_REPLICAS, REPLICAS, Says::Of("replicas created")),
        gate(SPEC_REPLICAS, UPDATED, Says::Of("replicas updated")),
        gate(
            REPLICAS,
            SPEC_REPLICAS,
            Says::Surplus("old replicas pending termination"),
        ),
        gate(UPDATED, AVAILABLE, Says::Of("replicas available")),
        gate(SPEC_REPLICAS, READY, Says::Of("replicas ready")),
    ],
    after: Some(deployment_conditions),
    ready: (REPLICAS, SPEC_REPLICAS, "replicas available"),
};

const STATEFULSET: Workload = Workload {
    before: statefulset_on_delete,
    gates: &[
        gate(SPEC_REPLICAS, REPLICAS, Says::Of("replicas created")),
        gate(SPEC_REPLICAS, READY, Says::Of("replicas ready")),
        gate(
            REPLICAS,
            SPEC_REPLICAS,
            Says::Surplus("old replicas pending termination"),
        ),
    ],
    after: Some(statefulset_rollout),
    ready: (READY, SPEC_REPLICAS, "replicas ready"),
};

const DAEMONSET: Workload = Workload {
    before: daemonset_unobserved,
    gates: &[
        gate(DESIRED, SCHEDULED, Says::Of("pods scheduled")),
        gate(DESIRED, UPDATED_SCHEDULED, Says::Of("pods updated")),
        gate(DESIRED, NUMBER_AVAILABLE, Says::Of("pods available")),
        gate(DESIRED, NUMBER_READY, Says::Of("pods ready")),
    ],
    after: None,
    ready: (NUMBER_READY, DESIRED, "pods ready"),
};

const REPLICASET: Workload = Workload {
    before: replicaset_failure,
    gates: &[
        gate(SPEC_REPLICAS, LABELLED, Says::Of("replicas fully labelled")),
        gate(SPEC_REPLICAS, AVAILABLE, Says::Of("replicas available")),
        gate(SPEC_REPLICAS, READY, Says::Of("replicas ready")),
        gate(
            REPLICAS,
            SPEC_REPLICAS,
            Says::Surplus("extra replicas pending termination"),
        ),
    ],
    after: None,
    ready: (AVAILABLE, SPEC_REPLICAS, "replicas available"),
};

fn deployment_deadline(o: &Value) -> Option<Outcome> {
    let c = conditions(o)
        .into_iter()
        .find(|c| c.kind == "Progressing" && c.reason == "ProgressDeadlineExceeded")?;
    let why = explain(&c, "ProgressDeadlineExceeded");
    Some((
        Status::Failed,
        format!("progress deadline exceeded ({why})"),
    ))
}

fn deployment_conditions(o: &Value) -> Option<Outcome> {
    let mut progressing = path(o, &["spec", "progressDeadlineSeconds"])
        .and_then(Value::as_i64)
        .is_none_or(|d| d == i64::from(i32::MAX));
    let mut available = false;
    for c in conditions(o) {
        match c.kind {
            "Progressing" if c.status == "True" && c.reason == "NewReplicaSetAvailable" => {
                progressing = true;
            }
            "Available" if c.status == "True" => available = true,
            _ => {}
        }
    }
    if !progressing {
        return Some(in_progress(
            "new ReplicaSet not yet available (Progressing is not NewReplicaSetAvailable)",
        ));
    }
    (!available).then(|| in_progress("Available condition is not True"))
}

fn statefulset_on_delete(o: &Value) -> Option<Outcome> {
    (string(o, &["spec", "updateStrategy", "type"]) == Some("OnDelete")).then(|| {
        (
            Status::Ready,
            "uses the OnDelete update strategy (counted ready at once)".to_owned(),
        )
    })
}

fn statefulset_rollout(o: &Value) -> Option<Outcome> {
    let spec = SPEC_REPLICAS.read(o);
    let partition = int(
        o,
        &["spec", "updateStrategy", "rollingUpdate", "partition"],
        -1,
    );
    if partition != -1 {
        let updated = UPDATED.read(o);
        let want = spec - partition;
        if updated < want {
            return Some(in_progress(format!(
                "{updated} of {want} replicas updated (partition {partition})"
            )));
        }
        return Some((
            Status::Ready,
            format!("partitioned rollout complete ({updated} updated)"),
        ));
    }
    if let Some(outcome) = first_unmet(o, STATEFULSET_REVISION) {
        return Some(outcome);
    }
    let current_rev = string(o, &["status", "currentRevision"]).unwrap_or("");
    let update_rev = string(o, &["status", "updateRevision"]).unwrap_or("");
    (current_rev != update_rev).then(|| {
        in_progress(format!(
            "waiting for revision {update_rev} to replace {current_rev}"
        ))
    })
}

/// After a rollout that is not partitioned: every replica at the current revision.
const STATEFULSET_REVISION: &[Gate] = &[gate(
    SPEC_REPLICAS,
    CURRENT,
    Says::Of("replicas at the current revision"),
)];

fn daemonset_unobserved(o: &Value) -> Option<Outcome> {
    if path(o, &["metadata", "generation"])
        .and_then(Value::as_i64)
        .is_none()
    {
        return Some(in_progress("metadata.generation not set yet"));
    }
    if path(o, &["status", "observedGeneration"])
        .and_then(Value::as_i64)
        .is_none()
    {
        return Some(in_progress("status.observedGeneration not set yet"));
    }
    (DESIRED.read(o) == -1).then(|| in_progress("status.desiredNumberScheduled not set yet"))
}

fn replicaset_failure(o: &Value) -> Option<Outcome> {
    let c = conditions(o)
        .into_iter()
        .find(|c| c.kind == "ReplicaFailure" && c.status == "True")?;
    let why = explain(&c, "check its pods");
    Some(in_progress(format!("ReplicaFailure ({why})")))
}

fn crash_looping(o: &Value) -> Vec<&str> {
    path(o, &["status", "containerStatuses"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|cs| {
            path(cs, &["state", "waiting", "reason"]).and_then(Value::as_str)
                == Some("CrashLoopBackOff")
        })
        .filter_map(|cs| cs.get("name").and_then(Value::as_str))
        .collect()
}

fn pod(o: &Value, now: SystemTime) -> Outcome {
    let conds = conditions(o);
    match string(o, &["status", "phase"]).unwrap_or("") {
        "Succeeded" => (Status::Ready, "phase Succeeded".to_owned()),
        "Failed" => (
            Status::Ready,
            "phase Failed: kstatus counts a finished Pod as ready even when it failed".to_owned(),
        ),
        "Running" => {
            if conds
                .iter()
                .any(|c| c.kind == "Ready" && c.status == "True")
            {
                return (Status::Ready, "phase Running and Ready".to_owned());
            }
            let looping = crash_looping(o);
            if !looping.is_empty() {
                return (
                    Status::Failed,
                    format!("containers in CrashLoopBackOff: {}", looping.join(", ")),
                );
            }
            in_progress("phase Running but not Ready")
        }
        "Pending" => {
            let unschedulable = conds.iter().find(|c| {
                c.kind == "PodScheduled" && c.status == "False" && c.reason == "Unschedulable"
            });
            let Some(c) = unschedulable else {
                return in_progress("phase Pending");
            };
            let why = explain(c, "Unschedulable");
            // kstatus: `now - 15s` before the creation time is still in progress; a missing
            // or unreadable timestamp is Go's zero time, long ago.
            let created = string(o, &["metadata", "creationTimestamp"]).and_then(parse_rfc3339);
            let window_open = created.is_some_and(|created| {
                now.checked_sub(SCHEDULE_WINDOW)
                    .is_some_and(|start| start < created)
            });
            let window = SCHEDULE_WINDOW.as_secs();
            if window_open {
                in_progress(format!(
                    "Pod has not been scheduled ({why}; it fails {window}s after its creation)"
                ))
            } else {
                (
                    Status::Failed,
                    format!(
                        "Pod could not be scheduled ({why}; still Pending {window}s after its creation)"
                    ),
                )
            }
        }
        "" => in_progress("no phase reported yet"),
        other => in_progress(format!("unknown phase {other}")),
    }
}

/// Helm's hook Pod reader: a hook Pod must run to completion.
fn hook_pod(o: &Value) -> Outcome {
    match string(o, &["status", "phase"]).unwrap_or("") {
        "Succeeded" => (Status::Ready, "hook Pod succeeded".to_owned()),
        "Failed" => (Status::Failed, "hook Pod failed".to_owned()),
        "" => in_progress("hook Pod has no phase yet (it must run to completion)"),
        phase => in_progress(format!(
            "hook Pod in phase {phase} (it must run to completion)"
        )),
    }
}

fn job(o: &Value) -> Outcome {
    let parallelism = int(o, &["spec", "parallelism"], 1);
    let completions = int(o, &["spec", "completions"], parallelism);
    let succeeded = int(o, &["status", "succeeded"], 0);
    let active = int(o, &["status", "active"], 0);
    let failed = int(o, &["status", "failed"], 0);
    let suspended = path(o, &["spec", "suspend"]).and_then(Value::as_bool) == Some(true);
    for c in conditions(o) {
        match (c.kind, c.status) {
            ("Complete", "True") => {
                return (
                    Status::Ready,
                    format!("Complete, {succeeded} of {completions} succeeded"),
                );
            }
            ("Failed", "True") => {
                return (
                    Status::Failed,
                    format!(
                        "Failed after {failed} failed pods ({})",
                        explain(&c, "no reason given")
                    ),
                );
            }
            ("Suspended", "True") if suspended => {
                return (Status::Ready, "suspended (counted ready)".to_owned());
            }
            _ => {}
        }
    }
    if string(o, &["status", "startTime"]).unwrap_or("").is_empty() {
        return in_progress("not started yet");
    }
    (
        Status::Ready,
        format!(
            "started, counted ready before it completes ({succeeded} succeeded, {active} active, {failed} failed; use --wait-for-jobs or readiness annotations to wait for completion)"
        ),
    )
}

/// Helm's `--wait-for-jobs` reader: only Complete counts.
fn job_complete(o: &Value) -> Outcome {
    let parallelism = int(o, &["spec", "parallelism"], 1);
    let completions = int(o, &["spec", "completions"], parallelism);
    let succeeded = int(o, &["status", "succeeded"], 0);
    let failed = int(o, &["status", "failed"], 0);
    for c in conditions(o) {
        match (c.kind, c.status) {
            ("Complete", "True") => {
                return (
                    Status::Ready,
                    format!("Complete, {succeeded} of {completions} succeeded"),
                );
            }
            ("Failed", "True") => {
                return (
                    Status::Failed,
                    format!(
                        "Failed after {failed} failed pods ({})",
                        explain(&c, "no reason given")
                    ),
                );
            }
            _ => {}
        }
    }
    in_progress(format!(
        "not complete yet, {succeeded} of {completions} succeeded"
    ))
}

fn pvc(o: &Value) -> Outcome {
    match string(o, &["status", "phase"]) {
        Some("Bound") => (Status::Ready, "Bound".to_owned()),
        Some(phase) => in_progress(format!("not Bound yet (phase {phase})")),
        None => in_progress("not Bound yet (no phase reported)"),
    }
}

fn service(o: &Value) -> Outcome {
    let kind = string(o, &["spec", "type"]).unwrap_or("ClusterIP");
    if kind == "LoadBalancer" && string(o, &["spec", "clusterIP"]).unwrap_or("").is_empty() {
        return in_progress("LoadBalancer without a clusterIP yet");
    }
    (Status::Ready, format!("{kind} service ready"))
}

fn crd(o: &Value) -> Outcome {
    for c in conditions(o) {
        if c.kind == "NamesAccepted" && c.status == "False" {
            return (
                Status::Failed,
                format!("names not accepted ({})", explain(&c, "no reason given")),
            );
        }
        if c.kind == "Established" {
            if c.status == "False" && c.reason != "Installing" {
                return (
                    Status::Failed,
                    format!("not established ({})", explain(&c, "no reason given")),
                );
            }
            if c.status == "True" {
                return (Status::Ready, "Established".to_owned());
            }
        }
    }
    in_progress("not Established yet")
}

fn generic(o: &Value) -> Outcome {
    for c in conditions(o) {
        if c.kind != "Ready" {
            continue;
        }
        match c.status {
            "True" => return (Status::Ready, "Ready condition is True".to_owned()),
            "False" | "Unknown" => {
                return in_progress(format!(
                    "Ready condition is {} ({})",
                    c.status,
                    explain(&c, "no reason given")
                ));
            }
            _ => {}
        }
    }
    (
        Status::Ready,
        "no Ready condition and no rule for this kind: counted ready as soon as it exists"
            .to_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn groups_come_from_api_version() {
        assert_eq!(group(&json!({"apiVersion": "apps/v1"})), "apps");
        assert_eq!(group(&json!({"apiVersion": "v1"})), "");
        assert_eq!(group(&json!({})), "");
    }

    #[test]
    fn a_custom_deployment_is_not_apps() {
        let cr = json!({"apiVersion": "example.com/v1", "kind": "Deployment", "status": {}});
        let v = compute(&cr, KstatusOptions::default(), SystemTime::UNIX_EPOCH);
        assert_eq!(v.status, Status::Ready);
        assert!(v.reason.contains("no Ready condition"), "{}", v.reason);
    }
}
