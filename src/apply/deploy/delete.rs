//! Deleting what a release owns: judged from reads first, then deleted in the order given,
//! each only if it is still the object judged, and waited gone (uninstall, pruning, hook
//! delete policies).

use super::{
    BTreeSet, Decision, Duration, ErrorKind, Event, Goal, Instant, Item, Kind, Record, RunError,
    Runner, StepResult, Target, Value,
};
use crate::apply::release::RecordedStep;

impl Runner {
    /// The objects of `indexes` that exist, in order, each with who owns it: what a deletion
    /// (uninstall, pruning) would do with it. Reads only.
    pub(in crate::apply) async fn judge_deletions(
        &self,
        record: &Record,
        indexes: &[usize],
    ) -> Result<Vec<(usize, Kind, Option<String>, Value, Decision)>, RunError> {
        Ok(self
            .live_objects(record, indexes)
            .await?
            .into_iter()
            .filter_map(|(i, kind, ns, live)| {
                let live = live?;
                let decision = Self::decide(record, i, &live);
                Some((i, kind, ns, live, decision))
            })
            .collect())
    }

    /// What a deletion of `indexes` would do, from reads only: the objects that exist and
    /// this release owns, in order (with `keep`, not those annotated
    /// `helm.sh/resource-policy: keep`), and the events for what stays.
    async fn doomed(
        &self,
        record: &Record,
        indexes: &[usize],
        keep: bool,
    ) -> Result<(Vec<Doomed>, Vec<Event>), RunError> {
        let mut doomed = Vec::new();
        let mut stays = Vec::new();
        for (i, kind, ns, live, decision) in self.judge_deletions(record, indexes).await? {
            let item = &record.items[i];
            match decision {
                Decision::Foreign(owner) => stays.push(Event::Skipped {
                    resource: self.label(item),
                    owner: owner.to_string(),
                }),
                Decision::Kept if keep => stays.push(Event::Kept {
                    resource: self.label(item),
                }),
                Decision::Kept | Decision::Owned => {
                    let uid = live["metadata"]["uid"].as_str().map(str::to_owned);
                    doomed.push(Doomed {
                        index: i,
                        kind,
                        namespace: ns,
                        uid,
                    });
                }
            }
        }
        Ok((doomed, stays))
    }

    /// Deletes the objects this release owns and waits for them to be gone. Objects of
    /// someone else are left in place and reported; with `keep`, so are those annotated
    /// `helm.sh/resource-policy: keep` (uninstall and pruning; hook delete policies ignore
    /// it, as Helm's do). A dry run only reports what it would do.
    pub async fn delete_and_wait(
        &self,
        record: &Record,
        indexes: &[usize],
        label: &str,
        keep: bool,
    ) -> Result<Duration, RunError> {
        // Judge every object first (reads only), reporting in order what stays.
        let (doomed, stays) = self.doomed(record, indexes, keep).await?;
        for e in stays {
            self.emit(e);
        }
        self.delete_doomed(record, doomed, label).await
    }

    /// Deletes what [`Runner::doomed`] judged, one at a time in exactly the order given
    /// (uninstall: the reverse of install, inside a step too), each only if it is still the
    /// very object judged (its uid), then waits for all of them to be gone. A dry run deletes
    /// nothing.
    async fn delete_doomed(
        &self,
        record: &Record,
        doomed: Vec<Doomed>,
        label: &str,
    ) -> Result<Duration, RunError> {
        let targets = self.request_deletions(record, doomed).await?;
        self.wait_gone(label, &targets).await
    }

    /// Waits for `targets` (deleted objects) to be gone; nothing to wait for takes no time.
    async fn wait_gone(&self, label: &str, targets: &[Target]) -> Result<Duration, RunError> {
        if targets.is_empty() {
            return Ok(Duration::ZERO);
        }
        self.wait(label, targets).await
    }

    /// Sends the deletions of what [`Runner::doomed`] judged, one at a time in exactly the
    /// order given, each only if it is still the very object judged (its uid): the objects to
    /// wait gone. A dry run deletes nothing.
    async fn request_deletions(
        &self,
        record: &Record,
        doomed: Vec<Doomed>,
    ) -> Result<Vec<Target>, RunError> {
        if self.settings.dry_run {
            return Ok(Vec::new());
        }
        // The requests are cheap; the waiting comes after, for all of them at once.
        let mut targets = Vec::new();
        for Doomed {
            index,
            kind,
            namespace: ns,
            uid,
        } in doomed
        {
            let item = &record.items[index];
            match self
                .cluster
                .delete(&kind, ns.as_deref(), &item.name, uid.as_deref())
                .await
            {
                Ok(true) => targets.push(Target {
                    kind,
                    namespace: ns,
                    name: item.name.clone(),
                    readiness: None,
                    goal: Goal::Gone,
                    uid: None,
                    track: None,
                }),
                Ok(false) => {}
                // Replaced by someone else since it was judged: not the object we own.
                Err(error) if error.kind == ErrorKind::Conflict => self.emit(Event::Skipped {
                    resource: self.label(item),
                    owner: format!("replaced while being deleted ({error})"),
                }),
                Err(error) => {
                    return Err(RunError::Cluster {
                        resource: Some(self.label(item)),
                        error,
                    });
                }
            }
        }
        Ok(targets)
    }

