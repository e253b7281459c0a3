//! Argo CD's deletion of an application (argo-cd 37ee009 `controller/appcontroller.go`
//! `finalizeApplicationDeletion`, `controller/hook.go`): its `PreDelete` hooks created and
//! waited healthy before anything is deleted, its cascade wave by wave, its `PostDelete` hooks
//! once everything is gone, then each kind of hook cleaned up by its delete policy.

use super::{DeletePolicy, Event, Goal, Kind, Record, RunError, Runner, StepResult, Target, lock};
use crate::apply::ownership::Decision;

impl Runner {
    /// Creates the delete hooks of one type (`PreDelete`, `PostDelete`) together and waits
    /// for every one to be healthy by Argo CD's check of its kind (`executeHooks`). A hook of
    /// this release already there (one a sync ran and left, a `PreSync` hook with Helm's
    /// `pre-delete` too) is not created again, only judged, as Argo CD skips a hook it finds
    /// live. A hook that fails stops the uninstall, as it stops Argo CD's deletion; the hooks
    /// of the run are deleted then, so that the next attempt creates them anew (Argo CD
    /// deletes its failed hooks "to allow retry").
    pub async fn argo_delete_hooks(
        &self,
        record: &Record,
        hooks: &[usize],
        label: &str,
    ) -> Result<(), RunError> {
        if hooks.is_empty() {
            return Ok(());
        }
        let named: Vec<usize> = hooks
            .iter()
            .copied()
            .filter(|&i| !super::is_generated(&record.items[i].object))
            .collect();
        let live: Vec<(usize, Kind, Option<String>)> = self
            .judge_deletions(record, &named)
            .await?
            .into_iter()
            .filter(|(.., decision)| matches!(decision, Decision::Owned | Decision::Kept))
            .map(|(i, kind, ns, _, _)| (i, kind, ns))
            .collect();
        let missing: Vec<usize> = hooks
            .iter()
            .copied()
            .filter(|i| !live.iter().any(|(j, ..)| j == i))
            .collect();
        let mut result = if missing.is_empty() {
            Ok(())
        } else {
            self.run_unit(record, label, &missing, None).await
        };
        if result.is_ok() && !live.is_empty() {
            result = self.judge_live_hooks(record, &live, label).await;
        }
        match result {
            Ok(()) | Err(RunError::Interrupted) => result,
            Err(e) => {
                // Best effort: the uninstall has failed already.
                let _ = self.delete_and_wait(record, &named, label, false).await;
                let _ = self.delete_created(record, hooks, label).await;
                Err(e)
            }
        }
    }

    /// Waits for delete hooks found live to be healthy by their recorded wait, without
    /// sending them.
    async fn judge_live_hooks(
        &self,
        record: &Record,
        live: &[(usize, Kind, Option<String>)],
        label: &str,
    ) -> Result<(), RunError> {
        let step = format!("{label} (already there)");
        self.emit(Event::Started {
            step: step.clone(),
            resources: live.len(),
            verb: "wait",
            objects: live
                .iter()
                .map(|(i, ..)| record.items[*i].short())
                .collect(),
        });
        let started = std::time::Instant::now();
        let mut targets = Vec::with_capacity(live.len());
        for (i, kind, ns) in live {
            let item = &record.items[*i];
            let readiness = crate::apply::judge::readiness_for(
                record.wait_of(*i),
                self.settings.wait_for_jobs,
                self.settings.argo_health.as_ref(),
            )
            .map_err(|message| RunError::Cluster {
                resource: Some(self.label(item)),
                error: crate::apply::cluster::ClusterError::other(message),
            })?;
            if let Some(readiness) = readiness {
                targets.push(Target {
                    kind: kind.clone(),
                    namespace: ns.clone(),
                    name: item.name.clone(),
                    readiness: Some(std::sync::Arc::new(readiness)),
                    goal: Goal::Ready,
                    uid: None,
                    track: None,
                });
            }
        }
        let result = self.wait(&step, &targets).await;
        self.finish(&step, live.len(), started.elapsed(), result)
    }

