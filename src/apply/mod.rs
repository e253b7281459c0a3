//! `chartseq apply`, `uninstall`, `rollback`, `history`, `status`, `list`: the sequenced
//! deployer.
//!
//! It executes exactly the plan the planner made (SPEC §2–§3): [`release::record_from_plan`]
//! turns the model and its [`crate::plan::Plan`] into a [`Record`] (objects, steps with their
//! direct prerequisites, CRDs, hooks) without re-planning or re-reading annotations, and
//! [`deploy::Runner`] runs it against a [`cluster::Cluster`]. Revisions live in Helm's own
//! storage ([`storage`]) so that `helm` reads and writes the same releases; objects carry
//! Helm's ownership marks and nothing foreign is ever written or deleted ([`ownership`]).
//! Nothing else in the crate depends on this module (cargo feature `apply`).

pub mod chart;
pub mod cluster;
pub mod deploy;
pub mod judge;
pub mod names;
pub mod ownership;
pub mod preview;
pub mod release;
pub mod storage;
pub mod wait;

use std::collections::BTreeSet;
use std::sync::Arc;

use tokio::sync::{mpsc, watch};

use cluster::Cluster;
use deploy::{Event, RunError, RunSettings, Runner};
use release::Record;
use storage::{Driver, Storage};
use wait::Judge;

/// Everything an install, upgrade, rollback or uninstall needs besides the record.
pub struct Context {
    pub cluster: Arc<dyn Cluster>,
    pub judge: Arc<dyn Judge>,
    pub settings: RunSettings,
    pub atomic: bool,
    pub events: mpsc::UnboundedSender<Event>,
    pub cancel: watch::Receiver<bool>,
    /// Where revisions are stored (`HELM_DRIVER`, `--storage`).
    pub driver: Driver,
    /// Revisions kept per release (`--history-max`); 0 keeps them all.
    pub history_max: usize,
}

impl Context {
    fn runner(&self) -> Arc<Runner> {
        Runner::new(
            self.cluster.clone(),
            self.judge.clone(),
            self.settings.clone(),
            self.events.clone(),
            self.cancel.clone(),
        )
    }

    fn note(&self, s: String) {
        let _ = self.events.send(Event::Note(s));
    }

    fn storage(&self) -> Storage<'_> {
        Storage {
            cluster: self.cluster.as_ref(),
            driver: self.driver,
        }
    }

    /// Every readable revision of a release, oldest first, and the number the next one
    /// takes (after every stored one, readable or not). What cannot be read is named.
    async fn history(&self, namespace: &str, name: &str) -> Result<(Vec<Record>, u32), RunError> {
        let listing = self
            .storage()
            .history(namespace, name)
            .await
            .map_err(RunError::Storage)?;
        for skipped in &listing.skipped {
            self.note(format!("warning: {skipped}"));
        }
        let next = listing.next_revision(name);
        Ok((listing.records, next))
    }

    /// Stores a new revision, making room first as `--history-max` asks.
    async fn create(&self, history: &[Record], record: &storage::Prepared) -> Result<(), RunError> {
        let store = self.storage();
        if self.history_max > 0 {
            store
                .prune(history, self.history_max - 1)
                .await
                .map_err(RunError::Storage)?;
        }
        store.create(record).await.map_err(RunError::Storage)
    }

    async fn update(&self, record: &Record) -> Result<(), RunError> {
        self.storage()
            .update(record)
            .await
            .map_err(RunError::Storage)
    }

    /// Refuses a revision whose objects belong to someone else, before anything is applied
    /// or recorded (Helm's rule); `--take-ownership` adopts them instead.
    async fn check_ownership(&self, runner: &Runner, record: &Record) -> Result<(), RunError> {
        let foreign = runner.foreign_objects(record).await?;
        if foreign.is_empty() {
            return Ok(());
        }
        if !self.settings.take_ownership {
            return Err(RunError::Refused {
                release: record.name.clone(),
                namespace: record.namespace.clone(),
                foreign,
            });
        }
        for (object, owner) in &foreign {
            self.note(format!("--take-ownership: adopting {object} ({owner})"));
        }
        Ok(())
    }

    /// The same context for a follow-up operation (`--atomic`), with a fresh wait budget.
    fn follow_up(&self) -> Self {
        Self {
            cluster: self.cluster.clone(),
            judge: self.judge.clone(),
            settings: self.settings.clone(),
            atomic: false,
            events: self.events.clone(),
            cancel: self.cancel.clone(),
            driver: self.driver,
            history_max: self.history_max,
        }
    }
}

