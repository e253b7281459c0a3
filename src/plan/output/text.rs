//! The readable plan: `helm dag`'s chart section, framed by the CRD and hook phases, with the
//! resources of every step. Nested levels are named `parent/sub` (the one display path of
//! every output). A list that does not fit a line is wrapped below its title and, unless
//! `verbose`, cut after [`SHOWN`] names with a count of the rest; steps are numbered from 1, as
//! the JSON plan's `step` and `after_steps`.

use std::io::{self, Write};

use crate::model::{DocId, Model};
use crate::plan::{Level, Plan};
use crate::safe::one_line;

/// A document's label, on one line: a name from the input cannot start a line of its own.
fn label(model: &Model, doc: DocId) -> String {
    one_line(&super::label(model, doc)).into_owned()
}

/// The width a list line is wrapped at.
const WIDTH: usize = 100;

/// The names a long list shows without `--verbose`.
pub(super) const SHOWN: usize = 10;

/// How a text plan is written.
#[derive(Clone, Copy)]
struct View {
    /// Every name of every list, not the first [`SHOWN`].
    verbose: bool,
}

/// `{indent}{title}: a, b, c` when it fits [`WIDTH`]; else the title with the count, then the
/// names wrapped below it, the first [`SHOWN`] unless verbose and a count of the rest.
fn write_items(
    out: &mut dyn Write,
    view: View,
    indent: &str,
    title: &str,
    items: &[String],
) -> io::Result<()> {
    if items.is_empty() {
        return writeln!(out, "{indent}{title}: (none)");
    }
    let joined = items.join(", ");
    if indent.len() + title.chars().count() + 2 + joined.chars().count() <= WIDTH {
        return writeln!(out, "{indent}{title}: {joined}");
    }
    writeln!(out, "{indent}{title} ({}):", items.len())?;
    let inner = format!("{indent}    ");
    let shown = if view.verbose {
        items.len()
    } else {
        items.len().min(SHOWN)
    };
    let mut line = String::new();
    for (i, item) in items[..shown].iter().enumerate() {
        let last = i + 1 == shown;
        let piece = if last {
            item.clone()
        } else {
            format!("{item},")
        };
        if !line.is_empty()
            && inner.len() + line.chars().count() + 1 + piece.chars().count() > WIDTH
        {
            writeln!(out, "{inner}{line}")?;
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&piece);
    }
    if !line.is_empty() {
        writeln!(out, "{inner}{line}")?;
    }
    if shown < items.len() {
        writeln!(
            out,
            "{inner}… and {} more (--verbose lists them all)",
            items.len() - shown
        )?;
    }
    Ok(())
}

