//! Argo CD's built-in health checks (gitops-engine `pkg/health`, as vendored in argo-cd at
//! commit `37ee0097cf851bc2dd7665fc081bbce61a7e836e`, `gitops-engine/pkg/health`), and what a
//! sync makes of them (`pkg/sync/sync_context.go`), for `apply --dialect argo`.
//!
//! [`health`] is `GetResourceHealth` without an installation's overrides: a kind with a Go
//! check (`Deployment`, `StatefulSet`, `DaemonSet`, `ReplicaSet`, `Service`, `Ingress`,
//! `PersistentVolumeClaim`, `Pod`, `Job`, `HorizontalPodAutoscaler`, `APIService`, Argo's
//! `Workflow`) gets its [`Health`]; any other kind has **no** health
//! (`None`), which a sync counts as done at once. [`ArgoHealth`] turns a health into a wait
//! verdict as the sync loop does: for a resource of a wave, Healthy is done, Degraded fails the
//! sync, anything else (Progressing, Suspended, Unknown, Missing) keeps the wave running; for
//! a hook (`getOperationPhase`), Healthy is done, Degraded **and Unknown** fail it, Progressing
//! and Suspended keep it running. Kinds argo-cd checks with a built-in Lua script are listed in
//! [`argo_lua`](super::argo_lua): chartseq runs the scripts the user gives it
//! ([`super::argo_script`], [`HealthOverride`], asked first as argo-cd asks its overrides);
//! for such a kind without one the planner stands kstatus in ([`has_lua_check`]).

use std::time::SystemTime;

use serde_json::Value;

use super::{Condition, Engine, Judgement, Status};

/// gitops-engine's `HealthStatusCode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Health {
    Healthy,
    Suspended,
    Progressing,
    Missing,
    Degraded,
    Unknown,
}

impl Health {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Health::Healthy => "Healthy",
            Health::Suspended => "Suspended",
            Health::Progressing => "Progressing",
            Health::Missing => "Missing",
            Health::Degraded => "Degraded",
            Health::Unknown => "Unknown",
        }
    }
}

/// A health and its message (gitops-engine's `HealthStatus`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HealthStatus {
    pub status: Health,
    pub message: String,
}

/// The finalizer Argo CD puts on hooks it is still watching: a hook being deleted while it
/// holds it is still judged by its state.
const HOOK_FINALIZER: &str = "argocd.argoproj.io/hook-finalizer";

/// `argocd.argoproj.io/ignore-restart-policy: "true"`: a Pod that is no hook is judged as if
/// it restarted always.
const IGNORE_RESTART_POLICY: &str = "argocd.argoproj.io/ignore-restart-policy";

/// Whether gitops-engine has a Go health check for the group and kind
/// (`GetHealthCheckFunc`); the version is checked by the check itself.
#[must_use]
pub fn has_builtin_check(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        (
            "apps",
            "Deployment" | "StatefulSet" | "ReplicaSet" | "DaemonSet"
        ) | ("extensions" | "networking.k8s.io", "Ingress")
            | ("argoproj.io", "Workflow")
            | ("apiregistration.k8s.io", "APIService")
            | ("", "Service" | "PersistentVolumeClaim" | "Pod")
            | ("batch", "Job")
            | ("autoscaling", "HorizontalPodAutoscaler")
    )
}

/// Whether argo-cd ships a built-in Lua health check for the group and kind
/// ([`super::argo_lua::LUA_HEALTH_CHECKS`]): the exact `group/kind` directory, else a
/// wildcard one (`_` matching any run of characters but `/`). A Lua check takes precedence
/// over a Go one; no listed kind has both.
#[must_use]
pub fn has_lua_check(group: &str, kind: &str) -> bool {
    let key = if group.is_empty() {
        kind.to_owned()
    } else {
        format!("{group}/{kind}")
    };
    super::argo_lua::LUA_HEALTH_CHECKS
        .iter()
        .any(|pattern| *pattern == key || (pattern.contains('_') && wildcard(pattern, &key)))
}

/// `pattern` with `_` as a wildcard for any run of characters other than `/` (argo-cd turns
/// `_` into `*` and matches paths).
pub(crate) fn wildcard(pattern: &str, text: &str) -> bool {
    let mut p = pattern.split('/');
    let mut t = text.split('/');
    loop {
        match (p.next(), t.next()) {
            (None, None) => return true,
            (Some(p), Some(t)) if segment(p.as_bytes(), t.as_bytes()) => {}
            _ => return false,
        }
    }
}

fn segment(pattern: &[u8], text: &[u8]) -> bool {
    match pattern.split_first() {
        None => text.is_empty(),
        Some((b'_', rest)) => (0..=text.len()).any(|i| segment(rest, &text[i..])),
        Some((c, rest)) => text
            .split_first()
            .is_some_and(|(t, tr)| t == c && segment(rest, tr)),
    }
}

fn at<'a>(object: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(object, |v, key| v.get(key))
}

fn int(object: &Value, path: &[&str]) -> i64 {
    at(object, path).and_then(Value::as_i64).unwrap_or(0)
}

fn opt_int(object: &Value, path: &[&str]) -> Option<i64> {
    at(object, path).and_then(Value::as_i64)
}

