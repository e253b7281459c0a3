//! What `apply` waits for, per resource: the wait policy a dialect planner fills in beside its
//! steps ([`super::Plan::waits`], [`super::Plan::external`]) so that `apply --dialect` waits
//! where and as that tool waits, with the one readiness engine; HIP-0025's own wait comes from
//! [`hip`], and [`super::Plan::wait_of`] gives either.
//!
//! A plan's steps say *when* a resource may be applied (after the steps it waits for are
//! done); its wait says what "done" means for that resource. A resource with no entry in
//! `waits` gets HIP-0025's wait ([`hip`]), so a planner that fills nothing waits as HIP does.
//! What each tool waits for:
//!
//! - werf/nelm (DIALECTS.md §1.5): every resource of a weight before the next weight, as
//!   kubedog tracks it ([`Wait::Tracked`]: kstatus, or run to completion for hooks, with
//!   werf's fail mode, allowed failures and no-activity timeout);
//!   `werf.io/track-termination-mode: NonBlocking` is [`Wait::None`]; external dependencies
//!   must exist before the resource is applied ([`External`]).
//! - Argo CD (§2.4): by Argo CD's built-in health check of the kind ([`Wait::ArgoHealth`],
//!   hooks [`Wait::ArgoHook`]), before the next wave, except in the last wave when it holds no
//!   hook, or when the sync has a single wave; a kind with no check is done once applied
//!   ([`Wait::None`]); a kind argo-cd checks with Lua has kstatus standing in
//!   ([`Wait::Status`], hooks [`Wait::Complete`]) unless `apply --argo-health` gives a script
//!   for it (`plan::argo::with_health_scripts`: then [`Wait::ArgoHealth`] for any kind a
//!   script covers, the script judging first).
//! - KOTS (§4.2): nothing unless annotated: `kots.io/wait-for-ready: "true"` is
//!   [`Wait::kots_ready`] ([`Wait::Status`] for the kinds KOTS has a status informer for,
//!   [`Wait::Exists`] for every other kind); `kots.io/wait-for-properties` is
//!   [`Wait::Properties`]; the rest [`Wait::None`]. KOTS applies one object at a time and a
//!   wait holds back everything after it: the steps say that, the waits say what is awaited.
//! - kapp (§3.3): [`Wait::Status`]; `kapp.k14s.io/disable-wait` is [`Wait::None`]; an object
//!   marked `kapp.k14s.io/exists` is never applied (`not_installed`) and becomes an
//!   [`External`] of the resources ordered after it; an object matched by a `waitRules` rule
//!   of a kapp configuration in the chart waits by its condition matchers
//!   ([`Wait::KappConditions`]; a ytt rule is [`Wait::Unusable`]: not evaluated).
//! - the draft HIP: as HIP-0025 (no entry needed).
//!
//! `crds/` documents are Helm's whatever the dialect: created first, waited established.

use serde::{Deserialize, Serialize};

use std::fmt::Write as _;

use crate::model::Resource;
use crate::model::annotations::{AnnotationValue, NameList, Spanned};
use crate::model::werf::{FailMode, Tracking};
use crate::readiness::expr::Expression;
use crate::readiness::{
    AllPropertiesEqual, Custom, ExprKind, KappConditions, PropertyPair, parse_expressions,
};

