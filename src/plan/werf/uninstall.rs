//! werf's uninstall order, as nelm builds it (werf/nelm @ 778b1f0): `BuildResources` takes
//! every object of the release but those applied on uninstall (`werf.io/deploy-on` or
//! `helm.sh/hook` naming `pre-delete`, `delete` or `post-delete`) and those it leaves
//! (`werf.io/resource-policy: keep|skip-delete`, `werf.io/ownership: anyone`);
//! `buildDeletableResourceInfo` puts them all in the one `uninstall` stage, deleted at once and
//! each tracked until it is gone; `connectInternalDeleteDependencies` (`pkg/plan/plan_build.go`)
//! makes an object's deletion wait until every object its delete dependencies match is gone:
//!
//! - automatic (`internalDeleteDependencies`, `pkg/resource/dependency.go`): a
//!   `CustomResourceDefinition` waits for the objects of the kind it defines, a `ClusterRole`
//!   for the bindings whose `roleRef` names it, a `Role` for the `RoleBinding`s whose `roleRef`
//!   names it, and a `ServiceAccount` for the workloads whose Pod template's
//!   `serviceAccountName` is its name and the bindings whose subjects name it (by name only,
//!   as nelm matches them);
//! - manual: `werf.io/delete-dependency-<id>: state=absent,kind=…,name=…` (the properties of a
//!   deploy dependency), matched like one. nelm passes over all of an object's manual delete
//!   dependencies when one of them is invalid, and cannot uninstall when one has no `state`.
//!
//! chartseq deletes step by step: the objects nothing holds back first, then each object once
//! what it waits for is gone (the batches of that graph). A cycle is refused, as nelm's plan
//! graph refuses it.

use std::collections::HashMap;

use crate::model::{Content, DocId, Model, Placement, Resource};
use crate::plan::graph::{Cycle, DepGraph};
use crate::plan::{Dialect, Plan, PlanError, PlanIssue, Step};
use crate::source::Loc;

const RBAC: &str = "rbac.authorization.k8s.io";

/// Why one object's deletion waits for another's absence.
#[derive(Clone, Debug, PartialEq)]
pub enum Because {
    /// A `werf.io/delete-dependency-<id>` (the key).
    Written(String),
    /// One of nelm's automatic delete dependencies, in words.
    Automatic(&'static str),
}

impl std::fmt::Display for Because {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Written(key) => f.write_str(key),
            Self::Automatic(what) => write!(f, "nelm's automatic delete dependency ({what})"),
        }
    }
}

/// One edge of werf's uninstall: `doc` is deleted once `target` is gone.
#[derive(Clone, Debug, PartialEq)]
pub struct DeleteEdge {
    pub doc: DocId,
    pub target: DocId,
    pub because: Because,
    /// The annotation's value, or the target's document for an automatic one.
    pub loc: Loc,
}

