//! werf/nelm's ordering annotations, read as nelm reads them (DIALECTS.md §1).
//!
//! - `werf.io/weight`: Go's `strconv.Atoi` after trimming spaces; default 0. On a hook it wins
//!   over `helm.sh/hook-weight` (read the same way). A value that is not an integer fails the
//!   whole release before anything is applied.
//! - `werf.io/deploy-on`: a comma list of events; it replaces `helm.sh/hook`'s events. An
//!   unknown event fails the release. Without either, the object is in the main (install)
//!   stage.
//! - Every `CustomResourceDefinition` and `Namespace` is applied first, with weight 0, whatever it
//!   carries; a `Namespace` with a manual dependency floats in that first stage instead (nelm's
//!   `weight`), a CRD's manual dependencies are dropped.
//! - An object with a manual dependency (`werf.io/deploy-dependency-<id>` or
//!   `<id>.dependency.werf.io`) has no weight: it floats in its stage, ordered by its edges only.
//!   Every dependency is read (one per `<id>`; the `werf.io/deploy-dependency-<id>` form wins
//!   over `<id>.dependency.werf.io` for the same id, as nelm keeps one per id), typed with its
//!   location. A `CustomResourceDefinition` has none (nelm skips them); a `Namespace` keeps its.
//! - External dependencies (`<id>.external-dependency.werf.io: apiVersion:kind[:namespace]:name`,
//!   or the legacy `<id>.external-dependency.werf.io/resource: type/name` with
//!   `…/namespace`) are objects outside the release that werf waits for to exist before
//!   applying the object.
//!
//! - Tracking (how kubedog, driven by nelm, decides a resource it waits for has failed):
//!   `werf.io/fail-mode` (`FailWholeDeployProcessImmediately`, the default;
//!   `HopeUntilEndOfDeployProcess`; `IgnoreAndContinueDeployProcess`),
//!   `werf.io/failures-allowed-per-replica` (a non-negative integer) and
//!   `werf.io/no-activity-timeout` (a non-negative Go duration), checked as nelm's
//!   `validateTrack` checks them and read as its `failMode`, `failuresAllowed` and
//!   `noActivityTimeout` read them (nelm `pkg/resource/metadata.go`): [`Tracking`].
//!
//! NOTE: nelm matches `<id>.dependency.werf.io` with an unescaped regular expression
//! (`^(.+).dependency.werf.io$`), which also matches `<id>.external-dependency.werf.io`: such an
//! object gets a (present) manual dependency on its external object too, and so loses its
//! weight. chartseq reads it the same way; that dependency never names a release object, so
//! it is never reported as a reference to nothing.

use serde::{Deserialize, Serialize};

use super::annotations::RESOURCE_POLICY as HELM_RESOURCE_POLICY;
use super::annotations::{Annotation, HOOK, HOOK_WEIGHT, Rejected, Spanned};
use crate::parse::Node;
use crate::source::Loc;

mod tracking;

pub use tracking::{DEFAULT_NO_ACTIVITY, FailMode, Tracking};

pub const WEIGHT: &str = "werf.io/weight";
pub const DEPLOY_ON: &str = "werf.io/deploy-on";
pub const DEPLOY_DEPENDENCY_PREFIX: &str = "werf.io/deploy-dependency-";
pub const DEPENDENCY_SUFFIX: &str = ".dependency.werf.io";
/// Delete dependencies (`werf.io/delete-dependency-<id>`): they order uninstall only.
pub const DELETE_DEPENDENCY_PREFIX: &str = "werf.io/delete-dependency-";
pub const EXTERNAL_SUFFIX: &str = ".external-dependency.werf.io";
pub const EXTERNAL_RESOURCE_SUFFIX: &str = ".external-dependency.werf.io/resource";
pub const EXTERNAL_NAMESPACE_SUFFIX: &str = ".external-dependency.werf.io/namespace";
pub const FAIL_MODE: &str = "werf.io/fail-mode";
pub const FAILURES_ALLOWED: &str = "werf.io/failures-allowed-per-replica";
pub const NO_ACTIVITY_TIMEOUT: &str = "werf.io/no-activity-timeout";

/// The events `werf.io/deploy-on` accepts (nelm code; its README says `*-uninstall`).
pub const EVENTS: [&str; 14] = [
    "pre-install",
    "install",
    "post-install",
    "pre-upgrade",
    "upgrade",
    "post-upgrade",
    "pre-rollback",
    "rollback",
    "post-rollback",
    "pre-delete",
    "delete",
    "post-delete",
    "test",
    "test-success",
];

/// A stage of a werf install, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// CRDs and Namespaces.
    PrePreInstall,
    /// `pre-install` hooks.
    PreInstall,
    /// Regular resources.
    Install,
    /// `post-install` hooks.
    PostInstall,
}

impl Stage {
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::PrePreInstall => "pre-pre-install",
            Self::PreInstall => "pre-install",
            Self::Install => "install",
            Self::PostInstall => "post-install",
        }
    }
}

/// Whether werf applies an object in its first stage, before the pre-install hooks, whatever it
/// carries (nelm's `deployConditions`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstStage {
    No,
    /// A `CustomResourceDefinition`: weight 0, no manual dependencies.
    Crd,
    /// A core `Namespace`: weight 0, or floating in the stage with its manual dependencies.
    Namespace,
}

impl From<bool> for FirstStage {
    fn from(crd: bool) -> Self {
        if crd { FirstStage::Crd } else { FirstStage::No }
    }
}

