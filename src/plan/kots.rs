//! The order Replicated KOTS deploys a release's manifests in (DIALECTS.md §4.2), as plan steps.
//!
//! KOTS applies the manifests it deploys itself — standard manifests, and a Helm chart it
//! renders into manifests (a `HelmChart` `kots.io/v1beta1` with `useHelmInstall: false`,
//! hooks and `crds/` included, `pkg/base/helm_v4.go`) — grouped by creation phase, phases
//! ascending; inside a phase by KOTS's kind order (Helm's install order without the webhook
//! configurations), kinds it does not list after all of them, objects of one kind in input
//! order (`groupAndSortResourcesForCreation`). It applies them one at a time and waits only
//! right after an object annotated with `kots.io/wait-for-ready` or
//! `kots.io/wait-for-properties`, before it applies the next (`ensureResourcesPresent`,
//! `pkg/operator/client/deploy.go`): each phase is one step, after the phase before, its
//! objects listed in the order KOTS applies them, split after every waited object — the
//! waited object ends its step (`phase=0`), and the rest of the phase is a step of its own
//! (`phase=0 after StatefulSet/db`) that waits for it. Phases span the whole release. Helm hooks are ordinary manifests to KOTS; `crds/` is
//! part of the order. A chart KOTS hands to Helm (`kots.io/v1beta2`, or `useHelmInstall: true`)
//! is installed in Helm's order instead, where KOTS reads none of these annotations.
//!
//! Waits, for `apply`: only the annotated objects ([`crate::plan::wait`]); every other object
//! is applied and not waited for.

use std::collections::BTreeMap;

use crate::model::{Content, DocId, Model};
use crate::plan::{Dialect, Plan, PlanError, PlanIssue, Step, Wait};
use crate::readiness::PropertyPair;

/// KOTS's `KindCreationOrder` (`pkg/operator/client/resource.go`, "inspired by Helm v3.15.4"):
/// Helm's install order without its last two kinds (the webhook configurations).
const KIND_ORDER: &[&str] = crate::model::kinds::INSTALL_ORDER
    .split_at(crate::model::kinds::INSTALL_ORDER.len() - 2)
    .0;

/// KOTS's `KindDeletionOrder` (`pkg/operator/client/resource.go`): Helm's uninstall order of
/// the same kinds, which is the creation order reversed but for `Service`, deleted right after
/// the ingresses. Kinds it does not list are deleted before all of them.
const DELETION_ORDER: [&str; 36] = [
    "APIService",
    "Ingress",
    "IngressClass",
    "Service",
    "CronJob",
    "Job",
    "StatefulSet",
    "HorizontalPodAutoscaler",
    "Deployment",
    "ReplicaSet",
    "ReplicationController",
    "Pod",
    "DaemonSet",
    "RoleBindingList",
    "RoleBinding",
    "RoleList",
    "Role",
    "ClusterRoleBindingList",
    "ClusterRoleBinding",
    "ClusterRoleList",
    "ClusterRole",
    "CustomResourceDefinition",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "ConfigMap",
    "SecretList",
    "Secret",
    "ServiceAccount",
    "PodDisruptionBudget",
    "PodSecurityPolicy",
    "LimitRange",
    "ResourceQuota",
    "NetworkPolicy",
    "Namespace",
    "PriorityClass",
];

/// The kind whose deletion KOTS does not wait for: "blocking on PVC delete will create a
/// deadlock if it's used by a pod that has not been deleted yet" (`shouldWaitForResourceDeletion`).
const UNWAITED_DELETION: &str = "PersistentVolumeClaim";

/// The step name of a deletion phase: `deletion-phase=1`, and `deletion-phase=0, not waited`
/// for an object whose deletion KOTS does not wait for.
#[must_use]
pub fn deletion_step_name(phase: i64, waited: bool) -> String {
    if waited {
        format!("deletion-phase={phase}")
    } else {
        format!("deletion-phase={phase}, not waited")
    }
}

