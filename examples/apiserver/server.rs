//! A Kubernetes API server for tests: the subset `chartseq apply` and `kubectl` use.
//!
//! Discovery (`/api`, `/apis`, group-version resource lists, `/version`), get, list (field
//! selector `metadata.name`, equality label selectors), watch (resumable from a
//! resourceVersion), delete, server-side apply with field managers and conflicts, the status
//! subresource, resourceVersion and generation. Simulated controllers make workloads ready
//! after a delay a scenario file sets; faults (error rate, slow responses, watch drops) are
//! injected on request. Everything lives in memory behind one lock that is never held across
//! an await.
#![expect(
    clippy::too_many_lines,
    clippy::match_same_arms,
    clippy::similar_names,
    clippy::result_large_err,
    clippy::unused_self,
    clippy::needless_pass_by_value,
    clippy::doc_markdown,
    clippy::single_match_else,
    clippy::cast_precision_loss,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    reason = "test support that mirrors the API's shapes; readability over pedantry here"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Frame, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc};

type Body = UnsyncBoxBody<Bytes, Infallible>;

/// What the simulated controllers and the fault injector do (YAML or JSON file).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Scenario {
    /// Delay before a workload without an entry becomes ready (default 50 ms).
    pub default_delay_ms: Option<u64>,
    /// Delay between a delete request and the object being gone (default 0).
    pub delete_delay_ms: Option<u64>,
    #[serde(default)]
    pub resources: Vec<ResourceScenario>,
    #[serde(default)]
    pub faults: Faults,
}

/// One object's simulated behaviour, matched by kind and name (and namespace when given).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceScenario {
    pub kind: String,
    pub name: String,
    pub namespace: Option<String>,
    /// Milliseconds after each apply until it is ready (or failed).
    pub ready_after_ms: Option<u64>,
    /// Never becomes ready.
    #[serde(default)]
    pub never: bool,
    /// Fails instead (Job `Failed`, Deployment `ProgressDeadlineExceeded`, Pod `Failed`).
    #[serde(default)]
    pub fail: bool,
    /// For any kind: `.status` set to `value` `afterMs` after creation.
    #[serde(default)]
    pub status: Vec<TimedStatus>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TimedStatus {
    pub after_ms: u64,
    pub value: Value,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Faults {
    /// Fraction (0–1) of non-watch requests answered with 500, 503 or 429 and no effect.
    #[serde(default)]
    pub error_rate: f64,
    /// Added latency on every response.
    #[serde(default)]
    pub slow_ms: u64,
    /// Watches are cut after this many milliseconds.
    pub watch_drop_ms: Option<u64>,
    /// Seed of the fault generator (deterministic runs).
    #[serde(default)]
    pub seed: u64,
}

impl Scenario {
    /// Reads a scenario from YAML (or JSON) text.
    pub fn parse(text: &str) -> Result<Self, String> {
        let node = chartseq::parse::parse_document(text, 0, chartseq::parse::Limits::default())
            .map_err(|e| format!("scenario: {} (byte {})", e.message, e.offset))?;
        let json = node.map_or_else(|| json!({}), |n| n.to_json());
        serde_json::from_value(json).map_err(|e| format!("scenario: {e}"))
    }

    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        Self::parse(&text)
    }

    fn entry(&self, kind: &str, ns: Option<&str>, name: &str) -> Option<&ResourceScenario> {
        self.resources.iter().find(|r| {
            r.kind == kind
                && r.name == name
                && (r.namespace.is_none() || r.namespace.as_deref() == ns)
        })
    }
}

/// A served resource type.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceType {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub namespaced: bool,
    /// Has a status subresource: apply to the main resource ignores `.status`.
    pub status: bool,
    /// Registered by a CustomResourceDefinition (by its name).
    pub crd: Option<String>,
}

impl ResourceType {
    fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

fn builtin_types() -> Vec<ResourceType> {
    let t =
        |group: &str, version: &str, kind: &str, plural: &str, namespaced: bool, status: bool| {
            ResourceType {
                group: group.into(),
                version: version.into(),
                kind: kind.into(),
                plural: plural.into(),
                namespaced,
                status,
                crd: None,
            }
        };
    vec![
        t("", "v1", "Namespace", "namespaces", false, true),
        t("", "v1", "ConfigMap", "configmaps", true, false),
        t("", "v1", "Secret", "secrets", true, false),
        t("", "v1", "Service", "services", true, true),
        t("", "v1", "ServiceAccount", "serviceaccounts", true, false),
        t("", "v1", "Pod", "pods", true, true),
        t(
            "",
            "v1",
            "PersistentVolumeClaim",
            "persistentvolumeclaims",
            true,
            true,
        ),
        t(
            "",
            "v1",
            "PersistentVolume",
            "persistentvolumes",
            false,
            true,
        ),
        t("", "v1", "ResourceQuota", "resourcequotas", true, true),
        t("", "v1", "LimitRange", "limitranges", true, false),
        t(
            "",
            "v1",
            "ReplicationController",
            "replicationcontrollers",
            true,
            true,
        ),
        t("", "v1", "Endpoints", "endpoints", true, false),
        t("apps", "v1", "Deployment", "deployments", true, true),
        t("apps", "v1", "StatefulSet", "statefulsets", true, true),
        t("apps", "v1", "DaemonSet", "daemonsets", true, true),
        t("apps", "v1", "ReplicaSet", "replicasets", true, true),
        t("batch", "v1", "Job", "jobs", true, true),
        t("batch", "v1", "CronJob", "cronjobs", true, true),
        t(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            false,
            true,
        ),
        t(
            "rbac.authorization.k8s.io",
            "v1",
            "Role",
            "roles",
            true,
            false,
        ),
        t(
            "rbac.authorization.k8s.io",
            "v1",
            "RoleBinding",
            "rolebindings",
            true,
            false,
        ),
        t(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRole",
            "clusterroles",
            false,
            false,
        ),
        t(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRoleBinding",
            "clusterrolebindings",
            false,
            false,
        ),
        t(
            "networking.k8s.io",
            "v1",
            "Ingress",
            "ingresses",
            true,
            true,
        ),
        t(
            "networking.k8s.io",
            "v1",
            "IngressClass",
            "ingressclasses",
            false,
            false,
        ),
        t(
            "networking.k8s.io",
            "v1",
            "NetworkPolicy",
            "networkpolicies",
            true,
            false,
        ),
        t(
            "policy",
            "v1",
            "PodDisruptionBudget",
            "poddisruptionbudgets",
            true,
            true,
        ),
        t(
            "scheduling.k8s.io",
            "v1",
            "PriorityClass",
            "priorityclasses",
            false,
            false,
        ),
        t(
            "storage.k8s.io",
            "v1",
            "StorageClass",
            "storageclasses",
            false,
            false,
        ),
        t(
            "autoscaling",
            "v2",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            true,
            true,
        ),
        t(
            "admissionregistration.k8s.io",
            "v1",
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
            false,
            false,
        ),
        t(
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
            false,
            false,
        ),
    ]
}

/// Where an object is stored: group, plural, namespace, name.
type Key = (String, String, Option<String>, String);

/// A field path inside an object, for field ownership.
type FieldPath = Vec<String>;

struct Stored {
    object: Value,
    /// Field manager → the leaf paths it applied.
    managers: BTreeMap<String, BTreeSet<FieldPath>>,
}

/// One watch event as the history keeps it.
#[derive(Clone, Debug)]
pub struct Event {
    pub rv: u64,
    pub group: String,
    pub plural: String,
    pub namespace: Option<String>,
    pub kind: &'static str,
    pub object: Value,
}

/// One write (or readiness transition) the server saw, for tests to check ordering.
#[derive(Clone, Debug, PartialEq)]
pub struct LogEntry {
    /// Milliseconds since the server started.
    pub at_ms: u64,
    /// `apply`, `delete`, `gone` or `ready`.
    pub verb: &'static str,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub dry_run: bool,
}

/// Counters for the benchmark.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    /// Every request, watches included.
    pub requests: u64,
    pub watches: u64,
    pub applies: u64,
    pub injected_faults: u64,
}

