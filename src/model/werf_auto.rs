//! nelm's automatic dependencies (`internalDeployDependencies`, `pkg/resource/dependency.go` of
//! werf/nelm @ 778b4d1): what an object refers to by name makes it wait, with no annotation,
//! for the referred object's apply (`present`) when that object is in the same stage. Read
//! exactly as nelm reads them, field for field:
//!
//! - a Pod template (`Deployment`, `DaemonSet`, `StatefulSet`, `ReplicaSet`, `Job`, `CronJob` — `apps` or
//!   `batch` — and core `Pod` and `ReplicationController`): every container, init and ephemeral
//!   container's `env[].valueFrom.configMapKeyRef` / `secretKeyRef` (not `optional: true`);
//!   `imagePullSecrets[].name`; `nodeName` (a Node); `priorityClassName`; `resourceClaims[]
//!   .source.resourceClaimName` / `resourceClaimNameTemplate`; `runtimeClassName`;
//!   `serviceAccount` and `serviceAccountName` (a `ServiceAccount`); `volumes[].configMap.name`
//!   and `volumes[].secret.secretName` (not `optional: true`); and every `RoleBinding` or
//!   `ClusterRoleBinding` of the release whose subjects name its service account (resolved over
//!   the release by the planner, [`AutoRefs::service_account`]);
//! - a `StatefulSet`: `serviceName` — read by nelm at the object's top level, not under `spec`,
//!   so a real `StatefulSet` never gets it (reproduced);
//! - `envFrom[]`: nelm looks for `valueFrom.configMapRef` / `valueFrom.secretRef` inside each
//!   item, where Kubernetes has `configMapRef` / `secretRef` directly, so a real `envFrom` adds
//!   nothing (reproduced);
//! - a `RoleBinding` or `ClusterRoleBinding`: its `roleRef` (`apiGroup`, `kind`, `name`, each
//!   present) and every `ServiceAccount` subject;
//! - a KEDA `ScaledObject` (`keda.sh`): `spec.scaleTargetRef` (kind default `Deployment`,
//!   apiVersion default `apps/v1`). There is none for a `HorizontalPodAutoscaler`.
//!
//! Targets are matched by name, kind and API group (any version), and by the dependent's
//! written namespace for namespaced targets.

use super::werf::Target;
use crate::parse::{Node, ScalarKind};
use crate::source::{FileId, Loc};

/// One automatic dependency: a `present` dependency on the first object of the same stage the
/// target matches.
#[derive(Clone, Debug, PartialEq)]
pub struct AutoDependency {
    pub target: Target,
    /// The field that refers to it, for messages: `spec.template.spec.volumes[0].configMap`.
    pub path: String,
    /// Where that field is written.
    pub loc: Loc,
}

/// What nelm reads from one object for automatic dependencies.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AutoRefs {
    pub deps: Vec<AutoDependency>,
    /// A Pod template's service account (`serviceAccountName`, else `serviceAccount`) and
    /// where it is written: the object also waits for every binding of the release whose
    /// subjects name it.
    pub service_account: Option<(String, Loc)>,
    /// A `RoleBinding`'s or `ClusterRoleBinding`'s `ServiceAccount` subjects, by name.
    pub subjects: Vec<String>,
    /// What nelm reads from the object for its automatic delete dependencies.
    pub delete: DeleteRefs,
}

/// What nelm reads from one object to order an uninstall (`internalDeleteDependencies`,
/// `pkg/resource/dependency.go`): a CRD is deleted once no object of its kind is left, a
/// `Role` or `ClusterRole` once no binding refers to it, a `ServiceAccount` once nothing runs
/// as it or binds it. Read field for field as nelm reads them (`nestedString`: present and a
/// string, empty or not).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeleteRefs {
    /// A `CustomResourceDefinition`'s `spec.group` and `spec.names.kind`.
    pub defines: Option<Box<(String, String)>>,
    /// A `RoleBinding`'s or `ClusterRoleBinding`'s `roleRef.kind` and `roleRef.name`.
    pub role_ref: Option<Box<(String, String)>>,
    /// The `serviceAccountName` a Pod template runs as (not `serviceAccount`: nelm reads only
    /// this field here), where nelm looks for it by kind.
    pub runs_as: Option<String>,
}

/// The path from a kind's object to its Pod template (nelm's list, by API group and kind).
fn pod_path(group: &str, kind: &str) -> Option<&'static [&'static str]> {
    match (group, kind) {
        ("apps", "Deployment" | "DaemonSet" | "StatefulSet" | "ReplicaSet")
        | ("batch", "Job")
        | ("", "ReplicationController") => Some(&["spec", "template"]),
        ("batch", "CronJob") => Some(&["spec", "jobTemplate", "spec", "template"]),
        ("", "Pod") => Some(&[]),
        _ => None,
    }
}