/// How `apply` waits for one resource once it is applied: decided once, by the planner (a
/// dialect's rule) or by [`hip`] (HIP-0025's), from the model's parsed annotations, and
/// carried as it is to `apply`, `diff`, `status` and the release record. Nothing downstream
/// reads a readiness annotation again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Stored", into = "Stored")]
pub enum Wait {
    /// HIP-0025 without custom readiness: kstatus; a Job counts only once Complete with
    /// `--wait-for-jobs` (Helm's flag).
    Kstatus,
    /// HIP-0025 custom readiness: both annotations hold expressions, parsed by the parser
    /// lint validated them with.
    Custom(Custom),
    /// Readiness annotations that cannot be used (not a list of expressions, an expression
    /// that does not parse, a property KOTS refuses): the deploy stops at the resource's step
    /// with this message, before anything of the step is sent.
    Unusable(String),
    /// kstatus alone (the tool reads no HIP readiness annotations), a Job only once it is
    /// Complete: how werf (kubedog), Argo CD (health) and kapp wait for a workload.
    Status,
    /// Run to completion (a hook): a Job Complete, a Pod Succeeded, other kinds by kstatus.
    Complete,
    /// Exists: nothing about its state.
    Exists,
    /// Every `path=value` pair holds, each path read on the whole object and printed as
    /// kubectl prints it, compared as exact text (KOTS `kots.io/wait-for-properties`).
    Properties(AllPropertiesEqual),
    /// A kapp `waitRules` rule with condition matchers, from a kapp configuration in the
    /// chart: its status conditions decide (kapp's `CustomWaitingResource`).
    KappConditions(KappConditions),
    /// Applied, never waited for.
    None,
    /// Argo CD's health check of the object's kind (a Lua script the user gave, else the
    /// built-in check), as a sync waits on a resource of a wave: Healthy is done, Degraded
    /// fails, anything else keeps waiting.
    ArgoHealth,
    /// Argo CD's built-in health check, as a sync waits on a hook: Healthy is done, Degraded
    /// or Unknown fails it, Progressing or Suspended keeps waiting.
    ArgoHook,
    /// werf: [`Wait::Status`] (or [`Wait::Complete`] for a hook) as kubedog tracks it for nelm:
    /// a failure counts only once the allowed failures are exceeded, and a generic kind that
    /// shows no activity for its no-activity timeout counts a failure.
    Tracked(Tracked),
}

/// werf's wait for one resource: what it must reach and how its failures are counted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tracked {
    /// Run to completion (a hook), else ready.
    pub complete: bool,
    pub tracking: Tracking,
}

impl Tracked {
    /// `fail-mode X, N failure(s) allowed, no activity 4m0s`, for plans and progress.
    #[must_use]
    pub fn describe_tracking(&self) -> String {
        let t = &self.tracking;
        let mut out = format!("fail-mode {}", t.fail_mode.name());
        if t.fail_mode.counts_failures() {
            let _ = write!(
                out,
                ", {} failure{} allowed",
                t.failures_allowed,
                if t.failures_allowed == 1 { "" } else { "s" }
            );
        }
        if let Some(d) = t.no_activity {
            let _ = write!(out, ", no activity {}", crate::duration::go_duration(d));
        }
        out
    }
}

impl Wait {
    /// A short word for progress output and docs.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Wait::Kstatus => "ready".to_owned(),
            Wait::Custom(_) => "ready (custom readiness)".to_owned(),
            Wait::Unusable(why) => format!("unusable readiness: {why}"),
            Wait::Status => "ready (kstatus, Jobs complete)".to_owned(),
            Wait::Complete => "complete".to_owned(),
            Wait::Exists => "exists".to_owned(),
            Wait::Properties(p) => {
                let pairs: Vec<String> = p.pairs().iter().map(PropertyPair::text).collect();
                format!("properties {}", pairs.join(","))
            }
            Wait::KappConditions(k) => {
                let matchers: Vec<String> = k
                    .condition_matchers
                    .iter()
                    .map(|m| {
                        let mut ends = Vec::new();
                        for (on, word) in [
                            (m.success, "success"),
                            (m.failure, "failure"),
                            (m.unblock_changes, "unblocks"),
                        ] {
                            if on {
                                ends.push(word);
                            }
                        }
                        format!("{}={} {}", m.type_, m.status, ends.join("+"))
                    })
                    .collect();
                format!("kapp wait rule [{}]", matchers.join(", "))
            }
            Wait::None => "not waited".to_owned(),
            Wait::ArgoHealth => "healthy (Argo CD health check)".to_owned(),
            Wait::ArgoHook => "complete (Argo CD health check of a hook)".to_owned(),
            Wait::Tracked(t) if t.complete => format!("complete ({})", t.describe_tracking()),
            Wait::Tracked(t) => {
                format!("ready (kstatus, Jobs complete; {})", t.describe_tracking())
            }
        }
    }

    /// `path=value` pairs a planner read, as a wait: [`Wait::None`] for no pair (KOTS waits
    /// for nothing then).
    #[must_use]
    pub fn properties(pairs: Vec<PropertyPair>) -> Wait {
        AllPropertiesEqual::new(pairs).map_or(Wait::None, Wait::Properties)
    }
}

