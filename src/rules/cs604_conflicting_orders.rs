use std::collections::BTreeMap;

use crate::lint::{Context, Diagnostic, Sink};
use crate::model::DocId;
use crate::plan::graph::StepGraph;
use crate::plan::{Plan, PlanIssue};
use crate::source::Loc;

declare_rule! {
    /// ## What it does
    /// Reports two sequencing systems on one chart that install the same pair of resources in
    /// opposite orders: HIP-0025 resource groups and another tool's order (an Argo CD wave, a
    /// werf weight or dependency, …), or two other tools. Each system's whole order is computed
    /// (`chartseq plan`, `chartseq plan --dialect <tool>`), and only resources that carry
    /// ordering annotations of both systems are compared, so an order no one wrote (a default
    /// wave, the unsequenced batch) never counts. One finding per pair of steps ordered both
    /// ways, at the annotations of both systems on both resources.
    ///
    /// ## Why is this bad?
    /// The chart installs in one order with Helm and in the opposite one with the other tool:
    /// whichever the author meant, one of them breaks. Usually one of the annotations was not
    /// updated when the other was.
    ///
    /// ## Example
    /// ```yaml
    /// # StatefulSet db
    /// helm.sh/resource-group: db
    /// argocd.argoproj.io/sync-wave: "1"
    /// # Deployment app
    /// helm.sh/resource-group: app
    /// helm.sh/depends-on/resource-groups: '["db"]'
    /// argocd.argoproj.io/sync-wave: "0"
    /// ```
    ///
    /// Use instead: the same order in both, `sync-wave: "0"` on the database and `"1"` on the
    /// application (or drop the annotations of the tool you no longer use).
    pub static CONFLICTING_ORDERS = ("CS604", "conflicting-orders", Error,
        "two sequencing systems on one chart order the same pair of resources in opposite directions", check);
}

/// One sequencing system's order over the resources it places explicitly.
struct System<'a> {
    name: String,
    steps: StepGraph,
    /// First step of each document.
    step_of: BTreeMap<DocId, usize>,
    /// Where each explicitly ordered document's annotation is written.
    annotation: BTreeMap<DocId, Loc>,
    plan: &'a Plan,
}

impl<'a> System<'a> {
    fn new(name: String, plan: &'a Plan, annotation: BTreeMap<DocId, Loc>) -> Self {
        let mut step_of = BTreeMap::new();
        for (i, step) in plan.steps.iter().enumerate() {
            for &doc in &step.resources {
                step_of.entry(doc).or_insert(i);
            }
        }
        Self {
            name,
            steps: StepGraph::new(&plan.steps),
            step_of,
            annotation,
            plan,
        }
    }
}

fn check(ctx: &Context, sink: &mut Sink) {
    let mut systems: Vec<System> = Vec::new();
    let hip: BTreeMap<DocId, Loc> = ctx
        .resources()
        .filter(|(_, r)| r.hook.is_none())
        .filter_map(|(doc, r)| Some((doc, r.seq.group.as_ref()?.loc)))
        .collect();
    // A plan that cannot be made (a cycle, a value refused) is reported by other rules.
    if !hip.is_empty() && ctx.issues.is_empty() {
        systems.push(System::new("Helm's sequencing".to_owned(), &ctx.plan, hip));
    }
    for analysis in ctx.dialect_analyses() {
        let fatal = analysis.issues.iter().any(|i| {
            matches!(
                i,
                PlanIssue::InvalidDialectValue { .. } | PlanIssue::DialectCycle { .. }
            )
        });
        if fatal {
            continue;
        }
        let annotation: BTreeMap<DocId, Loc> = ctx
            .resources()
            .filter_map(|(doc, r)| {
                let a = r
                    .annotations
                    .iter()
                    .find(|a| (analysis.entry.owns_key)(&a.key))?;
                Some((doc, a.value_loc))
            })
            .collect();
        systems.push(System::new(
            analysis.entry.tool.to_owned(),
            &analysis.plan,
            annotation,
        ));
    }
    for (i, first) in systems.iter().enumerate() {
        for second in &systems[i + 1..] {
            compare(ctx, sink, first, second);
        }
    }
}

/// Reports each pair of step pairs that `a` and `b` order in opposite directions.
fn compare(ctx: &Context, sink: &mut Sink, a: &System, b: &System) {
    // Resources in the same step of `a` and the same step of `b` are ordered alike: one class.
    let mut classes: BTreeMap<(usize, usize), Vec<DocId>> = BTreeMap::new();
    for (&doc, &step_a) in &a.step_of {
        let (Some(&step_b), true, true) = (
            b.step_of.get(&doc),
            a.annotation.contains_key(&doc),
            b.annotation.contains_key(&doc),
        ) else {
            continue;
        };
        classes.entry((step_a, step_b)).or_default().push(doc);
    }
    let classes: Vec<(&(usize, usize), &Vec<DocId>)> = classes.iter().collect();
    for &(&(a1, b1), docs1) in &classes {
        for &(&(a2, b2), docs2) in &classes {
            if !(a.steps.before(a1, a2) && b.steps.before(b2, b1)) {
                continue;
            }
            let (Some(&x), Some(&y)) = (docs1.first(), docs2.first()) else {
                continue;
            };
            report(ctx, sink, a, b, (x, y), docs1.len() * docs2.len() - 1);
        }
    }
}

fn report(
    ctx: &Context,
    sink: &mut Sink,
    first: &System,
    second: &System,
    (x, y): (DocId, DocId),
    more: usize,
) {
    let label = |doc| crate::plan::output::label(ctx.model, doc);
    let (lx, ly) = (label(x), label(y));
    let step_name = |s: &System, doc: DocId| {
        let name = s
            .step_of
            .get(&doc)
            .and_then(|&i| s.plan.steps[i].group.clone())
            .unwrap_or_else(|| "unsequenced".to_owned());
        if s.plan.dialect.release_wide() {
            format!("step `{name}`")
        } else {
            format!("group `{name}`")
        }
    };
    let mut finding = Diagnostic::new(
        &CONFLICTING_ORDERS,
        ctx.model.documents[y].chart,
        second.annotation[&y],
        format!(
            "conflicting orders: {} installs {ly} before {lx}, but {} installs {lx} before {ly}",
            second.name, first.name
        ),
    )
    .doc(y)
    .label(format!("{ly} is in {} here", step_name(second, y)))
    .secondary(
        second.annotation[&x],
        format!("{lx} is in {}, after it", step_name(second, x)),
    )
    .secondary(
        first.annotation[&x],
        format!("{lx} is in {} here", step_name(first, x)),
    )
    .secondary(
        first.annotation[&y],
        format!("{ly} is in {}, after it", step_name(first, y)),
    )
    .help(
        "write the same order in both systems, or remove the annotations of the one no longer used",
    );
    if more > 0 {
        finding = finding.note(format!(
            "{more} more pair(s) of resources of the same steps are ordered both ways"
        ));
    }
    sink.push(finding);
}