/// Everything werf reads from one object to order an install.
#[derive(Clone, Debug, PartialEq)]
pub struct Werf {
    /// The stages of an install the object is applied in, in order (none: not on install).
    pub stages: Vec<Stage>,
    /// The weight; `None` when a manual dependency makes it float in its stage.
    pub weight: Option<i64>,
    /// Where the weight was written (`werf.io/weight` or `helm.sh/hook-weight`).
    pub weight_loc: Option<Loc>,
    /// The manual dependencies (`werf.io/deploy-dependency-…`, `….dependency.werf.io`), by key.
    /// Any of them, valid or not, makes the object float in its stage.
    pub dependencies: Vec<Dependency>,
    /// Objects outside the release that werf waits for to exist before applying this one.
    pub external: Vec<ExternalDependency>,
    /// Values werf rejects.
    pub rejected: Vec<Rejected>,
    /// nelm's automatic dependencies and what others need to find theirs (read from the
    /// object, not its annotations: [`super::werf_auto`]).
    pub auto: super::werf_auto::AutoRefs,
    /// How kubedog tracks the object ([`Werf::read_tracking`]).
    pub tracking: Tracking,
    /// The tracking annotations written (key, value as read, where the value is), in the
    /// order written; values werf rejects are in `rejected` and not here.
    pub tracking_written: Vec<(String, String, Loc)>,
    /// What orders its deletion when werf uninstalls the release ([`Werf::read_deletion`]).
    pub deletion: Deletion,
}

/// What werf reads from one object to uninstall it (nelm's `NewDeletableResource` and
/// `BuildResources`, `pkg/resource/resource.go`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Deletion {
    /// werf applies it on uninstall (`werf.io/deploy-on`, else `helm.sh/hook`, names
    /// `pre-delete`, `delete` or `post-delete`): it is not deleted then.
    pub deployed_on_delete: bool,
    /// `werf.io/resource-policy` (else `helm.sh/resource-policy`) holds `keep` or
    /// `skip-delete`, or `werf.io/ownership` is `anyone`: werf leaves it when it uninstalls,
    /// with the annotation that says so (nelm's `ResourcePolicies`).
    pub kept_by: Option<&'static str>,
    /// The manual delete dependencies (`werf.io/delete-dependency-<id>`), by key, when every
    /// one of them is valid; nelm drops them all when one is not (`validateDeleteDependencies`
    /// fails), and that one is in `ignored`.
    pub dependencies: Vec<DeleteDependency>,
    /// Why nelm passes over the object's delete dependencies: the first value it refuses.
    pub ignored: Option<Box<Rejected>>,
    /// A delete dependency without `state`: valid to nelm's validator, and its reader then
    /// fails (it reads `state` as a string that is not there), so werf cannot uninstall.
    pub stateless: Option<Box<Rejected>>,
}

/// One manual delete dependency: the object is deleted once every object of the release the
/// target matches is gone.
#[derive(Clone, Debug, PartialEq)]
pub struct DeleteDependency {
    pub key: String,
    /// Where the value is written.
    pub loc: Loc,
    pub target: Target,
}

/// `werf.io/resource-policy` and `werf.io/ownership`.
pub const RESOURCE_POLICY: &str = "werf.io/resource-policy";
pub const OWNERSHIP: &str = "werf.io/ownership";

/// What a manual dependency waits for: the target's apply (`present`) or its readiness
/// (`ready`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DependencyState {
    Present,
    Ready,
}

impl DependencyState {
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Present => "present",
            Self::Ready => "ready",
        }
    }
}

/// Which release objects a dependency names: each given field must be equal (exactly, case
/// included); an omitted field matches anything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Target {
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub group: Option<String>,
    pub version: Option<String>,
    pub kind: Option<String>,
}

impl Target {
    /// Whether an object matches. An object written without a namespace is in the release
    /// namespace, which chartseq does not know: it matches any `namespace`.
    #[must_use]
    pub fn matches(
        &self,
        group: &str,
        version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> bool {
        let eq = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        eq(&self.name, name)
            && eq(&self.group, group)
            && eq(&self.version, version)
            && eq(&self.kind, kind)
            && match (&self.namespace, namespace) {
                (Some(want), Some(have)) => want == have,
                _ => true,
            }
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let fields = [
            ("kind", &self.kind),
            ("name", &self.name),
            ("namespace", &self.namespace),
            ("group", &self.group),
            ("version", &self.version),
        ];
        let parts: Vec<String> = fields
            .iter()
            .filter_map(|(k, v)| v.as_ref().map(|v| format!("{k}={v}")))
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// One manual dependency: this object is applied after the target is present or ready, in
/// the same stage.
#[derive(Clone, Debug, PartialEq)]
pub struct Dependency {
    /// The annotation key, at the key.
    pub key: Spanned<String>,
    /// Where the value is written.
    pub loc: Loc,
    pub state: DependencyState,
    pub target: Target,
    /// Read from an `<id>.external-dependency.werf.io` key (see the module note): it names an
    /// object outside the release, never reported as a reference to nothing.
    pub from_external_key: bool,
}

/// An object outside the release that werf waits for to exist before applying an object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExternalObject {
    /// `apiVersion:kind[:namespace]:name`; no namespace: the release namespace.
    Typed {
        api_version: String,
        kind: String,
        namespace: Option<String>,
        name: String,
    },
    /// The legacy form: a kubectl resource type (`secret`, `deployments.v1.apps`) that the
    /// cluster's discovery resolves, a name and a namespace (none: the release namespace).
    /// werf ignores these when it has no cluster access.
    Resource {
        resource: String,
        namespace: Option<String>,
        name: String,
    },
}

impl std::fmt::Display for ExternalObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (what, namespace, name) = match self {
            ExternalObject::Typed {
                api_version,
                kind,
                namespace,
                name,
            } => (format!("{api_version} {kind}"), namespace, name),
            ExternalObject::Resource {
                resource,
                namespace,
                name,
            } => (resource.clone(), namespace, name),
        };
        write!(f, "{what}/{name}")?;
        if let Some(ns) = namespace {
            write!(f, " (namespace {ns})")?;
        }
        Ok(())
    }
}

/// One external dependency, with the annotation that declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct ExternalDependency {
    pub key: String,
    /// Where the value is written.
    pub loc: Loc,
    pub object: ExternalObject,
}