/// The order KOTS deletes the manifests it deployed in when the app is undeployed
/// (`UndeployApp` → `diffAndDeleteManifests` → `deleteResources`,
/// `pkg/operator/client/delete.go`): grouped by `kots.io/deletion-phase` (missing or not an
/// integer: phase 0), phases ascending; inside a phase by `KindDeletionOrder`, kinds it does not
/// list first (`groupAndSortResourcesForDeletion`). KOTS deletes one object at a time with
/// `kubectl delete --wait=true` (the undeploy sets `Wait: true`), each gone before the next,
/// except a `PersistentVolumeClaim`, deleted with `--wait=false`: one step per object, each
/// after the one before, and the step after a claim names the step before the claim instead
/// (nothing waits for the claim to go).
///
/// KOTS's own order among objects of one kind, and among kinds it does not list, is Go's map
/// order (the manifests are collected from a map keyed by object, and the kinds from a map):
/// random. chartseq uses input order for both: objects of one kind as written, kinds it does
/// not list in the order each first appears. Documents that are not objects are of no kind
/// (`""`) to KOTS, a kind it does not list, in phase 0. An object annotated
/// `kots.io/keep: "true"` KOTS skips: it is in no step, and stays (KOTS's namespace clean-up
/// after the manifests, which deletes it when KOTS annotates objects with the app,
/// `ANNOTATE_SLUG`, is not reproduced).
pub fn uninstall(model: &Model, plan: &Plan) -> Result<Vec<Step>, PlanError> {
    let mut docs: Vec<DocId> = plan
        .steps
        .iter()
        .flat_map(|s| s.resources.iter().copied())
        .filter(|&d| model.resource(d).is_none_or(|r| !r.kots.keep))
        .collect();
    docs.sort_unstable();
    let kind_of = |d: DocId| model.resource(d).map_or("", |r| r.id.kind.as_str());
    // Kinds KOTS does not list, in the order each first appears.
    let mut unknown: Vec<&str> = Vec::new();
    for &d in &docs {
        let kind = kind_of(d);
        if !DELETION_ORDER.contains(&kind) && !unknown.contains(&kind) {
            unknown.push(kind);
        }
    }
    let rank = |kind: &str| match unknown.iter().position(|k| *k == kind) {
        Some(i) => i,
        None => unknown.len() + DELETION_ORDER.iter().position(|k| *k == kind).unwrap_or(0),
    };
    let phase_of = |d: DocId| model.resource(d).map_or(0, |r| r.kots.deletion_phase.value);
    // Stable: one kind keeps input order.
    docs.sort_by_key(|&d| (phase_of(d), rank(kind_of(d))));
    let mut steps: Vec<Step> = Vec::with_capacity(docs.len());
    // The last step KOTS waited gone: what the next one is deleted after.
    let mut last_waited: Option<usize> = None;
    for d in docs {
        let waited = kind_of(d) != UNWAITED_DELETION;
        steps.push(Step {
            chart: 0,
            group: model
                .resource(d)
                .map(|_| deletion_step_name(phase_of(d), waited)),
            resources: vec![d],
            after: last_waited.into_iter().collect(),
        });
        if waited {
            last_waited = Some(steps.len() - 1);
        }
    }
    Ok(steps)
}

/// The step name of a creation phase.
#[must_use]
pub fn step_name(phase: i64) -> String {
    format!("phase={phase}")
}

/// The step name of what KOTS applies in a phase after a waited object: `phase=0 after
/// StatefulSet/db` (`StatefulSet/ns/db` when the object's namespace is written).
#[must_use]
pub fn after_name(phase: i64, waited: &crate::model::Resource) -> String {
    let id = &waited.id;
    match &id.namespace {
        Some(ns) => format!("{} after {}/{ns}/{}", step_name(phase), id.kind, id.name),
        None => format!("{} after {}/{}", step_name(phase), id.kind, id.name),
    }
}

/// KOTS's place for a kind inside a phase. KOTS matches the kind alone (any API group). Kinds
/// it does not list come last in Go's map order, which is random: here, by kind name.
pub(crate) fn kind_key(kind: &str) -> (usize, &str) {
    match KIND_ORDER.iter().position(|k| *k == kind) {
        Some(i) => (i, ""),
        None => (KIND_ORDER.len(), kind),
    }
}

