//! `chartseq apply`, `uninstall`, `rollback`, `history`, `status`: the sequenced deployer.
//!
//! It executes exactly the plan the planner made (SPEC §2–§3): [`record_from_plan`] turns the
//! model and its [`Plan`] into a [`release::Record`] (objects, steps with their direct
//! prerequisites, CRDs, hooks) without re-planning or re-reading annotations, and
//! [`deploy::Runner`] runs it against a [`cluster::Cluster`]. Nothing else in the crate depends
//! on this module (cargo feature `apply`).

pub mod cluster;
pub mod deploy;
pub mod judge;
pub mod ownership;
pub mod release;
pub mod wait;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::{mpsc, watch};

use crate::model::annotations::DEPENDS_ON_GROUPS;
use crate::model::{Content, Model};
use crate::plan::Plan;
use cluster::{Cluster, ClusterError};
use deploy::{Event, RunError, RunSettings, Runner};
use release::{HookInfo, Item, Record, RecordedStep};
use wait::Judge;

/// Builds the release's record from the model and its plan, skipping documents that are not
/// objects.
pub fn record_from_plan(
    model: &Model,
    plan: &Plan,
    name: &str,
    namespace: &str,
) -> Result<Record, String> {
    let mut items = Vec::new();
    let mut by_doc = std::collections::BTreeMap::new();
    for (doc_id, doc) in model.documents.iter().enumerate() {
        let resource = match &doc.content {
            Content::Resource(r) => r,
            // Documents that are not objects were reported (and stop the deploy unless
            // --no-lint); they cannot be sent.
            Content::Empty | Content::Invalid { .. } | Content::NotAnObject { .. } => continue,
        };
        let file = model.sources.get(doc.file);
        let text = file.text(doc.span);
        let node = crate::parse::parse_document(&text, 0, crate::parse::Limits::default())
            .map_err(|e| {
                format!(
                    "{}: {}",
                    crate::plan::output::label(model, doc_id),
                    e.message
                )
            })?;
        let Some(mut object) = node.map(|n| n.to_json()) else {
            continue;
        };
        strip_sequencing(&mut object);
        let ns = resource
            .id
            .namespace
            .clone()
            .unwrap_or_else(|| namespace.to_owned());
        let hook = resource.hook.as_ref().map(|h| HookInfo {
            events: h.events.clone(),
            weight: h.weight,
            delete_policies: h.delete_policies.clone(),
        });
        by_doc.insert(doc_id, items.len());
        items.push(Item {
            api_version: resource.api_version.clone(),
            kind: resource.id.kind.clone(),
            namespace: Some(ns),
            name: resource.id.name.clone(),
            object,
            doc: Some(doc_id),
            hook,
        });
    }
    let pick = |docs: &[usize]| -> Vec<usize> {
        docs.iter().filter_map(|d| by_doc.get(d).copied()).collect()
    };
    let steps = plan
        .steps
        .iter()
        .map(|s| RecordedStep {
            label: format!(
                "{} {}",
                model.charts[s.chart].display,
                s.group.as_deref().unwrap_or("(unsequenced)")
            ),
            resources: pick(&s.resources),
            after: s.after.clone(),
        })
        .collect();
    let chart = model.charts.first().map_or_else(String::new, |c| {
        let version = c
            .info
            .as_ref()
            .and_then(|i| i.meta.version.clone())
            .unwrap_or_default();
        if version.is_empty() {
            c.name.clone()
        } else {
            format!("{}-{version}", c.name)
        }
    });
    Ok(Record {
        name: name.to_owned(),
        namespace: namespace.to_owned(),
        revision: 0,
        status: String::new(),
        description: String::new(),
        chart,
        updated: release::now(),
        sequenced: true,
        crds: pick(&plan.crds),
        hooks: pick(&plan.hooks),
        items,
        steps,
        applied: Vec::new(),
    })
}

/// Removes `helm.sh/depends-on/resource-groups`: not a valid annotation key, Helm strips it
/// before apply (SPEC §1).
fn strip_sequencing(object: &mut Value) {
    if let Some(annotations) = object["metadata"]["annotations"].as_object_mut() {
        annotations.remove(DEPENDS_ON_GROUPS);
        if annotations.is_empty() {
            if let Some(meta) = object["metadata"].as_object_mut() {
                meta.remove("annotations");
            }
        }
    }
}