/// Names joined for a line, each on one line.
fn names(names: &[String]) -> String {
    names
        .iter()
        .map(|n| one_line(n))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn write(
    out: &mut dyn Write,
    model: &Model,
    plan: &Plan,
    uninstall: bool,
    verbose: bool,
) -> io::Result<()> {
    let view = View { verbose };
    if uninstall {
        return write_uninstall(out, view, model, plan);
    }
    if plan.dialect.release_wide() {
        return write_release_wide(out, view, model, plan);
    }
    if plan.dialect == crate::plan::Dialect::Draft {
        writeln!(
            out,
            "In the draft HIP's order (its layers and weights as resource groups, per chart level):"
        )?;
    }
    write_list(
        out,
        view,
        "CRDs (applied first)",
        plan.crds.iter().map(|&d| label(model, d)),
    )?;
    write_hooks(out, view, model, plan, "pre-install")?;
    // Each group's step, found once: a release may have a hundred thousand groups.
    let steps: GroupSteps<'_> = plan
        .steps
        .iter()
        .filter_map(|s| Some(((s.chart, s.group.as_deref()?), s)))
        .collect();
    if let Some(root) = plan.levels.first() {
        write_level(out, view, model, plan, &steps, root, 0)?;
    }
    write_hooks(out, view, model, plan, "post-install")
}

/// A release-wide dialect: its steps in order (each waits for the one before), then what its
/// tool never applies on install.
fn write_release_wide(
    out: &mut dyn Write,
    view: View,
    model: &Model,
    plan: &Plan,
) -> io::Result<()> {
    let root = one_line(model.charts.first().map_or("", |c| c.display.as_str()));
    writeln!(
        out,
        "Release {root} in {} order (subcharts included; each step waits for the one before unless noted):",
        plan.dialect.name()
    )?;
    write_list(
        out,
        view,
        "  Applied first",
        plan.crds.iter().map(|&d| label(model, d)),
    )?;
    if plan.steps.is_empty() {
        writeln!(out, "  (no steps)")?;
    }
    for (i, step) in plan.steps.iter().enumerate() {
        let what = one_line(step.group.as_deref().unwrap_or("not objects"));
        let resources: Vec<String> = step.resources.iter().map(|&d| label(model, d)).collect();
        let chained =
            (step.after.len() == 1 && step.after[0] + 1 == i) || (step.after.is_empty() && i == 0);
        let note = if chained {
            String::new()
        } else if step.after.is_empty() {
            " (waits for nothing)".to_owned()
        } else {
            let after: Vec<String> = step.after.iter().map(|a| (a + 1).to_string()).collect();
            format!(" (after {})", after.join(", "))
        };
        write_items(
            out,
            view,
            "  ",
            &format!("{}. {what}{note}", i + 1),
            &resources,
        )?;
    }
    if !plan.external.is_empty() {
        writeln!(out, "Waits for objects outside the release to exist:")?;
        for (&doc, external) in &plan.external {
            for e in external {
                writeln!(
                    out,
                    "  {} waits for {}, from {}",
                    label(model, doc),
                    one_line(&e.written()),
                    one_line(&e.key)
                )?;
            }
        }
    }
    let tracking = crate::plan::werf::written_tracking(model, plan);
    if !tracking.is_empty() {
        writeln!(
            out,
            "Tracked as the chart says (werf's fail mode and failures):"
        )?;
        for (doc, tracked, written) in tracking {
            let written: Vec<String> = written
                .iter()
                .map(|(key, value, _)| format!("{key}: {value}"))
                .collect();
            writeln!(
                out,
                "  {}: {}, from {}",
                label(model, doc),
                tracked.describe_tracking(),
                one_line(&written.join(", "))
            )?;
        }
    }
    if plan.dialect.hooks_are_resources() {
        write_list(
            out,
            view,
            &format!(
                "Helm hooks applied as ordinary resources ({} does not read helm.sh/hook)",
                plan.dialect.tool()
            ),
            super::hooks_as_resources(model, plan)
                .into_iter()
                .map(|d| label(model, d)),
        )?;
    }
    write_list(
        out,
        view,
        "Not applied on install",
        plan.not_installed.iter().map(|&d| label(model, d)),
    )
}

fn write_list(
    out: &mut dyn Write,
    view: View,
    title: &str,
    items: impl Iterator<Item = String>,
) -> io::Result<()> {
    let items: Vec<String> = items.collect();
    let indent = &title[..title.len() - title.trim_start().len()];
    write_items(out, view, indent, title.trim_start(), &items)
}

fn write_hooks(
    out: &mut dyn Write,
    view: View,
    model: &Model,
    plan: &Plan,
    event: &str,
) -> io::Result<()> {
    let hooks: Vec<String> = helm_hooks(model, plan)
        .iter()
        .filter_map(|&d| {
            let hook = model.resource(d)?.hook.as_ref()?;
            hook.events
                .iter()
                .any(|e| e == event)
                .then(|| format!("{} (weight {})", label(model, d), hook.weight))
        })
        .collect();
    write_list(out, view, &format!("{event} hooks"), hooks.into_iter())
}

/// The hooks Helm's events run, in Helm's order: the plan's, or for a release-wide dialect
/// the Helm hooks its steps do not apply (the deployer runs those by event, as Helm does).
fn helm_hooks(model: &Model, plan: &Plan) -> Vec<crate::model::DocId> {
    if !plan.dialect.release_wide() {
        return plan.hooks.clone();
    }
    let applied: std::collections::BTreeSet<usize> = plan
        .steps
        .iter()
        .flat_map(|s| s.resources.iter().copied())
        .chain(plan.crds.iter().copied())
        .collect();
    let mut hooks: Vec<(_, usize)> = (0..model.documents.len())
        .filter(|d| !applied.contains(d))
        .filter_map(|d| {
            let r = model.resource(d)?;
            let h = r.hook.as_ref()?;
            Some((crate::plan::hook_key(h.weight, &r.id.name, &r.id.kind), d))
        })
        .collect();
    hooks.sort();
    hooks.into_iter().map(|(_, d)| d).collect()
}

/// The step of each resource group, by (chart, group).
type GroupSteps<'a> = std::collections::HashMap<(usize, &'a str), &'a crate::plan::Step>;

