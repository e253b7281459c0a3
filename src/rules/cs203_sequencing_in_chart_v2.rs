use crate::lint::{Context, Diagnostic, Sink};
use crate::model::annotations::{
    DEPENDS_ON_GROUPS, DEPENDS_ON_GROUPS_ONE_SLASH, READINESS_FAILURE, READINESS_SUCCESS,
    RESOURCE_GROUP,
};
use crate::model::{DocId, Model};
use crate::parse::{Node, Span};
use crate::source::Loc;
use crate::source::helm::ChartV3;

declare_rule! {
    /// ## What it does
    /// Reports a release whose chart (the root chart, the one `helm install` is given) does not
    /// have `apiVersion: v3` while it, or one of its subcharts, carries sequencing
    /// annotations: resource groups, readiness checks, or subchart `depends-on`. One finding
    /// per chart, at the first sequencing annotation, with the chart's `apiVersion` beside it.
    ///
    /// ## Why is this bad?
    /// The reference implementation of HIP-0025 (the split pull requests of helm/helm#32314)
    /// sequences only `apiVersion: v3` charts: `helm install --wait=ordered` on any other
    /// chart fails with `--wait=ordered requires chart apiVersion v3 (chart "X" has apiVersion
    /// v2)`, and without `--wait=ordered` (as with every released helm) the chart is installed
    /// all at once, its groups, subchart order and readiness checks ignored. A v2 subchart
    /// of a v3 chart is sequenced like the rest, so it is not reported.
    ///
    /// `chartseq plan`, `template` and `apply` still sequence such a chart, as if it were v3,
    /// and each says so on standard error: released helm up to v4.1.4 refuses to render
    /// `apiVersion: v3` charts ("invalid chart apiVersion"), so charts keep `v2` for a while.
    /// The advice depends on the helm: when chartseq renders the chart, it asks that helm
    /// (once) whether it accepts v3 charts and says so. With a helm that refuses them, keep
    /// `v2`, deploy with `chartseq apply`, and ignore this rule (`ignore = ["CS203"]`) until
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
        "sequencing annotations in a release whose chart's apiVersion is not v3", check);
}

/// The fix, as far as the helm that rendered the chart allows it.
pub(crate) fn advice(chart_v3: &ChartV3, version: &str) -> String {
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

/// A release that carries sequencing while its root chart is not `apiVersion: v3`.
pub(crate) struct OutsideV3 {
    /// The root chart's `Chart.yaml` name, as Helm names it in its error.
    pub name: String,
    /// Its `apiVersion` (`v1` when absent, as Helm reads it).
    pub version: String,
    /// The first sequencing annotation: its document (none for `Chart.yaml`) and key.
    pub doc: Option<DocId>,
    pub loc: Loc,
}

impl OutsideV3 {
    /// What each Helm does with the chart, and what chartseq does: the one wording of lint,
    /// `plan`, `template` and `apply`.
    pub(crate) fn message(&self) -> String {
        let (name, version) = (&self.name, &self.version);
        format!(
            "chart {name} has apiVersion {version} and sequencing annotations: helm with HIP-0025 refuses it (`--wait=ordered requires chart apiVersion v3 (chart \"{name}\" has apiVersion {version})`), and without --wait=ordered, as every released helm, installs it all at once, ignoring them; chartseq plans and applies it sequenced, as if it were v3"
        )
    }
}

/// The release's sequencing outside v3, if any. Only the root chart's `apiVersion` counts: the
/// reference checks the chart it installs, and sequences a v2 subchart of a v3 chart. A
/// stream without its chart has no known `apiVersion` and is never reported.
pub(crate) fn outside_v3(model: &Model) -> Option<OutsideV3> {
    let info = model.charts.first()?.info.as_ref()?;
    let version = info.meta.api_version.as_deref().unwrap_or("v1");
    if version == "v3" {
        return None;
    }
    let keys = [
        RESOURCE_GROUP,
        DEPENDS_ON_GROUPS,
        DEPENDS_ON_GROUPS_ONE_SLASH,
        READINESS_SUCCESS,
        READINESS_FAILURE,
    ];
    let (doc, loc) = model
        .documents
        .iter()
        .enumerate()
        .filter_map(|(doc, _)| model.resource(doc).map(|r| (doc, r)))
        .filter(|(_, r)| r.hook.is_none())
        .find_map(|(doc, r)| {
            r.annotations
                .iter()
                .find(|a| keys.contains(&a.key.as_str()))
                .map(|a| (Some(doc), a.key_loc))
        })
        .or_else(|| {
            model
                .charts
                .iter()
                .filter_map(|c| c.info.as_ref())
                .find_map(|i| {
                    i.depends_on_subcharts
                        .as_ref()
                        .map(|s| s.loc)
                        .or_else(|| i.dependency_depends_on.first().map(|(_, s)| s.loc))
                        .map(|loc| (None, loc))
                })
        })?;
    Some(OutsideV3 {
        name: info.meta.name.clone(),
        version: version.to_owned(),
        doc,
        loc,
    })
}

fn check(ctx: &Context, sink: &mut Sink) {
    let Some(found) = outside_v3(ctx.model) else {
        return;
    };
    let Some(info) = ctx.model.charts.first().and_then(|c| c.info.as_ref()) else {
        return;
    };
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
    let mut d = Diagnostic::new(&SEQUENCING_IN_CHART_V2, 0, found.loc, found.message())
        .label("refused by helm --wait=ordered, ignored by helm without it")
        .secondary(
            Loc {
                file: info.meta.file,
                span: version_span,
            },
            format!("apiVersion {}", found.version),
        )
        .help(advice(&ctx.settings.chart_v3, &found.version));
    if let Some(doc) = found.doc {
        d = d.doc(doc);
    }
    sink.push(d);
}
