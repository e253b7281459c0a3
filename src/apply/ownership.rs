//! Who a live object belongs to, and what the deployer may do with it (SPEC §5).
//!
//! Helm marks every object of a release with `app.kubernetes.io/managed-by: Helm` and the
//! `meta.helm.sh/release-name` / `meta.helm.sh/release-namespace` annotations, and refuses to
//! take over an existing object without them (Helm's `checkOwnership` in
//! `pkg/action/validate.go`). chartseq enforces the same marks in both directions: it applies
//! nothing while an object it would write belongs to someone else, and it deletes (on
//! uninstall and upgrade pruning) only objects that carry this release's marks, keeping those
//! annotated `helm.sh/resource-policy: keep` (Helm's `resource_policy.go`).
//!
//! [`decide`] is the one place those rules live: given the live object and the release it says
//! owned, kept or foreign; apply, prune, uninstall and their dry runs all ask it.

use serde_json::{Map, Value};

use crate::model::annotations::HOOK;

/// The label Helm sets on every object it manages.
pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";
/// Its value.
pub const MANAGED_BY_HELM: &str = "Helm";
/// The release an object belongs to.
pub const RELEASE_NAME: &str = "meta.helm.sh/release-name";
/// The namespace of that release (not necessarily the object's own namespace).
pub const RELEASE_NAMESPACE: &str = "meta.helm.sh/release-namespace";
/// `helm.sh/resource-policy`: `keep` leaves the object in place on uninstall and pruning.
pub const RESOURCE_POLICY: &str = "helm.sh/resource-policy";

/// A release: what ownership marks name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Release<'a> {
    pub name: &'a str,
    pub namespace: &'a str,
}

/// Who a live object belongs to when it is not this release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    /// No `app.kubernetes.io/managed-by: Helm` (created by kubectl, an operator, a person).
    NotHelm {
        /// The label's value when it names another manager.
        managed_by: Option<String>,
    },
    /// Managed by Helm for another release.
    Release { name: String, namespace: String },
    /// Labelled as Helm's but without (complete) release annotations.
    Unnamed,
}

impl std::fmt::Display for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Owner::NotHelm { managed_by: None } => f.write_str("not managed by Helm"),
            Owner::NotHelm {
                managed_by: Some(m),
            } => write!(f, "not managed by Helm ({MANAGED_BY}: {m})"),
            Owner::Release { name, namespace } => {
                write!(f, "owned by release {name} in namespace {namespace}")
            }
            Owner::Unnamed => write!(
                f,
                "labelled {MANAGED_BY}: {MANAGED_BY_HELM} but names no release ({RELEASE_NAME} / {RELEASE_NAMESPACE} missing)"
            ),
        }
    }
}

/// What the deployer may do with a live object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// This release's: it may be updated and deleted.
    Owned,
    /// This release's, but `helm.sh/resource-policy: keep`: updated, never deleted.
    Kept,
    /// Someone else's: never modified or deleted (unless adopted with `--take-ownership`).
    Foreign(Owner),
}

impl Decision {
    /// Whether the release may write the object.
    #[must_use]
    pub fn may_apply(&self) -> bool {
        !matches!(self, Decision::Foreign(_))
    }
}

/// What is known about the object besides its live state.
#[derive(Clone, Copy, Debug, Default)]
pub struct Known<'a> {
    /// The object as this release renders or recorded it (its `keep` policy counts too, as
    /// Helm's uninstall reads the policy from the recorded manifest).
    pub recorded: Option<&'a Value>,
    /// The object is one of this release's hooks. Helm creates hooks without ownership
    /// marks, so an unmarked object that is itself a hook (`helm.sh/hook`) is this release's
    /// hook from an earlier run, not a stranger's.
    pub hook: bool,
}

fn string_at<'v>(map: &'v Value, key: &str) -> Option<&'v str> {
    map.get(key).and_then(Value::as_str)
}

/// Who `live` belongs to, and so what may be done with it.
#[must_use]
pub fn decide(live: &Value, release: Release<'_>, known: Known<'_>) -> Decision {
    let meta = &live["metadata"];
    let labels = &meta["labels"];
    let annotations = &meta["annotations"];
    let managed_by = string_at(labels, MANAGED_BY);
    let name = string_at(annotations, RELEASE_NAME);
    let namespace = string_at(annotations, RELEASE_NAMESPACE);
    let owner = match (managed_by, name, namespace) {
        (Some(MANAGED_BY_HELM), Some(n), Some(ns))
            if n == release.name && ns == release.namespace =>
        {
            None
        }
        (Some(MANAGED_BY_HELM), Some(n), Some(ns)) => Some(Owner::Release {
            name: n.to_owned(),
            namespace: ns.to_owned(),
        }),
        (None, None, None) if known.hook && string_at(annotations, HOOK).is_some() => None,
        (Some(MANAGED_BY_HELM), _, _) => Some(Owner::Unnamed),
        (other, _, _) => Some(Owner::NotHelm {
            managed_by: other.map(str::to_owned),
        }),
    };
    if let Some(owner) = owner {
        return Decision::Foreign(owner);
    }
    if is_kept(live) || known.recorded.is_some_and(is_kept) {
        Decision::Kept
    } else {
        Decision::Owned
    }
}

