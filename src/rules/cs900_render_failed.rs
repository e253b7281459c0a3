use crate::lint::{Context, Sink};

declare_rule! {
    /// ## What it does
    /// Reports a chart that `helm template` refuses to render (a `required` value missing, a
    /// `fail` call, a template that does not parse), at the template line helm names, or at
    /// the chart's `Chart.yaml` when helm names none. The other charts of the run are still
    /// linted.
    ///
    /// ## Why is this bad?
    /// Helm cannot install a chart it cannot render, and nothing in it can be checked. When
    /// the failure depends on values (a `required` value that CI files set), lint the chart
    /// with those values (`-f`, `--ci-values`).
    ///
    /// ## Example
    /// ```yaml
    /// metadata:
    ///   name: {{ .Values.name | required "name is required" }}
    /// ```
    ///
    /// Use instead:
    /// ```yaml
    /// metadata:
    ///   name: {{ .Values.name | default .Release.Name }}
    /// ```
    pub static RENDER_FAILED = ("CS900", "render-failed", Error,
        "helm template cannot render a chart (the other charts are still checked)", check);
}

/// The finding comes from loading the chart, not from a rendered model:
/// [`crate::lint::render_failure`] makes it.
fn check(_: &Context, _: &mut Sink) {}