const RBAC: &str = "rbac.authorization.k8s.io";

struct Reader<'a> {
    file: FileId,
    /// The dependent's written namespace: namespaced targets are looked for there.
    namespace: Option<&'a str>,
    out: AutoRefs,
}

/// A map's string value that Kubernetes reads as a string (nelm's `nestedString`).
fn string<'n>(node: &'n Node, key: &str) -> Option<&'n str> {
    node.get(key).and_then(Node::as_str)
}

/// [`string`], not empty (nelm's `nestedStringNotEmpty`).
fn non_empty<'n>(node: &'n Node, key: &str) -> Option<&'n str> {
    string(node, key).filter(|s| !s.is_empty())
}

/// A non-empty map (nelm's `nestedMap`).
fn map<'n>(node: &'n Node, keys: &[&str]) -> Option<&'n Node> {
    let found = if keys.is_empty() {
        Some(node)
    } else {
        node.path(keys)
    };
    found.filter(|n| n.as_map().is_some_and(|m| !m.is_empty()))
}

/// A sequence's items (nelm's `nestedSlice`; anything else is none).
fn items<'n>(node: &'n Node, key: &str) -> &'n [Node] {
    node.get(key).and_then(Node::as_seq).unwrap_or_default()
}

fn optional(node: &Node) -> bool {
    node.get("optional")
        .and_then(Node::scalar_kind)
        .is_some_and(|k| k == ScalarKind::Bool(true))
}