/// HIP-0025's wait for one resource (SPEC §3), the one place that decides it: a hook runs to
/// completion (its readiness annotations are ignored, as Helm's hook readers ignore them);
/// custom readiness when both `helm.sh/readiness-success` and `-failure` hold expressions;
/// kstatus otherwise (one side alone, or none). A blank annotation counts as absent.
#[must_use]
pub fn hip(resource: &Resource) -> Wait {
    if resource.hook.is_some() {
        return Wait::Complete;
    }
    let side = |kind: ExprKind,
                list: Option<&Spanned<NameList>>|
     -> Result<Vec<Expression>, String> {
        let key = kind.annotation();
        let blank = resource
            .annotations
            .iter()
            .rev()
            .find(|a| a.key == key)
            .is_some_and(|a| matches!(&a.value, AnnotationValue::Str(s) if s.trim().is_empty()));
        let Some(list) = list.filter(|_| !blank) else {
            return Ok(Vec::new());
        };
        let texts = list.value.as_ref().map_err(|e| {
            let hint = e
                .suggestion()
                .map(|s| format!("; write it as {s}"))
                .unwrap_or_default();
            format!("{key}: {}{hint}", e.describe())
        })?;
        parse_expressions(kind, texts)
            .map_err(|e| format!("{key}[{}]: {}", e.index.unwrap_or(0), e.message))
    };
    let read = side(ExprKind::Success, resource.seq.readiness_success.as_ref()).and_then(|s| {
        side(ExprKind::Failure, resource.seq.readiness_failure.as_ref()).map(|f| (s, f))
    });
    match read {
        Err(why) => Wait::Unusable(why),
        Ok((success, failure)) => Custom::new(success, failure).map_or(Wait::Kstatus, Wait::Custom),
    }
}

/// How a wait is written in a release record: a tag and, for properties, the pairs as
/// written (read back through the same parser).
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "wait", content = "pairs")]
enum Stored {
    Kstatus,
    Custom {
        success: Vec<String>,
        failure: Vec<String>,
    },
    Unusable(String),
    Status,
    Complete,
    Exists,
    Properties(Vec<(String, String)>),
    KappConditions(KappConditions),
    None,
    ArgoHealth,
    ArgoHook,
    Tracked {
        complete: bool,
        fail_mode: FailMode,
        failures_allowed: u64,
        /// Milliseconds; absent when the kind has no no-activity timeout.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        no_activity_ms: Option<u64>,
    },
}

impl From<Wait> for Stored {
    fn from(wait: Wait) -> Self {
        let texts = |list: &[Expression]| list.iter().map(|e| e.text().to_owned()).collect();
        match wait {
            Wait::Kstatus => Stored::Kstatus,
            Wait::Custom(c) => Stored::Custom {
                success: texts(c.success()),
                failure: texts(c.failure()),
            },
            Wait::Unusable(why) => Stored::Unusable(why),
            Wait::Status => Stored::Status,
            Wait::Complete => Stored::Complete,
            Wait::Exists => Stored::Exists,
            Wait::Properties(p) => Stored::Properties(
                p.pairs()
                    .iter()
                    .map(|p| (p.path_text.clone(), p.value.clone()))
                    .collect(),
            ),
            Wait::KappConditions(k) => Stored::KappConditions(k),
            Wait::None => Stored::None,
            Wait::ArgoHealth => Stored::ArgoHealth,
            Wait::ArgoHook => Stored::ArgoHook,
            Wait::Tracked(t) => Stored::Tracked {
                complete: t.complete,
                fail_mode: t.tracking.fail_mode,
                failures_allowed: t.tracking.failures_allowed,
                no_activity_ms: t
                    .tracking
                    .no_activity
                    .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            },
        }
    }
}

impl TryFrom<Stored> for Wait {
    type Error = String;

