//! Facts about a resource beyond its annotations, read once while the document tree is alive:
//! what a Pod spec refers to (`ConfigMap`s, `Secret`s, `ServiceAccount`s, PVCs) and what a
//! `CustomResourceDefinition` defines, and every readiness expression parsed by the parser
//! `apply` evaluates with. Lint rules CS302-CS304, CS501 and CS502 (SPEC §4) read these;
//! nothing re-parses the document or the annotations.

use super::annotations::{Sequencing, Spanned};
use crate::parse::{Node, Span};
use crate::readiness::expr::{self, ExprError, Expression};
use crate::source::{FileId, Loc};

/// The kind of object a Pod spec refers to by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RefKind {
    ConfigMap,
    Secret,
    ServiceAccount,
    PersistentVolumeClaim,
}

impl RefKind {
    /// The Kubernetes kind (core group).
    #[must_use]
    pub fn kind(self) -> &'static str {
        match self {
            RefKind::ConfigMap => "ConfigMap",
            RefKind::Secret => "Secret",
            RefKind::ServiceAccount => "ServiceAccount",
            RefKind::PersistentVolumeClaim => "PersistentVolumeClaim",
        }
    }
}

/// One by-name reference from a Pod spec.
#[derive(Clone, Debug, PartialEq)]
pub struct PodRef {
    pub kind: RefKind,
    pub name: String,
    /// Where in the Pod spec: `containers[0].envFrom[0].configMapRef`.
    pub path: String,
    /// The referring node (`configMapRef:` key through its value).
    pub loc: Loc,
}

/// What a `CustomResourceDefinition` defines.
#[derive(Clone, Debug, PartialEq)]
pub struct CrdDef {
    pub group: String,
    pub kind: String,
}

/// One readiness expression of `helm.sh/readiness-success` / `-failure`, parsed by the same
/// parser `apply` evaluates with.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadinessExpr {
    /// From `helm.sh/readiness-failure` (else `-success`).
    pub failure: bool,
    /// Position in the JSON array.
    pub index: usize,
    pub text: String,
    pub parsed: Result<Expression, ExprError>,
    /// The annotation value holding it.
    pub loc: Loc,
}

/// Facts kept for the rules.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Facts {
    pub pod_refs: Vec<PodRef>,
    pub crd: Option<CrdDef>,
    pub readiness: Vec<ReadinessExpr>,
}

/// Parses every readiness expression of well-formed readiness annotations.
#[must_use]
pub fn readiness(seq: &Sequencing) -> Vec<ReadinessExpr> {
    let mut out = Vec::new();
    for (failure, list) in [
        (false, &seq.readiness_success),
        (true, &seq.readiness_failure),
    ] {
        let Some(Spanned {
            value: Ok(texts),
            loc,
        }) = list
        else {
            continue;
        };
        for (index, text) in texts.iter().enumerate() {
            out.push(ReadinessExpr {
                failure,
                index,
                text: text.clone(),
                parsed: expr::parse(text),
                loc: *loc,
            });
        }
    }
    out
}

/// Kinds whose objects carry a Pod template, and the path to its `spec`.
fn pod_spec<'a>(kind: &str, object: &'a Node) -> Option<&'a Node> {
    match kind {
        "Pod" => object.get("spec"),
        "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" | "Job" => {
            object.path(&["spec", "template", "spec"])
        }
        "CronJob" => object.path(&["spec", "jobTemplate", "spec", "template", "spec"]),
        _ => None,
    }
}

/// Reads the facts of one object.
#[must_use]
pub fn read(kind: &str, api_version: &str, object: &Node, file: FileId) -> Facts {
    let mut facts = Facts::default();
    if kind == "CustomResourceDefinition" && api_version.starts_with("apiextensions.k8s.io/") {
        let spec = object.get("spec");
        let group = spec.and_then(|s| s.get("group")).and_then(Node::as_str);
        let crd_kind = spec
            .and_then(|s| s.path(&["names", "kind"]))
            .and_then(Node::as_str);
        if let (Some(group), Some(crd_kind)) = (group, crd_kind) {
            facts.crd = Some(CrdDef {
                group: group.to_owned(),
                kind: crd_kind.to_owned(),
            });
        }
    }
    if let Some(spec) = pod_spec(kind, object) {
        let mut refs = Refs {
            file,
            out: Vec::new(),
        };
        refs.pod_spec(spec);
        facts.pod_refs = refs.out;
    }
    facts
}

struct Refs {
    file: FileId,
    out: Vec<PodRef>,
}

impl Refs {
    fn push(&mut self, kind: RefKind, name: Option<&Node>, path: String, span: Span) {
        // A reference marked `optional: true` does not block the Pod; templated-out names
        // (empty) refer to nothing.
        let Some(name) = name.and_then(Node::as_str).filter(|n| !n.is_empty()) else {
            return;
        };
        self.out.push(PodRef {
            kind,
            name: name.to_owned(),
            path,
            loc: Loc {
                file: self.file,
                span,
            },
        });
    }

    fn pod_spec(&mut self, spec: &Node) {
        if let Some((key, value)) = spec.entry("serviceAccountName") {
            self.push(
                RefKind::ServiceAccount,
                Some(value),
                "serviceAccountName".into(),
                Span {
                    start: key.span.start,
                    end: value.span.end,
                },
            );
        }
        for (i, item) in seq(spec.get("imagePullSecrets")).iter().enumerate() {
            self.push(
                RefKind::Secret,
                item.get("name"),
                format!("imagePullSecrets[{i}]"),
                item.span,
            );
        }
        for (i, volume) in seq(spec.get("volumes")).iter().enumerate() {
            self.volume(volume, &format!("volumes[{i}]"));
        }
        for list in ["initContainers", "containers"] {
            for (i, container) in seq(spec.get(list)).iter().enumerate() {
                self.container(container, &format!("{list}[{i}]"));
            }
        }
    }

