use crate::lint::{Context, Diagnostic, Sink};
use crate::model::Model;
use crate::model::annotations::{
    DEPENDS_ON_GROUPS, DEPENDS_ON_GROUPS_ONE_SLASH, READINESS_FAILURE, READINESS_SUCCESS,
    RESOURCE_GROUP,
};
use crate::parse::{Node, Span};
use crate::source::Loc;
use crate::source::helm::ChartV3;

declare_rule! {
    /// ## What it does
    /// Reports a release whose chart (the root chart, the one `helm install` is given) does not
    /// have `apiVersion: v3` while it, or one of its subcharts, carries sequencing
    /// annotations: resource groups, readiness checks, or subchart `depends-on`. One finding
    /// per chart, at its `apiVersion` line in `Chart.yaml` (the line to change), with the
    /// first sequencing annotation beside it.
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
    /// and each says so on standard error, with the same words and help as lint. Released helm
    /// up to v4.1.4 refuses to render `apiVersion: v3` charts ("invalid chart apiVersion"), so
    /// charts keep `v2` for a while: until the helm you deploy with accepts v3, install with
    /// `chartseq apply`, which sequences the chart. When chartseq renders the chart, it asks
    /// that helm (once) whether it accepts v3 charts and says so in a note.
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

/// The fix: the same in every command and for every helm (what the helm that rendered the
/// chart accepts is a note, [`helm_note`]).
pub(crate) const HELP: &str = "install with `chartseq apply` to get this order now; set `apiVersion: v3` in Chart.yaml once the helm you deploy with accepts v3 charts (helm up to v4.1.4 refuses them)";

/// What the helm that rendered the chart does with `apiVersion: v3` charts, when it was asked.
pub(crate) fn helm_note(chart_v3: &ChartV3) -> Option<String> {
    match chart_v3 {
        ChartV3::Accepted(helm) => Some(format!(
            "helm {helm}, which rendered the chart, accepts `apiVersion: v3` charts: you can set it now"
        )),
        ChartV3::Refused(helm) => Some(format!(
            "helm {helm}, which rendered the chart, refuses `apiVersion: v3` charts"
        )),
        ChartV3::Unknown => None,
    }
}

/// A release that carries sequencing while its root chart is not `apiVersion: v3`.
pub(crate) struct OutsideV3 {
    /// The root chart's `Chart.yaml` name, as Helm names it in its error.
    pub name: String,
    /// Its `apiVersion` (`v1` when absent, as Helm reads it).
    pub version: String,
    /// The first sequencing annotation's key.
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
    let loc = model
        .documents
        .iter()
        .enumerate()
        .filter_map(|(doc, _)| model.resource(doc))
        .filter(|r| r.hook.is_none())
        .find_map(|r| {
            r.annotations
                .iter()
                .find(|a| keys.contains(&a.key.as_str()))
                .map(|a| a.key_loc)
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
                })
        })?;
    Some(OutsideV3 {
        name: info.meta.name.clone(),
        version: version.to_owned(),
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
    // At the line to change, never at a resource: the finding stays where it is (and the
    // same finding in `diff`) whatever templates are edited.
    let mut d = Diagnostic::new(
        &SEQUENCING_IN_CHART_V2,
        0,
        Loc {
            file: info.meta.file,
            span: version_span,
        },
        found.message(),
    )
    .label(format!(
        "apiVersion {}: refused by helm --wait=ordered, ignored by helm without it",
        found.version
    ))
    .secondary(found.loc, "the first sequencing annotation")
    .help(HELP);
    if let Some(note) = helm_note(&ctx.settings.chart_v3) {
        d = d.note(note);
    }
    sink.push(d);
}
