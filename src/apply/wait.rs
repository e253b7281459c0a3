//! Readiness waits through watches (SPEC §3): one watch per kind and namespace, shared by
//! every wait, resumed from its last resourceVersion when the server drops it.
//!
//! A wait re-judges its targets whenever any watched object changes, and at least every
//! [`RECHECK`] (kstatus reads the clock: an unschedulable Pod fails 15 s after its creation
//! with no event to mark that moment); it ends when all are ready (or gone, for deletions),
//! when one fails, at its deadline (naming every target not ready and why), or when the run is
//! cancelled.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::Value;
use tokio::sync::watch;

use super::cluster::{Change, Cluster, ErrorKind, Kind};

/// How long a wait goes without re-judging its targets when nothing changes.
pub const RECHECK: Duration = Duration::from_secs(1);

/// What the readiness engine says about one object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Ready,
    /// Not yet, and why (a kstatus reason or an expression's observed value).
    InProgress(String),
    Failed(String),
}

/// The readiness engine, as the deployer consumes it.
pub trait Judge: Send + Sync {
    /// Judges `object` (the live object, status included) for `target`.
    fn judge(&self, target: &Target, object: &Value) -> Verdict;
}

/// What a target must reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Goal {
    /// Ready by its readiness rules.
    Ready,
    /// Run to completion (hooks): Job `Complete`, Pod `Succeeded`; others as `Ready`.
    Complete,
    /// Deleted.
    Gone,
}

/// One object a wait is about.
#[derive(Clone, Debug)]
pub struct Target {
    pub kind: Kind,
    pub namespace: Option<String>,
    pub name: String,
    /// How it is judged, parsed once from the applied object; `None` for deletions.
    pub readiness: Option<std::sync::Arc<crate::readiness::Readiness>>,
    pub goal: Goal,
    /// The uid of the object this run created or updated, when known: an object that is
    /// deleted right after it became ready (a Job with `ttlSecondsAfterFinished: 0`) is judged
    /// by the last state the watch saw of that very object.
    pub uid: Option<String>,
}

impl Target {
    /// `Kind/name` (and namespace), as messages show it.
    #[must_use]
    pub fn label(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{}/{} (namespace {ns})", self.kind.kind, self.name),
            None => format!("{}/{}", self.kind.kind, self.name),
        }
    }
}

/// Why a wait ended without success.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WaitError {
    /// Per target not ready: its label and why.
    #[error(
        "timed out after {} waiting for {} resource(s):{}",
        human(*.after),
        .blocked.len(),
        blocked_lines(.blocked)
    )]
    Timeout {
        after: Duration,
        blocked: Vec<(String, String)>,
    },
    #[error("{target} failed: {reason}")]
    Failed { target: String, reason: String },
    #[error("interrupted")]
    Cancelled,
}

/// The targets not ready, one per line under the message, with why.
fn blocked_lines(blocked: &[(String, String)]) -> String {
    blocked
        .iter()
        .fold(String::new(), |mut text, (label, why)| {
            let _ = write!(text, "\n  {label}: {why}");
            text
        })
}

/// `1m30s`, `250ms`.
#[must_use]
pub fn human(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let s = d.as_secs();
    let mut out = String::new();
    if s >= 60 {
        let _ = write!(out, "{}m", s / 60);
    }
    if s % 60 != 0 || s < 60 {
        if s < 10 && ms % 1000 != 0 {
            let _ = write!(out, "{:.1}s", d.as_secs_f64());
        } else {
            let _ = write!(out, "{}s", s % 60);
        }
    }
    out
}

type CacheKey = (String, String, Option<String>);

/// The objects of one kind in one namespace, kept current by a watch.
#[derive(Default)]
struct Cache {
    synced: bool,
    objects: BTreeMap<String, Value>,
    /// The last state of each object seen deleted, by name (the latest deletion only).
    gone: BTreeMap<String, Value>,
}

