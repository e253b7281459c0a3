use crate::lint::{Context, Diagnostic, Sink};
use crate::plan::PlanIssue;

declare_rule! {
    /// ## What it does
    /// Reports subcharts of one chart whose `depends-on` (in `Chart.yaml` `dependencies`)
    /// form a cycle, with where each edge is declared.
    ///
    /// ## Why is this bad?
    /// Every subchart is installed completely before the subcharts that depend on it; in a
    /// cycle none can go first, so the chart cannot be installed at all.
    ///
    /// ## Example
    /// ```yaml
    /// dependencies:
    ///   - name: db
    ///     depends-on: [cache]
    ///   - name: cache
    ///     depends-on: [db]
    /// ```
    ///
    /// Use instead: remove one of the `depends-on` entries.
    pub static SUBCHART_CYCLE = ("CS002", "subchart-cycle", Error,
        "subchart depends-on forms a cycle", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    for issue in &ctx.issues {
        let PlanIssue::SubchartCycle { chart, path, edges } = issue else {
            continue;
        };
        let Some(&first) = edges.first() else {
            continue;
        };
        let chart_name = &ctx.model.charts[*chart].display;
        let label = |i: usize| super::cs001_resource_group_cycle::edge_label(path, i);
        let mut d = Diagnostic::new(
            &SUBCHART_CYCLE,
            *chart,
            first,
            format!(
                "subcharts of chart {chart_name} form a cycle: {}",
                path.join(" -> ")
            ),
        )
        .label(label(0))
        .help("each subchart is installed before those that depend on it; remove one depends-on entry");
        for (i, loc) in edges.iter().enumerate().skip(1) {
            d = d.secondary(*loc, label(i));
        }
        sink.push(d);
    }
}