struct State {
    types: Vec<ResourceType>,
    objects: BTreeMap<Key, Stored>,
    rv: u64,
    history: Vec<Arc<Event>>,
    log: Vec<LogEntry>,
    counters: Counters,
    rng: u64,
}

/// The server's shared state.
pub struct Server {
    state: Mutex<State>,
    events: broadcast::Sender<Arc<Event>>,
    scenario: Scenario,
    started: Instant,
}

impl Server {
    pub fn new(scenario: Scenario) -> Arc<Self> {
        let (events, _) = broadcast::channel(65_536);
        let server = Arc::new(Self {
            state: Mutex::new(State {
                types: builtin_types(),
                objects: BTreeMap::new(),
                rv: 1,
                history: Vec::new(),
                log: Vec::new(),
                counters: Counters::default(),
                rng: scenario.faults.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            }),
            events,
            scenario,
            started: Instant::now(),
        });
        for ns in ["default", "kube-system", "kube-public"] {
            let mut st = server.lock();
            let ty = st.types[0].clone();
            let obj = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "uid": format!("00000000-0000-4000-8000-ns{ns:0>10.10}"), "creationTimestamp": now_rfc3339()}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}});
            server.store(&mut st, &ty, None, ns, obj, BTreeMap::new(), true);
        }
        server
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Every write seen so far.
    pub fn log(&self) -> Vec<LogEntry> {
        self.lock().log.clone()
    }

    pub fn counters(&self) -> Counters {
        self.lock().counters
    }

    /// Every stored object (namespaces included), as `Kind/namespace/name`.
    pub fn object_names(&self) -> Vec<String> {
        self.lock()
            .objects
            .values()
            .map(|s| {
                let m = &s.object["metadata"];
                format!(
                    "{}/{}/{}",
                    s.object["kind"].as_str().unwrap_or_default(),
                    m["namespace"].as_str().unwrap_or_default(),
                    m["name"].as_str().unwrap_or_default()
                )
            })
            .collect()
    }

    /// A stored object by kind, namespace and name.
    pub fn object(&self, kind: &str, namespace: Option<&str>, name: &str) -> Option<Value> {
        self.lock()
            .objects
            .iter()
            .find(|((_, _, ns, n), s)| {
                n == name && ns.as_deref() == namespace && s.object["kind"] == kind
            })
            .map(|(_, s)| s.object.clone())
    }

    /// Removes an object as an out-of-band deletion would (a person, a controller); whether
    /// it existed.
    pub fn remove(&self, kind: &str, namespace: Option<&str>, name: &str) -> bool {
        let mut st = self.lock();
        let Some(ty) = st.types.iter().find(|t| t.kind == kind).cloned() else {
            return false;
        };
        let existed = st.objects.contains_key(&(
            ty.group.clone(),
            ty.plural.clone(),
            namespace.map(str::to_owned),
            name.to_owned(),
        ));
        remove_object(self, &mut st, &ty, namespace, name);
        existed
    }

    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn record(&self, st: &mut State, verb: &'static str, obj: &Value, dry_run: bool) {
        let at_ms = self.elapsed_ms();
        st.log.push(LogEntry {
            at_ms,
            verb,
            kind: obj["kind"].as_str().unwrap_or_default().to_owned(),
            namespace: obj["metadata"]["namespace"].as_str().map(str::to_owned),
            name: obj["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            dry_run,
        });
    }

    /// Stores an object, bumping resourceVersion, and tells watchers.
    #[expect(clippy::too_many_arguments, reason = "one internal call shape")]
    fn store(
        &self,
        st: &mut State,
        ty: &ResourceType,
        ns: Option<&str>,
        name: &str,
        mut object: Value,
        managers: BTreeMap<String, BTreeSet<FieldPath>>,
        created: bool,
    ) -> Value {
        st.rv += 1;
        let rv = st.rv;
        object["metadata"]["resourceVersion"] = json!(rv.to_string());
        object["metadata"]["managedFields"] = managed_fields(&managers, &ty.api_version());
        if object["metadata"]["managedFields"]
            .as_array()
            .is_some_and(Vec::is_empty)
        {
            if let Some(m) = object["metadata"].as_object_mut() {
                m.remove("managedFields");
            }
        }
        let key = (
            ty.group.clone(),
            ty.plural.clone(),
            ns.map(str::to_owned),
            name.to_owned(),
        );
        st.objects.insert(
            key,
            Stored {
                object: object.clone(),
                managers,
            },
        );
        self.emit(
            st,
            ty,
            ns,
            if created { "ADDED" } else { "MODIFIED" },
            object.clone(),
        );
        object
    }

    fn emit(
        &self,
        st: &mut State,
        ty: &ResourceType,
        ns: Option<&str>,
        kind: &'static str,
        object: Value,
    ) {
        let event = Arc::new(Event {
            rv: st.rv,
            group: ty.group.clone(),
            plural: ty.plural.clone(),
            namespace: ns.map(str::to_owned),
            kind,
            object,
        });
        st.history.push(event.clone());
        let _ = self.events.send(event);
    }

    fn random(&self, st: &mut State) -> f64 {
        // xorshift64*: deterministic per seed, no dependency.
        let mut x = st.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        st.rng = x;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A running server: its address and state.
pub struct Handle {
    pub addr: SocketAddr,
    pub server: Arc<Server>,
    pub kubeconfig: PathBuf,
}

/// Writes a kubeconfig that points at `addr` into `dir`.
pub fn write_kubeconfig(dir: &Path, addr: SocketAddr) -> std::io::Result<PathBuf> {
    let path = dir.join(format!("apiserver-{}.kubeconfig", addr.port()));
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: chartseq-test\n  cluster:\n    server: http://{addr}\ncontexts:\n- name: chartseq-test\n  context:\n    cluster: chartseq-test\n    user: chartseq-test\n    namespace: default\ncurrent-context: chartseq-test\nusers:\n- name: chartseq-test\n  user: {{}}\n"
    );
    std::fs::write(&path, text)?;
    Ok(path)
}

/// Serves on `listener` until the task is dropped.
pub async fn serve(listener: tokio::net::TcpListener, server: Arc<Server>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let server = server.clone();
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let svc = hyper::service::service_fn(move |req| {
                let server = server.clone();
                async move { Ok::<_, Infallible>(handle(server, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, svc)
                .await;
        });
    }
}

/// Starts a server on its own runtime thread (for tests and benches).
pub fn spawn(scenario: Scenario, kubeconfig_dir: &Path) -> Handle {
    let server = Server::new(scenario);
    let (tx, rx) = std::sync::mpsc::channel();
    let state = server.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime starts");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("binds a local port");
            tx.send(listener.local_addr().expect("a bound address"))
                .expect("the caller waits");
            serve(listener, state).await;
        });
    });
    let addr = rx.recv().expect("the server thread reports its address");
    let kubeconfig = write_kubeconfig(kubeconfig_dir, addr).expect("the kubeconfig is written");
    Handle {
        addr,
        server,
        kubeconfig,
    }
}

