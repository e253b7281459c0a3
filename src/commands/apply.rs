//! `chartseq apply`, `uninstall`, `rollback`, `history`, `status`, `list`: settings in,
//! progress and a summary out. The deployer itself lives in [`crate::apply`].
//!
//! Exit codes (SPEC): 0 done; 1 the operation ran and failed (a wait timed out, a resource
//! failed, the server refused an object, objects belong to someone else, the revision is too
//! large to store, interrupted) — a revision that ran is recorded as `failed`; 2 chartseq
//! could not run (bad settings, no cluster, no such namespace, release or revision, no plan).

use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::{mpsc, watch};

use super::{Failure, Outcome};
use crate::apply::cluster::{Cluster, Connection, KubeCluster};
use crate::apply::deploy::{Event, Report, RunError, RunSettings, StepResult};
use crate::apply::release::Record;
use crate::apply::storage::{Driver, Skipped};
use crate::apply::wait::human;
use crate::apply::{self, Context, judge};
use crate::duration::go_duration;
use crate::error::Error;
use crate::model::{self, Input, InputTarget};
use crate::plan;

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Live lines on stderr (one per running step on a terminal), a table at the end.
    Human,
    /// JSON-lines events on stdout, for CI.
    Json,
}

/// Settings shared by every command that talks to the cluster.
#[derive(Clone, Debug)]
pub struct ClusterSettings {
    /// The release namespace.
    pub namespace: String,
    pub connection: Connection,
    pub timeout: Duration,
    /// `--readiness-timeout` when given; otherwise 1m, or `--timeout` when that is shorter.
    pub readiness_timeout: Option<Duration>,
    pub wait_for_jobs: bool,
    pub progress: Progress,
    /// Where revisions are stored (`--storage`, else `HELM_DRIVER`).
    pub driver: Driver,
}

/// A command on one release (`uninstall`, `rollback`, `history`, `status`).
#[derive(Clone, Debug)]
pub struct ReleaseSettings {
    pub release: String,
    pub cluster: ClusterSettings,
    /// Decide and report, change nothing (`uninstall`, `rollback`).
    pub dry_run: bool,
    /// `--history-max` (`rollback`); 0 keeps every revision.
    pub history_max: usize,
    /// `--take-ownership` (`rollback`): adopt objects that are not this release's.
    pub take_ownership: bool,
}

/// `chartseq apply` settings.
#[derive(Clone, Debug)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent command-line switches"
)]
pub struct ApplySettings {
    pub input: Input,
    pub release: String,
    pub cluster: ClusterSettings,
    pub atomic: bool,
    pub dry_run: bool,
    /// With `dry_run`: show what would change, object by object.
    pub diff: bool,
    pub force_conflicts: bool,
    pub take_ownership: bool,
    pub create_namespace: bool,
    pub no_lint: bool,
    /// `--history-max`; 0 keeps every revision.
    pub history_max: usize,
    /// Whose order and waits to deploy in (`--dialect`; `auto`: the one the chart carries).
    pub dialect: plan::detect::Choice,
    /// What an upgrade does with the previous revision's values.
    pub values_reuse: apply::ValuesReuse,
}

/// `chartseq list` settings.
#[derive(Clone, Debug)]
pub struct ListSettings {
    pub cluster: ClusterSettings,
    /// Every namespace (`-A`).
    pub all_namespaces: bool,
}

/// The readiness timeout when none is given.
const DEFAULT_READINESS: Duration = Duration::from_secs(60);

impl ClusterSettings {
    /// The bound on each readiness wait: as given (SPEC §3: never above `--timeout`), else
    /// the default cut to `--timeout`, so that `--timeout 30s` alone works.
    pub fn readiness(&self) -> Result<Duration, Error> {
        match self.readiness_timeout {
            Some(r) if r > self.timeout => Err(Error::new(format!(
                "--readiness-timeout ({}) must not exceed --timeout ({})",
                go_duration(r),
                go_duration(self.timeout)
            ))),
            Some(r) => Ok(r),
            None => Ok(DEFAULT_READINESS.min(self.timeout)),
        }
    }

