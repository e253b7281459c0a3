//! `chartseq apply`, `uninstall`, `rollback`, `history`, `status`: settings in, progress and
//! a summary out. The deployer itself lives in [`crate::apply`].
//!
//! Exit codes: 0 done; 1 the release failed (a wait timed out, a resource failed, the server
//! refused an object, interrupted) — the revision is recorded as `failed`; 2 chartseq could not
//! start (bad settings, no cluster, no plan).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::{mpsc, watch};

use super::{Failure, Outcome};
use crate::apply::cluster::{Cluster, Connection, KubeCluster};
use crate::apply::deploy::{Event, RunError, RunSettings, StepResult};
use crate::apply::release::Record;
use crate::apply::wait::human;
use crate::apply::{self, Context, go_duration, judge};
use crate::error::Error;
use crate::model::{self, Input};
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
    pub release: String,
    pub namespace: String,
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    pub timeout: Duration,
    pub readiness_timeout: Duration,
    pub wait_for_jobs: bool,
    pub progress: Progress,
}

/// `chartseq apply` settings.
#[derive(Clone, Debug)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent command-line switches"
)]
pub struct ApplySettings {
    pub input: Input,
    pub cluster: ClusterSettings,
    pub atomic: bool,
    pub dry_run: bool,
    pub force_conflicts: bool,
    pub take_ownership: bool,
    pub create_namespace: bool,
    pub no_lint: bool,
}

impl ClusterSettings {
    /// Checks the timeouts (SPEC §3: the readiness timeout must not exceed the overall one).
    pub fn validate(&self) -> Result<(), Error> {
        if self.readiness_timeout > self.timeout {
            return Err(Error::new(format!(
                "--readiness-timeout ({}) must not exceed --timeout ({})",
                go_duration(self.readiness_timeout),
                go_duration(self.timeout)
            )));
        }
        Ok(())
    }