fn respond(code: StatusCode, body: &Value) -> Response<Body> {
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())).boxed_unsync())
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed_unsync()))
}

fn status_error(code: u16, reason: &str, message: &str, details: Value) -> Response<Body> {
    respond(
        StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": message, "reason": reason, "details": details, "code": code}),
    )
}

fn not_found(ty: &ResourceType, name: &str) -> Response<Body> {
    status_error(
        404,
        "NotFound",
        &format!("{} \"{name}\" not found", ty.qualified()),
        json!({"name": name, "group": ty.group, "kind": ty.plural}),
    )
}

fn query(req: &Request<Incoming>) -> BTreeMap<String, String> {
    req.uri()
        .query()
        .unwrap_or_default()
        .split('&')
        .filter(|s| !s.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                if let Ok(b) = u8::from_str_radix(hex, 16) {
                    out.push(b);
                    i += 2;
                } else {
                    out.push(b'%');
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What a request path names.
struct Target {
    ty: ResourceType,
    namespace: Option<String>,
    name: Option<String>,
    subresource: Option<String>,
}

async fn handle(server: Arc<Server>, req: Request<Incoming>) -> Response<Body> {
    let q = query(&req);
    let watching = matches!(q.get("watch").map(String::as_str), Some("true" | "1"));
    let slow = server.scenario.faults.slow_ms;
    {
        let mut st = server.lock();
        st.counters.requests += 1;
        let rate = server.scenario.faults.error_rate;
        if !watching && rate > 0.0 {
            let roll = server.random(&mut st);
            if roll < rate {
                st.counters.injected_faults += 1;
                let pick = (roll / rate * 3.0) as u32;
                drop(st);
                let (code, reason) = match pick {
                    0 => (500, "InternalError"),
                    1 => (503, "ServiceUnavailable"),
                    _ => (429, "TooManyRequests"),
                };
                return status_error(
                    code,
                    reason,
                    "injected fault",
                    json!({"retryAfterSeconds": 0}),
                );
            }
        }
    }
    if slow > 0 {
        tokio::time::sleep(Duration::from_millis(slow)).await;
    }
    let path = req.uri().path().trim_end_matches('/').to_owned();
    let segments: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(decode)
        .collect();
    let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
    if req.method() == Method::GET {
        if let Some(resp) = discovery(&server, &segs) {
            return resp;
        }
    }
    let Some(target) = resolve(&server, &segs) else {
        return status_error(
            404,
            "NotFound",
            "the server could not find the requested resource",
            json!({}),
        );
    };
    let method = req.method().clone();
    let content_type = req
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return status_error(400, "BadRequest", &format!("reading body: {e}"), json!({})),
    };
    match (method, &target.name) {
        (Method::GET, None) if watching => watch(&server, &target, &q),
        (Method::GET, None) => list(&server, &target, &q),
        (Method::GET, Some(name)) => get(&server, &target, name),
        (Method::PATCH, Some(name)) => patch(&server, &target, name, &content_type, &body, &q),
        (Method::PUT, Some(name)) => put(&server, &target, name, &body),
        (Method::POST, None) => post(&server, &target, &body, &q),
        (Method::DELETE, Some(name)) => delete(&server, &target, name, &body),
        (m, _) => status_error(
            405,
            "MethodNotAllowed",
            &format!("{m} is not supported here"),
            json!({}),
        ),
    }
}

fn discovery(server: &Server, segs: &[&str]) -> Option<Response<Body>> {
    let st = server.lock();
    let group_versions = |group: &str| -> Vec<String> {
        let mut v: Vec<String> = st
            .types
            .iter()
            .filter(|t| t.group == group)
            .map(|t| t.version.clone())
            .collect();
        v.dedup();
        v
    };
    let resources = |group: &str, version: &str| -> Value {
        let mut list = Vec::new();
        for t in st
            .types
            .iter()
            .filter(|t| t.group == group && t.version == version)
        {
            let verbs = json!([
                "create", "delete", "get", "list", "patch", "update", "watch"
            ]);
            let short = short_names(&t.kind);
            list.push(json!({"name": t.plural, "singularName": t.kind.to_lowercase(), "namespaced": t.namespaced, "kind": t.kind, "verbs": verbs, "shortNames": short}));
            if t.status {
                list.push(json!({"name": format!("{}/status", t.plural), "singularName": "", "namespaced": t.namespaced, "kind": t.kind, "verbs": ["get", "patch", "update"]}));
            }
        }
        let gv = if group.is_empty() {
            version.to_owned()
        } else {
            format!("{group}/{version}")
        };
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": list})
    };
    let resp = match segs {
        ["version"] => {
            json!({"major": "1", "minor": "35", "gitVersion": "v1.35.2", "platform": "linux/amd64"})
        }
        ["api"] => {
            json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]})
        }
        ["api", "v1"] => resources("", "v1"),
        // kubectl picks server-side field validation when the OpenAPI v3 PATCH operation of a
        // kind lists `fieldValidation`; this server validates nothing, like `Ignore`.
        ["openapi", "v3"] => {
            let mut paths = Map::new();
            for t in &st.types {
                let gv = if t.group.is_empty() {
                    format!("api/{}", t.version)
                } else {
                    format!("apis/{}/{}", t.group, t.version)
                };
                paths.insert(
                    gv.clone(),
                    json!({"serverRelativeURL": format!("/openapi/v3/{gv}?hash=0")}),
                );
            }
            json!({"paths": paths})
        }
        ["openapi", "v3", rest @ ..] => {
            let (group, version) = match rest {
                ["api", v] => ("", *v),
                ["apis", g, v] => (*g, *v),
                _ => return None,
            };
            let mut paths = Map::new();
            for t in st
                .types
                .iter()
                .filter(|t| t.group == group && t.version == version)
            {
                let prefix = if group.is_empty() {
                    format!("/api/{version}")
                } else {
                    format!("/apis/{group}/{version}")
                };
                let path = if t.namespaced {
                    format!("{prefix}/namespaces/{{namespace}}/{}/{{name}}", t.plural)
                } else {
                    format!("{prefix}/{}/{{name}}", t.plural)
                };
                let params: Vec<Value> = ["dryRun", "fieldManager", "fieldValidation", "force"]
                    .iter()
                    .map(|n| json!({"name": n, "in": "query", "schema": {"type": "string"}}))
                    .collect();
                paths.insert(path, json!({"patch": {"operationId": format!("patch{}", t.kind), "parameters": params,
                    "x-kubernetes-group-version-kind": {"group": t.group, "version": t.version, "kind": t.kind},
                    "responses": {"200": {"description": "OK"}}}}));
            }
            json!({"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.35.2"}, "paths": paths, "components": {"schemas": {}}})
        }
        ["apis"] => {
            let mut groups: Vec<&str> = st
                .types
                .iter()
                .map(|t| t.group.as_str())
                .filter(|g| !g.is_empty())
                .collect();
            groups.sort_unstable();
            groups.dedup();
            let groups: Vec<Value> = groups
                .iter()
                .map(|g| {
                    let versions: Vec<Value> = group_versions(g)
                        .iter()
                        .map(|v| json!({"groupVersion": format!("{g}/{v}"), "version": v}))
                        .collect();
                    json!({"name": g, "versions": versions, "preferredVersion": versions[0]})
                })
                .collect();
            json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
        }
        ["apis", group] => {
            let versions: Vec<Value> = group_versions(group)
                .iter()
                .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
                .collect();
            if versions.is_empty() {
                return None;
            }
            json!({"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": versions, "preferredVersion": versions[0]})
        }
        ["apis", group, version] => {
            if !st
                .types
                .iter()
                .any(|t| t.group == *group && t.version == *version)
            {
                drop(st);
                return Some(status_error(
                    404,
                    "NotFound",
                    "the server could not find the requested resource",
                    json!({}),
                ));
            }
            resources(group, version)
        }
        _ => return None,
    };
    Some(respond(StatusCode::OK, &resp))
}