    fn volume(&mut self, volume: &Node, at: &str) {
        let entry = |key: &str| volume.entry(key).filter(|(_, v)| !optional(v));
        if let Some((k, v)) = entry("configMap") {
            self.push(
                RefKind::ConfigMap,
                v.get("name"),
                format!("{at}.configMap"),
                join(k, v),
            );
        }
        if let Some((k, v)) = entry("secret") {
            self.push(
                RefKind::Secret,
                v.get("secretName"),
                format!("{at}.secret"),
                join(k, v),
            );
        }
        if let Some((k, v)) = volume.entry("persistentVolumeClaim") {
            self.push(
                RefKind::PersistentVolumeClaim,
                v.get("claimName"),
                format!("{at}.persistentVolumeClaim"),
                join(k, v),
            );
        }
        if let Some(sources) = volume.path(&["projected", "sources"]) {
            for (j, source) in seq(Some(sources)).iter().enumerate() {
                for (key, kind) in [
                    ("configMap", RefKind::ConfigMap),
                    ("secret", RefKind::Secret),
                ] {
                    if let Some((k, v)) = source.entry(key).filter(|(_, v)| !optional(v)) {
                        self.push(
                            kind,
                            v.get("name"),
                            format!("{at}.projected.sources[{j}].{key}"),
                            join(k, v),
                        );
                    }
                }
            }
        }
    }

    fn container(&mut self, container: &Node, at: &str) {
        for (i, item) in seq(container.get("envFrom")).iter().enumerate() {
            for (key, kind) in [
                ("configMapRef", RefKind::ConfigMap),
                ("secretRef", RefKind::Secret),
            ] {
                if let Some((k, v)) = item.entry(key).filter(|(_, v)| !optional(v)) {
                    self.push(
                        kind,
                        v.get("name"),
                        format!("{at}.envFrom[{i}].{key}"),
                        join(k, v),
                    );
                }
            }
        }
        for (i, item) in seq(container.get("env")).iter().enumerate() {
            let Some(from) = item.get("valueFrom") else {
                continue;
            };
            for (key, kind) in [
                ("configMapKeyRef", RefKind::ConfigMap),
                ("secretKeyRef", RefKind::Secret),
            ] {
                if let Some((k, v)) = from.entry(key).filter(|(_, v)| !optional(v)) {
                    self.push(
                        kind,
                        v.get("name"),
                        format!("{at}.env[{i}].valueFrom.{key}"),
                        join(k, v),
                    );
                }
            }
        }
    }
}

fn seq(node: Option<&Node>) -> &[Node] {
    node.and_then(Node::as_seq).unwrap_or_default()
}

fn optional(reference: &Node) -> bool {
    reference.get("optional").and_then(Node::as_scalar) == Some("true")
}

/// The span to show for a reference: the whole entry when it is written on one line
/// (`configMapRef: {name: x}`), else its key line.
fn join(key: &Node, value: &Node) -> Span {
    let one_line = matches!(&value.value, crate::parse::Value::Map(m) if m.len() <= 2)
        && value.span.end.saturating_sub(key.span.start) < 120
        && value.span.start.saturating_sub(key.span.end) < 3;
    Span {
        start: key.span.start,
        end: if one_line {
            value.span.end
        } else {
            key.span.end
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{Limits, parse_document};

    #[test]
    fn pod_refs_are_read_from_every_place() {
        let text = "\
kind: Deployment
spec:
  template:
    spec:
      serviceAccountName: sa
      imagePullSecrets: [{name: pull}]
      volumes:
        - name: a
          configMap: {name: cm-vol}
        - name: b
          secret: {secretName: s-vol, optional: true}
        - name: c
          persistentVolumeClaim: {claimName: data}
        - name: d
          projected: {sources: [{secret: {name: s-proj}}]}
      initContainers:
        - envFrom: [{configMapRef: {name: cm-init}}]
      containers:
        - env: [{name: X, valueFrom: {secretKeyRef: {name: s-env, key: k}}}]
";
        let node = parse_document(text, 0, Limits::default())
            .expect("valid")
            .expect("a node");
        let facts = read("Deployment", "apps/v1", &node, FileId(0));
        let got: Vec<(RefKind, &str, &str)> = facts
            .pod_refs
            .iter()
            .map(|r| (r.kind, r.name.as_str(), r.path.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (RefKind::ServiceAccount, "sa", "serviceAccountName"),
                (RefKind::Secret, "pull", "imagePullSecrets[0]"),
                (RefKind::ConfigMap, "cm-vol", "volumes[0].configMap"),
                (
                    RefKind::PersistentVolumeClaim,
                    "data",
                    "volumes[2].persistentVolumeClaim"
                ),
                (
                    RefKind::Secret,
                    "s-proj",
                    "volumes[3].projected.sources[0].secret"
                ),
                (
                    RefKind::ConfigMap,
                    "cm-init",
                    "initContainers[0].envFrom[0].configMapRef"
                ),
                (
                    RefKind::Secret,
                    "s-env",
                    "containers[0].env[0].valueFrom.secretKeyRef"
                ),
            ]
        );
    }
}
