//! What a run is told (its settings) and what it tells: progress events, the step-by-step
//! report kept with the revision, and why it failed.

use super::{ClusterError, Deserialize, Duration, Owner, Serialize, WaitError, human};
use crate::apply::storage::StorageError;

/// How a run behaves.
#[derive(Clone, Debug)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "independent command-line switches"
)]
pub struct RunSettings {
    pub timeout: Duration,
    pub readiness_timeout: Duration,
    pub wait_for_jobs: bool,
    pub dry_run: bool,
    pub force_conflicts: bool,
    /// `--take-ownership`: adopt existing objects that belong to no release or another one.
    pub take_ownership: bool,
    /// Argo CD health scripts the user gave (`--argo-health`), asked before the built-in
    /// checks by every Argo CD health wait.
    pub argo_health: Option<std::sync::Arc<dyn crate::readiness::argo::HealthOverride>>,
}

/// What happened, for progress output.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A phase or step started: its label, resource count, what it does (`apply`,
    /// `delete`) and the objects it does it to (`Kind/name`, in order). A deletion counts only
    /// what it will delete: objects kept or not this release's are reported apart.
    Started {
        step: String,
        resources: usize,
        verb: &'static str,
        objects: Vec<String>,
    },
    /// A step's resources were sent; it now waits.
    Waiting { step: String },
    Finished {
        step: String,
        resources: usize,
        waited: Duration,
        result: StepResult,
    },
    /// A line of information (pruned, deleted, recorded).
    Note(String),
    /// A step that never started because the run stopped first, and the steps it waited for.
    NotStarted { step: String, after: Vec<String> },
    /// Left in place on uninstall or pruning: `helm.sh/resource-policy: keep`.
    Kept { resource: String },
    /// Left in place on uninstall or pruning: not this release's (who owns it).
    Skipped { resource: String, owner: String },
}

#[derive(Clone, Debug, PartialEq)]
pub enum StepResult {
    Ready,
    Deleted,
    DryRun,
    /// A deletion step that deleted nothing because every object it found is kept
    /// (`helm.sh/resource-policy: keep`) or not this release's.
    Kept,
    Failed(String),
    Skipped,
}

impl StepResult {
    /// The word progress output and the record use.
    #[must_use]
    pub fn word(&self) -> &'static str {
        match self {
            StepResult::Ready => "ready",
            StepResult::Deleted => "deleted",
            StepResult::DryRun => "dry-run",
            StepResult::Kept => "kept",
            StepResult::Failed(_) => "failed",
            StepResult::Skipped => "interrupted",
        }
    }
}

/// How a run went, step by step: kept with the revision so that `status` and `history` show
/// what blocked, how long it waited and what never ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub steps: Vec<StepReport>,
    /// Objects left in place for `helm.sh/resource-policy: keep`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<String>,
    /// Objects left in place because this release does not own them, and their owner.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<(String, String)>,
}

/// One step's line of a [`Report`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepReport {
    pub step: String,
    pub resources: usize,
    pub waited_ms: u64,
    /// `ready`, `deleted`, `dry-run`, `kept`, `failed`, `interrupted` or `not started`.
    pub result: String,
    /// Why it failed (blocked resources and their reasons), or what it waited for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{}{error}", resource_prefix(.resource.as_ref()))]
    Cluster {
        resource: Option<String>,
        #[source]
        error: ClusterError,
    },
    #[error("step {step}: {error}")]
    Wait {
        step: String,
        #[source]
        error: WaitError,
    },
    #[error("interrupted: stopped scheduling after the requests in flight")]
    Interrupted,
    /// `--timeout` ran out during a step's wait (which names what blocked).
    #[error(
        "the release did not finish within --timeout {}: step {step}: {error}",
        human(*.timeout)
    )]
    Overall {
        timeout: Duration,
        step: String,
        #[source]
        error: WaitError,
    },
    /// The operation could not run at all: no such release or revision, or another operation
    /// on the release is in progress.
    #[error("{0}")]
    CannotRun(String),
    /// The release's revision could not be stored or read.
    #[error("{0}")]
    Storage(#[source] StorageError),
    /// Objects the release would write belong to someone else; nothing was applied.
    #[error(
        "{} object(s) already exist and do not belong to release {release} (namespace {namespace}); nothing was applied:{}\nfix: remove or rename them, or adopt them into this release deliberately with --take-ownership",
        .foreign.len(),
        foreign_lines(.foreign)
    )]
    Refused {
        release: String,
        namespace: String,
        foreign: Vec<(String, Owner)>,
    },
}

/// `resource: ` before a cluster error about one resource.
fn resource_prefix(resource: Option<&String>) -> String {
    resource.map_or_else(String::new, |r| format!("{r}: "))
}

/// The objects another owner holds, one per line under the message.
fn foreign_lines(foreign: &[(String, Owner)]) -> String {
    use std::fmt::Write as _;
    foreign
        .iter()
        .fold(String::new(), |mut text, (object, owner)| {
            let _ = write!(text, "\n  {object}: {owner}");
            text
        })
}
