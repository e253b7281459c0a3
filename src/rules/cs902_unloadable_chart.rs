use crate::lint::{Context, Sink};

declare_rule! {
    /// ## What it does
    /// Reports a chart whose own files chartseq cannot load: a `Chart.yaml` or `values.yaml`
    /// that is not YAML or not a mapping, a `Chart.yaml` without a `name`, `dependencies` that
    /// are not a list, a subchart archive that is not one, a chart tree beyond the size
    /// limits. The finding points at the place loading stopped; the other charts of the run
    /// are still linted.
    ///
    /// ## Why is this bad?
    /// Helm refuses such a chart as well: it cannot be installed, and nothing in it can be
    /// checked.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: v2
    /// name: [app
    /// ```
    ///
    /// Use instead:
    /// ```yaml
    /// apiVersion: v2
    /// name: app
    /// ```
    pub static UNLOADABLE_CHART = ("CS902", "unloadable-chart", Error,
        "a chart whose own files cannot be loaded (the other charts are still checked)", check);
}

/// The finding comes from loading the chart, not from a rendered model:
/// [`crate::lint::load_failure`] makes it.
fn check(_: &Context, _: &mut Sink) {}
