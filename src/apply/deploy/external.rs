//! werf's external dependencies: a resource that names objects outside the release is applied
//! only once each of them exists, the rest of its step meanwhile.

use super::{Arc, BTreeMap, Goal, Record, RunError, Runner, Target};

impl Runner {
    /// Applies `indexes` in kind order; those with external dependencies (werf) only once
    /// every object they name exists, the others meanwhile. Targets in the order of `indexes`.
    pub(super) async fn apply_after_external(
        &self,
        record: &Record,
        label: &str,
        indexes: &[usize],
    ) -> Result<Vec<Target>, RunError> {
        let (waiting, free): (Vec<usize>, Vec<usize>) = indexes
            .iter()
            .partition(|i| record.external.get(i).is_some_and(|e| !e.is_empty()));
        if waiting.is_empty() {
            return self.apply_in_kind_order(record, indexes).await;
        }
        let later = async {
            let mut targets = Vec::new();
            for &i in &waiting {
                for external in record.external.get(&i).into_iter().flatten() {
                    targets.push(self.external_target(record, i, external).await?);
                }
            }
            self.wait(&format!("{label} (external dependencies)"), &targets)
                .await?;
            self.apply_in_kind_order(record, &waiting).await
        };
        let (now, later) =
            futures_util::future::join(self.apply_in_kind_order(record, &free), later).await;
        let mut by_index: BTreeMap<usize, Target> = free
            .iter()
            .copied()
            .zip(now?)
            .chain(waiting.iter().copied().zip(later?))
            .collect();
        Ok(indexes.iter().filter_map(|i| by_index.remove(i)).collect())
    }

    /// An object outside the release that item `index` waits to exist.
    async fn external_target(
        &self,
        record: &Record,
        index: usize,
        external: &crate::plan::External,
    ) -> Result<Target, RunError> {
        use crate::plan::ExternalType;
        let kind = match &external.target {
            ExternalType::Kind { api_version, kind } => {
                self.cluster.resolve(api_version, kind, false).await
            }
            ExternalType::Resource {
                resource,
                version,
                group,
            } => {
                self.cluster
                    .resolve_resource(resource, version.as_deref(), group.as_deref())
                    .await
            }
        }
        .map_err(|error| RunError::Cluster {
            resource: Some(format!(
                "{} ({} {})",
                self.label(&record.items[index]),
                external.key,
                external.label()
            )),
            error,
        })?;
        let namespace = kind.namespaced.then(|| {
            external
                .namespace
                .clone()
                .unwrap_or_else(|| record.namespace.clone())
        });
        Ok(Target {
            kind,
            namespace,
            name: external.name.clone(),
            readiness: Some(Arc::new(crate::readiness::Readiness::Exists(
                crate::readiness::Exists,
            ))),
            goal: Goal::Ready,
            uid: None,
            track: None,
        })
    }
}