/// kubectl's short names for the built-in kinds.
fn short_names(kind: &str) -> Vec<&'static str> {
    let name = match kind {
        "Namespace" => "ns",
        "ConfigMap" => "cm",
        "Service" => "svc",
        "ServiceAccount" => "sa",
        "Pod" => "po",
        "PersistentVolumeClaim" => "pvc",
        "PersistentVolume" => "pv",
        "Deployment" => "deploy",
        "StatefulSet" => "sts",
        "DaemonSet" => "ds",
        "ReplicaSet" => "rs",
        "CronJob" => "cj",
        "CustomResourceDefinition" => "crd",
        "Ingress" => "ing",
        "PodDisruptionBudget" => "pdb",
        "HorizontalPodAutoscaler" => "hpa",
        "PriorityClass" => "pc",
        "StorageClass" => "sc",
        _ => return Vec::new(),
    };
    vec![name]
}

fn resolve(server: &Server, segs: &[&str]) -> Option<Target> {
    let (group, version, rest) = match segs {
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return None,
    };
    let st = server.lock();
    let find = |plural: &str| {
        st.types
            .iter()
            .find(|t| t.group == group && t.version == version && t.plural == plural)
            .cloned()
    };
    let (namespace, rest) = match rest {
        ["namespaces", ns, plural, tail @ ..]
            if group.is_empty()
                && (*plural == "status" || *plural == "finalize")
                && tail.is_empty() =>
        {
            let _ = ns;
            (None, rest)
        }
        ["namespaces", ns, tail @ ..] if !tail.is_empty() => (Some((*ns).to_owned()), tail),
        _ => (None, rest),
    };
    let (plural, name, sub) = match rest {
        [p] => (*p, None, None),
        [p, n] => (*p, Some((*n).to_owned()), None),
        [p, n, s] => (*p, Some((*n).to_owned()), Some((*s).to_owned())),
        _ => return None,
    };
    let ty = find(plural)?;
    if namespace.is_some() && !ty.namespaced {
        return None;
    }
    if name.is_some() && ty.namespaced && namespace.is_none() {
        return None;
    }
    Some(Target {
        ty,
        namespace,
        name,
        subresource: sub,
    })
}

fn key(t: &Target, name: &str) -> Key {
    (
        t.ty.group.clone(),
        t.ty.plural.clone(),
        t.namespace.clone(),
        name.to_owned(),
    )
}

fn get(server: &Server, t: &Target, name: &str) -> Response<Body> {
    let st = server.lock();
    match st.objects.get(&key(t, name)) {
        Some(s) => respond(StatusCode::OK, &s.object),
        None => {
            drop(st);
            not_found(&t.ty, name)
        }
    }
}

/// Field and label selectors as `kubectl` and chartseq send them.
struct Selector {
    name: Option<String>,
    labels: Vec<(String, Option<String>)>,
}

impl Selector {
    fn from_query(q: &BTreeMap<String, String>) -> Self {
        let name = q.get("fieldSelector").and_then(|f| {
            f.split(',')
                .find_map(|p| p.strip_prefix("metadata.name=").map(str::to_owned))
        });
        let labels = q
            .get("labelSelector")
            .map(|l| {
                l.split(',')
                    .filter(|s| !s.is_empty())
                    .map(|p| match p.split_once('=') {
                        Some((k, v)) => (k.trim_end_matches('=').to_owned(), Some(v.to_owned())),
                        None => (p.to_owned(), None),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self { name, labels }
    }

    fn matches(&self, obj: &Value) -> bool {
        let meta = &obj["metadata"];
        if let Some(n) = &self.name {
            if meta["name"].as_str() != Some(n) {
                return false;
            }
        }
        self.labels.iter().all(|(k, v)| {
            let have = meta["labels"][k].as_str();
            match v {
                Some(v) => have == Some(v),
                None => have.is_some(),
            }
        })
    }
}

fn in_scope(t: &Target, group: &str, plural: &str, ns: Option<&str>) -> bool {
    group == t.ty.group
        && plural == t.ty.plural
        && (t.namespace.is_none() || t.namespace.as_deref() == ns)
}

fn list(server: &Server, t: &Target, q: &BTreeMap<String, String>) -> Response<Body> {
    let sel = Selector::from_query(q);
    let st = server.lock();
    let items: Vec<Value> = st
        .objects
        .iter()
        .filter(|((g, p, ns, _), s)| in_scope(t, g, p, ns.as_deref()) && sel.matches(&s.object))
        .map(|(_, s)| s.object.clone())
        .collect();
    let body = json!({"kind": format!("{}List", t.ty.kind), "apiVersion": t.ty.api_version(),
                      "metadata": {"resourceVersion": st.rv.to_string()}, "items": items});
    drop(st);
    respond(StatusCode::OK, &body)
}

/// A response body fed by a channel: the watch stream.
struct ChanBody(mpsc::Receiver<Bytes>);

impl hyper::body::Body for ChanBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|o| o.map(|b| Ok(Frame::data(b))))
    }
}

fn watch(server: &Arc<Server>, t: &Target, q: &BTreeMap<String, String>) -> Response<Body> {
    let sel = Selector::from_query(q);
    let since: Option<u64> = q
        .get("resourceVersion")
        .and_then(|v| v.parse().ok())
        .filter(|v| *v > 0);
    let timeout = q
        .get("timeoutSeconds")
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_secs);
    let (tx, rx) = mpsc::channel::<Bytes>(1024);
    let mut backlog = Vec::new();
    let mut live;
    {
        let mut st = server.lock();
        st.counters.watches += 1;
        live = server.events.subscribe();
        match since {
            Some(rv) => {
                let oldest = st.history.first().map_or(0, |e| e.rv);
                if rv + 1 < oldest {
                    drop(st);
                    return status_error(
                        410,
                        "Expired",
                        &format!("too old resource version: {rv}"),
                        json!({}),
                    );
                }
                let start = st.history.partition_point(|e| e.rv <= rv);
                for e in &st.history[start..] {
                    if in_scope(t, &e.group, &e.plural, e.namespace.as_deref())
                        && sel.matches(&e.object)
                    {
                        backlog.push(json!({"type": e.kind, "object": e.object}));
                    }
                }
            }
            None => {
                for ((g, p, ns, _), s) in &st.objects {
                    if in_scope(t, g, p, ns.as_deref()) && sel.matches(&s.object) {
                        backlog.push(json!({"type": "ADDED", "object": s.object}));
                    }
                }
            }
        }
        // A streaming list (client-go's WatchList) ends its initial events with this bookmark.
        if q.get("sendInitialEvents").is_some_and(|v| v == "true") {
            backlog.push(json!({"type": "BOOKMARK", "object": {"kind": t.ty.kind, "apiVersion": t.ty.api_version(),
                "metadata": {"resourceVersion": st.rv.to_string(), "annotations": {"k8s.io/initial-events-end": "true"}}}}));
        }
    }
    let drop_after = server
        .scenario
        .faults
        .watch_drop_ms
        .map(Duration::from_millis);
    let limit = match (timeout, drop_after) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    let target = Target {
        ty: t.ty.clone(),
        namespace: t.namespace.clone(),
        name: None,
        subresource: None,
    };
    tokio::spawn(async move {
        let deadline = limit.map(|l| tokio::time::Instant::now() + l);
        for e in backlog {
            if tx.send(Bytes::from(format!("{e}\n"))).await.is_err() {
                return;
            }
        }
        loop {
            let next = async {
                match deadline {
                    Some(d) => tokio::time::timeout_at(d, live.recv()).await.ok(),
                    None => Some(live.recv().await),
                }
            };
            match next.await {
                None => return,
                Some(Ok(e)) => {
                    if since.is_some_and(|rv| e.rv <= rv) {
                        continue;
                    }
                    if in_scope(&target, &e.group, &e.plural, e.namespace.as_deref())
                        && sel.matches(&e.object)
                    {
                        let line = json!({"type": e.kind, "object": e.object});
                        if tx.send(Bytes::from(format!("{line}\n"))).await.is_err() {
                            return;
                        }
                    }
                }
                Some(Err(broadcast::error::RecvError::Lagged(_))) => return,
                Some(Err(broadcast::error::RecvError::Closed)) => return,
            }
        }
    });
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/json")
        .header("transfer-encoding", "chunked")
        .body(ChanBody(rx).boxed_unsync())
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()).boxed_unsync()))
}

