//! The deployer's readiness judge until the readiness engine (`crate::readiness`: kstatus,
//! `JSONPath`, HIP-0025 expressions) is merged into this branch.
//!
//! NOTE: deliberately minimal — generic kstatus signals only (deletion, observedGeneration,
//! `Stalled`/`Failed`/`Ready`/`Available`/`Complete`/`Established` conditions, Pod phase, PVC
//! phase). It is the one place to swap for the shared engine: [`super::wait::Judge`] is the
//! seam, and nothing else in `apply` judges readiness.

use serde_json::Value;

use super::wait::{Goal, Judge, Target, Verdict};

/// Generic readiness from status conventions.
pub struct Interim;

fn condition<'v>(obj: &'v Value, kind: &str) -> Option<&'v Value> {
    obj["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
}

fn is_true(obj: &Value, kind: &str) -> bool {
    condition(obj, kind).is_some_and(|c| c["status"] == "True")
}

impl Judge for Interim {
    #[expect(
        clippy::too_many_lines,
        reason = "one arm per kind reads best as one table"
    )]
    fn judge(&self, target: &Target, obj: &Value) -> Verdict {
        if !obj["metadata"]["deletionTimestamp"].is_null() {
            return Verdict::InProgress("terminating".to_owned());
        }
        if let (Some(g), Some(o)) = (
            obj["metadata"]["generation"].as_i64(),
            obj["status"]["observedGeneration"].as_i64(),
        ) {
            if g != o {
                return Verdict::InProgress(format!(
                    "generation {g} not yet observed (observedGeneration {o})"
                ));
            }
        }
        if is_true(obj, "Stalled") {
            return Verdict::Failed("Stalled".to_owned());
        }
        let complete = target.goal == Goal::Complete;
        match target.kind.kind.as_str() {
            "Job" => {
                if is_true(obj, "Failed") {
                    let reason = condition(obj, "Failed")
                        .and_then(|c| c["reason"].as_str())
                        .unwrap_or("Failed");
                    return Verdict::Failed(format!("job failed: {reason}"));
                }
                if is_true(obj, "Complete") || (!complete && obj["status"]["startTime"].is_string())
                {
                    return Verdict::Ready;
                }
                Verdict::InProgress(
                    if complete {
                        "job not complete"
                    } else {
                        "job not started"
                    }
                    .to_owned(),
                )
            }
            "Pod" => match obj["status"]["phase"].as_str() {
                Some("Succeeded") => Verdict::Ready,
                Some("Failed") => Verdict::Failed("pod failed".to_owned()),
                Some("Running") if !complete && is_true(obj, "Ready") => Verdict::Ready,
                phase => Verdict::InProgress(format!("pod phase {}", phase.unwrap_or("unknown"))),
            },
            "Deployment" => {
                if condition(obj, "Progressing")
                    .is_some_and(|c| c["reason"] == "ProgressDeadlineExceeded")
                {
                    return Verdict::Failed("progress deadline exceeded".to_owned());
                }
                let want = obj["spec"]["replicas"].as_i64().unwrap_or(1);
                let available = obj["status"]["availableReplicas"].as_i64().unwrap_or(0);
                if obj["status"].is_object() && is_true(obj, "Available") && available >= want {
                    Verdict::Ready
                } else {
                    Verdict::InProgress(format!("available replicas: {available}/{want}"))
                }
            }
            "StatefulSet" | "ReplicaSet" => {
                let want = obj["spec"]["replicas"].as_i64().unwrap_or(1);
                let ready = obj["status"]["readyReplicas"].as_i64().unwrap_or(0);
                if obj["status"].is_object() && ready >= want {
                    Verdict::Ready
                } else {
                    Verdict::InProgress(format!("ready replicas: {ready}/{want}"))
                }
            }
            "DaemonSet" => {
                let want = obj["status"]["desiredNumberScheduled"].as_i64();
                let ready = obj["status"]["numberAvailable"].as_i64().unwrap_or(0);
                match want {
                    Some(w) if ready >= w => Verdict::Ready,
                    _ => Verdict::InProgress(format!(
                        "available pods: {ready}/{}",
                        want.unwrap_or(0)
                    )),
                }
            }
            "PersistentVolumeClaim" => match obj["status"]["phase"].as_str() {
                Some("Bound") => Verdict::Ready,
                p => Verdict::InProgress(format!("phase {}", p.unwrap_or("Pending"))),
            },
            "CustomResourceDefinition" => {
                if is_true(obj, "Established") {
                    Verdict::Ready
                } else {
                    Verdict::InProgress("not Established".to_owned())
                }
            }
            _ => match condition(obj, "Ready") {
                Some(c) if c["status"] != "True" => Verdict::InProgress(format!(
                    "Ready condition {}{}",
                    c["status"].as_str().unwrap_or("Unknown"),
                    c["reason"]
                        .as_str()
                        .map(|r| format!(" ({r})"))
                        .unwrap_or_default()
                )),
                _ => Verdict::Ready,
            },
        }
    }
}
