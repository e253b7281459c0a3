//! `chartseq apply`, `uninstall`, `rollback`, `history`, `status`, `list`: settings in,
//! progress and a summary out. The deployer itself lives in [`crate::apply`].
//!
//! Exit codes (SPEC): 0 done; 1 the operation ran and failed (a wait timed out, a resource
//! failed, the server refused an object, objects belong to someone else, the revision is too
//! large to store, interrupted) — a revision that ran is recorded as `failed`; 2 chartseq
//! could not run (bad settings, no cluster, no such namespace, release or revision, no plan).

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::{mpsc, watch};

use super::{Failure, Outcome};
use crate::apply::cluster::{Cluster, Connection, KubeCluster};
use crate::apply::deploy::{Event, RunError, RunSettings};
use crate::apply::release::Record;
use crate::apply::storage::{Driver, Skipped};
use crate::apply::{self, Context, judge};
use crate::duration::go_duration;
use crate::error::Error;
use crate::model::{self, Input, InputTarget};
use crate::plan;
use crate::readiness::argo_script::HealthScripts;
use crate::report::apply_summary::{self, Done, codes, lint_warnings};
use crate::report::progress::Renderer;
use crate::report::release_info;

pub use crate::report::progress::Progress;

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
    /// `--argo-health` (`rollback`): Argo CD Lua health scripts, in order.
    pub argo_health: Vec<std::path::PathBuf>,
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
    /// `--argo-health`: Argo CD Lua health scripts, in order.
    pub argo_health: Vec<std::path::PathBuf>,
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
            Some(r) if r > self.timeout => Err(Error::usage(format!(
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
        argo_health: Option<Arc<HealthScripts>>,
    ) -> Result<RunSettings, Error> {
        Ok(RunSettings {
            timeout: self.timeout,
            readiness_timeout: self.readiness()?,
            wait_for_jobs: self.wait_for_jobs,
            dry_run,
            force_conflicts,
            take_ownership,
            argo_health: argo_health.map(|s| s as Arc<dyn crate::readiness::argo::HealthOverride>),
        })
    }
}

pub use crate::source::helm::validate_release_name;

/// The Argo CD health scripts `--argo-health` names, every one compiled: a script that does
/// not parse stops the command before anything is sent. `None`: none given.
fn argo_health(paths: &[std::path::PathBuf]) -> Result<Option<Arc<HealthScripts>>, Error> {
    if paths.is_empty() {
        return Ok(None);
    }
    let scripts = crate::source::argo_health::load(paths)?;
    scripts
        .check_all()
        .map_err(|e| Error::invalid(format!("--argo-health: {e}")))?;
    Ok(Some(Arc::new(scripts)))
}

fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::Tool(Error::io("starting the async runtime", e)))
}

async fn connect(settings: &ClusterSettings) -> Result<Arc<dyn Cluster>, Failure> {
    let cluster = KubeCluster::connect(&settings.connection)
        .await
        .map_err(|e| Failure::Tool(Error::Cluster(e)))?;
    Ok(Arc::new(cluster))
}