/// nelm's `ParseProperties`: comma-separated `key=value` entries, read by its state machine.
/// Keys are trimmed and lower-cased; a bare `key` is `true` and a bare `nokey` is `key=false`
/// (`Err` holds the boolean); values are trimmed unless quoted with `'` or `"` (a backslash
/// before the closing quote keeps it open). Later keys replace earlier ones.
#[must_use]
pub fn parse_properties(input: &str) -> Vec<(String, Result<String, bool>)> {
    #[derive(Clone, Copy, PartialEq)]
    enum St {
        Start,
        Key,
        KvSep,
        Value,
        OpenQuote,
        Quoted,
        CloseQuote,
        EntrySep,
    }
    let mut out: Vec<(String, Result<String, bool>)> = Vec::new();
    let mut emit = |key: &str, value: &str, present: bool, quoted: bool| {
        let mut k = key.trim().to_lowercase();
        let v = if !present {
            if k.starts_with("no") {
                k = k.chars().skip(2).collect();
                Err(false)
            } else {
                Err(true)
            }
        } else if quoted {
            Ok(value.to_owned())
        } else {
            Ok(value.trim().to_owned())
        };
        out.retain(|(old, _)| *old != k);
        out.push((k, v));
    };
    let (mut st, mut key, mut value, mut quote, mut present) =
        (St::Start, String::new(), String::new(), '"', false);
    for c in input.chars() {
        match c {
            ',' if matches!(
                st,
                St::Start | St::Key | St::Value | St::KvSep | St::CloseQuote
            ) =>
            {
                if !key.is_empty() {
                    emit(&key, &value, present, st == St::CloseQuote);
                    key.clear();
                    value.clear();
                    present = false;
                }
                st = St::EntrySep;
            }
            '=' if st == St::Key => {
                present = true;
                st = St::KvSep;
            }
            '"' | '\'' if st == St::KvSep => {
                quote = c;
                st = St::OpenQuote;
            }
            '"' | '\'' if st == St::Quoted && c == quote && !value.ends_with('\\') => {
                st = St::CloseQuote;
            }
            ',' | '=' | '"' | '\'' => match st {
                St::Key => key.push(c),
                St::Value | St::Quoted => value.push(c),
                _ => {}
            },
            _ => {
                if c.is_whitespace() && matches!(st, St::KvSep | St::EntrySep) {
                    continue;
                }
                st = match st {
                    St::Start | St::EntrySep => St::Key,
                    St::KvSep => St::Value,
                    St::OpenQuote => St::Quoted,
                    other => other,
                };
                match st {
                    St::Key => key.push(c),
                    St::Value | St::Quoted => value.push(c),
                    _ => {}
                }
            }
        }
    }
    if !key.is_empty() {
        emit(&key, &value, present, st == St::CloseQuote);
    }
    out
}

/// The properties a `werf.io/deploy-dependency-<id>` value may hold.
const TARGET_PROPERTIES: [&str; 5] = ["group", "version", "kind", "name", "namespace"];

/// Reads a `werf.io/deploy-dependency-<id>` value as `validateDeployDependencies` checks it.
fn read_deploy_dependency(value: &str) -> Result<(DependencyState, Target), String> {
    let (state, target) = read_target(value, |text| match text {
        "present" => Ok(DependencyState::Present),
        "ready" => Ok(DependencyState::Ready),
        _ => Err(format!(
            "using the unknown state `{text}` (werf knows `present` and `ready`)"
        )),
    })?;
    let state = state.ok_or("missing the required `state` property")?;
    Ok((state, target))
}

/// Reads a dependency value's properties as nelm's validators check them (its deploy and
/// delete dependencies share the grammar): not empty, naming a target, every property known
/// and holding a value. Returns the `state`, read by `state` when written, and the target.
fn read_target<S>(
    value: &str,
    state: impl Fn(&str) -> Result<S, String>,
) -> Result<(Option<S>, Target), String> {
    if value.is_empty() {
        return Err("empty".into());
    }
    let properties = parse_properties(value);
    if !properties
        .iter()
        .any(|(k, _)| TARGET_PROPERTIES.contains(&k.as_str()))
    {
        return Err(
            "naming no target (none of `kind`, `name`, `namespace`, `group`, `version`)".into(),
        );
    }
    let mut read_state = None;
    let mut target = Target::default();
    for (k, v) in &properties {
        let text = match v {
            Ok(text) if !text.is_empty() => text.clone(),
            _ => return Err(format!("missing a value for `{k}`")),
        };
        match k.as_str() {
            "state" => read_state = Some(state(&text)?),
            "group" => target.group = Some(text),
            "version" => target.version = Some(text),
            "kind" => target.kind = Some(text),
            "name" => target.name = Some(text),
            "namespace" => target.namespace = Some(text),
            _ => return Err(format!("using the unknown property `{k}`")),
        }
    }
    Ok((read_state, target))
}

/// `apiVersion:kind[:namespace]:name`, split as nelm splits it.
fn read_typed(value: &str) -> Option<(String, String, Option<String>, String)> {
    let parts: Vec<&str> = value.split(':').collect();
    if parts.len() != 3 && parts.len() != 4 {
        return None;
    }
    let namespace = (parts.len() == 4).then(|| parts[2].to_owned());
    Some((
        parts[0].to_owned(),
        parts[1].to_owned(),
        namespace,
        parts[parts.len() - 1].to_owned(),
    ))
}

/// Why a legacy `…/resource` value is refused, as `validateExternalDependencies` checks it.
fn legacy_resource_error(value: &str) -> Option<&'static str> {
    let parts: Vec<&str> = value.split('/').collect();
    if parts.len() != 2 {
        return Some("not `type/name`");
    }
    if parts[0].is_empty() {
        Some("missing the resource type")
    } else if parts[0] == "all" {
        Some("using the resource type `all`, which werf does not allow")
    } else if parts[0].split('.').any(str::is_empty) {
        Some("using a resource type with an empty part between dots")
    } else if parts[1].is_empty() {
        Some("missing the name")
    } else {
        None
    }
}

