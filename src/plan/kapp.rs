//! The order kapp deploys a release in on a first install (DIALECTS.md §3.2–3.3), as plan
//! steps.
//!
//! kapp builds a graph of changes (`diffgraph/change_graph.go`): every object is a change, and
//! each rule whose action matches the change's makes it wait for the matching changes of its
//! target group (`after`), or makes those wait for it (`before`). Required rules (annotations
//! and the default rules without `ignoreIfCyclical`) go in first and must not form a cycle;
//! then the optional default rules, heaviest binding first, each edge only where it closes no
//! cycle. kapp applies every change whose prerequisites are applied and done waiting, in
//! parallel: a DAG, not batches.
//!
//! On a first install every change is an upsert, so only `upsert … upserting <group>` rules
//! order anything. Objects with the same groups and the same effective rules wait for and are
//! waited for by the same objects, so each such class is one step and the graph is built
//! between classes. Groups span the whole release, subcharts included, `crds/` too (kapp is
//! handed every document). kapp does not read `helm.sh/hook`: Helm hooks are ordinary changes.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use crate::model::kapp::{Order, Origin, Rule};
use crate::model::{Content, DocId, Model};
use crate::plan::graph::DepGraph;
use crate::plan::{Dialect, Plan, PlanError, PlanIssue, Step, Wait};
use crate::source::Loc;

/// What makes two objects interchangeable in kapp's graph: their groups (the ones some rule
/// targets, and every annotated one) and their effective rules.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct ClassKey {
    groups: Vec<String>,
    /// (weight, order, target, optional)
    rules: Vec<(usize, Order, String, bool)>,
}

struct Class {
    name: String,
    /// Documents in input order; the first one stands for the class in messages.
    members: Vec<DocId>,
}

/// The step name of a class: its groups, or `ungrouped`.
fn base_name(key: &ClassKey) -> String {
    if key.groups.is_empty() {
        "ungrouped".to_owned()
    } else {
        key.groups.join(",")
    }
}

/// Plans the release as kapp deploys it, or every value kapp would refuse and every cycle of
/// rules. A rule that names a group no object has is passed over, as kapp passes over it, and
/// kept in the plan's `issues` for lint (CS603).
pub fn plan(model: &Model) -> Result<Plan, PlanError> {
    let mut plan = Plan {
        dialect: Dialect::Kapp,
        ..Plan::default()
    };
    let mut issues = Vec::new();
    let mut changes: Vec<DocId> = Vec::new();
    let mut not_objects = Vec::new();
    for (doc, d) in model.documents.iter().enumerate() {
        match &d.content {
            Content::Empty => plan.comments.push(doc),
            Content::Resource(r) => {
                for rejected in &r.kapp.rejected {
                    issues.push(PlanIssue::rejected(Dialect::Kapp, rejected));
                }
                if r.kapp.noop || r.kapp.config || r.kapp.duplicate {
                    plan.not_installed.push(doc);
                } else {
                    changes.push(doc);
                }
            }
            Content::Invalid { .. } | Content::NotAnObject { .. } => not_objects.push(doc),
        }
    }
    if !issues.is_empty() {
        return Err(PlanError { issues });
    }
    let references = references(model, &changes, &plan.not_installed);
    plan.steps = order(model, &changes, Rule::applies_on_install)?;
    // Documents that are not objects: kapp would fail on them; listed last, as HIP does.
    if !not_objects.is_empty() {
        let waited: BTreeSet<usize> = plan.steps.iter().flat_map(|s| s.after.clone()).collect();
        let after = (0..plan.steps.len())
            .filter(|s| !waited.contains(s))
            .collect();
        plan.steps.push(Step {
            chart: 0,
            group: None,
            resources: not_objects,
            after,
        });
    }
    plan.issues = references;
    set_waits(model, &mut plan);
    Ok(plan)
}