/// What an upgrade does with the values of the revision it starts from: `helm upgrade`'s
/// `--reuse-values`, `--reset-values`, `--reset-then-reuse-values`, or none of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ValuesReuse {
    /// Helm's default: the previous values when none are given, else only the given ones.
    #[default]
    Auto,
    /// The previous values and chart defaults, the given values over them.
    Reuse,
    /// Only the chart's defaults and the given values.
    Reset,
    /// The chart's defaults, the previous values, then the given ones.
    ResetThenReuse,
}

/// The revision an upgrade starts from (Helm's `currentRelease` in `pkg/action/upgrade.go`):
/// the last deployed one, else the last one if it failed or was superseded; none for an
/// install (no history, or the last revision uninstalled).
#[must_use]
pub fn upgraded_from(history: &[Record]) -> Option<&Record> {
    if history.last()?.status == "uninstalled" {
        return None;
    }
    history
        .iter()
        .rev()
        .find(|r| r.status == "deployed")
        .or_else(|| {
            history
                .last()
                .filter(|r| r.status == "failed" || r.status == "superseded")
        })
}

/// The values taken from the revision an upgrade starts from, to render under the given
/// ones: `(values, chart defaults)`, as `helm upgrade` decides them (`reuseValues` in
/// `pkg/action/upgrade.go`). `values_given`: the user gave values of their own.
#[must_use]
pub fn reused_values(
    history: &[Record],
    reuse: ValuesReuse,
    values_given: bool,
) -> (Option<serde_json::Value>, Option<serde_json::Value>) {
    let Some(from) = upgraded_from(history) else {
        return (None, None);
    };
    let config = from
        .helm
        .get("config")
        .filter(|c| c.as_object().is_some_and(|m| !m.is_empty()))
        .cloned();
    match reuse {
        ValuesReuse::Reset => (None, None),
        ValuesReuse::Auto if values_given => (None, None),
        ValuesReuse::Auto | ValuesReuse::ResetThenReuse => (config, None),
        ValuesReuse::Reuse => {
            let defaults = from
                .helm
                .get("chart")
                .and_then(|c| c.get("values"))
                .filter(|v| v.is_object())
                .cloned();
            (config, defaults)
        }
    }
}

/// The last deployed (or superseded) revision and every one after it: what may still be in
/// the cluster.
fn since_deployed(history: &[Record]) -> &[Record] {
    let from = history
        .iter()
        .rposition(|r| r.status == "deployed" || r.status == "superseded")
        .unwrap_or(0);
    &history[from..]
}

/// Refuses a revision whose objects' names or namespaces the API server would refuse (or
/// that would address another object), before any request.
fn check_names(record: &Record) -> Result<(), RunError> {
    let problems = names::check_record(record);
    if problems.is_empty() {
        return Ok(());
    }
    Err(RunError::CannotRun(format!(
        "release {} cannot be sent to the cluster; nothing was sent:\n  {}",
        record.name,
        problems.join("\n  ")
    )))
}

/// Refuses a release namespace that is not a namespace name, before any request.
fn check_release_namespace(namespace: &str) -> Result<(), RunError> {
    match names::check_namespace(namespace) {
        None => Ok(()),
        Some(why) => Err(RunError::CannotRun(format!(
            "invalid release namespace {namespace:?}: {why}"
        ))),
    }
}

/// The revision installed, or why the run failed (after recording it).
pub type Outcome = Result<Record, RunError>;

/// A failure's description, bounded so that the revision still fits its storage object.
fn failure_description(what: &str, name: &str, error: &RunError) -> String {
    const MAX: usize = 8 * 1024;
    let mut text = format!("{what} {name:?} failed: {error}");
    if text.len() > MAX {
        let mut cut = MAX;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n…");
    }
    text
}