fn text<'a>(object: &'a Value, path: &[&str]) -> &'a str {
    at(object, path).and_then(Value::as_str).unwrap_or("")
}

fn list<'a>(object: &'a Value, path: &[&str]) -> &'a [Value] {
    at(object, path)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The first condition of `type` in `status.conditions`.
fn condition<'a>(object: &'a Value, kind: &str) -> Option<&'a Value> {
    list(object, &["status", "conditions"])
        .iter()
        .find(|c| text(c, &["type"]) == kind)
}

/// Being deleted without Argo's hook finalizer: Progressing whatever the kind.
fn pending_deletion(object: &Value) -> bool {
    let deleting = at(object, &["metadata", "deletionTimestamp"]).is_some_and(|t| !t.is_null());
    let finalized = list(object, &["metadata", "finalizers"])
        .iter()
        .any(|f| f.as_str() == Some(HOOK_FINALIZER));
    deleting && !finalized
}

/// The health of a live object as Argo CD's built-in checks judge it (`GetResourceHealth`
/// with no override); `None`: the kind has no check.
#[must_use]
pub fn health(object: &Value, hook: bool) -> Option<HealthStatus> {
    if pending_deletion(object) {
        return Some(HealthStatus {
            status: Health::Progressing,
            message: "Pending deletion".to_owned(),
        });
    }
    let api_version = text(object, &["apiVersion"]);
    let kind = text(object, &["kind"]);
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    if !has_builtin_check(group, kind) {
        return None;
    }
    let supported = match (group, kind) {
        ("extensions" | "networking.k8s.io" | "argoproj.io", _) => true,
        ("apiregistration.k8s.io", _) => matches!(version, "v1" | "v1beta1"),
        ("autoscaling", _) => matches!(version, "v1" | "v2beta1" | "v2beta2" | "v2"),
        _ => version == "v1",
    };
    if !supported {
        return Some(HealthStatus {
            status: Health::Unknown,
            message: format!("unsupported {kind} GVK: {group}/{version}, Kind={kind}"),
        });
    }
    match kind {
        "Deployment" => Some(deployment(object)),
        "StatefulSet" => Some(stateful_set(object)),
        "DaemonSet" => Some(daemon_set(object)),
        "ReplicaSet" => Some(replica_set(object)),
        "Ingress" => Some(load_balanced(object)),
        "Service" => Some(if text(object, &["spec", "type"]) == "LoadBalancer" {
            load_balanced(object)
        } else {
            HealthStatus {
                status: Health::Healthy,
                message: String::new(),
            }
        }),
        "Workflow" => Some(workflow(object)),
        "APIService" => Some(api_service(object)),
        "PersistentVolumeClaim" => Some(pvc(object)),
        "Pod" => Some(pod(object, hook)),
        "Job" => Some(job(object)),
        "HorizontalPodAutoscaler" => Some(hpa(object, version)),
        _ => None,
    }
}

fn deployment(d: &Value) -> HealthStatus {
    let name = text(d, &["metadata", "name"]);
    let progressing = |message: String| HealthStatus {
        status: Health::Progressing,
        message,
    };
    if at(d, &["spec", "paused"]).and_then(Value::as_bool) == Some(true) {
        return HealthStatus {
            status: Health::Suspended,
            message: "Deployment is paused".to_owned(),
        };
    }
    if int(d, &["metadata", "generation"]) > int(d, &["status", "observedGeneration"]) {
        return progressing(
            "Waiting for rollout to finish: observed deployment generation less than desired generation"
                .to_owned(),
        );
    }
    let updated = int(d, &["status", "updatedReplicas"]);
    let replicas = int(d, &["status", "replicas"]);
    let available = int(d, &["status", "availableReplicas"]);
    if condition(d, "Progressing")
        .is_some_and(|c| text(c, &["reason"]) == "ProgressDeadlineExceeded")
    {
        return HealthStatus {
            status: Health::Degraded,
            message: format!("Deployment {name:?} exceeded its progress deadline"),
        };
    }
    if let Some(wanted) = opt_int(d, &["spec", "replicas"]).filter(|w| updated < *w) {
        return progressing(format!(
            "Waiting for rollout to finish: {updated} out of {wanted} new replicas have been updated..."
        ));
    }
    if replicas > updated {
        return progressing(format!(
            "Waiting for rollout to finish: {} old replicas are pending termination...",
            replicas - updated
        ));
    }
    if available < updated {
        return progressing(format!(
            "Waiting for rollout to finish: {available} of {updated} updated replicas are available..."
        ));
    }
    HealthStatus {
        status: Health::Healthy,
        message: String::new(),
    }
}

