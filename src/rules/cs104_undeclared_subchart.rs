use crate::lint::{Context, Diagnostic, Sink};
use crate::parse::Span;
use crate::source::Loc;

declare_rule! {
    /// ## What it does
    /// Reports a subchart that renders resources (it sits in `charts/`) but is not listed in
    /// the parent's `Chart.yaml` `dependencies`. Hooks do not count: they are never sequenced.
    ///
    /// ## Why is this bad?
    /// An undeclared subchart cannot be named in `depends-on`, has no condition or tags, and
    /// is installed after every declared subchart: its order is an accident.
    ///
    /// ## Example
    /// ```text
    /// mychart/charts/extra/   # not in mychart/Chart.yaml dependencies
    /// ```
    ///
    /// Use instead: declare it.
    /// ```yaml
    /// dependencies:
    ///   - name: extra
    ///     version: 1.0.0
    /// ```
    pub static UNDECLARED_SUBCHART = ("CS104", "undeclared-subchart", Warning,
        "a rendered subchart is not in Chart.yaml dependencies", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    let model = ctx.model;
    for (id, chart) in model.charts.iter().enumerate() {
        let Some(parent) = chart.parent else { continue };
        if chart.declared || !chart.enabled {
            continue;
        }
        let Some(info) = &model.charts[parent].info else {
            continue;
        };
        // Hooks are never sequenced: a subchart that renders only hooks has nothing to order.
        if !model.documents.iter().enumerate().any(|(doc, d)| {
            d.chart == id
                && !d.is_comment_only()
                && model.resource(doc).is_none_or(|r| r.hook.is_none())
        }) {
            continue;
        }
        let node = &info.meta.node;
        let span = node
            .entry("dependencies")
            .or_else(|| node.entry("name"))
            .map_or(
                Span {
                    start: node.span.start,
                    end: node.span.start,
                },
                |(k, _)| k.span,
            );
        sink.push(
            Diagnostic::new(
                &UNDECLARED_SUBCHART,
                id,
                Loc { file: info.meta.file, span },
                format!(
                    "subchart `{}` renders resources but chart {} does not declare it in Chart.yaml dependencies",
                    chart.name, model.charts[parent].display
                ),
            )
            .label(format!("`{}` is missing here", chart.name))
            .help(format!(
                "add `- name: {}` to dependencies so that it can be ordered and enabled like the others",
                chart.name
            )),
        );
    }
}
