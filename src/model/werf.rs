//! werf/nelm's ordering annotations, read as nelm reads them (DIALECTS.md §1).
//!
//! - `werf.io/weight`: Go's `strconv.Atoi` after trimming spaces; default 0. On a hook it wins
//!   over `helm.sh/hook-weight` (read the same way). A value that is not an integer fails the
//!   whole release before anything is applied.
//! - `werf.io/deploy-on`: a comma list of events; it replaces `helm.sh/hook`'s events. An
//!   unknown event fails the release. Without either, the object is in the main (install)
//!   stage.
//! - Every `CustomResourceDefinition` and `Namespace` is applied first, with weight 0, whatever it
//!   carries.
//! - An object with a manual dependency (`werf.io/deploy-dependency-<id>` or
//!   `<id>.dependency.werf.io`) has no weight: it floats in its stage, ordered by its edges only.

use super::annotations::{Annotation, HOOK, HOOK_WEIGHT, Spanned};
use crate::source::Loc;

pub const WEIGHT: &str = "werf.io/weight";
pub const DEPLOY_ON: &str = "werf.io/deploy-on";
const DEPLOY_DEPENDENCY_PREFIX: &str = "werf.io/deploy-dependency-";
const DEPENDENCY_SUFFIX: &str = ".dependency.werf.io";

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

/// A value werf rejects: the release fails before anything is applied.
#[derive(Clone, Debug, PartialEq)]
pub struct Rejected {
    pub key: &'static str,
    pub value: String,
    pub reason: &'static str,
    pub loc: Loc,
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
    /// The first manual dependency key (`werf.io/deploy-dependency-…`, `….dependency.werf.io`).
    pub dependency: Option<Spanned<String>>,
    /// Values werf rejects.
    pub rejected: Vec<Rejected>,
}

/// Go's `strconv.Atoi` after `strings.TrimSpace`.
fn weight_of(raw: &str) -> Option<i64> {
    super::argo::atoi(raw.trim())
}