fn stateful_set(s: &Value) -> HealthStatus {
    let observed = int(s, &["status", "observedGeneration"]);
    let progressing = |message: String| HealthStatus {
        status: Health::Progressing,
        message,
    };
    let healthy = |message: String| HealthStatus {
        status: Health::Healthy,
        message,
    };
    if observed == 0 || int(s, &["metadata", "generation"]) > observed {
        return progressing("Waiting for statefulset spec update to be observed...".to_owned());
    }
    let replicas = opt_int(s, &["spec", "replicas"]);
    let ready = int(s, &["status", "readyReplicas"]);
    let updated = int(s, &["status", "updatedReplicas"]);
    if let Some(replicas) = replicas.filter(|r| ready < *r) {
        return progressing(format!(
            "Waiting for {} pods to be ready...",
            replicas - ready
        ));
    }
    let strategy = text(s, &["spec", "updateStrategy", "type"]);
    let rolling = at(s, &["spec", "updateStrategy", "rollingUpdate"]).filter(|r| !r.is_null());
    if let (true, Some(rolling)) = (strategy == "RollingUpdate", rolling) {
        if let (Some(replicas), Some(partition)) = (replicas, opt_int(rolling, &["partition"])) {
            let wanted = replicas - partition;
            if updated < wanted {
                return progressing(format!(
                    "Waiting for partitioned roll out to finish: {updated} out of {wanted} new pods have been updated..."
                ));
            }
        }
        return healthy(format!(
            "partitioned roll out complete: {updated} new pods have been updated..."
        ));
    }
    if strategy == "OnDelete" {
        return healthy(format!("statefulset has {ready} ready pods"));
    }
    let update_revision = text(s, &["status", "updateRevision"]);
    let current_revision = text(s, &["status", "currentRevision"]);
    if update_revision != current_revision {
        return progressing(format!(
            "waiting for statefulset rolling update to complete {updated} pods at revision {update_revision}..."
        ));
    }
    healthy(format!(
        "statefulset rolling update complete {} pods at revision {current_revision}...",
        int(s, &["status", "currentReplicas"])
    ))
}

fn daemon_set(d: &Value) -> HealthStatus {
    let name = text(d, &["metadata", "name"]);
    let progressing = |message: String| HealthStatus {
        status: Health::Progressing,
        message,
    };
    if int(d, &["metadata", "generation"]) > int(d, &["status", "observedGeneration"]) {
        return progressing(
            "Waiting for rollout to finish: observed daemon set generation less than desired generation"
                .to_owned(),
        );
    }
    let updated = int(d, &["status", "updatedNumberScheduled"]);
    let desired = int(d, &["status", "desiredNumberScheduled"]);
    let available = int(d, &["status", "numberAvailable"]);
    if text(d, &["spec", "updateStrategy", "type"]) == "OnDelete" {
        return HealthStatus {
            status: Health::Healthy,
            message: format!("daemon set {updated} out of {desired} new pods have been updated"),
        };
    }
    if updated < desired {
        return progressing(format!(
            "Waiting for daemon set {name:?} rollout to finish: {updated} out of {desired} new pods have been updated..."
        ));
    }
    if available < desired {
        return progressing(format!(
            "Waiting for daemon set {name:?} rollout to finish: {available} of {desired} updated pods are available..."
        ));
    }
    HealthStatus {
        status: Health::Healthy,
        message: String::new(),
    }
}

fn replica_set(r: &Value) -> HealthStatus {
    if int(r, &["metadata", "generation"]) > int(r, &["status", "observedGeneration"]) {
        return HealthStatus {
            status: Health::Progressing,
            message: "Waiting for rollout to finish: observed replica set generation less than desired generation".to_owned(),
        };
    }
    if let Some(c) = condition(r, "ReplicaFailure").filter(|c| text(c, &["status"]) == "True") {
        return HealthStatus {
            status: Health::Degraded,
            message: text(c, &["message"]).to_owned(),
        };
    }
    let available = int(r, &["status", "availableReplicas"]);
    if let Some(wanted) = opt_int(r, &["spec", "replicas"]).filter(|w| available < *w) {
        return HealthStatus {
            status: Health::Progressing,
            message: format!(
                "Waiting for rollout to finish: {available} out of {wanted} new replicas are available..."
            ),
        };
    }
    HealthStatus {
        status: Health::Healthy,
        message: String::new(),
    }
}

/// An Ingress, or a Service of type `LoadBalancer`: healthy once it has a load balancer
/// ingress.
fn load_balanced(o: &Value) -> HealthStatus {
    let assigned = !list(o, &["status", "loadBalancer", "ingress"]).is_empty();
    HealthStatus {
        status: if assigned {
            Health::Healthy
        } else {
            Health::Progressing
        },
        message: String::new(),
    }
}

fn workflow(w: &Value) -> HealthStatus {
    let message = text(w, &["status", "message"]).to_owned();
    let status = match text(w, &["status", "phase"]) {
        "" | "Pending" | "Running" => Health::Progressing,
        "Succeeded" => Health::Healthy,
        "Failed" | "Error" => Health::Degraded,
        _ => Health::Unknown,
    };
    HealthStatus { status, message }
}

fn api_service(a: &Value) -> HealthStatus {
    match condition(a, "Available") {
        Some(c) => HealthStatus {
            status: if text(c, &["status"]) == "True" {
                Health::Healthy
            } else {
                Health::Progressing
            },
            message: format!("{}: {}", text(c, &["reason"]), text(c, &["message"])),
        },
        None => HealthStatus {
            status: Health::Progressing,
            message: "Waiting to be processed".to_owned(),
        },
    }
}

fn pvc(p: &Value) -> HealthStatus {
    let status = match text(p, &["status", "phase"]) {
        "Lost" => Health::Degraded,
        "Pending" => Health::Progressing,
        "Bound" => Health::Healthy,
        _ => Health::Unknown,
    };
    HealthStatus {
        status,
        message: String::new(),
    }
}

