//! Running a release: install/upgrade, uninstall and rollback over a [`Record`].
//!
//! Release order (SPEC §2): CRDs (wait Established) → pre hooks by weight, name, kind → the plan
//! → pruning of what left the chart, in reverse recorded order (as Helm, before the post hooks)
//! → post hooks. Deletions go out one at a time in exactly the order given. The
//! plan runs as a DAG (SPEC §2's deliberate divergence): each step starts as soon as its own
//! prerequisites (`Step::after`) are ready. Inside a step, resources go out in Helm's kind
//! order, the resources of one kind concurrently.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::{mpsc, watch};

use serde::{Deserialize, Serialize};

use super::cluster::{ApplyOptions, Cluster, ClusterError, ErrorKind, Kind};
use super::ownership::{self, Decision, Known, Owner};
use super::release::{Item, Record};
use super::wait::{Goal, Judge, Target, WaitError, Watcher, human};
use crate::model::argo::DeletePolicy;
use crate::model::kinds::install_rank;
use crate::plan::{Dialect, Wait};
use crate::readiness::Readiness;

mod argo;
mod delete;
mod external;
mod generated;
mod outcome;

pub use delete::{removed, removed_from_chart, reverse_steps};
use generated::is_generated;
pub use outcome::{Event, Report, RunError, RunSettings, StepReport, StepResult};

/// Shared state of one run.
pub struct Runner {
    pub cluster: Arc<dyn Cluster>,
    pub watcher: Arc<Watcher>,
    pub judge: Arc<dyn Judge>,
    pub settings: RunSettings,
    pub events: mpsc::UnboundedSender<Event>,
    pub cancel: watch::Receiver<bool>,
    pub deadline: Instant,
    /// Indexes of items sent so far.
    applied: Mutex<BTreeSet<usize>>,
    kinds: Mutex<BTreeMap<(String, String), Kind>>,
    report: Mutex<Report>,
    /// Objects named only by `generateName` (Argo CD hooks) created so far: the item, and
    /// the object the server made (its type, namespace and name).
    generated: Mutex<Vec<(usize, Target)>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Runner {
    #[must_use]
    pub fn new(
        cluster: Arc<dyn Cluster>,
        judge: Arc<dyn Judge>,
        settings: RunSettings,
        events: mpsc::UnboundedSender<Event>,
        cancel: watch::Receiver<bool>,
    ) -> Arc<Self> {
        let deadline = Instant::now() + settings.timeout;
        Arc::new(Self {
            watcher: Watcher::new(cluster.clone()),
            cluster,
            judge,
            settings,
            events,
            cancel,
            deadline,
            applied: Mutex::new(BTreeSet::new()),
            kinds: Mutex::new(BTreeMap::new()),
            report: Mutex::new(Report::default()),
            generated: Mutex::new(Vec::new()),
        })
    }

    /// Says something about the run that is no step's (an object left in place).
    pub(crate) fn note(&self, s: String) {
        self.emit(Event::Note(s));
    }

    /// Sends an event to the progress output and keeps what the record keeps.
    fn emit(&self, e: Event) {
        {
            let mut report = lock(&self.report);
            match &e {
                Event::Finished {
                    step,
                    resources,
                    waited,
                    result,
                } => report.steps.push(StepReport {
                    step: step.clone(),
                    resources: *resources,
                    waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
                    result: result.word().to_owned(),
                    detail: match result {
                        StepResult::Failed(m) => Some(m.clone()),
                        _ => None,
                    },
                }),
                Event::NotStarted { step, after } => report.steps.push(StepReport {
                    step: step.clone(),
                    resources: 0,
                    waited_ms: 0,
                    result: "not started".to_owned(),
                    detail: (!after.is_empty()).then(|| format!("after {}", after.join(", "))),
                }),
                Event::Kept { resource } => report.kept.push(resource.clone()),
                Event::Skipped { resource, owner } => {
                    report.skipped.push((resource.clone(), owner.clone()));
                }
                Event::Started { .. } | Event::Waiting { .. } | Event::Note(_) => {}
            }
        }
        let _ = self.events.send(e);
    }

    /// How the run went so far.
    #[must_use]
    pub fn report(&self) -> Report {
        lock(&self.report).clone()
    }

    fn release(record: &Record) -> ownership::Release<'_> {
        ownership::Release {
            name: &record.name,
            namespace: &record.namespace,
        }
    }

