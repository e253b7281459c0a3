use crate::lint::{Context, Diagnostic, Sink};
use crate::plan::PlanIssue;

declare_rule! {
    /// ## What it does
    /// Reports a subchart reference (a `depends-on` entry of a `Chart.yaml` dependency, or
    /// the `helm.sh/depends-on/subcharts` annotation) that names no enabled dependency: a
    /// typo, a dependency that is not declared, or one disabled by its condition or tags.
    ///
    /// ## Why is this bad?
    /// Helm refuses to install a chart whose subchart order names a chart it does not have.
    ///
    /// ## Example
    /// ```yaml
    /// dependencies:
    ///   - name: app
    ///     depends-on: [postgres]   # the dependency is called postgresql
    ///   - name: postgresql
    /// ```
    ///
    /// Use instead: the dependency's name, or its alias when it has one.
    pub static UNKNOWN_SUBCHART = ("CS102", "unknown-subchart", Error,
        "a subchart reference names no enabled dependency", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    disabled_lists(ctx, sink);
    for issue in &ctx.issues {
        let PlanIssue::UnknownSubchart {
            chart,
            reference,
            loc,
            disabled,
        } = issue
        else {
            continue;
        };
        let c = &ctx.model.charts[*chart];
        let names: Vec<&str> = c
            .children
            .iter()
            .map(|&i| &ctx.model.charts[i])
            .filter(|ch| ch.declared)
            .map(|ch| ch.name.as_str())
            .collect();
        let (message, help) = if *disabled {
            let why = c
                .children
                .iter()
                .map(|&i| &ctx.model.charts[i])
                .find(|ch| ch.answers_to(reference))
                .and_then(|ch| ch.disabled_by.clone())
                .unwrap_or_else(|| "its condition or tags".into());
            (
                format!(
                    "subchart `{reference}` of chart {} is disabled ({why}), so nothing can depend on it",
                    c.display
                ),
                "enable the subchart, or drop it from the depends-on list when it is disabled"
                    .to_owned(),
            )
        } else {
            let similar = names
                .iter()
                .filter(|n| strsim::damerau_levenshtein(n, reference) <= 3)
                .min_by_key(|n| strsim::damerau_levenshtein(n, reference));
            (
                format!("`{reference}` is not a dependency of chart {}", c.display),
                match similar {
                    Some(s) => format!("did you mean `{s}`?"),
                    None if names.is_empty() => "the chart declares no dependencies".to_owned(),
                    None => format!("dependencies are: {}", names.join(", ")),
                },
            )
        };
        sink.push(
            Diagnostic::new(&UNKNOWN_SUBCHART, *chart, *loc, message)
                .label(format!("`{reference}` named here"))
                .help(help),
        );
    }
}

/// The `depends-on` of a subchart the values disable: the plan leaves it out (as Helm does),
/// but a name that is no dependency of the chart at all is wrong whatever the values, and
/// breaks the install the day the subchart is enabled.
fn disabled_lists(ctx: &Context, sink: &mut Sink) {
    let model = ctx.model;
    for (id, c) in model.charts.iter().enumerate() {
        let Some(info) = &c.info else { continue };
        let children: Vec<&crate::model::Chart> = c
            .children
            .iter()
            .map(|&i| &model.charts[i])
            .filter(|ch| ch.declared)
            .collect();
        let known = |reference: &str| children.iter().any(|ch| ch.answers_to(reference));
        for (name, list) in &info.dependency_depends_on {
            let Some(sub) = children.iter().find(|ch| ch.name == *name) else {
                continue;
            };
            if sub.enabled {
                continue;
            }
            let Ok(references) = &list.value else {
                continue;
            };
            for reference in references.iter().filter(|r| !known(r)) {
                let why = sub
                    .disabled_by
                    .clone()
                    .unwrap_or_else(|| "its condition or tags".into());
                let names: Vec<&str> = children.iter().map(|ch| ch.name.as_str()).collect();
                sink.push(
                    Diagnostic::new(
                        &UNKNOWN_SUBCHART,
                        id,
                        list.loc,
                        format!(
                            "`{reference}` is not a dependency of chart {}, named by subchart `{name}`, which is disabled now ({why}) and fails the install once enabled",
                            c.display
                        ),
                    )
                    .label(format!("`{reference}` named here"))
                    .help(format!("dependencies are: {}", names.join(", "))),
                );
            }
        }
    }
}