impl Reader<'_> {
    fn loc(&self, node: &Node) -> Loc {
        Loc {
            file: self.file,
            span: node.span,
        }
    }

    fn push(
        &mut self,
        kind: &str,
        group: &str,
        name: &str,
        namespaced: bool,
        path: String,
        at: &Node,
    ) {
        let target = Target {
            name: Some(name.to_owned()),
            namespace: if namespaced {
                self.namespace.map(str::to_owned)
            } else {
                None
            },
            group: Some(group.to_owned()),
            version: None,
            kind: Some(kind.to_owned()),
        };
        let loc = self.loc(at);
        self.out.deps.push(AutoDependency { target, path, loc });
    }

    fn pod(&mut self, pod: &Node, at: &str) {
        let Some(spec) = pod.get("spec") else {
            return;
        };
        for list in ["containers", "initContainers", "ephemeralContainers"] {
            for (i, container) in items(spec, list).iter().enumerate() {
                self.container(container, &format!("{at}spec.{list}[{i}]"));
            }
        }
        for (i, secret) in items(spec, "imagePullSecrets").iter().enumerate() {
            if let Some(name) = non_empty(secret, "name") {
                let path = format!("{at}spec.imagePullSecrets[{i}]");
                self.push("Secret", "", name, true, path, secret);
            }
        }
        for (key, kind, group, namespaced) in [
            ("nodeName", "Node", "", false),
            (
                "priorityClassName",
                "PriorityClass",
                "scheduling.k8s.io",
                false,
            ),
        ] {
            if let Some((_, v)) = spec.entry(key)
                && let Some(name) = v.as_str().filter(|s| !s.is_empty())
            {
                self.push(kind, group, name, namespaced, format!("{at}spec.{key}"), v);
            }
        }
        for (i, claim) in items(spec, "resourceClaims").iter().enumerate() {
            let Some(source) = map(claim, &["source"]) else {
                continue;
            };
            let path = format!("{at}spec.resourceClaims[{i}].source");
            if let Some(name) = non_empty(source, "resourceClaimName") {
                self.push("ResourceClaim", "resource.k8s.io", name, true, path, source);
            } else if let Some(name) = non_empty(source, "resourceClaimNameTemplate") {
                let kind = "ResourceClaimTemplate";
                self.push(kind, "resource.k8s.io", name, true, path, source);
            }
        }
        if let Some((_, v)) = spec.entry("runtimeClassName")
            && let Some(name) = v.as_str().filter(|s| !s.is_empty())
        {
            let path = format!("{at}spec.runtimeClassName");
            self.push("RuntimeClass", "node.k8s.io", name, false, path, v);
        }
        for key in ["serviceAccount", "serviceAccountName"] {
            if let Some((_, v)) = spec.entry(key)
                && let Some(name) = v.as_str().filter(|s| !s.is_empty())
            {
                self.push(
                    "ServiceAccount",
                    "",
                    name,
                    true,
                    format!("{at}spec.{key}"),
                    v,
                );
            }
        }
        let account = ["serviceAccountName", "serviceAccount"]
            .iter()
            .find_map(|k| {
                spec.entry(k)
                    .filter(|(_, v)| v.as_str().is_some_and(|s| !s.is_empty()))
            });
        if let Some((_, v)) = account {
            self.out.service_account = v.as_str().map(|s| (s.to_owned(), self.loc(v)));
        }
        for (i, volume) in items(spec, "volumes").iter().enumerate() {
            let path = format!("{at}spec.volumes[{i}]");
            // nelm looks at `configMap` first and stops there when the volume has one.
            if let Some(cm) = map(volume, &["configMap"]) {
                if let Some(name) = non_empty(cm, "name")
                    && !optional(cm)
                {
                    self.push("ConfigMap", "", name, true, format!("{path}.configMap"), cm);
                }
            } else if let Some(secret) = map(volume, &["secret"])
                && let Some(name) = non_empty(secret, "secretName")
                && !optional(secret)
            {
                self.push("Secret", "", name, true, format!("{path}.secret"), secret);
            }
        }
    }

    fn container(&mut self, container: &Node, at: &str) {
        for (i, env) in items(container, "env").iter().enumerate() {
            for (key, kind) in [("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")] {
                // nelm tries the ConfigMap form, then the Secret form.
                let Some(r) = map(env, &["valueFrom", key]) else {
                    continue;
                };
                // Not found (optional, no name): nelm tries the next form.
                if !optional(r)
                    && let Some(name) = non_empty(r, "name")
                {
                    let path = format!("{at}.env[{i}].valueFrom.{key}");
                    self.push(kind, "", name, true, path, r);
                    break;
                }
            }
        }
        for (i, env) in items(container, "envFrom").iter().enumerate() {
            for (key, kind) in [("configMapRef", "ConfigMap"), ("secretRef", "Secret")] {
                // Under `valueFrom`, as nelm reads it (see the module note).
                let Some(r) = map(env, &["valueFrom", key]) else {
                    continue;
                };
                if !optional(r)
                    && let Some(name) = non_empty(r, "name")
                {
                    let path = format!("{at}.envFrom[{i}].valueFrom.{key}");
                    self.push(kind, "", name, true, path, r);
                    break;
                }
            }
        }
    }

    fn binding(&mut self, object: &Node) {
        if let Some(role) = map(object, &["roleRef"])
            && let (Some(group), Some(kind), Some(name)) = (
                string(role, "apiGroup"),
                string(role, "kind"),
                string(role, "name"),
            )
        {
            let namespaced = kind != "ClusterRole";
            self.push(kind, group, name, namespaced, "roleRef".to_owned(), role);
        }
        for (i, subject) in items(object, "subjects").iter().enumerate() {
            if string(subject, "kind") != Some("ServiceAccount") {
                continue;
            }
            let Some(name) = string(subject, "name") else {
                continue;
            };
            // nelm looks the ServiceAccount up in the binding's own namespace.
            self.push(
                "ServiceAccount",
                "",
                name,
                true,
                format!("subjects[{i}]"),
                subject,
            );
            self.out.subjects.push(name.to_owned());
        }
    }

    fn scale_target(&mut self, object: &Node) {
        let Some(target) = object.path(&["spec", "scaleTargetRef"]) else {
            return;
        };
        let Some(name) = non_empty(target, "name") else {
            return;
        };
        let kind = non_empty(target, "kind").unwrap_or("Deployment");
        let api_version = non_empty(target, "apiVersion").unwrap_or("apps/v1");
        // Go's `ParseGroupVersion`: `v1`, `group/version`; more than one `/` is an error.
        let group = match api_version.split('/').collect::<Vec<_>>().as_slice() {
            [_] => "",
            [group, _] => group,
            _ => return,
        };
        let path = "spec.scaleTargetRef".to_owned();
        self.push(kind, group, name, true, path, target);
    }
}

/// The automatic dependencies nelm finds in one object.
#[must_use]
pub fn read(
    group: &str,
    kind: &str,
    namespace: Option<&str>,
    object: &Node,
    file: FileId,
) -> AutoRefs {
    let mut reader = Reader {
        file,
        namespace,
        out: AutoRefs::default(),
    };
    if (group, kind) == ("apps", "StatefulSet")
        && let Some((_, v)) = object.entry("serviceName")
        && let Some(name) = v.as_str().filter(|s| !s.is_empty())
    {
        reader.push("Service", "", name, true, "serviceName".to_owned(), v);
    }
    if let Some(path) = pod_path(group, kind)
        && let Some(pod) = map(object, path)
    {
        let at = if path.is_empty() {
            String::new()
        } else {
            format!("{}.", path.join("."))
        };
        reader.pod(pod, &at);
    }
    match (group, kind) {
        (RBAC, "RoleBinding" | "ClusterRoleBinding") => reader.binding(object),
        ("keda.sh", "ScaledObject") => reader.scale_target(object),
        _ => {}
    }
    reader.out.delete = delete_refs(group, kind, object);
    reader.out
}