    fn cancelled(&self) -> bool {
        *self.cancel.borrow()
    }

    /// Items sent to the cluster so far.
    #[must_use]
    pub fn applied(&self) -> Vec<usize> {
        lock(&self.applied).iter().copied().collect()
    }

    pub(super) async fn kind(&self, item: &Item, refresh: bool) -> Result<Kind, RunError> {
        let key = (item.api_version.clone(), item.kind.clone());
        if !refresh {
            if let Some(k) = lock(&self.kinds).get(&key) {
                return Ok(k.clone());
            }
        }
        let kind = self
            .cluster
            .resolve(&item.api_version, &item.kind, refresh)
            .await
            .map_err(|error| RunError::Cluster {
                resource: Some(self.label(item)),
                error,
            })?;
        lock(&self.kinds).insert(key, kind.clone());
        Ok(kind)
    }

    /// Whether a CRD this run has applied defines `item`'s kind.
    fn defined_here(&self, record: &Record, item: &Item) -> bool {
        let group = crate::model::kinds::api_group(&item.api_version);
        let applied = lock(&self.applied);
        record.items.iter().enumerate().any(|(i, crd)| {
            applied.contains(&i)
                && crd.kind == "CustomResourceDefinition"
                && crd.object["spec"]["group"].as_str() == Some(group)
                && crd.object["spec"]["names"]["kind"].as_str() == Some(item.kind.as_str())
        })
    }

    /// The kind of `item` once the API server serves it: a CRD it has just established may
    /// not be in its discovery yet, so it is asked again until it is, within the readiness
    /// timeout.
    async fn kind_once_served(&self, item: &Item) -> Result<Kind, RunError> {
        let until = (Instant::now() + self.settings.readiness_timeout).min(self.deadline);
        resolve_until_served(self.cluster.as_ref(), item, until)
            .await
            .map_err(|error| RunError::Cluster {
                resource: Some(self.label(item)),
                error,
            })
            .inspect(|kind| {
                let key = (item.api_version.clone(), item.kind.clone());
                lock(&self.kinds).insert(key, kind.clone());
            })
    }

    /// The namespace `item` lives in: none for a kind the server serves cluster-scoped (once
    /// its scope is known), the recorded one otherwise.
    pub(super) fn scope(&self, item: &Item) -> Option<String> {
        let key = (item.api_version.clone(), item.kind.clone());
        match lock(&self.kinds).get(&key) {
            Some(kind) => Self::namespace_for(kind, item),
            None => item.namespace.clone(),
        }
    }

    /// `Kind/name`, with the namespace only when the object has one.
    pub(super) fn label(&self, item: &Item) -> String {
        item.label_in(self.scope(item).as_deref())
    }

    pub(super) fn namespace_for(kind: &Kind, item: &Item) -> Option<String> {
        if kind.namespaced {
            item.namespace.clone()
        } else {
            None
        }
    }

    /// Sends one object (server-side apply) with this release's ownership marks. A CRD from
    /// `crds/` is only created, as Helm does: an existing one is never changed.
    async fn apply_item(&self, record: &Record, index: usize) -> Result<Target, RunError> {
        let item = &record.items[index];
        let kind = match self.kind(item, false).await {
            Err(RunError::Cluster { error, .. })
                if error.kind == ErrorKind::NotFound && self.defined_here(record, item) =>
            {
                self.kind_once_served(item).await?
            }
            other => other?,
        };
        let ns = Self::namespace_for(&kind, item);
        let mut target = Target {
            kind: kind.clone(),
            namespace: ns.clone(),
            name: item.name.clone(),
            readiness: None,
            goal: Goal::Ready,
            uid: None,
            track: None,
        };
        let create_only = record.crds.contains(&index);
        if create_only && self.get_live(item, &kind, ns.as_deref()).await?.is_some() {
            return Ok(target);
        }
        if is_generated(&item.object) {
            return self.create_generated(record, index, target).await;
        }
        lock(&self.applied).insert(index);
        let options = ApplyOptions {
            force: self.settings.force_conflicts,
            dry_run: self.settings.dry_run,
        };
        let object = Self::outgoing(record, index, ns.as_deref());
        let applied = self
            .cluster
            .apply(&kind, ns.as_deref(), &object, options)
            .await
            .map_err(|error| RunError::Cluster {
                resource: Some(self.label(item)),
                error,
            })?;
        target.uid = applied["metadata"]["uid"].as_str().map(str::to_owned);
        Ok(target)
    }