/// A namespace that does not exist stops `apply` before anything happens, with the fix.
/// Only a definite "not found" counts: a cluster may not let this user read namespaces.
async fn check_namespace(cluster: &dyn Cluster, namespace: &str) -> Result<(), Failure> {
    let Ok(kind) = cluster.resolve("v1", "Namespace", false).await else {
        return Ok(());
    };
    match cluster.get(&kind, None, namespace).await {
        Ok(None) => Err(Failure::Tool(Error::usage(format!(
            "namespace {namespace} does not exist: create it, or pass --create-namespace"
        )))),
        Ok(Some(_)) | Err(_) => Ok(()),
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
            apply_summary::write_done(out, &record, renderer, done, warnings)?;
            Ok(Outcome::Clean)
        }
        Err(e) => {
            apply_summary::write_failed(out, renderer, &e)?;
            super::write_error(err, &e.to_string(), None)?;
            Ok(Outcome::Findings)
        }
    }
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
    let scripts = argo_health(&settings.argo_health)?;
    let run = cs.run_settings(
        settings.dry_run,
        settings.force_conflicts,
        settings.take_ownership,
        scripts.clone(),
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
            .map_err(|e| Failure::Tool(Error::Storage(e)))?;
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
        .map_err(|mixed| Failure::Tool(Error::invalid(mixed.message(&model))))?;
    // A tool that never creates an object marked so (kapp's `exists`) waits for someone else
    // to: applying it would make chartseq the owner of what the chart says it does not own.
    let system = dialect.system();
    let marked: Vec<(&str, String)> = model
        .documents
        .iter()
        .enumerate()
        .filter_map(|(doc, _)| model.resource(doc))
        .filter_map(|r| {
            let key = (system.never_created)(r)?;
            Some((
                key,
                format!("{} ({})", r.id, plan::output::position(&model, r.kind_loc)),
            ))
        })
        .collect();
    if let Some((key, _)) = marked.first() {
        let objects: Vec<&str> = marked.iter().map(|(_, object)| object.as_str()).collect();
        return Err(Failure::Tool(Error::invalid(format!(
            "{tool} never creates an object marked `{key}`, it waits for it to exist, and chartseq apply does not deploy such objects: {}; remove the annotation, or deploy the chart with {tool}",
            objects.join(", "),
            tool = system.tool,
        ))));
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
            super::write_error(
                err,
                "lint found errors; fix them, or deploy anyway with --no-lint",
                None,
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
        super::write_error(
            err,
            "the chart has documents that cannot be applied (use --no-lint to deploy the rest)",
            None,
        )?;
        return Ok(Outcome::Findings);
    }
    let mut plan = match plan::plan_in(&model, dialect) {
        Ok(p) => p,
        Err(e) => {
            super::write_plan_error(err, &model, &e)?;
            return Ok(Outcome::Findings);
        }
    };
    if let Some(scripts) = &scripts {
        if dialect != plan::Dialect::Argo {
            return Err(Failure::Tool(Error::usage(format!(
                "--argo-health gives Argo CD health scripts; it needs --dialect argo (this run deploys with --dialect {})",
                dialect.name()
            ))));
        }
        plan::argo::with_health_scripts(&model, &mut plan, &|group, kind| {
            scripts.find(group, kind).is_some()
        });
    }
    if let Err(e) = plan::with_uninstall(&model, &mut plan) {
        // Its tool installs such a release and refuses to uninstall it; chartseq records the
        // exact reverse instead, and says so now rather than at uninstall.
        crate::plan::output::write_refusal_at(
            err,
            &model,
            &e,
            &|loc| super::locate(&model, loc),
            "uninstall",
        )?;
        writeln!(
            err,
            "warning: {} would refuse to uninstall this release; `chartseq uninstall` will delete it in the exact reverse of the install order",
            dialect.tool()
        )?;
    }
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
    Err(Failure::Tool(Error::invalid(format!(
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
            super::write_error(err, &e.to_string(), None)?;
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
        super::write_error(
            err,
            "the release would not apply: see the objects marked refused or failed",
            None,
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
    let run = cs.run_settings(
        settings.dry_run,
        false,
        settings.take_ownership,
        argo_health(&settings.argo_health)?,
    )?;
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
        .map_err(Error::Storage)?;
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

/// `chartseq history`: Helm's columns, with the failed runs' blocked resources under their
/// row.
pub fn history(
    settings: &ReleaseSettings,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Outcome, Failure> {
    let (_, _, records) = recorded(settings, err)?;
    release_info::write_history(out, &records, settings.cluster.progress == Progress::Json)?;
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
        release_info::write_status_json(out, r)?;
    } else {
        let live = rt.block_on(apply::live_state(cluster.as_ref(), r));
        release_info::write_status(out, r, &live)?;
    }
    Ok(Outcome::Clean)
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
        .map_err(Error::Storage)?;
    warn_skipped(err, &listing.skipped)?;
    release_info::write_list(out, &listing.records, cs.progress == Progress::Json)?;
    Ok(Outcome::Clean)
}
