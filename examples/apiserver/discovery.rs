//! The resource types served and how clients find them: `/api`, `/apis`, group-version
//! resource lists, `/version`, the OpenAPI v3 index kubectl reads for field validation, and
//! request paths resolved to a type, namespace, name and subresource.

use hyper::{Response, StatusCode};
use serde_json::{Map, Value, json};

use super::codec::{respond, status_error};
use super::{Body, Server};

/// A served resource type.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceType {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub namespaced: bool,
    /// Has a status subresource: apply to the main resource ignores `.status`.
    pub status: bool,
    /// Registered by a CustomResourceDefinition (by its name).
    pub crd: Option<String>,
}

impl ResourceType {
    pub(super) fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    pub(super) fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

pub(super) fn builtin_types() -> Vec<ResourceType> {
    let t =
        |group: &str, version: &str, kind: &str, plural: &str, namespaced: bool, status: bool| {
            ResourceType {
                group: group.into(),
                version: version.into(),
                kind: kind.into(),
                plural: plural.into(),
                namespaced,
                status,
                crd: None,
            }
        };
    vec![
        t("", "v1", "Namespace", "namespaces", false, true),
        t("", "v1", "ConfigMap", "configmaps", true, false),
        t("", "v1", "Secret", "secrets", true, false),
        t("", "v1", "Service", "services", true, true),
        t("", "v1", "ServiceAccount", "serviceaccounts", true, false),
        t("", "v1", "Pod", "pods", true, true),
        t(
            "",
            "v1",
            "PersistentVolumeClaim",
            "persistentvolumeclaims",
            true,
            true,
        ),
        t(
            "",
            "v1",
            "PersistentVolume",
            "persistentvolumes",
            false,
            true,
        ),
        t("", "v1", "ResourceQuota", "resourcequotas", true, true),
        t("", "v1", "LimitRange", "limitranges", true, false),
        t(
            "",
            "v1",
            "ReplicationController",
            "replicationcontrollers",
            true,
            true,
        ),
        t("", "v1", "Endpoints", "endpoints", true, false),
        t("apps", "v1", "Deployment", "deployments", true, true),
        t("apps", "v1", "StatefulSet", "statefulsets", true, true),
        t("apps", "v1", "DaemonSet", "daemonsets", true, true),
        t("apps", "v1", "ReplicaSet", "replicasets", true, true),
        t("batch", "v1", "Job", "jobs", true, true),
        t("batch", "v1", "CronJob", "cronjobs", true, true),
        t(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            false,
            true,
        ),
        t(
            "rbac.authorization.k8s.io",
            "v1",
            "Role",
            "roles",
            true,
            false,
        ),
        t(
            "rbac.authorization.k8s.io",
            "v1",
            "RoleBinding",
            "rolebindings",
            true,
            false,
        ),
        t(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRole",
            "clusterroles",
            false,
            false,
        ),
        t(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRoleBinding",
            "clusterrolebindings",
            false,
            false,
        ),
        t(
            "networking.k8s.io",
            "v1",
            "Ingress",
            "ingresses",
            true,
            true,
        ),
        t(
            "networking.k8s.io",
            "v1",
            "IngressClass",
            "ingressclasses",
            false,
            false,
        ),
        t(
            "networking.k8s.io",
            "v1",
            "NetworkPolicy",
            "networkpolicies",
            true,
            false,
        ),
        t(
            "policy",
            "v1",
            "PodDisruptionBudget",
            "poddisruptionbudgets",
            true,
            true,
        ),
        t(
            "scheduling.k8s.io",
            "v1",
            "PriorityClass",
            "priorityclasses",
            false,
            false,
        ),
        t(
            "storage.k8s.io",
            "v1",
            "StorageClass",
            "storageclasses",
            false,
            false,
        ),
        t(
            "autoscaling",
            "v2",
            "HorizontalPodAutoscaler",
            "horizontalpodautoscalers",
            true,
            true,
        ),
        t(
            "admissionregistration.k8s.io",
            "v1",
            "MutatingWebhookConfiguration",
            "mutatingwebhookconfigurations",
            false,
            false,
        ),
        t(
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingWebhookConfiguration",
            "validatingwebhookconfigurations",
            false,
            false,
        ),
    ]
}

pub(super) fn discovery(server: &Server, segs: &[&str]) -> Option<Response<Body>> {
    let st = server.lock();
    let group_versions = |group: &str| -> Vec<String> {
        let mut v: Vec<String> = st
            .types
            .iter()
            .filter(|t| t.group == group)
            .map(|t| t.version.clone())
            .collect();
        v.dedup();
        v
    };
    let resources = |group: &str, version: &str| -> Value {
        let mut list = Vec::new();
        for t in st
            .types
            .iter()
            .filter(|t| t.group == group && t.version == version)
        {
            let verbs = json!([
                "create", "delete", "get", "list", "patch", "update", "watch"
            ]);
            let short = short_names(&t.kind);
            list.push(json!({"name": t.plural, "singularName": t.kind.to_lowercase(), "namespaced": t.namespaced, "kind": t.kind, "verbs": verbs, "shortNames": short}));
            if t.status {
                list.push(json!({"name": format!("{}/status", t.plural), "singularName": "", "namespaced": t.namespaced, "kind": t.kind, "verbs": ["get", "patch", "update"]}));
            }
        }
        let gv = if group.is_empty() {
            version.to_owned()
        } else {
            format!("{group}/{version}")
        };
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": list})
    };
    let resp = match segs {
        ["version"] => {
            json!({"major": "1", "minor": "35", "gitVersion": "v1.35.2", "platform": "linux/amd64"})
        }
        ["api"] => {
            json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]})
        }
        ["api", "v1"] => resources("", "v1"),
        // kubectl picks server-side field validation when the OpenAPI v3 PATCH operation of a
        // kind lists `fieldValidation`; this server validates nothing, like `Ignore`.
        ["openapi", "v3"] => {
            let mut paths = Map::new();
            for t in &st.types {
                let gv = if t.group.is_empty() {
                    format!("api/{}", t.version)
                } else {
                    format!("apis/{}/{}", t.group, t.version)
                };
                paths.insert(
                    gv.clone(),
                    json!({"serverRelativeURL": format!("/openapi/v3/{gv}?hash=0")}),
                );
            }
            json!({"paths": paths})
        }
        ["openapi", "v3", rest @ ..] => {
            let (group, version) = match rest {
                ["api", v] => ("", *v),
                ["apis", g, v] => (*g, *v),
                _ => return None,
            };
            let mut paths = Map::new();
            for t in st
                .types
                .iter()
                .filter(|t| t.group == group && t.version == version)
            {
                let prefix = if group.is_empty() {
                    format!("/api/{version}")
                } else {
                    format!("/apis/{group}/{version}")
                };
                let path = if t.namespaced {
                    format!("{prefix}/namespaces/{{namespace}}/{}/{{name}}", t.plural)
                } else {
                    format!("{prefix}/{}/{{name}}", t.plural)
                };
                let params: Vec<Value> = ["dryRun", "fieldManager", "fieldValidation", "force"]
                    .iter()
                    .map(|n| json!({"name": n, "in": "query", "schema": {"type": "string"}}))
                    .collect();
                paths.insert(path, json!({"patch": {"operationId": format!("patch{}", t.kind), "parameters": params,
                    "x-kubernetes-group-version-kind": {"group": t.group, "version": t.version, "kind": t.kind},
                    "responses": {"200": {"description": "OK"}}}}));
            }
            json!({"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.35.2"}, "paths": paths, "components": {"schemas": {}}})
        }
        ["apis"] => {
            let mut groups: Vec<&str> = st
                .types
                .iter()
                .map(|t| t.group.as_str())
                .filter(|g| !g.is_empty())
                .collect();
            groups.sort_unstable();
            groups.dedup();
            let groups: Vec<Value> = groups
                .iter()
                .map(|g| {
                    let versions: Vec<Value> = group_versions(g)
                        .iter()
                        .map(|v| json!({"groupVersion": format!("{g}/{v}"), "version": v}))
                        .collect();
                    json!({"name": g, "versions": versions, "preferredVersion": versions[0]})
                })
                .collect();
            json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
        }
        ["apis", group] => {
            let versions: Vec<Value> = group_versions(group)
                .iter()
                .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
                .collect();
            if versions.is_empty() {
                return None;
            }
            json!({"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": versions, "preferredVersion": versions[0]})
        }
        ["apis", group, version] => {
            if !st
                .types
                .iter()
                .any(|t| t.group == *group && t.version == *version)
            {
                drop(st);
                return Some(status_error(
                    404,
                    "NotFound",
                    "the server could not find the requested resource",
                    json!({}),
                ));
            }
            resources(group, version)
        }
        _ => return None,
    };
    Some(respond(StatusCode::OK, &resp))
}