/// Everything an install, upgrade or rollback needs besides the record.
pub struct Context {
    pub cluster: Arc<dyn Cluster>,
    pub judge: Arc<dyn Judge>,
    pub settings: RunSettings,
    pub atomic: bool,
    pub events: mpsc::UnboundedSender<Event>,
    pub cancel: watch::Receiver<bool>,
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

/// The revision installed, or why the run failed (after recording it).
pub type Outcome = Result<Record, RunError>;

fn cluster_error(error: ClusterError) -> RunError {
    RunError::Cluster {
        resource: None,
        error,
    }
}

/// Installs or upgrades: records the revision first (so nothing is ever untracked), runs it,
/// prunes what left the chart, and records the outcome.
pub async fn install(ctx: &Context, mut record: Record) -> Outcome {
    let history = release::load_all(ctx.cluster.as_ref(), &record.namespace, &record.name)
        .await
        .map_err(cluster_error)?;
    let previous = history
        .iter()
        .rev()
        .find(|r| r.status == "deployed")
        .cloned();
    // Without a deployed revision (a first install failed) this is an install again.
    let upgrade = previous.is_some();
    record.revision = history.last().map_or(1, |r| r.revision + 1);
    record.status = if upgrade {
        "pending-upgrade"
    } else {
        "pending-install"
    }
    .into();
    record.description = if upgrade {
        "Upgrade in progress"
    } else {
        "Install in progress"
    }
    .into();
    let dry_run = ctx.settings.dry_run;
    let runner = ctx.runner();
    // Helm's rule: nothing of the release is applied (nor recorded) while an object it would
    // write belongs to someone else, unless adopting is asked for.
    let foreign = runner.foreign_objects(&record).await?;
    if !foreign.is_empty() {
        if !ctx.settings.take_ownership {
            return Err(RunError::Refused {
                release: record.name.clone(),
                namespace: record.namespace.clone(),
                foreign,
            });
        }
        for (object, owner) in &foreign {
            ctx.note(format!("--take-ownership: adopting {object} ({owner})"));
        }
    }
    if !dry_run {
        deploy::save(ctx.cluster.as_ref(), &record).await?;
    }
    let (pre, post) = if upgrade {
        ("pre-upgrade", "post-upgrade")
    } else {
        ("pre-install", "post-install")
    };
    let record = Arc::new(record);
    // What the last deployed revision and any failed runs since then left behind.
    let prune: Vec<&Record> = since_deployed(&history).iter().rev().collect();
    let result = run_release(&runner, &record, pre, post, &prune).await;
    let mut record = Arc::try_unwrap(record).unwrap_or_else(|r| (*r).clone());
    record.applied = runner.applied();
    if dry_run {
        return result.map(|()| record);
    }
    match result {
        Ok(()) => {
            finish_deployed(
                ctx,
                &mut record,
                &history,
                if upgrade {
                    "Upgrade complete"
                } else {
                    "Install complete"
                },
            )
            .await?;
            Ok(record)
        }
        Err(e) => {
            record.status = "failed".into();
            record.description = e.to_string();
            record.updated = release::now();
            deploy::save(ctx.cluster.as_ref(), &record).await?;
            if ctx.atomic && !matches!(e, RunError::Interrupted) {
                ctx.note(format!(
                    "--atomic: {}",
                    if previous.is_some() {
                        "rolling back"
                    } else {
                        "uninstalling"
                    }
                ));
                // The failure's own wait budget is spent: the rollback gets a fresh one.
                let fresh = Context {
                    cluster: ctx.cluster.clone(),
                    judge: ctx.judge.clone(),
                    settings: ctx.settings.clone(),
                    atomic: false,
                    events: ctx.events.clone(),
                    cancel: ctx.cancel.clone(),
                };
                match previous {
                    Some(prev) => {
                        rollback(&fresh, &record.namespace, &record.name, prev.revision).await?;
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

/// Runs a revision, then prunes what the `previous` revisions had and it does not.
async fn run_release(
    runner: &Arc<Runner>,
    record: &Arc<Record>,
    pre: &str,
    post: &str,
    previous: &[&Record],
) -> Result<(), RunError> {
    runner.crds(record).await?;
    runner.hooks(record, pre).await?;
    runner.plan(record).await?;
    runner.hooks(record, post).await?;
    for prev in previous {
        {
            let gone = deploy::removed(prev, record);
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
    record.updated = release::now();
    deploy::save(ctx.cluster.as_ref(), record).await?;
    for old in history
        .iter()
        .filter(|r| r.status == "deployed" && r.revision != record.revision)
    {
        let mut old = old.clone();
        old.status = "superseded".into();
        deploy::save(ctx.cluster.as_ref(), &old).await?;
    }
    Ok(())
}

/// Rolls back to `revision` (0: the one before the last deployed): applies its recorded
/// objects in its recorded order, prunes the rest, records a new revision.
pub async fn rollback(ctx: &Context, namespace: &str, name: &str, revision: u32) -> Outcome {
    Box::pin(rollback_inner(ctx, namespace, name, revision)).await
}

async fn rollback_inner(ctx: &Context, namespace: &str, name: &str, revision: u32) -> Outcome {
    let history = release::load_all(ctx.cluster.as_ref(), namespace, name)
        .await
        .map_err(cluster_error)?;
    let Some(last) = history.last() else {
        return Err(RunError::Missing(format!(
            "rollback: release not loaded: {name} (namespace {namespace}): release: not found"
        )));
    };
    let current = history
        .iter()
        .rev()
        .find(|r| r.status == "deployed")
        .cloned()
        .unwrap_or_else(|| last.clone());
    let target_rev = if revision == 0 {
        current.revision.saturating_sub(1)
    } else {
        revision
    };
    let Some(target) = history.iter().find(|r| r.revision == target_rev) else {
        return Err(RunError::Missing(format!(
            "release {name} has no revision {target_rev}"
        )));
    };
    let mut record = target.clone();
    record.revision = last.revision + 1;
    record.status = "pending-rollback".into();
    record.description = format!("Rollback to {target_rev}");
    record.applied = Vec::new();
    record.updated = release::now();
    deploy::save(ctx.cluster.as_ref(), &record).await?;
    let runner = ctx.runner();
    let record = Arc::new(record);
    // Prune from the current revision and from the latest (a failed upgrade may have added
    // objects the current one lacks).
    let prune: Vec<&Record> = if last.revision == current.revision {
        vec![&current]
    } else {
        vec![last, &current]
    };
    let result = run_release(&runner, &record, "pre-rollback", "post-rollback", &prune).await;
    let mut record = Arc::try_unwrap(record).unwrap_or_else(|r| (*r).clone());
    record.applied = runner.applied();
    match result {
        Ok(()) => {
            let description = record.description.clone();
            finish_deployed(ctx, &mut record, &history, &description).await?;
            Ok(record)
        }
        Err(e) => {
            record.status = "failed".into();
            record.description = format!("Rollback to {target_rev} failed: {e}");
            deploy::save(ctx.cluster.as_ref(), &record).await?;
            Err(e)
        }
    }
}

/// Uninstalls: pre-delete hooks, then the recorded plan in exact reverse order (each step
/// waited gone), then what earlier unfinished revisions left, then post-delete hooks, then
/// the release records.
pub async fn uninstall(ctx: &Context, namespace: &str, name: &str) -> Result<Record, RunError> {
    let history = release::load_all(ctx.cluster.as_ref(), namespace, name)
        .await
        .map_err(cluster_error)?;
    let Some(latest) = history.last().cloned() else {
        return Err(RunError::Missing(format!(
            "uninstall: release not loaded: {name} (namespace {namespace}): release: not found"
        )));
    };
    let mut marked = latest.clone();
    marked.status = "uninstalling".into();
    deploy::save(ctx.cluster.as_ref(), &marked).await?;
    let runner = ctx.runner();
    runner.hooks(&latest, "pre-delete").await?;
    let without_hooks: BTreeSet<usize> = (0..latest.items.len())
        .filter(|i| !latest.hooks.contains(i))
        .collect();
    runner
        .delete_steps(
            &latest,
            &deploy::reverse_steps(&latest, Some(&without_hooks)),
        )
        .await?;
    // Revisions since the last deployed one may hold objects the latest does not (a failed
    // or interrupted upgrade stops before pruning).
    for old in since_deployed(&history)
        .iter()
        .rev()
        .filter(|r| r.revision != latest.revision)
    {
        let gone = deploy::removed(old, &latest);
        let steps = deploy::reverse_steps(old, Some(&gone));
        runner.delete_steps(old, &steps).await?;
    }
    runner.hooks(&latest, "post-delete").await?;
    let hooks: BTreeSet<usize> = latest.hooks.iter().copied().collect();
    runner
        .delete_steps(&latest, &deploy::reverse_steps(&latest, Some(&hooks)))
        .await?;
    release::delete_all(ctx.cluster.as_ref(), namespace, &history)
        .await
        .map_err(cluster_error)?;
    Ok(latest)
}

/// Each recorded object's live readiness, judged as `apply` judges it: `ready`,
/// `in progress: <why>`, `failed: <why>` or `missing`.
pub async fn live_state(cluster: &dyn Cluster, record: &Record) -> Vec<String> {
    let judge = judge::Engine;
    let mut out = Vec::with_capacity(record.items.len());
    for item in &record.items {
        let state = match cluster.resolve(&item.api_version, &item.kind, false).await {
            Err(e) => format!("unknown: {e}"),
            Ok(kind) => {
                let ns = if kind.namespaced {
                    item.namespace.clone()
                } else {
                    None
                };
                match cluster.get(&kind, ns.as_deref(), &item.name).await {
                    Err(e) => format!("unknown: {e}"),
                    Ok(None) => "missing".to_owned(),
                    Ok(Some(live)) => {
                        match judge::readiness_of(&item.object, wait::Goal::Ready, false) {
                            Err(e) => format!("unknown: {e}"),
                            Ok(readiness) => {
                                let target = wait::Target {
                                    kind,
                                    namespace: ns,
                                    name: item.name.clone(),
                                    readiness: Some(Arc::new(readiness)),
                                    goal: wait::Goal::Ready,
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
        out.push(state);
    }
    out
}

/// Every revision, oldest first.
pub async fn history(
    cluster: &dyn Cluster,
    namespace: &str,
    name: &str,
) -> Result<Vec<Record>, ClusterError> {
    release::load_all(cluster, namespace, name).await
}

/// A Go-style duration (`5m`, `1m30s`, `300ms`, `2h`).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || {
        format!(
            "invalid duration {text:?}: expected a number and a unit (h, m, s, ms), e.g. 5m or 1m30s"
        )
    };
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let mut total = Duration::ZERO;
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let number: f64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let secs = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return Err(bad()),
        };
        rest = &rest[unit_len..];
        total += Duration::from_secs_f64(number * secs);
    }
    Ok(total)
}

/// A duration as Go prints it (`5m0s`, `1m0s`, `30s`, `1h0m0s`).
#[must_use]
pub fn go_duration(d: Duration) -> String {
    let s = d.as_secs();
    let ms = d.subsec_millis();
    let frac = if ms == 0 {
        String::new()
    } else {
        format!(".{ms:03}").trim_end_matches('0').to_owned()
    };
    match (s / 3600, s % 3600 / 60, s % 60) {
        (0, 0, sec) => format!("{sec}{frac}s"),
        (0, m, sec) => format!("{m}m{sec}{frac}s"),
        (h, m, sec) => format!("{h}h{m}m{sec}{frac}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_and_print_as_go_does() {
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert!(parse_duration("5").is_err());
        assert!(parse_duration("5x").is_err());
        assert_eq!(go_duration(Duration::from_secs(300)), "5m0s");
        assert_eq!(go_duration(Duration::from_secs(60)), "1m0s");
        assert_eq!(go_duration(Duration::from_secs(3600)), "1h0m0s");
        assert_eq!(go_duration(Duration::from_millis(1500)), "1.5s");
    }

    #[test]
    fn strips_only_the_invalid_sequencing_key() {
        let mut obj = serde_json::json!({"metadata": {"annotations": {DEPENDS_ON_GROUPS: "[\"db\"]", "helm.sh/resource-group": "app"}}});
        strip_sequencing(&mut obj);
        assert_eq!(
            obj["metadata"]["annotations"],
            serde_json::json!({"helm.sh/resource-group": "app"})
        );
        let mut obj = serde_json::json!({"metadata": {"annotations": {DEPENDS_ON_GROUPS: "[]"}}});
        strip_sequencing(&mut obj);
        assert!(obj["metadata"].get("annotations").is_none());
    }
}
