//! Renderings of a plan: text (like `helm dag`, with the CRD and hook phases), JSON, DOT,
//! Mermaid, and the ordered manifest stream of `chartseq template`.

mod dag;
mod dot;
mod json;
mod mermaid;
mod template;
mod text;

use std::borrow::Cow;
use std::io::{self, Write};

pub use template::{TemplateOptions, write_helm_template, write_template};

use crate::model::{Content, DocId, Model};
use crate::plan::{Level, Plan, PlanError, PlanIssue, Step};
use crate::source::Loc;

/// A plan output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanFormat {
    Text,
    /// Exactly what the reference implementation's `helm dag` prints (install order only).
    Dag,
    Json,
    Dot,
    Mermaid,
}

/// Writes the plan (install order, or uninstall order when `uninstall`); `verbose`: the text
/// plan lists every resource of a long list, not the first few.
pub fn write_plan(
    out: &mut dyn Write,
    model: &Model,
    plan: &Plan,
    format: PlanFormat,
    uninstall: bool,
    verbose: bool,
) -> io::Result<()> {
    match format {
        PlanFormat::Text => text::write(out, model, plan, uninstall, verbose),
        PlanFormat::Dag => dag::write(out, model, plan),
        PlanFormat::Json => json::write(out, model, plan, uninstall),
        PlanFormat::Dot => dot::write(out, model, plan, uninstall),
        PlanFormat::Mermaid => mermaid::write(out, model, plan, uninstall),
    }
}

/// Steps in install order, or the uninstall order (SPEC §2: the exact reverse, edges turned).
fn steps_in_order(plan: &Plan, uninstall: bool) -> Cow<'_, [Step]> {
    if uninstall {
        Cow::Owned(plan.uninstall_steps())
    } else {
        Cow::Borrowed(&plan.steps)
    }
}

/// Chart levels in install order (pre-order), or reversed for uninstall.
fn levels_in_order(plan: &Plan, uninstall: bool) -> Box<dyn Iterator<Item = &Level> + '_> {
    if uninstall {
        Box::new(plan.levels.iter().rev())
    } else {
        Box::new(plan.levels.iter())
    }
}

/// The clusters a drawing groups its steps in, with their labels: one per chart level, or the
/// one cluster of a release-wide dialect's steps.
fn clusters(model: &Model, plan: &Plan, uninstall: bool) -> Vec<(String, Option<usize>)> {
    if plan.dialect.release_wide() {
        release_cluster(model, plan).into_iter().collect()
    } else {
        levels_in_order(plan, uninstall)
            .map(|l| (model.charts[l.chart].display.clone(), Some(l.chart)))
            .collect()
    }
}

/// The one cluster of a release-wide dialect's steps: the release (named by its root chart)
/// and the dialect; none when the plan has no steps.
fn release_cluster(model: &Model, plan: &Plan) -> Option<(String, Option<usize>)> {
    let root = model.charts.first()?;
    (!plan.steps.is_empty()).then(|| {
        (
            format!("{} (whole release, {})", root.display, plan.dialect.name()),
            None,
        )
    })
}

/// Helm hooks that a dialect's tool applies as ordinary resources (it does not read
/// `helm.sh/hook`), in plan order; empty for every other dialect.
#[must_use]
pub fn hooks_as_resources(model: &Model, plan: &Plan) -> Vec<DocId> {
    if !plan.dialect.hooks_are_resources() {
        return Vec::new();
    }
    plan.steps
        .iter()
        .flat_map(|s| s.resources.iter().copied())
        .filter(|&d| model.resource(d).is_some_and(|r| r.hook.is_some()))
        .collect()
}

/// `Kind/name` of a document (`Kind/prefix* (from <template>)` for one named only by
/// `generateName`, which has no identity but its place), or what it is and where it came from
/// when it is not an object.
#[must_use]
pub fn label(model: &Model, doc: DocId) -> String {
    let d = &model.documents[doc];
    let from = d.source_path.as_deref().unwrap_or("the stream");
    match &d.content {
        Content::Resource(r) => format!("{}/{}", r.id.kind, r.id.name),
        Content::Empty => format!("(empty document from {from})"),
        Content::Invalid { .. } => format!("(invalid document from {from})"),
        Content::NotAnObject {
            generated: Some(r), ..
        } => match &d.source_path {
            Some(path) => format!("{}/{}* (from {path})", r.id.kind, r.id.name),
            None => format!("{}/{}*", r.id.kind, r.id.name),
        },
        Content::NotAnObject { .. } => format!("(non-object document from {from})"),
    }
}

/// `file:line:col` of a location.
#[must_use]
pub fn position(model: &Model, loc: Loc) -> String {
    let file = model.sources.get(loc.file);
    let pos = file.line_col(loc.span.start);
    format!("{}:{}:{}", file.name, pos.line, pos.column)
}

/// The template path of the document containing `loc`, when known.
fn source_of(model: &Model, loc: Loc) -> Option<&str> {
    model
        .documents
        .iter()
        .find(|d| {
            d.file == loc.file && d.span.start <= loc.span.start && loc.span.start <= d.span.end
        })
        .and_then(|d| d.source_path.as_deref())
}

/// Where a location is in the input as read: `file:line:col`, with the template a rendered
/// line came from.
#[must_use]
pub fn rendered_position(model: &Model, loc: Loc) -> String {
    match source_of(model, loc) {
        Some(src) => format!("{} (from {src})", position(model, loc)),
        None => position(model, loc),
    }
}

/// Explains why there is no plan, one issue per paragraph, places shown as
/// [`rendered_position`] says.
pub fn write_plan_error(out: &mut dyn Write, model: &Model, error: &PlanError) -> io::Result<()> {
    write_plan_error_at(out, model, error, &|loc| rendered_position(model, loc))
}