fn pod(p: &Value, hook: bool) -> HealthStatus {
    let policy = text(p, &["spec", "restartPolicy"]);
    let ignore = text(p, &["metadata", "annotations", IGNORE_RESTART_POLICY]) == "true";
    let long_running = policy == "Always" || (ignore && !hook);
    let message = text(p, &["status", "message"]).to_owned();
    let containers = list(p, &["status", "containerStatuses"]);
    let of = |status, message| HealthStatus { status, message };
    if long_running {
        // NOTE: only pods that restart: a hook Pod that cannot pull its image may still run.
        let waiting: Vec<&str> = containers
            .iter()
            .filter_map(|c| at(c, &["state", "waiting"]))
            .filter(|w| {
                let reason = text(w, &["reason"]);
                reason.starts_with("Err")
                    || reason.ends_with("Error")
                    || reason.ends_with("BackOff")
            })
            .map(|w| text(w, &["message"]))
            .collect();
        if !waiting.is_empty() {
            return of(Health::Degraded, waiting.join(", "));
        }
    }
    match text(p, &["status", "phase"]) {
        "Pending" => of(Health::Progressing, message),
        "Succeeded" => of(Health::Healthy, message),
        "Failed" => {
            if !message.is_empty() {
                return of(Health::Degraded, message);
            }
            let mut all = list(p, &["status", "initContainerStatuses"])
                .iter()
                .chain(containers);
            let why = all
                .find_map(|c| {
                    let t = at(c, &["state", "terminated"]).filter(|t| !t.is_null())?;
                    let code = int(t, &["exitCode"]);
                    if !text(t, &["message"]).is_empty() {
                        Some(text(t, &["message"]).to_owned())
                    } else if text(t, &["reason"]) == "OOMKilled" {
                        Some("OOMKilled".to_owned())
                    } else if code != 0 {
                        Some(format!(
                            "container {:?} failed with exit code {code}",
                            text(c, &["name"])
                        ))
                    } else {
                        None
                    }
                })
                .unwrap_or_default();
            of(Health::Degraded, why)
        }
        "Running" if long_running => {
            let ready = condition(p, "Ready").is_some_and(|c| text(c, &["status"]) == "True");
            if ready {
                of(Health::Healthy, message)
            } else if containers
                .iter()
                .any(|c| at(c, &["lastState", "terminated"]).is_some_and(|t| !t.is_null()))
            {
                of(Health::Degraded, message)
            } else {
                of(Health::Progressing, message)
            }
        }
        // A Pod with a finite life (a hook, typically) is progressing while it runs.
        "Running" if matches!(policy, "OnFailure" | "Never") => of(Health::Progressing, message),
        _ => of(Health::Unknown, message),
    }
}

fn job(j: &Value) -> HealthStatus {
    let (mut failed, mut complete, mut suspended) = (false, false, false);
    let (mut fail_message, mut message) = ("", "");
    // NOTE: as gitops-engine reads them: a condition counts by its type, whatever its status
    // (only `Suspended` looks at it).
    for c in list(j, &["status", "conditions"]) {
        match text(c, &["type"]) {
            "Failed" => {
                failed = true;
                complete = true;
                fail_message = text(c, &["message"]);
            }
            "Complete" => {
                complete = true;
                message = text(c, &["message"]);
            }
            "Suspended" => {
                complete = true;
                message = text(c, &["message"]);
                suspended |= text(c, &["status"]) == "True";
            }
            _ => {}
        }
    }
    let (status, message) = if !complete {
        (Health::Progressing, message)
    } else if failed {
        (Health::Degraded, fail_message)
    } else if suspended {
        (Health::Suspended, message)
    } else {
        (Health::Healthy, message)
    };
    HealthStatus {
        status,
        message: message.to_owned(),
    }
}

/// The HPA conditions gitops-engine reads as Degraded (type, reason).
const HPA_DEGRADED: [(&str, &str); 4] = [
    ("AbleToScale", "FailedGetScale"),
    ("AbleToScale", "FailedUpdateScale"),
    ("ScalingActive", "FailedGetResourceMetric"),
    ("ScalingActive", "InvalidSelector"),
];

fn hpa(h: &Value, version: &str) -> HealthStatus {
    let waiting = HealthStatus {
        status: Health::Progressing,
        message: "Waiting to Autoscale".to_owned(),
    };
    let parsed: Vec<Value>;
    let conditions: &[Value] = if version == "v1" {
        // autoscaling/v1 carries its conditions as JSON in an annotation.
        let Some(raw) = at(
            h,
            &[
                "metadata",
                "annotations",
                "autoscaling.alpha.kubernetes.io/conditions",
            ],
        )
        .and_then(Value::as_str) else {
            return waiting;
        };
        match serde_json::from_str::<Vec<Value>>(raw) {
            Ok(list) => parsed = list,
            Err(e) => {
                return HealthStatus {
                    status: Health::Unknown,
                    message: format!("failed to convert conditions annotation to typed: {e}"),
                };
            }
        }
        if parsed.is_empty() {
            return waiting;
        }
        &parsed
    } else {
        list(h, &["status", "conditions"])
    };
    // Go's JSON decoding matches field names without regard to case.
    let field = |c: &Value, name: &str| -> String {
        c.as_object()
            .and_then(|o| o.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)))
            .and_then(|(_, v)| v.as_str())
            .unwrap_or("")
            .to_owned()
    };
    for c in conditions {
        let (kind, reason) = (field(c, "type"), field(c, "reason"));
        if HPA_DEGRADED.iter().any(|(t, r)| *t == kind && *r == reason) {
            return HealthStatus {
                status: Health::Degraded,
                message: field(c, "message"),
            };
        }
        if matches!(kind.as_str(), "AbleToScale" | "ScalingLimited") && field(c, "status") == "True"
        {
            return HealthStatus {
                status: Health::Healthy,
                message: field(c, "message"),
            };
        }
    }
    waiting
}

