//! Every sequencing dialect chartseq knows, in one list: its name, its tool, which annotation
//! keys are its ordering annotations, and its planner's analysis. Lint reads this list only:
//! CS601 names the tools whose keys a chart carries, and CS602, CS603, CS604 and CS605 run
//! each dialect's planner on every chart that carries that dialect's keys and report what it
//! found (`PlanIssue::InvalidDialectValue`, `ReplacedDialectValue`, `DialectReference`,
//! `DialectCycle`). A new dialect is one more entry in [`DIALECTS`].

use crate::model::kots::PhaseProblem;
use crate::model::{Content, Model};
use crate::plan::detect::dialect_of;
use crate::plan::{Dialect, Plan, PlanError, PlanIssue};

/// A planner's analysis: the plan as far as it can be made, and every issue the tool has with
/// the chart (what it refuses, what it passes over, what it replaces).
pub type Analyze = fn(&Model) -> (Plan, Vec<PlanIssue>);

/// One sequencing dialect.
pub struct DialectEntry {
    pub dialect: Dialect,
    /// Whether CS601 reports the dialect's keys as foreign ordering annotations: false for a
    /// dialect whose keys another rule already reports (the draft HIP's keys are CS202's).
    pub foreign: bool,
    /// The planner's analysis; `None` while chartseq does not plan in the dialect.
    pub analyze: Option<Analyze>,
}

impl std::fmt::Debug for DialectEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.dialect.name())
    }
}

impl DialectEntry {
    /// The name `--dialect` and `chartseq migrate --from` take.
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.dialect.name()
    }

    /// The tool whose order it is, for messages.
    #[must_use]
    pub fn tool(&self) -> &'static str {
        self.dialect.tool()
    }

    /// Whether an annotation key is one of the dialect's ordering annotations (the keys
    /// `--dialect auto` reads).
    #[must_use]
    pub fn ordering_key(&self, key: &str) -> bool {
        dialect_of(key) == Some(self.dialect)
    }

    /// Whether any resource of the release carries one of the dialect's ordering annotations.
    #[must_use]
    pub fn present(&self, model: &Model) -> bool {
        model.documents.iter().any(|d| match &d.content {
            Content::Resource(r) => {
                r.annotations.iter().any(|a| self.ordering_key(&a.key))
                    || (self.dialect == Dialect::Kapp && crate::model::kapp::is_config(r))
            }
            _ => false,
        })
    }
}

/// The analysis of a planner that only returns its plan or its refusals: the refusals, or
/// what the plan says its tool passes over.
fn from_result(dialect: Dialect, result: Result<Plan, PlanError>) -> (Plan, Vec<PlanIssue>) {
    match result {
        Ok(plan) => {
            let issues = plan.issues.clone();
            (plan, issues)
        }
        Err(e) => (
            Plan {
                dialect,
                ..Plan::default()
            },
            e.issues,
        ),
    }
}

/// KOTS's plan, and every phase that is not an integer (KOTS logs it and uses phase 0).
fn kots_analyze(model: &Model) -> (Plan, Vec<PlanIssue>) {
    let (plan, mut issues) = from_result(Dialect::Kots, crate::plan::kots::plan(model));
    for d in &model.documents {
        let Content::Resource(r) = &d.content else {
            continue;
        };
        for (key, phase) in [
            (crate::model::kots::CREATION_PHASE, &r.kots.creation_phase),
            (crate::model::kots::DELETION_PHASE, &r.kots.deletion_phase),
        ] {
            if let (Some(PhaseProblem::NotAnInteger), Some(written)) =
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

fn kapp_analyze(model: &Model) -> (Plan, Vec<PlanIssue>) {
    from_result(Dialect::Kapp, crate::plan::kapp::plan(model))
}

/// Every dialect but HIP-0025, in `--dialect` order.
pub static DIALECTS: &[DialectEntry] = &[
    DialectEntry {
        dialect: Dialect::Werf,
        foreign: true,
        analyze: Some(crate::plan::werf::analyze),
    },
    DialectEntry {
        dialect: Dialect::Argo,
        foreign: true,
        analyze: Some(crate::plan::argo::analyze),
    },
    DialectEntry {
        dialect: Dialect::Kapp,
        foreign: true,
        analyze: Some(kapp_analyze),
    },
    DialectEntry {
        dialect: Dialect::Kots,
        foreign: true,
        analyze: Some(kots_analyze),
    },
    DialectEntry {
        dialect: Dialect::Draft,
        foreign: false,
        analyze: Some(crate::plan::draft::analyze),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dialect_but_hip_is_listed_once_with_its_keys() {
        let names: Vec<&str> = DIALECTS.iter().map(DialectEntry::name).collect();
        assert_eq!(names, ["werf", "argo", "kapp", "kots", "draft"]);
        let werf = &DIALECTS[0];
        for key in [
            "werf.io/weight",
            "werf.io/deploy-dependency-db",
            "db.dependency.werf.io",
            "db.external-dependency.werf.io",
        ] {
            assert!(werf.ordering_key(key), "{key}");
        }
        assert!(!werf.ordering_key("werf.io/track-termination-mode"));
        assert!(DIALECTS[1].ordering_key("argocd.argoproj.io/sync-wave"));
        assert!(!DIALECTS[1].ordering_key("argocd.argoproj.io/sync-options"));
    }
}