/// Every manual and external dependency of an object, and the values werf refuses.
fn read_dependencies(
    annotations: &[Annotation],
    rejected: &mut Vec<Rejected>,
) -> (Vec<Dependency>, Vec<ExternalDependency>) {
    // Go's map keeps the last duplicate key; one dependency per id, the deploy form last.
    let mut by_id: std::collections::BTreeMap<String, Dependency> =
        std::collections::BTreeMap::new();
    let mut external = Vec::new();
    let mut legacy: std::collections::BTreeMap<&str, (&Annotation, Option<String>)> =
        std::collections::BTreeMap::new();
    let mut reject = |a: &Annotation, value: &str, reason: String| {
        rejected.push(Rejected {
            key: a.key.clone(),
            value: value.to_owned(),
            reason,
            loc: a.value_loc,
        });
    };
    let value_of = |a: &Annotation| a.value.as_str().unwrap_or_default().trim().to_owned();
    let mut internal: Vec<(&Annotation, String)> = Vec::new();
    let mut deploy: Vec<(&Annotation, String)> = Vec::new();
    for a in annotations {
        let key = a.key.as_str();
        if let Some(id) = key.strip_prefix(DEPLOY_DEPENDENCY_PREFIX) {
            if !id.is_empty() {
                deploy.push((a, id.to_owned()));
            }
        }
        // `(.+).dependency.werf.io`: at least one character, then any one, then the suffix.
        if key.len() > DEPENDENCY_SUFFIX.len() && key.ends_with(&DEPENDENCY_SUFFIX[1..]) {
            let id = &key[..key.len() - DEPENDENCY_SUFFIX.len()];
            internal.push((a, id.to_owned()));
        }
        if key
            .strip_suffix(EXTERNAL_SUFFIX)
            .is_some_and(|id| !id.is_empty())
        {
            let value = value_of(a);
            match read_typed(&value) {
                Some((api_version, kind, namespace, name)) => external.push(ExternalDependency {
                    key: key.to_owned(),
                    loc: a.value_loc,
                    object: ExternalObject::Typed {
                        api_version,
                        kind,
                        namespace,
                        name,
                    },
                }),
                None => reject(
                    a,
                    &value,
                    "not `apiVersion:kind[:namespace]:name`".to_owned(),
                ),
            }
        }
        if let Some(id) = key
            .strip_suffix(EXTERNAL_RESOURCE_SUFFIX)
            .filter(|id| !id.is_empty())
        {
            let value = value_of(a);
            if let Some(why) = legacy_resource_error(&value) {
                reject(a, &value, why.to_owned());
            } else {
                legacy.insert(id, (a, None));
            }
        }
    }
    for a in annotations {
        if let Some(id) = a
            .key
            .strip_suffix(EXTERNAL_NAMESPACE_SUFFIX)
            .filter(|id| !id.is_empty())
        {
            let value = value_of(a);
            if value.is_empty() {
                reject(a, &value, "empty".to_owned());
            } else if let Some(entry) = legacy.get_mut(id) {
                entry.1 = Some(value);
            }
        }
    }
    for (a, namespace) in legacy.into_values() {
        let value = value_of(a);
        if let Some((resource, name)) = value.split_once('/') {
            external.push(ExternalDependency {
                key: a.key.clone(),
                loc: a.value_loc,
                object: ExternalObject::Resource {
                    resource: resource.to_owned(),
                    namespace,
                    name: name.to_owned(),
                },
            });
        }
    }
    for (a, id) in internal {
        let value = value_of(a);
        // An empty value passes nelm's validator but crashes its parser: refused here.
        let Some((api_version, kind, namespace, name)) = read_typed(&value) else {
            reject(
                a,
                &value,
                "not `apiVersion:kind[:namespace]:name`".to_owned(),
            );
            continue;
        };
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g.to_owned(), v.to_owned()),
            None => (String::new(), api_version),
        };
        by_id.insert(
            id,
            Dependency {
                key: Spanned {
                    value: a.key.clone(),
                    loc: a.key_loc,
                },
                loc: a.value_loc,
                state: DependencyState::Present,
                target: Target {
                    name: Some(name),
                    namespace,
                    group: Some(group),
                    version: Some(version),
                    kind: Some(kind),
                },
                from_external_key: a.key.ends_with(EXTERNAL_SUFFIX),
            },
        );
    }
    for (a, id) in deploy {
        let value = value_of(a);
        match read_deploy_dependency(&value) {
            Ok((state, target)) => {
                by_id.insert(
                    id,
                    Dependency {
                        key: Spanned {
                            value: a.key.clone(),
                            loc: a.key_loc,
                        },
                        loc: a.value_loc,
                        state,
                        target,
                        from_external_key: false,
                    },
                );
            }
            Err(why) => reject(a, &value, why),
        }
    }
    let mut dependencies: Vec<Dependency> = by_id.into_values().collect();
    dependencies.sort_by_key(|d| d.key.loc.span.start);
    external.sort_by_key(|e| e.loc.span.start);
    (dependencies, external)
}

/// Go's `strconv.Atoi` after `strings.TrimSpace`.
fn weight_of(raw: &str) -> Option<i64> {
    super::argo::atoi(raw.trim())
}