    fn run_settings(
        &self,
        dry_run: bool,
        force_conflicts: bool,
        take_ownership: bool,
    ) -> Result<RunSettings, Error> {
        Ok(RunSettings {
            timeout: self.timeout,
            readiness_timeout: self.readiness()?,
            wait_for_jobs: self.wait_for_jobs,
            dry_run,
            force_conflicts,
            take_ownership,
        })
    }
}

pub use crate::source::helm::validate_release_name;

fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::Tool(Error::io("starting the async runtime", &e)))
}

async fn connect(settings: &ClusterSettings) -> Result<Arc<dyn Cluster>, Failure> {
    let cluster = KubeCluster::connect(&settings.connection)
        .await
        .map_err(|e| Failure::Tool(Error::new(e.message)))?;
    Ok(Arc::new(cluster))
}

/// A namespace that does not exist stops `apply` before anything happens, with the fix.
/// Only a definite "not found" counts: a cluster may not let this user read namespaces.
async fn check_namespace(cluster: &dyn Cluster, namespace: &str) -> Result<(), Failure> {
    let Ok(kind) = cluster.resolve("v1", "Namespace", false).await else {
        return Ok(());
    };
    match cluster.get(&kind, None, namespace).await {
        Ok(None) => Err(Failure::Tool(Error::new(format!(
            "namespace {namespace} does not exist: create it, or pass --create-namespace"
        )))),
        Ok(Some(_)) | Err(_) => Ok(()),
    }
}