/// Installs or upgrades: refuses what it may not write, records the revision (so nothing is
/// ever untracked), runs it, prunes what left the chart, and records the outcome.
pub async fn install(ctx: &Context, mut record: Record) -> Outcome {
    check_names(&record)?;
    let (history, next) = ctx.history(&record.namespace, &record.name).await?;
    locked(&history)?;
    // Helm's `upgrade --install` (`pkg/cmd/upgrade.go`, `pkg/action/upgrade.go`): an install
    // only when there is no history or its last revision is uninstalled (kept by
    // `--keep-history`); a release whose every run failed is upgraded from its last run, with
    // the upgrade's hooks and descriptions.
    let upgrade = history.last().is_some_and(|r| r.status != "uninstalled");
    // Where `--atomic` returns to if this run fails.
    let back_to = last_successful(&history).map(|r| r.revision);
    record.revision = next;
    if let Some(first) = history.first().and_then(|r| r.first_deployed.clone()) {
        record.first_deployed = Some(first);
    }
    // Helm's descriptions, word for word.
    let (status, description) = if upgrade {
        ("pending-upgrade", "Preparing upgrade")
    } else {
        ("pending-install", "Initial install underway")
    };
    status.clone_into(&mut record.status);
    description.clone_into(&mut record.description);
    let prepared = ctx.storage().prepare(&record).map_err(RunError::Storage)?;
    let runner = ctx.runner();
    ctx.check_ownership(&runner, &record).await?;
    let dry_run = ctx.settings.dry_run;
    if !dry_run {
        ctx.create(&history, &prepared).await?;
    }
    drop(prepared);
    let (pre, post) = if upgrade {
        ("pre-upgrade", "post-upgrade")
    } else {
        ("pre-install", "post-install")
    };
    let record = Arc::new(record);
    // What the last deployed revision and any failed runs since then left behind.
    let prune: Vec<&Record> = since_deployed(&history).iter().rev().collect();
    let result = run_release(&runner, &record, pre, post, &prune)
        .await
        .map_err(|s| s.error);
    let mut record = Arc::try_unwrap(record).unwrap_or_else(|r| (*r).clone());
    record.report = Some(runner.report());
    if dry_run {
        "Dry run complete".clone_into(&mut record.description);
        return result.map(|()| record);
    }
    match result {
        Ok(()) => {
            let done = if upgrade {
                "Upgrade complete"
            } else {
                "Install complete"
            };
            finish_deployed(ctx, &mut record, &history, done).await?;
            // Upgraded from a run that failed with nothing deployed: Helm supersedes that run,
            // the release it upgraded from.
            if upgrade && !history.iter().any(|r| r.status == "deployed") {
                if let Some(last) = history.last().filter(|r| r.status == "failed") {
                    let mut last = last.clone();
                    last.status = "superseded".into();
                    ctx.update(&last).await?;
                }
            }
            Ok(record)
        }
        Err(e) => {
            record.status = "failed".into();
            let what = if upgrade { "Upgrade" } else { "Release" };
            record.description = failure_description(what, &record.name, &e);
            record.last_deployed = Some(release::now());
            ctx.update(&record).await?;
            if ctx.atomic && !matches!(e, RunError::Interrupted) {
                ctx.note(format!(
                    "--atomic: {}",
                    if back_to.is_some() {
                        "rolling back"
                    } else {
                        "uninstalling"
                    }
                ));
                // The failure's own wait budget is spent: the rollback gets a fresh one.
                let fresh = ctx.follow_up();
                match back_to {
                    Some(revision) => {
                        rollback(&fresh, &record.namespace, &record.name, revision).await?;
                    }
                    None => {
                        Box::pin(uninstall(&fresh, &record.namespace, &record.name)).await?;
                    }
                }
            }
            Err(e)
        }
    }
}

/// Helm's lock: a revision still pending means another run is at work (or died; then the
/// message names the rollback, or with nothing to return to the uninstall, that frees it).
fn locked(history: &[Record]) -> Result<(), RunError> {
    let Some(last) = history.last().filter(|r| r.status.starts_with("pending-")) else {
        return Ok(());
    };
    let (name, namespace) = (&last.name, &last.namespace);
    let way_out = match last_successful(history) {
        Some(good) => format!(
            "`chartseq rollback {name} {} -n {namespace}` returns to revision {}",
            good.revision, good.revision
        ),
        None => format!("`chartseq uninstall {name} -n {namespace}` removes it"),
    };
    Err(RunError::CannotRun(format!(
        "another operation (install/upgrade/rollback) is in progress: release {name} revision {} is {}; if none is running, {way_out}",
        last.revision, last.status
    )))
}