fn parse_body(body: &[u8]) -> Result<Value, String> {
    let text = std::str::from_utf8(body).map_err(|e| format!("body is not UTF-8: {e}"))?;
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return Ok(v);
    }
    chartseq::parse::parse_document(text, 0, chartseq::parse::Limits::default())
        .map_err(|e| format!("error decoding YAML: {}", e.message))?
        .map(|n| n.to_json())
        .ok_or_else(|| "empty body".to_owned())
}

fn bad_request(message: &str) -> Response<Body> {
    status_error(400, "BadRequest", message, json!({}))
}

/// Checks what the body says about itself against the URL.
fn check_identity(t: &Target, name: &str, obj: &Value) -> Result<(), Response<Body>> {
    if obj["apiVersion"].as_str() != Some(&t.ty.api_version())
        || obj["kind"].as_str() != Some(&t.ty.kind)
    {
        return Err(bad_request(&format!(
            "the body of the request was in an unknown format: apiVersion {} kind {} does not match {} {}",
            obj["apiVersion"],
            obj["kind"],
            t.ty.api_version(),
            t.ty.kind
        )));
    }
    if obj["metadata"]["name"].as_str() != Some(name) {
        return Err(bad_request(
            "the name of the object does not match the name on the URL",
        ));
    }
    if let (Some(want), Some(have)) = (&t.namespace, obj["metadata"]["namespace"].as_str()) {
        if want != have {
            return Err(bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
    }
    Ok(())
}

fn namespace_exists(st: &State, ns: &str) -> bool {
    st.objects
        .contains_key(&(String::new(), "namespaces".to_owned(), None, ns.to_owned()))
}

fn leaves(v: &Value, prefix: &mut Vec<String>, out: &mut BTreeMap<FieldPath, Value>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, child) in m {
                prefix.push(k.clone());
                leaves(child, prefix, out);
                prefix.pop();
            }
        }
        _ => {
            out.insert(prefix.clone(), v.clone());
        }
    }
}

fn at<'v>(v: &'v Value, path: &[String]) -> Option<&'v Value> {
    path.iter().try_fold(v, |cur, k| cur.as_object()?.get(k))
}