/// Renders progress events as they come.
struct Renderer {
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
fn resources(n: usize) -> String {
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
    fn new(mode: Progress, dry_run: bool) -> Self {
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

    fn event(&mut self, e: Event, out: &mut dyn Write, err: &mut dyn Write) -> std::io::Result<()> {
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
    fn table(&self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.mode == Progress::Json {
            return Ok(());
        }
        write_summary(
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
}

/// Writes the step table and the objects left in place: the same layout after a run and in
/// `status`.
fn write_summary<'a>(
    out: &mut dyn Write,
    rows: impl Iterator<Item = (&'a str, usize, Duration, &'a str, Option<&'a str>)> + Clone,
    kept: &[String],
    skipped: &[(String, String)],
    dry_run: bool,
) -> std::io::Result<()> {
    let width = rows.clone().map(|r| r.0.len()).max().unwrap_or(4).max(4);
    for (i, (step, resources, waited, word, detail)) in rows.enumerate() {
        if i == 0 {
            writeln!(
                out,
                "{:<width$}  {:>9}  {:>8}  RESULT",
                "STEP", "RESOURCES", "WAITED"
            )?;
        }
        let mut lines = detail.unwrap_or_default().lines();
        let first = lines.next().map(|l| format!(": {l}")).unwrap_or_default();
        let resources = if word == "not started" {
            "-".to_owned()
        } else {
            resources.to_string()
        };
        writeln!(
            out,
            "{step:<width$}  {resources:>9}  {:>8}  {word}{first}",
            human(waited)
        )?;
        for line in lines {
            writeln!(
                out,
                "{:<width$}  {:>9}  {:>8}    {}",
                "",
                "",
                "",
                line.trim_start()
            )?;
        }
    }
    if !kept.is_empty() {
        let would = if dry_run { "would be " } else { "" };
        writeln!(out, "{would}kept (helm.sh/resource-policy: keep):")?;
        for k in kept {
            writeln!(out, "  {k}")?;
        }
    }
    if !skipped.is_empty() {
        let would = if dry_run { "would be " } else { "" };
        writeln!(out, "{would}left in place, not owned by this release:")?;
        for (resource, owner) in skipped {
            writeln!(out, "  {resource}: {owner}")?;
        }
    }
    Ok(())
}

fn gerund(verb: &str) -> &'static str {
    if verb == "delete" {
        "deleting"
    } else {
        "applying"
    }
}

/// Runs `work` on the runtime while rendering its events here; Ctrl-C asks it to stop.
fn drive<T: Send + 'static>(
    rt: &tokio::runtime::Runtime,
    mode: Progress,
    dry_run: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
    work: impl FnOnce(
        mpsc::UnboundedSender<Event>,
        watch::Receiver<bool>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>,
) -> Result<(T, Renderer), Failure> {
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let (cancel_tx, cancel) = watch::channel(false);
    let mut renderer = Renderer::new(mode, dry_run);
    let handle = rt.spawn(work(events_tx, cancel));
    rt.spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            let _ = cancel_tx.send(true);
        }
        // A second Ctrl-C does not wait for the requests in flight.
        if tokio::signal::ctrl_c().await.is_ok() {
            std::process::exit(130);
        }
    });
    rt.block_on(async {
        while let Some(e) = events.recv().await {
            renderer.event(e, out, err)?;
        }
        Ok::<_, std::io::Error>(())
    })?;
    let value = rt
        .block_on(handle)
        .map_err(|e| Failure::Tool(Error::new(format!("the deploy task stopped: {e}"))))?;
    Ok((value, renderer))
}

fn context(
    cluster: Arc<dyn Cluster>,
    settings: RunSettings,
    atomic: bool,
    events: mpsc::UnboundedSender<Event>,
    cancel: watch::Receiver<bool>,
    driver: Driver,
    history_max: usize,
) -> Context {
    Context {
        cluster,
        judge: Arc::new(judge::Engine),
        settings,
        atomic,
        events,
        cancel,
        driver,
        history_max,
    }
}

/// Ends an operation: the summary, then one line saying how it went. A missing release or
/// revision is a tool failure (exit 2); every other failure ran and failed (exit 1).
fn report(
    result: Result<Record, RunError>,
    renderer: &Renderer,
    done: Done,
    warnings: &[&'static str],
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    renderer.table(out)?;
    if let Err(RunError::CannotRun(message)) = &result {
        return Err(Failure::Tool(Error::new(message.clone())));
    }
    match result {
        Ok(record) => {
            if renderer.mode == Progress::Json {
                let mut line = json!({"event": "done", "release": record.name, "revision": record.revision, "status": record.status});
                if renderer.dry_run {
                    line["dry_run"] = json!(true);
                }
                if !warnings.is_empty() {
                    line["lint_warnings"] = json!(warnings);
                }
                writeln!(out, "{line}")?;
            } else {
                let mut line = if renderer.dry_run {
                    dry_run_line(&record, renderer, done)
                } else {
                    format!(
                        "release {} {}: revision {}, status {}",
                        record.name,
                        done.verb(),
                        record.revision,
                        record.status
                    )
                };
                if !warnings.is_empty() {
                    use std::fmt::Write as _;
                    let _ = write!(
                        line,
                        ", with {} ({}, shown before the run)",
                        lint_warnings(warnings.len()),
                        codes(warnings)
                    );
                }
                writeln!(out, "{line}")?;
            }
            Ok(Outcome::Clean)
        }
        Err(e) => {
            if renderer.mode == Progress::Json {
                writeln!(
                    out,
                    "{}",
                    json!({"event": "done", "status": "failed", "error": e.to_string()})
                )?;
            }
            writeln!(
                err,
                "chartseq: error: {}",
                crate::safe::terminal_safe(&e.to_string())
            )?;
            Ok(Outcome::Findings)
        }
    }
}

/// `1 lint warning`, `2 lint warnings`.
fn lint_warnings(n: usize) -> String {
    format!("{n} lint warning{}", if n == 1 { "" } else { "s" })
}

/// The distinct codes of `warnings`, in order: `CS305, CS501`.
fn codes(warnings: &[&str]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for w in warnings {
        if !seen.contains(w) {
            seen.push(w);
        }
    }
    seen.join(", ")
}

/// The operation a run did, for its last line.
#[derive(Clone, Copy)]
enum Done {
    Apply,
    Rollback,
    Uninstall,
}

impl Done {
    fn verb(self) -> &'static str {
        match self {
            Done::Apply => "applied",
            Done::Rollback => "rolled back",
            Done::Uninstall => "uninstalled",
        }
    }
}

/// A dry run's last line: nothing changed, and what the operation would have done, counted
/// as the steps above name them (objects kept or not this release's are not deletions).
fn dry_run_line(record: &Record, renderer: &Renderer, done: Done) -> String {
    let what = match done {
        Done::Apply if record.status == "pending-upgrade" => {
            format!("upgrade to revision {}", record.revision)
        }
        Done::Apply => format!("install revision {}", record.revision),
        Done::Rollback => match record.description.strip_prefix("Rollback to ") {
            Some(to) => format!(
                "roll back to revision {to} (as revision {})",
                record.revision
            ),
            None => format!("roll back as revision {}", record.revision),
        },
        Done::Uninstall => format!("uninstall revision {}", record.revision),
    };
    let total = |verb: &str| renderer.totals.get(verb).copied().unwrap_or(0);
    let mut parts = Vec::new();
    if total("apply") > 0 {
        parts.push(format!(
            "applying {} (the server accepted them in a server-side dry run)",
            resources(total("apply"))
        ));
    }
    if total("delete") > 0 {
        parts.push(format!("deleting {}", resources(total("delete"))));
    }
    if !renderer.kept.is_empty() {
        parts.push(format!(
            "keeping {} (helm.sh/resource-policy: keep)",
            renderer.kept.len()
        ));
    }
    if !renderer.skipped.is_empty() {
        parts.push(format!(
            "leaving {} not this release's in place",
            renderer.skipped.len()
        ));
    }
    if parts.is_empty() {
        parts.push("touching no resource".to_owned());
    }
    format!(
        "release {} dry run, nothing changed: would {what}, {}",
        record.name,
        parts.join(", ")
    )
}

/// The chart (Helm's `Chart` JSON) and the user's values (`config`) a revision records.
fn chart_and_values(
    input: &Input,
    model: &model::Model,
    release: &str,
) -> Result<(serde_json::Value, serde_json::Value), Error> {
    let mut sources = crate::source::SourceMap::default();
    let path = match &input.target {
        InputTarget::Chart(path) => Some(path.clone()),
        InputTarget::Stream(_) => input.chart.clone(),
    };
    let loaded = path
        .map(|p| crate::source::chart::load(&p, &mut sources, input.chart_limits))
        .transpose()?;
    let name = model
        .charts
        .first()
        .map_or(release, |c| c.name.as_str())
        .to_owned();
    let chart = apply::chart::chart_json(loaded.as_ref(), &sources, &name, model);
    let config =
        crate::source::values::user_values(&input.helm.values, &mut sources, input.limits)?;
    Ok((chart, config))
}

/// `chartseq apply`.
pub fn apply(
    settings: &ApplySettings,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    validate_release_name(&settings.release)?;
    let cs = &settings.cluster;
    let run = cs.run_settings(
        settings.dry_run,
        settings.force_conflicts,
        settings.take_ownership,
    )?;
    let rt = runtime()?;
    let mut input = settings.input.clone();
    // An upgrade reads the release before rendering, as `helm upgrade` does: the values of the
    // revision it starts from may be rendered again (a rendered stream has its values already).
    let mut connected = None;
    if matches!(input.target, InputTarget::Chart(_))
        && settings.values_reuse != apply::ValuesReuse::Reset
    {
        let cluster = rt.block_on(connect(cs))?;
        let listing = rt
            .block_on(apply::history(
                cluster.as_ref(),
                cs.driver,
                &cs.namespace,
                &settings.release,
            ))
            .map_err(|e| Failure::Tool(Error::new(e.to_string())))?;
        let given = crate::source::values::user_values(
            &input.helm.values,
            &mut crate::source::SourceMap::default(),
            input.limits,
        )?;
        let given = given.as_object().is_some_and(|m| !m.is_empty());
        let (reused, defaults) =
            apply::reused_values(&listing.records, settings.values_reuse, given);
        input.helm.values.reused = reused;
        input.helm.values.reused_defaults = defaults;
        connected = Some(cluster);
    }
    let model = model::load(&input)?;
    let dialect = settings
        .dialect
        .resolve(&model)
        .map_err(|mixed| Failure::Tool(Error::new(mixed.message(&model))))?;
    if dialect == plan::Dialect::Kapp {
        // kapp never creates an object marked `exists`, it waits for someone else to: applying
        // it would make chartseq the owner of what the chart says it does not own.
        let marked: Vec<String> = model
            .documents
            .iter()
            .enumerate()
            .filter_map(|(doc, _)| model.resource(doc))
            .filter(|r| r.kapp.exists)
            .map(|r| format!("{} ({})", r.id, plan::output::position(&model, r.kind_loc)))
            .collect();
        if !marked.is_empty() {
            return Err(Failure::Tool(Error::new(format!(
                "kapp never creates an object marked `{}`, it waits for it to exist, and chartseq apply does not deploy such objects: {}; remove the annotation, or deploy the chart with kapp",
                crate::model::kapp::EXISTS,
                marked.join(", ")
            ))));
        }
    }
    let mut warnings = Vec::new();
    if !settings.no_lint {
        let gate = super::lint::gate(
            &model,
            &input,
            run.timeout,
            run.readiness_timeout,
            run.wait_for_jobs,
            dialect,
            err,
        )?;
        if gate.failed {
            writeln!(
                err,
                "chartseq: error: lint found errors; fix them, or deploy anyway with --no-lint"
            )?;
            return Ok(Outcome::Findings);
        }
        if !gate.warnings.is_empty() {
            writeln!(
                err,
                "chartseq: warning: deploying despite {} ({}) shown above: they bear on how this run goes; `chartseq explain CODE` says why",
                lint_warnings(gate.warnings.len()),
                codes(&gate.warnings)
            )?;
        }
        warnings = gate.warnings;
    }
    super::report_values_mismatch(&model, err)?;
    if dialect == plan::Dialect::Hip {
        super::report_outside_v3(&model, &input, err)?;
    }
    if super::report_bad_documents_in(&model, dialect, err)? && !settings.no_lint {
        writeln!(
            err,
            "chartseq: error: the chart has documents that cannot be applied (use --no-lint to deploy the rest)"
        )?;
        return Ok(Outcome::Findings);
    }
    let plan = match plan::plan_in(&model, dialect) {
        Ok(p) => p,
        Err(e) => {
            super::write_plan_error(err, &model, &e)?;
            return Ok(Outcome::Findings);
        }
    };
    check_names(&model, &cs.namespace)?;
    let mut record =
        apply::release::record_from_plan(&model, &plan, &settings.release, &cs.namespace)
            .map_err(Error::new)?;
    let (chart, config) = chart_and_values(&input, &model, &settings.release)?;
    record.helm.insert("chart".into(), chart);
    // Helm's `config` is `omitempty`: no values, no field (`helm get values` prints null).
    if config.as_object().is_none_or(|m| !m.is_empty()) {
        record.helm.insert("config".into(), config);
    }
    if settings.diff {
        return preview(settings, record, run, out, err);
    }
    if settings.dry_run && cs.progress == Progress::Human {
        plan::output::write_plan(
            out,
            &model,
            &plan,
            plan::output::PlanFormat::Text,
            false,
            false,
        )?;
    }
    let cluster = match connected {
        Some(cluster) => cluster,
        None => rt.block_on(connect(cs))?,
    };
    if !settings.create_namespace {
        rt.block_on(check_namespace(cluster.as_ref(), &cs.namespace))?;
    }
    let (atomic, create_ns, namespace, driver, history_max) = (
        settings.atomic,
        settings.create_namespace,
        cs.namespace.clone(),
        cs.driver,
        settings.history_max,
    );
    let (result, renderer) = drive(
        &rt,
        cs.progress,
        settings.dry_run,
        out,
        err,
        move |events, cancel| {
            Box::pin(async move {
                let ctx = context(cluster, run, atomic, events, cancel, driver, history_max);
                if create_ns {
                    create_namespace(&ctx, &namespace).await?;
                }
                apply::install(&ctx, record).await
            })
        },
    )?;
    report(result, &renderer, Done::Apply, &warnings, out, err)
}

/// Refuses names and namespaces the API server would refuse (or that would address another
/// object) before anything is sent, each with its template and rendered location.
fn check_names(model: &model::Model, namespace: &str) -> Result<(), Failure> {
    let mut problems = Vec::new();
    if let Some(why) = apply::names::check_namespace(namespace) {
        problems.push(format!("invalid release namespace {namespace:?}: {why}"));
    }
    for (doc, d) in model.documents.iter().enumerate() {
        let Some(r) = model.resource(doc) else {
            continue;
        };
        let at = plan::output::position(model, r.kind_loc);
        let place = match &d.source_path {
            Some(source) => format!("from {source}, at {at}"),
            None => format!("at {at}"),
        };
        problems.extend(apply::names::check_object(
            &r.api_version,
            &r.id.kind,
            Some(r.id.namespace.as_deref().unwrap_or(namespace)),
            &r.id.name,
            &place,
        ));
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(Failure::Tool(Error::new(format!(
        "the API server would refuse these names; nothing was sent:\n  {}",
        problems.join("\n  ")
    ))))
}

/// `apply --dry-run --diff`: each object's fate from reads and server-side dry runs, as text
/// or (`--progress json`) one JSON line per object; exit 1 when the release would be refused
/// or the server refuses an object.
fn preview(
    settings: &ApplySettings,
    record: Record,
    run: RunSettings,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    let cs = &settings.cluster;
    let rt = runtime()?;
    let cluster = rt.block_on(connect(cs))?;
    if !settings.create_namespace {
        rt.block_on(check_namespace(cluster.as_ref(), &cs.namespace))?;
    }
    // Nothing reports progress: the preview is written once it is complete.
    let (events, _) = mpsc::unbounded_channel();
    let (_cancel_tx, cancel) = watch::channel(false);
    let ctx = context(
        cluster,
        run,
        false,
        events,
        cancel,
        cs.driver,
        settings.history_max,
    );
    let preview = match rt.block_on(apply::preview(&ctx, record)) {
        Ok(p) => p,
        Err(RunError::CannotRun(message)) => return Err(Failure::Tool(Error::new(message))),
        Err(e) => {
            writeln!(
                err,
                "chartseq: error: {}",
                crate::safe::terminal_safe(&e.to_string())
            )?;
            return Ok(Outcome::Findings);
        }
    };
    if cs.progress == Progress::Json {
        for e in &preview.entries {
            writeln!(out, "{}", apply::preview::entry_json(e))?;
        }
        writeln!(
            out,
            "{}",
            json!({"event": "done", "release": preview.release, "revision": preview.revision,
                "status": if preview.blocked() { "refused" } else { "dry-run" }})
        )?;
    } else {
        apply::preview::write_text(out, &preview)?;
    }
    if preview.blocked() {
        writeln!(
            err,
            "chartseq: error: the release would not apply: see the objects marked refused or failed"
        )?;
        return Ok(Outcome::Findings);
    }
    Ok(Outcome::Clean)
}

/// `--create-namespace`: the release namespace, applied (a no-op when it exists).
async fn create_namespace(ctx: &Context, namespace: &str) -> Result<(), RunError> {
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}});
    let kind = ctx
        .cluster
        .resolve("v1", "Namespace", false)
        .await
        .map_err(|error| RunError::Cluster {
            resource: None,
            error,
        })?;
    let options = apply::cluster::ApplyOptions {
        force: false,
        dry_run: ctx.settings.dry_run,
    };
    ctx.cluster
        .apply(&kind, None, &ns, options)
        .await
        .map_err(|error| RunError::Cluster {
            resource: Some(format!("Namespace/{namespace}")),
            error,
        })?;
    Ok(())
}