/// KOTS's plan, and every phase that is not an integer (KOTS logs it and uses phase 0).
#[must_use]
pub fn analyze(model: &Model) -> (Plan, Vec<PlanIssue>) {
    let (plan, mut issues) = super::system::from_result(Dialect::Kots, plan(model));
    for d in &model.documents {
        let Content::Resource(r) = &d.content else {
            continue;
        };
        for (key, phase) in [
            (crate::model::kots::CREATION_PHASE, &r.kots.creation_phase),
            (crate::model::kots::DELETION_PHASE, &r.kots.deletion_phase),
        ] {
            if let (Some(crate::model::kots::PhaseProblem::NotAnInteger), Some(written)) =
                (phase.problem, &phase.written)
            {
                issues.push(PlanIssue::ReplacedDialectValue {
                    dialect: Dialect::Kots,
                    key: key.to_owned(),
                    value: written.value.clone(),
                    replacement: "phase 0".to_owned(),
                    loc: written.loc,
                });
            }
        }
    }
    (plan, issues)
}

/// Plans the release as KOTS deploys it, or every value KOTS would refuse.
pub fn plan(model: &Model) -> Result<Plan, PlanError> {
    let mut plan = Plan {
        dialect: Dialect::Kots,
        ..Plan::default()
    };
    let mut issues = Vec::new();
    let mut phases: BTreeMap<i64, Vec<DocId>> = BTreeMap::new();
    let mut not_objects = Vec::new();
    for (doc, d) in model.documents.iter().enumerate() {
        match &d.content {
            Content::Empty => plan.comments.push(doc),
            Content::Resource(r) => {
                for rejected in &r.kots.rejected {
                    issues.push(PlanIssue::rejected(Dialect::Kots, rejected));
                }
                phases
                    .entry(r.kots.creation_phase.value)
                    .or_default()
                    .push(doc);
                plan.waits.insert(doc, wait_of(r));
            }
            Content::Invalid { .. } | Content::NotAnObject { .. } => not_objects.push(doc),
        }
    }
    if !issues.is_empty() {
        return Err(PlanError { issues });
    }
    for (phase, mut docs) in phases {
        // Stable: one kind keeps input order.
        docs.sort_by_key(|&d| model.resource(d).map(|r| kind_key(&r.id.kind)));
        // KOTS waits right after applying a waited object, before the next one: the phase is
        // split after each, and what follows waits for it.
        let mut name = step_name(phase);
        let mut segment = Vec::new();
        for doc in docs {
            segment.push(doc);
            let Some(r) = model.resource(doc).filter(|r| r.kots.waits()) else {
                continue;
            };
            let after = plan.steps.len().checked_sub(1).into_iter().collect();
            plan.steps.push(Step {
                chart: 0,
                group: Some(std::mem::replace(&mut name, after_name(phase, r))),
                resources: std::mem::take(&mut segment),
                after,
            });
        }
        if !segment.is_empty() {
            let after = plan.steps.len().checked_sub(1).into_iter().collect();
            plan.steps.push(Step {
                chart: 0,
                group: Some(name),
                resources: segment,
                after,
            });
        }
    }
    // Documents that are not objects: KOTS's apply would fail on them; listed last, as HIP
    // does.
    if !not_objects.is_empty() {
        let after = plan.steps.len().checked_sub(1).into_iter().collect();
        plan.steps.push(Step {
            chart: 0,
            group: None,
            resources: not_objects,
            after,
        });
    }
    Ok(plan)
}

/// What KOTS waits for after applying an object: its properties when it names any (KOTS
/// waits for readiness first, which for a kind it reads by existence is the same), else its
/// readiness when asked, else nothing.
fn wait_of(r: &crate::model::Resource) -> Wait {
    if !r.kots.wait_for_properties.is_empty() {
        // A pair KOTS refuses (its path does not parse) aborts the deploy at this object.
        let mut pairs = Vec::with_capacity(r.kots.wait_for_properties.len());
        for p in &r.kots.wait_for_properties {
            let Some(path) = &p.jsonpath else {
                return Wait::Unusable(format!(
                    "property {:?} cannot be read: KOTS refuses the pair",
                    p.path.value
                ));
            };
            pairs.push(PropertyPair::parsed(
                p.path.value.clone(),
                path.clone(),
                p.value.value.clone(),
            ));
        }
        Wait::properties(pairs)
    } else if r.kots.wait_for_ready {
        Wait::kots_ready(&r.id.kind)
    } else {
        Wait::None
    }
}

#[cfg(test)]
mod tests {
    use super::{DELETION_ORDER, KIND_ORDER, kind_key};
    use crate::model::{Model, load_stream};
    use crate::plan::{Dialect, plan_in, with_uninstall};