/// [`DeleteRefs`] of one object.
fn delete_refs(group: &str, kind: &str, object: &Node) -> DeleteRefs {
    let at = |path: &[&str]| object.path(path).and_then(Node::as_str).map(str::to_owned);
    let runs_as_path: Option<&[&str]> = match (group, kind) {
        ("", "Pod") => Some(&["spec", "serviceAccountName"]),
        ("apps", "Deployment" | "DaemonSet" | "StatefulSet" | "ReplicaSet")
        | ("", "ReplicationController")
        | ("batch", "Job") => Some(&["spec", "template", "spec", "serviceAccountName"]),
        ("batch", "CronJob") => Some(&[
            "spec",
            "jobTemplate",
            "spec",
            "template",
            "spec",
            "serviceAccountName",
        ]),
        _ => None,
    };
    DeleteRefs {
        defines: match (group, kind) {
            ("apiextensions.k8s.io", "CustomResourceDefinition") => at(&["spec", "group"])
                .zip(at(&["spec", "names", "kind"]))
                .map(Box::new),
            _ => None,
        },
        role_ref: match (group, kind) {
            (RBAC, "RoleBinding" | "ClusterRoleBinding") => at(&["roleRef", "kind"])
                .zip(at(&["roleRef", "name"]))
                .map(Box::new),
            _ => None,
        },
        runs_as: runs_as_path.and_then(at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(group: &str, kind: &str, yaml: &str) -> AutoRefs {
        let node = crate::parse::parse_document(yaml, 0, crate::parse::Limits::default())
            .expect("parses")
            .expect("a document");
        read(group, kind, None, &node, crate::source::FileId(0))
    }

    fn targets(r: &AutoRefs) -> Vec<String> {
        r.deps
            .iter()
            .map(|d| {
                format!(
                    "{}/{}",
                    d.target.kind.as_deref().unwrap_or(""),
                    d.target.name.as_deref().unwrap_or("")
                )
            })
            .collect()
    }

    #[test]
    fn a_pod_template_waits_for_what_it_names_as_nelm_reads_it() {
        let r = refs(
            "apps",
            "Deployment",
            "spec:\n  template:\n    spec:\n      serviceAccountName: app\n      priorityClassName: high\n      imagePullSecrets: [{name: pull}]\n      containers:\n      - name: c\n        env:\n        - {name: A, valueFrom: {configMapKeyRef: {name: cfg, key: a}}}\n        - {name: B, valueFrom: {secretKeyRef: {name: opt, key: b, optional: true}}}\n        envFrom:\n        - configMapRef: {name: from}\n      volumes:\n      - {name: v, configMap: {name: vol}}\n      - {name: s, secret: {secretName: sec}}\n",
        );
        assert_eq!(
            targets(&r),
            [
                "ConfigMap/cfg",
                "Secret/pull",
                "PriorityClass/high",
                "ServiceAccount/app",
                "ConfigMap/vol",
                "Secret/sec"
            ]
        );
        assert_eq!(
            r.service_account.as_ref().map(|s| s.0.as_str()),
            Some("app")
        );
        // A real StatefulSet's `spec.serviceName` is not read (nelm reads `serviceName` at the
        // top level).
        let sts = refs("apps", "StatefulSet", "spec:\n  serviceName: db\n");
        assert!(sts.deps.is_empty());
        // Not a Pod template kind in nelm's list: nothing.
        assert!(
            refs(
                "extensions",
                "Deployment",
                "spec:\n  template:\n    spec:\n      serviceAccountName: a\n"
            )
            .deps
            .is_empty()
        );
    }

    #[test]
    fn bindings_and_scaled_objects() {
        let b = refs(
            RBAC,
            "RoleBinding",
            "roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: r}\nsubjects:\n- {kind: ServiceAccount, name: app}\n- {kind: User, name: u}\n",
        );
        assert_eq!(targets(&b), ["Role/r", "ServiceAccount/app"]);
        assert_eq!(b.subjects, ["app"]);
        let k = refs(
            "keda.sh",
            "ScaledObject",
            "spec:\n  scaleTargetRef: {name: web}\n",
        );
        assert_eq!(targets(&k), ["Deployment/web"]);
        assert_eq!(k.deps[0].target.group.as_deref(), Some("apps"));
        assert!(
            refs(
                "autoscaling",
                "HorizontalPodAutoscaler",
                "spec:\n  scaleTargetRef: {name: web, kind: Deployment}\n"
            )
            .deps
            .is_empty()
        );
    }
}
