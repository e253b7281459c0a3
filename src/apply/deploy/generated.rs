//! Argo CD hooks named only by `generateName`: created anew on every run, deleted by their
//! delete policy once the run ends, and what earlier runs left deleted on uninstall.

use super::{
    ClusterError, Decision, DeletePolicy, ErrorKind, Event, Goal, Instant, Kind, Known, Record,
    RunError, Runner, StepResult, Target, Value, lock, ownership,
};

impl Runner {
    /// Creates an object named only by `generateName` (POST: the server names it, as Argo CD
    /// creates such a hook anew on every sync); the target is the object created.
    pub(super) async fn create_generated(
        &self,
        record: &Record,
        index: usize,
        mut target: Target,
    ) -> Result<Target, RunError> {
        let item = &record.items[index];
        lock(&self.applied).insert(index);
        if self.settings.dry_run {
            return Ok(target);
        }
        let object = Self::outgoing(record, index, target.namespace.as_deref());
        let created = self
            .cluster
            .create(&target.kind, target.namespace.as_deref(), &object)
            .await
            .map_err(|error| RunError::Cluster {
                resource: Some(self.label(item)),
                error,
            })?;
        let Some(name) = created["metadata"]["name"].as_str() else {
            return Err(RunError::Cluster {
                resource: Some(self.label(item)),
                error: ClusterError::other("the server named no object it created"),
            });
        };
        name.clone_into(&mut target.name);
        lock(&self.generated).push((index, target.clone()));
        Ok(target)
    }

    /// After the steps: the Argo CD hooks named by `generateName` whose delete policy asks for
    /// it are deleted — `HookSucceeded` when the run succeeded, `HookFailed` when it failed
    /// (`argocd.argoproj.io/hook-delete-policy`, or Helm's `hook-succeeded`/`hook-failed`).
    /// `BeforeHookCreation` has nothing to delete: each run creates a new object.
    pub async fn delete_generated_hooks(&self, record: &Record, succeeded: bool) {
        let created = std::mem::take(&mut *lock(&self.generated));
        for (index, target) in created {
            let wanted = if succeeded {
                DeletePolicy::HookSucceeded
            } else {
                DeletePolicy::HookFailed
            };
            if !record.items[index].argo_delete_policies.contains(&wanted) {
                continue;
            }
            // Best effort: the outcome of the run is already decided.
            let _ = self
                .cluster
                .delete(
                    &target.kind,
                    target.namespace.as_deref(),
                    &target.name,
                    None,
                )
                .await;
        }
    }

