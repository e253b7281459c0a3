//! kapp's change groups and change rules, read as kapp reads them (DIALECTS.md §3).
//!
//! - `kapp.k14s.io/change-group` and every `kapp.k14s.io/change-group.<suffix>`: one group
//!   each. `kapp.k14s.io/change-rule` and `kapp.k14s.io/change-rule.<suffix>`: one rule each,
//!   `(upsert|delete) (before|after) (upserting|deleting) <group>`, split on single spaces into
//!   exactly four pieces (`diffgraph/change_rule.go`).
//! - Placeholders (`{api-group}`, `{kind}`, `{name}`, `{namespace}`, `{crd-kind}`,
//!   `{crd-group}`) are replaced from the annotated resource before anything is validated, in
//!   groups and rules alike (`change_group_name.go`); an unknown placeholder, or one without a
//!   value for this resource, fails the deploy.
//! - A group name must be a Kubernetes qualified name, without the 63-character limit on its
//!   name part (`change_group.go`).
//! - kapp's default configuration (`config/default.go`) adds groups and rules to every
//!   resource by kind; `kapp.k14s.io/disable-default-change-group-and-rules` turns off the
//!   rules that check for it (not the groups, and not the storage and pod-related rules).
//! - The namespace kapp sees is the written one for a namespaced kind, none for a
//!   cluster-scoped kind (kapp removes it), and its app namespace when a namespaced object has
//!   none (`app/preparation.go`).
//!
//! - kapp configuration the chart carries ([`config`]): the `changeGroupBindings` and
//!   `changeRuleBindings` of `Config` objects and of `ConfigMaps` labelled `kapp.k14s.io/config`
//!   join the default configuration's, after it (`config/default.go`
//!   `NewConfFromResourcesWithDefaults`), and an object's wait is the first `waitRules` rule
//!   that matches it.
//! - Two objects of one identity (written namespace, API group, kind, name) with different
//!   content are refused; the same object twice is applied once (`resources/unique_resources.go`).
//!
//! Everything is read once, after every document is known ([`settle`]): a custom resource's
//! scope comes from its `CustomResourceDefinition` in the same release.

mod carried;
pub mod config;

use std::collections::BTreeMap;

use carried::{apply_configs, read_configs, refuse_duplicates, reparse};

use super::annotations::{Annotation, Rejected};
use super::{Content, DocId, Model, Resource};
use crate::parse::Node;
use crate::source::Loc;

pub const CHANGE_GROUP: &str = "kapp.k14s.io/change-group";
pub const CHANGE_RULE: &str = "kapp.k14s.io/change-rule";
pub const DISABLE_DEFAULTS: &str = "kapp.k14s.io/disable-default-change-group-and-rules";
pub const DISABLE_WAIT: &str = "kapp.k14s.io/disable-wait";
pub const DISABLE_ASSOCIATED_WAIT: &str = "kapp.k14s.io/disable-associated-resources-wait";
pub const EXISTS: &str = "kapp.k14s.io/exists";
pub const NOOP: &str = "kapp.k14s.io/noop";
/// `kapp.k14s.io/delete-strategy: orphan`: `kapp delete` leaves the object in place.
pub const DELETE_STRATEGY: &str = "kapp.k14s.io/delete-strategy";
/// Namespaces kapp never deletes, whatever their annotations (`clusterapply/delete_change.go`
/// `inoperableResourceList`).
const INOPERABLE_NAMESPACES: [&str; 4] =
    ["default", "kube-node-lease", "kube-public", "kube-system"];
/// The `apiVersion` of kapp's own configuration objects, which kapp reads and never applies.
pub const CONFIG_API_VERSION: &str = "kapp.k14s.io/v1alpha1";

/// The namespace kapp gives a namespaced object written without one when no other is known
/// (its app namespace defaults to the kubeconfig's, usually `default`).
pub const DEFAULT_NAMESPACE: &str = "default";

/// The placeholders kapp replaces (`change_group_name.go`).
pub const PLACEHOLDERS: [&str; 6] = [
    "{api-group}",
    "{kind}",
    "{name}",
    "{namespace}",
    "{crd-kind}",
    "{crd-group}",
];

/// What a rule's owner does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    Upsert,
    Delete,
}

/// Whether the owner goes before or after the target group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Order {
    Before,
    After,
}

/// Which changes of the target group the rule matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TargetAction {
    Upserting,
    Deleting,
}