/// What to do with a recorded release.
#[derive(Clone, Copy)]
enum ReleaseOp {
    Uninstall,
    Rollback(u32),
}

/// `chartseq uninstall`.
pub fn uninstall(
    settings: &ReleaseSettings,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    run_release_op(settings, ReleaseOp::Uninstall, out, err)
}

/// `chartseq rollback`.
pub fn rollback(
    settings: &ReleaseSettings,
    revision: u32,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    run_release_op(settings, ReleaseOp::Rollback(revision), out, err)
}

/// Connects, runs an operation on the recorded release with live progress, and reports it.
fn run_release_op(
    settings: &ReleaseSettings,
    op: ReleaseOp,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    validate_release_name(&settings.release)?;
    let cs = &settings.cluster;
    let run = cs.run_settings(settings.dry_run, false, settings.take_ownership)?;
    let rt = runtime()?;
    let cluster = rt.block_on(connect(cs))?;
    let (ns, name, driver, history_max) = (
        cs.namespace.clone(),
        settings.release.clone(),
        cs.driver,
        settings.history_max,
    );
    let (result, renderer) = drive(
        &rt,
        cs.progress,
        settings.dry_run,
        out,
        err,
        move |events, cancel| {
            Box::pin(async move {
                let ctx = context(cluster, run, false, events, cancel, driver, history_max);
                match op {
                    ReleaseOp::Uninstall => apply::uninstall(&ctx, &ns, &name).await,
                    ReleaseOp::Rollback(revision) => {
                        apply::rollback(&ctx, &ns, &name, revision).await
                    }
                }
            })
        },
    )?;
    let done = match op {
        ReleaseOp::Uninstall => Done::Uninstall,
        ReleaseOp::Rollback(_) => Done::Rollback,
    };
    report(result, &renderer, done, &[], out, err)
}