fn set_at(v: &mut Value, path: &[String], value: Value) {
    let mut cur = v;
    for (i, k) in path.iter().enumerate() {
        if !cur.is_object() {
            *cur = Value::Object(Map::new());
        }
        let Some(m) = cur.as_object_mut() else { return };
        if i + 1 == path.len() {
            m.insert(k.clone(), value);
            return;
        }
        cur = m
            .entry(k.clone())
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

fn remove_at(v: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = v;
    for k in parents {
        match cur.as_object_mut().and_then(|m| m.get_mut(k)) {
            Some(next) => cur = next,
            None => return,
        }
    }
    if let Some(m) = cur.as_object_mut() {
        m.remove(last);
    }
}

fn managed_fields(managers: &BTreeMap<String, BTreeSet<FieldPath>>, api_version: &str) -> Value {
    let mut out = Vec::new();
    for (manager, paths) in managers {
        let mut tree = Value::Object(Map::new());
        for p in paths {
            let f: Vec<String> = p.iter().map(|k| format!("f:{k}")).collect();
            set_at(&mut tree, &f, json!({}));
        }
        let (manager, operation) = manager.split_once('\u{0}').unwrap_or((manager, "Apply"));
        out.push(
            json!({"manager": manager, "operation": operation, "apiVersion": api_version,
                        "time": now_rfc3339(), "fieldsType": "FieldsV1", "fieldsV1": tree}),
        );
    }
    Value::Array(out)
}

fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Civil date from days since the epoch (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The fields of an object that bump `metadata.generation` when they change.
fn spec_part(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("metadata");
        m.remove("status");
    }
    v
}

fn patch(
    server: &Arc<Server>,
    t: &Target,
    name: &str,
    content_type: &str,
    body: &[u8],
    q: &BTreeMap<String, String>,
) -> Response<Body> {
    let obj = match parse_body(body) {
        Ok(v) => v,
        Err(e) => return bad_request(&e),
    };
    let dry_run = q.get("dryRun").is_some_and(|v| v == "All");
    if content_type.starts_with("application/apply-patch") {
        let Some(manager) = q.get("fieldManager").filter(|m| !m.is_empty()) else {
            return bad_request(
                "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
            );
        };
        let force = q.get("force").is_some_and(|v| v == "true");
        apply(server, t, name, &obj, manager, force, dry_run)
    } else if content_type.starts_with("application/merge-patch+json")
        || content_type.starts_with("application/strategic-merge-patch+json")
    {
        let mut st = server.lock();
        let Some(stored) = st.objects.get(&key(t, name)) else {
            drop(st);
            return not_found(&t.ty, name);
        };
        let mut merged = stored.object.clone();
        merge_patch(&mut merged, &obj);
        let managers = stored.managers.clone();
        if t.subresource.as_deref() != Some("status") && t.ty.status {
            merged["status"] = stored.object["status"].clone();
        }
        if spec_part(&merged) != spec_part(&stored.object) {
            let g = merged["metadata"]["generation"].as_i64().unwrap_or(1);
            merged["metadata"]["generation"] = json!(g + 1);
        }
        if dry_run {
            return respond(StatusCode::OK, &merged);
        }
        let out = server.store(
            &mut st,
            &t.ty,
            t.namespace.as_deref(),
            name,
            merged,
            managers,
            false,
        );
        drop(st);
        schedule_controller(server, &t.ty, t.namespace.as_deref(), name);
        respond(StatusCode::OK, &out)
    } else {
        status_error(
            415,
            "UnsupportedMediaType",
            &format!(
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml; got {content_type}"
            ),
            json!({}),
        )
    }
}

fn merge_patch(target: &mut Value, patch: &Value) {
    match patch {
        Value::Object(p) => {
            if !target.is_object() {
                *target = Value::Object(Map::new());
            }
            if let Some(t) = target.as_object_mut() {
                for (k, v) in p {
                    if v.is_null() {
                        t.remove(k);
                    } else {
                        merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
                    }
                }
            }
        }
        other => *target = other.clone(),
    }
}

fn apply(
    server: &Arc<Server>,
    t: &Target,
    name: &str,
    config: &Value,
    manager: &str,
    force: bool,
    dry_run: bool,
) -> Response<Body> {
    if let Err(resp) = check_identity(t, name, config) {
        return resp;
    }
    let status_only = t.subresource.as_deref() == Some("status");
    let mut config = config.clone();
    if let Some(meta) = config["metadata"].as_object_mut() {
        for k in [
            "managedFields",
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "generation",
            "deletionTimestamp",
        ] {
            meta.remove(k);
        }
    }
    if t.ty.status && !status_only {
        if let Some(m) = config.as_object_mut() {
            m.remove("status");
        }
    }
    let mut st = server.lock();
    if let Some(ns) = &t.namespace {
        if !namespace_exists(&st, ns) {
            drop(st);
            return status_error(
                404,
                "NotFound",
                &format!("namespaces \"{ns}\" not found"),
                json!({"name": ns, "kind": "namespaces"}),
            );
        }
    }
    let existing = st.objects.get(&key(t, name));
    if existing.is_some_and(|s| !s.object["metadata"]["deletionTimestamp"].is_null()) {
        drop(st);
        return status_error(
            409,
            "Conflict",
            &format!(
                "object is being deleted: {} \"{name}\" already exists",
                t.ty.qualified()
            ),
            json!({"name": name, "kind": t.ty.plural}),
        );
    }
    let created = existing.is_none();
    let (mut live, mut managers) = match existing {
        Some(s) => (s.object.clone(), s.managers.clone()),
        None => (json!({}), BTreeMap::new()),
    };
    let mut applied = BTreeMap::new();
    leaves(&config, &mut Vec::new(), &mut applied);
    for k in [
        ["metadata", "name"],
        ["metadata", "namespace"],
        ["apiVersion", ""],
        ["kind", ""],
    ] {
        let p: FieldPath = k
            .iter()
            .filter(|s| !s.is_empty())
            .map(|s| (*s).to_owned())
            .collect();
        applied.remove(&p);
    }
    let mut conflicts = Vec::new();
    for (p, value) in &applied {
        for (other, owned) in &managers {
            if other != manager && owned.contains(p) && at(&live, p) != Some(value) {
                conflicts.push((other.clone(), p.clone()));
            }
        }
    }
    if !conflicts.is_empty() && !force {
        drop(st);
        let list: Vec<String> = conflicts
            .iter()
            .map(|(m, p)| {
                format!(
                    "conflict with \"{}\" using {}: .{}",
                    m.split('\u{0}').next().unwrap_or(m),
                    t.ty.api_version(),
                    p.join(".")
                )
            })
            .collect();
        let message = if list.len() == 1 {
            format!("Apply failed with 1 conflict: {}", list[0])
        } else {
            format!(
                "Apply failed with {} conflicts: {}",
                list.len(),
                list.join("\n")
            )
        };
        return status_error(
            409,
            "Conflict",
            &message,
            json!({"name": name, "group": t.ty.group, "kind": t.ty.plural}),
        );
    }
    for (other, p) in &conflicts {
        if let Some(owned) = managers.get_mut(other) {
            owned.remove(p);
        }
    }
    let before = live.clone();
    let previous = managers.remove(manager).unwrap_or_default();
    for p in previous.iter().filter(|p| !applied.contains_key(*p)) {
        if !managers.values().any(|o| o.contains(p)) {
            remove_at(&mut live, p);
        }
    }
    for (p, value) in &applied {
        set_at(&mut live, p, value.clone());
    }
    managers.insert(manager.to_owned(), applied.keys().cloned().collect());
    managers.retain(|_, paths| !paths.is_empty());
    live["apiVersion"] = json!(t.ty.api_version());
    live["kind"] = json!(t.ty.kind);
    live["metadata"]["name"] = json!(name);
    if let Some(ns) = &t.namespace {
        live["metadata"]["namespace"] = json!(ns);
    }
    if created {
        live["metadata"]["uid"] = json!(format!("00000000-0000-4000-8000-{:012x}", st.rv + 1));
        live["metadata"]["creationTimestamp"] = json!(now_rfc3339());
        live["metadata"]["generation"] = json!(1);
        defaults_on_create(&mut live, &t.ty, st.rv);
    } else if spec_part(&live) != spec_part(&before) {
        let g = live["metadata"]["generation"].as_i64().unwrap_or(1);
        live["metadata"]["generation"] = json!(g + 1);
    }
    if dry_run {
        server.record(&mut st, "apply", &live, true);
        drop(st);
        return respond(
            if created {
                StatusCode::CREATED
            } else {
                StatusCode::OK
            },
            &live,
        );
    }
    st.counters.applies += 1;
    server.record(&mut st, "apply", &live, false);
    let changed = created || live != before;
    let out = if changed {
        server.store(
            &mut st,
            &t.ty,
            t.namespace.as_deref(),
            name,
            live,
            managers,
            created,
        )
    } else {
        before
    };
    drop(st);
    if changed && !status_only {
        schedule_controller(server, &t.ty, t.namespace.as_deref(), name);
    }
    respond(
        if created {
            StatusCode::CREATED
        } else {
            StatusCode::OK
        },
        &out,
    )
}

/// What the API server (not a controller) fills in at creation.
fn defaults_on_create(obj: &mut Value, ty: &ResourceType, rv: u64) {
    match ty.kind.as_str() {
        "Service" => {
            if obj["spec"]["clusterIP"].is_null() {
                obj["spec"]["clusterIP"] =
                    json!(format!("10.96.{}.{}", (rv / 250) % 250, rv % 250 + 1));
            }
            if obj["spec"]["type"].is_null() {
                obj["spec"]["type"] = json!("ClusterIP");
            }
        }
        "Namespace" => obj["status"] = json!({"phase": "Active"}),
        _ => {}
    }
}

fn put(server: &Arc<Server>, t: &Target, name: &str, body: &[u8]) -> Response<Body> {
    let obj = match parse_body(body) {
        Ok(v) => v,
        Err(e) => return bad_request(&e),
    };
    if let Err(resp) = check_identity(t, name, &obj) {
        return resp;
    }
    let mut st = server.lock();
    let Some(stored) = st.objects.get(&key(t, name)) else {
        drop(st);
        return not_found(&t.ty, name);
    };
    if let Some(rv) = obj["metadata"]["resourceVersion"].as_str() {
        if stored.object["metadata"]["resourceVersion"].as_str() != Some(rv) {
            drop(st);
            return status_error(
                409,
                "Conflict",
                &format!(
                    "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
                    t.ty.qualified()
                ),
                json!({"name": name, "kind": t.ty.plural}),
            );
        }
    }
    let mut next = stored.object.clone();
    if t.subresource.as_deref() == Some("status") {
        next["status"] = obj["status"].clone();
    } else {
        let status = next["status"].clone();
        let meta = next["metadata"].clone();
        next = obj;
        next["status"] = status;
        for k in ["uid", "creationTimestamp", "generation", "namespace"] {
            next["metadata"][k] = meta[k].clone();
        }
        if spec_part(&next) != spec_part(&stored.object) {
            next["metadata"]["generation"] = json!(meta["generation"].as_i64().unwrap_or(1) + 1);
        }
    }
    let managers = stored.managers.clone();
    let out = server.store(
        &mut st,
        &t.ty,
        t.namespace.as_deref(),
        name,
        next,
        managers,
        false,
    );
    drop(st);
    respond(StatusCode::OK, &out)
}

fn post(
    server: &Arc<Server>,
    t: &Target,
    body: &[u8],
    q: &BTreeMap<String, String>,
) -> Response<Body> {
    let obj = match parse_body(body) {
        Ok(v) => v,
        Err(e) => return bad_request(&e),
    };
    let Some(name) = obj["metadata"]["name"].as_str().map(str::to_owned) else {
        return bad_request("metadata.name: Required value: name is required");
    };
    if server.lock().objects.contains_key(&key(t, &name)) {
        return status_error(
            409,
            "AlreadyExists",
            &format!("{} \"{name}\" already exists", t.ty.qualified()),
            json!({"name": name, "kind": t.ty.plural}),
        );
    }
    let manager = format!(
        "{}\u{0}Update",
        q.get("fieldManager").map_or("unknown", String::as_str)
    );
    apply(
        server,
        t,
        &name,
        &obj,
        &manager,
        true,
        q.get("dryRun").is_some_and(|v| v == "All"),
    )
}

fn delete(server: &Arc<Server>, t: &Target, name: &str, body: &[u8]) -> Response<Body> {
    let delay = server.scenario.delete_delay_ms.unwrap_or(0);
    let options = if body.is_empty() {
        Value::Null
    } else {
        match parse_body(body) {
            Ok(v) => v,
            Err(e) => return bad_request(&e),
        }
    };
    let mut st = server.lock();
    let Some(stored) = st.objects.get(&key(t, name)) else {
        drop(st);
        return not_found(&t.ty, name);
    };
    if let Some(want) = options["preconditions"]["uid"].as_str() {
        let have = stored.object["metadata"]["uid"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if want != have {
            drop(st);
            return status_error(
                409,
                "Conflict",
                &format!(
                    "Precondition failed: UID in precondition: {want}, UID in object meta: {have}"
                ),
                json!({"name": name, "kind": t.ty.plural}),
            );
        }
    }
    let mut obj = stored.object.clone();
    let managers = stored.managers.clone();
    server.record(&mut st, "delete", &obj, false);
    if delay == 0 && t.ty.kind != "Namespace" {
        remove_object(server, &mut st, &t.ty, t.namespace.as_deref(), name);
        drop(st);
        return respond(
            StatusCode::OK,
            &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                                                "details": {"name": name, "group": t.ty.group, "kind": t.ty.plural, "uid": obj["metadata"]["uid"]}}),
        );
    }
    if obj["metadata"]["deletionTimestamp"].is_null() {
        obj["metadata"]["deletionTimestamp"] = json!(now_rfc3339());
        if t.ty.kind == "Namespace" {
            obj["status"]["phase"] = json!("Terminating");
        }
        obj = server.store(
            &mut st,
            &t.ty,
            t.namespace.as_deref(),
            name,
            obj,
            managers,
            false,
        );
        let server = server.clone();
        let ty = t.ty.clone();
        let ns = t.namespace.clone();
        let name = name.to_owned();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(delay.max(10))).await;
            let mut st = server.lock();
            if ty.kind == "Namespace" {
                let inside: Vec<(ResourceType, String)> = st
                    .objects
                    .keys()
                    .filter(|(_, _, n, _)| n.as_deref() == Some(name.as_str()))
                    .filter_map(|(g, p, _, n)| {
                        st.types
                            .iter()
                            .find(|t| &t.group == g && &t.plural == p)
                            .map(|t| (t.clone(), n.clone()))
                    })
                    .collect();
                for (t, n) in inside {
                    remove_object(&server, &mut st, &t, Some(&name), &n);
                }
            }
            remove_object(&server, &mut st, &ty, ns.as_deref(), &name);
        });
    }
    drop(st);
    respond(StatusCode::OK, &obj)
}