/// What installing or upgrading with `record` would do to each object (`apply --dry-run
/// --diff`): reads and server-side dry runs only; nothing is applied, deleted or recorded.
pub async fn preview(ctx: &Context, mut record: Record) -> Result<preview::Preview, RunError> {
    check_names(&record)?;
    let (history, next) = ctx.history(&record.namespace, &record.name).await?;
    locked(&history)?;
    record.revision = next;
    let runner = ctx.runner();
    preview::preview(&runner, &record, &history, ctx.settings.take_ownership).await
}

/// Where a run stopped: Helm records a failure to apply or wait for the objects differently
/// from a failed hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// CRDs and the pre hooks.
    Before,
    /// The plan and the pruning.
    Objects,
    /// The post hooks.
    After,
}

/// A failed run: the error and where it happened.
struct Stopped {
    stage: Stage,
    error: RunError,
}

/// Runs a revision and prunes what the `previous` revisions had and it does not. Helm's
/// order (`upgrade.go`, `rollback.go`): pre hooks, the new objects, deletion of the removed
/// ones, then the post hooks; so a post hook sees the release exactly as it now is.
async fn run_release(
    runner: &Arc<Runner>,
    record: &Arc<Record>,
    pre: &str,
    post: &str,
    previous: &[&Record],
) -> Result<(), Stopped> {
    let at = |stage| move |error| Stopped { stage, error };
    runner.crds(record).await.map_err(at(Stage::Before))?;
    runner.hooks(record, pre).await.map_err(at(Stage::Before))?;
    runner.plan(record).await.map_err(at(Stage::Objects))?;
    prune(runner, record, previous)
        .await
        .map_err(at(Stage::Objects))?;
    runner.hooks(record, post).await.map_err(at(Stage::After))
}

/// Deletes what `previous` revisions (newest first) had and `record` has not, each in the
/// reverse of its recorded plan.
async fn prune(runner: &Runner, record: &Record, previous: &[&Record]) -> Result<(), RunError> {
    for prev in previous {
        let gone = deploy::removed(prev, record);
        // What the tool leaves when an object leaves the chart: said, not deleted.
        let tool = prev.dialect.map_or("its tool", crate::plan::Dialect::tool);
        for i in deploy::removed_from_chart(prev, record).difference(&gone) {
            runner.note(format!(
                "kept {}: {tool} leaves it when it is removed from the chart",
                prev.items[*i].label()
            ));
        }
        let steps = deploy::reverse_steps(prev, Some(&gone));
        runner
            .delete_steps(
                prev,
                &steps
                    .into_iter()
                    .map(|(l, r)| (format!("prune {l}"), r))
                    .collect::<Vec<_>>(),
            )
            .await?;
    }
    Ok(())
}

async fn finish_deployed(
    ctx: &Context,
    record: &mut Record,
    history: &[Record],
    description: &str,
) -> Result<(), RunError> {
    record.status = "deployed".into();
    description.clone_into(&mut record.description);
    record.last_deployed = Some(release::now());
    ctx.update(record).await?;
    for old in history
        .iter()
        .filter(|r| r.status == "deployed" && r.revision != record.revision)
    {
        let mut old = old.clone();
        old.status = "superseded".into();
        ctx.update(&old).await?;
    }
    Ok(())
}

/// Rolls back as `helm rollback` does: `revision` 0 means the one before the newest revision
/// (whatever the newest one's status: a failed or interrupted upgrade is the one undone).
/// Applies the target's recorded objects in its recorded order, prunes the rest, and records a
/// new revision `Rollback to N`.
pub async fn rollback(ctx: &Context, namespace: &str, name: &str, revision: u32) -> Outcome {
    Box::pin(rollback_inner(ctx, namespace, name, revision)).await
}

/// Which revision `helm rollback NAME [REVISION]` goes back to: `revision`, or with 0 the one
/// before the newest (Helm's `Last`, by revision number, whatever its status). The newest
/// revision and the target.
fn rollback_target<'h>(
    history: &'h [Record],
    name: &str,
    namespace: &str,
    revision: u32,
) -> Result<(&'h Record, &'h Record), RunError> {
    let Some(current) = history.last() else {
        return Err(RunError::CannotRun(format!(
            "rollback: release not loaded: {name} (namespace {namespace}): release: not found"
        )));
    };
    let wanted = if revision == 0 {
        current.revision.saturating_sub(1)
    } else {
        revision
    };
    if let Some(target) = history.iter().find(|r| r.revision == wanted) {
        return Ok((current, target));
    }
    let stored: Vec<String> = history.iter().map(|r| r.revision.to_string()).collect();
    let why = if revision == 0 {
        format!(" (the one before the newest, {})", current.revision)
    } else {
        String::new()
    };
    Err(RunError::CannotRun(format!(
        "release {name} has no revision {wanted}{why} to roll back to; stored revisions: {}",
        stored.join(", ")
    )))
}