/// A connection and a release's recorded revisions.
type Recorded = (tokio::runtime::Runtime, Arc<dyn Cluster>, Vec<Record>);

/// Writes a warning for each storage object that could not be read.
fn warn_skipped(err: &mut dyn Write, skipped: &[Skipped]) -> std::io::Result<()> {
    for s in skipped {
        writeln!(
            err,
            "chartseq: warning: {}",
            crate::report::safe::terminal_safe(&s.to_string())
        )?;
    }
    Ok(())
}

/// Connects and reads a release's recorded revisions (oldest first), warning about those
/// that cannot be read; none is an error.
fn recorded(settings: &ReleaseSettings, err: &mut dyn Write) -> Result<Recorded, Failure> {
    validate_release_name(&settings.release)?;
    let cs = &settings.cluster;
    let rt = runtime()?;
    let cluster = rt.block_on(connect(cs))?;
    let listing = rt
        .block_on(apply::history(
            cluster.as_ref(),
            cs.driver,
            &cs.namespace,
            &settings.release,
        ))
        .map_err(|e| Error::new(e.to_string()))?;
    warn_skipped(err, &listing.skipped)?;
    let records = listing.records;
    if records.is_empty() {
        return Err(Error::new(format!(
            "release: not found: {} (namespace {})",
            settings.release, cs.namespace
        ))
        .into());
    }
    Ok((rt, cluster, records))
}

