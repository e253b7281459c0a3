//! Every sequencing dialect chartseq knows, in one list: its name, its tool, which annotation
//! keys are its ordering annotations, and its planner's analysis. Lint reads this list only:
//! CS601 names the tools whose keys a chart carries, and CS602, CS603, CS604 and CS605 run
//! each dialect's planner on every chart that carries that dialect's keys and report what it
//! found (`PlanIssue::InvalidDialectValue`, `ReplacedDialectValue`, `DialectReference`,
//! `DialectCycle`). A new dialect is one more entry in [`DIALECTS`].

use crate::model::argo::{ARGO_HOOK, SYNC_WAVE};
use crate::model::werf;
use crate::model::{Content, Model};
use crate::plan::{Plan, PlanIssue};

/// A planner's analysis: the plan as far as it can be made, and every issue the tool has with
/// the chart (what it refuses, what it passes over, what it replaces).
pub type Analyze = fn(&Model) -> (Plan, Vec<PlanIssue>);

/// One sequencing dialect.
pub struct DialectEntry {
    /// The name `--dialect` and `chartseq migrate --from` take.
    pub name: &'static str,
    /// The tool whose order it is, for messages.
    pub tool: &'static str,
    /// Whether an annotation key is one of the dialect's ordering annotations.
    pub ordering_key: fn(&str) -> bool,
    /// Whether CS601 reports the keys as foreign ordering annotations: false for a dialect
    /// whose keys another rule already reports (the draft HIP's keys are CS202's).
    pub foreign: bool,
    /// The planner's analysis; `None` while chartseq does not plan in the dialect.
    pub analyze: Option<Analyze>,
}

impl std::fmt::Debug for DialectEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl DialectEntry {
    /// Whether any resource of the release carries one of the dialect's ordering annotations.
    #[must_use]
    pub fn present(&self, model: &Model) -> bool {
        model.documents.iter().any(|d| match &d.content {
            Content::Resource(r) => r.annotations.iter().any(|a| (self.ordering_key)(&a.key)),
            _ => false,
        })
    }
}

fn werf_key(key: &str) -> bool {
    key == werf::WEIGHT
        || key == werf::DEPLOY_ON
        || key
            .strip_prefix(werf::DEPLOY_DEPENDENCY_PREFIX)
            .is_some_and(|id| !id.is_empty())
        || key
            .strip_prefix("werf.io/delete-dependency-")
            .is_some_and(|id| !id.is_empty())
        || [
            werf::DEPENDENCY_SUFFIX,
            werf::EXTERNAL_SUFFIX,
            werf::EXTERNAL_RESOURCE_SUFFIX,
            werf::EXTERNAL_NAMESPACE_SUFFIX,
        ]
        .iter()
        .any(|suffix| key.strip_suffix(suffix).is_some_and(|id| !id.is_empty()))
}

fn argo_key(key: &str) -> bool {
    key == SYNC_WAVE || key == ARGO_HOOK
}

fn kapp_key(key: &str) -> bool {
    ["kapp.k14s.io/change-group", "kapp.k14s.io/change-rule"]
        .iter()
        .any(|k| key == *k || key.strip_prefix(k).is_some_and(|s| s.starts_with('.')))
}

fn kots_key(key: &str) -> bool {
    matches!(
        key,
        "kots.io/creation-phase"
            | "kots.io/deletion-phase"
            | "kots.io/wait-for-ready"
            | "kots.io/wait-for-properties"
    )
}

/// Every dialect, in `--dialect` order.
pub static DIALECTS: &[DialectEntry] = &[
    DialectEntry {
        name: "werf",
        tool: "werf",
        ordering_key: werf_key,
        foreign: true,
        analyze: Some(crate::plan::werf::analyze),
    },
    DialectEntry {
        name: "argo",
        tool: "Argo CD",
        ordering_key: argo_key,
        foreign: true,
        analyze: Some(crate::plan::argo::analyze),
    },
    DialectEntry {
        name: "kapp",
        tool: "kapp",
        ordering_key: kapp_key,
        foreign: true,
        analyze: None,
    },
    DialectEntry {
        name: "kots",
        tool: "KOTS",
        ordering_key: kots_key,
        foreign: true,
        analyze: None,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordering_keys_are_recognised() {
        for key in [
            "werf.io/weight",
            "werf.io/deploy-on",
            "werf.io/deploy-dependency-db",
            "db.dependency.werf.io",
            "db.external-dependency.werf.io",
            "sa.external-dependency.werf.io/resource",
        ] {
            assert!(werf_key(key), "{key}");
        }
        for key in ["werf.io/track-termination-mode", ".dependency.werf.io"] {
            assert!(!werf_key(key), "{key}");
        }
        assert!(argo_key("argocd.argoproj.io/sync-wave"));
        assert!(!argo_key("argocd.argoproj.io/sync-options"));
        assert!(kapp_key("kapp.k14s.io/change-group.db"));
        assert!(!kapp_key("kapp.k14s.io/change-groupx"));
        assert!(kots_key("kots.io/creation-phase"));
        let names: Vec<&str> = DIALECTS.iter().map(|d| d.name).collect();
        assert_eq!(names, ["werf", "argo", "kapp", "kots"]);
    }
}