/// Where a group or rule comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Origin {
    /// A `kapp.k14s.io/change-group…` or `…/change-rule…` annotation, at its value.
    Annotation { key: String, loc: Loc },
    /// kapp's default configuration: the index of the rule binding (the group bindings carry
    /// no index that matters).
    Default { binding: usize },
    /// A binding of a kapp configuration in the chart: its index among every configuration's
    /// rule bindings, the default configuration's first (so kapp's weight is 100 + it), and
    /// where the group or rule is written.
    Config { binding: usize, loc: Loc },
}

/// One change rule, placeholders replaced.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    pub action: Action,
    pub order: Order,
    pub target_action: TargetAction,
    pub target: String,
    /// `ignoreIfCyclical`: added only where it makes no cycle (default rules only).
    pub optional: bool,
    pub origin: Origin,
}

impl Rule {
    /// kapp's rule weight: annotation rules 0, the default configuration's binding `i` 100 + i;
    /// optional rules are added heaviest first.
    #[must_use]
    pub fn weight(&self) -> usize {
        match self.origin {
            Origin::Annotation { .. } => 0,
            Origin::Default { binding } | Origin::Config { binding, .. } => 100 + binding,
        }
    }

    /// Whether the rule orders anything on a first install, where every change is an upsert.
    #[must_use]
    pub fn applies_on_install(&self) -> bool {
        self.action == Action::Upsert && self.target_action == TargetAction::Upserting
    }

    /// Whether the rule orders anything when kapp deletes the app, where every change is a
    /// delete (`kapp delete`).
    #[must_use]
    pub fn applies_on_delete(&self) -> bool {
        self.action == Action::Delete && self.target_action == TargetAction::Deleting
    }
}

/// One change group, placeholders replaced.
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub name: String,
    pub origin: Origin,
}

/// What a `CustomResourceDefinition` says about the kind it defines.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CrdSpec {
    /// `spec.group` (empty when missing).
    pub group: String,
    /// `spec.names.kind` (empty when missing).
    pub kind: String,
    /// `spec.scope: Cluster`.
    pub cluster_scoped: bool,
}

/// Everything kapp reads from one object to order a deploy.
#[derive(Clone, Debug, Default, PartialEq)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one flag per kapp annotation, each read on its own as kapp reads it"
)]
pub struct Kapp {
    /// The namespace kapp deploys the object in (none: cluster-scoped).
    pub namespace: Option<String>,
    pub groups: Vec<Group>,
    pub rules: Vec<Rule>,
    /// `kapp.k14s.io/disable-default-change-group-and-rules` is present.
    pub defaults_disabled: bool,
    /// `kapp.k14s.io/exists`: never created; kapp waits for it to exist.
    pub exists: bool,
    /// `kapp.k14s.io/noop`: kapp neither applies nor waits for it.
    pub noop: bool,
    /// `kapp.k14s.io/disable-wait`: applied, never waited for.
    pub disable_wait: bool,
    /// `kapp.k14s.io/disable-associated-resources-wait`.
    pub disable_associated_wait: bool,
    /// A kapp `Config` object: configuration, never applied.
    pub config: bool,
    /// The definition, when the object is a `CustomResourceDefinition`.
    pub crd: Option<CrdSpec>,
    /// The first `waitRules` rule of the chart's kapp configuration that matches the object.
    pub wait_rule: Option<AppliedWaitRule>,
    /// The same object (identity and content) is earlier in the release: kapp applies it once.
    pub duplicate: bool,
    /// `kapp delete` orphans the object instead of deleting it: `kapp.k14s.io/delete-strategy:
    /// orphan`, or one of the namespaces kapp never deletes. Still a change of the delete graph,
    /// done at once.
    pub orphan: bool,
    pub rejected: Vec<Rejected>,
}

/// A kapp wait rule as it applies to one object.
#[derive(Clone, Debug, PartialEq)]
pub struct AppliedWaitRule {
    pub conditions: crate::readiness::KappConditions,
    /// A `ytt` rule: its Starlark is not evaluated.
    pub ytt: bool,
    /// Where the rule is written.
    pub loc: Loc,
}