fn remove_object(server: &Server, st: &mut State, ty: &ResourceType, ns: Option<&str>, name: &str) {
    let key = (
        ty.group.clone(),
        ty.plural.clone(),
        ns.map(str::to_owned),
        name.to_owned(),
    );
    let Some(stored) = st.objects.remove(&key) else {
        return;
    };
    st.rv += 1;
    let mut obj = stored.object;
    obj["metadata"]["resourceVersion"] = json!(st.rv.to_string());
    server.record(st, "gone", &obj, false);
    server.emit(st, ty, ns, "DELETED", obj);
    if ty.kind == "CustomResourceDefinition" {
        let served: Vec<ResourceType> = st
            .types
            .iter()
            .filter(|t| t.crd.as_deref() == Some(name))
            .cloned()
            .collect();
        st.types.retain(|t| t.crd.as_deref() != Some(name));
        for t in served {
            let keys: Vec<Key> = st
                .objects
                .keys()
                .filter(|(g, p, _, _)| *g == t.group && *p == t.plural)
                .cloned()
                .collect();
            for (_, _, ns, n) in keys {
                let key = (t.group.clone(), t.plural.clone(), ns.clone(), n.clone());
                if let Some(s) = st.objects.remove(&key) {
                    st.rv += 1;
                    server.emit(st, &t, ns.as_deref(), "DELETED", s.object);
                }
            }
        }
    }
}