/// gitops-engine's `HealthOverride`: an installation's health scripts, asked before the
/// built-in checks. `None`: no script for the object's kind; `Err`: the script failed.
pub trait HealthOverride: Send + Sync + std::fmt::Debug {
    fn resource_health(
        &self,
        object: &Value,
    ) -> Option<Result<super::argo_script::ScriptHealth, String>>;
}

/// Waits as an Argo CD sync waits on one task, by the health of the live object: a resource
/// of a wave (`hook: false`) or a hook (`hook: true`). A script the user gave for the kind
/// (`scripts`) judges first, as `GetResourceHealth` asks its override first; an object whose
/// kind has neither a script nor a built-in check is done as soon as it is there.
#[derive(Clone, Debug, Default)]
pub struct ArgoHealth {
    pub hook: bool,
    pub scripts: Option<std::sync::Arc<dyn HealthOverride>>,
}

impl PartialEq for ArgoHealth {
    fn eq(&self, other: &Self) -> bool {
        self.hook == other.hook
            && match (&self.scripts, &other.scripts) {
                (None, None) => true,
                (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b),
                _ => false,
            }
    }
}

impl ArgoHealth {
    /// A built-in check's verdict (no script given).
    #[must_use]
    pub fn builtin(hook: bool) -> Self {
        Self {
            hook,
            scripts: None,
        }
    }

    /// What a script said, as the sync loop takes it: an error or a status it cannot use is
    /// Unknown (a hook fails, a resource keeps its wave running, as argo-cd leaves such a task
    /// running), no status keeps a resource waiting and counts a hook done.
    fn judge_scripted(
        &self,
        result: Result<super::argo_script::ScriptHealth, String>,
    ) -> Judgement {
        use super::argo_script::ScriptHealth;
        let health = match result {
            Ok(ScriptHealth::Health(h)) => h,
            Ok(ScriptHealth::Empty) => {
                return Judgement {
                    status: if self.hook {
                        Status::Ready
                    } else {
                        Status::InProgress
                    },
                    engine: Engine::ArgoHealth,
                    reason: "the Argo CD health script returned no status".to_owned(),
                    expressions: Vec::new(),
                };
            }
            Err(e) => HealthStatus {
                status: Health::Unknown,
                message: e,
            },
        };
        self.verdict(&health)
    }

    fn verdict(&self, health: &HealthStatus) -> Judgement {
        let status = match health.status {
            Health::Healthy => Status::Ready,
            Health::Degraded => Status::Failed,
            // A hook's health that cannot be assessed fails it (`getOperationPhase`); a
            // resource's keeps its wave running.
            Health::Unknown if self.hook => Status::Failed,
            Health::Progressing | Health::Suspended | Health::Missing | Health::Unknown => {
                Status::InProgress
            }
        };
        let reason = if health.message.is_empty() {
            format!("Argo CD health {}", health.status.as_str())
        } else {
            format!(
                "Argo CD health {}: {}",
                health.status.as_str(),
                health.message
            )
        };
        Judgement {
            status,
            engine: Engine::ArgoHealth,
            reason,
            expressions: Vec::new(),
        }
    }
}

impl Condition for ArgoHealth {
    fn judge(&self, object: &Value, _now: SystemTime) -> Judgement {
        if let Some(scripts) = &self.scripts
            && !pending_deletion(object)
            && let Some(result) = scripts.resource_health(object)
        {
            return self.judge_scripted(result);
        }
        let Some(health) = health(object, self.hook) else {
            return Judgement {
                status: Status::Ready,
                engine: Engine::ArgoHealth,
                reason: "no Argo CD health check for this kind: done once applied".to_owned(),
                expressions: Vec::new(),
            };
        };
        self.verdict(&health)
    }
}