/// [`write_plan_error`] with places shown by `at` (the commands pass lint's locator, so that a
/// place is the template line lint names).
pub fn write_plan_error_at(
    out: &mut dyn Write,
    model: &Model,
    error: &PlanError,
    at: &dyn Fn(Loc) -> String,
) -> io::Result<()> {
    write_refusal_at(out, model, error, at, "install")
}

/// [`write_plan_error_at`] for what the tool refuses to do: `install`, or `uninstall` when
/// the error is its uninstall order's.
pub fn write_refusal_at(
    out: &mut dyn Write,
    model: &Model,
    error: &PlanError,
    at: &dyn Fn(Loc) -> String,
    operation: &str,
) -> io::Result<()> {
    let order = if operation == "install" {
        "order"
    } else {
        "uninstall order"
    };
    // Names and values come from the input: each stays on its line, so that no text of the
    // chart starts a line of its own (a CI runner's workflow command, a forged location).
    let line = crate::safe::one_line;
    for issue in &error.issues {
        let chart = |id: usize| model.charts[id].display.as_str();
        match issue {
            PlanIssue::GroupCycle {
                chart: c,
                path,
                edges,
            }
            | PlanIssue::SubchartCycle {
                chart: c,
                path,
                edges,
            } => {
                let (code, what) = match issue {
                    PlanIssue::GroupCycle { .. } => ("CS001", "resource groups"),
                    _ => ("CS002", "subcharts"),
                };
                writeln!(
                    out,
                    "error[{code}]: {what} of chart {} form a cycle: {}",
                    chart(*c),
                    line(&path.join(" -> "))
                )?;
                for (pair, loc) in path.windows(2).zip(edges) {
                    writeln!(
                        out,
                        "  --> {}: {} depends on {}",
                        at(*loc),
                        line(&pair[0]),
                        line(&pair[1])
                    )?;
                }
            }
            PlanIssue::TwoGroups {
                chart: c,
                id,
                first,
                second,
            } => {
                writeln!(
                    out,
                    "error[CS004]: {} in chart {} is in two resource groups: {} and {}",
                    line(&id.to_string()),
                    chart(*c),
                    line(&first.value),
                    line(&second.value)
                )?;
                writeln!(out, "  --> {}: group {}", at(first.loc), line(&first.value))?;
                writeln!(
                    out,
                    "  --> {}: group {}",
                    at(second.loc),
                    line(&second.value)
                )?;
            }
            PlanIssue::UnknownSubchart {
                chart: c,
                reference,
                loc,
                disabled,
            } => {
                let why = if *disabled {
                    "is disabled"
                } else {
                    "is not a dependency"
                };
                writeln!(
                    out,
                    "error[CS102]: subchart reference `{}` in chart {} {why}",
                    line(reference),
                    chart(*c)
                )?;
                writeln!(out, "  --> {}", at(*loc))?;
            }
            PlanIssue::AmbiguousSubchart {
                chart: c,
                reference,
                matches,
                loc,
            } => {
                writeln!(
                    out,
                    "error[CS103]: subchart reference `{}` in chart {} matches {}; use the alias",
                    line(reference),
                    chart(*c),
                    line(&matches.join(", "))
                )?;
                writeln!(out, "  --> {}", at(*loc))?;
            }
            PlanIssue::InvalidDialectValue {
                dialect,
                key,
                value,
                reason,
                loc,
            } => {
                writeln!(
                    out,
                    "error[CS602]: {}: {value:?} is {}; {} would refuse to {operation} the release",
                    line(key),
                    line(reason),
                    dialect.tool()
                )?;
                writeln!(out, "  --> {}", at(*loc))?;
            }
            PlanIssue::ReplacedDialectValue {
                dialect,
                key,
                value,
                replacement,
                loc,
            } => {
                writeln!(
                    out,
                    "warning[CS602]: {}: {value:?} is not valid; {} uses {} instead",
                    line(key),
                    dialect.tool(),
                    line(replacement)
                )?;
                writeln!(out, "  --> {}", at(*loc))?;
            }
            PlanIssue::IgnoredDialectValue {
                dialect,
                key,
                value,
                reason,
                ignored,
                loc,
            } => {
                writeln!(
                    out,
                    "warning[CS602]: {}: {value:?} is {}; {} passes over {}",
                    line(key),
                    line(reason),
                    dialect.tool(),
                    line(ignored)
                )?;
                writeln!(out, "  --> {}", at(*loc))?;
            }
            PlanIssue::DialectReference {
                key,
                reference,
                reason,
                loc,
                ..
            } => {
                // The reason says what the tool does about it.
                writeln!(
                    out,
                    "warning[CS603]: {}: `{}` {}",
                    line(key),
                    line(reference),
                    line(reason)
                )?;
                writeln!(out, "  --> {}", at(*loc))?;
            }
            PlanIssue::DialectCycle {
                dialect,
                path,
                edges,
            } => {
                writeln!(
                    out,
                    "error[CS605]: the {} {order} forms a cycle: {}",
                    dialect.tool(),
                    line(&path.join(" -> "))
                )?;
                for (pair, loc) in path.windows(2).zip(edges) {
                    writeln!(
                        out,
                        "  --> {}: {} waits for {}",
                        at(*loc),
                        line(&pair[0]),
                        line(&pair[1])
                    )?;
                }
            }
            PlanIssue::MalformedSubchartList {
                chart: c,
                error,
                loc,
            } => {
                writeln!(
                    out,
                    "error[CS201]: subchart depends-on in chart {}: {}",
                    chart(*c),
                    error.describe()
                )?;
                writeln!(out, "  --> {}", at(*loc))?;
            }
        }
    }
    Ok(())
}