    /// Uninstall of a release with Argo CD hooks named by `generateName`: the objects earlier
    /// runs created from them and left (no delete policy, or one that did not fire) are
    /// deleted and waited gone, as Argo CD's cascade deletion deletes every live object of
    /// the application, its hooks included (`shouldBeDeleted` in its application
    /// controller), except those marked `helm.sh/resource-policy: keep` or
    /// `argocd.argoproj.io/sync-options: Delete=false`. The release recorded only their
    /// prefix: an object is one of them when it has the hook's kind and namespace, its name
    /// is the prefix and the five characters the API server appends, and it carries this
    /// release's ownership marks. The items of `spare` are passed over (Argo CD's
    /// `PostDelete` hooks, which run after its cascade and stay unless their policy says).
    pub async fn delete_generated_leftovers(
        &self,
        record: &Record,
        spare: &[usize],
    ) -> Result<(), RunError> {
        const STEP: &str = "generated hooks";
        let mut doomed: Vec<Leftover> = Vec::new();
        for (index, item) in record.items.iter().enumerate() {
            if !is_generated(&item.object) || spare.contains(&index) {
                continue;
            }
            let Some(prefix) = item.object["metadata"]["generateName"].as_str() else {
                continue;
            };
            // The API server cuts a longer prefix to 58 characters before appending five.
            let prefix = prefix.get(..58).unwrap_or(prefix);
            let kind = match self.kind(item, false).await {
                Ok(k) => k,
                Err(RunError::Cluster { error, .. }) if error.kind == ErrorKind::NotFound => {
                    continue;
                }
                Err(e) => return Err(e),
            };
            let ns = Self::namespace_for(&kind, item);
            let selector = format!("{}={}", ownership::MANAGED_BY, ownership::MANAGED_BY_HELM);
            let (live, _) = self
                .cluster
                .list(&kind, ns.as_deref(), &selector)
                .await
                .map_err(|error| RunError::Cluster {
                    resource: Some(self.label(item)),
                    error,
                })?;
            for object in live {
                let Some(name) = object["metadata"]["name"].as_str() else {
                    continue;
                };
                let generated_from = name.strip_prefix(prefix).is_some_and(|rest| {
                    rest.len() == 5 && rest.bytes().all(|b| b.is_ascii_alphanumeric())
                });
                if !generated_from
                    || ownership::decide(&object, Self::release(record), Known::default())
                        != Decision::Owned
                    || argo_keeps_on_delete(&object)
                    || doomed
                        .iter()
                        .any(|d| d.name == name && d.namespace == ns && d.kind == kind)
                {
                    continue;
                }
                doomed.push(Leftover {
                    index,
                    kind: kind.clone(),
                    namespace: ns.clone(),
                    name: name.to_owned(),
                    uid: object["metadata"]["uid"].as_str().map(str::to_owned),
                });
            }
        }
        if doomed.is_empty() {
            return Ok(());
        }
        self.emit(Event::Started {
            step: STEP.to_owned(),
            resources: doomed.len(),
            verb: "delete",
            objects: doomed
                .iter()
                .map(|d| format!("{}/{}", d.kind.kind, d.name))
                .collect(),
        });
        let started = Instant::now();
        let result = self.delete_named(record, &doomed).await;
        self.emit(Event::Finished {
            step: STEP.to_owned(),
            resources: doomed.len(),
            waited: started.elapsed(),
            result: match &result {
                Err(e) => StepResult::Failed(e.to_string()),
                Ok(()) if self.settings.dry_run => StepResult::DryRun,
                Ok(()) => StepResult::Deleted,
            },
        });
        result
    }

    /// Deletes objects by the name the server gave them (each only if it is still the object
    /// found, by uid) and waits for them to be gone.
    async fn delete_named(&self, record: &Record, doomed: &[Leftover]) -> Result<(), RunError> {
        if self.settings.dry_run {
            return Ok(());
        }
        let mut targets = Vec::new();
        for Leftover {
            index,
            kind,
            namespace: ns,
            name,
            uid,
        } in doomed
        {
            match self
                .cluster
                .delete(kind, ns.as_deref(), name, uid.as_deref())
                .await
            {
                Ok(true) => targets.push(Target {
                    kind: kind.clone(),
                    namespace: ns.clone(),
                    name: name.clone(),
                    readiness: None,
                    goal: Goal::Gone,
                    uid: None,
                    track: None,
                }),
                Ok(false) => {}
                Err(error) if error.kind == ErrorKind::Conflict => {}
                Err(error) => {
                    return Err(RunError::Cluster {
                        resource: Some(self.label(&record.items[*index])),
                        error,
                    });
                }
            }
        }
        if targets.is_empty() {
            return Ok(());
        }
        self.wait("generated hooks", &targets).await.map(|_| ())
    }
}

/// An object an Argo CD hook named by `generateName` left: the hook's item, and the object's
/// kind, namespace, name and uid.
struct Leftover {
    index: usize,
    kind: Kind,
    namespace: Option<String>,
    name: String,
    uid: Option<String>,
}

/// Argo CD leaves an object in place on cascade deletion: `helm.sh/resource-policy: keep` or
/// `argocd.argoproj.io/sync-options` with `Delete=false`.
fn argo_keeps_on_delete(object: &Value) -> bool {
    ownership::is_kept(object)
        || object["metadata"]["annotations"]["argocd.argoproj.io/sync-options"]
            .as_str()
            .is_some_and(|o| o.split(',').any(|o| o.trim() == "Delete=false"))
}

/// Whether an object is named only by `generateName`.
pub(super) fn is_generated(object: &Value) -> bool {
    let meta = &object["metadata"];
    meta["name"].as_str().is_none_or(str::is_empty)
        && meta["generateName"].as_str().is_some_and(|g| !g.is_empty())
}