/// The order kapp deletes the release in (`kapp delete`, `cmd/app/delete.go`): every object
/// it applied and labelled is a delete change (not a `kapp.k14s.io/exists` object, which it
/// never owned, nor a `noop` one), and only `delete (before|after) deleting <group>` rules
/// match a delete (`diffgraph/change.go` `ApplicableRules`, `MatchesRule`): those of
/// annotations, of the chart's kapp configuration, and kapp's default ones (custom resources
/// before their CRDs, every other object after the CRDs, a namespace's service accounts before
/// it, service accounts and RBAC after kapp-controller's `App` and `PackageInstall`), the
/// optional ones only where they close no cycle. A cycle of required rules is refused, as
/// `kapp delete` refuses it. Each class of interchangeable changes is one step, as on
/// install; kapp waits each delete until the object is gone before what waits for it. An
/// object kapp orphans (`kapp.k14s.io/delete-strategy: orphan`, the namespaces `default` and
/// `kube-*`) is in the graph, done at once, and in no step: what waited for it waits for what
/// it waited for.
/// Documents that are not objects come first, as in the exact reverse.
pub fn uninstall(model: &Model, plan: &Plan) -> Result<Vec<Step>, PlanError> {
    let mut changes: Vec<DocId> = plan
        .steps
        .iter()
        .flat_map(|s| s.resources.iter().copied())
        .filter(|&d| model.resource(d).is_some_and(|r| !r.kapp.exists))
        .collect();
    // Input order, as kapp lists the app's objects for its graph.
    changes.sort_unstable();
    let not_objects: Vec<DocId> = plan
        .steps
        .iter()
        .filter(|s| s.group.is_none())
        .flat_map(|s| s.resources.iter().copied())
        .filter(|&d| model.resource(d).is_none())
        .collect();
    let orphaned = |d: DocId| model.resource(d).is_some_and(|r| r.kapp.orphan);
    let mut steps = without(order(model, &changes, Rule::applies_on_delete)?, orphaned);
    if !not_objects.is_empty() {
        for step in &mut steps {
            for after in &mut step.after {
                *after += 1;
            }
        }
        steps.insert(
            0,
            Step {
                chart: 0,
                group: None,
                resources: not_objects,
                after: Vec::new(),
            },
        );
    }
    Ok(steps)
}

/// `steps` without the documents `gone` says, a step left empty dropped and what waited for
/// it waiting for what it waited for instead.
fn without(steps: Vec<Step>, gone: impl Fn(DocId) -> bool) -> Vec<Step> {
    let mut new_index: Vec<Option<usize>> = vec![None; steps.len()];
    let mut through: Vec<Vec<usize>> = vec![Vec::new(); steps.len()];
    let mut out: Vec<Step> = Vec::with_capacity(steps.len());
    for (i, mut step) in steps.into_iter().enumerate() {
        let mut after = Vec::new();
        for &a in step.after.iter().filter(|&&a| a < i) {
            match new_index[a] {
                Some(n) => after.push(n),
                None => after.extend(through[a].iter().copied()),
            }
        }
        after.sort_unstable();
        after.dedup();
        step.resources.retain(|&d| !gone(d));
        if step.resources.is_empty() {
            through[i] = after;
        } else {
            step.after = after;
            new_index[i] = Some(out.len());
            out.push(step);
        }
    }
    out
}

/// How many changes of `changes` are in each group (a `noop` object matches no rule).
fn members<'m>(model: &'m Model, changes: &[DocId]) -> HashMap<&'m str, usize> {
    let mut members: HashMap<&str, usize> = HashMap::new();
    for &doc in changes {
        for group in model.resource(doc).iter().flat_map(|r| &r.kapp.groups) {
            *members.entry(group.name.as_str()).or_default() += 1;
        }
    }
    members
}

/// Every rule of an annotation or of the chart's kapp configuration that orders installs and
/// names a group no change is in: kapp passes over it; lint reports it (CS603).
fn references(model: &Model, changes: &[DocId], not_installed: &[DocId]) -> Vec<PlanIssue> {
    let kapp = |doc: DocId| &model.resource(doc).expect("changes are resources").kapp;
    let members = members(model, changes);
    let noop_groups: BTreeSet<&str> = not_installed
        .iter()
        .filter_map(|&d| model.resource(d))
        .flat_map(|r| r.kapp.groups.iter().map(|g| g.name.as_str()))
        .collect();
    // A rule of an annotation that orders installs and names a group no object is in.
    let mut references = Vec::new();
    let mut seen = BTreeSet::new();
    for &doc in changes {
        for rule in &kapp(doc).rules {
            let (key, loc) = match &rule.origin {
                Origin::Annotation { key, loc } => (key.as_str(), loc),
                Origin::Config { loc, .. } => ("kapp config changeRuleBindings", loc),
                Origin::Default { .. } => continue,
            };
            if !rule.applies_on_install()
                || members.contains_key(rule.target.as_str())
                || !seen.insert(*loc)
            {
                continue;
            }
            let reason = if noop_groups.contains(rule.target.as_str()) {
                "is a change group only `kapp.k14s.io/noop` objects are in"
            } else {
                "is a change group no object of the release is in"
            };
            references.push(PlanIssue::DialectReference {
                dialect: Dialect::Kapp,
                key: key.to_owned(),
                reference: rule.target.clone(),
                reason: reason.to_owned(),
                loc: *loc,
            });
        }
    }

    references
}