/// Reads what only the object's own tree holds (the definition of a CRD); the rest waits for
/// [`settle`].
#[must_use]
pub fn read_crd(api_group: &str, kind: &str, object: &Node) -> Option<CrdSpec> {
    if api_group != "apiextensions.k8s.io" || kind != "CustomResourceDefinition" {
        return None;
    }
    let spec = object.get("spec");
    let text = |path: &[&str]| {
        spec.and_then(|s| s.path(path))
            .and_then(Node::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    Some(CrdSpec {
        group: text(&["group"]),
        kind: text(&["names", "kind"]),
        cluster_scoped: text(&["scope"]) == "Cluster",
    })
}

/// Reads every object's groups and rules, once every document is known. `app_namespace`:
/// the namespace kapp gives namespaced objects written without one.
pub fn settle(model: &mut Model, app_namespace: &str) {
    let mut scopes: BTreeMap<(String, String), bool> = BTreeMap::new();
    for doc in &model.documents {
        if let Content::Resource(r) = &doc.content {
            if let Some(crd) = &r.kapp.crd {
                scopes.insert((crd.group.clone(), crd.kind.clone()), crd.cluster_scoped);
            }
        }
    }
    let (carried, mut refused) = read_configs(model);
    let Model {
        sources, documents, ..
    } = model;
    for doc in documents.iter_mut() {
        let (file, span) = (doc.file, doc.span);
        if let Content::Resource(r) = &mut doc.content {
            let crd = r.kapp.crd.take();
            let mut kapp = read(r, crd, &scopes, app_namespace);
            if !kapp.config && !carried.is_empty() {
                let object = || reparse(sources, file, span);
                apply_configs(&mut kapp, r, &carried, &object, &mut refused);
            }
            r.kapp = kapp;
        }
    }
    for (doc, rejected) in refused {
        if let Content::Resource(r) = &mut model.documents[doc].content {
            for x in rejected {
                if !r.kapp.rejected.contains(&x) {
                    r.kapp.rejected.push(x);
                }
            }
        }
    }
    refuse_duplicates(model);
}

/// Built-in kinds that are not namespaced, by API group and kind.
pub(crate) const CLUSTER_SCOPED: &[(&str, &str)] = &[
    ("", "Namespace"),
    ("", "Node"),
    ("", "PersistentVolume"),
    ("", "ComponentStatus"),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
    ),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding",
    ),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    (
        "admissionregistration.k8s.io",
        "MutatingAdmissionPolicyBinding",
    ),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "APIService"),
    ("certificates.k8s.io", "CertificateSigningRequest"),
    ("certificates.k8s.io", "ClusterTrustBundle"),
    ("extensions", "PodSecurityPolicy"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("networking.k8s.io", "IngressClass"),
    ("networking.k8s.io", "IPAddress"),
    ("networking.k8s.io", "ServiceCIDR"),
    ("node.k8s.io", "RuntimeClass"),
    ("policy", "PodSecurityPolicy"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("resource.k8s.io", "DeviceClass"),
    ("resource.k8s.io", "ResourceSlice"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("storage.k8s.io", "CSIDriver"),
    ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "StorageClass"),
    ("storage.k8s.io", "VolumeAttachment"),
    ("storage.k8s.io", "VolumeAttributesClass"),
];

/// API groups kapp counts as built in (`resources/matchers.go` `builtinAPIGroups`): objects
/// of every other group are custom resources.
const BUILTIN_GROUPS: [&str; 24] = [
    "",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "apps",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "extensions",
    "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io",
    "metrics.k8s.io",
    "migration.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
];

const RBAC_VERSIONS: [&str; 3] = [
    "rbac.authorization.k8s.io/v1",
    "rbac.authorization.k8s.io/v1alpha1",
    "rbac.authorization.k8s.io/v1beta1",
];

/// The object as kapp's matchers and placeholders see it.
struct Subject<'a> {
    api_version: &'a str,
    group: &'a str,
    kind: &'a str,
    name: &'a str,
    namespace: Option<&'a str>,
    crd: Option<&'a CrdSpec>,
}