    /// The object exactly as an apply sends it: with this release's ownership marks (except
    /// a CRD from `crds/`, which Helm creates as written) and the namespace the type takes.
    pub(super) fn outgoing(record: &Record, index: usize, ns: Option<&str>) -> Value {
        let item = &record.items[index];
        let mut object = item.object.clone();
        if !record.crds.contains(&index) {
            ownership::mark(&mut object, Self::release(record));
        }
        match (ns, object["metadata"].as_object_mut()) {
            (Some(ns), Some(meta)) => {
                meta.insert("namespace".to_owned(), Value::String(ns.to_owned()));
            }
            (None, Some(meta)) => {
                meta.remove("namespace");
            }
            _ => {}
        }
        object
    }

    /// The live state of some of the record's objects, in order: their type, namespace and
    /// the object (`None` when it does not exist, or its type does not). Reads only, a few at
    /// a time.
    async fn live_objects(
        &self,
        record: &Record,
        indexes: &[usize],
    ) -> Result<Vec<(usize, Kind, Option<String>, Option<Value>)>, RunError> {
        use futures_util::StreamExt as _;
        // Owned indexes: a closure over borrowed ones makes the future not `Send` for every
        // lifetime, which the spawned deploy task needs.
        let owned: Vec<usize> = indexes.to_vec();
        let reads = futures_util::stream::iter(owned.into_iter().map(|i| async move {
            let item = &record.items[i];
            let kind = match self.kind(item, false).await {
                Ok(k) => k,
                // No such type (a CRD not installed yet, or removed): no such object.
                Err(RunError::Cluster { error, .. }) if error.kind == ErrorKind::NotFound => {
                    return Ok(None);
                }
                Err(e) => return Err(e),
            };
            let ns = Self::namespace_for(&kind, item);
            let live = self.get_live(item, &kind, ns.as_deref()).await?;
            Ok(Some((i, kind, ns, live)))
        }))
        .buffered(16)
        .collect::<Vec<_>>()
        .await;
        let mut out = Vec::with_capacity(reads.len());
        for read in reads {
            out.extend(read?);
        }
        Ok(out)
    }

    pub(super) async fn get_live(
        &self,
        item: &Item,
        kind: &Kind,
        ns: Option<&str>,
    ) -> Result<Option<Value>, RunError> {
        self.cluster
            .get(kind, ns, &item.name)
            .await
            .map_err(|error| RunError::Cluster {
                resource: Some(self.label(item)),
                error,
            })
    }

    pub(super) fn decide(record: &Record, index: usize, live: &Value) -> Decision {
        let item = &record.items[index];
        let known = Known {
            recorded: Some(&item.object),
            hook: item.hook.is_some(),
        };
        ownership::decide(live, Self::release(record), known)
    }

    /// Reads the live objects the record would write and judges who owns them; returns those
    /// that belong to someone else. Nothing is written.
    pub async fn foreign_objects(&self, record: &Record) -> Result<Vec<(String, Owner)>, RunError> {
        let indexes: Vec<usize> = (0..record.items.len())
            .filter(|i| !record.crds.contains(i))
            .collect();
        let live = self.live_objects(record, &indexes).await?;
        Ok(live
            .into_iter()
            .filter_map(|(i, _, _, live)| match Self::decide(record, i, &live?) {
                Decision::Foreign(owner) => Some((self.label(&record.items[i]), owner)),
                Decision::Owned | Decision::Kept => None,
            })
            .collect())
    }

