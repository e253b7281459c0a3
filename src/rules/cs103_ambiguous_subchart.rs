use crate::lint::{Context, Diagnostic, Sink};
use crate::plan::PlanIssue;

declare_rule! {
    /// ## What it does
    /// Reports a subchart reference that matches several dependencies: the same chart
    /// included twice under different aliases, referenced by its chart name.
    ///
    /// ## Why is this bad?
    /// Helm cannot tell which copy is meant and refuses the chart.
    ///
    /// ## Example
    /// ```yaml
    /// dependencies:
    ///   - {name: redis, alias: cache}
    ///   - {name: redis, alias: queue}
    ///   - {name: app, depends-on: [redis]}
    /// ```
    ///
    /// Use instead: `depends-on: [cache]` (the alias).
    pub static AMBIGUOUS_SUBCHART = ("CS103", "ambiguous-subchart", Error,
        "a reference matches several dependencies", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    for issue in &ctx.issues {
        let PlanIssue::AmbiguousSubchart {
            chart,
            reference,
            matches,
            loc,
        } = issue
        else {
            continue;
        };
        sink.push(
            Diagnostic::new(
                &AMBIGUOUS_SUBCHART,
                *chart,
                *loc,
                format!(
                    "subchart reference `{reference}` of chart {} matches {}",
                    ctx.model.charts[*chart].display,
                    matches.join(" and ")
                ),
            )
            .label(format!("`{reference}` is ambiguous"))
            .help(format!("name one alias: {}", matches.join(" or "))),
        );
    }
}