    /// A stream of one object per `(kind, apiVersion, deletion phase)`, named `r0`, `r1`, ….
    fn stream(objects: &[(&str, &str, Option<&str>)]) -> Model {
        use std::fmt::Write;
        let mut text = String::new();
        for (i, (kind, api_version, phase)) in objects.iter().enumerate() {
            let annotations = phase.map_or(String::new(), |p| {
                format!("  annotations:\n    kots.io/deletion-phase: \"{p}\"\n")
            });
            let _ = write!(
                text,
                "---\n# Source: app/templates/r{i}.yaml\napiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: r{i}\n{annotations}"
            );
        }
        load_stream(
            "kots.yaml",
            text.into_bytes(),
            crate::parse::Limits::default(),
        )
    }

    /// Each uninstall step as (its name, the object's name, the steps it is deleted after).
    fn uninstall(model: &Model) -> Vec<(String, String, Vec<usize>)> {
        let mut plan = plan_in(model, Dialect::Kots).expect("plans");
        with_uninstall(model, &mut plan).expect("KOTS uninstalls");
        plan.uninstall_steps()
            .iter()
            .map(|s| {
                let names: Vec<&str> = s
                    .resources
                    .iter()
                    .filter_map(|&d| model.resource(d).map(|r| r.id.name.as_str()))
                    .collect();
                (
                    s.group.clone().unwrap_or_default(),
                    names.concat(),
                    s.after.clone(),
                )
            })
            .collect()
    }

    #[test]
    fn deletion_order_is_kots_own_list() {
        // Helm's order of the same kinds reversed, but for Service, right after the ingresses.
        let mut reversed: Vec<&str> = KIND_ORDER.iter().rev().copied().collect();
        reversed.retain(|k| *k != "Service");
        reversed.insert(3, "Service");
        assert_eq!(DELETION_ORDER.as_slice(), reversed.as_slice());
    }

    /// KOTS's own test of its deletion order: replicatedhq/kots @ 370ae90
    /// `pkg/operator/client/resource_test.go` `Test_groupAndSortResourcesForDeletion` ("sorts
    /// known kinds"), its input in its order and its expected phases and order; KOTS's test has
    /// one unknown kind (`UnknownKind` of three versions: one kind to KOTS), whose objects keep
    /// input order. Each object is one step, deleted after the one before, but for the
    /// `PersistentVolumeClaim`, which nothing waits for (`delete_test.go`
    /// `Test_shouldWaitForResourceDeletion`: "expect false when kind is `PersistentVolumeClaim`").
    #[test]
    fn kots_deletes_as_its_own_test_expects() {
        let u3 = "unknown/v3";
        let input: Vec<(&str, &str, Option<&str>)> = vec![
            ("PodSecurityPolicy", "policy/v1beta1", None),
            ("LimitRange", "v1", None),
            ("ResourceQuota", "v1", None),
            ("Namespace", "v1", None),
            ("PodDisruptionBudget", "policy/v1", None),
            ("Secret", "v1", None),
            ("ServiceAccount", "v1", None),
            ("SecretList", "v1", None),
            ("ConfigMap", "v1", None),
            ("PersistentVolume", "v1", None),
            (
                "ClusterRoleBindingList",
                "rbac.authorization.k8s.io/v1",
                None,
            ),
            ("PersistentVolumeClaim", "v1", None),
            ("NetworkPolicy", "networking.k8s.io/v1", None),
            ("UnknownKind", u3, None),
            ("RoleBinding", "rbac.authorization.k8s.io/v1", None),
            ("CustomResourceDefinition", "apiextensions.k8s.io/v1", None),
            ("ClusterRoleList", "rbac.authorization.k8s.io/v1", None),
            ("StorageClass", "storage.k8s.io/v1", None),
            ("UnknownKind", "unknown/v1", None),
            ("Role", "rbac.authorization.k8s.io/v1", None),
            ("ClusterRole", "rbac.authorization.k8s.io/v1", None),
            ("Job", "batch/v1", Some("1")),
            ("Job", "batch/v1", Some("-1")),
            ("UnknownKind", u3, Some("1")),
            ("UnknownKind", u3, Some("-1")),
            ("Job", "batch/v1", Some("2")),
            ("Job", "batch/v1", Some("-2")),
            ("UnknownKind", u3, Some("2")),
            ("UnknownKind", u3, Some("-2")),
            ("RoleList", "rbac.authorization.k8s.io/v1", None),
            ("DaemonSet", "apps/v1", None),
            ("UnknownKind", "unknown/v2", None),
            ("RoleBindingList", "rbac.authorization.k8s.io/v1", None),
            ("ClusterRoleBinding", "rbac.authorization.k8s.io/v1", None),
            ("ReplicationController", "v1", None),
            ("Pod", "v1", None),
            ("Deployment", "apps/v1", None),
            ("ReplicaSet", "apps/v1", None),
            ("Job", "batch/v1", None),
            ("HorizontalPodAutoscaler", "autoscaling/v2", None),
            ("APIService", "apiregistration.k8s.io/v1", None),
            ("StatefulSet", "apps/v1", None),
            ("Service", "v1", None),
            ("IngressClass", "networking.k8s.io/v1", None),
            ("CronJob", "batch/v1", None),
            ("Ingress", "networking.k8s.io/v1", None),
        ];
        let model = stream(&input);
        let expected: [(i64, &[usize]); 5] = [
            (-2, &[28, 26]),
            (-1, &[24, 22]),
            (
                0,
                &[
                    13, 18, 31, 40, 45, 43, 42, 44, 38, 41, 39, 36, 37, 34, 35, 30, 32, 14, 29, 19,
                    10, 33, 16, 20, 15, 11, 9, 17, 8, 7, 5, 6, 4, 0, 1, 2, 12, 3,
                ],
            ),
            (1, &[23, 21]),
            (2, &[27, 25]),
        ];
        let mut want = Vec::new();
        for (phase, objects) in expected {
            for &i in objects {
                let step = want.len();
                // The step after the claim (r11) is deleted after the step before the claim.
                let after = match (step, i) {
                    (0, _) => vec![],
                    (_, 9) => vec![step - 2],
                    _ => vec![step - 1],
                };
                let waited = i != 11;
                want.push((
                    super::deletion_step_name(phase, waited),
                    format!("r{i}"),
                    after,
                ));
            }
        }
        assert_eq!(uninstall(&model), want);
    }

