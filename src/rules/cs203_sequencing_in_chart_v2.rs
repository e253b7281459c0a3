use crate::lint::{Context, Diagnostic, Sink};
use crate::model::annotations::{
    DEPENDS_ON_GROUPS, READINESS_FAILURE, READINESS_SUCCESS, RESOURCE_GROUP,
};
use crate::parse::{Node, Span};
use crate::source::Loc;

declare_rule! {
    /// ## What it does
    /// Reports sequencing annotations in a chart whose `Chart.yaml` `apiVersion` is not `v3`.
    ///
    /// ## Why is this bad?
    /// Helm limits resource sequencing to charts with `apiVersion: v3`: in a `v2` chart the
    /// annotations are ignored and everything is installed at once.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: v2
    /// name: mychart
    /// ```
    ///
    /// Use instead:
    /// ```yaml
    /// apiVersion: v3
    /// name: mychart
    /// ```
    pub static SEQUENCING_IN_CHART_V2 = ("CS203", "sequencing-in-chart-v2", Warning,
        "sequencing annotations in a chart whose apiVersion is not v3", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    for (id, chart) in ctx.model.charts.iter().enumerate() {
        let Some(info) = &chart.info else { continue };
        let version = info.meta.api_version.as_deref().unwrap_or("v1");
        if version == "v3" {
            continue;
        }
        let first = ctx
            .resources()
            .filter(|(doc, _)| ctx.model.documents[*doc].chart == id)
            .find_map(|(doc, r)| {
                r.annotations
                    .iter()
                    .find(|a| {
                        [
                            RESOURCE_GROUP,
                            DEPENDS_ON_GROUPS,
                            READINESS_SUCCESS,
                            READINESS_FAILURE,
                        ]
                        .contains(&a.key.as_str())
                    })
                    .map(|a| (Some(doc), a.key_loc))
            })
            .or_else(|| info.depends_on_subcharts.as_ref().map(|s| (None, s.loc)))
            .or_else(|| {
                info.dependency_depends_on
                    .first()
                    .map(|(_, s)| (None, s.loc))
            });
        let Some((doc, loc)) = first else { continue };
        let node = &info.meta.node;
        let version_span = node.entry("apiVersion").map_or(
            Span {
                start: node.span.start,
                end: node.span.start,
            },
            |(k, v): (&Node, &Node)| Span {
                start: k.span.start,
                end: v.span.end,
            },
        );
        let mut d = Diagnostic::new(
            &SEQUENCING_IN_CHART_V2,
            id,
            loc,
            format!(
                "chart {} uses sequencing annotations but its apiVersion is {version}, so Helm ignores them",
                chart.display
            ),
        )
        .label("ignored in a chart that is not v3")
        .secondary(Loc { file: info.meta.file, span: version_span }, format!("apiVersion {version}"))
        .help("set `apiVersion: v3` in Chart.yaml");
        if let Some(doc) = doc {
            d = d.doc(doc);
        }
        sink.push(d);
    }
}
