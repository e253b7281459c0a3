use crate::lint::{Context, Diagnostic, Sink};
use crate::parse::Span;
use crate::source::Loc;

declare_rule! {
    /// ## What it does
    /// Reports a subchart whose documents are in the rendered stream although the values
    /// chartseq was given disable it (its `condition` or `tags`).
    ///
    /// ## Why is this bad?
    /// The stream was rendered with other values than the ones checked: what lint, plan and
    /// apply see is not what those values would install. chartseq never drops a rendered
    /// document: the subchart is kept and planned as enabled, but its place in the order and
    /// every other finding depend on values nobody named.
    ///
    /// ## Example
    /// ```sh
    /// helm template r ./app --set db.enabled=true | chartseq lint - --chart ./app
    /// ```
    ///
    /// Use instead: pass the same values to both.
    /// ```sh
    /// helm template r ./app --set db.enabled=true | chartseq lint - --chart ./app --set db.enabled=true
    /// ```
    pub static SUBCHART_RENDERED_WHILE_DISABLED = ("CS105", "subchart-rendered-while-disabled", Warning,
        "the stream holds documents of a subchart the given values disable", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    let model = ctx.model;
    for (id, chart) in model.charts.iter().enumerate() {
        let Some(why) = &chart.rendered_while_disabled else {
            continue;
        };
        let Some(parent) = chart.parent else { continue };
        let Some(info) = &model.charts[parent].info else {
            continue;
        };
        // The parent's dependency entry: its condition (or tags) when written.
        let entry = chart.info.as_ref().and_then(|i| i.dependency.as_ref());
        let span = entry.map_or(
            Span {
                start: info.meta.node.span.start,
                end: info.meta.node.span.start,
            },
            |dep| {
                dep.node
                    .entry("condition")
                    .or_else(|| dep.node.entry("tags"))
                    .map_or(dep.node.span, |(k, _)| k.span)
            },
        );
        sink.push(
            Diagnostic::new(
                &SUBCHART_RENDERED_WHILE_DISABLED,
                id,
                Loc {
                    file: info.meta.file,
                    span,
                },
                format!(
                    "the stream holds documents of subchart `{}`, which {why} disables with the given values",
                    chart.display
                ),
            )
            .label(format!("`{}` would not be rendered with these values", chart.name))
            .help(
                "pass the values the stream was rendered with (-f/--set); its documents are kept and planned as enabled",
            ),
        );
    }
}