    /// `kots.io/keep: "true"` objects KOTS never deletes (`diffAndDeleteManifests`: "if this
    /// is a keep resource, don't delete it").
    #[test]
    fn kept_objects_are_not_deleted() {
        let model = load_stream(
            "kots.yaml",
            b"---\n# Source: app/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept\n  annotations:\n    kots.io/keep: \"true\"\n---\n# Source: app/templates/b.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gone\n  annotations:\n    kots.io/keep: \"yes\"\n"
                .to_vec(),
            crate::parse::Limits::default(),
        );
        let order: Vec<String> = uninstall(&model).into_iter().map(|s| s.1).collect();
        assert_eq!(order, ["gone"]);
    }

    /// Kinds KOTS does not list go first in the order each first appears (KOTS: a Go map's
    /// order); a phase that is not an integer is phase 0, as `GroupByPhaseAnnotation` reads
    /// KOTS's own test value `invalid` (`types_test.go`).
    #[test]
    fn unlisted_kinds_go_first_in_input_order() {
        let model = stream(&[
            ("Deployment", "apps/v1", None),
            ("Widget", "example.com/v1", Some("invalid")),
            ("Alpha", "example.com/v1", None),
            ("Widget", "example.com/v1", None),
            (
                "ValidatingWebhookConfiguration",
                "admissionregistration.k8s.io/v1",
                None,
            ),
        ]);
        let order: Vec<String> = uninstall(&model).into_iter().map(|s| s.1).collect();
        assert_eq!(order, ["r1", "r3", "r2", "r4", "r0"]);
    }

    #[test]
    fn kind_order_is_kots_own_list() {
        assert_eq!(KIND_ORDER.len(), 36);
        assert_eq!(KIND_ORDER.first(), Some(&"PriorityClass"));
        assert_eq!(KIND_ORDER.last(), Some(&"APIService"));
        assert!(kind_key("ValidatingWebhookConfiguration") > kind_key("APIService"));
        assert!(kind_key("Alpha") < kind_key("Widget"));
    }
}
