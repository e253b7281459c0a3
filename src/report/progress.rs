//! `apply`, `uninstall` and `rollback` progress as it happens: live lines on standard error
//! (one spinner per running step on a terminal) or JSON-lines events on standard output, and
//! the step rows the summary ([`super::apply_summary`]) is written from.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use serde_json::json;

use crate::apply::deploy::{Event, StepResult};
use crate::apply::wait::human;

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Live lines on stderr (one per running step on a terminal), a table at the end.
    Human,
    /// JSON-lines events on stdout, for CI.
    Json,
}

/// Renders progress events as they come.
pub struct Renderer {
    mode: Progress,
    bars: Option<(
        indicatif::MultiProgress,
        std::collections::BTreeMap<String, indicatif::ProgressBar>,
    )>,
    /// Step rows for the summary: step, resources, waited, result word, detail.
    rows: Vec<(String, usize, Duration, &'static str, Option<String>)>,
    kept: Vec<String>,
    skipped: Vec<(String, String)>,
    /// A dry run: progress and the summary say what would happen, naming the objects.
    dry_run: bool,
    /// The steps started and not finished: what each does and to which objects.
    open: std::collections::BTreeMap<String, (&'static str, Vec<String>)>,
    /// Resources of the steps finished, by what the step did (`apply`, `delete`).
    totals: std::collections::BTreeMap<&'static str, usize>,
}

/// One progress event as a JSON line.
fn event_json(e: &Event) -> serde_json::Value {
    match e {
        Event::Started {
            step,
            resources,
            verb,
            objects,
        } => {
            json!({"event": "started", "step": step, "resources": resources, "action": verb, "objects": objects})
        }
        Event::Waiting { step } => json!({"event": "waiting", "step": step}),
        Event::Finished {
            step,
            resources,
            waited,
            result,
        } => json!({"event": "finished", "step": step, "resources": resources,
            "waited_ms": u64::try_from(waited.as_millis()).unwrap_or(u64::MAX), "result": result.word(),
            "error": match result { StepResult::Failed(m) => Some(m.as_str()), _ => None }}),
        Event::Note(n) => json!({"event": "note", "message": n}),
        Event::NotStarted { step, after } => {
            json!({"event": "not-started", "step": step, "after": after})
        }
        Event::Kept { resource } => {
            json!({"event": "kept", "resource": resource, "reason": "helm.sh/resource-policy: keep"})
        }
        Event::Skipped { resource, owner } => {
            json!({"event": "skipped", "resource": resource, "reason": owner})
        }
    }
}

/// One progress event as a line for people (`None`: nothing to say). Step and resource names
/// come from the chart, so the line is kept one line (control characters and line breaks shown
/// as escapes). `verb` is what the event's step does, for a finished one.
fn event_line(e: &Event, dry_run: bool, verb: Option<&str>) -> Option<String> {
    event_text(e, dry_run, verb).map(|line| crate::safe::one_line(&line).into_owned())
}

/// `1 resource`, `2 resources`.
pub(super) fn resources(n: usize) -> String {
    format!("{n} resource{}", if n == 1 { "" } else { "s" })
}

fn event_text(e: &Event, dry_run: bool, verb: Option<&str>) -> Option<String> {
    Some(match e {
        Event::Started {
            step,
            resources: n,
            verb,
            objects,
        } if dry_run => {
            if objects.is_empty() {
                format!("{step}: would {verb} nothing")
            } else {
                format!(
                    "{step}: would {verb} {}: {}",
                    resources(*n),
                    objects.join(", ")
                )
            }
        }
        Event::Started {
            step,
            resources: n,
            verb,
            ..
        } => format!("{step}: {} {}", gerund(verb), resources(*n)),
        Event::Waiting { .. } => return None,
        Event::Finished {
            step,
            result: StepResult::DryRun,
            ..
        } => match verb {
            Some("delete") => format!("{step}: nothing deleted (dry run)"),
            _ => format!("{step}: the server accepted it, nothing applied (dry run)"),
        },
        Event::Finished {
            step,
            result: StepResult::Kept,
            ..
        } => format!("{step}: nothing deleted, every object stays"),
        Event::Finished {
            step,
            waited,
            result,
            ..
        } => format!("{step}: {} ({})", result.word(), human(*waited)),
        Event::Note(n) => n.clone(),
        Event::NotStarted { step, after } if after.is_empty() => format!("{step}: not started"),
        Event::NotStarted { step, after } => {
            format!("{step}: not started (after {})", after.join(", "))
        }
        Event::Kept { resource } if dry_run => {
            format!("would keep {resource}: helm.sh/resource-policy: keep")
        }
        Event::Kept { resource } => format!("kept {resource}: helm.sh/resource-policy: keep"),
        Event::Skipped { resource, owner } if dry_run => {
            format!("would leave in place {resource}: not this release's, {owner}")
        }
        Event::Skipped { resource, owner } => {
            format!("left in place {resource}: not this release's, {owner}")
        }
    })
}

impl Renderer {
    #[must_use]
    pub fn new(mode: Progress, dry_run: bool) -> Self {
        let live = mode == Progress::Human && std::io::stderr().is_terminal();
        Self {
            mode,
            bars: live.then(|| {
                (
                    indicatif::MultiProgress::new(),
                    std::collections::BTreeMap::new(),
                )
            }),
            rows: Vec::new(),
            kept: Vec::new(),
            skipped: Vec::new(),
            dry_run,
            open: std::collections::BTreeMap::new(),
            totals: std::collections::BTreeMap::new(),
        }
    }

    /// Shows one event and keeps what the summary needs of it.
    pub fn event(
        &mut self,
        e: Event,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> std::io::Result<()> {
        let dry_run = self.dry_run;
        if let Event::Started {
            step,
            verb,
            objects,
            ..
        } = &e
        {
            self.open.insert(step.clone(), (*verb, objects.clone()));
        }
        let opened = match &e {
            Event::Finished { step, .. } => self.open.remove(step),
            _ => None,
        };
        let verb = opened.as_ref().map(|(v, _)| *v);
        if let (
            Event::Finished {
                resources,
                result: StepResult::Ready | StepResult::Deleted | StepResult::DryRun,
                ..
            },
            Some(verb),
        ) = (&e, verb)
        {
            *self.totals.entry(verb).or_default() += resources;
        }
        if self.mode == Progress::Json {
            writeln!(out, "{}", event_json(&e))?;
        } else if let Some((multi, bars)) = &mut self.bars {
            match &e {
                Event::Started { step, .. } => {
                    let bar = multi.add(indicatif::ProgressBar::new_spinner());
                    bar.set_message(event_line(&e, dry_run, verb).unwrap_or_default());
                    bar.enable_steady_tick(Duration::from_millis(120));
                    bars.insert(step.clone(), bar);
                }
                Event::Waiting { step } => {
                    if let Some(bar) = bars.get(step) {
                        bar.set_message(
                            crate::safe::one_line(&format!("{step}: waiting for readiness"))
                                .into_owned(),
                        );
                    }
                }
                other => {
                    if let Event::Finished { step, .. } = other {
                        if let Some(bar) = bars.remove(step) {
                            bar.finish_and_clear();
                        }
                    }
                    if let Some(line) = event_line(other, dry_run, verb) {
                        let _ = multi.println(line);
                    }
                }
            }
        } else if let Some(line) = event_line(&e, dry_run, verb) {
            writeln!(err, "{line}")?;
        }
        match e {
            Event::Finished {
                step,
                resources,
                waited,
                result,
            } => {
                let detail = match &result {
                    StepResult::Failed(m) => Some(m.clone()),
                    // A dry run names what each step would touch.
                    StepResult::DryRun => opened.and_then(|(verb, objects)| {
                        (!objects.is_empty())
                            .then(|| format!("would {verb} {}", objects.join(", ")))
                    }),
                    _ => None,
                };
                self.rows
                    .push((step, resources, waited, result.word(), detail));
            }
            Event::NotStarted { step, after } => self.rows.push((
                step,
                0,
                Duration::ZERO,
                "not started",
                (!after.is_empty()).then(|| format!("after {}", after.join(", "))),
            )),
            Event::Kept { resource } => self.kept.push(resource),
            Event::Skipped { resource, owner } => self.skipped.push((resource, owner)),
            Event::Started { .. } | Event::Waiting { .. } | Event::Note(_) => {}
        }
        Ok(())
    }

    /// The summary: one row per step (what blocked a failed step under it), then what was
    /// left in place.
    pub fn table(&self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.mode == Progress::Json {
            return Ok(());
        }
        super::apply_summary::write_summary(
            out,
            self.rows
                .iter()
                .map(|(step, resources, waited, word, detail)| {
                    (step.as_str(), *resources, *waited, *word, detail.as_deref())
                }),
            &self.kept,
            &self.skipped,
            self.dry_run,
        )
    }

    /// How the progress is shown.
    #[must_use]
    pub fn mode(&self) -> Progress {
        self.mode
    }

    /// Whether the run is a dry run.
    #[must_use]
    pub fn dry_run(&self) -> bool {
        self.dry_run
    }

    /// The resources of the steps finished that did `verb` (`apply`, `delete`).
    #[must_use]
    pub fn total(&self, verb: &str) -> usize {
        self.totals.get(verb).copied().unwrap_or(0)
    }

    /// The objects kept by `helm.sh/resource-policy: keep`.
    #[must_use]
    pub fn kept(&self) -> &[String] {
        &self.kept
    }

    /// The objects left in place, not this release's, with their owner.
    #[must_use]
    pub fn skipped(&self) -> &[(String, String)] {
        &self.skipped
    }
}

fn gerund(verb: &str) -> &'static str {
    match verb {
        "delete" => "deleting",
        // Objects already there, judged only (Argo CD's delete hooks it finds live).
        "wait" => "waiting for",
        _ => "applying",
    }
}

#[cfg(test)]
mod escaping_tests {
    use super::event_line;
    use crate::apply::deploy::Event;

    #[test]
    fn progress_lines_stay_one_line() {
        for e in [
            Event::Note("adopting a\n::error::x".to_owned()),
            Event::Kept {
                resource: "ConfigMap/a\r\n::error::x\u{2028}".to_owned(),
            },
        ] {
            let line = event_line(&e, false, None).expect("a line");
            assert!(!line.contains(['\n', '\r', '\u{2028}']), "{line:?}");
        }
    }
}