    /// Deletes steps one by one in the order given (from [`reverse_steps`]: the exact reverse
    /// of install), the resources of each in the order given, each step waited gone (see
    /// [`Runner::delete_and_wait`] for what is left in place). A step counts and names only
    /// what it deletes; one whose objects all stay ends `kept`.
    pub async fn delete_steps(
        &self,
        record: &Record,
        steps: &[(String, Vec<usize>)],
    ) -> Result<(), RunError> {
        // A chain: each step waits for the one before it to be gone.
        let chain: Vec<RecordedStep> = steps
            .iter()
            .enumerate()
            .map(|(i, (label, resources))| RecordedStep {
                label: label.clone(),
                resources: resources.clone(),
                after: i.checked_sub(1).into_iter().collect(),
            })
            .collect();
        self.delete_ordered(record, &chain).await
    }

    /// Reports what a tool's own uninstall order leaves in place of what the release
    /// installed (in no step of `order`), when it is there and the release's: `keep` objects
    /// as kept, the others with `why` (Argo CD's CRDs and `Delete=false` objects, werf's
    /// `skip-delete` ones, …).
    pub async fn report_left(
        &self,
        record: &Record,
        order: &[(String, Vec<usize>)],
        why: &(dyn Fn(&Item) -> String + Sync),
    ) -> Result<(), RunError> {
        let deleted: BTreeSet<usize> = order.iter().flat_map(|s| s.1.iter().copied()).collect();
        let installed: BTreeSet<usize> = record
            .steps
            .iter()
            .flat_map(|s| s.resources.iter().copied())
            .filter(|i| !deleted.contains(i) && !super::is_generated(&record.items[*i].object))
            .collect();
        let installed: Vec<usize> = installed.into_iter().collect();
        for (i, _, _, _, decision) in self.judge_deletions(record, &installed).await? {
            let item = &record.items[i];
            let resource = self.label(item);
            match decision {
                Decision::Kept => self.emit(Event::Kept { resource }),
                Decision::Owned if crate::apply::ownership::is_kept(&item.object) => {
                    self.emit(Event::Kept { resource });
                }
                Decision::Owned => {
                    self.emit(Event::Note(format!("kept {resource}: {}", why(item))));
                }
                Decision::Foreign(_) => {}
            }
        }
        Ok(())
    }

    /// Deletes a tool's own uninstall order (a record's `uninstall`): steps in list order,
    /// each deleted once every step its `after` names is gone. A step that no later step
    /// names is not waited for before the next one (a KOTS `PersistentVolumeClaim`, a kapp
    /// change nothing waits for): it is waited gone at the end, before the uninstall goes on.
    /// What is left in place, and how a step counts and names what it deletes, as in
    /// [`Runner::delete_steps`].
    pub async fn delete_ordered(
        &self,
        record: &Record,
        steps: &[RecordedStep],
    ) -> Result<(), RunError> {
        // Deleted and not yet waited gone: step index, its objects, count, all stay, start.
        let mut pending: Vec<(usize, Vec<Target>, usize, bool, Instant)> = Vec::new();
        for (j, step) in steps.iter().enumerate() {
            // What it names is gone first, even when it deletes nothing itself: what names it
            // waits for that through it.
            let (waited_now, later): (Vec<_>, Vec<_>) = std::mem::take(&mut pending)
                .into_iter()
                .partition(|p| step.after.contains(&p.0));
            pending = later;
            for (i, targets, count, all_stay, started) in waited_now {
                self.finish_deletion(&steps[i].label, &targets, count, all_stay, started)
                    .await?;
            }
            if step.resources.is_empty() {
                continue;
            }
            let judged = self.doomed(record, &step.resources, true).await;
            let (doomed, stays) = match judged {
                Ok(j) => j,
                Err(e) => {
                    self.emit(Event::Finished {
                        step: step.label.clone(),
                        resources: step.resources.len(),
                        waited: Duration::ZERO,
                        result: StepResult::Failed(e.to_string()),
                    });
                    return Err(e);
                }
            };
            let count = doomed.len();
            let all_stay = count == 0 && !stays.is_empty();
            self.emit(Event::Started {
                step: step.label.clone(),
                resources: count,
                verb: "delete",
                objects: doomed
                    .iter()
                    .map(|d| record.items[d.index].short())
                    .collect(),
            });
            for e in stays {
                self.emit(e);
            }
            let started = Instant::now();
            match self.request_deletions(record, doomed).await {
                Ok(targets) => pending.push((j, targets, count, all_stay, started)),
                Err(e) => {
                    self.emit(Event::Finished {
                        step: step.label.clone(),
                        resources: count,
                        waited: started.elapsed(),
                        result: StepResult::Failed(e.to_string()),
                    });
                    return Err(e);
                }
            }
            // Waited now unless no later step names it.
            if steps[j + 1..].iter().any(|later| later.after.contains(&j))
                && let Some((i, targets, count, all_stay, started)) = pending.pop()
            {
                self.finish_deletion(&steps[i].label, &targets, count, all_stay, started)
                    .await?;
            }
        }
        for (i, targets, count, all_stay, started) in pending {
            self.finish_deletion(&steps[i].label, &targets, count, all_stay, started)
                .await?;
        }
        Ok(())
    }