impl Subject<'_> {
    fn is(&self, api_versions: &[&str], kind: &str) -> bool {
        self.kind == kind && api_versions.contains(&self.api_version)
    }

    // NOTE: kapp's default configuration matches StorageClass by `apiVersion: storage/v1`
    // (and `storage/v1beta1`), not `storage.k8s.io/v1`, so a real StorageClass is in none of
    // its groups. Reproduced as written.
    fn storage_class(&self) -> bool {
        self.is(&["storage/v1", "storage/v1beta1"], "StorageClass")
    }

    fn storage(&self) -> bool {
        self.is(&["v1"], "PersistentVolume") || self.is(&["v1"], "PersistentVolumeClaim")
    }

    fn role(&self) -> bool {
        self.is(&RBAC_VERSIONS, "ClusterRole") || self.is(&RBAC_VERSIONS, "Role")
    }

    fn role_binding(&self) -> bool {
        self.is(&RBAC_VERSIONS, "ClusterRoleBinding") || self.is(&RBAC_VERSIONS, "RoleBinding")
    }

    fn service_account(&self) -> bool {
        self.is(&["v1"], "ServiceAccount")
    }

    // NOTE: as kapp lists them: PodDisruptionBudget only as `policy/v1beta1`, RuntimeClass
    // without `node.k8s.io/v1`; Service deliberately not.
    fn pod_related(&self) -> bool {
        self.is(
            &["extensions/v1beta1", "networking.k8s.io/v1"],
            "NetworkPolicy",
        ) || self.is(&["v1"], "ResourceQuota")
            || self.is(&["v1"], "LimitRange")
            || self.is(
                &["extensions/v1beta1", "policy/v1beta1"],
                "PodSecurityPolicy",
            )
            || self.is(&["policy/v1beta1"], "PodDisruptionBudget")
            || self.is(
                &[
                    "scheduling.k8s.io/v1alpha1",
                    "scheduling.k8s.io/v1beta1",
                    "scheduling.k8s.io/v1",
                ],
                "PriorityClass",
            )
            || self.is(
                &["node.k8s.io/v1alpha1", "node.k8s.io/v1beta1"],
                "RuntimeClass",
            )
            || self.service_account()
            || self.is(&["v1"], "Secret")
            || self.is(&["v1"], "ConfigMap")
    }

    fn is_crd(&self) -> bool {
        self.group == "apiextensions.k8s.io" && self.kind == "CustomResourceDefinition"
    }

    fn is_custom_resource(&self) -> bool {
        !BUILTIN_GROUPS.contains(&self.group)
    }

    fn value(&self, placeholder: &str) -> Option<&str> {
        Some(match placeholder {
            "{api-group}" => self.group,
            "{kind}" => self.kind,
            "{name}" => self.name,
            "{namespace}" => self.namespace.unwrap_or_default(),
            "{crd-kind}" => self.crd.map(|c| c.kind.as_str()).unwrap_or_default(),
            "{crd-group}" => self.crd.map(|c| c.group.as_str()).unwrap_or_default(),
            _ => return None,
        })
    }
}

fn read(
    r: &Resource,
    crd: Option<CrdSpec>,
    scopes: &BTreeMap<(String, String), bool>,
    app_namespace: &str,
) -> Kapp {
    let cluster_scoped = CLUSTER_SCOPED.contains(&(r.id.group.as_str(), r.id.kind.as_str()))
        || scopes
            .get(&(r.id.group.clone(), r.id.kind.clone()))
            .copied()
            .unwrap_or(false);
    let namespace = if cluster_scoped {
        None
    } else {
        Some(
            r.id.namespace
                .clone()
                .unwrap_or_else(|| app_namespace.to_owned()),
        )
    };
    let subject = Subject {
        api_version: &r.api_version,
        group: &r.id.group,
        kind: &r.id.kind,
        name: &r.id.name,
        namespace: namespace.as_deref(),
        crd: crd.as_ref(),
    };
    let mut kapp = Kapp {
        defaults_disabled: has(&r.annotations, DISABLE_DEFAULTS),
        exists: has(&r.annotations, EXISTS),
        noop: has(&r.annotations, NOOP),
        disable_wait: has(&r.annotations, DISABLE_WAIT),
        orphan: r
            .annotations
            .iter()
            .rev()
            .find(|a| a.key == DELETE_STRATEGY)
            .and_then(|a| a.value.as_str())
            == Some("orphan")
            || (r.id.group.is_empty()
                && r.id.kind == "Namespace"
                && INOPERABLE_NAMESPACES.contains(&r.id.name.as_str())),
        disable_associated_wait: has(&r.annotations, DISABLE_ASSOCIATED_WAIT),
        config: r.api_version == CONFIG_API_VERSION,
        ..Kapp::default()
    };
    if kapp.config {
        // kapp takes its configuration out of the objects before reading any change.
        kapp.namespace = namespace;
        return kapp;
    }
    // Go's map keeps the last of duplicate keys, as YAML decoding does.
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for a in r.annotations.iter().rev() {
        if !seen.insert(&a.key) {
            continue;
        }
        let Some(raw) = a.value.as_str() else {
            continue;
        };
        let is_group = a.key == CHANGE_GROUP || a.key.starts_with("kapp.k14s.io/change-group.");
        let is_rule = a.key == CHANGE_RULE || a.key.starts_with("kapp.k14s.io/change-rule.");
        if !is_group && !is_rule {
            continue;
        }
        let origin = Origin::Annotation {
            key: a.key.clone(),
            loc: a.value_loc,
        };
        let parsed = substitute(raw, &subject).and_then(|text| {
            if is_group {
                validate_group(&text)?;
                kapp.groups.push(Group { name: text, origin });
            } else {
                kapp.rules.push(parse_rule(&text, false, origin)?);
            }
            Ok(())
        });
        if let Err(reason) = parsed {
            kapp.rejected.push(Rejected {
                key: a.key.clone(),
                value: raw.to_owned(),
                reason,
                loc: a.value_loc,
            });
        }
    }
    // Annotations were read last first; kapp's own order is a Go map's (random).
    kapp.groups.reverse();
    kapp.rules.reverse();
    kapp.rejected.reverse();
    add_defaults(&mut kapp, &subject, r.kind_loc);
    kapp.namespace = namespace;
    kapp.crd = crd;
    kapp
}

