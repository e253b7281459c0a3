//! Kubernetes kind facts: Helm's install order and API groups.

/// Helm's `InstallOrder` (`pkg/release/v1/util/kind_sorter.go`): kinds earlier in the list
/// are installed first; unknown kinds come last, by kind name.
pub const INSTALL_ORDER: [&str; 38] = [
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// Sort key for Helm's kind order: position in [`INSTALL_ORDER`], unknown kinds after, by name.
#[must_use]
pub fn install_rank(kind: &str) -> (usize, &str) {
    match INSTALL_ORDER.iter().position(|k| *k == kind) {
        Some(i) => (i, ""),
        None => (INSTALL_ORDER.len(), kind),
    }
}

/// The API group of an `apiVersion` (`apps/v1` → `apps`, `v1` → the core group `""`).
#[must_use]
pub fn api_group(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_kinds_sort_last_by_name() {
        let mut kinds = vec!["Widget", "Deployment", "Alpha", "Namespace"];
        kinds.sort_by_key(|k| install_rank(k));
        assert_eq!(kinds, vec!["Namespace", "Deployment", "Alpha", "Widget"]);
        assert_eq!(api_group("apps/v1"), "apps");
        assert_eq!(api_group("v1"), "");
    }
}
