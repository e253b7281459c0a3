//! A Kubernetes API server for tests: what `chartseq apply`, `kubectl` and `helm` use, behaving
//! as kube-apiserver does where a client would notice.
//!
//! One module per concern: [`discovery`] (resource types, `/api`, `/apis`, OpenAPI, request
//! paths), [`storage`] (get, list with selectors, create, replace, delete), [`merge`]
//! (server-side apply with field managers and conflicts, merge patches, generation),
//! [`watch`] (resumable watches), [`controllers`] (simulated controllers that make workloads
//! ready after the delays a [`scenario`] sets), [`faults`] (injected errors and latency) and
//! [`codec`] (request and response bodies). Everything lives in memory behind one lock that is
//! never held across an await.
#![expect(
    clippy::too_many_lines,
    clippy::match_same_arms,
    clippy::similar_names,
    clippy::result_large_err,
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
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::BodyExt;
use http_body_util::combinators::UnsyncBoxBody;
use hyper::body::Incoming;
use hyper::{Method, Request, Response};
use serde_json::{Value, json};
use tokio::sync::broadcast;

mod codec;
mod controllers;
mod discovery;
mod faults;
mod merge;
mod protobuf;
mod scenario;
mod selector;
mod storage;
mod validation;
mod watch;

use codec::{decode, query, status_error};
use discovery::{ResourceType, builtin_types, discovery, resolve};
use merge::{managed_fields, patch};
pub use scenario::*;
use storage::{delete, get, list, post, put, remove_object};
use watch::watch;

type Body = UnsyncBoxBody<Bytes, Infallible>;

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

/// One request as it arrived, for tests to check what a client asked and in which order.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestEntry {
    /// `GET`, `PATCH`, `DELETE`, ...
    pub method: String,
    pub path: String,
    pub query: BTreeMap<String, String>,
    /// `GET` of a collection with `watch=true`.
    pub watch: bool,
    /// The resource type's kind, when the path names one.
    pub kind: Option<String>,
    pub namespace: Option<String>,
    /// The object's name, when the path names one.
    pub name: Option<String>,
    /// The response's status code (0 until it is answered).
    pub status: u16,
    /// For a watch: the resourceVersion of the last event it delivered.
    pub last_event_rv: Option<u64>,
    /// How many requests had been answered when this one arrived.
    pub answered_before: u64,
    /// This request's place among the answers (1 for the first answered), once answered.
    pub answer: Option<u64>,
}

impl RequestEntry {
    /// `Kind/name`, as the tests compare them.
    pub fn object(&self) -> String {
        format!(
            "{}/{}",
            self.kind.as_deref().unwrap_or_default(),
            self.name.as_deref().unwrap_or_default()
        )
    }

    pub fn dry_run(&self) -> bool {
        self.query.get("dryRun").is_some_and(|v| v == "All")
    }
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
    requests: Vec<RequestEntry>,
    /// Requests answered so far.
    answered: u64,
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
                requests: Vec::new(),
                answered: 0,
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

    /// Every change so far (what watches see), oldest first.
    pub fn events(&self) -> Vec<Arc<Event>> {
        self.lock().history.clone()
    }

    /// Every request so far, in the order they arrived.
    pub fn requests(&self) -> Vec<RequestEntry> {
        self.lock().requests.clone()
    }

    /// Notes a request's arrival; its index in [`Server::requests`].
    fn arrived(&self, method: &Method, path: &str, query: &BTreeMap<String, String>) -> usize {
        let mut st = self.lock();
        let answered_before = st.answered;
        st.requests.push(RequestEntry {
            method: method.to_string(),
            path: path.to_owned(),
            query: query.clone(),
            watch: false,
            kind: None,
            namespace: None,
            name: None,
            status: 0,
            last_event_rv: None,
            answered_before,
            answer: None,
        });
        st.requests.len() - 1
    }

    fn update_request(&self, seq: usize, f: impl FnOnce(&mut RequestEntry)) {
        if let Some(entry) = self.lock().requests.get_mut(seq) {
            f(entry);
        }
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

/// Serves one request in the encoding its client asked for.
async fn handle(server: Arc<Server>, req: Request<Incoming>) -> Response<Body> {
    let accept = req
        .headers()
        .get("accept")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let streaming = query(&req)
        .get("watch")
        .is_some_and(|w| w == "true" || w == "1");
    let response = route(server, req).await;
    if streaming {
        response
    } else {
        codec::negotiate(&accept, response).await
    }
}

async fn route(server: Arc<Server>, req: Request<Incoming>) -> Response<Body> {
    let q = query(&req);
    let path = req.uri().path().trim_end_matches('/').to_owned();
    let seq = server.arrived(req.method(), &path, &q);
    let response = answer(&server, req, q, path, seq).await;
    let status = response.status().as_u16();
    let mut st = server.lock();
    st.answered += 1;
    let answer = st.answered;
    if let Some(e) = st.requests.get_mut(seq) {
        e.status = status;
        e.answer = Some(answer);
    }
    drop(st);
    response
}

async fn answer(
    server: &Arc<Server>,
    req: Request<Incoming>,
    q: BTreeMap<String, String>,
    path: String,
    seq: usize,
) -> Response<Body> {
    let server = server.clone();
    let watching = matches!(q.get("watch").map(String::as_str), Some("true" | "1"));
    if let Some(fault) = faults::before(&server, watching).await {
        return fault;
    }
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
    server.update_request(seq, |e| {
        e.watch = watching && method == Method::GET && target.name.is_none();
        e.kind = Some(target.ty.kind.clone());
        e.namespace.clone_from(&target.namespace);
        e.name.clone_from(&target.name);
    });
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
    let body = match codec::request_body(&content_type, body) {
        Ok(b) => b,
        Err(refused) => return refused,
    };
    if method == Method::POST && target.name.is_none() {
        // A create names its object in the body.
        if let Some(name) = codec::parse_body(&body)
            .ok()
            .and_then(|v| v["metadata"]["name"].as_str().map(str::to_owned))
        {
            server.update_request(seq, |e| e.name = Some(name));
        }
    }
    match (method, &target.name) {
        (Method::GET, None) if watching => watch(&server, &target, &q, seq),
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

fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    chartseq::apply::release::rfc3339(i64::try_from(secs).unwrap_or(i64::MAX), 0)
}