/// The revision `--atomic` returns to after a failed upgrade, as Helm's rollback-on-failure
/// picks it: the newest `superseded` or `deployed` one.
fn last_successful(history: &[Record]) -> Option<&Record> {
    history
        .iter()
        .rev()
        .find(|r| r.status == "deployed" || r.status == "superseded")
}

async fn rollback_inner(ctx: &Context, namespace: &str, name: &str, revision: u32) -> Outcome {
    check_release_namespace(namespace)?;
    let (history, next) = ctx.history(namespace, name).await?;
    // Every revision it may apply or prune from, before anything is changed.
    for r in since_deployed(&history) {
        check_names(r)?;
    }
    let (current, target) = rollback_target(&history, name, namespace, revision)?;
    check_names(target)?;
    let mut record = target.again(
        next,
        "pending-rollback",
        format!("Rollback to {}", target.revision),
    );
    record.first_deployed.clone_from(&current.first_deployed);
    let current = current.clone();
    let prepared = ctx.storage().prepare(&record).map_err(RunError::Storage)?;
    let runner = ctx.runner();
    ctx.check_ownership(&runner, &record).await?;
    let dry_run = ctx.settings.dry_run;
    if !dry_run {
        ctx.create(&history, &prepared).await?;
    }
    drop(prepared);
    let record = Arc::new(record);
    // What may still be in the cluster: the last deployed revision and every run after it,
    // newest first (Helm prunes from the newest alone; an interrupted run before it may have
    // left objects too).
    let prune: Vec<&Record> = since_deployed(&history).iter().rev().collect();
    let result = run_release(&runner, &record, "pre-rollback", "post-rollback", &prune).await;
    let mut record = Arc::try_unwrap(record).unwrap_or_else(|r| (*r).clone());
    record.report = Some(runner.report());
    if dry_run {
        return result.map(|()| record).map_err(|s| s.error);
    }
    match result {
        Ok(()) => {
            // Helm supersedes every revision still `deployed`, then marks the new one; the
            // failed or pending revisions in between keep their status.
            for old in ctx
                .history(namespace, name)
                .await?
                .0
                .into_iter()
                .filter(|r| r.status == "deployed" && r.revision != record.revision)
            {
                let mut old = old;
                old.status = "superseded".into();
                ctx.update(&old).await?;
            }
            record.status = "deployed".into();
            ctx.update(&record).await?;
            Ok(record)
        }
        Err(Stopped { stage, error }) => {
            record.status = "failed".into();
            let objects = stage == Stage::Objects;
            let waiting = matches!(error, RunError::Wait { .. } | RunError::Overall { .. });
            let interrupted = matches!(error, RunError::Interrupted);
            // Helm's words: `Release` when the objects went out but did not become ready,
            // `Rollback` when applying them (or a hook: Helm leaves the revision pending
            // then, chartseq records it failed so that the release stays usable) failed.
            let what = if objects && waiting {
                "Release"
            } else {
                "Rollback"
            };
            record.description = failure_description(what, name, &error);
            if objects && !waiting && !interrupted {
                // Helm: applying the target failed part way, so the revision that was current
                // no longer describes the cluster: it is superseded.
                let mut current = current;
                current.status = "superseded".into();
                if let Err(e) = ctx.update(&current).await {
                    ctx.note(format!(
                        "revision {} could not be marked superseded: {e}",
                        current.revision
                    ));
                }
            }
            ctx.update(&record).await?;
            Err(error)
        }
    }
}