    /// Waits a deleted step's objects gone and says how the step ended.
    async fn finish_deletion(
        &self,
        label: &str,
        targets: &[Target],
        count: usize,
        all_stay: bool,
        started: Instant,
    ) -> Result<(), RunError> {
        match self.wait_gone(label, targets).await {
            Ok(waited) => {
                self.emit(Event::Finished {
                    step: label.to_owned(),
                    resources: count,
                    waited,
                    result: if all_stay {
                        StepResult::Kept
                    } else if self.settings.dry_run {
                        StepResult::DryRun
                    } else {
                        StepResult::Deleted
                    },
                });
                Ok(())
            }
            Err(e) => {
                self.emit(Event::Finished {
                    step: label.to_owned(),
                    resources: count,
                    waited: started.elapsed(),
                    result: StepResult::Failed(e.to_string()),
                });
                Err(e)
            }
        }
    }
}

/// An object a deletion will delete: its item, kind, namespace and the uid it was judged by.
struct Doomed {
    index: usize,
    kind: Kind,
    namespace: Option<String>,
    uid: Option<String>,
}

/// The uninstall order of a record, the exact reverse of install (SPEC §2): plan steps
/// reversed and the resources inside each step reversed (reverse kind order, reverse input
/// order), then the hooks in reverse, and nothing of `crds/` (Helm never deletes CRDs).
/// Restricted to `keep` when given.
#[must_use]
pub fn reverse_steps(record: &Record, keep: Option<&BTreeSet<usize>>) -> Vec<(String, Vec<usize>)> {
    let wanted = |i: &usize| keep.is_none_or(|k| k.contains(i));
    let mut out: Vec<(String, Vec<usize>)> = record
        .steps
        .iter()
        .rev()
        .map(|s| {
            (
                s.label.clone(),
                s.resources.iter().rev().copied().filter(wanted).collect(),
            )
        })
        .collect();
    let hooks: Vec<usize> = record.hooks.iter().rev().copied().filter(wanted).collect();
    out.push(("hooks".to_owned(), hooks));
    out.retain(|(_, r)| !r.is_empty());
    out
}

/// Items of `old` whose identity is not in `new`, as a record-shaped selection of `old`;
/// without what `old`'s tool leaves in place when an object is removed from the chart
/// ([`left_by_tool`]).
#[must_use]
pub fn removed(old: &Record, new: &Record) -> BTreeSet<usize> {
    let left = left_by_tool(old);
    removed_from_chart(old, new)
        .into_iter()
        .filter(|i| !left.contains(i))
        .collect()
}

/// Items of `old` whose identity is not in `new`, whatever a tool keeps.
#[must_use]
pub fn removed_from_chart(old: &Record, new: &Record) -> BTreeSet<usize> {
    let kept: BTreeSet<_> = new.items.iter().map(Item::identity).collect();
    old.items
        .iter()
        .enumerate()
        .filter(|(i, item)| !old.crds.contains(i) && !kept.contains(&item.identity()))
        .map(|(i, _)| i)
        .collect()
}

/// What a record's tool leaves in place when an object leaves the chart, as its uninstall
/// leaves it: installed by its steps and in no step of its recorded uninstall order (werf's
/// `skip-delete`, KOTS's `kots.io/keep`, kapp's orphans). Empty for a tool whose uninstall
/// keeps more than that (Argo CD) or without a recorded order.
#[must_use]
pub fn left_by_tool(record: &Record) -> BTreeSet<usize> {
    let (Some(own), Some(dialect)) = (&record.uninstall, record.dialect) else {
        return BTreeSet::new();
    };
    if !dialect.uninstall_keeps_on_removal() {
        return BTreeSet::new();
    }
    let deleted: BTreeSet<usize> = own
        .iter()
        .flat_map(|s| s.resources.iter().copied())
        .collect();
    record
        .steps
        .iter()
        .flat_map(|s| s.resources.iter().copied())
        .filter(|i| !deleted.contains(i))
        .collect()
}
