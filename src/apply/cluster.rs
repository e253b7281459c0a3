//! The Kubernetes API as the deployer sees it: the [`Cluster`] trait and its kube-rs
//! implementation, with discovery, server-side apply and retries.
//!
//! Every call that can fail transiently (429, 5xx, a reset connection) is retried with
//! exponential backoff and jitter; a conflict or another 4xx is returned at once, naming the
//! resource and carrying the server's message.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use kube::api::{
    Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams, WatchParams,
};
use kube::core::{ApiResource, WatchEvent};

use super::names;
use serde_json::Value;

/// The field manager of every apply: Helm's own (`helm`, the name it runs under), so that
/// helm and chartseq own a release's fields together and either can upgrade what the other
/// applied without field conflicts.
pub const FIELD_MANAGER: &str = "helm";

/// A resolved resource type: what a URL needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kind {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub namespaced: bool,
}

impl Kind {
    fn api_resource(&self) -> ApiResource {
        ApiResource {
            group: self.group.clone(),
            version: self.version.clone(),
            api_version: if self.group.is_empty() {
                self.version.clone()
            } else {
                format!("{}/{}", self.group, self.version)
            },
            kind: self.kind.clone(),
            plural: self.plural.clone(),
        }
    }
}

/// How a call failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// 429, 5xx, a dropped connection: worth retrying.
    Transient,
    NotFound,
    Conflict,
    /// 410: a watch resourceVersion too old.
    Gone,
    /// Another client error, or a configuration problem.
    Other,
}

#[derive(Clone, Debug, thiserror::Error)]
#[error("{message}")]
pub struct ClusterError {
    pub kind: ErrorKind,
    pub message: String,
}

impl ClusterError {
    pub fn other(message: impl Into<String>) -> Self {
        Self {
            kind: ErrorKind::Other,
            message: message.into(),
        }
    }
}

impl From<kube::Error> for ClusterError {
    fn from(e: kube::Error) -> Self {
        match &e {
            kube::Error::Api(status) => {
                let kind = match status.code {
                    404 => ErrorKind::NotFound,
                    409 => ErrorKind::Conflict,
                    410 => ErrorKind::Gone,
                    // The API server answers 500 when the object does not fit its schema for
                    // server-side apply (a boolean where a string goes): the same object
                    // fails the same way however often it is sent.
                    500 if status
                        .message
                        .contains("failed to create typed patch object") =>
                    {
                        ErrorKind::Other
                    }
                    429 | 500..=599 => ErrorKind::Transient,
                    _ => ErrorKind::Other,
                };
                let message = if status.message.is_empty() {
                    format!("{} ({})", status.reason, status.code)
                } else {
                    status.message.clone()
                };
                Self { kind, message }
            }
            kube::Error::HyperError(_) | kube::Error::Service(_) | kube::Error::ReadEvents(_) => {
                Self {
                    kind: ErrorKind::Transient,
                    message: with_causes(&e),
                }
            }
            _ => Self::other(with_causes(&e)),
        }
    }
}

/// An error and its causes (`client error (Connect): tcp connect error: Connection refused`):
/// kube's own message rarely says what went wrong underneath.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        cause = c.source();
    }
    message
}

pub type Result<T, E = ClusterError> = std::result::Result<T, E>;
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 'a>>;

/// One watch event, as JSON.
#[derive(Clone, Debug)]
pub enum Change {
    Applied(Value),
    Deleted(Value),
    /// A bookmark: progress without a change.
    Bookmark(String),
}

/// Options of one apply request.
#[derive(Clone, Copy, Debug, Default)]
pub struct ApplyOptions {
    pub force: bool,
    pub dry_run: bool,
}