/// A stored Go timestamp as `helm list` prints it (`2006-01-02 15:04:05.999999999 +0000
/// UTC`); anything else as stored.
fn helm_time(rfc3339: &str) -> String {
    if rfc3339.is_empty() {
        // Helm prints a zero time so.
        return "-".to_owned();
    }
    match rfc3339.strip_suffix('Z') {
        Some(t) if t.len() >= 19 => format!("{} +0000 UTC", t.replacen('T', " ", 1)),
        _ => rfc3339.to_owned(),
    }
}

/// `chartseq history`: Helm's columns, with the failed runs' blocked resources under their
/// row.
pub fn history(
    settings: &ReleaseSettings,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    let (_, _, records) = recorded(settings, err)?;
    if settings.cluster.progress == Progress::Json {
        for r in &records {
            writeln!(
                out,
                "{}",
                json!({"revision": r.revision, "updated": r.updated(), "status": r.status, "chart": r.chart(),
                    "app_version": r.app_version(), "description": r.description, "sequenced": r.sequenced, "report": r.report})
            )?;
        }
        return Ok(Outcome::Clean);
    }
    let rows: Vec<Vec<String>> = records
        .iter()
        .map(|r| {
            vec![
                r.revision.to_string(),
                helm_time(r.updated()),
                r.status.clone(),
                r.chart(),
                r.app_version().to_owned(),
                r.description.lines().next().unwrap_or_default().to_owned(),
            ]
        })
        .collect();
    let more: Vec<Vec<String>> = records
        .iter()
        .map(|r| r.description.lines().skip(1).map(str::to_owned).collect())
        .collect();
    write_table(
        out,
        &[
            "REVISION",
            "UPDATED",
            "STATUS",
            "CHART",
            "APP VERSION",
            "DESCRIPTION",
        ],
        &rows,
        &more,
    )?;
    Ok(Outcome::Clean)
}