impl Werf {
    /// Reads one object. `first`: whether it is a `CustomResourceDefinition` or a core
    /// `Namespace` (`true` reads as a CRD).
    #[must_use]
    pub fn read(annotations: &[Annotation], first: impl Into<FirstStage>) -> Self {
        let first = first.into();
        let crd_or_namespace = first != FirstStage::No;
        let find = |key: &str| {
            annotations
                .iter()
                .rev()
                .find(|a| a.key == key)
                .map(|a| (a.value.as_str().unwrap_or_default().trim(), a.value_loc))
        };
        let mut rejected = Vec::new();
        let mut reject = |key: &str, value: &str, reason: &str, loc| {
            rejected.push(Rejected {
                key: key.to_owned(),
                value: value.to_owned(),
                reason: reason.to_owned(),
                loc,
            });
        };
        let helm_hook = find(HOOK);
        let mut weight = None;
        let mut weight_loc = None;
        if helm_hook.is_some() {
            if let Some((raw, loc)) = find(HOOK_WEIGHT) {
                match weight_of(raw) {
                    Some(w) => (weight, weight_loc) = (Some(w), Some(loc)),
                    None => reject(HOOK_WEIGHT, raw, "not an integer", loc),
                }
            }
        }
        if let Some((raw, loc)) = find(WEIGHT) {
            match weight_of(raw) {
                Some(w) => (weight, weight_loc) = (Some(w), Some(loc)),
                None => reject(WEIGHT, raw, "not an integer", loc),
            }
        }
        let events: Option<Vec<&str>> = match (find(DEPLOY_ON), helm_hook) {
            (Some((raw, loc)), _) => {
                let items: Vec<&str> = raw.split(',').map(str::trim).collect();
                if let Some(bad) = items.iter().find(|e| !EVENTS.contains(e)) {
                    reject(DEPLOY_ON, bad, "not a werf event", loc);
                }
                Some(items)
            }
            (None, Some((raw, _))) => Some(raw.split(',').map(str::trim).collect()),
            (None, None) => None,
        };
        let (dependencies, external) = read_dependencies(annotations, &mut rejected);
        rejected.sort_by_key(|r| r.loc.span.start);
        // nelm drops the manual dependencies of a CRD (`manualInternalDeployDependencies`), and
        // keeps a Namespace's: it then has no weight and floats in the first stage (`weight`).
        let dependencies = if first == FirstStage::Crd {
            Vec::new()
        } else {
            dependencies
        };
        let floating = !dependencies.is_empty();
        let stages = if crd_or_namespace {
            (weight, weight_loc) = (Some(0), None);
            vec![Stage::PrePreInstall]
        } else {
            match events {
                None => vec![Stage::Install],
                Some(events) => {
                    let mut stages: Vec<Stage> = events
                        .iter()
                        .filter_map(|e| match *e {
                            "pre-install" => Some(Stage::PreInstall),
                            "install" => Some(Stage::Install),
                            "post-install" => Some(Stage::PostInstall),
                            _ => None,
                        })
                        .collect();
                    stages.sort_unstable();
                    stages.dedup();
                    stages
                }
            }
        };
        if floating && first != FirstStage::Crd {
            (weight, weight_loc) = (None, None);
        } else if weight.is_none() {
            weight = Some(0);
        }
        // nelm's unescaped `(.+).dependency.werf.io` also reads an external dependency as a
        // manual one, so one bad value can be refused twice for the same reason: once is enough.
        let mut seen = std::collections::HashSet::new();
        rejected.retain(|r| seen.insert((r.key.clone(), r.loc.span.start, r.reason.clone())));
        Werf {
            stages,
            weight,
            weight_loc,
            dependencies,
            external,
            rejected,
            auto: super::werf_auto::AutoRefs::default(),
            tracking: Tracking::default(),
            tracking_written: Vec::new(),
            deletion: Deletion::default(),
        }
    }

    /// Reads what orders the object's deletion ([`Deletion`]) as nelm reads it when it
    /// uninstalls: the events it is applied on, the policies that keep it, and its delete
    /// dependencies, checked as `validateDeleteDependencies` checks them.
    pub fn read_deletion(&mut self, annotations: &[Annotation]) {
        let find = |key: &str| {
            annotations
                .iter()
                .rev()
                .find(|a| a.key == key)
                .map(|a| a.value.as_str().unwrap_or_default().trim())
        };
        let events = find(DEPLOY_ON).or_else(|| find(HOOK));
        let deletion = &mut self.deletion;
        deletion.deployed_on_delete = events.is_some_and(|e| {
            e.split(',')
                .map(str::trim)
                .any(|e| matches!(e, "pre-delete" | "delete" | "post-delete"))
        });
        // `werf.io/resource-policy` wins over Helm's key when both are written.
        let policy = find(RESOURCE_POLICY)
            .map(|p| (RESOURCE_POLICY, p))
            .or_else(|| find(HELM_RESOURCE_POLICY).map(|p| (HELM_RESOURCE_POLICY, p)));
        deletion.kept_by = if let Some((key, _)) = policy.filter(|(_, p)| {
            p.split(',')
                .map(str::trim)
                .any(|p| matches!(p, "keep" | "skip-delete"))
        }) {
            Some(key)
        } else if find(OWNERSHIP) == Some("anyone") {
            Some(OWNERSHIP)
        } else {
            None
        };
        // Go's map: the last value of a key counts.
        let mut by_key: std::collections::BTreeMap<&str, &Annotation> =
            std::collections::BTreeMap::new();
        for a in annotations {
            if a.key
                .strip_prefix(DELETE_DEPENDENCY_PREFIX)
                .is_some_and(|id| !id.is_empty())
            {
                by_key.insert(a.key.as_str(), a);
            }
        }
        let mut dependencies = Vec::new();
        for (key, a) in by_key {
            let value = a.value.as_str().unwrap_or_default().trim();
            let refuse = |reason: String| Rejected {
                key: key.to_owned(),
                value: value.to_owned(),
                reason,
                loc: a.value_loc,
            };
            match read_delete_dependency(value) {
                Ok((target, has_state)) => {
                    if !has_state && deletion.stateless.is_none() {
                        deletion.stateless = Some(Box::new(refuse(
                            "missing the `state` property, which werf's uninstall reads (write `state=absent`)"
                                .to_owned(),
                        )));
                    }
                    dependencies.push(DeleteDependency {
                        key: key.to_owned(),
                        loc: a.value_loc,
                        target,
                    });
                }
                Err(reason) => {
                    if deletion.ignored.is_none() {
                        deletion.ignored = Some(Box::new(refuse(reason)));
                    }
                }
            }
        }
        if deletion.ignored.is_none() {
            deletion.dependencies = dependencies;
        }
    }
}