/// One level in `helm dag`'s layout (same lines, same indentation), each resource group's
/// resources below its batch.
fn write_level(
    out: &mut dyn Write,
    view: View,
    model: &Model,
    plan: &Plan,
    steps: &GroupSteps<'_>,
    level: &Level,
    depth: usize,
) -> io::Result<()> {
    let indent = "  ".repeat(depth);
    let chart = &model.charts[level.chart];
    // NOTE: `helm dag` writes nested levels as `parent/charts/sub`; chartseq names them
    // `parent/sub` here too, as lint, JSON and Helm's own template markers do.
    writeln!(out, "{indent}Chart: {}", one_line(&chart.display))?;
    if level.subchart_batches.is_empty() {
        writeln!(out, "{indent}  Subchart batches: (none)")?;
    } else {
        writeln!(out, "{indent}  Subchart batches:")?;
        for (i, batch) in level.subchart_batches.iter().enumerate() {
            writeln!(out, "{indent}    Batch {}: {}", i + 1, names(batch))?;
        }
    }
    if level.group_batches.is_empty() {
        writeln!(out, "{indent}  Resource-group batches: (none)")?;
    } else {
        writeln!(out, "{indent}  Resource-group batches:")?;
        for (i, batch) in level.group_batches.iter().enumerate() {
            writeln!(out, "{indent}    Batch {}: {}", i + 1, names(batch))?;
            for group in batch {
                let Some(step) = steps.get(&(level.chart, group.as_str())) else {
                    continue;
                };
                let resources: Vec<String> =
                    step.resources.iter().map(|&d| label(model, d)).collect();
                write_items(
                    out,
                    view,
                    &format!("{indent}      "),
                    &one_line(group),
                    &resources,
                )?;
            }
        }
    }
    if !level.unsequenced.is_empty() {
        let mut labels: Vec<String> = level.unsequenced.iter().map(|&d| label(model, d)).collect();
        labels.sort();
        write_items(
            out,
            view,
            &format!("{indent}  "),
            "Unsequenced (deployed last)",
            &labels,
        )?;
    }
    let child_level = |name: &str| {
        let prefix = format!("{}/charts/{name}", chart.manifest_prefix);
        plan.levels
            .iter()
            .find(|l| model.charts[l.chart].manifest_prefix == prefix)
    };
    for name in level.subchart_batches.iter().flatten() {
        if let Some(child) = child_level(name) {
            write_level(out, view, model, plan, steps, child, depth + 1)?;
        }
    }
    for name in &level.undeclared {
        writeln!(
            out,
            "{indent}    Undeclared subchart {name:?} (deployed unsequenced):"
        )?;
        if let Some(child) = child_level(name) {
            write_level(out, view, model, plan, steps, child, depth + 1)?;
        }
    }
    Ok(())
}