/// What werf deletes on uninstall, in document order, and every edge between them; or why
/// werf cannot read the chart's delete dependencies.
pub fn delete_edges(model: &Model) -> Result<(Vec<DocId>, Vec<DeleteEdge>), PlanError> {
    let mut issues = Vec::new();
    let mut deleted: Vec<(DocId, &Resource)> = Vec::new();
    for (doc, d) in model.documents.iter().enumerate() {
        // `crds/` documents are Helm's: never deleted, whatever the dialect.
        if d.placement == Placement::Crd {
            continue;
        }
        let Content::Resource(r) = &d.content else {
            continue;
        };
        if let Some(rejected) = &r.werf.deletion.stateless {
            issues.push(PlanIssue::rejected(Dialect::Werf, rejected));
        }
        if r.werf.deletion.deployed_on_delete || r.werf.deletion.kept_by.is_some() {
            continue;
        }
        deleted.push((doc, r));
    }
    if !issues.is_empty() {
        return Err(PlanError { issues });
    }
    let mut kinds: HashMap<(&str, &str), Vec<DocId>> = HashMap::new();
    let mut role_refs: HashMap<(&str, &str), Vec<(DocId, &Resource)>> = HashMap::new();
    let mut accounts: HashMap<&str, Vec<DocId>> = HashMap::new();
    for &(doc, r) in &deleted {
        kinds
            .entry((group_of(&r.api_version), r.id.kind.as_str()))
            .or_default()
            .push(doc);
        let refs = &r.werf.auto.delete;
        let binding = group_of(&r.api_version) == RBAC
            && matches!(r.id.kind.as_str(), "RoleBinding" | "ClusterRoleBinding");
        if binding {
            if let Some((kind, name)) = refs.role_ref.as_deref() {
                role_refs
                    .entry((kind.as_str(), name.as_str()))
                    .or_default()
                    .push((doc, r));
            }
            for subject in &r.werf.auto.subjects {
                accounts.entry(subject.as_str()).or_default().push(doc);
            }
        }
        if let Some(account) = &refs.runs_as {
            accounts.entry(account.as_str()).or_default().push(doc);
        }
    }
    let at = |doc: DocId| Loc {
        file: model.documents[doc].file,
        span: model.documents[doc].span,
    };
    let mut edges = Vec::new();
    for &(doc, r) in &deleted {
        let group = group_of(&r.api_version);
        let mut automatic = |targets: &[DocId], what: &'static str| {
            for &target in targets {
                edges.push(DeleteEdge {
                    doc,
                    target,
                    because: Because::Automatic(what),
                    loc: at(target),
                });
            }
        };
        if let Some((g, k)) = r.werf.auto.delete.defines.as_deref() {
            automatic(
                kinds
                    .get(&(g.as_str(), k.as_str()))
                    .map_or(&[], Vec::as_slice),
                "a CustomResourceDefinition after the objects of its kind",
            );
        }
        match (group, r.id.kind.as_str()) {
            (RBAC, kind @ ("ClusterRole" | "Role")) => {
                let bindings: Vec<DocId> = role_refs
                    .get(&(kind, r.id.name.as_str()))
                    .into_iter()
                    .flatten()
                    // A Role is referred to by RoleBindings only.
                    .filter(|(_, b)| kind == "ClusterRole" || b.id.kind == "RoleBinding")
                    .map(|&(d, _)| d)
                    .collect();
                automatic(&bindings, "a role after the bindings naming it");
            }
            ("", "ServiceAccount") => automatic(
                accounts.get(r.id.name.as_str()).map_or(&[], Vec::as_slice),
                "a ServiceAccount after what runs as it or binds it",
            ),
            _ => {}
        }
        for dep in &r.werf.deletion.dependencies {
            for &(target, other) in &deleted {
                let (g, v) = group_version(&other.api_version);
                if dep.target.matches(
                    g,
                    v,
                    &other.id.kind,
                    other.id.namespace.as_deref(),
                    &other.id.name,
                ) {
                    edges.push(DeleteEdge {
                        doc,
                        target,
                        because: Because::Written(dep.key.clone()),
                        loc: dep.loc,
                    });
                }
            }
        }
    }
    Ok((deleted.iter().map(|&(d, _)| d).collect(), edges))
}

/// The objects werf deletes on uninstall, in batches, each batch waiting for the one before.
pub fn uninstall(model: &Model, _plan: &Plan) -> Result<Vec<Step>, PlanError> {
    let (deleted, edges) = delete_edges(model)?;
    let node = |doc: DocId| format!("{doc:012}");
    let mut graph: DepGraph<Loc> = DepGraph::new(deleted.iter().map(|&d| node(d)));
    for e in &edges {
        graph.depend(&node(e.doc), &node(e.target), e.loc);
    }
    match graph.batches() {
        Ok(batches) => {
            let n = batches.len();
            Ok(batches
                .into_iter()
                .enumerate()
                .map(|(i, batch)| Step {
                    chart: 0,
                    group: Some(if n == 1 {
                        "uninstall".to_owned()
                    } else {
                        format!("uninstall {}/{n}", i + 1)
                    }),
                    resources: batch
                        .iter()
                        .filter_map(|n| n.parse::<DocId>().ok())
                        .collect(),
                    after: i.checked_sub(1).into_iter().collect(),
                })
                .filter(|s| !s.resources.is_empty())
                .collect())
        }
        Err(cycles) => Err(PlanError {
            issues: cycles
                .into_iter()
                .map(|Cycle { path, edges }| PlanIssue::DialectCycle {
                    dialect: Dialect::Werf,
                    path: path
                        .iter()
                        .filter_map(|n| n.parse::<DocId>().ok())
                        .map(|d| crate::plan::output::label(model, d))
                        .collect(),
                    edges,
                })
                .collect(),
        }),
    }
}

fn group_of(api_version: &str) -> &str {
    group_version(api_version).0
}

/// `group/version`, or the core group's `version`.
fn group_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}
