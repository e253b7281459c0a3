use crate::lint::{Context, Diagnostic, Sink};
use crate::model::annotations::{
    DEPENDS_ON_GROUPS, READINESS_FAILURE, READINESS_SUCCESS, RESOURCE_GROUP,
};
use crate::parse::{Node, Span};
use crate::source::Loc;
use crate::source::helm::ChartV3;

declare_rule! {
    /// ## What it does
    /// Reports sequencing annotations in a chart whose `Chart.yaml` `apiVersion` is not `v3`.
    ///
    /// ## Why is this bad?
    /// The reference implementation of HIP-0025 sequences charts of any `apiVersion`, and so
    /// do `chartseq plan`, `template` and `apply`; but Helm's maintainers asked to limit
    /// sequencing to charts with `apiVersion: v3`, so a Helm release may install such a chart
    /// all at once, ignoring its groups, subchart order and readiness checks.
    ///
    /// Released helm up to v4.1.4 refuses to render `apiVersion: v3` charts ("invalid chart
    /// apiVersion"), so the advice depends on the helm: when chartseq renders the chart, it
    /// asks that helm (once) whether it accepts v3 charts and says so. With a helm that
    /// refuses them, keep `v2` for now and silence this rule (`ignore = ["CS203"]`) until
    /// you move.
    ///
    /// ## Example
    /// ```yaml
    /// apiVersion: v2
    /// name: mychart
    /// ```
    ///
    /// Use instead, once the helm you render and deploy with accepts it:
    /// ```yaml
    /// apiVersion: v3
    /// name: mychart
    /// ```
    pub static SEQUENCING_IN_CHART_V2 = ("CS203", "sequencing-in-chart-v2", Warning,
        "sequencing annotations in a chart whose apiVersion is not v3", check);
}

/// The fix, as far as the helm that rendered the chart allows it.
fn advice(chart_v3: &ChartV3, version: &str) -> String {
    match chart_v3 {
        ChartV3::Accepted(helm) => {
            format!("set `apiVersion: v3` in Chart.yaml (helm {helm}, which rendered it, accepts v3 charts)")
        }
        ChartV3::Refused(helm) => format!(
            "keep `apiVersion: {version}` while you render with helm {helm}, which refuses `apiVersion: v3` charts; move to v3 once your helm accepts it, and ignore CS203 until then"
        ),
        ChartV3::Unknown => "set `apiVersion: v3` in Chart.yaml once the helm you deploy with accepts v3 charts (helm up to v4.1.4 refuses them)".to_owned(),
    }
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
                "chart {} uses sequencing annotations with apiVersion {version}: chartseq and the reference implementation sequence it, but Helm's maintainers asked to limit sequencing to v3 charts, so a Helm release may ignore them",
                chart.display
            ),
        )
        .label("ignored by a Helm that sequences only v3 charts")
        .secondary(Loc { file: info.meta.file, span: version_span }, format!("apiVersion {version}"))
        .help(advice(&ctx.settings.chart_v3, version));
        if let Some(doc) = doc {
            d = d.doc(doc);
        }
        sink.push(d);
    }
}