    /// Argo CD's cleanup of one type of delete hook once its deletion is done
    /// (`cleanupHooks`): every hook of it still there goes when its delete policy says
    /// `HookSucceeded` (they all succeeded by then). `BeforeHookCreation`, the policy of a
    /// hook that names none (`hook.DeletePolicies`), deletes nothing here: the hook stays, as
    /// it does after Argo CD deletes the application.
    pub async fn argo_cleanup_hooks(
        &self,
        record: &Record,
        hooks: &[usize],
        label: &str,
    ) -> Result<(), RunError> {
        let succeeded: Vec<usize> = hooks
            .iter()
            .copied()
            .filter(|&i| {
                record.items[i]
                    .argo_delete_policies
                    .contains(&DeletePolicy::HookSucceeded)
            })
            .collect();
        let named: Vec<usize> = succeeded
            .iter()
            .copied()
            .filter(|&i| !super::is_generated(&record.items[i].object))
            .collect();
        if !named.is_empty() {
            self.delete_and_wait(record, &named, label, false).await?;
        }
        self.delete_created(record, &succeeded, label).await
    }

    /// The cascade, step by step (each wave deleted and waited gone before the next); after
    /// each step, the objects this run created from its hooks named by `generateName` (the
    /// `PreDelete` hooks just run), which the step could not name.
    pub async fn argo_cascade(
        &self,
        record: &Record,
        steps: &[(String, Vec<usize>)],
    ) -> Result<(), RunError> {
        for step in steps {
            self.delete_steps(record, std::slice::from_ref(step))
                .await?;
            self.delete_created(record, &step.1, &step.0).await?;
        }
        Ok(())
    }

    /// [`Runner::report_left`] for Argo CD's cascade: a CRD (Argo CD never deletes one), a
    /// `Delete=false` or `keep` object.
    pub async fn argo_report_kept(
        &self,
        record: &Record,
        cascade: &[(String, Vec<usize>)],
    ) -> Result<(), RunError> {
        self.report_left(record, cascade, &|item| {
            if item.kind == "CustomResourceDefinition"
                && crate::model::kinds::api_group(&item.api_version) == "apiextensions.k8s.io"
            {
                "Argo CD never deletes a CRD".to_owned()
            } else {
                "argocd.argoproj.io/sync-options: Delete=false".to_owned()
            }
        })
        .await
    }

    /// Deletes the objects this run created from `indexes` named by `generateName` and waits
    /// for them to be gone.
    async fn delete_created(
        &self,
        record: &Record,
        indexes: &[usize],
        label: &str,
    ) -> Result<(), RunError> {
        if self.settings.dry_run {
            return Ok(());
        }
        let created: Vec<(usize, Target)> = {
            let mut all = lock(&self.generated);
            let (mine, rest): (Vec<_>, Vec<_>) =
                all.drain(..).partition(|(i, _)| indexes.contains(i));
            *all = rest;
            mine
        };
        let mut targets = Vec::new();
        for (index, mut target) in created {
            match self
                .cluster
                .delete(
                    &target.kind,
                    target.namespace.as_deref(),
                    &target.name,
                    None,
                )
                .await
            {
                Ok(true) => {
                    target.goal = Goal::Gone;
                    target.readiness = None;
                    target.track = None;
                    targets.push(target);
                }
                Ok(false) => {}
                Err(error) => {
                    return Err(RunError::Cluster {
                        resource: Some(self.label(&record.items[index])),
                        error,
                    });
                }
            }
        }
        if targets.is_empty() {
            return Ok(());
        }
        let started = std::time::Instant::now();
        let result = self.wait(label, &targets).await;
        if let Err(e) = &result {
            self.emit(Event::Finished {
                step: label.to_owned(),
                resources: targets.len(),
                waited: started.elapsed(),
                result: StepResult::Failed(e.to_string()),
            });
        }
        result.map(|_| ())
    }
}