/// Uninstalls: pre-delete hooks, then the recorded uninstall order of the dialect's tool or
/// else the recorded plan in exact reverse order (each step waited gone), then what earlier
/// unfinished revisions left, then post-delete hooks (Argo CD's own delete hooks for a release
/// applied in its order), then the release records. Only objects the release owns are deleted; `keep` ones stay.
pub async fn uninstall(ctx: &Context, namespace: &str, name: &str) -> Outcome {
    check_release_namespace(namespace)?;
    let (history, _) = ctx.history(namespace, name).await?;
    for r in since_deployed(&history) {
        check_names(r)?;
    }
    let Some(latest) = history.last().cloned() else {
        return Err(RunError::CannotRun(format!(
            "uninstall: release not loaded: {name} (namespace {namespace}): release: not found"
        )));
    };
    let dry_run = ctx.settings.dry_run;
    let mut marked = latest.clone();
    marked.status = "uninstalling".into();
    "Deletion in progress (or silently failed)".clone_into(&mut marked.description);
    marked.deleted = Some(release::now());
    if !dry_run {
        ctx.update(&marked).await?;
    }
    let runner = ctx.runner();
    let result = uninstall_objects(&runner, &history, &latest, dry_run).await;
    marked.report = Some(runner.report());
    if dry_run {
        return result.map(|()| marked);
    }
    if let Err(e) = result {
        marked.description = failure_description("Uninstall", name, &e);
        ctx.update(&marked).await?;
        return Err(e);
    }
    for r in &history {
        ctx.storage()
            .delete(namespace, name, r.revision)
            .await
            .map_err(RunError::Storage)?;
    }
    marked.status = "uninstalled".into();
    "Uninstallation complete".clone_into(&mut marked.description);
    Ok(marked)
}

async fn uninstall_objects(
    runner: &Runner,
    history: &[Record],
    latest: &Record,
    dry_run: bool,
) -> Result<(), RunError> {
    if let Some(hooks) = &latest.delete_hooks {
        return uninstall_argo(runner, history, latest, hooks, dry_run).await;
    }
    if !dry_run {
        runner.hooks(latest, "pre-delete").await?;
    }
    // The dialect tool's own order when it recorded one (its steps may hold hooks, deleted
    // there as its tool deletes them; each step waits only for the steps its `after` names),
    // else the exact reverse.
    if let Some(own) = &latest.uninstall {
        let tool = latest
            .dialect
            .map_or("its tool", crate::plan::Dialect::tool);
        let why = |_: &release::Item| format!("{tool}'s uninstall leaves it");
        runner
            .report_left(latest, &own_or_reverse(latest), &why)
            .await?;
        runner.delete_ordered(latest, own).await?;
    } else {
        runner.delete_steps(latest, &own_or_reverse(latest)).await?;
    }
    delete_unfinished(runner, history, latest).await?;
    if !dry_run {
        runner.hooks(latest, "post-delete").await?;
    }
    let hooks: BTreeSet<usize> = latest.hooks.iter().copied().collect();
    runner
        .delete_steps(latest, &deploy::reverse_steps(latest, Some(&hooks)))
        .await?;
    runner.delete_generated_leftovers(latest, &[]).await
}

/// The dialect tool's own uninstall order when it recorded one (its steps may hold hooks,
/// deleted there as its tool deletes them), else the exact reverse without the hooks.
fn own_or_reverse(latest: &Record) -> Vec<(String, Vec<usize>)> {
    if let Some(own) = &latest.uninstall {
        return own
            .iter()
            .map(|s| (s.label.clone(), s.resources.clone()))
            .filter(|(_, r)| !r.is_empty())
            .collect();
    }
    let without_hooks: BTreeSet<usize> = (0..latest.items.len())
        .filter(|i| !latest.hooks.contains(i))
        .collect();
    deploy::reverse_steps(latest, Some(&without_hooks))
}

/// Revisions since the last deployed one may hold objects the latest does not (a failed or
/// interrupted upgrade stops before pruning): deleted in reverse.
async fn delete_unfinished(
    runner: &Runner,
    history: &[Record],
    latest: &Record,
) -> Result<(), RunError> {
    for old in since_deployed(history)
        .iter()
        .rev()
        .filter(|r| r.revision != latest.revision)
    {
        let gone = deploy::removed(old, latest);
        let steps = deploy::reverse_steps(old, Some(&gone));
        runner.delete_steps(old, &steps).await?;
    }
    Ok(())
}