/// kapp's graph of `changes` (in input order) under the rules `applies` keeps (by their
/// action and target action), as steps in batch order; or every cycle of required rules.
///
/// Objects with the same groups and the same effective rules wait for and are waited for by
/// the same objects, so each such class is one step and the graph is built between classes.
fn order(
    model: &Model,
    changes: &[DocId],
    applies: fn(&Rule) -> bool,
) -> Result<Vec<Step>, PlanError> {
    let kapp = |doc: DocId| &model.resource(doc).expect("changes are resources").kapp;
    let members = members(model, changes);
    let effective = |rule: &Rule| applies(rule) && members.contains_key(rule.target.as_str());
    let mut issues = Vec::new();
    let mut steps: Vec<Step> = Vec::new();

    // Classes of interchangeable changes, in input order of their first member.
    let targeted: BTreeSet<&str> = changes
        .iter()
        .flat_map(|&d| kapp(d).rules.iter())
        .filter(|r| effective(r))
        .map(|r| r.target.as_str())
        .collect();
    let mut classes: Vec<Class> = Vec::new();
    let mut keys: Vec<ClassKey> = Vec::new();
    let mut class_of_key: HashMap<ClassKey, usize> = HashMap::new();
    for &doc in changes {
        let k = kapp(doc);
        let mut groups: Vec<String> = k
            .groups
            .iter()
            .filter(|g| {
                matches!(g.origin, Origin::Annotation { .. }) || targeted.contains(g.name.as_str())
            })
            .map(|g| g.name.clone())
            .collect();
        groups.sort();
        groups.dedup();
        let mut rules: Vec<(usize, Order, String, bool)> = k
            .rules
            .iter()
            .filter(|r| effective(r))
            .map(|r| (r.weight(), r.order, r.target.clone(), r.optional))
            .collect();
        rules.sort();
        rules.dedup();
        let key = ClassKey { groups, rules };
        let index = *class_of_key.entry(key.clone()).or_insert_with(|| {
            keys.push(key);
            classes.push(Class {
                name: String::new(),
                members: Vec::new(),
            });
            classes.len() - 1
        });
        classes[index].members.push(doc);
    }
    // Names: the groups, numbered from the second class that shares them.
    let mut used: HashMap<String, usize> = HashMap::new();
    for (class, key) in classes.iter_mut().zip(&keys) {
        let base = base_name(key);
        let n = used.entry(base.clone()).or_default();
        *n += 1;
        class.name = if *n == 1 { base } else { format!("{base}#{n}") };
    }
    let mut classes_in: HashMap<&str, Vec<usize>> = HashMap::new();
    for (c, class) in classes.iter().enumerate() {
        let mut groups: Vec<&str> = kapp(class.members[0])
            .groups
            .iter()
            .map(|g| g.name.as_str())
            .collect();
        groups.sort_unstable();
        groups.dedup();
        for group in groups {
            classes_in.entry(group).or_default().push(c);
        }
    }

    // `waits[a]`: the classes `a` waits for, each with where the rule is written.
    let mut waits: Vec<BTreeMap<usize, Loc>> = vec![BTreeMap::new(); classes.len()];
    // Required rules, annotations first so that an edge is labelled by one when it can be.
    for pass_annotations in [true, false] {
        for (a, class) in classes.iter().enumerate() {
            let doc = class.members[0];
            let r = model.resource(doc).expect("changes are resources");
            for rule in &r.kapp.rules {
                let annotation = matches!(rule.origin, Origin::Annotation { .. });
                if rule.optional || annotation != pass_annotations || !effective(rule) {
                    continue;
                }
                let loc = match &rule.origin {
                    Origin::Annotation { loc, .. } | Origin::Config { loc, .. } => *loc,
                    Origin::Default { .. } => r.kind_loc,
                };
                for &t in classes_in.get(rule.target.as_str()).into_iter().flatten() {
                    let (dependent, prerequisite) = match rule.order {
                        Order::After => (a, t),
                        Order::Before => (t, a),
                    };
                    waits[dependent].entry(prerequisite).or_insert(loc);
                }
            }
        }
    }
    let graph = |waits: &[BTreeMap<usize, Loc>]| {
        let mut g = DepGraph::new(classes.iter().map(|c| c.name.clone()));
        for (a, deps) in waits.iter().enumerate() {
            for (&b, &loc) in deps {
                g.depend(&classes[a].name, &classes[b].name, loc);
            }
        }
        g
    };
    if let Err(cycles) = graph(&waits).batches() {
        let by_name: HashMap<&str, DocId> = classes
            .iter()
            .map(|c| (c.name.as_str(), c.members[0]))
            .collect();
        for cycle in cycles {
            let path = cycle
                .path
                .iter()
                .map(|name| {
                    by_name
                        .get(name.as_str())
                        .and_then(|&d| model.resource(d))
                        .map_or_else(|| name.clone(), |r| r.id.to_string())
                })
                .collect();
            issues.push(PlanIssue::DialectCycle {
                dialect: Dialect::Kapp,
                path,
                edges: cycle.edges,
            });
        }
    }
    if !issues.is_empty() {
        return Err(PlanError { issues });
    }

    // Optional rules, heaviest binding first (a stable sort: then input order, rule order),
    // each edge only where the waited class does not already wait, however indirectly, for
    // the waiting one.
    let mut optional: Vec<(usize, usize, &Rule)> = Vec::new();
    for (a, class) in classes.iter().enumerate() {
        let r = model
            .resource(class.members[0])
            .expect("changes are resources");
        for rule in r.kapp.rules.iter().filter(|r| r.optional && effective(r)) {
            optional.push((rule.weight(), a, rule));
        }
    }
    optional.sort_by_key(|x| std::cmp::Reverse(x.0));
    for (_, a, rule) in optional {
        let loc = match &rule.origin {
            Origin::Config { loc, .. } => *loc,
            _ => model
                .resource(classes[a].members[0])
                .map(|r| r.kind_loc)
                .expect("changes are resources"),
        };
        for &t in classes_in.get(rule.target.as_str()).into_iter().flatten() {
            let (dependent, prerequisite) = match rule.order {
                Order::After => (a, t),
                Order::Before => (t, a),
            };
            if dependent != prerequisite
                && !waits[dependent].contains_key(&prerequisite)
                && !reaches(&waits, prerequisite, dependent)
            {
                waits[dependent].insert(prerequisite, loc);
            }
        }
    }

    let batches = graph(&waits)
        .batches()
        .expect("optional edges never close a cycle");
    let index_of: HashMap<&str, usize> = classes
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.as_str(), i))
        .collect();
    let mut step_of = vec![usize::MAX; classes.len()];
    for name in batches.iter().flatten() {
        let c = index_of[name.as_str()];
        let mut after: Vec<usize> = waits[c].keys().map(|&b| step_of[b]).collect();
        after.sort_unstable();
        step_of[c] = steps.len();
        steps.push(Step {
            chart: 0,
            group: Some(classes[c].name.clone()),
            resources: classes[c].members.clone(),
            after,
        });
    }
    Ok(steps)
}