/// Runs the simulated controller of one object after its scenario delay.
fn schedule_controller(server: &Arc<Server>, ty: &ResourceType, ns: Option<&str>, name: &str) {
    let default = server.scenario.default_delay_ms.unwrap_or(50);
    let entry = server
        .scenario
        .entry(&ty.kind, ns, name)
        .cloned()
        .unwrap_or_default();
    let (generation, kind) = {
        let st = server.lock();
        let key = (
            ty.group.clone(),
            ty.plural.clone(),
            ns.map(str::to_owned),
            name.to_owned(),
        );
        let Some(s) = st.objects.get(&key) else {
            return;
        };
        (
            s.object["metadata"]["generation"].as_i64().unwrap_or(1),
            ty.kind.clone(),
        )
    };
    for timed in &entry.status {
        let server = server.clone();
        let (ty, ns, name, value, after) = (
            ty.clone(),
            ns.map(str::to_owned),
            name.to_owned(),
            timed.value.clone(),
            timed.after_ms,
        );
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(after)).await;
            set_status(&server, &ty, ns.as_deref(), &name, None, |_, _| Some(value));
        });
    }
    // Immediate effects: a Job starts, a Pod runs.
    match kind.as_str() {
        "Job" => set_status(server, ty, ns, name, Some(generation), |_, _| {
            Some(json!({"startTime": now_rfc3339(), "active": 1, "ready": 0}))
        }),
        "Pod" => set_status(server, ty, ns, name, None, |_, _| {
            Some(json!({"phase": "Pending"}))
        }),
        _ => {}
    }
    let has_controller = matches!(
        kind.as_str(),
        "Deployment"
            | "StatefulSet"
            | "DaemonSet"
            | "ReplicaSet"
            | "Job"
            | "Pod"
            | "PersistentVolumeClaim"
            | "CustomResourceDefinition"
            | "Service"
    );
    if !has_controller || entry.never {
        return;
    }
    let delay = entry.ready_after_ms.unwrap_or(default);
    let fail = entry.fail;
    let server = server.clone();
    let (ty, ns, name) = (ty.clone(), ns.map(str::to_owned), name.to_owned());
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(delay)).await;
        set_status(
            &server,
            &ty,
            ns.as_deref(),
            &name,
            Some(generation),
            |obj, ty| controller_status(obj, ty, fail),
        );
        if ty.kind == "CustomResourceDefinition" && !fail {
            register_crd(&server, &name);
        }
    });
}

/// The status a controller writes once the object has converged (or failed).
fn controller_status(obj: &Value, ty: &ResourceType, fail: bool) -> Option<Value> {
    let generation = obj["metadata"]["generation"].as_i64().unwrap_or(1);
    let replicas = obj["spec"]["replicas"].as_i64().unwrap_or(1);
    let now = now_rfc3339();
    let cond = |t: &str, s: &str, reason: &str| json!({"type": t, "status": s, "reason": reason, "lastTransitionTime": now, "lastUpdateTime": now, "message": ""});
    Some(match ty.kind.as_str() {
        "Deployment" if fail => {
            json!({"observedGeneration": generation, "replicas": replicas, "updatedReplicas": replicas, "unavailableReplicas": replicas,
            "conditions": [cond("Available", "False", "MinimumReplicasUnavailable"), cond("Progressing", "False", "ProgressDeadlineExceeded")]})
        }
        "Deployment" => {
            json!({"observedGeneration": generation, "replicas": replicas, "updatedReplicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas,
            "conditions": [cond("Available", "True", "MinimumReplicasAvailable"), cond("Progressing", "True", "NewReplicaSetAvailable")]})
        }
        "StatefulSet" => {
            json!({"observedGeneration": generation, "replicas": replicas, "readyReplicas": replicas, "currentReplicas": replicas, "updatedReplicas": replicas,
            "availableReplicas": replicas, "currentRevision": "r1", "updateRevision": "r1"})
        }
        "ReplicaSet" => {
            json!({"observedGeneration": generation, "replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas, "fullyLabeledReplicas": replicas})
        }
        "DaemonSet" => {
            json!({"observedGeneration": generation, "desiredNumberScheduled": 1, "currentNumberScheduled": 1, "updatedNumberScheduled": 1, "numberAvailable": 1, "numberReady": 1, "numberMisscheduled": 0})
        }
        "Job" if fail => json!({"startTime": obj["status"]["startTime"], "failed": 1, "active": 0,
            "conditions": [cond("FailureTarget", "True", "BackoffLimitExceeded"), cond("Failed", "True", "BackoffLimitExceeded")]}),
        "Job" => {
            json!({"startTime": obj["status"]["startTime"], "completionTime": now, "succeeded": 1, "active": 0, "ready": 0,
            "conditions": [cond("SuccessCriteriaMet", "True", "CompletionsReached"), cond("Complete", "True", "CompletionsReached")]})
        }
        "Pod" => {
            let once = matches!(
                obj["spec"]["restartPolicy"].as_str(),
                Some("Never" | "OnFailure")
            );
            match (once, fail) {
                (_, true) => json!({"phase": "Failed"}),
                (true, false) => json!({"phase": "Succeeded"}),
                (false, false) => {
                    json!({"phase": "Running", "conditions": [cond("Ready", "True", ""), cond("ContainersReady", "True", "")]})
                }
            }
        }
        "PersistentVolumeClaim" => json!({"phase": "Bound"}),
        "Service" if obj["spec"]["type"] == "LoadBalancer" => {
            json!({"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}})
        }
        "Service" => return None,
        "CustomResourceDefinition" if fail => {
            json!({"conditions": [cond("NamesAccepted", "False", "NameConflict")]})
        }
        "CustomResourceDefinition" => {
            json!({"acceptedNames": obj["spec"]["names"], "storedVersions": [obj["spec"]["versions"][0]["name"]],
            "conditions": [cond("NamesAccepted", "True", "NoConflicts"), cond("Established", "True", "InitialNamesAccepted")]})
        }
        _ => return None,
    })
}

/// Writes `.status` through the status path; skips when the object moved on to a newer
/// generation (its own controller run will follow).
fn set_status(
    server: &Arc<Server>,
    ty: &ResourceType,
    ns: Option<&str>,
    name: &str,
    generation: Option<i64>,
    make: impl FnOnce(&Value, &ResourceType) -> Option<Value>,
) {
    let mut st = server.lock();
    let key = (
        ty.group.clone(),
        ty.plural.clone(),
        ns.map(str::to_owned),
        name.to_owned(),
    );
    let Some(stored) = st.objects.get(&key) else {
        return;
    };
    if generation.is_some_and(|g| stored.object["metadata"]["generation"].as_i64() != Some(g))
        || !stored.object["metadata"]["deletionTimestamp"].is_null()
    {
        return;
    }
    let Some(status) = make(&stored.object, ty) else {
        return;
    };
    let mut obj = stored.object.clone();
    obj["status"] = status;
    let managers = stored.managers.clone();
    server.record(&mut st, "ready", &obj, false);
    server.store(&mut st, ty, ns, name, obj, managers, false);
}

/// Serves the versions of an established CRD.
fn register_crd(server: &Arc<Server>, name: &str) {
    let mut st = server.lock();
    let key = (
        String::from("apiextensions.k8s.io"),
        String::from("customresourcedefinitions"),
        None,
        name.to_owned(),
    );
    let Some(stored) = st.objects.get(&key) else {
        return;
    };
    let spec = stored.object["spec"].clone();
    let group = spec["group"].as_str().unwrap_or_default().to_owned();
    let names = &spec["names"];
    let namespaced = spec["scope"].as_str() != Some("Cluster");
    let mut added = Vec::new();
    for v in spec["versions"].as_array().into_iter().flatten() {
        if v["served"].as_bool() == Some(false) {
            continue;
        }
        added.push(ResourceType {
            group: group.clone(),
            version: v["name"].as_str().unwrap_or("v1").to_owned(),
            kind: names["kind"].as_str().unwrap_or_default().to_owned(),
            plural: names["plural"].as_str().unwrap_or_default().to_owned(),
            namespaced,
            status: v["subresources"]["status"].is_object(),
            crd: Some(name.to_owned()),
        });
    }
    st.types.retain(|t| t.crd.as_deref() != Some(name));
    st.types.extend(added);
}