/// Whether the object is kapp configuration: a `Config` object, or labelled as one.
#[must_use]
pub fn is_config(r: &Resource) -> bool {
    r.api_version == CONFIG_API_VERSION || r.labels.iter().any(|l| l.key == config::CONFIG_LABEL)
}

fn has(annotations: &[Annotation], key: &str) -> bool {
    annotations.iter().any(|a| a.key == key)
}

const DEFAULT_GROUP_PREFIX: &str = "change-groups.kapp.k14s.io/";

/// kapp's default change groups and rules (`config/default.go`, `changeGroupBindings` and
/// `changeRuleBindings`, in their order).
fn add_defaults(kapp: &mut Kapp, s: &Subject<'_>, at: Loc) {
    let mut groups: Vec<&str> = Vec::new();
    if s.is_crd() {
        groups.extend(["crds", "crds-{crd-group}-{crd-kind}"]);
    }
    if s.group.is_empty() && s.kind == "Namespace" {
        groups.extend(["namespaces", "namespaces-{name}"]);
    }
    if s.storage_class() {
        groups.push("storage-class");
    }
    if s.storage() {
        groups.push("storage");
    }
    if s.role() {
        groups.push("rbac-roles");
    }
    if s.role_binding() {
        groups.push("rbac-role-bindings");
    }
    if s.role() || s.role_binding() {
        groups.push("rbac");
    }
    if s.pod_related() {
        groups.push("pod-related");
    }
    if s.service_account() {
        groups.push("serviceaccount");
    }
    if s.is(&["kappctrl.k14s.io/v1alpha1"], "App") {
        groups.push("kapp-controller-app");
    }
    if s.is(&["packaging.carvel.dev/v1alpha1"], "PackageInstall") {
        groups.push("kapp-controller-packageinstall");
    }
    for group in groups {
        let template = format!("{DEFAULT_GROUP_PREFIX}{group}");
        match substitute(&template, s).and_then(|name| validate_group(&name).map(|()| name)) {
            Ok(name) => kapp.groups.push(Group {
                name,
                origin: Origin::Default { binding: 0 },
            }),
            Err(reason) => kapp.rejected.push(Rejected {
                key: "kapp default change group".to_owned(),
                value: template,
                reason,
                loc: at,
            }),
        }
    }

    let enabled = !kapp.defaults_disabled;
    let custom = s.is_custom_resource();
    let namespaced = s.namespace.is_some();
    let rbac = s.role() || s.role_binding();
    let bindings: [(bool, bool, &[&str]); 9] = [
        (
            enabled && custom,
            false,
            &["upsert after upserting crds-{api-group}-{kind}"],
        ),
        (enabled && custom, true, &["delete before deleting crds"]),
        (
            enabled && !custom && !s.is_crd(),
            true,
            &["delete after deleting crds"],
        ),
        (
            enabled && namespaced,
            false,
            &["upsert after upserting namespaces-{namespace}"],
        ),
        (
            enabled && s.service_account(),
            true,
            &["delete before deleting namespaces-{namespace}"],
        ),
        (
            enabled && s.role_binding(),
            true,
            &["upsert after upserting rbac-roles"],
        ),
        (
            enabled && (s.service_account() || rbac),
            true,
            &[
                "upsert before upserting kapp-controller-packageinstall",
                "upsert before upserting kapp-controller-app",
                "delete after deleting kapp-controller-packageinstall",
                "delete after deleting kapp-controller-app",
            ],
        ),
        // NOTE: these two bindings do not check the disable annotation in kapp's code.
        (s.storage(), true, &["upsert after upserting storage-class"]),
        (
            namespaced && !(s.storage_class() || s.storage() || rbac || s.pod_related()),
            true,
            &[
                "upsert after upserting pod-related",
                "upsert after upserting rbac",
                "upsert after upserting storage-class",
                "upsert after upserting storage",
            ],
        ),
    ];
    for (binding, (applies, optional, rules)) in bindings.into_iter().enumerate() {
        if !applies {
            continue;
        }
        for rule in rules {
            let (head, target) = rule.rsplit_once(' ').unwrap_or_default();
            let template = format!("{head} {DEFAULT_GROUP_PREFIX}{target}");
            let parsed = substitute(&template, s)
                .and_then(|text| parse_rule(&text, optional, Origin::Default { binding }));
            match parsed {
                Ok(rule) => kapp.rules.push(rule),
                Err(reason) => kapp.rejected.push(Rejected {
                    key: "kapp default change rule".to_owned(),
                    value: template,
                    reason,
                    loc: at,
                }),
            }
        }
    }
}