    fn try_from(stored: Stored) -> Result<Self, String> {
        Ok(match stored {
            Stored::Kstatus => Wait::Kstatus,
            Stored::Custom { success, failure } => {
                let success =
                    parse_expressions(ExprKind::Success, &success).map_err(|e| e.message)?;
                let failure =
                    parse_expressions(ExprKind::Failure, &failure).map_err(|e| e.message)?;
                Custom::new(success, failure).map_or(Wait::Kstatus, Wait::Custom)
            }
            Stored::Unusable(why) => Wait::Unusable(why),
            Stored::Status => Wait::Status,
            Stored::Complete => Wait::Complete,
            Stored::Exists => Wait::Exists,
            Stored::Properties(pairs) => match AllPropertiesEqual::parse(&pairs) {
                Ok(p) => p.map_or(Wait::None, Wait::Properties),
                Err((i, e)) => Wait::Unusable(format!(
                    "property {:?} cannot be read: {} (at byte {} of the path)",
                    pairs.get(i).map(|(p, _)| p.as_str()).unwrap_or_default(),
                    e.message,
                    e.offset
                )),
            },
            Stored::KappConditions(k) => Wait::KappConditions(k),
            Stored::None => Wait::None,
            Stored::ArgoHealth => Wait::ArgoHealth,
            Stored::ArgoHook => Wait::ArgoHook,
            Stored::Tracked {
                complete,
                fail_mode,
                failures_allowed,
                no_activity_ms,
            } => Wait::Tracked(Tracked {
                complete,
                tracking: Tracking {
                    fail_mode,
                    failures_allowed,
                    no_activity: no_activity_ms.map(std::time::Duration::from_millis),
                },
            }),
        })
    }
}

/// The kinds KOTS has a status informer for (`appstate`): `kots.io/wait-for-ready` waits
/// for them to be ready; any other kind is "ready" as soon as it exists (DIALECTS.md §4.2).
const KOTS_INFORMED_KINDS: [&str; 6] = [
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "Service",
    "Ingress",
    "PersistentVolumeClaim",
];

impl Wait {
    /// What KOTS' `kots.io/wait-for-ready: "true"` waits for on an object of `kind`.
    #[must_use]
    pub fn kots_ready(kind: &str) -> Wait {
        if KOTS_INFORMED_KINDS.contains(&kind) {
            Wait::Status
        } else {
            Wait::Exists
        }
    }
}

/// How an object outside the release is named.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "by")]
pub enum ExternalType {
    /// `apiVersion` and `kind`.
    Kind { api_version: String, kind: String },
    /// A kubectl resource type (`secret`, `deployments`, `deployments.v1.apps`): resolved
    /// through the cluster's discovery, as werf resolves it with the cluster's REST mapper.
    Resource {
        resource: String,
        version: Option<String>,
        group: Option<String>,
    },
}

/// An object outside the release that must exist before a resource is applied (werf's
/// external dependencies: nelm waits for presence, not readiness — DIALECTS.md §1.4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct External {
    #[serde(flatten)]
    pub target: ExternalType,
    /// `None`: the release namespace (ignored for cluster-scoped types).
    pub namespace: Option<String>,
    pub name: String,
    /// The annotation that asks for it.
    pub key: String,
}

impl External {
    /// What `apply` looks for, from the dependency the werf model read: the legacy form's
    /// resource type (`secret`, `deployments.apps`, `deployments.v1.apps`) is split into its
    /// resource, version and group as kubectl reads it.
    #[must_use]
    pub fn of(dependency: &crate::model::werf::ExternalDependency) -> Self {
        use crate::model::werf::ExternalObject;
        let (target, namespace, name) = match &dependency.object {
            ExternalObject::Typed {
                api_version,
                kind,
                namespace,
                name,
            } => (
                ExternalType::Kind {
                    api_version: api_version.clone(),
                    kind: kind.clone(),
                },
                namespace,
                name,
            ),
            ExternalObject::Resource {
                resource,
                namespace,
                name,
            } => {
                let mut dotted = resource.splitn(3, '.');
                let first = dotted.next().unwrap_or_default().to_owned();
                let (version, group) = match (dotted.next(), dotted.next()) {
                    (None, _) => (None, None),
                    (Some(g), None) => (None, Some(g.to_owned())),
                    (Some(v), Some(g)) => (Some(v.to_owned()), Some(g.to_owned())),
                };
                (
                    ExternalType::Resource {
                        resource: first,
                        version,
                        group,
                    },
                    namespace,
                    name,
                )
            }
        };
        Self {
            target,
            namespace: namespace.clone(),
            name: name.clone(),
            key: dependency.key.clone(),
        }
    }