/// Each object is the part a check reads of a file in gitops-engine's own testdata
/// (argo-cd `gitops-engine/pkg/health/testdata/`, named above it), with the health
/// `health_test.go` expects of it.
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn of(object: &Value) -> Option<Health> {
        health(object, false).map(|h| h.status)
    }

    fn assert_health(object: &Value, expected: Health) {
        assert_eq!(of(object), Some(expected), "{object}");
    }

    #[test]
    fn deployment_health() {
        let deployment = |paused: bool, reason: &str| {
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "guestbook-ui", "generation": 4},
                "spec": {"replicas": 1, "paused": paused},
                "status": {"availableReplicas": 1, "observedGeneration": 4, "readyReplicas": 1,
                    "replicas": 2, "updatedReplicas": 1, "conditions": [
                        {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                        {"type": "Progressing", "status": "False", "reason": reason}]}})
        };
        // deployment-progressing.yaml, deployment-suspended.yaml, deployment-degraded.yaml
        assert_health(&deployment(false, "ReplicaSetUpdated"), Health::Progressing);
        assert_health(&deployment(true, "ReplicaSetUpdated"), Health::Suspended);
        let degraded = health(&deployment(false, "ProgressDeadlineExceeded"), false);
        assert_eq!(
            degraded,
            Some(HealthStatus {
                status: Health::Degraded,
                message: "Deployment \"guestbook-ui\" exceeded its progress deadline".to_owned()
            })
        );
        // utils/kube/testdata/nginx.yaml: rolled out.
        let nginx = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "nginx-deployment", "generation": 1}, "spec": {"replicas": 2},
            "status": {"availableReplicas": 2, "observedGeneration": 1, "readyReplicas": 2,
                "replicas": 2, "updatedReplicas": 2}});
        assert_health(&nginx, Health::Healthy);
        let mut unobserved = nginx.clone();
        unobserved["metadata"]["generation"] = json!(2);
        assert_health(&unobserved, Health::Progressing);
        // A version gitops-engine does not convert is Unknown, as its check errs.
        let mut beta = nginx;
        beta["apiVersion"] = json!("apps/v1beta2");
        assert_health(&beta, Health::Unknown);
    }

    #[test]
    fn stateful_set_health() {
        // statefulset.yaml and statefulset-ondelete.yaml (OnDelete, one ready pod).
        let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "redis-master", "generation": 1},
            "spec": {"replicas": 1, "updateStrategy": {"type": "OnDelete"}},
            "status": {"currentReplicas": 1, "currentRevision": "redis-master-7b8f75b98",
                "observedGeneration": 1, "readyReplicas": 1, "replicas": 1,
                "updateRevision": "redis-master-7b8f75b98"}});
        assert_health(&sts, Health::Healthy);
        let mut waiting = sts.clone();
        waiting["status"]["readyReplicas"] = json!(0);
        assert_health(&waiting, Health::Progressing);
        // The API server's default strategy: a rolling update with partition 0.
        let mut partitioned = sts;
        partitioned["spec"]["updateStrategy"] =
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}});
        partitioned["status"]["updatedReplicas"] = json!(0);
        assert_health(&partitioned, Health::Progressing);
        partitioned["status"]["updatedReplicas"] = json!(1);
        assert_health(&partitioned, Health::Healthy);
    }

    #[test]
    fn daemon_set_and_replica_set() {
        // daemonset-ondelete.yaml
        let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "fluentd-elasticsearch", "generation": 4},
            "spec": {"updateStrategy": {"type": "OnDelete"}},
            "status": {"currentNumberScheduled": 1, "desiredNumberScheduled": 1,
                "observedGeneration": 4}});
        assert_health(&ds, Health::Healthy);
        let mut rolling = ds;
        rolling["spec"]["updateStrategy"]["type"] = json!("RollingUpdate");
        assert_health(&rolling, Health::Progressing);
        rolling["status"]["updatedNumberScheduled"] = json!(1);
        rolling["status"]["numberAvailable"] = json!(1);
        assert_health(&rolling, Health::Healthy);
        let rs = json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "r", "generation": 1}, "spec": {"replicas": 1},
            "status": {"observedGeneration": 1, "availableReplicas": 0, "conditions": [
                {"type": "ReplicaFailure", "status": "True", "message": "quota exceeded"}]}});
        assert_health(&rs, Health::Degraded);
    }

    #[test]
    fn service_ingress_and_pvc() {
        // svc-clusterip.yaml, svc-loadbalancer.yaml, svc-loadbalancer-unassigned.yaml
        let svc = |kind: &str, status: Value| {
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "argo-artifacts"},
                "spec": {"type": kind}, "status": status})
        };
        assert_health(&svc("ClusterIP", json!({})), Health::Healthy);
        assert_health(
            &svc(
                "LoadBalancer",
                json!({"loadBalancer": {"ingress": [{"hostname": "abc123.us-west-2.elb.amazonaws.com"}]}}),
            ),
            Health::Healthy,
        );
        assert_health(
            &svc("LoadBalancer", json!({"loadBalancer": {}})),
            Health::Progressing,
        );
        // ingress.yaml, ingress-unassigned.yaml
        let ingress = |status: Value| {
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                "metadata": {"name": "argocd-server-ingress"}, "status": status})
        };
        assert_health(
            &ingress(json!({"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}})),
            Health::Healthy,
        );
        assert_health(&ingress(json!({"loadBalancer": {}})), Health::Progressing);
        // pvc-bound.yaml, pvc-pending.yaml
        let pvc = |phase: &str| {
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "testpvc"}, "status": {"phase": phase}})
        };
        assert_health(&pvc("Bound"), Health::Healthy);
        assert_health(&pvc("Pending"), Health::Progressing);
        assert_health(&pvc("Lost"), Health::Degraded);
    }

    fn pod_of(policy: &str, annotations: &Value, status: &Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "my-pod", "annotations": annotations},
            "spec": {"restartPolicy": policy}, "status": status})
    }

    #[test]
    fn pod_health() {
        let none = json!({});
        let unready = json!([{"type": "Ready", "status": "False", "reason": "ContainersNotReady"}]);
        // pod-pending.yaml
        assert_health(
            &pod_of("Always", &none, &json!({"phase": "Pending"})),
            Health::Progressing,
        );
        // pod-running-not-ready.yaml
        let not_ready = json!({"phase": "Running", "conditions": unready,
            "containerStatuses": [{"name": "main", "lastState": {}, "ready": false}]});
        assert_health(&pod_of("Always", &none, &not_ready), Health::Progressing);
        // pod-crashloop.yaml
        let crashloop = json!({"phase": "Running", "conditions": unready,
            "containerStatuses": [{"name": "main", "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}},
                "state": {"waiting": {"reason": "CrashLoopBackOff",
                    "message": "Back-off 40s restarting failed container=main"}}}]});
        assert_eq!(
            health(&pod_of("Always", &none, &crashloop), false),
            Some(HealthStatus {
                status: Health::Degraded,
                message: "Back-off 40s restarting failed container=main".to_owned()
            })
        );
        // pod-imagepullbackoff.yaml
        let backoff = json!({"phase": "Pending", "conditions": unready,
            "containerStatuses": [{"name": "main", "state": {"waiting": {"reason": "ImagePullBackOff",
                "message": "Back-off pulling image \"gcr.io/heptio-images/ks-guestbook-demo:0.3\""}}}]});
        assert_health(&pod_of("Always", &none, &backoff), Health::Degraded);
        // pod-error.yaml: running, not ready, a container terminated before.
        let error = json!({"phase": "Running", "conditions": unready,
            "containerStatuses": [{"name": "main",
                "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}},
                "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]});
        assert_health(&pod_of("Always", &none, &error), Health::Degraded);
        // pod-running-restart-always.yaml
        let ready = json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [{"name": "main", "lastState": {}, "ready": true}]});
        assert_health(&pod_of("Always", &none, &ready), Health::Healthy);
        // pod-running-restart-never.yaml, pod-running-restart-onfailure.yaml
        assert_health(&pod_of("Never", &none, &ready), Health::Progressing);
        assert_health(&pod_of("OnFailure", &none, &ready), Health::Progressing);
        // pod-running-restart-never-with-ignore-annotation.yaml, and its hook variant
        // (pod-running-restart-never-hook-with-ignore-annotation.yaml) and its backoff
        // (pod-running-restart-never-with-ignore-annotation-backoff.yaml).
        let ignore = json!({"argocd.argoproj.io/ignore-restart-policy": "true"});
        assert_health(&pod_of("Never", &ignore, &ready), Health::Healthy);
        assert_eq!(
            health(&pod_of("Never", &ignore, &ready), true).map(|h| h.status),
            Some(Health::Progressing)
        );
        let running_backoff = json!({"phase": "Running", "conditions": unready,
            "containerStatuses": [{"name": "main", "lastState": {},
                "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image \"alpine:3.21\""}}}]});
        assert_health(
            &pod_of("Never", &ignore, &running_backoff),
            Health::Degraded,
        );
        // pod-failed.yaml
        let failed = json!({"phase": "Failed", "containerStatuses": [{"name": "main",
            "lastState": {}, "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]});
        assert_eq!(
            health(&pod_of("Never", &none, &failed), false),
            Some(HealthStatus {
                status: Health::Degraded,
                message: "container \"main\" failed with exit code 1".to_owned()
            })
        );
        // pod-succeeded.yaml
        assert_health(
            &pod_of("Never", &none, &json!({"phase": "Succeeded"})),
            Health::Healthy,
        );
        // pod-deletion.yaml
        let mut deleting = pod_of("Always", &none, &json!({"phase": "Pending"}));
        deleting["metadata"]["deletionTimestamp"] = json!("2018-12-03T10:16:04Z");
        assert_eq!(
            health(&deleting, false),
            Some(HealthStatus {
                status: Health::Progressing,
                message: "Pending deletion".to_owned()
            })
        );
    }

    #[test]
    fn job_health() {
        let job = |conditions: Value| {
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "fail"},
                "spec": {"template": {"spec": {"restartPolicy": "Never"}}},
                "status": {"conditions": conditions}})
        };
        // job-running.yaml, job-failed.yaml, job-succeeded.yaml, job-suspended.yaml
        assert_health(&job(json!([])), Health::Progressing);
        assert_eq!(
            health(
                &job(
                    json!([{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                "message": "Job has reached the specified backoff limit"}])
                ),
                false
            ),
            Some(HealthStatus {
                status: Health::Degraded,
                message: "Job has reached the specified backoff limit".to_owned()
            })
        );
        assert_health(
            &job(json!([{"type": "Complete", "status": "True"}])),
            Health::Healthy,
        );
        assert_eq!(
            health(
                &job(
                    json!([{"type": "Suspended", "status": "True", "reason": "JobSuspended",
                "message": "Job suspended"}])
                ),
                false
            ),
            Some(HealthStatus {
                status: Health::Suspended,
                message: "Job suspended".to_owned()
            })
        );
    }

    #[test]
    fn hpa_health() {
        let v1 = |conditions: Option<&str>| {
            let annotations = conditions.map_or_else(
                || json!({}),
                |c| json!({"autoscaling.alpha.kubernetes.io/conditions": c}),
            );
            json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "sample", "annotations": annotations},
                "status": {"currentReplicas": 1, "desiredReplicas": 0}})
        };
        // hpa-v1-degraded.yaml, hpa-v1-healthy.yaml, hpa-v1-progressing.yaml,
        // hpa-v1-progressing-with-no-annotations.yaml
        assert_health(
            &v1(Some(
                r#"[{"type":"AbleToScale","status":"True","reason":"FailedGetScale","message":"the HPA controller was unable to get the target's current scale"}]"#,
            )),
            Health::Degraded,
        );
        assert_health(
            &v1(Some(
                r#"[{"type":"AbleToScale","status":"True","reason":"ScaleDownStabilized","message":"recent recommendations were higher than current one"}]"#,
            )),
            Health::Healthy,
        );
        assert_health(
            &v1(Some(
                r#"[{"type":"AbleToScale","status":"False","reason":"SucceededGetScale","message":"the HPA controller was not able to get the target's current scale"}]"#,
            )),
            Health::Progressing,
        );
        assert_health(&v1(None), Health::Progressing);
        assert_health(&v1(Some("not json")), Health::Unknown);
        // hpa-v2-degraded.yaml: the first condition decides.
        let v2 = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "sample"}, "status": {"conditions": [
                {"type": "AbleToScale", "status": "False", "reason": "FailedGetScale", "message": "no scale"},
                {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound"},
                {"type": "ScalingLimited", "status": "False", "reason": "DesiredWithinRange"}]}});
        assert_health(&v2, Health::Degraded);
    }

    #[test]
    fn api_service_and_workflow() {
        // apiservice-v1-true.yaml, apiservice-v1-false.yaml, apiservice-v1beta1-true.yaml
        let api = |version: &str, status: &str| {
            json!({"apiVersion": format!("apiregistration.k8s.io/{version}"), "kind": "APIService",
                "metadata": {"name": "v1beta1.admission.cert-manager.io"},
                "status": {"conditions": [{"type": "Available", "status": status,
                    "reason": "MissingEndpoints", "message": "no endpoints"}]}})
        };
        assert_health(&api("v1", "True"), Health::Healthy);
        assert_health(&api("v1", "False"), Health::Progressing);
        assert_health(&api("v1beta1", "True"), Health::Healthy);
        let wf = |phase: &str| {
            json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
                "metadata": {"name": "w"}, "status": {"phase": phase}})
        };
        assert_health(&wf("Running"), Health::Progressing);
        assert_health(&wf("Succeeded"), Health::Healthy);
        assert_health(&wf("Error"), Health::Degraded);
    }

    #[test]
    fn kinds_without_a_check_have_no_health() {
        // knative-service.yaml (a custom `Service`), application-healthy.yaml
        let knative = json!({"apiVersion": "serving.knative.dev/v1alpha1", "kind": "Service",
            "metadata": {"name": "helloworld-go"}, "spec": {}});
        assert_eq!(health(&knative, false), None);
        let app = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "a"}, "status": {"health": {"status": "Healthy"}}});
        assert_eq!(health(&app, false), None);
        let judged = ArgoHealth::builtin(false).judge(&knative, SystemTime::UNIX_EPOCH);
        assert_eq!(judged.status, Status::Ready);
    }

    /// How a sync treats each health: a resource of a wave waits on all but Healthy and
    /// Degraded; a hook also fails on Unknown.
    #[test]
    fn sync_verdicts_per_health() {
        let pvc = |phase: &str| {
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": {"name": "p"}, "status": {"phase": phase}})
        };
        let suspended = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d"}, "spec": {"paused": true}});
        let verdict = |hook: bool, object: &Value| {
            ArgoHealth::builtin(hook)
                .judge(object, SystemTime::UNIX_EPOCH)
                .status
        };
        for hook in [false, true] {
            assert_eq!(verdict(hook, &pvc("Bound")), Status::Ready);
            assert_eq!(verdict(hook, &pvc("Pending")), Status::InProgress);
            assert_eq!(verdict(hook, &pvc("Lost")), Status::Failed);
            assert_eq!(verdict(hook, &suspended), Status::InProgress);
        }
        assert_eq!(verdict(false, &pvc("")), Status::InProgress);
        assert_eq!(verdict(true, &pvc("")), Status::Failed);
        let lost = ArgoHealth::builtin(false).judge(&pvc("Lost"), SystemTime::UNIX_EPOCH);
        assert_eq!(lost.reason, "Argo CD health Degraded");
        assert_eq!(lost.engine, Engine::ArgoHealth);
    }

    #[test]
    fn lua_checks_match_exact_and_wildcard_directories() {
        assert!(has_lua_check("cert-manager.io", "Certificate"));
        assert!(has_lua_check("batch", "CronJob"));
        assert!(has_lua_check("pkg.crossplane.io", "Provider"));
        assert!(has_lua_check("s3.aws.upbound.io", "Bucket"));
        assert!(!has_lua_check("crossplane.io", "Provider"));
        assert!(!has_lua_check("example.com", "Widget"));
        assert!(!has_lua_check("apps", "Deployment"));
        assert!(!has_lua_check("argoproj.io", "Application"));
        // No kind has both a Lua and a Go check.
        for entry in super::super::argo_lua::LUA_HEALTH_CHECKS {
            let (group, kind) = entry.split_once('/').unwrap_or(("", entry));
            assert!(!has_builtin_check(group, kind), "{entry}");
        }
    }
}