/// Reads a `werf.io/delete-dependency-<id>` value as `validateDeleteDependencies` checks it:
/// the target, and whether `state` (which must be `absent`) is written.
fn read_delete_dependency(value: &str) -> Result<(Target, bool), String> {
    let (state, target) = read_target(value, |text| {
        if text == "absent" {
            Ok(())
        } else {
            Err(format!(
                "using the unknown state `{text}` (a delete dependency knows only `absent`)"
            ))
        }
    })?;
    Ok((target, state.is_some()))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::model::annotations::test_annotation as ann;

    #[test]
    fn weights_are_trimmed_integers_and_win_over_hook_weight() {
        let w = Werf::read(&[ann(WEIGHT, " -10 ", 1)], false);
        assert_eq!(
            (w.weight, w.stages.clone()),
            (Some(-10), vec![Stage::Install])
        );
        assert!(w.rejected.is_empty());
        let w = Werf::read(&[ann(WEIGHT, "+3", 1)], false);
        assert_eq!(w.weight, Some(3));
        let w = Werf::read(&[], false);
        assert_eq!(w.weight, Some(0));
        // On a hook werf.io/weight wins; helm.sh/hook-weight counts only on hooks.
        let w = Werf::read(
            &[
                ann(HOOK, "pre-install", 1),
                ann(HOOK_WEIGHT, "5", 2),
                ann(WEIGHT, "7", 3),
            ],
            false,
        );
        assert_eq!(
            (w.weight, w.stages.clone()),
            (Some(7), vec![Stage::PreInstall])
        );
        let w = Werf::read(
            &[ann(HOOK, "post-install", 1), ann(HOOK_WEIGHT, "5", 2)],
            false,
        );
        assert_eq!(
            (w.weight, w.stages.clone()),
            (Some(5), vec![Stage::PostInstall])
        );
        let w = Werf::read(&[ann(HOOK_WEIGHT, "5", 2)], false);
        assert_eq!(
            (w.weight, w.stages.clone()),
            (Some(0), vec![Stage::Install])
        );
    }

    #[test]
    fn rejected_values_are_recorded_where_written() {
        for (key, value) in [
            (WEIGHT, "1.5"),
            (WEIGHT, "ten"),
            (WEIGHT, ""),
            (WEIGHT, "1 0"),
        ] {
            let w = Werf::read(&[ann(key, value, 4)], false);
            assert_eq!(w.rejected.len(), 1, "{value:?}");
            assert_eq!(w.rejected[0].key, key);
            assert_eq!(w.rejected[0].loc.span.start, 4);
        }
        let w = Werf::read(
            &[ann(HOOK, "pre-install", 1), ann(HOOK_WEIGHT, "x", 2)],
            false,
        );
        assert_eq!(w.rejected[0].key, HOOK_WEIGHT);
        let w = Werf::read(&[ann(DEPLOY_ON, "install,pre-uninstall", 3)], false);
        assert_eq!(w.rejected[0].value, "pre-uninstall");
    }

    #[test]
    fn stages_from_deploy_on_hooks_and_kind() {
        let w = Werf::read(&[ann(DEPLOY_ON, "post-install, pre-install", 1)], false);
        assert_eq!(w.stages, vec![Stage::PreInstall, Stage::PostInstall]);
        // deploy-on replaces the Helm hook's events.
        let w = Werf::read(
            &[ann(HOOK, "pre-install", 1), ann(DEPLOY_ON, "install", 2)],
            false,
        );
        assert_eq!(w.stages, vec![Stage::Install]);
        // Events that never run on install.
        for hook in ["test", "pre-upgrade", "pre-delete,post-delete"] {
            let w = Werf::read(&[ann(HOOK, hook, 1)], false);
            assert!(w.stages.is_empty(), "{hook}");
        }
        // CRDs and Namespaces first, weight 0, whatever they carry.
        let w = Werf::read(&[ann(WEIGHT, "9", 1), ann(HOOK, "post-install", 2)], true);
        assert_eq!((w.weight, w.stages), (Some(0), vec![Stage::PrePreInstall]));
    }

    #[test]
    fn a_manual_dependency_removes_the_weight() {
        for (key, value, state) in [
            (
                "werf.io/deploy-dependency-db",
                "state=ready,kind=Deployment",
                DependencyState::Ready,
            ),
            (
                "db.dependency.werf.io",
                "apps/v1:Deployment:db",
                DependencyState::Present,
            ),
        ] {
            let w = Werf::read(&[ann(WEIGHT, "5", 1), ann(key, value, 2)], false);
            assert_eq!(w.weight, None, "{key}");
            assert_eq!(w.dependencies.len(), 1, "{key}");
            assert_eq!(w.dependencies[0].key.value, key);
            assert_eq!(w.dependencies[0].state, state);
            assert_eq!(w.dependencies[0].target.kind.as_deref(), Some("Deployment"));
        }
        let w = Werf::read(&[ann(".dependency.werf.io", "x", 2)], false);
        assert_eq!(w.weight, Some(0));
    }

    #[test]
    fn external_dependencies_in_both_forms() {
        use crate::plan::ExternalType;
        let w = Werf::read(
            &[
                ann(
                    "sa.external-dependency.werf.io/resource",
                    "serviceaccount/default",
                    1,
                ),
                ann(
                    "cert.external-dependency.werf.io",
                    "cert-manager.io/v1:Certificate:tls",
                    2,
                ),
                ann(
                    "db.external-dependency.werf.io/resource",
                    " deployments.v1.apps/db ",
                    3,
                ),
                ann("db.external-dependency.werf.io/namespace", "data", 4),
                ann("x.external-dependency.werf.io", "v1:Secret:other:creds", 5),
                // Rejected by werf: not waited for, refused by the plan.
                ann("bad.external-dependency.werf.io", "v1:Secret", 6),
                ann("all.external-dependency.werf.io/resource", "all/x", 7),
            ],
            false,
        );
        assert_eq!(w.rejected.len(), 2, "{:?}", w.rejected);
        let deps: Vec<crate::plan::External> =
            w.external.iter().map(crate::plan::External::of).collect();
        let labels: Vec<String> = deps.iter().map(crate::plan::External::label).collect();
        assert_eq!(
            labels,
            [
                "serviceaccount/default",
                "Certificate/tls",
                "deployments/db (namespace data)",
                "Secret/creds (namespace other)",
            ]
        );
        assert_eq!(
            deps[2].target,
            ExternalType::Resource {
                resource: "deployments".into(),
                version: Some("v1".into()),
                group: Some("apps".into())
            }
        );
        assert_eq!(
            deps[1].target,
            ExternalType::Kind {
                api_version: "cert-manager.io/v1".into(),
                kind: "Certificate".into()
            }
        );
    }

    #[test]
    fn every_dependency_is_read_typed() {
        let w = Werf::read(
            &[
                ann(
                    "werf.io/deploy-dependency-a",
                    "state=present, Kind=Secret, name='db creds'",
                    1,
                ),
                ann(
                    "werf.io/deploy-dependency-b",
                    "state=ready,kind=StatefulSet,namespace=data",
                    5,
                ),
                ann("c.dependency.werf.io", "v1:ConfigMap:other:settings", 9),
            ],
            false,
        );
        assert!(w.rejected.is_empty(), "{:?}", w.rejected);
        let targets: Vec<String> = w
            .dependencies
            .iter()
            .map(|d| d.target.to_string())
            .collect();
        assert_eq!(
            targets,
            [
                "kind=Secret,name=db creds",
                "kind=StatefulSet,namespace=data",
                "kind=ConfigMap,name=settings,namespace=other,group=,version=v1",
            ]
        );
        assert!(
            w.dependencies[1]
                .target
                .matches("apps", "v1", "StatefulSet", None, "x")
        );
        assert!(
            !w.dependencies[1]
                .target
                .matches("apps", "v1", "StatefulSet", Some("web"), "x")
        );
    }

    #[test]
    fn properties_follow_nelms_state_machine() {
        let p = parse_properties(" State = ready ,kind=Deployment,name=\"a,b\",noflag,on");
        assert_eq!(
            p,
            vec![
                ("state".to_owned(), Ok("ready".to_owned())),
                ("kind".to_owned(), Ok("Deployment".to_owned())),
                ("name".to_owned(), Ok("a,b".to_owned())),
                ("flag".to_owned(), Err(false)),
                ("on".to_owned(), Err(true)),
            ]
        );
        assert_eq!(
            parse_properties("name=' x '"),
            vec![("name".to_owned(), Ok(" x ".to_owned()))]
        );
        assert_eq!(
            parse_properties("kind=a,kind=b"),
            vec![("kind".to_owned(), Ok("b".to_owned()))]
        );
    }

    #[test]
    fn dependency_values_werf_refuses() {
        for value in [
            "",
            "kind=Deployment",
            "state=ready",
            "state=done,kind=Deployment",
            "state=ready,kind=",
            "state=ready,kind=Deployment,color=blue",
            "state=ready,kind",
        ] {
            let w = Werf::read(&[ann("werf.io/deploy-dependency-x", value, 3)], false);
            assert_eq!(w.rejected.len(), 1, "{value:?}");
            assert_eq!(w.rejected[0].loc.span.start, 3);
        }
        for (key, value) in [
            ("x.dependency.werf.io", "apps/v1:Deployment"),
            ("x.external-dependency.werf.io", "v1:Secret"),
            ("x.external-dependency.werf.io/resource", "secret"),
            ("x.external-dependency.werf.io/resource", "all/x"),
            (
                "x.external-dependency.werf.io/resource",
                "deployments..apps/x",
            ),
            ("x.external-dependency.werf.io/namespace", " "),
        ] {
            let w = Werf::read(&[ann(key, value, 3)], false);
            assert!(!w.rejected.is_empty(), "{key}: {value:?}");
        }
    }

    #[test]
    fn external_dependencies_are_kept() {
        let w = Werf::read(
            &[
                ann("db.external-dependency.werf.io", "v1:Secret:infra:creds", 1),
                ann(
                    "sa.external-dependency.werf.io/resource",
                    "serviceaccount/default",
                    2,
                ),
                ann("sa.external-dependency.werf.io/namespace", "kube-system", 3),
            ],
            false,
        );
        assert!(w.rejected.is_empty(), "{:?}", w.rejected);
        let objects: Vec<String> = w.external.iter().map(|e| e.object.to_string()).collect();
        assert_eq!(
            objects,
            [
                "v1 Secret/creds (namespace infra)",
                "serviceaccount/default (namespace kube-system)"
            ]
        );
        // nelm's unescaped pattern also reads the new form as a manual dependency.
        assert_eq!(w.weight, None);
        assert!(w.dependencies[0].from_external_key);
    }

    fn tracked(kind_line: &str, body: &str, annotations: &[(&str, &str)]) -> Werf {
        let text = format!("{kind_line}\nmetadata:\n  name: x\n{body}");
        let node = crate::parse::parse_document(&text, 0, crate::parse::Limits::default())
            .expect("parses")
            .expect("a document");
        let anns: Vec<Annotation> = annotations
            .iter()
            .enumerate()
            .map(|(i, (k, v))| ann(k, v, u32::try_from(i).unwrap_or(0) * 10 + 1))
            .collect();
        let mut w = Werf::read(&anns, false);
        let api = node
            .get("apiVersion")
            .and_then(Node::as_scalar)
            .unwrap_or("v1");
        let group = crate::model::kinds::api_group(api);
        let kind = node
            .get("kind")
            .and_then(Node::as_scalar)
            .unwrap_or_default();
        w.read_tracking(&anns, group, kind, &node);
        w
    }

    /// Kind line, object body, annotations, failures allowed.
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)], u64);

    #[test]
    fn failures_allowed_per_replica_as_nelm_computes_it() {
        let deploy = "apiVersion: apps/v1\nkind: Deployment";
        let cases: [Case; 9] = [
            // Deployments, DaemonSets, StatefulSets: 1 per replica by default.
            (deploy, "", &[], 1),
            (deploy, "spec:\n  replicas: 3\n", &[], 3),
            (
                deploy,
                "spec:\n  replicas: 3\n",
                &[(FAILURES_ALLOWED, " 2 ")],
                6,
            ),
            (deploy, "spec:\n  replicas: 0\n", &[], 0),
            (
                deploy,
                "spec:\n  template:\n    spec:\n      restartPolicy: Never\n",
                &[(FAILURES_ALLOWED, "4")],
                0,
            ),
            // A Job never tolerates a failure, whatever it says.
            (
                "apiVersion: batch/v1\nkind: Job",
                "",
                &[(FAILURES_ALLOWED, "5")],
                0,
            ),
            // Anything else: 0 unless written, then times its replicas when it has them.
            ("apiVersion: v1\nkind: ConfigMap", "", &[], 0),
            (
                "apiVersion: v1\nkind: ConfigMap",
                "",
                &[(FAILURES_ALLOWED, "2")],
                2,
            ),
            (
                "apiVersion: example.com/v1\nkind: Widget",
                "spec:\n  replicas: 2\n",
                &[(FAILURES_ALLOWED, "+1")],
                2,
            ),
        ];
        for (kind, body, anns, allowed) in cases {
            let w = tracked(kind, body, anns);
            assert!(w.rejected.is_empty(), "{:?}", w.rejected);
            assert_eq!(
                w.tracking.failures_allowed, allowed,
                "{kind} {body} {anns:?}"
            );
        }
    }

    #[test]
    fn fail_modes_and_no_activity_timeouts_werf_accepts() {
        let w = tracked("apiVersion: v1\nkind: ConfigMap", "", &[]);
        assert_eq!(w.tracking, Tracking::default());
        assert!(w.tracking_written.is_empty());
        for mode in FailMode::ALL {
            let w = tracked(
                "apiVersion: v1\nkind: ConfigMap",
                "",
                &[(FAIL_MODE, &format!(" {} ", mode.name()))],
            );
            assert_eq!(w.tracking.fail_mode, mode);
            assert_eq!(w.tracking_written[0].1, mode.name());
        }
        let cr = "apiVersion: example.com/v1\nkind: Widget";
        for (value, expected) in [
            ("30s", Duration::from_secs(30)),
            ("1h30m", Duration::from_secs(5400)),
            ("+300ms", Duration::from_millis(300)),
            // kubedog reads 0 as "not set": its 4 minutes.
            ("0", DEFAULT_NO_ACTIVITY),
            ("-0s", DEFAULT_NO_ACTIVITY),
        ] {
            let w = tracked(cr, "", &[(NO_ACTIVITY_TIMEOUT, value)]);
            assert!(w.rejected.is_empty(), "{value}: {:?}", w.rejected);
            assert_eq!(w.tracking.no_activity, Some(expected), "{value}");
        }
        // Only kubedog's generic tracker has a no-activity timeout.
        for kind in [
            "apiVersion: apps/v1\nkind: Deployment",
            "apiVersion: apps/v1\nkind: StatefulSet",
            "apiVersion: batch/v1\nkind: Job",
            "apiVersion: v1\nkind: Pod",
        ] {
            let w = tracked(kind, "", &[(NO_ACTIVITY_TIMEOUT, "10s")]);
            assert_eq!(w.tracking.no_activity, None, "{kind}");
        }
    }

    #[test]
    fn tracking_values_werf_refuses_are_rejected_where_written() {
        for (key, value) in [
            (FAIL_MODE, ""),
            (FAIL_MODE, "Hope"),
            (FAIL_MODE, "failwholedeployprocessimmediately"),
            (FAILURES_ALLOWED, ""),
            (FAILURES_ALLOWED, "-1"),
            (FAILURES_ALLOWED, "1.5"),
            (FAILURES_ALLOWED, "two"),
            (NO_ACTIVITY_TIMEOUT, ""),
            (NO_ACTIVITY_TIMEOUT, "5"),
            (NO_ACTIVITY_TIMEOUT, "-1s"),
            (NO_ACTIVITY_TIMEOUT, "1x"),
            (NO_ACTIVITY_TIMEOUT, "- 1s"),
            (NO_ACTIVITY_TIMEOUT, "1 m"),
        ] {
            let w = tracked(
                "apiVersion: example.com/v1\nkind: Widget",
                "",
                &[(WEIGHT, "1"), (key, value)],
            );
            assert_eq!(w.rejected.len(), 1, "{key}: {value:?}");
            assert_eq!(w.rejected[0].key, key);
            assert_eq!(w.rejected[0].loc.span.start, 11, "{key}: {value:?}");
            // The default stands in for the refused value.
            assert!(w.tracking_written.is_empty(), "{key}: {value:?}");
        }
    }

    #[test]
    fn a_namespace_keeps_its_manual_dependencies_and_floats_a_crd_does_not() {
        let dep = [ann(
            "werf.io/deploy-dependency-a",
            "state=present,kind=Namespace,name=a",
            1,
        )];
        let ns = Werf::read(&dep, FirstStage::Namespace);
        assert_eq!(
            (ns.weight, ns.stages.clone(), ns.dependencies.len()),
            (None, vec![Stage::PrePreInstall], 1)
        );
        let crd = Werf::read(&dep, FirstStage::Crd);
        assert_eq!(
            (crd.weight, crd.stages, crd.dependencies.len()),
            (Some(0), vec![Stage::PrePreInstall], 0)
        );
        let plain = Werf::read(&[ann(WEIGHT, "3", 1)], FirstStage::Namespace);
        assert_eq!(plain.weight, Some(0));
    }
}