/// What the deployer needs from a cluster.
pub trait Cluster: Send + Sync {
    /// The resource type of `apiVersion` + `kind`; `refresh` forgets what was discovered
    /// before (after a CRD became established).
    fn resolve<'a>(
        &'a self,
        api_version: &'a str,
        kind: &'a str,
        refresh: bool,
    ) -> BoxFuture<'a, Kind>;
    fn apply<'a>(
        &'a self,
        kind: &'a Kind,
        namespace: Option<&'a str>,
        object: &'a Value,
        options: ApplyOptions,
    ) -> BoxFuture<'a, Value>;
    fn get<'a>(
        &'a self,
        kind: &'a Kind,
        namespace: Option<&'a str>,
        name: &'a str,
    ) -> BoxFuture<'a, Option<Value>>;
    /// Creates an object (POST); one that exists already is a [`ErrorKind::Conflict`].
    fn create<'a>(
        &'a self,
        kind: &'a Kind,
        namespace: Option<&'a str>,
        object: &'a Value,
    ) -> BoxFuture<'a, Value>;
    /// Replaces an object whole (PUT), as Helm's storage updates a revision.
    fn replace<'a>(
        &'a self,
        kind: &'a Kind,
        namespace: Option<&'a str>,
        name: &'a str,
        object: &'a Value,
    ) -> BoxFuture<'a, Value>;
    /// Whether the object existed. With `uid`, only that very object is deleted (a
    /// precondition): one recreated since it was judged is left alone (a conflict).
    fn delete<'a>(
        &'a self,
        kind: &'a Kind,
        namespace: Option<&'a str>,
        name: &'a str,
        uid: Option<&'a str>,
    ) -> BoxFuture<'a, bool>;
    /// The objects and the list's resourceVersion.
    fn list<'a>(
        &'a self,
        kind: &'a Kind,
        namespace: Option<&'a str>,
        labels: &'a str,
    ) -> BoxFuture<'a, (Vec<Value>, String)>;
    fn watch<'a>(
        &'a self,
        kind: &'a Kind,
        namespace: Option<&'a str>,
        resource_version: &'a str,
    ) -> BoxFuture<'a, BoxStream<'static, Result<Change>>>;
    /// The resource type a kubectl type names (`secret`, `deployments`, `deployment.apps`,
    /// `deployments.v1.apps`): its plural or lower-case kind, in the group-version given, else
    /// in the group's preferred version, else in the built-in groups (core first).
    fn resolve_resource<'a>(
        &'a self,
        resource: &'a str,
        version: Option<&'a str>,
        group: Option<&'a str>,
    ) -> BoxFuture<'a, Kind> {
        let _ = (version, group);
        Box::pin(async move {
            Err(ClusterError {
                kind: ErrorKind::NotFound,
                message: format!("cannot resolve the resource type {resource:?}"),
            })
        })
    }
}

/// Where an unqualified kubectl type is looked for, in order (the groups a cluster always
/// serves).
const BUILT_IN_GROUP_VERSIONS: &[&str] = &[
    "v1",
    "apps/v1",
    "batch/v1",
    "networking.k8s.io/v1",
    "rbac.authorization.k8s.io/v1",
    "policy/v1",
    "autoscaling/v2",
    "storage.k8s.io/v1",
    "apiextensions.k8s.io/v1",
    "admissionregistration.k8s.io/v1",
    "scheduling.k8s.io/v1",
    "coordination.k8s.io/v1",
    "discovery.k8s.io/v1",
    "certificates.k8s.io/v1",
];

/// Retries a call while it fails transiently: backoff from 50 ms doubling to 2 s, with
/// jitter, up to 10 attempts.
pub async fn retry<T, F, Fut>(mut call: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let mut delay = Duration::from_millis(50);
    let mut attempt = 0u32;
    loop {
        match call().await {
            Err(e) if e.kind == ErrorKind::Transient && attempt < 10 => {
                attempt += 1;
                tokio::time::sleep(delay + jitter(delay)).await;
                delay = (delay * 2).min(Duration::from_secs(2));
            }
            other => return other,
        }
    }
}

/// Up to half of `d`, from the clock's low bits (no RNG dependency; enough to spread
/// concurrent retries).
fn jitter(d: Duration) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |t| t.subsec_nanos());
    let half = d.as_millis().max(2) / 2;
    Duration::from_millis(u64::try_from(u128::from(nanos) % half).unwrap_or(0))
}

/// The kube-rs implementation.
pub struct KubeCluster {
    client: kube::Client,
    /// Resource lists by group-version.
    discovered: Mutex<BTreeMap<String, Arc<Vec<Kind>>>>,
}

/// How to reach the cluster: a kubeconfig and what overrides it (helm's `--kube-*` flags).
#[derive(Clone, Debug, Default)]
pub struct Connection {
    pub kubeconfig: Option<std::path::PathBuf>,
    pub context: Option<String>,
    /// `--kube-apiserver`: the API server's address instead of the context's.
    pub server: Option<String>,
    /// `--kube-token`: a bearer token instead of the context's credentials.
    pub token: Option<String>,
    /// `--kube-insecure-skip-tls-verify`.
    pub insecure: bool,
}

