//! The lint rules of SPEC §4, one file each. A rule's doc comment is its documentation: the
//! same text feeds `chartseq explain`, the generated `rules/CSxxx-name.md` pages and the
//! registry test. [`RULES`] lists them in code order, by hand.

use crate::lint::{Context, Severity, Sink};

/// How the reference implementation's `helm lint` (the split HIP-0025 pull requests,
/// `internal/chart/v3/lint/rules/`) reports what a rule finds: its severity, or `None` when it
/// has no such check. Its sequencing checks run only when the chart is `apiVersion: v3`
/// (`chart_v3`); its readiness checks run on every chart.
#[must_use]
pub fn reference_severity(code: &str, chart_v3: bool) -> Option<Severity> {
    match code {
        "CS301" | "CS302" | "CS303" => Some(Severity::Error),
        _ if !chart_v3 => None,
        // Plan errors, and demotions (a missing or malformed prerequisite), which its lint
        // reports as errors although its install only warns.
        "CS001" | "CS002" | "CS004" | "CS101" | "CS102" | "CS103" | "CS201" => {
            Some(Severity::Error)
        }
        "CS003" | "CS104" => Some(Severity::Warning),
        _ => None,
    }
}

/// One lint rule: identity, default severity, documentation and the check itself.
pub struct Rule {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    /// One line: when the rule fires (the SPEC §4 table).
    pub summary: &'static str,
    /// The doc comment, one leading space per line as rustc leaves it.
    raw_doc: &'static str,
    pub check: fn(&Context, &mut Sink),
}

impl Rule {
    /// The documentation as Markdown.
    #[must_use]
    pub fn doc(&self) -> String {
        let mut out = String::with_capacity(self.raw_doc.len());
        for line in self.raw_doc.lines() {
            out.push_str(line.strip_prefix(' ').unwrap_or(line));
            out.push('\n');
        }
        out.trim_end().to_owned() + "\n"
    }

    /// The generated documentation page (`rules/CS101-missing-resource-group.md`).
    #[must_use]
    pub fn page(&self) -> String {
        format!(
            "<!-- generated from src/rules by `UPDATE_RULE_DOCS=1 cargo test --test it rule_docs`; do not edit -->\n# {} {}\n\nDefault severity: **{}**. Fires when {}.\n\n{}",
            self.code,
            self.name,
            self.severity.as_str(),
            self.summary,
            self.doc()
        )
    }

    /// File name of the generated page.
    #[must_use]
    pub fn page_name(&self) -> String {
        format!("{}-{}.md", self.code, self.name)
    }
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.code, self.name)
    }
}