/// Replaces placeholders as kapp does: every match of `{.+?}` (a `{`, at least one character
/// other than a newline, the nearest `}`), each looked up in the object.
fn substitute(template: &str, s: &Subject<'_>) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    let mut error = None;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        // At least one character before the closing brace (which may itself be a `}`).
        let first_len = after.chars().next().map_or(0, char::len_utf8);
        let close = after
            .get(first_len..)
            .and_then(|tail| tail.find('}'))
            .filter(|_| first_len > 0);
        let Some(close) = close.map(|i| i + first_len) else {
            // No closing brace further on: no placeholder in the rest either.
            break;
        };
        if let Some(newline) = after[..close].find('\n') {
            // Every opening brace before the newline would span it: none is a placeholder.
            let end = open + 1 + newline + 1;
            out.push_str(&rest[..end]);
            rest = &rest[end..];
            continue;
        }
        out.push_str(&rest[..open]);
        let placeholder = &rest[open..open + close + 2];
        match s.value(placeholder) {
            None => {
                error = Some(format!(
                    "using an unknown placeholder `{placeholder}` (kapp knows {})",
                    PLACEHOLDERS.join(", ")
                ));
            }
            Some("") => {
                error = Some(format!(
                    "using the placeholder `{placeholder}`, which has no value for this {} (`{{crd-…}}` only for CustomResourceDefinitions, `{{namespace}}` only for namespaced objects)",
                    s.kind
                ));
            }
            Some(value) => out.push_str(value),
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    error.map_or(Ok(out), Err)
}

/// `NewChangeRuleFromAnnString`: four pieces split on single spaces; the group is checked
/// first, then the three words.
fn parse_rule(text: &str, optional: bool, origin: Origin) -> Result<Rule, String> {
    let pieces: Vec<&str> = text.split(' ').collect();
    let [action, order, target_action, target] = pieces[..] else {
        return Err(
            "not a change rule: kapp expects exactly `(upsert|delete) (before|after) (upserting|deleting) <change group>`, separated by single spaces"
                .to_owned(),
        );
    };
    validate_group(target)?;
    let action = match action {
        "upsert" => Action::Upsert,
        "delete" => Action::Delete,
        _ => {
            return Err(format!(
                "not a change rule: unknown action `{action}` (kapp expects `upsert` or `delete`)"
            ));
        }
    };
    let order = match order {
        "before" => Order::Before,
        "after" => Order::After,
        _ => {
            return Err(format!(
                "not a change rule: unknown order `{order}` (kapp expects `before` or `after`)"
            ));
        }
    };
    let target_action = match target_action {
        "upserting" => TargetAction::Upserting,
        "deleting" => TargetAction::Deleting,
        _ => {
            return Err(format!(
                "not a change rule: unknown target action `{target_action}` (kapp expects `upserting` or `deleting`)"
            ));
        }
    };
    Ok(Rule {
        action,
        order,
        target_action,
        target: target.to_owned(),
        optional,
        origin,
    })
}

/// `ChangeGroup.Validate`: non-empty, and a Kubernetes qualified name (`[prefix/]name`, the
/// prefix a DNS subdomain) whose name part may be longer than 63 characters.
fn validate_group(name: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("not a valid change group name `{name}`: {why}"));
    if name.is_empty() {
        return Err("an empty change group name".to_owned());
    }
    let parts: Vec<&str> = name.split('/').collect();
    let local = match parts[..] {
        [local] => local,
        [prefix, local] => {
            if prefix.is_empty() {
                return bad("the prefix before `/` is empty");
            }
            if prefix.len() > 253 || !is_dns_subdomain(prefix) {
                return bad(
                    "the prefix before `/` must be a DNS subdomain (lower-case letters, digits, `-` and `.`)",
                );
            }
            local
        }
        _ => return bad("it holds more than one `/`"),
    };
    if local.is_empty() {
        return bad("the name after the prefix is empty");
    }
    let bytes = local.as_bytes();
    let alnum = |b: u8| b.is_ascii_alphanumeric();
    let inner_ok = bytes
        .iter()
        .all(|&b| alnum(b) || matches!(b, b'-' | b'_' | b'.'));
    if !inner_ok || !alnum(bytes[0]) || !alnum(bytes[bytes.len() - 1]) {
        return bad(
            "a name must be letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit",
        );
    }
    Ok(())
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?` labels separated by `.`.
fn is_dns_subdomain(text: &str) -> bool {
    text.split('.').all(|label| {
        let b = label.as_bytes();
        let ok = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        !b.is_empty() && ok(b[0]) && ok(b[b.len() - 1]) && b.iter().all(|&c| ok(c) || c == b'-')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> Loc {
        Loc {
            file: crate::source::FileId(0),
            span: crate::parse::Span { start: 0, end: 1 },
        }
    }

    fn subject<'a>(kind: &'a str, namespace: Option<&'a str>) -> Subject<'a> {
        Subject {
            api_version: "v1",
            group: "",
            kind,
            name: "app",
            namespace,
            crd: None,
        }
    }

    #[test]
    fn group_names_are_kapps_own_test_cases() {
        // kapp `pkg/kapp/diffgraph/change_group_test.go` @ a89576c.
        let long = format!(
            "valid-name.com/valid-name_CustomResourceDefinition--valid{}",
            "a".repeat(1000)
        );
        for name in [
            "valid",
            "valid-name",
            "valid/valid",
            "valid-name/valid",
            "valid-name.com",
            "valid-name.com/valid",
            "valid-name.com/valid-name_Another_Name--valid",
            "valid-name.com/valid-name_CustomResourceDefinition--valid",
            long.as_str(),
            "change-groups.kapp.k14s.io/crds-authentication.concierge.pinniped.dev-WebhookAuthenticator",
        ] {
            assert_eq!(validate_group(name), Ok(()), "{name}");
        }
        for name in [
            "_",
            "invalid/",
            "invalid/_",
            "/_",
            "",
            "a/b/c",
            "Upper.Case/x",
        ] {
            assert!(validate_group(name).is_err(), "{name}");
        }
    }

    #[test]
    fn rules_split_on_single_spaces_into_four_pieces() {
        let origin = || Origin::Default { binding: 0 };
        let rule = parse_rule("upsert after upserting apps.big.co/db", false, origin());
        assert_eq!(
            rule.map(|r| (r.action, r.order, r.target_action, r.target)),
            Ok((
                Action::Upsert,
                Order::After,
                TargetAction::Upserting,
                "apps.big.co/db".to_owned()
            ))
        );
        let rule = parse_rule("delete before deleting x", false, origin());
        assert!(rule.is_ok_and(|r| !r.applies_on_install()));
        for bad in [
            "upsert  after upserting x",
            " upsert after upserting x",
            "upsert after upserting x ",
            "upsert after upserting",
            "Upsert after upserting x",
            "upsert later upserting x",
            "upsert after creating x",
            "upsert after upserting x/",
        ] {
            assert!(parse_rule(bad, false, origin()).is_err(), "{bad:?}");
        }
        // The group is checked before the words.
        let err = parse_rule("bogus after upserting _", false, origin()).expect_err("refused");
        assert!(err.contains("change group name"), "{err}");
    }

    #[test]
    fn placeholders_are_replaced_from_the_object() {
        let s = subject("ConfigMap", Some("shop"));
        assert_eq!(
            substitute("apps.co/{kind}-{name}-{namespace}", &s),
            Ok("apps.co/ConfigMap-app-shop".to_owned())
        );
        // `{}` is no placeholder (one character at least), nor a brace across a newline.
        assert_eq!(substitute("a{}b", &s), Ok("a{}b".to_owned()));
        assert_eq!(substitute("a{\n}b", &s), Ok("a{\n}b".to_owned()));
        assert_eq!(substitute("{x\n}{name}", &s), Ok("{x\n}app".to_owned()));
        assert_eq!(substitute("{name", &s), Ok("{name".to_owned()));
        // The leftmost brace opens it: `{{name}` is one unknown placeholder.
        assert!(
            substitute("{{name}", &s)
                .expect_err("refused")
                .contains("`{{name}`")
        );
        // The nearest closing brace ends it: `{}}` is a placeholder named `{}}`.
        assert!(
            substitute("{}}", &s)
                .expect_err("refused")
                .contains("unknown")
        );
        assert!(
            substitute("x-{nam}", &s)
                .expect_err("refused")
                .contains("unknown")
        );
        // No value: the core group, a CRD placeholder on a ConfigMap, no namespace.
        assert!(substitute("{api-group}", &s).is_err());
        assert!(substitute("{crd-kind}", &s).is_err());
        assert!(substitute("{namespace}", &subject("Namespace", None)).is_err());
        let crd = CrdSpec {
            group: "example.com".into(),
            kind: "Widget".into(),
            cluster_scoped: false,
        };
        let s = Subject {
            crd: Some(&crd),
            group: "apiextensions.k8s.io",
            ..subject("CustomResourceDefinition", None)
        };
        assert_eq!(
            substitute("crds-{crd-group}-{crd-kind}", &s),
            Ok("crds-example.com-Widget".to_owned())
        );
    }

    #[test]
    fn default_groups_and_rules_follow_kapps_matchers() {
        let rules = |s: &Subject<'_>, disabled: bool| {
            let mut kapp = Kapp {
                defaults_disabled: disabled,
                ..Kapp::default()
            };
            add_defaults(&mut kapp, s, at());
            assert!(kapp.rejected.is_empty(), "{:?}", kapp.rejected);
            let groups: Vec<String> = kapp.groups.into_iter().map(|g| g.name).collect();
            let rules: Vec<(String, bool)> = kapp
                .rules
                .into_iter()
                .filter(Rule::applies_on_install)
                .map(|r| (r.target, r.optional))
                .collect();
            (groups, rules)
        };
        let p = |g: &str| format!("{DEFAULT_GROUP_PREFIX}{g}");
        let (groups, install) = rules(&subject("ConfigMap", Some("shop")), false);
        assert_eq!(groups, [p("pod-related")]);
        assert_eq!(install, [(p("namespaces-shop"), false)]);
        let deployment = Subject {
            api_version: "apps/v1",
            group: "apps",
            ..subject("Deployment", Some("shop"))
        };
        let (groups, install) = rules(&deployment, false);
        assert!(groups.is_empty());
        assert_eq!(
            install,
            [
                (p("namespaces-shop"), false),
                (p("pod-related"), true),
                (p("rbac"), true),
                (p("storage-class"), true),
                (p("storage"), true),
            ]
        );
        // The disable annotation turns off the namespace rule, not the pod-related one.
        let (_, install) = rules(&deployment, true);
        assert_eq!(install.len(), 4);
        assert_eq!(install[0], (p("pod-related"), true));
        // A policy/v1 PodDisruptionBudget is not pod-related for kapp; policy/v1beta1 is.
        let pdb = Subject {
            api_version: "policy/v1",
            group: "policy",
            ..subject("PodDisruptionBudget", Some("shop"))
        };
        assert!(rules(&pdb, false).0.is_empty());
        let pdb = Subject {
            api_version: "policy/v1beta1",
            ..pdb
        };
        assert_eq!(rules(&pdb, false).0, [p("pod-related")]);
        // A custom resource waits for its own CRD's group.
        let widget = Subject {
            api_version: "example.com/v1",
            group: "example.com",
            ..subject("Widget", None)
        };
        assert_eq!(
            rules(&widget, false).1,
            [(p("crds-example.com-Widget"), false)]
        );
        let (groups, install) = rules(&subject("Namespace", None), false);
        assert_eq!(groups, [p("namespaces"), p("namespaces-app")]);
        assert!(install.is_empty());
    }
}