fn write_uninstall(out: &mut dyn Write, view: View, model: &Model, plan: &Plan) -> io::Result<()> {
    if plan.dialect == crate::plan::Dialect::Argo {
        return write_argo_uninstall(out, view, model, plan);
    }
    write_hooks(out, view, model, plan, "pre-delete")?;
    if plan.uninstall.is_some() {
        writeln!(out, "Uninstall order ({}'s own):", plan.dialect.tool())?;
    } else {
        writeln!(out, "Uninstall order (exact reverse of install):")?;
    }
    for (i, step) in plan.uninstall_steps().iter().enumerate() {
        let chart = one_line(&model.charts[step.chart].display);
        let what = step.group.as_deref().map_or_else(
            || "unsequenced".to_owned(),
            |g| format!("group {}", one_line(g)),
        );
        let mut resources: Vec<String> = step.resources.iter().map(|&d| label(model, d)).collect();
        resources.dedup();
        write_items(
            out,
            view,
            "  ",
            &format!("{}. {chart} {what}", i + 1),
            &resources,
        )?;
    }
    write_hooks(out, view, model, plan, "post-delete")?;
    let from_crds_dir = |d: usize| model.documents[d].placement == crate::model::Placement::Crd;
    write_list(
        out,
        view,
        "CRDs (kept, as Helm does)",
        plan.crds
            .iter()
            .filter(|&&d| from_crds_dir(d))
            .map(|&d| label(model, d)),
    )?;
    if let Some(own) = &plan.uninstall {
        // What the tool's own order leaves in place (a policy, an object it never deletes).
        let handled: std::collections::BTreeSet<usize> = own
            .iter()
            .flat_map(|s| s.resources.iter().copied())
            .chain(helm_hooks(model, plan))
            .collect();
        let kept = (0..model.documents.len())
            .filter(|&d| !handled.contains(&d) && !from_crds_dir(d) && model.resource(d).is_some())
            .map(|d| label(model, d));
        write_list(
            out,
            view,
            &format!("Not deleted (as {} leaves them)", plan.dialect.named()),
            kept,
        )?;
    }
    Ok(())
}

/// Argo CD's deletion of an application: its `PreDelete` hooks, its cascade by wave, its
/// `PostDelete` hooks, and what the cascade leaves in place.
fn write_argo_uninstall(
    out: &mut dyn Write,
    view: View,
    model: &Model,
    plan: &Plan,
) -> io::Result<()> {
    use crate::model::argo::HookType;
    use crate::plan::argo;
    let hooks = |hook| {
        argo::delete_hooks(model, hook)
            .into_iter()
            .map(|d| label(model, d))
    };
    write_list(
        out,
        view,
        "PreDelete hooks (created first, each waited healthy)",
        hooks(HookType::PreDelete),
    )?;
    writeln!(
        out,
        "Uninstall order (Argo CD's own cascade: highest sync wave first, all phases together, each wave gone before the next):"
    )?;
    let steps = plan.uninstall_steps();
    if steps.is_empty() {
        writeln!(out, "  (no steps)")?;
    }
    for (i, step) in steps.iter().enumerate() {
        let what = one_line(step.group.as_deref().unwrap_or("not objects"));
        let resources: Vec<String> = step.resources.iter().map(|&d| label(model, d)).collect();
        write_items(out, view, "  ", &format!("{}. {what}", i + 1), &resources)?;
    }
    write_list(
        out,
        view,
        "PostDelete hooks (created once the cascade is done, each waited healthy)",
        hooks(HookType::PostDelete),
    )?;
    let kept = argo::kept_on_uninstall(model, plan);
    write_list(
        out,
        view,
        "CRDs (kept: Argo CD never deletes a CRD)",
        argo::kept_crds(model, plan)
            .into_iter()
            .map(|d| label(model, d)),
    )?;
    write_list(
        out,
        view,
        "Kept by their annotations",
        kept.iter()
            .filter_map(|&(d, why)| Some(format!("{} ({})", label(model, d), why?.written()))),
    )?;
    write_list(
        out,
        view,
        "Not deleted (never installed)",
        plan.not_installed
            .iter()
            .filter(|&&d| {
                model
                    .resource(d)
                    .or_else(|| model.generated(d))
                    .is_none_or(|r| r.argo.delete_hooks.is_empty())
            })
            .map(|&d| label(model, d)),
    )
}