    /// Applies `indexes` in Helm's kind order, one kind at a time, the objects of a kind
    /// concurrently.
    async fn apply_in_kind_order(
        &self,
        record: &Record,
        indexes: &[usize],
    ) -> Result<Vec<Target>, RunError> {
        let mut targets = Vec::new();
        let mut rest = indexes;
        while let Some(&first) = rest.first() {
            let rank = install_rank(&record.items[first].kind);
            let same = rest
                .iter()
                .take_while(|&&i| install_rank(&record.items[i].kind) == rank)
                .count();
            let (batch, tail) = rest.split_at(same);
            rest = tail;
            let results =
                futures_util::future::join_all(batch.iter().map(|&i| self.apply_item(record, i)))
                    .await;
            for r in results {
                targets.push(r?);
            }
        }
        Ok(targets)
    }

    /// The wait budget: `--readiness-timeout`, cut to what is left of `--timeout`.
    fn budget(&self) -> Duration {
        self.settings
            .readiness_timeout
            .min(self.deadline.saturating_duration_since(Instant::now()))
    }

    pub(super) async fn wait(&self, step: &str, targets: &[Target]) -> Result<Duration, RunError> {
        if self.settings.dry_run {
            return Ok(Duration::ZERO);
        }
        let budget = self.budget();
        let overall = budget < self.settings.readiness_timeout;
        let mut cancel = self.cancel.clone();
        match self
            .watcher
            .wait(targets, self.judge.as_ref(), budget, &mut cancel)
            .await
        {
            Ok(d) => Ok(d),
            Err(WaitError::Cancelled) => Err(RunError::Interrupted),
            Err(error @ WaitError::Timeout { .. }) if overall => Err(RunError::Overall {
                timeout: self.settings.timeout,
                step: step.to_owned(),
                error,
            }),
            Err(error) => Err(RunError::Wait {
                step: step.to_owned(),
                error,
            }),
        }
    }

    /// Applies and waits for one group of objects as a unit (CRDs, a hook, a step).
    async fn run_unit(
        &self,
        record: &Record,
        label: &str,
        indexes: &[usize],
        goal: Option<Goal>,
    ) -> Result<(), RunError> {
        let (result, later) = self.run_unit_unblocking(record, label, indexes, goal).await;
        result?;
        if later.is_empty() {
            return Ok(());
        }
        self.wait(label, &later).await.map(|_| ())
    }

    /// As [`Self::run_unit`], but the unit counts as done once every object is ready or, by a
    /// kapp wait rule's `unblockChanges` condition, lets what waits for it go ahead (kapp's
    /// `waiting_changes.go`); those objects come back, to be waited for until they are done.
    async fn run_unit_unblocking(
        &self,
        record: &Record,
        label: &str,
        indexes: &[usize],
        goal: Option<Goal>,
    ) -> (Result<(), RunError>, Vec<Target>) {
        let mut later = Vec::new();
        self.emit(Event::Started {
            step: label.to_owned(),
            resources: indexes.len(),
            verb: "apply",
            objects: indexes.iter().map(|&i| record.items[i].short()).collect(),
        });
        let started = Instant::now();
        let result = async {
            // Parsed before anything is sent: an unusable annotation stops the step cleanly.
            // A plan step waits as its plan says (a dialect's waits); CRDs and hooks by goal.
            let mut readiness = Vec::with_capacity(indexes.len());
            let mut tracks = Vec::with_capacity(indexes.len());
            for &i in indexes {
                let item = &record.items[i];
                let wait = match goal {
                    Some(Goal::Complete) => &Wait::Complete,
                    _ => record.wait_of(i),
                };
                tracks.push(match wait {
                    Wait::Tracked(t) => Some(t.tracking.clone()),
                    _ => None,
                });
                let r = super::judge::readiness_for(
                    wait,
                    self.settings.wait_for_jobs,
                    self.settings.argo_health.as_ref(),
                )
                .map_err(|message| RunError::Cluster {
                    resource: Some(self.label(item)),
                    error: ClusterError::other(message),
                })?;
                readiness.push(r.map(Arc::new));
            }
            let goal = goal.unwrap_or(Goal::Ready);
            if goal != Goal::Complete && !self.settings.dry_run {
                self.recreate_hooks(record, label, indexes).await?;
            }
            // Targets come back in the order of `indexes`.
            let targets = self.apply_after_external(record, label, indexes).await?;
            let targets: Vec<Target> = targets
                .into_iter()
                .zip(readiness)
                .zip(tracks)
                .filter_map(|((mut t, r), track)| {
                    t.goal = goal;
                    t.track = track;
                    t.readiness = Some(r?);
                    Some(t)
                })
                .map(|mut t| {
                    if let Some(Readiness::KappConditions(k)) = t.readiness.as_deref() {
                        if k.unblocks() {
                            later.push(t.clone());
                            t.readiness =
                                Some(Arc::new(Readiness::KappConditions(k.until_unblocked())));
                        }
                    }
                    t
                })
                .collect();
            self.emit(Event::Waiting {
                step: label.to_owned(),
            });
            self.wait(label, &targets).await
        }
        .await;
        if result.is_err() {
            later.clear();
        }
        (
            self.finish(label, indexes.len(), started.elapsed(), result),
            later,
        )
    }