impl Werf {
    /// Reads one object. `crd_or_namespace`: a `CustomResourceDefinition` or a core `Namespace`.
    #[must_use]
    pub fn read(annotations: &[Annotation], crd_or_namespace: bool) -> Self {
        let find = |key: &str| {
            annotations
                .iter()
                .rev()
                .find(|a| a.key == key)
                .map(|a| (a.value.as_str().unwrap_or_default().trim(), a.value_loc))
        };
        let mut rejected = Vec::new();
        let mut reject = |key, value: &str, reason, loc| {
            rejected.push(Rejected {
                key,
                value: value.to_owned(),
                reason,
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
        let dependency = annotations
            .iter()
            .find(|a| {
                a.key.starts_with(DEPLOY_DEPENDENCY_PREFIX)
                    || (a.key.ends_with(DEPENDENCY_SUFFIX) && a.key.len() > DEPENDENCY_SUFFIX.len())
            })
            .map(|a| Spanned {
                value: a.key.clone(),
                loc: a.key_loc,
            });
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
        if dependency.is_some() && !crd_or_namespace {
            (weight, weight_loc) = (None, None);
        } else if weight.is_none() {
            weight = Some(0);
        }
        Werf {
            stages,
            weight,
            weight_loc,
            dependency,
            rejected,
        }
    }
}

const EXTERNAL_SUFFIX: &str = ".external-dependency.werf.io";
const EXTERNAL_RESOURCE_SUFFIX: &str = ".external-dependency.werf.io/resource";
const EXTERNAL_NAMESPACE_SUFFIX: &str = ".external-dependency.werf.io/namespace";

/// The `<id>` of `<id><suffix>`, when the key has that form with a non-empty id.
fn external_id<'k>(key: &'k str, suffix: &str) -> Option<&'k str> {
    key.strip_suffix(suffix).filter(|id| !id.is_empty())
}

/// werf's external dependencies of one object (DIALECTS.md §1.1, §1.4): objects outside the
/// release that nelm waits to **exist** before it deploys the object.
///
/// - `<id>.external-dependency.werf.io: apiVersion:kind[:namespace]:name`;
/// - `<id>.external-dependency.werf.io/resource: <type>[.<version>.<group>]/<name>` (a kubectl
///   resource type, resolved through discovery) with `<id>.external-dependency.werf.io/namespace`.
///
/// Values are trimmed as werf trims them; in id order. A value werf rejects is skipped here:
/// the plan refuses it elsewhere.
#[must_use]
pub fn external_dependencies(annotations: &[Annotation]) -> Vec<crate::plan::External> {
    use crate::plan::{External, ExternalType};
    let value = |key: &str| {
        annotations
            .iter()
            .rev()
            .find(|a| a.key == key)
            .and_then(|a| a.value.as_str())
            .map(str::trim)
    };
    let mut ids: Vec<(&str, &str)> = annotations
        .iter()
        .filter_map(|a| {
            external_id(&a.key, EXTERNAL_SUFFIX)
                .map(|id| (id, a.key.as_str()))
                .or_else(|| {
                    external_id(&a.key, EXTERNAL_RESOURCE_SUFFIX).map(|id| (id, a.key.as_str()))
                })
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let mut out = Vec::new();
    for (id, key) in ids {
        let Some(raw) = value(key) else { continue };
        if key.ends_with(EXTERNAL_SUFFIX) {
            let parts: Vec<&str> = raw.split(':').collect();
            let (api_version, kind, namespace, name) = match parts.as_slice() {
                [a, k, n] => (*a, *k, None, *n),
                [a, k, ns, n] => (*a, *k, Some(*ns), *n),
                _ => continue,
            };
            if [api_version, kind, name].iter().any(|p| p.is_empty()) {
                continue;
            }
            out.push(External {
                target: ExternalType::Kind {
                    api_version: api_version.to_owned(),
                    kind: kind.to_owned(),
                },
                namespace: namespace.filter(|n| !n.is_empty()).map(str::to_owned),
                name: name.to_owned(),
                key: key.to_owned(),
            });
        } else {
            let Some((ty, name)) = raw.split_once('/') else {
                continue;
            };
            if name.is_empty() || name.contains('/') || ty.is_empty() || ty == "all" {
                continue;
            }
            let mut dotted = ty.splitn(3, '.');
            let resource = dotted.next().unwrap_or_default();
            let (version, group) = match (dotted.next(), dotted.next()) {
                (None, _) => (None, None),
                (Some(g), None) => (None, Some(g)),
                (Some(v), Some(g)) => (Some(v), Some(g)),
            };
            if resource.is_empty() || [version, group].iter().flatten().any(|p| p.is_empty()) {
                continue;
            }
            let namespace = value(&format!("{id}{EXTERNAL_NAMESPACE_SUFFIX}"))
                .filter(|n| !n.is_empty())
                .map(str::to_owned);
            out.push(External {
                target: ExternalType::Resource {
                    resource: resource.to_owned(),
                    version: version.map(str::to_owned),
                    group: group.map(str::to_owned),
                },
                namespace,
                name: name.to_owned(),
                key: key.to_owned(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
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
        for key in ["werf.io/deploy-dependency-db", "db.dependency.werf.io"] {
            let w = Werf::read(
                &[
                    ann(WEIGHT, "5", 1),
                    ann(key, "state=ready,kind=Deployment", 2),
                ],
                false,
            );
            assert_eq!(w.weight, None, "{key}");
            assert_eq!(w.dependency.map(|d| d.value), Some(key.to_owned()));
        }
        let w = Werf::read(&[ann(".dependency.werf.io", "x", 2)], false);
        assert_eq!(w.weight, Some(0));
    }

    #[test]
    fn external_dependencies_in_both_forms() {
        use crate::plan::ExternalType;
        let deps = external_dependencies(&[
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
            // Rejected by werf: skipped here.
            ann("bad.external-dependency.werf.io", "v1:Secret", 6),
            ann("all.external-dependency.werf.io/resource", "all/x", 7),
        ]);
        let labels: Vec<String> = deps.iter().map(crate::plan::External::label).collect();
        assert_eq!(
            labels,
            [
                "Certificate/tls",
                "deployments/db (namespace data)",
                "serviceaccount/default",
                "Secret/creds (namespace other)",
            ]
        );
        assert_eq!(
            deps[1].target,
            ExternalType::Resource {
                resource: "deployments".into(),
                version: Some("v1".into()),
                group: Some("apps".into())
            }
        );
        assert_eq!(
            deps[0].target,
            ExternalType::Kind {
                api_version: "cert-manager.io/v1".into(),
                kind: "Certificate".into()
            }
        );
    }
}