/// Argo CD's deletion of an application (argo-cd 37ee009 `controller/appcontroller.go`
/// `finalizeApplicationDeletion`): the `PreDelete` hooks created and waited healthy; the
/// cascade, highest wave first, each wave gone before the next (what earlier runs created from
/// hooks named by `generateName` goes with it, as every live object of the application does);
/// the `PostDelete` hooks created and waited healthy; then the `PreDelete`, then the
/// `PostDelete` hooks still there deleted when their policy says `HookSucceeded`. Helm's
/// `pre-delete`/`post-delete` hooks are Argo CD's delete hooks here, run once, its way; Helm
/// hooks Argo CD never runs (`test`, rollback) were never created and are not touched.
async fn uninstall_argo(
    runner: &Runner,
    history: &[Record],
    latest: &Record,
    hooks: &release::DeleteHooks,
    dry_run: bool,
) -> Result<(), RunError> {
    if !dry_run {
        runner
            .argo_delete_hooks(latest, &hooks.pre, "PreDelete hooks")
            .await?;
    }
    let cascade = own_or_reverse(latest);
    runner.argo_report_kept(latest, &cascade).await?;
    runner.argo_cascade(latest, &cascade).await?;
    delete_unfinished(runner, history, latest).await?;
    runner
        .delete_generated_leftovers(latest, &hooks.post)
        .await?;
    if !dry_run {
        runner
            .argo_delete_hooks(latest, &hooks.post, "PostDelete hooks")
            .await?;
        runner
            .argo_cleanup_hooks(latest, &hooks.pre, "PreDelete hooks")
            .await?;
        runner
            .argo_cleanup_hooks(latest, &hooks.post, "PostDelete hooks")
            .await?;
    }
    Ok(())
}

/// Every readable revision of a release, oldest first, and the storage objects that could
/// not be read.
pub async fn history(
    cluster: &dyn Cluster,
    driver: Driver,
    namespace: &str,
    name: &str,
) -> Result<storage::Listing, storage::StorageError> {
    Storage { cluster, driver }.history(namespace, name).await
}

/// The latest readable revision of every release in a namespace (every namespace with
/// `None`), by namespace then name, and the storage objects that could not be read.
pub async fn releases(
    cluster: &dyn Cluster,
    driver: Driver,
    namespace: Option<&str>,
) -> Result<storage::Listing, storage::StorageError> {
    let all = Storage { cluster, driver }.all(namespace).await?;
    let mut latest: Vec<Record> = Vec::new();
    for r in all.records {
        match latest.last_mut() {
            Some(l) if l.namespace == r.namespace && l.name == r.name => *l = r,
            _ => latest.push(r),
        }
    }
    Ok(storage::Listing {
        records: latest,
        skipped: all.skipped,
    })
}

/// Each recorded object's name (`Kind/name`, with its namespace where its kind has one) and
/// live readiness, judged as `apply` judges it: `ready`, `in progress: <why>`,
/// `failed: <why>` or `missing`.
pub async fn live_state(cluster: &dyn Cluster, record: &Record) -> Vec<(String, String)> {
    let judge = judge::Engine;
    let mut out = Vec::with_capacity(record.items.len());
    for item in &record.items {
        // Named with its namespace only where the kind has one (once the server says).
        let mut label = item.label();
        let state = match cluster.resolve(&item.api_version, &item.kind, false).await {
            Err(e) => format!("unknown: {e}"),
            Ok(kind) => {
                let ns = if kind.namespaced {
                    item.namespace.clone()
                } else {
                    None
                };
                label = item.label_in(ns.as_deref());
                match cluster.get(&kind, ns.as_deref(), &item.name).await {
                    Err(e) => format!("unknown: {e}"),
                    Ok(None) => "missing".to_owned(),
                    Ok(Some(live)) => {
                        // HIP-0025's readiness, whatever the dialect waited for.
                        match judge::readiness_for(&item.wait, false, None) {
                            Err(e) => format!("unknown: {e}"),
                            Ok(None) => "not waited for".to_owned(),
                            Ok(Some(readiness)) => {
                                let target = wait::Target {
                                    kind,
                                    namespace: ns,
                                    name: item.name.clone(),
                                    readiness: Some(Arc::new(readiness)),
                                    goal: wait::Goal::Ready,
                                    uid: None,
                                    track: None,
                                };
                                match wait::Judge::judge(&judge, &target, &live) {
                                    wait::Verdict::Ready => "ready".to_owned(),
                                    wait::Verdict::InProgress(why) => format!("in progress: {why}"),
                                    wait::Verdict::Failed(why) => format!("failed: {why}"),
                                }
                            }
                        }
                    }
                }
            }
        };
        out.push((label, state));
    }
    out
}