/// Whether class `from` waits, directly or through others, for class `to`.
fn reaches(waits: &[BTreeMap<usize, Loc>], from: usize, to: usize) -> bool {
    // NOTE: most targets of the optional rules (ConfigMaps, Secrets, RBAC) wait for little or
    // nothing; answering those without a search keeps this near linear in practice.
    if waits[from].is_empty() {
        return false;
    }
    let mut seen = vec![false; waits.len()];
    let mut queue = VecDeque::from([from]);
    seen[from] = true;
    while let Some(c) = queue.pop_front() {
        for &next in waits[c].keys() {
            if next == to {
                return true;
            }
            if !seen[next] {
                seen[next] = true;
                queue.push_back(next);
            }
        }
    }
    false
}

/// The kinds kapp's own waiters judge before any wait rule (`clusterapply`
/// `converged_resource_factory.go`: kapp-controller's App, `PackageInstall` and
/// `PackageRepository` come first).
const BEFORE_WAIT_RULES: [(&str, &str); 3] = [
    ("kappctrl.k14s.io", "App"),
    ("packaging.carvel.dev", "PackageInstall"),
    ("packaging.carvel.dev", "PackageRepository"),
];

/// kapp's waits (DIALECTS.md §3.3): every change is waited done before what waits for it
/// (kstatus standing in for kapp's per-kind waiters, a Job once it is Complete), except
/// `kapp.k14s.io/disable-wait`; a `kapp.k14s.io/exists` object is only waited to exist. An
/// object a `waitRules` rule of the chart's kapp configuration matches waits by its
/// condition matchers instead of its kind's waiter; a ytt rule cannot be evaluated, and
/// stops `apply` at that object.
fn set_waits(model: &Model, plan: &mut Plan) {
    for step in &plan.steps {
        for &doc in &step.resources {
            let Some(r) = model.resource(doc) else {
                continue;
            };
            let own_waiter = BEFORE_WAIT_RULES.contains(&(r.id.group.as_str(), r.id.kind.as_str()));
            let wait = if r.kapp.exists {
                Wait::Exists
            } else if r.kapp.disable_wait {
                Wait::None
            } else if let Some(rule) = r.kapp.wait_rule.as_ref().filter(|_| !own_waiter) {
                if rule.ytt {
                    let file = model.sources.get(rule.loc.file);
                    let at = file.line_col(rule.loc.span.start);
                    Wait::Unusable(format!(
                        "the kapp wait rule at {}:{}:{} is a ytt rule (Starlark), which chartseq does not evaluate",
                        file.name, at.line, at.column
                    ))
                } else {
                    Wait::KappConditions(rule.conditions.clone())
                }
            } else {
                Wait::Status
            };
            plan.waits.insert(doc, wait);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{Model, load_stream};
    use crate::plan::{Dialect, PlanIssue, plan_in, with_uninstall};

    fn model(name: &str, text: &str) -> Model {
        load_stream(
            name,
            text.as_bytes().to_vec(),
            crate::parse::Limits::default(),
        )
    }

    /// kapp's delete order as batches of `Kind/name`, each batch sorted: the steps of one
    /// batch of kapp's graph have every `after` in earlier batches.
    fn delete_batches(model: &Model) -> Vec<Vec<String>> {
        let mut plan = plan_in(model, Dialect::Kapp).expect("plans");
        with_uninstall(model, &mut plan).expect("kapp deletes");
        let steps = plan.uninstall_steps();
        let mut batch_of: Vec<usize> = Vec::new();
        let mut batches: Vec<Vec<String>> = Vec::new();
        for step in &steps {
            let batch = step
                .after
                .iter()
                .map(|&a| batch_of[a] + 1)
                .max()
                .unwrap_or(0);
            batch_of.push(batch);
            if batches.len() <= batch {
                batches.resize(batch + 1, Vec::new());
            }
            for &d in &step.resources {
                let r = model.resource(d).expect("a resource");
                batches[batch].push(format!("{}/{}", r.id.kind, r.id.name));
            }
        }
        for b in &mut batches {
            b.sort();
        }
        batches
    }

    fn names(list: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = list.iter().map(|s| (*s).to_owned()).collect();
        v.sort();
        v
    }

    /// `TestChangeGraphWithDeletes` (carvel-dev/kapp @ a89576c
    /// `pkg/kapp/diffgraph/change_graph_test.go`): Job/migrations waits for
    /// Job/app-health-check, and the `apps.big.co/deployment` group waits for Job/migrations.
    #[test]
    fn delete_rules_order_as_kapps_own_test() {
        let m = model(
            "deletes.yaml",
            include_str!("../../fixtures/dialects/kapp/deletes.yaml"),
        );
        assert_eq!(
            delete_batches(&m),
            [
                names(&[
                    "ConfigMap/app-config",
                    "Job/import-etcd-into-db",
                    "Job/app-health-check"
                ]),
                names(&["Job/migrations"]),
                names(&["Service/app", "Ingress/app", "Deployment/app"]),
            ]
        );
    }

    /// `TestChangeGraphWithAppCR_RoleRoleBindingAndSA`, its delete graph: service accounts
    /// and RBAC after kapp-controller's App and `PackageInstall`, the namespace after its
    /// service account; and `TestChangeGraphWithNamespaceAndSA`: a namespace waits for its
    /// own service accounts only.
    #[test]
    fn default_delete_rules_order_as_kapps_own_tests() {
        let m = model(
            "delete-defaults.yaml",
            include_str!("../../fixtures/dialects/kapp/delete-defaults.yaml"),
        );
        assert_eq!(
            delete_batches(&m),
            [
                names(&[
                    "App/simple-app-cr",
                    "PackageInstall/pkg-demo",
                    "Secret/pkg-demo-values"
                ]),
                names(&[
                    "ServiceAccount/default-ns-sa",
                    "Role/default-ns-role",
                    "RoleBinding/default-ns-role-binding"
                ]),
                names(&["Namespace/test"]),
            ]
        );
        let m = model(
            "delete-namespaces.yaml",
            include_str!("../../fixtures/dialects/kapp/delete-namespaces.yaml"),
        );
        assert_eq!(
            delete_batches(&m),
            [
                names(&[
                    "ServiceAccount/default-sa1",
                    "ServiceAccount/default-sa2",
                    "ConfigMap/simple-cm",
                    "ServiceAccount/default-sa3"
                ]),
                names(&["Namespace/test1", "Namespace/test2"]),
            ]
        );
    }

    /// kapp's defaults at delete (`config/default.go`): custom resources before the CRDs
    /// (optional), every other object after them (optional), and an `upsert` rule orders no
    /// delete.
    #[test]
    fn custom_resources_go_before_their_crds_and_the_rest_after() {
        let m = model(
            "crds.yaml",
            "---
# Source: app/templates/crd.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names:
    kind: Widget
  scope: Namespaced
---
# Source: app/templates/widget.yaml
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
---
# Source: app/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  annotations:
    kapp.k14s.io/change-rule: upsert after upserting change-groups.kapp.k14s.io/crds
",
        );
        assert_eq!(
            delete_batches(&m),
            [
                names(&["Widget/w"]),
                names(&["CustomResourceDefinition/widgets.example.com"]),
                names(&["ConfigMap/c"]),
            ]
        );
    }

    /// An optional default rule gives way to a required one that closes a cycle with it
    /// (`ignoreIfCyclical`): the `ConfigMap` asks to be deleted before the CRD, against
    /// kapp's default `delete after deleting crds`.
    #[test]
    fn an_optional_default_rule_gives_way_to_an_annotation() {
        let m = model(
            "optional.yaml",
            "---
# Source: app/templates/crd.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names:
    kind: Widget
  scope: Namespaced
---
# Source: app/templates/cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  annotations:
    kapp.k14s.io/change-rule: delete before deleting change-groups.kapp.k14s.io/crds
",
        );
        assert_eq!(
            delete_batches(&m),
            [
                names(&["ConfigMap/c"]),
                names(&["CustomResourceDefinition/widgets.example.com"]),
            ]
        );
    }

    /// An orphaned object (`clusterapply/delete_change.go`: `kapp.k14s.io/delete-strategy:
    /// orphan`, the `default` namespace) is left in place, and still passes on the order it
    /// is part of: the `ConfigMap` waits for the Job through it.
    #[test]
    fn orphaned_objects_are_not_deleted_but_still_order() {
        let m = model(
            "orphan.yaml",
            "---
# Source: app/templates/a.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: last
  annotations:
    kapp.k14s.io/change-rule: delete after deleting middle
---
# Source: app/templates/b.yaml
apiVersion: v1
kind: Secret
metadata:
  name: middle
  annotations:
    kapp.k14s.io/change-group: middle
    kapp.k14s.io/delete-strategy: orphan
    kapp.k14s.io/change-rule: delete after deleting first
---
# Source: app/templates/c.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: first
  annotations:
    kapp.k14s.io/change-group: first
---
# Source: app/templates/ns.yaml
apiVersion: v1
kind: Namespace
metadata:
  name: default
",
        );
        assert_eq!(
            delete_batches(&m),
            [names(&["Job/first"]), names(&["ConfigMap/last"])]
        );
    }

    /// A cycle of required delete rules: the install plans, and kapp refuses to delete.
    #[test]
    fn a_cycle_of_delete_rules_refuses_the_uninstall_only() {
        let m = model(
            "delete-cycle.yaml",
            include_str!("../../fixtures/dialects/kapp/delete-cycle.yaml"),
        );
        let mut plan = plan_in(&m, Dialect::Kapp).expect("the install plans");
        let err = with_uninstall(&m, &mut plan).expect_err("kapp refuses to delete");
        assert!(
            matches!(
                &err.issues[..],
                [PlanIssue::DialectCycle { dialect: Dialect::Kapp, path, edges }]
                    if path == &["Job/job1", "Job/job2", "Job/job1"] && edges.len() == 2
            ),
            "{err:?}"
        );
    }
}