impl KubeCluster {
    pub async fn connect(conn: &Connection) -> Result<Self> {
        let options = kube::config::KubeConfigOptions {
            context: conn.context.clone(),
            ..Default::default()
        };
        let config = match &conn.kubeconfig {
            Some(path) => {
                let kc = kube::config::Kubeconfig::read_from(path).map_err(|e| {
                    ClusterError::other(format!("reading kubeconfig {}: {e}", path.display()))
                })?;
                kube::Config::from_custom_kubeconfig(kc, &options)
                    .await
                    .map_err(|e| {
                        ClusterError::other(format!("kubeconfig {}: {e}", path.display()))
                    })?
            }
            None => kube::Config::from_kubeconfig(&options)
                .await
                .map_err(|e| ClusterError::other(format!("no usable kubeconfig: {e}")))?,
        };
        let mut config = config;
        if let Some(server) = &conn.server {
            config.cluster_url = server.parse().map_err(|e| {
                ClusterError::other(format!("--kube-apiserver {server:?} is not a URL: {e}"))
            })?;
        }
        if let Some(token) = &conn.token {
            config.auth_info.token = Some(token.clone().into());
            config.auth_info.token_file = None;
        }
        if conn.insecure {
            config.accept_invalid_certs = true;
        }
        let url = config.cluster_url.to_string();
        let client = kube::Client::try_from(config)
            .map_err(|e| ClusterError::other(format!("kubernetes client: {e}")))?;
        // One cheap request first, so that a wrong address fails at once and says where it
        // looked (a dropped connection is still retried, briefly).
        let mut attempt = 0;
        loop {
            match client.apiserver_version().await.map_err(ClusterError::from) {
                Err(e) if e.kind == ErrorKind::Transient && attempt < 3 => {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(100 << attempt)).await;
                }
                Err(e) if e.kind == ErrorKind::Transient => {
                    return Err(ClusterError {
                        message: format!("cannot reach the Kubernetes API server at {url}: {e}"),
                        kind: e.kind,
                    });
                }
                // Answered, even if it refused this request (a cluster that keeps /version
                // private): the operation itself will say what is wrong.
                Ok(_) | Err(_) => break,
            }
        }
        Ok(Self {
            client,
            discovered: Mutex::new(BTreeMap::new()),
        })
    }

    /// The requests' URL for a type and namespace. kube-rs puts the namespace and the names
    /// into the path as they are: each goes through [`names`] first, so that no text reaches
    /// a path unchecked (a `/`, `..` or `?` would address another object).
    fn api(&self, kind: &Kind, namespace: Option<&str>) -> Result<Api<DynamicObject>> {
        let ar = kind.api_resource();
        Ok(match (kind.namespaced, namespace) {
            (true, Some(ns)) => {
                let ns = names::namespace_segment(ns).map_err(ClusterError::other)?;
                Api::namespaced_with(self.client.clone(), ns, &ar)
            }
            _ => Api::all_with(self.client.clone(), &ar),
        })
    }

    async fn group_version(&self, api_version: &str, refresh: bool) -> Result<Arc<Vec<Kind>>> {
        if !refresh {
            if let Some(found) = self.lock().get(api_version) {
                return Ok(found.clone());
            }
        }
        if let Some(why) = names::check_api_version(api_version) {
            return Err(ClusterError::other(why));
        }
        let list = retry(|| async {
            if api_version.contains('/') {
                self.client.list_api_group_resources(api_version).await
            } else {
                self.client.list_core_api_resources(api_version).await
            }
            .map_err(ClusterError::from)
        })
        .await;
        let list = match list {
            Ok(l) => l,
            Err(e) if e.kind == ErrorKind::NotFound => {
                return Ok(Arc::new(Vec::new()));
            }
            Err(e) => return Err(e),
        };
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let kinds: Vec<Kind> = list
            .resources
            .iter()
            .filter(|r| !r.name.contains('/'))
            .map(|r| Kind {
                group: group.to_owned(),
                version: version.to_owned(),
                kind: r.kind.clone(),
                plural: r.name.clone(),
                namespaced: r.namespaced,
            })
            .collect();
        let kinds = Arc::new(kinds);
        self.lock().insert(api_version.to_owned(), kinds.clone());
        Ok(kinds)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Arc<Vec<Kind>>>> {
        self.discovered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A name as a URL path segment (see [`names::segment`]).
fn name_segment(name: &str) -> Result<std::borrow::Cow<'_, str>> {
    names::segment(name).map_err(ClusterError::other)
}

/// An object to send whole (create, replace).
fn dynamic(object: &Value) -> Result<DynamicObject> {
    serde_json::from_value(object.clone())
        .map_err(|e| ClusterError::other(format!("not a Kubernetes object: {e}")))
}

/// An object as JSON, with the `apiVersion` and `kind` it was asked for where the server left
/// them out: a real API server omits them on every item of a list, and the readiness rules
/// judge an object by its kind.
fn to_json(kind: &Kind, obj: &DynamicObject) -> Value {
    let mut value = serde_json::to_value(obj).unwrap_or(Value::Null);
    if let Some(map) = value.as_object_mut() {
        map.entry("apiVersion").or_insert_with(|| {
            Value::String(if kind.group.is_empty() {
                kind.version.clone()
            } else {
                format!("{}/{}", kind.group, kind.version)
            })
        });
        map.entry("kind")
            .or_insert_with(|| Value::String(kind.kind.clone()));
    }
    value
}

impl KubeCluster {
    /// The preferred version of an API group, from the server's group list.
    async fn preferred_version(&self, group: &str) -> Result<Option<String>> {
        let groups = retry(|| async {
            self.client
                .list_api_groups()
                .await
                .map_err(ClusterError::from)
        })
        .await?;
        Ok(groups
            .groups
            .into_iter()
            .find(|g| g.name == group)
            .and_then(|g| {
                g.preferred_version
                    .map(|v| v.version)
                    .or_else(|| g.versions.first().map(|v| v.version.clone()))
            }))
    }
}

impl Cluster for KubeCluster {
    fn resolve_resource<'a>(
        &'a self,
        resource: &'a str,
        version: Option<&'a str>,
        group: Option<&'a str>,
    ) -> BoxFuture<'a, Kind> {
        Box::pin(async move {
            let wanted = resource.to_ascii_lowercase();
            let candidates: Vec<String> = match (group, version) {
                (Some(g), Some(v)) => vec![format!("{g}/{v}")],
                (Some(g), None) => self
                    .preferred_version(g)
                    .await?
                    .map(|v| format!("{g}/{v}"))
                    .into_iter()
                    .collect(),
                (None, _) => BUILT_IN_GROUP_VERSIONS
                    .iter()
                    .map(|gv| (*gv).to_owned())
                    .collect(),
            };
            for gv in &candidates {
                let kinds = self.group_version(gv, false).await?;
                if let Some(k) = kinds
                    .iter()
                    .find(|k| k.plural == wanted || k.kind.to_ascii_lowercase() == wanted)
                {
                    return Ok(k.clone());
                }
            }
            Err(ClusterError {
                kind: ErrorKind::NotFound,
                message: format!("the server has no resource type {resource:?}"),
            })
        })
    }

    fn resolve<'a>(
        &'a self,
        api_version: &'a str,
        kind: &'a str,
        refresh: bool,
    ) -> BoxFuture<'a, Kind> {
        Box::pin(async move {
            let kinds = self.group_version(api_version, refresh).await?;
            if let Some(k) = kinds.iter().find(|k| k.kind == kind) {
                return Ok(k.clone());
            }
            // A CRD created in this release may have been established since the last look.
            let kinds = self.group_version(api_version, true).await?;
            kinds
                .iter()
                .find(|k| k.kind == kind)
                .cloned()
                .ok_or_else(|| ClusterError {
                    kind: ErrorKind::NotFound,
                    message: format!(
                        "the server has no resource type for kind {kind} in {api_version}"
                    ),
                })
        })
    }

    fn apply<'a>(
        &'a self,
        kind: &'a Kind,
        namespace: Option<&'a str>,
        object: &'a Value,
        options: ApplyOptions,
    ) -> BoxFuture<'a, Value> {
        Box::pin(async move {
            let name = object["metadata"]["name"].as_str().unwrap_or_default();
            let name = name_segment(name)?;
            let api = self.api(kind, namespace)?;
            let mut params = PatchParams::apply(FIELD_MANAGER);
            if options.force {
                params = params.force();
            }
            params.dry_run = options.dry_run;
            retry(|| async {
                api.patch(&name, &params, &Patch::Apply(object))
                    .await
                    .map_err(ClusterError::from)
            })
            .await
            .map(|o| to_json(kind, &o))
        })
    }

    fn get<'a>(
        &'a self,
        kind: &'a Kind,
        namespace: Option<&'a str>,
        name: &'a str,
    ) -> BoxFuture<'a, Option<Value>> {
        Box::pin(async move {
            let api = self.api(kind, namespace)?;
            let name = name_segment(name)?;
            retry(|| async { api.get_opt(&name).await.map_err(ClusterError::from) })
                .await
                .map(|o| o.as_ref().map(|o| to_json(kind, o)))
        })
    }

    fn create<'a>(
        &'a self,
        kind: &'a Kind,
        namespace: Option<&'a str>,
        object: &'a Value,
    ) -> BoxFuture<'a, Value> {
        Box::pin(async move {
            let api = self.api(kind, namespace)?;
            let object = dynamic(object)?;
            retry(|| async {
                api.create(&PostParams::default(), &object)
                    .await
                    .map_err(ClusterError::from)
            })
            .await
            .map(|o| to_json(kind, &o))
        })
    }

    fn replace<'a>(
        &'a self,
        kind: &'a Kind,
        namespace: Option<&'a str>,
        name: &'a str,
        object: &'a Value,
    ) -> BoxFuture<'a, Value> {
        Box::pin(async move {
            let api = self.api(kind, namespace)?;
            let name = name_segment(name)?;
            let object = dynamic(object)?;
            retry(|| async {
                api.replace(&name, &PostParams::default(), &object)
                    .await
                    .map_err(ClusterError::from)
            })
            .await
            .map(|o| to_json(kind, &o))
        })
    }

    fn delete<'a>(
        &'a self,
        kind: &'a Kind,
        namespace: Option<&'a str>,
        name: &'a str,
        uid: Option<&'a str>,
    ) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            let api = self.api(kind, namespace)?;
            let name = name_segment(name)?;
            let mut params = DeleteParams::background();
            if let Some(uid) = uid {
                params = params.preconditions(kube::api::Preconditions {
                    uid: Some(uid.to_owned()),
                    resource_version: None,
                });
            }
            match retry(|| async { api.delete(&name, &params).await.map_err(ClusterError::from) })
                .await
            {
                Ok(_) => Ok(true),
                Err(e) if e.kind == ErrorKind::NotFound => Ok(false),
                Err(e) => Err(e),
            }
        })
    }

    fn list<'a>(
        &'a self,
        kind: &'a Kind,
        namespace: Option<&'a str>,
        labels: &'a str,
    ) -> BoxFuture<'a, (Vec<Value>, String)> {
        Box::pin(async move {
            let api = self.api(kind, namespace)?;
            let params = if labels.is_empty() {
                ListParams::default()
            } else {
                ListParams::default().labels(labels)
            };
            let list =
                retry(|| async { api.list(&params).await.map_err(ClusterError::from) }).await?;
            let rv = list.metadata.resource_version.clone().unwrap_or_default();
            Ok((list.items.iter().map(|o| to_json(kind, o)).collect(), rv))
        })
    }

    fn watch<'a>(
        &'a self,
        kind: &'a Kind,
        namespace: Option<&'a str>,
        resource_version: &'a str,
    ) -> BoxFuture<'a, BoxStream<'static, Result<Change>>> {
        Box::pin(async move {
            let api = self.api(kind, namespace)?;
            let params = WatchParams::default().timeout(290);
            let stream = retry(|| async {
                api.watch(&params, resource_version)
                    .await
                    .map_err(ClusterError::from)
            })
            .await?;
            let kind = kind.clone();
            let mapped = stream.map(move |event| match event {
                Ok(WatchEvent::Added(o) | WatchEvent::Modified(o)) => {
                    Ok(Change::Applied(to_json(&kind, &o)))
                }
                Ok(WatchEvent::Deleted(o)) => Ok(Change::Deleted(to_json(&kind, &o))),
                Ok(WatchEvent::Bookmark(b)) => Ok(Change::Bookmark(b.metadata.resource_version)),
                Ok(WatchEvent::Error(status)) => Err(ClusterError::from(kube::Error::Api(status))),
                Err(e) => Err(ClusterError::from(e)),
            });
            Ok(mapped.boxed())
        })
    }
}
