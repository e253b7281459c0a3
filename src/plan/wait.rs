//! What `apply` waits for, per resource: the wait policy a dialect planner fills in beside its
//! steps ([`super::Plan::waits`], [`super::Plan::external`]) so that `apply --dialect` waits
//! where and as that tool waits, with the one readiness engine.
//!
//! A plan's steps say *when* a resource may be applied (after the steps it waits for are
//! done); its wait says what "done" means for that resource. A resource with no entry in
//! `waits` gets [`Wait::Ready`], HIP-0025's rule, so a planner that fills nothing waits as
//! HIP does. What each tool waits for:
//!
//! - werf/nelm (DIALECTS.md §1.5): every resource of a weight before the next weight, as
//!   kubedog tracks it ([`Wait::Status`]; hooks [`Wait::Complete`]);
//!   `werf.io/track-termination-mode: NonBlocking` is [`Wait::None`]; external dependencies
//!   must exist before the resource is applied ([`External`]).
//! - Argo CD (§2.4): hooks run to completion; other resources healthy before the next wave,
//!   except in the last wave when it holds no hook, or when the sync has a single wave.
//! - KOTS (§4.2): nothing unless annotated: `kots.io/wait-for-ready: "true"` is
//!   [`Wait::kots_ready`] ([`Wait::Status`] for the kinds KOTS has a status informer for,
//!   [`Wait::Exists`] for every other kind); `kots.io/wait-for-properties` is
//!   [`Wait::Properties`]; the rest [`Wait::None`]. KOTS applies one object at a time and a
//!   wait holds back everything after it: the steps say that, the waits say what is awaited.
//! - kapp (§3.3): [`Wait::Status`]; `kapp.k14s.io/disable-wait` is [`Wait::None`]; an object
//!   marked `kapp.k14s.io/exists` is never applied (`not_installed`) and becomes an
//!   [`External`] of the resources ordered after it.
//! - the draft HIP: [`Wait::Ready`], as HIP-0025 (no entry needed).
//!
//! `crds/` documents are Helm's whatever the dialect: created first, waited established.

use serde::{Deserialize, Serialize};

/// How `apply` waits for one resource once it is applied.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "wait", content = "pairs")]
pub enum Wait {
    /// HIP-0025: custom readiness expressions when both annotations are set, else kstatus; a
    /// Helm hook runs to completion.
    #[default]
    Ready,
    /// kstatus alone (the tool reads no HIP readiness annotations), a Job only once it is
    /// Complete: how werf (kubedog), Argo CD (health) and kapp wait for a workload.
    Status,
    /// Run to completion (a hook): a Job Complete, a Pod Succeeded, other kinds by kstatus.
    Complete,
    /// Exists: nothing about its state.
    Exists,
    /// Every `path=value` pair holds, each path read on the whole object and printed as
    /// kubectl prints it, compared as exact text (KOTS `kots.io/wait-for-properties`).
    Properties(Vec<(String, String)>),
    /// Applied, never waited for.
    None,
}

impl Wait {
    /// A short word for progress output and docs.
    #[must_use]
    pub fn describe(&self) -> String {
        match self {
            Wait::Ready => "ready".to_owned(),
            Wait::Status => "ready (kstatus, Jobs complete)".to_owned(),
            Wait::Complete => "complete".to_owned(),
            Wait::Exists => "exists".to_owned(),
            Wait::Properties(pairs) => {
                let pairs: Vec<String> = pairs.iter().map(|(p, v)| format!("{p}={v}")).collect();
                format!("properties {}", pairs.join(","))
            }
            Wait::None => "not waited".to_owned(),
        }
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
                    plan.wait_of(d).describe()
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
                "Namespace/ns=ready (kstatus, Jobs complete)",
                "Pod/app=ready (kstatus, Jobs complete)",
                "Pod/bg=not waited",
                "Pod/migrate=complete",
                "ConfigMap/uses=ready (kstatus, Jobs complete)",
            ]
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
            doc("ConfigMap", "w0", ""),
            doc(
                "ConfigMap",
                "w1",
                "\n    argocd.argoproj.io/sync-wave: \"1\"",
            ),
        ]
        .concat();
        let (model, plan) = planned(&stream, Dialect::Argo);
        assert_eq!(
            waits(&model, &plan),
            [
                "Pod/pre=complete",
                "ConfigMap/w0=ready (kstatus, Jobs complete)",
                "ConfigMap/w1=not waited",
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
                "ConfigMap/w1=ready (kstatus, Jobs complete)".to_owned(),
                "Pod/post=complete".to_owned()
            ]
        );
        // A sync of one wave waits for nothing but its hooks.
        let (model, plan) = planned(&doc("ConfigMap", "only", ""), Dialect::Argo);
        assert_eq!(waits(&model, &plan), ["ConfigMap/only=not waited"]);
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

    #[test]
    fn hip_plans_wait_as_hip_and_waits_serialize_tagged() {
        let (model, plan) = planned(&doc("ConfigMap", "a", ""), Dialect::Hip);
        assert!(plan.waits.is_empty());
        assert_eq!(waits(&model, &plan), ["ConfigMap/a=ready"]);
        let w = Wait::Properties(vec![(".status.ready".into(), "true".into())]);
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