    fn run_settings(
        &self,
        dry_run: bool,
        force_conflicts: bool,
        take_ownership: bool,
    ) -> RunSettings {
        RunSettings {
            timeout: self.timeout,
            readiness_timeout: self.readiness_timeout,
            wait_for_jobs: self.wait_for_jobs,
            dry_run,
            force_conflicts,
            take_ownership,
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::Tool(Error::io("starting the async runtime", &e)))
}

async fn connect(settings: &ClusterSettings) -> Result<Arc<dyn Cluster>, Failure> {
    let conn = Connection {
        kubeconfig: settings.kubeconfig.clone(),
        context: settings.context.clone(),
    };
    let cluster = KubeCluster::connect(&conn)
        .await
        .map_err(|e| Failure::Tool(Error::new(e.message)))?;
    Ok(Arc::new(cluster))
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
}

/// One progress event as a JSON line.
fn event_json(e: &Event) -> serde_json::Value {
    match e {
        Event::Started {
            step,
            resources,
            verb,
        } => json!({"event": "started", "step": step, "resources": resources, "action": verb}),
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

/// One progress event as a line for people (`None`: nothing to say).
fn event_line(e: &Event) -> Option<String> {
    Some(match e {
        Event::Started {
            step,
            resources,
            verb,
        } => format!("{step}: {} {resources} resource(s)", gerund(verb)),
        Event::Waiting { .. } => return None,
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
        Event::Kept { resource } => format!("kept {resource}: helm.sh/resource-policy: keep"),
        Event::Skipped { resource, owner } => {
            format!("left in place {resource}: not this release's, {owner}")
        }
    })
}

impl Renderer {
    fn new(mode: Progress) -> Self {
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
        }
    }

    fn event(&mut self, e: Event, out: &mut dyn Write, err: &mut dyn Write) -> std::io::Result<()> {
        if self.mode == Progress::Json {
            writeln!(out, "{}", event_json(&e))?;
        } else if let Some((multi, bars)) = &mut self.bars {
            match &e {
                Event::Started { step, .. } => {
                    let bar = multi.add(indicatif::ProgressBar::new_spinner());
                    bar.set_message(event_line(&e).unwrap_or_default());
                    bar.enable_steady_tick(Duration::from_millis(120));
                    bars.insert(step.clone(), bar);
                }
                Event::Waiting { step } => {
                    if let Some(bar) = bars.get(step) {
                        bar.set_message(format!("{step}: waiting for readiness"));
                    }
                }
                other => {
                    if let Event::Finished { step, .. } = other {
                        if let Some(bar) = bars.remove(step) {
                            bar.finish_and_clear();
                        }
                    }
                    if let Some(line) = event_line(other) {
                        let _ = multi.println(line);
                    }
                }
            }
        } else if let Some(line) = event_line(&e) {
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
        writeln!(out, "kept (helm.sh/resource-policy: keep):")?;
        for k in kept {
            writeln!(out, "  {k}")?;
        }
    }
    if !skipped.is_empty() {
        writeln!(out, "left in place, not owned by this release:")?;
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
    out: &mut dyn Write,
    err: &mut dyn Write,
    work: impl FnOnce(
        mpsc::UnboundedSender<Event>,
        watch::Receiver<bool>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>,
) -> Result<(T, Renderer), Failure> {
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let (cancel_tx, cancel) = watch::channel(false);
    let mut renderer = Renderer::new(mode);
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
) -> Context {
    Context {
        cluster,
        judge: Arc::new(judge::Engine),
        settings,
        atomic,
        events,
        cancel,
    }
}

fn report(
    result: Result<Record, RunError>,
    renderer: &Renderer,
    verb: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    renderer.table(out)?;
    if let Err(RunError::Missing(message)) = &result {
        return Err(Failure::Tool(Error::new(message.clone())));
    }
    match result {
        Ok(record) => {
            if renderer.mode == Progress::Json {
                writeln!(
                    out,
                    "{}",
                    json!({"event": "done", "release": record.name, "revision": record.revision, "status": record.status})
                )?;
            } else {
                writeln!(
                    out,
                    "release {} {verb}: revision {}, status {}",
                    record.name, record.revision, record.status
                )?;
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
            writeln!(err, "chartseq: error: {e}")?;
            Ok(Outcome::Findings)
        }
    }
}

/// `chartseq apply`.
pub fn apply(
    settings: &ApplySettings,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    settings.cluster.validate()?;
    let model = model::load(&settings.input)?;
    if !settings.no_lint
        && super::lint::gate(
            &model,
            &settings.input,
            settings.cluster.timeout,
            settings.cluster.readiness_timeout,
            err,
        )?
    {
        writeln!(
            err,
            "chartseq: error: lint found errors; fix them, or deploy anyway with --no-lint"
        )?;
        return Ok(Outcome::Findings);
    }
    if super::report_bad_documents(&model, err)? && !settings.no_lint {
        writeln!(
            err,
            "chartseq: error: the chart has documents that cannot be applied (use --no-lint to deploy the rest)"
        )?;
        return Ok(Outcome::Findings);
    }
    let plan = match plan::plan(&model) {
        Ok(p) => p,
        Err(e) => {
            super::write_plan_error(err, &model, &e)?;
            return Ok(Outcome::Findings);
        }
    };
    let cs = &settings.cluster;
    let record =
        apply::record_from_plan(&model, &plan, &cs.release, &cs.namespace).map_err(Error::new)?;
    if settings.dry_run && cs.progress == Progress::Human {
        plan::output::write_plan(out, &model, &plan, plan::output::PlanFormat::Text, false)?;
    }
    let rt = runtime()?;
    let cluster = rt.block_on(connect(cs))?;
    let run = cs.run_settings(
        settings.dry_run,
        settings.force_conflicts,
        settings.take_ownership,
    );
    let (atomic, create_ns, namespace) = (
        settings.atomic,
        settings.create_namespace,
        cs.namespace.clone(),
    );
    let (result, renderer) = drive(&rt, cs.progress, out, err, move |events, cancel| {
        Box::pin(async move {
            let ctx = context(cluster, run, atomic, events, cancel);
            if create_ns {
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
            }
            apply::install(&ctx, record).await
        })
    })?;
    let verb = if settings.dry_run {
        "checked (server-side dry run)"
    } else {
        "applied"
    };
    report(result, &renderer, verb, out, err)
}

/// What to do with a recorded release.
#[derive(Clone, Copy)]
enum ReleaseOp {
    Uninstall,
    Rollback(u32),
}

/// `chartseq uninstall`.
pub fn uninstall(
    settings: &ClusterSettings,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    run_release_op(settings, ReleaseOp::Uninstall, out, err)
}

/// `chartseq rollback`.
pub fn rollback(
    settings: &ClusterSettings,
    revision: u32,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    run_release_op(settings, ReleaseOp::Rollback(revision), out, err)
}

/// Connects, runs an operation on the recorded release with live progress, and reports it.
fn run_release_op(
    settings: &ClusterSettings,
    op: ReleaseOp,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    settings.validate()?;
    let rt = runtime()?;
    let cluster = rt.block_on(connect(settings))?;
    let run = settings.run_settings(false, false, false);
    let (ns, name) = (settings.namespace.clone(), settings.release.clone());
    let (result, renderer) = drive(&rt, settings.progress, out, err, move |events, cancel| {
        Box::pin(async move {
            let ctx = context(cluster, run, false, events, cancel);
            match op {
                ReleaseOp::Uninstall => apply::uninstall(&ctx, &ns, &name).await,
                ReleaseOp::Rollback(revision) => apply::rollback(&ctx, &ns, &name, revision).await,
            }
        })
    })?;
    match op {
        ReleaseOp::Uninstall => {
            let result = result.map(|mut r| {
                r.status = "uninstalled".into();
                r
            });
            report(result, &renderer, "uninstalled", out, err)
        }
        ReleaseOp::Rollback(_) => report(result, &renderer, "rolled back", out, err),
    }
}

/// A connection and a release's recorded revisions.
type Recorded = (
    tokio::runtime::Runtime,
    Arc<dyn Cluster>,
    Vec<apply::release::Record>,
);

/// Connects and reads a release's recorded revisions (oldest first); none is an error.
fn recorded(settings: &ClusterSettings) -> Result<Recorded, Failure> {
    let rt = runtime()?;
    let cluster = rt.block_on(connect(settings))?;
    let records = rt
        .block_on(apply::history(
            cluster.as_ref(),
            &settings.namespace,
            &settings.release,
        ))
        .map_err(|e| Error::new(e.message))?;
    if records.is_empty() {
        return Err(Error::new(format!("release: not found: {}", settings.release)).into());
    }
    Ok((rt, cluster, records))
}

/// `chartseq history`.
pub fn history(
    settings: &ClusterSettings,
    out: &mut dyn Write,
    _err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    let (_, _, records) = recorded(settings)?;
    if settings.progress == Progress::Json {
        for r in &records {
            writeln!(
                out,
                "{}",
                json!({"revision": r.revision, "updated": r.updated, "status": r.status, "chart": r.chart, "description": r.description, "sequenced": r.sequenced})
            )?;
        }
        return Ok(Outcome::Clean);
    }
    writeln!(
        out,
        "REVISION  UPDATED               STATUS           CHART                DESCRIPTION"
    )?;
    for r in &records {
        writeln!(
            out,
            "{:<8}  {:<20}  {:<15}  {:<19}  {}",
            r.revision,
            r.updated,
            r.status,
            r.chart,
            r.description.lines().next().unwrap_or_default()
        )?;
    }
    Ok(Outcome::Clean)
}

/// `chartseq status`.
pub fn status(
    settings: &ClusterSettings,
    out: &mut dyn Write,
    _err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    let (rt, cluster, records) = recorded(settings)?;
    let Some(r) = records.last() else {
        unreachable!("recorded() refuses a release without revisions")
    };
    if settings.progress == Progress::Json {
        let steps: Vec<_> = r.steps.iter().map(|s| json!({"step": s.label, "resources": s.resources.iter().map(|&i| r.items[i].label()).collect::<Vec<_>>()})).collect();
        writeln!(
            out,
            "{}",
            json!({"name": r.name, "namespace": r.namespace, "revision": r.revision, "status": r.status, "updated": r.updated, "chart": r.chart, "sequenced": r.sequenced, "description": r.description, "steps": steps})
        )?;
        return Ok(Outcome::Clean);
    }
    writeln!(
        out,
        "NAME: {}\nNAMESPACE: {}\nREVISION: {}\nSTATUS: {}\nLAST DEPLOYED: {}\nCHART: {}\nSEQUENCED: {}\nDESCRIPTION: {}",
        r.name, r.namespace, r.revision, r.status, r.updated, r.chart, r.sequenced, r.description
    )?;
    let live = rt.block_on(apply::live_state(cluster.as_ref(), r));
    writeln!(out, "RESOURCES (install order, live state):")?;
    for s in &r.steps {
        writeln!(out, "  {}", s.label)?;
        for &i in &s.resources {
            writeln!(out, "    {}: {}", r.items[i].label(), live[i])?;
        }
    }
    Ok(Outcome::Clean)
}