/// `chartseq status`: the latest revision, its recorded plan with each object's live
/// state, and how its run went.
pub fn status(
    settings: &ReleaseSettings,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    let (rt, cluster, records) = recorded(settings, err)?;
    let Some(r) = records.last() else {
        unreachable!("recorded() refuses a release without revisions")
    };
    if settings.cluster.progress == Progress::Json {
        let steps: Vec<_> = r.steps.iter().map(|s| json!({"step": s.label, "resources": s.resources.iter().map(|&i| r.items[i].label()).collect::<Vec<_>>()})).collect();
        writeln!(
            out,
            "{}",
            json!({"name": r.name, "namespace": r.namespace, "revision": r.revision, "status": r.status,
                "updated": r.updated(), "chart": r.chart(), "sequenced": r.sequenced, "description": r.description,
                "steps": steps, "report": r.report})
        )?;
        return Ok(Outcome::Clean);
    }
    writeln!(
        out,
        "NAME: {}\nLAST DEPLOYED: {}\nNAMESPACE: {}\nSTATUS: {}\nREVISION: {}\nCHART: {}\nSEQUENCED: {}",
        r.name,
        helm_time(r.updated()),
        r.namespace,
        r.status,
        r.revision,
        r.chart(),
        r.sequenced
    )?;
    let mut description = r.description.lines();
    writeln!(
        out,
        "DESCRIPTION: {}",
        description.next().unwrap_or_default()
    )?;
    for more in description {
        writeln!(out, "  {more}")?;
    }
    let live = rt.block_on(apply::live_state(cluster.as_ref(), r));
    writeln!(out, "RESOURCES (install order, live state):")?;
    for s in &r.steps {
        writeln!(out, "  {}", s.label)?;
        for &i in &s.resources {
            let (label, state) = &live[i];
            writeln!(out, "    {label}: {state}")?;
        }
    }
    if let Some(report) = &r.report {
        writeln!(out, "LAST RUN:")?;
        write_report(out, report)?;
    }
    Ok(Outcome::Clean)
}

