//! What every rule reads: the model, the plan and fatal issues from the one shared planner
//! (so `lint` and `plan` never disagree), the settings, and indexes built once.

use std::cell::OnceCell;

use super::Settings;
use crate::model::annotations::Spanned;
use crate::model::{Content, DocId, Model, Resource};
use crate::plan::graph::StepGraph;
use crate::plan::system::{self, System};
use crate::plan::{self, Plan, PlanIssue};

/// Read-only input of the rules.
pub struct Context<'m> {
    pub model: &'m Model,
    pub settings: &'m Settings,
    pub plan: Plan,
    pub issues: Vec<PlanIssue>,
    step_of: OnceCell<Vec<Option<usize>>>,
    steps: OnceCell<StepGraph>,
    dialects: OnceCell<Vec<DialectAnalysis>>,
}

/// A dialect's planner run over the chart (only for a dialect whose annotations it carries).
pub struct DialectAnalysis {
    pub entry: &'static System,
    pub plan: Plan,
    /// Everything the planner found: fatal for the tool or not.
    pub issues: Vec<PlanIssue>,
    /// Why the tool would refuse to uninstall the release, where it deletes in an order of
    /// its own (a cycle of werf's delete dependencies, one it cannot read).
    pub uninstall_issues: Vec<PlanIssue>,
}

impl<'m> Context<'m> {
    #[must_use]
    pub fn new(model: &'m Model, settings: &'m Settings) -> Self {
        let (plan, issues) = plan::analyze(model);
        Self {
            model,
            settings,
            plan,
            issues,
            step_of: OnceCell::new(),
            steps: OnceCell::new(),
            dialects: OnceCell::new(),
        }
    }

    /// Each system but HIP-0025 ([`system::others`]) whose annotations the chart carries,
    /// analysed once for every rule.
    #[must_use]
    pub fn dialect_analyses(&self) -> &[DialectAnalysis] {
        self.dialects.get_or_init(|| {
            system::others()
                .filter(|entry| entry.present(self.model))
                .map(|entry| {
                    let (plan, issues) = (entry.analyze)(self.model);
                    let uninstall_issues = match entry.uninstall.map(|u| u(self.model, &plan)) {
                        Some(Err(e)) => e.issues,
                        _ => Vec::new(),
                    };
                    DialectAnalysis {
                        entry,
                        plan,
                        issues,
                        uninstall_issues,
                    }
                })
                .collect()
        })
    }

    /// Every resource with its document id.
    pub fn resources(&self) -> impl Iterator<Item = (DocId, &'m Resource)> + 'm {
        self.model
            .documents
            .iter()
            .enumerate()
            .filter_map(|(i, d)| match &d.content {
                Content::Resource(r) => Some((i, &**r)),
                _ => None,
            })
    }

    /// The plan step a document is applied in (`None` for hooks and `crds/`).
    #[must_use]
    pub fn step_of(&self, doc: DocId) -> Option<usize> {
        self.step_of.get_or_init(|| {
            let mut out = vec![None; self.model.documents.len()];
            for (i, step) in self.plan.steps.iter().enumerate() {
                for &d in &step.resources {
                    out[d] = Some(i);
                }
            }
            out
        })[doc]
    }

    /// Whether step `earlier` is complete (ready) before step `later` starts.
    #[must_use]
    pub fn step_before(&self, earlier: usize, later: usize) -> bool {
        self.steps
            .get_or_init(|| StepGraph::new(&self.plan.steps))
            .before(earlier, later)
    }

    /// Groups (chart level, name) that some resource of the same level depends on.
    #[must_use]
    pub fn depended_groups(&self) -> std::collections::BTreeSet<(usize, &'m str)> {
        self.resources()
            .filter(|(_, r)| r.hook.is_none())
            .filter_map(|(doc, r)| {
                let names = r.seq.depends_on.as_ref()?.value.as_ref().ok()?;
                Some(
                    names
                        .iter()
                        .map(move |n| (self.model.documents[doc].chart, n.as_str())),
                )
            })
            .flatten()
            .collect()
    }

    /// Resources (not hooks) in a group that others depend on, with neither readiness
    /// annotation: their readiness decides when dependents start, and nothing says what it is.
    /// Yields the document, the resource, its chart level and its group.
    pub fn gates_without_readiness(
        &self,
    ) -> impl Iterator<Item = (DocId, &'m Resource, usize, &'m Spanned<String>)> + '_ {
        let depended = self.depended_groups();
        self.resources().filter_map(move |(doc, r)| {
            let group = r.seq.group.as_ref()?;
            let chart = self.model.documents[doc].chart;
            let gated = r.hook.is_none()
                && depended.contains(&(chart, group.value.as_str()))
                && r.seq.readiness_success.is_none()
                && r.seq.readiness_failure.is_none();
            gated.then_some((doc, r, chart, group))
        })
    }

    /// How a step is shown in messages: `group db` or `the unsequenced resources`.
    #[must_use]
    pub fn step_name(&self, step: usize) -> String {
        let s = &self.plan.steps[step];
        let chart = &self.model.charts[s.chart].display;
        match &s.group {
            Some(g) => format!("group `{g}` of chart {chart}"),
            None => format!("the unsequenced resources of chart {chart}"),
        }
    }
}