/// Shared watches and the waits on them.
pub struct Watcher {
    cluster: Arc<dyn Cluster>,
    caches: Mutex<BTreeMap<CacheKey, Arc<Mutex<Cache>>>>,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    changed: watch::Sender<u64>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        for t in self
            .tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .drain(..)
        {
            t.abort();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Watcher {
    #[must_use]
    pub fn new(cluster: Arc<dyn Cluster>) -> Arc<Self> {
        let (changed, _) = watch::channel(0);
        Arc::new(Self {
            cluster,
            caches: Mutex::new(BTreeMap::new()),
            tasks: Mutex::new(Vec::new()),
            changed,
        })
    }

    fn bump(&self) {
        self.changed.send_modify(|v| *v = v.wrapping_add(1));
    }

    /// The cache for a kind and namespace, starting its watch on first use.
    fn cache(self: &Arc<Self>, kind: &Kind, namespace: Option<&str>) -> Arc<Mutex<Cache>> {
        let key = (
            format!("{}/{}", kind.group, kind.version),
            kind.plural.clone(),
            namespace.map(str::to_owned),
        );
        let mut caches = lock(&self.caches);
        if let Some(c) = caches.get(&key) {
            return c.clone();
        }
        let cache = Arc::new(Mutex::new(Cache::default()));
        caches.insert(key, cache.clone());
        drop(caches);
        let this = Arc::downgrade(self);
        let (kind, ns, task_cache) = (kind.clone(), namespace.map(str::to_owned), cache.clone());
        let cluster = self.cluster.clone();
        let handle = tokio::spawn(async move {
            keep_current(cluster, this, kind, ns, task_cache).await;
        });
        lock(&self.tasks).push(handle);
        cache
    }

    /// Waits until every target reaches its goal.
    pub async fn wait(
        self: &Arc<Self>,
        targets: &[Target],
        judge: &dyn Judge,
        timeout: Duration,
        cancel: &mut watch::Receiver<bool>,
    ) -> Result<Duration, WaitError> {
        let started = Instant::now();
        let deadline = tokio::time::Instant::now() + timeout;
        let caches: Vec<Arc<Mutex<Cache>>> = targets
            .iter()
            .map(|t| self.cache(&t.kind, t.namespace.as_deref()))
            .collect();
        let mut changes = self.changed.subscribe();
        loop {
            changes.borrow_and_update();
            let mut blocked = Vec::new();
            for (t, cache) in targets.iter().zip(&caches) {
                let c = lock(cache);
                let verdict = if c.synced {
                    match (c.objects.get(&t.name), t.goal) {
                        (None, Goal::Gone) => Verdict::Ready,
                        (Some(_), Goal::Gone) => Verdict::InProgress("still present".to_owned()),
                        (None, _) => match c.gone.get(&t.name).filter(|last| {
                            t.uid.is_some() && last["metadata"]["uid"].as_str() == t.uid.as_deref()
                        }) {
                            // Deleted once ready (by its TTL, say): it was ready. Judged by
                            // the status it had when its deletion began.
                            Some(last) => match judge.judge(t, &before_deletion(last)) {
                                Verdict::Ready => Verdict::Ready,
                                Verdict::Failed(why) => Verdict::Failed(why),
                                Verdict::InProgress(why) => Verdict::Failed(format!(
                                    "deleted before it was ready (last seen: {why})"
                                )),
                            },
                            None => Verdict::InProgress("not found".to_owned()),
                        },
                        (Some(obj), _) => judge.judge(t, obj),
                    }
                } else {
                    Verdict::InProgress("watch not established yet".to_owned())
                };
                drop(c);
                match verdict {
                    Verdict::Ready => {}
                    Verdict::InProgress(why) => blocked.push((t.label(), why)),
                    Verdict::Failed(reason) => {
                        return Err(WaitError::Failed {
                            target: t.label(),
                            reason,
                        });
                    }
                }
            }
            if blocked.is_empty() {
                return Ok(started.elapsed());
            }
            if *cancel.borrow() {
                return Err(WaitError::Cancelled);
            }
            tokio::select! {
                r = changes.changed() => if r.is_err() { return Err(WaitError::Cancelled) },
                // A closed channel (no Ctrl-C handler) disables this branch.
                Ok(()) = cancel.changed() => {}
                () = tokio::time::sleep(RECHECK) => {}
                () = tokio::time::sleep_until(deadline) => {
                    return Err(WaitError::Timeout { after: timeout, blocked });
                }
            }
        }
    }
}

/// Lists once, then watches from the list's resourceVersion; resumes from the last seen
/// version when the stream ends or drops, and relists only when the server says it is gone.
async fn keep_current(
    cluster: Arc<dyn Cluster>,
    watcher: std::sync::Weak<Watcher>,
    kind: Kind,
    ns: Option<String>,
    cache: Arc<Mutex<Cache>>,
) {
    let mut rv: Option<String> = None;
    let mut backoff = Duration::from_millis(50);
    loop {
        let Some(w) = watcher.upgrade() else { return };
        let version = if let Some(v) = &rv {
            v.clone()
        } else {
            let Ok((items, version)) = cluster.list(&kind, ns.as_deref(), "").await else {
                drop(w);
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(2));
                continue;
            };
            let mut c = lock(&cache);
            c.objects = items
                .into_iter()
                .filter_map(|o| Some((o["metadata"]["name"].as_str()?.to_owned(), o)))
                .collect();
            c.synced = true;
            drop(c);
            w.bump();
            rv = Some(version.clone());
            version
        };
        let stream = cluster.watch(&kind, ns.as_deref(), &version).await;
        drop(w);
        let mut stream = match stream {
            Ok(s) => s,
            Err(e) => {
                if e.kind == ErrorKind::Gone {
                    rv = None;
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(2));
                continue;
            }
        };
        backoff = Duration::from_millis(50);
        while let Some(event) = stream.next().await {
            match event {
                Ok(Change::Applied(obj)) => record(&cache, &watcher, &mut rv, obj, false),
                Ok(Change::Deleted(obj)) => record(&cache, &watcher, &mut rv, obj, true),
                Ok(Change::Bookmark(v)) => rv = Some(v),
                Err(e) => {
                    if e.kind == ErrorKind::Gone {
                        rv = None;
                    }
                    break;
                }
            }
        }
    }
}

/// An object as it was before its deletion began: its last state without the deletion marks.
fn before_deletion(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(meta) = object["metadata"].as_object_mut() {
        meta.remove("deletionTimestamp");
        meta.remove("deletionGracePeriodSeconds");
    }
    object
}

/// Applies one watch event to the cache.
fn record(
    cache: &Mutex<Cache>,
    watcher: &std::sync::Weak<Watcher>,
    rv: &mut Option<String>,
    obj: Value,
    deleted: bool,
) {
    let Some(name) = obj["metadata"]["name"].as_str().map(str::to_owned) else {
        return;
    };
    if let Some(v) = obj["metadata"]["resourceVersion"].as_str() {
        *rv = Some(v.to_owned());
    }
    let mut c = lock(cache);
    if deleted {
        c.objects.remove(&name);
        c.gone.insert(name, obj);
    } else {
        c.gone.remove(&name);
        c.objects.insert(name, obj);
    }
    drop(c);
    if let Some(w) = watcher.upgrade() {
        w.bump();
    }
}