    /// The object as written: `apiVersion kind/name` or `type/name`, with the namespace when
    /// one was written.
    #[must_use]
    pub fn written(&self) -> String {
        let what = match &self.target {
            ExternalType::Kind { api_version, kind } => format!("{api_version} {kind}"),
            ExternalType::Resource { .. } => self.resource_type().unwrap_or_default(),
        };
        match &self.namespace {
            Some(ns) => format!("{what}/{} (namespace {ns})", self.name),
            None => format!("{what}/{}", self.name),
        }
    }

    /// The legacy form's resource type as written (`deployments.v1.apps`).
    #[must_use]
    pub fn resource_type(&self) -> Option<String> {
        let ExternalType::Resource {
            resource,
            version,
            group,
        } = &self.target
        else {
            return None;
        };
        let mut out = resource.clone();
        for part in [version, group].into_iter().flatten() {
            out.push('.');
            out.push_str(part);
        }
        Some(out)
    }

    /// `Kind/name` or `type/name`, with the namespace when one was written.
    #[must_use]
    pub fn label(&self) -> String {
        let what = match &self.target {
            ExternalType::Kind { kind, .. } => kind.clone(),
            ExternalType::Resource { resource, .. } => resource.clone(),
        };
        match &self.namespace {
            Some(ns) => format!("{what}/{} (namespace {ns})", self.name),
            None => format!("{what}/{}", self.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Model, load_stream};
    use crate::plan::{Dialect, Plan, plan_in};

    fn planned(stream: &str, dialect: Dialect) -> (Model, Plan) {
        let model = load_stream(
            "s",
            stream.as_bytes().to_vec(),
            crate::parse::Limits::default(),
        );
        let plan = plan_in(&model, dialect).expect("plans");
        (model, plan)
    }

    /// The wait of each named object, as `Kind/name=wait`, in document order.
    fn waits(model: &Model, plan: &Plan) -> Vec<String> {
        (0..model.documents.len())
            .filter_map(|d| {
                let r = model.resource(d)?;
                Some(format!(
                    "{}/{}={}",
                    r.id.kind,
                    r.id.name,
                    plan.wait_of(model, d)?.describe()
                ))
            })
            .collect()
    }

    fn doc(kind: &str, name: &str, annotations: &str) -> String {
        format!(
            "---\n# Source: c/templates/{name}.yaml\napiVersion: v1\nkind: {kind}\nmetadata:\n  name: {name}\n  annotations:\n    x: \"y\"{annotations}\n"
        )
    }

    #[test]
    fn werf_waits_for_everything_but_non_blocking_and_runs_hooks_to_completion() {
        let stream = [
            doc("Namespace", "ns", ""),
            doc("Pod", "app", ""),
            doc(
                "Pod",
                "bg",
                "\n    werf.io/track-termination-mode: NonBlocking",
            ),
            doc("Pod", "migrate", "\n    helm.sh/hook: pre-install"),
            doc(
                "ConfigMap",
                "uses",
                "\n    tls.external-dependency.werf.io: v1:Secret:tls",
            ),
        ]
        .concat();
        let (model, plan) = planned(&stream, Dialect::Werf);
        assert_eq!(
            waits(&model, &plan),
            [
                "Namespace/ns=ready (kstatus, Jobs complete; fail-mode FailWholeDeployProcessImmediately, 0 failures allowed, no activity 4m0s)",
                "Pod/app=ready (kstatus, Jobs complete; fail-mode FailWholeDeployProcessImmediately, 0 failures allowed)",
                "Pod/bg=not waited",
                "Pod/migrate=complete (fail-mode FailWholeDeployProcessImmediately, 0 failures allowed)",
                "ConfigMap/uses=ready (kstatus, Jobs complete; fail-mode FailWholeDeployProcessImmediately, 0 failures allowed, no activity 4m0s)",
            ]
        );
        // The record keeps the tracking and reads it back; a record written before tracking
        // was recorded (`status`) still reads.
        let w = plan.waits.get(&1).expect("a wait").clone();
        let json = serde_json::to_value(&w).expect("serializes");
        assert_eq!(
            json,
            serde_json::json!({"wait": "tracked", "pairs": {"complete": false,
                "fail_mode": "FailWholeDeployProcessImmediately", "failures_allowed": 0}})
        );
        assert_eq!(serde_json::from_value::<Wait>(json).expect("reads back"), w);
        let ns = plan.waits.get(&0).expect("a wait").clone();
        let json = serde_json::to_value(&ns).expect("serializes");
        assert_eq!(json["pairs"]["no_activity_ms"], 240_000);
        assert_eq!(
            serde_json::from_value::<Wait>(json).expect("reads back"),
            ns
        );
        assert_eq!(
            serde_json::from_value::<Wait>(serde_json::json!({"wait": "status"})).expect("reads"),
            Wait::Status
        );
        let external: Vec<String> = plan
            .external
            .values()
            .flatten()
            .map(External::label)
            .collect();
        assert_eq!(external, ["Secret/tls"]);
        assert_eq!(plan.external.keys().copied().collect::<Vec<_>>(), [4]);
    }

    #[test]
    fn argo_waits_between_waves_but_not_after_the_last_one_without_hooks() {
        let stream = [
            doc("Pod", "pre", "\n    argocd.argoproj.io/hook: PreSync"),
            doc("Service", "w0", ""),
            doc("Service", "w1", "\n    argocd.argoproj.io/sync-wave: \"1\""),
        ]
        .concat();
        let (model, plan) = planned(&stream, Dialect::Argo);
        assert_eq!(
            waits(&model, &plan),
            [
                "Pod/pre=complete (Argo CD health check of a hook)",
                "Service/w0=healthy (Argo CD health check)",
                "Service/w1=not waited",
            ]
        );
        // A hook in the last wave keeps it waited.
        let with_post = format!(
            "{stream}{}",
            doc("Pod", "post", "\n    argocd.argoproj.io/hook: PostSync")
        );
        let (model, plan) = planned(&with_post, Dialect::Argo);
        assert_eq!(
            waits(&model, &plan)[2..],
            [
                "Service/w1=healthy (Argo CD health check)".to_owned(),
                "Pod/post=complete (Argo CD health check of a hook)".to_owned()
            ]
        );
        // A sync of one wave waits for nothing but its hooks.
        let (model, plan) = planned(&doc("Service", "only", ""), Dialect::Argo);
        assert_eq!(waits(&model, &plan), ["Service/only=not waited"]);
    }

    /// Argo CD waits by the health check of each kind: none for a kind without one (a
    /// `ConfigMap`, most custom resources, even as a hook), kstatus standing in for a kind
    /// argo-cd checks in Lua, its Go check for the rest.
    #[test]
    fn argo_waits_by_the_health_check_of_each_kind() {
        let typed = |api: &str, kind: &str, name: &str, annotations: &str| {
            format!(
                "---\napiVersion: {api}\nkind: {kind}\nmetadata:\n  name: {name}\n  annotations:\n    x: \"y\"{annotations}\n"
            )
        };
        let stream = [
            typed("v1", "ConfigMap", "cm", ""),
            typed("example.com/v1", "Widget", "plain", ""),
            typed("cert-manager.io/v1", "Certificate", "lua", ""),
            typed("s3.aws.upbound.io/v1beta1", "Bucket", "wildcard", ""),
            typed("batch/v1", "CronJob", "cron", ""),
            typed("apps/v1", "Deployment", "web", ""),
            typed("batch/v1", "Job", "job", ""),
            typed(
                "example.com/v1",
                "Widget",
                "hook",
                "\n    argocd.argoproj.io/hook: Sync",
            ),
            typed(
                "argoproj.io/v1alpha1",
                "Rollout",
                "lua-hook",
                "\n    argocd.argoproj.io/hook: Sync",
            ),
            typed(
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                "crd",
                "",
            ),
            typed(
                "v1",
                "ConfigMap",
                "next",
                "\n    argocd.argoproj.io/sync-wave: \"1\"\n    argocd.argoproj.io/hook: PostSync",
            ),
        ]
        .concat();
        let (model, plan) = planned(&stream, Dialect::Argo);
        assert_eq!(
            waits(&model, &plan),
            [
                "ConfigMap/cm=not waited",
                "Widget/plain=not waited",
                "Certificate/lua=ready (kstatus, Jobs complete)",
                "Bucket/wildcard=ready (kstatus, Jobs complete)",
                "CronJob/cron=ready (kstatus, Jobs complete)",
                "Deployment/web=healthy (Argo CD health check)",
                "Job/job=healthy (Argo CD health check)",
                "Widget/hook=not waited",
                "Rollout/lua-hook=complete",
                "CustomResourceDefinition/crd=ready (kstatus, Jobs complete)",
                "ConfigMap/next=not waited",
            ]
        );
    }

    #[test]
    fn argo_waits_are_stored_tagged_and_older_records_still_read() {
        for (wait, tag) in [
            (Wait::ArgoHealth, "argo-health"),
            (Wait::ArgoHook, "argo-hook"),
        ] {
            let json = serde_json::to_value(&wait).expect("serializes");
            assert_eq!(json, serde_json::json!({ "wait": tag }));
            assert_eq!(
                serde_json::from_value::<Wait>(json).expect("reads back"),
                wait
            );
        }
        // A record an earlier chartseq wrote for an Argo release (kstatus standing in).
        for (tag, wait) in [("status", Wait::Status), ("complete", Wait::Complete)] {
            let stored = serde_json::json!({ "wait": tag });
            assert_eq!(serde_json::from_value::<Wait>(stored).expect("reads"), wait);
        }
    }

    #[test]
    fn kots_waits_only_where_annotated() {
        let stream = [
            doc(
                "StatefulSet",
                "db",
                "\n    kots.io/wait-for-ready: \"true\"",
            ),
            doc("Job", "migrate", "\n    kots.io/wait-for-ready: \"true\""),
            doc(
                "ConfigMap",
                "props",
                "\n    kots.io/wait-for-properties: .status.ready=true,.spec.x=1",
            ),
            doc(
                "Deployment",
                "plain",
                "\n    kots.io/wait-for-ready: \"True\"",
            ),
        ]
        .concat();
        let (model, plan) = planned(&stream, Dialect::Kots);
        assert_eq!(
            waits(&model, &plan),
            [
                "StatefulSet/db=ready (kstatus, Jobs complete)",
                "Job/migrate=exists",
                "ConfigMap/props=properties .status.ready=true,.spec.x=1",
                "Deployment/plain=not waited",
            ]
        );
    }

    #[test]
    fn kots_ready_is_status_for_informed_kinds_and_existence_for_the_rest() {
        assert_eq!(Wait::kots_ready("StatefulSet"), Wait::Status);
        assert_eq!(Wait::kots_ready("PersistentVolumeClaim"), Wait::Status);
        assert_eq!(Wait::kots_ready("Job"), Wait::Exists);
        assert_eq!(Wait::kots_ready("Certificate"), Wait::Exists);
    }

    fn annotated(annotations: &str) -> Model {
        load_stream(
            "s",
            doc("Job", "j", annotations).into_bytes(),
            crate::parse::Limits::default(),
        )
    }

    fn hip_of(annotations: &str) -> Wait {
        let model = annotated(annotations);
        hip(model.resource(0).expect("a resource"))
    }

    #[test]
    fn hip_decides_custom_readiness_only_with_both_sides_and_never_on_a_hook() {
        let success = "\n    helm.sh/readiness-success: '[\"{.succeeded} == 1\"]'";
        let failure = "\n    helm.sh/readiness-failure: '[\"{.failed} >= 1\"]'";
        let Wait::Custom(custom) = hip_of(&format!("{success}{failure}")) else {
            panic!("custom readiness expected");
        };
        assert_eq!(custom.success()[0].text(), "{.succeeded} == 1");
        assert_eq!(custom.failure()[0].text(), "{.failed} >= 1");
        assert_eq!(hip_of(success), Wait::Kstatus);
        assert_eq!(
            hip_of(&format!("{success}\n    helm.sh/readiness-failure: ' '")),
            Wait::Kstatus
        );
        assert_eq!(hip_of(""), Wait::Kstatus);
        let hook = format!("{success}{failure}\n    helm.sh/hook: pre-install");
        assert_eq!(hip_of(&hook), Wait::Complete);
        // The record keeps the expressions as written and reads them back parsed.
        let w = hip_of(&format!("{success}{failure}"));
        let json = serde_json::to_value(&w).expect("serializes");
        assert_eq!(
            json,
            serde_json::json!({"wait": "custom", "pairs":
                {"success": ["{.succeeded} == 1"], "failure": ["{.failed} >= 1"]}})
        );
        assert_eq!(serde_json::from_value::<Wait>(json).expect("reads back"), w);
    }

    #[test]
    fn hip_readiness_that_cannot_be_used_is_unusable_with_the_reason() {
        let failure = "\n    helm.sh/readiness-failure: '[\"{.failed} >= 1\"]'";
        let Wait::Unusable(why) = hip_of(&format!(
            "\n    helm.sh/readiness-success: '{{.succeeded}} == 1'{failure}"
        )) else {
            panic!("unusable expected");
        };
        assert!(why.starts_with("helm.sh/readiness-success: "), "{why}");
        let Wait::Unusable(why) = hip_of(&format!(
            "\n    helm.sh/readiness-success: '[\"{{.succeeded}}==1\"]'{failure}"
        )) else {
            panic!("unusable expected");
        };
        assert!(
            why.starts_with("helm.sh/readiness-success[0]: invalid success expression: "),
            "{why}"
        );
    }

    #[test]
    fn kapp_waits_by_the_first_wait_rule_that_matches_and_records_it() {
        let config = "---\n# Source: c/templates/config.yaml\napiVersion: kapp.k14s.io/v1alpha1\nkind: Config\nmetadata:\n  name: c\nwaitRules:\n- conditionMatchers:\n  - {type: Ready, status: \"True\", success: true}\n  - {type: Ready, status: \"False\", failure: true}\n  resourceMatchers:\n  - apiGroupKindMatcher: {apiGroup: \"\", kind: Pod}\n  - apiGroupKindMatcher: {apiGroup: kappctrl.k14s.io, kind: App}\n- ytt: {funcContractV1: {resource.star: \"\"}}\n  resourceMatchers:\n  - allMatcher: {}\n";
        let app = "---\n# Source: c/templates/app.yaml\napiVersion: kappctrl.k14s.io/v1alpha1\nkind: App\nmetadata:\n  name: app\n";
        let stream = [
            config.to_owned(),
            doc("Pod", "matched", ""),
            doc("Pod", "off", "\n    kapp.k14s.io/disable-wait: \"\""),
            doc("ConfigMap", "ytt", ""),
            app.to_owned(),
        ]
        .concat();
        let (model, plan) = planned(&stream, Dialect::Kapp);
        let got = waits(&model, &plan);
        assert_eq!(
            got[1..4],
            [
                "Pod/matched=kapp wait rule [Ready=True success, Ready=False failure]".to_owned(),
                "Pod/off=not waited".to_owned(),
                "ConfigMap/ytt=unusable readiness: the kapp wait rule at s:14:3 is a ytt rule (Starlark), which chartseq does not evaluate".to_owned(),
            ]
        );
        // kapp-controller's App has kapp's own waiter, ahead of every wait rule.
        assert_eq!(got[4], "App/app=ready (kstatus, Jobs complete)");
        // The record keeps the rule and reads it back; a record without the tag still reads.
        let w = plan.wait_of(&model, 1).expect("a wait").clone();
        let json = serde_json::to_value(&w).expect("serializes");
        assert_eq!(json["wait"], "kapp-conditions");
        assert_eq!(json["pairs"]["conditionMatchers"][0]["type"], "Ready");
        assert_eq!(serde_json::from_value::<Wait>(json).expect("reads back"), w);
        assert_eq!(
            serde_json::from_value::<Wait>(serde_json::json!({"wait": "status"}))
                .expect("an older record"),
            Wait::Status
        );
    }

    #[test]
    fn hip_plans_wait_as_hip_and_waits_serialize_tagged() {
        let (model, plan) = planned(&doc("ConfigMap", "a", ""), Dialect::Hip);
        assert!(plan.waits.is_empty());
        assert_eq!(waits(&model, &plan), ["ConfigMap/a=ready"]);
        let pair = PropertyPair::new(".status.ready", "true").expect("parses");
        let w = Wait::properties(vec![pair]);
        let json = serde_json::to_value(&w).expect("serializes");
        assert_eq!(
            json,
            serde_json::json!({"wait": "properties", "pairs": [[".status.ready", "true"]]})
        );
        assert_eq!(serde_json::from_value::<Wait>(json).expect("reads back"), w);
        assert_eq!(
            serde_json::to_value(Wait::Status).expect("serializes"),
            serde_json::json!({"wait": "status"})
        );
    }
}
