use crate::lint::{Context, Diagnostic, Sink};
use crate::model::annotations::{
    DEPENDS_ON_GROUPS_ONE_SLASH, DEPENDS_ON_SUBCHARTS, ListError, NameList, READINESS_FAILURE,
    READINESS_SUCCESS, Spanned,
};
use crate::plan::PlanIssue;

declare_rule! {
    /// ## What it does
    /// Reports a list annotation (`helm.sh/depends-on/resource-groups`,
    /// `helm.sh/readiness-success`, `helm.sh/readiness-failure`, and
    /// `helm.sh/depends-on/subcharts` in `Chart.yaml`) whose value is not a JSON array of
    /// non-empty strings inside a string. The corrected, quoted value is shown when it can
    /// be guessed.
    /// Not checked on hooks, whose annotations are ignored (CS401 says so).
    ///
    /// ## Why is this bad?
    /// Kubernetes annotation values are strings: a YAML list is rejected, and a
    /// comma-separated string is not JSON. Helm cannot decode the value and the resource
    /// silently loses its place in the order.
    ///
    /// ## Example
    /// ```yaml
    /// helm.sh/depends-on/resource-groups: ["db"]      # a YAML list, as in the HIP's example
    /// helm.sh/depends-on/resource-groups: db, queue   # not JSON
    /// ```
    ///
    /// Use instead:
    /// ```yaml
    /// helm.sh/depends-on/resource-groups: '["db", "queue"]'
    /// ```
    pub static MALFORMED_ANNOTATION_VALUE = ("CS201", "malformed-annotation-value", Error,
        "a list annotation is not a JSON array of non-empty strings in a string", check);
}

fn diagnostic(chart: usize, key: &str, list: &Spanned<NameList>, error: &ListError) -> Diagnostic {
    let why = match error {
        ListError::NotAString { .. } => {
            "annotation values must be strings: Kubernetes rejects a YAML list and Helm cannot decode it"
        }
        ListError::InvalidJson { .. } => {
            "Helm decodes the value as JSON and ignores it when it cannot"
        }
        _ => "Helm expects a JSON array of names",
    };
    let help = match error.suggestion() {
        Some(s) => format!("write it as a quoted JSON array: `{key}: {s}`"),
        None => format!("write it as a quoted JSON array of names: `{key}: '[\"name\"]'`"),
    };
    Diagnostic::new(
        &MALFORMED_ANNOTATION_VALUE,
        chart,
        list.loc,
        format!("`{key}` is malformed: {}", error.describe()),
    )
    .label("not a JSON array in a string")
    .note(why)
    .help(help)
}

fn check(ctx: &Context, sink: &mut Sink) {
    // A hook's sequencing and readiness annotations are ignored: CS401 is the one finding.
    for (doc, r) in ctx.resources().filter(|(_, r)| r.hook.is_none()) {
        let chart = ctx.model.documents[doc].chart;
        for (key, list) in [
            (r.seq.depends_on_key(), &r.seq.depends_on),
            (DEPENDS_ON_GROUPS_ONE_SLASH, &r.seq.depends_on_also),
            (READINESS_SUCCESS, &r.seq.readiness_success),
            (READINESS_FAILURE, &r.seq.readiness_failure),
        ] {
            if let Some(list @ Spanned { value: Err(e), .. }) = list {
                let mut d = diagnostic(chart, key, list, e).doc(doc);
                if key == r.seq.depends_on_key() {
                    d = d.note("the resource is installed with the unsequenced resources");
                }
                sink.push(d);
            }
        }
    }
    check_plan_issues(ctx, sink);
}

/// Malformed subchart lists, which make the plan impossible.
pub(crate) fn check_plan_issues(ctx: &Context, sink: &mut Sink) {
    for issue in &ctx.issues {
        if let PlanIssue::MalformedSubchartList { chart, error, loc } = issue {
            let key = if ctx.model.charts[*chart]
                .info
                .as_ref()
                .and_then(|i| i.depends_on_subcharts.as_ref())
                .is_some_and(|s| s.loc == *loc)
            {
                DEPENDS_ON_SUBCHARTS
            } else {
                "depends-on"
            };
            let list = Spanned {
                value: Err(error.clone()),
                loc: *loc,
            };
            let mut d = diagnostic(*chart, key, &list, error);
            if key == "depends-on" {
                d = d.help("`depends-on` of a dependency is a plain YAML list of names: `depends-on: [db]`");
            }
            sink.push(d);
        }
    }
}