/// A table as helm prints one (cells padded, then a tab), each row followed by its `more`
/// lines, indented.
fn write_table(
    out: &mut dyn Write,
    headers: &[&str],
    rows: &[Vec<String>],
    more: &[Vec<String>],
) -> std::io::Result<()> {
    let widths: Vec<usize> = (0..headers.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].len())
                .chain([headers[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut text = String::new();
        for (c, cell) in cells.enumerate() {
            let _ = write!(text, "{cell:<w$}\t", w = widths[c]);
        }
        text.trim_end().to_owned()
    };
    writeln!(out, "{}", line(&mut headers.iter().copied()))?;
    for (i, row) in rows.iter().enumerate() {
        writeln!(out, "{}", line(&mut row.iter().map(String::as_str)))?;
        for extra in more.get(i).into_iter().flatten() {
            writeln!(out, "  {extra}")?;
        }
    }
    Ok(())
}

/// A recorded run's outcome in the summary layout.
fn write_report(out: &mut dyn Write, report: &Report) -> std::io::Result<()> {
    write_summary(
        out,
        report.steps.iter().map(|s| {
            (
                s.step.as_str(),
                s.resources,
                Duration::from_millis(s.waited_ms),
                s.result.as_str(),
                s.detail.as_deref(),
            )
        }),
        &report.kept,
        &report.skipped,
        false,
    )
}

/// `chartseq list`: the latest revision of each release, as `helm list` shows them.
pub fn list(
    settings: &ListSettings,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    let cs = &settings.cluster;
    let rt = runtime()?;
    let cluster = rt.block_on(connect(cs))?;
    let namespace = (!settings.all_namespaces).then_some(cs.namespace.as_str());
    let listing = rt
        .block_on(apply::releases(cluster.as_ref(), cs.driver, namespace))
        .map_err(|e| Error::new(e.to_string()))?;
    warn_skipped(err, &listing.skipped)?;
    let releases = listing.records;
    if cs.progress == Progress::Json {
        let list: Vec<_> = releases
            .iter()
            .map(|r| {
                json!({"name": r.name, "namespace": r.namespace, "revision": r.revision.to_string(),
                    "updated": helm_time(r.updated()), "status": r.status, "chart": r.chart(),
                    "app_version": r.app_version(), "sequenced": r.sequenced})
            })
            .collect();
        writeln!(out, "{}", serde_json::Value::Array(list))?;
        return Ok(Outcome::Clean);
    }
    let rows: Vec<Vec<String>> = releases
        .iter()
        .map(|r| {
            vec![
                r.name.clone(),
                r.namespace.clone(),
                r.revision.to_string(),
                helm_time(r.updated()),
                r.status.clone(),
                r.chart(),
                r.app_version().to_owned(),
            ]
        })
        .collect();
    write_table(
        out,
        &[
            "NAME",
            "NAMESPACE",
            "REVISION",
            "UPDATED",
            "STATUS",
            "CHART",
            "APP VERSION",
        ],
        &rows,
        &[],
    )?;
    Ok(Outcome::Clean)
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