    /// A dialect's step that runs hooks deletes the ones left from an earlier run first, as
    /// the default policy does (Helm's `before-hook-creation`, Argo CD's `BeforeHookCreation`):
    /// a Job's spec cannot change.
    async fn recreate_hooks(
        &self,
        record: &Record,
        label: &str,
        indexes: &[usize],
    ) -> Result<(), RunError> {
        let argo = record.dialect.is_some_and(Dialect::generated_hooks);
        let hooks: Vec<usize> = indexes
            .iter()
            .copied()
            .filter(|&i| {
                let item = &record.items[i];
                let helm = item.hook.as_ref().is_some_and(|h| {
                    h.delete_policies.is_empty()
                        || h.delete_policies
                            .iter()
                            .any(|p| p == "before-hook-creation")
                });
                // Argo CD's `BeforeHookCreation`; a hook named by `generateName` is new on every
                // run: nothing to delete.
                helm || (argo
                    && !is_generated(&item.object)
                    && item
                        .argo_delete_policies
                        .contains(&DeletePolicy::BeforeHookCreation))
            })
            .collect();
        if !hooks.is_empty() {
            self.delete_and_wait(record, &hooks, label, false).await?;
        }
        Ok(())
    }

    fn finish(
        &self,
        label: &str,
        resources: usize,
        elapsed: Duration,
        result: Result<Duration, RunError>,
    ) -> Result<(), RunError> {
        match result {
            Ok(waited) => {
                let result = if self.settings.dry_run {
                    StepResult::DryRun
                } else {
                    StepResult::Ready
                };
                self.emit(Event::Finished {
                    step: label.to_owned(),
                    resources,
                    waited,
                    result,
                });
                Ok(())
            }
            Err(e) => {
                let result = match e {
                    RunError::Interrupted => StepResult::Skipped,
                    _ => StepResult::Failed(e.to_string()),
                };
                self.emit(Event::Finished {
                    step: label.to_owned(),
                    resources,
                    waited: elapsed,
                    result,
                });
                Err(e)
            }
        }
    }

    /// CRDs from `crds/`: applied, waited Established, then discovery is refreshed.
    pub async fn crds(&self, record: &Record) -> Result<(), RunError> {
        if record.crds.is_empty() {
            return Ok(());
        }
        self.run_unit(record, "crds", &record.crds, None).await?;
        lock(&self.kinds).clear();
        Ok(())
    }