/// Declares a rule: its doc comment, code, kebab name, default severity, summary and check.
macro_rules! declare_rule {
    (
        $(#[doc = $doc:literal])*
        pub static $ident:ident = ($code:literal, $name:literal, $severity:ident, $summary:literal, $check:path);
    ) => {
        $(#[doc = $doc])*
        pub static $ident: $crate::rules::Rule = $crate::rules::Rule {
            code: $code,
            name: $name,
            severity: $crate::lint::Severity::$severity,
            summary: $summary,
            raw_doc: concat!($($doc, "\n"),*),
            check: $check,
        };
    };
}

mod cs000_invalid_yaml;
mod cs001_resource_group_cycle;
mod cs002_subchart_cycle;
mod cs003_isolated_resource_group;
mod cs004_multiple_resource_groups;
mod cs101_missing_resource_group;
mod cs102_unknown_subchart;
mod cs103_ambiguous_subchart;
mod cs104_undeclared_subchart;
mod cs105_subchart_rendered_while_disabled;
mod cs201_malformed_annotation_value;
mod cs202_unknown_sequencing_annotation;
pub(crate) mod cs203_sequencing_in_chart_v2;
mod cs204_invalid_metadata_key;
mod cs205_conflicting_dependency_keys;
mod cs301_one_sided_readiness;
mod cs302_malformed_readiness_expression;
mod cs303_non_numeric_ordering_comparison;
mod cs304_readiness_path_outside_status;
mod cs305_job_gate_without_readiness;
mod cs306_unjudgeable_readiness;
mod cs401_sequencing_on_hook;
mod cs402_unknown_hook;
mod cs403_invalid_hook_weight;
mod cs404_unknown_hook_delete_policy;
mod cs501_reference_deployed_later;
mod cs502_custom_resource_before_crd;
mod cs503_timeout_budget;
mod cs601_foreign_ordering_annotations;
mod cs602_invalid_dialect_value;
mod cs603_dialect_reference_to_nothing;
mod cs604_conflicting_orders;
mod cs605_dialect_cycle;
mod cs900_render_failed;
mod cs901_unused_suppression;
mod cs902_unloadable_chart;

pub use cs000_invalid_yaml::INVALID_YAML;
pub use cs001_resource_group_cycle::RESOURCE_GROUP_CYCLE;
pub use cs002_subchart_cycle::SUBCHART_CYCLE;
pub use cs003_isolated_resource_group::ISOLATED_RESOURCE_GROUP;
pub use cs004_multiple_resource_groups::MULTIPLE_RESOURCE_GROUPS;
pub use cs101_missing_resource_group::MISSING_RESOURCE_GROUP;
pub use cs102_unknown_subchart::UNKNOWN_SUBCHART;
pub use cs103_ambiguous_subchart::AMBIGUOUS_SUBCHART;
pub use cs104_undeclared_subchart::UNDECLARED_SUBCHART;
pub use cs105_subchart_rendered_while_disabled::SUBCHART_RENDERED_WHILE_DISABLED;
pub use cs201_malformed_annotation_value::MALFORMED_ANNOTATION_VALUE;
pub use cs202_unknown_sequencing_annotation::UNKNOWN_SEQUENCING_ANNOTATION;
pub use cs203_sequencing_in_chart_v2::SEQUENCING_IN_CHART_V2;
pub use cs204_invalid_metadata_key::INVALID_METADATA_KEY;
pub use cs205_conflicting_dependency_keys::CONFLICTING_DEPENDENCY_KEYS;
pub use cs301_one_sided_readiness::ONE_SIDED_READINESS;
pub use cs302_malformed_readiness_expression::MALFORMED_READINESS_EXPRESSION;
pub use cs303_non_numeric_ordering_comparison::NON_NUMERIC_ORDERING_COMPARISON;
pub use cs304_readiness_path_outside_status::READINESS_PATH_OUTSIDE_STATUS;
pub use cs305_job_gate_without_readiness::JOB_GATE_WITHOUT_READINESS;
pub use cs306_unjudgeable_readiness::UNJUDGEABLE_READINESS;
pub use cs401_sequencing_on_hook::SEQUENCING_ON_HOOK;
pub use cs402_unknown_hook::UNKNOWN_HOOK;
pub use cs403_invalid_hook_weight::INVALID_HOOK_WEIGHT;
pub use cs404_unknown_hook_delete_policy::UNKNOWN_HOOK_DELETE_POLICY;
pub use cs501_reference_deployed_later::REFERENCE_DEPLOYED_LATER;
pub use cs502_custom_resource_before_crd::CUSTOM_RESOURCE_BEFORE_CRD;
pub use cs503_timeout_budget::TIMEOUT_BUDGET;
pub use cs601_foreign_ordering_annotations::FOREIGN_ORDERING_ANNOTATIONS;
pub use cs602_invalid_dialect_value::INVALID_DIALECT_VALUE;
pub use cs603_dialect_reference_to_nothing::DIALECT_REFERENCE_TO_NOTHING;
pub use cs604_conflicting_orders::CONFLICTING_ORDERS;
pub use cs605_dialect_cycle::DIALECT_CYCLE;
pub use cs900_render_failed::RENDER_FAILED;
pub use cs901_unused_suppression::UNUSED_SUPPRESSION;
pub use cs902_unloadable_chart::UNLOADABLE_CHART;

/// Every rule, in code order.
pub static RULES: &[&Rule] = &[
    &INVALID_YAML,
    &RESOURCE_GROUP_CYCLE,
    &SUBCHART_CYCLE,
    &ISOLATED_RESOURCE_GROUP,
    &MULTIPLE_RESOURCE_GROUPS,
    &MISSING_RESOURCE_GROUP,
    &UNKNOWN_SUBCHART,
    &AMBIGUOUS_SUBCHART,
    &UNDECLARED_SUBCHART,
    &SUBCHART_RENDERED_WHILE_DISABLED,
    &MALFORMED_ANNOTATION_VALUE,
    &UNKNOWN_SEQUENCING_ANNOTATION,
    &SEQUENCING_IN_CHART_V2,
    &INVALID_METADATA_KEY,
    &CONFLICTING_DEPENDENCY_KEYS,
    &ONE_SIDED_READINESS,
    &MALFORMED_READINESS_EXPRESSION,
    &NON_NUMERIC_ORDERING_COMPARISON,
    &READINESS_PATH_OUTSIDE_STATUS,
    &JOB_GATE_WITHOUT_READINESS,
    &UNJUDGEABLE_READINESS,
    &SEQUENCING_ON_HOOK,
    &UNKNOWN_HOOK,
    &INVALID_HOOK_WEIGHT,
    &UNKNOWN_HOOK_DELETE_POLICY,
    &REFERENCE_DEPLOYED_LATER,
    &CUSTOM_RESOURCE_BEFORE_CRD,
    &TIMEOUT_BUDGET,
    &FOREIGN_ORDERING_ANNOTATIONS,
    &INVALID_DIALECT_VALUE,
    &DIALECT_REFERENCE_TO_NOTHING,
    &CONFLICTING_ORDERS,
    &DIALECT_CYCLE,
    &RENDER_FAILED,
    &UNUSED_SUPPRESSION,
    &UNLOADABLE_CHART,
];

/// The checks that report the planner's fatal issues (`PlanIssue`), for `plan` and `template`.
pub static PLAN_ISSUE_CHECKS: &[fn(&Context, &mut Sink)] = &[
    RESOURCE_GROUP_CYCLE.check,
    SUBCHART_CYCLE.check,
    MULTIPLE_RESOURCE_GROUPS.check,
    UNKNOWN_SUBCHART.check,
    AMBIGUOUS_SUBCHART.check,
    cs201_malformed_annotation_value::check_plan_issues,
];

/// The rule with this code or kebab name.
#[must_use]
pub fn find(code_or_name: &str) -> Option<&'static Rule> {
    RULES
        .iter()
        .copied()
        .find(|r| r.code.eq_ignore_ascii_case(code_or_name) || r.name == code_or_name)
}
