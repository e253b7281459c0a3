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
    /// werf's tracking ([`crate::plan::wait::Tracked`]): failures are counted and tolerated up
    /// to the allowed number, and no activity counts one; `None`: the first failure fails.
    pub track: Option<crate::model::werf::Tracking>,
}

/// What a tracked wait remembers of one target between two judgements.
#[derive(Default)]
struct Tracker {
    /// Failures counted so far.
    failures: u64,
    /// Whether the last judgement was a failure (a failure counts once, when it starts).
    failing: bool,
    /// The last failure's reason.
    last: String,
    /// The object's last `resourceVersion` seen, and when it last changed (activity).
    version: Option<String>,
    active: Option<Instant>,
}

impl Tracker {
    /// Turns a judgement into a tracked one, counting failures as kubedog counts them for
    /// nelm (DIALECTS.md §1.5): each time the object turns failed, and each no-activity
    /// timeout without a change to it; the object fails once they exceed those allowed,
    /// never with `IgnoreAndContinueDeployProcess`.
    fn judge(
        &mut self,
        track: &crate::model::werf::Tracking,
        verdict: Verdict,
        version: Option<String>,
        now: Instant,
    ) -> Verdict {
        use crate::model::werf::{FAILURES_ALLOWED, NO_ACTIVITY_TIMEOUT};
        if self.active.is_none() || version != self.version {
            self.version = version;
            self.active = Some(now);
        }
        let why = match verdict {
            Verdict::Ready => return Verdict::Ready,
            Verdict::Failed(reason) => {
                if !self.failing {
                    self.failing = true;
                    self.failures += 1;
                    self.last.clone_from(&reason);
                }
                reason
            }
            Verdict::InProgress(why) => {
                self.failing = false;
                why
            }
        };
        if let (Some(limit), Some(active)) = (track.no_activity, self.active)
            && now.duration_since(active) >= limit
        {
            self.failures += 1;
            self.active = Some(now);
            self.last = format!(
                "no activity for {} ({NO_ACTIVITY_TIMEOUT})",
                crate::duration::go_duration(limit)
            );
        }
        if self.failures == 0 {
            return Verdict::InProgress(why);
        }
        let allowed = track.failures_allowed;
        let times = |n: u64| {
            if n == 1 {
                "1 time".to_owned()
            } else {
                format!("{n} times")
            }
        };
        if track.fail_mode.counts_failures() && self.failures > allowed {
            return Verdict::Failed(format!(
                "{}; failed {}, more than the {allowed} allowed ({FAILURES_ALLOWED}, fail-mode {})",
                self.last,
                times(self.failures),
                track.fail_mode.name()
            ));
        }
        let of = if track.fail_mode.counts_failures() {
            format!("{allowed} allowed")
        } else {
            format!("fail-mode {}", track.fail_mode.name())
        };
        Verdict::InProgress(format!(
            "{why} (failed {}, {of}; last: {})",
            times(self.failures),
            self.last
        ))
    }
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
        let mut trackers: Vec<Tracker> = targets.iter().map(|_| Tracker::default()).collect();
        loop {
            changes.borrow_and_update();
            let mut blocked = Vec::new();
            for ((t, cache), tracker) in targets.iter().zip(&caches).zip(&mut trackers) {
                let c = lock(cache);
                let version = c
                    .objects
                    .get(&t.name)
                    .and_then(|o| o["metadata"]["resourceVersion"].as_str())
                    .map(str::to_owned);
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
                let verdict = match &t.track {
                    Some(track) => tracker.judge(track, verdict, version, Instant::now()),
                    None => verdict,
                };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::werf::{FailMode, Tracking};

    fn track(mode: FailMode, allowed: u64, no_activity: Option<Duration>) -> Tracking {
        Tracking {
            fail_mode: mode,
            failures_allowed: allowed,
            no_activity,
        }
    }

    fn failed() -> Verdict {
        Verdict::Failed("Deployment: progress deadline exceeded".to_owned())
    }

    fn waiting() -> Verdict {
        Verdict::InProgress("0 of 1 replicas available".to_owned())
    }

    fn v(n: u32) -> Option<String> {
        Some(n).map(|n| n.to_string())
    }

    #[test]
    fn a_tracked_target_fails_once_its_failures_exceed_those_allowed() {
        let t = track(FailMode::FailWholeDeployProcessImmediately, 1, None);
        let mut tracker = Tracker::default();
        let now = Instant::now();
        let Verdict::InProgress(why) = tracker.judge(&t, failed(), v(1), now) else {
            panic!("the first failure is allowed");
        };
        assert!(why.contains("failed 1 time, 1 allowed"), "{why}");
        // A failure that lasts counts once.
        assert!(matches!(
            tracker.judge(&t, failed(), v(2), now),
            Verdict::InProgress(_)
        ));
        assert!(matches!(
            tracker.judge(&t, waiting(), v(3), now),
            Verdict::InProgress(_)
        ));
        let Verdict::Failed(why) = tracker.judge(&t, failed(), v(4), now) else {
            panic!("the second failure is one too many");
        };
        assert!(
            why.contains(
                "failed 2 times, more than the 1 allowed (werf.io/failures-allowed-per-replica"
            ),
            "{why}"
        );
        // Ready is ready, whatever failed before.
        assert_eq!(tracker.judge(&t, Verdict::Ready, v(5), now), Verdict::Ready);
    }

    #[test]
    fn hope_is_fail_whole_and_ignore_never_fails() {
        let hope = track(FailMode::HopeUntilEndOfDeployProcess, 0, None);
        assert!(matches!(
            Tracker::default().judge(&hope, failed(), v(1), Instant::now()),
            Verdict::Failed(_)
        ));
        let ignore = track(FailMode::IgnoreAndContinueDeployProcess, 0, None);
        let mut tracker = Tracker::default();
        for n in 0..5 {
            let verdict = if n % 2 == 0 { failed() } else { waiting() };
            let Verdict::InProgress(why) = tracker.judge(&ignore, verdict, v(n), Instant::now())
            else {
                panic!("IgnoreAndContinueDeployProcess never fails");
            };
            assert!(why.contains("IgnoreAndContinueDeployProcess"), "{why}");
        }
    }

    #[test]
    fn no_activity_for_the_timeout_counts_a_failure_naming_the_annotation() {
        let limit = Duration::from_secs(10);
        let t = track(FailMode::FailWholeDeployProcessImmediately, 1, Some(limit));
        let mut tracker = Tracker::default();
        let start = Instant::now();
        assert_eq!(tracker.judge(&t, waiting(), v(1), start), waiting());
        // A change to the object is activity.
        let later = start + Duration::from_secs(8);
        assert_eq!(tracker.judge(&t, waiting(), v(2), later), waiting());
        let quiet = later + limit;
        let Verdict::InProgress(why) = tracker.judge(&t, waiting(), v(2), quiet) else {
            panic!("one failure is allowed");
        };
        assert!(
            why.contains("no activity for 10s (werf.io/no-activity-timeout)"),
            "{why}"
        );
        let Verdict::Failed(why) = tracker.judge(&t, waiting(), v(2), quiet + limit) else {
            panic!("a second quiet period is one failure too many");
        };
        assert!(
            why.starts_with("no activity for 10s (werf.io/no-activity-timeout); failed 2 times"),
            "{why}"
        );
    }
}
