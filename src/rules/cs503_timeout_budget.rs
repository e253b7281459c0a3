use crate::lint::{Context, Diagnostic, Sink};

declare_rule! {
    /// ## What it does
    /// Reports when the longest chain of steps that wait for each other (subcharts, then
    /// resource groups, then unsequenced resources), multiplied by `--readiness-timeout`,
    /// exceeds `--timeout` (Helm's defaults: 1m and 5m).
    ///
    /// ## Why is this bad?
    /// Each step may wait up to the readiness timeout; if every wait is slow, the release
    /// times out part-way, with some groups installed and others not.
    ///
    /// ## Example
    /// Seven groups in a chain with the default timeouts: 7 × 1m > 5m.
    ///
    /// Use instead: raise `--timeout`, or flatten the chain where groups do not really
    /// depend on each other.
    pub static TIMEOUT_BUDGET = ("CS503", "timeout-budget", Info,
        "the longest dependency chain times readiness-timeout exceeds --timeout", check);
}

fn human(d: std::time::Duration) -> String {
    let s = d.as_secs();
    match (s / 60, s % 60) {
        (0, s) => format!("{s}s"),
        (m, 0) => format!("{m}m"),
        (m, s) => format!("{m}m{s}s"),
    }
}

fn check(ctx: &Context, sink: &mut Sink) {
    let steps = &ctx.plan.steps;
    if steps.is_empty() {
        return;
    }
    // Longest chain ending at each step; steps only name earlier steps as prerequisites.
    // A step holding no resource (only empty documents) waits for nothing.
    let waits = |i: usize| {
        usize::from(
            steps[i]
                .resources
                .iter()
                .any(|&d| ctx.model.resource(d).is_some()),
        )
    };
    let mut depth: Vec<usize> = (0..steps.len()).map(waits).collect();
    let mut from: Vec<Option<usize>> = vec![None; steps.len()];
    for (i, step) in steps.iter().enumerate() {
        for &a in &step.after {
            if a < i && depth[a] + waits(i) > depth[i] {
                depth[i] = depth[a] + waits(i);
                from[i] = Some(a);
            }
        }
    }
    let Some((last, &longest)) = depth
        .iter()
        .enumerate()
        .max_by_key(|(i, d)| (**d, usize::MAX - i))
    else {
        return;
    };
    let settings = ctx.settings;
    let budget = settings
        .readiness_timeout
        .saturating_mul(u32::try_from(longest).unwrap_or(u32::MAX));
    if budget <= settings.timeout {
        return;
    }
    let mut chain = vec![last];
    while let Some(prev) = chain.last().and_then(|&s| from[s]) {
        chain.push(prev);
    }
    chain.retain(|&s| waits(s) == 1);
    chain.reverse();
    let names: Vec<String> = chain.iter().map(|&s| ctx.step_name(s)).collect();
    let model = ctx.model;
    let step = &steps[last];
    let Some(&doc) = step
        .resources
        .iter()
        .find(|&&d| model.resource(d).is_some())
        .or(step.resources.first())
    else {
        return;
    };
    let loc = model
        .resource(doc)
        .and_then(|r| r.seq.group.as_ref().map(|g| g.loc).or(Some(r.kind_loc)))
        .unwrap_or(crate::source::Loc {
            file: model.documents[doc].file,
            span: model.documents[doc].span,
        });
    sink.push(
        Diagnostic::new(
            &TIMEOUT_BUDGET,
            step.chart,
            loc,
            format!(
                "{longest} steps wait for each other: {longest} × {} readiness timeout = {} exceeds the {} release timeout",
                human(settings.readiness_timeout),
                human(budget),
                human(settings.timeout)
            ),
        )
        .label("the last step of the longest chain")
        .note(format!("the chain: {}", names.join(" -> ")))
        .help(format!(
            "raise --timeout to at least {}, or shorten the chain",
            human(budget)
        )),
    );
}