/// kubectl's short names for the built-in kinds.
pub(super) fn short_names(kind: &str) -> Vec<&'static str> {
    let name = match kind {
        "Namespace" => "ns",
        "ConfigMap" => "cm",
        "Service" => "svc",
        "ServiceAccount" => "sa",
        "Pod" => "po",
        "PersistentVolumeClaim" => "pvc",
        "PersistentVolume" => "pv",
        "Deployment" => "deploy",
        "StatefulSet" => "sts",
        "DaemonSet" => "ds",
        "ReplicaSet" => "rs",
        "CronJob" => "cj",
        "CustomResourceDefinition" => "crd",
        "Ingress" => "ing",
        "PodDisruptionBudget" => "pdb",
        "HorizontalPodAutoscaler" => "hpa",
        "PriorityClass" => "pc",
        "StorageClass" => "sc",
        _ => return Vec::new(),
    };
    vec![name]
}

pub(super) fn resolve(server: &Server, segs: &[&str]) -> Option<Target> {
    let (group, version, rest) = match segs {
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return None,
    };
    let st = server.lock();
    let find = |plural: &str| {
        st.types
            .iter()
            .find(|t| t.group == group && t.version == version && t.plural == plural)
            .cloned()
    };
    let (namespace, rest) = match rest {
        ["namespaces", ns, plural, tail @ ..]
            if group.is_empty()
                && (*plural == "status" || *plural == "finalize")
                && tail.is_empty() =>
        {
            let _ = ns;
            (None, rest)
        }
        ["namespaces", ns, tail @ ..] if !tail.is_empty() => (Some((*ns).to_owned()), tail),
        _ => (None, rest),
    };
    let (plural, name, sub) = match rest {
        [p] => (*p, None, None),
        [p, n] => (*p, Some((*n).to_owned()), None),
        [p, n, s] => (*p, Some((*n).to_owned()), Some((*s).to_owned())),
        _ => return None,
    };
    let ty = find(plural)?;
    if namespace.is_some() && !ty.namespaced {
        return None;
    }
    if name.is_some() && ty.namespaced && namespace.is_none() {
        return None;
    }
    Some(Target {
        ty,
        namespace,
        name,
        subresource: sub,
    })
}

/// What a request path names.
pub(super) struct Target {
    pub(super) ty: ResourceType,
    pub(super) namespace: Option<String>,
    pub(super) name: Option<String>,
    pub(super) subresource: Option<String>,
}