    /// The hooks of one event, by weight, name, kind, honouring `helm.sh/hook-delete-policy`
    /// as Helm does: `before-hook-creation` (the default) before each hook is created, and
    /// `hook-succeeded` only once every hook of the event has succeeded, in reverse order, so
    /// that a later hook can still use what an earlier one created (a Job's `ServiceAccount`).
    /// When a hook fails, it is deleted if it says `hook-failed`, and the hooks that succeeded
    /// before it if they say `hook-succeeded`.
    /// A release applied in a dialect runs the hooks its tool installs inside its steps, and
    /// no others on install, upgrade or rollback (Argo's `Skip`, werf's `deploy-on` elsewhere);
    /// only the delete events run Helm's hooks.
    pub async fn hooks(&self, record: &Record, event: &str) -> Result<(), RunError> {
        if record.dialect.is_some() && !event.ends_with("-delete") {
            return Ok(());
        }
        let has = |i: usize, policy: &str| {
            record.items[i]
                .hook
                .as_ref()
                .is_some_and(|h| h.delete_policies.iter().any(|p| p == policy))
        };
        let mut succeeded: Vec<(usize, String)> = Vec::new();
        for &i in &record.hooks {
            let item = &record.items[i];
            let Some(hook) = &item.hook else { continue };
            if !hook.events.iter().any(|e| e == event) {
                continue;
            }
            if self.cancelled() {
                return Err(RunError::Interrupted);
            }
            let label = format!("{event} hook {}", self.label(item));
            if self.settings.dry_run {
                self.run_unit(record, &label, &[i], Some(Goal::Complete))
                    .await?;
                continue;
            }
            // Helm's default policy is before-hook-creation.
            if hook.delete_policies.is_empty() || has(i, "before-hook-creation") {
                self.delete_and_wait(record, &[i], &label, false).await?;
            }
            let outcome = self
                .run_unit(record, &label, &[i], Some(Goal::Complete))
                .await;
            match outcome {
                Ok(()) => succeeded.push((i, label)),
                Err(RunError::Interrupted) => return Err(RunError::Interrupted),
                Err(e) => {
                    if has(i, "hook-failed") {
                        self.delete_and_wait(record, &[i], &label, false).await?;
                    }
                    for (j, label) in &succeeded {
                        if has(*j, "hook-succeeded") {
                            self.delete_and_wait(record, &[*j], label, false).await?;
                        }
                    }
                    return Err(e);
                }
            }
        }
        for (i, label) in succeeded.iter().rev() {
            if has(*i, "hook-succeeded") {
                self.delete_and_wait(record, &[*i], label, false).await?;
            }
        }
        Ok(())
    }

    /// The plan as a DAG: a step starts when its direct prerequisites are ready. Then, as
    /// Argo CD does at the end of a sync, the hooks it created from `generateName` are deleted
    /// as their policy asks for the outcome.
    pub async fn plan(self: &Arc<Self>, record: &Arc<Record>) -> Result<(), RunError> {
        let result = self.run_steps(record).await;
        if !matches!(result, Err(RunError::Interrupted)) {
            self.delete_generated_hooks(record, result.is_ok()).await;
        }
        result
    }

    async fn run_steps(self: &Arc<Self>, record: &Arc<Record>) -> Result<(), RunError> {
        let n = record.steps.len();
        let mut done = vec![false; n];
        let mut started = vec![false; n];
        let mut running = tokio::task::JoinSet::new();
        let mut failure: Option<RunError> = None;
        loop {
            if failure.is_none() && !self.cancelled() {
                for (s, step) in record.steps.iter().enumerate() {
                    if !started[s] && step.after.iter().all(|&a| a < n && done[a]) {
                        started[s] = true;
                        let (this, rec) = (self.clone(), record.clone());
                        running.spawn(async move {
                            let step = &rec.steps[s];
                            let (result, later) = this
                                .run_unit_unblocking(&rec, &step.label, &step.resources, None)
                                .await;
                            (s, result, later)
                        });
                    }
                }
            }
            let mut cancel = self.cancel.clone();
            let next = tokio::select! {
                r = running.join_next() => r,
                // A closed channel means no Ctrl-C handler: nothing to wait for then.
                Ok(()) = cancel.changed(), if !*cancel.borrow() => continue,
            };
            match next {
                None => break,
                Some(Ok((s, Ok(()), later))) => {
                    if s < n {
                        done[s] = true;
                    }
                    if !later.is_empty() {
                        // Unblocked, not done: what waits for the step goes ahead while these
                        // are waited for; the deploy ends once they are done.
                        let (this, rec) = (self.clone(), record.clone());
                        running.spawn(async move {
                            let label = &rec.steps[s].label;
                            (
                                usize::MAX,
                                this.wait(label, &later).await.map(|_| ()),
                                Vec::new(),
                            )
                        });
                    }
                }
                Some(Ok((_, Err(e), _))) => {
                    if failure.is_none() || matches!(failure, Some(RunError::Interrupted)) {
                        failure = Some(e);
                    }
                }
                Some(Err(join)) => {
                    failure.get_or_insert(RunError::Cluster {
                        resource: None,
                        error: ClusterError::other(format!("a step task stopped: {join}")),
                    });
                }
            }
        }
        if failure.is_some() || self.cancelled() {
            for (_, step) in record
                .steps
                .iter()
                .enumerate()
                .filter(|(s, _)| !started[*s])
            {
                self.emit(Event::NotStarted {
                    step: step.label.clone(),
                    after: step
                        .after
                        .iter()
                        .filter(|&&a| a < n && !done[a])
                        .map(|&a| record.steps[a].label.clone())
                        .collect(),
                });
            }
        }
        if let Some(e) = failure {
            return Err(e);
        }
        if self.cancelled() {
            return Err(RunError::Interrupted);
        }
        if let Some(s) = (0..n).find(|&s| !done[s]) {
            return Err(RunError::Cluster {
                resource: None,
                error: ClusterError::other(format!(
                    "step {} never became runnable: its prerequisites are not in the plan",
                    record.steps[s].label
                )),
            });
        }
        Ok(())
    }
}

