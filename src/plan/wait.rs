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
//!   [`Wait::Status`] for the kinds KOTS has a status informer for and [`Wait::Exists`] for
//!   every other kind; `kots.io/wait-for-properties` is [`Wait::Properties`]; the rest
//!   [`Wait::None`].
//! - kapp (§3.3): [`Wait::Status`]; `kapp.k14s.io/disable-wait` is [`Wait::None`].

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