/// `helm.sh/resource-policy: keep` (compared as Helm's uninstall does: trimmed, any case).
#[must_use]
pub fn is_kept(object: &Value) -> bool {
    object["metadata"]["annotations"]
        .get(RESOURCE_POLICY)
        .and_then(Value::as_str)
        .is_some_and(|p| p.trim().eq_ignore_ascii_case("keep"))
}

/// Puts this release's ownership marks on an object about to be applied.
pub fn mark(object: &mut Value, release: Release<'_>) {
    let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let mut entry = |key: &str, pairs: &[(&str, &str)]| {
        let map = meta
            .entry(key.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if !map.is_object() {
            *map = Value::Object(Map::new());
        }
        if let Some(map) = map.as_object_mut() {
            for (k, v) in pairs {
                map.insert((*k).to_owned(), Value::String((*v).to_owned()));
            }
        }
    };
    entry("labels", &[(MANAGED_BY, MANAGED_BY_HELM)]);
    entry(
        "annotations",
        &[
            (RELEASE_NAME, release.name),
            (RELEASE_NAMESPACE, release.namespace),
        ],
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const SHOP: Release<'static> = Release {
        name: "shop",
        namespace: "default",
    };

    fn object(labels: &Value, annotations: &Value) -> Value {
        json!({"metadata": {"name": "x", "labels": labels, "annotations": annotations}})
    }

    fn marked(name: &str, ns: &str) -> Value {
        object(
            &json!({MANAGED_BY: "Helm"}),
            &json!({RELEASE_NAME: name, RELEASE_NAMESPACE: ns}),
        )
    }

    #[test]
    fn only_complete_marks_of_this_release_are_owned() {
        let none = Known::default();
        assert_eq!(
            decide(&marked("shop", "default"), SHOP, none),
            Decision::Owned
        );
        assert_eq!(
            decide(&marked("shop", "prod"), SHOP, none),
            Decision::Foreign(Owner::Release {
                name: "shop".into(),
                namespace: "prod".into()
            })
        );
        assert_eq!(
            decide(&json!({"metadata": {"name": "x"}}), SHOP, none),
            Decision::Foreign(Owner::NotHelm { managed_by: None })
        );
        assert_eq!(
            decide(
                &object(&json!({MANAGED_BY: "kustomize"}), &json!({})),
                SHOP,
                none
            ),
            Decision::Foreign(Owner::NotHelm {
                managed_by: Some("kustomize".into())
            })
        );
        assert_eq!(
            decide(
                &object(&json!({MANAGED_BY: "Helm"}), &json!({RELEASE_NAME: "shop"})),
                SHOP,
                none
            ),
            Decision::Foreign(Owner::Unnamed)
        );
        // The annotations alone do not make an object Helm's.
        assert!(matches!(
            decide(
                &object(
                    &json!({}),
                    &json!({RELEASE_NAME: "shop", RELEASE_NAMESPACE: "default"})
                ),
                SHOP,
                none
            ),
            Decision::Foreign(Owner::NotHelm { .. })
        ));
    }

    #[test]
    fn keep_on_the_live_or_the_recorded_object_keeps_an_owned_one() {
        let mut live = marked("shop", "default");
        live["metadata"]["annotations"][RESOURCE_POLICY] = json!(" Keep ");
        assert_eq!(decide(&live, SHOP, Known::default()), Decision::Kept);
        let recorded = json!({"metadata": {"annotations": {RESOURCE_POLICY: "keep"}}});
        let known = Known {
            recorded: Some(&recorded),
            hook: false,
        };
        assert_eq!(
            decide(&marked("shop", "default"), SHOP, known),
            Decision::Kept
        );
        // A foreign object stays foreign whatever its policy.
        let mut foreign = json!({"metadata": {"annotations": {RESOURCE_POLICY: "keep"}}});
        assert!(matches!(
            decide(&foreign, SHOP, known),
            Decision::Foreign(_)
        ));
        mark(&mut foreign, SHOP);
        assert_eq!(decide(&foreign, SHOP, known), Decision::Kept);
    }

    #[test]
    fn an_unmarked_hook_is_this_release_hook_only_when_it_is_one() {
        let hook = object(&json!({}), &json!({HOOK: "pre-install"}));
        let as_hook = Known {
            recorded: None,
            hook: true,
        };
        assert_eq!(decide(&hook, SHOP, as_hook), Decision::Owned);
        assert!(!decide(&hook, SHOP, Known::default()).may_apply());
        let plain = json!({"metadata": {"name": "x"}});
        assert!(!decide(&plain, SHOP, as_hook).may_apply());
    }

    #[test]
    fn mark_adds_the_three_marks_and_keeps_the_rest() {
        let mut obj = json!({"metadata": {"name": "x", "labels": {"app": "web"}}});
        mark(&mut obj, SHOP);
        assert_eq!(
            obj["metadata"]["labels"],
            json!({"app": "web", MANAGED_BY: "Helm"})
        );
        assert_eq!(
            obj["metadata"]["annotations"],
            json!({RELEASE_NAME: "shop", RELEASE_NAMESPACE: "default"})
        );
        assert_eq!(decide(&obj, SHOP, Known::default()), Decision::Owned);
    }
}