/// Resolves `item`'s kind, asking the server's discovery again until it serves it or `until`
/// passes (then the last answer).
async fn resolve_until_served(
    cluster: &dyn Cluster,
    item: &Item,
    until: Instant,
) -> Result<Kind, ClusterError> {
    let mut pause = Duration::from_millis(100);
    loop {
        match cluster.resolve(&item.api_version, &item.kind, true).await {
            Err(e) if e.kind == ErrorKind::NotFound && Instant::now() + pause < until => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_secs(1));
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::release::RecordedStep;

    /// A server whose discovery serves one kind only from its `served_from`-th look on (a CRD
    /// it has just established); nothing else is asked of it.
    struct LateDiscovery {
        looks: std::sync::atomic::AtomicUsize,
        served_from: usize,
    }

    fn unused<'a, T: Send + 'a>() -> crate::apply::cluster::BoxFuture<'a, T> {
        Box::pin(async { Err(ClusterError::other("not asked in this test")) })
    }

    impl Cluster for LateDiscovery {
        fn resolve<'a>(
            &'a self,
            api_version: &'a str,
            kind: &'a str,
            _refresh: bool,
        ) -> crate::apply::cluster::BoxFuture<'a, Kind> {
            let look = self.looks.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            let served = look >= self.served_from;
            Box::pin(async move {
                if served {
                    Ok(Kind {
                        group: "example.com".to_owned(),
                        version: api_version
                            .rsplit('/')
                            .next()
                            .unwrap_or_default()
                            .to_owned(),
                        kind: kind.to_owned(),
                        plural: "widgets".to_owned(),
                        namespaced: true,
                    })
                } else {
                    Err(ClusterError {
                        kind: ErrorKind::NotFound,
                        message: format!("the server has no resource type for kind {kind}"),
                    })
                }
            })
        }
        fn apply<'a>(
            &'a self,
            _: &'a Kind,
            _: Option<&'a str>,
            _: &'a Value,
            _: ApplyOptions,
        ) -> crate::apply::cluster::BoxFuture<'a, Value> {
            unused()
        }
        fn get<'a>(
            &'a self,
            _: &'a Kind,
            _: Option<&'a str>,
            _: &'a str,
        ) -> crate::apply::cluster::BoxFuture<'a, Option<Value>> {
            unused()
        }
        fn create<'a>(
            &'a self,
            _: &'a Kind,
            _: Option<&'a str>,
            _: &'a Value,
        ) -> crate::apply::cluster::BoxFuture<'a, Value> {
            unused()
        }
        fn replace<'a>(
            &'a self,
            _: &'a Kind,
            _: Option<&'a str>,
            _: &'a str,
            _: &'a Value,
        ) -> crate::apply::cluster::BoxFuture<'a, Value> {
            unused()
        }
        fn delete<'a>(
            &'a self,
            _: &'a Kind,
            _: Option<&'a str>,
            _: &'a str,
            _: Option<&'a str>,
        ) -> crate::apply::cluster::BoxFuture<'a, bool> {
            unused()
        }
        fn list<'a>(
            &'a self,
            _: &'a Kind,
            _: Option<&'a str>,
            _: &'a str,
        ) -> crate::apply::cluster::BoxFuture<'a, (Vec<Value>, String)> {
            unused()
        }
        fn watch<'a>(
            &'a self,
            _: &'a Kind,
            _: Option<&'a str>,
            _: &'a str,
        ) -> crate::apply::cluster::BoxFuture<
            'a,
            futures_util::stream::BoxStream<
                'static,
                crate::apply::cluster::Result<crate::apply::cluster::Change>,
            >,
        > {
            unused()
        }
    }

    #[test]
    fn a_kind_just_established_is_asked_for_again_until_discovery_serves_it() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        let mut widget = item("Widget", "w");
        widget.api_version = "example.com/v1".to_owned();
        let late = LateDiscovery {
            looks: std::sync::atomic::AtomicUsize::new(0),
            served_from: 4,
        };
        let until = Instant::now() + Duration::from_secs(30);
        let kind = runtime
            .block_on(resolve_until_served(&late, &widget, until))
            .expect("served on the fourth look");
        assert_eq!(
            (kind.kind.as_str(), kind.version.as_str()),
            ("Widget", "v1")
        );
        assert_eq!(late.looks.load(std::sync::atomic::Ordering::SeqCst), 4);
        // Never served: the last answer once the time is up, not a wait past it.
        let never = LateDiscovery {
            looks: std::sync::atomic::AtomicUsize::new(0),
            served_from: usize::MAX,
        };
        let until = Instant::now() + Duration::from_millis(500);
        let error = runtime
            .block_on(resolve_until_served(&never, &widget, until))
            .expect_err("never served");
        assert_eq!(error.kind, ErrorKind::NotFound);
        assert!(Instant::now() < until + Duration::from_secs(5));
    }

    fn item(kind: &str, name: &str) -> Item {
        Item {
            api_version: "v1".to_owned(),
            kind: kind.to_owned(),
            namespace: Some("ns".to_owned()),
            name: name.to_owned(),
            object: serde_json::json!({}),
            source: None,
            text: String::new(),
            hook: None,
            wait: Wait::Kstatus,
            argo_delete_policies: Vec::new(),
        }
    }

    fn record(items: Vec<Item>, steps: &[&[usize]], hooks: Vec<usize>) -> Record {
        Record {
            name: "r".to_owned(),
            namespace: "ns".to_owned(),
            revision: 1,
            status: "deployed".to_owned(),
            description: String::new(),
            first_deployed: None,
            last_deployed: None,
            deleted: None,
            sequenced: true,
            report: None,
            plan_recorded: true,
            helm: serde_json::Map::new(),
            labels: std::collections::BTreeMap::new(),
            dialect: None,
            waits: std::collections::BTreeMap::new(),
            external: std::collections::BTreeMap::new(),
            uninstall: None,
            delete_hooks: None,
            items,
            crds: Vec::new(),
            hooks,
            steps: steps
                .iter()
                .enumerate()
                .map(|(i, r)| RecordedStep {
                    label: format!("s{i}"),
                    resources: r.to_vec(),
                    after: Vec::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn uninstall_order_is_the_exact_reverse_then_hooks() {
        let r = record(
            vec![
                item("ConfigMap", "a"),
                item("Deployment", "b"),
                item("Service", "c"),
                item("Job", "h"),
            ],
            &[&[0], &[1, 2]],
            vec![3],
        );
        let steps = reverse_steps(&r, None);
        assert_eq!(
            steps,
            [
                ("s1".to_owned(), vec![2, 1]),
                ("s0".to_owned(), vec![0]),
                ("hooks".to_owned(), vec![3]),
            ]
        );
        // Helm never deletes CRDs from `crds/`: they are in no uninstall step.
        let mut with_crd = r.clone();
        with_crd.items.push(item("CustomResourceDefinition", "w"));
        with_crd.crds = vec![4];
        assert_eq!(reverse_steps(&with_crd, None), steps);
        let only: BTreeSet<usize> = [2].into();
        assert_eq!(
            reverse_steps(&r, Some(&only)),
            vec![("s1".to_owned(), vec![2])]
        );
    }

    #[test]
    fn removed_compares_identities_and_keeps_crds() {
        let mut old = record(
            vec![
                item("ConfigMap", "a"),
                item("Deployment", "b"),
                item("CustomResourceDefinition", "c"),
            ],
            &[&[0, 1]],
            Vec::new(),
        );
        old.crds = vec![2];
        let new = record(vec![item("ConfigMap", "a")], &[&[0]], Vec::new());
        assert_eq!(removed(&old, &new), [1].into());
    }
}
