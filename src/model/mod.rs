//! The sequencing model: chart levels, documents, resources and their typed annotations.
//!
//! Built once from a rendered stream (and the chart on disk when there is one) by [`load`];
//! read by the planner, the rules and the deployer, none of which re-parses anything.

pub mod annotations;
pub mod argo;
pub mod draft;
pub mod facts;
pub mod kapp;
pub mod kinds;
pub mod kots;
pub mod live;
mod load;
pub mod object;
pub mod qualified;
pub mod werf;
pub mod werf_auto;

use std::collections::BTreeMap;

pub use crate::source::input::{Input, InputTarget};
pub use load::{build, load, load_stream};

use crate::parse::Span;
use crate::source::chart::{ChartMeta, DependencySpec};
use crate::source::{FileId, Loc, SourceMap};
use annotations::{Annotation, NameList, Sequencing, Spanned};

/// Index of a chart level in [`Model::charts`].
pub type ChartId = usize;
/// Index of a document in [`Model::documents`].
pub type DocId = usize;

/// The identity Kubernetes (and Helm's sequencing) uses for a resource.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourceId {
    pub group: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
}

impl std::fmt::Display for ResourceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.kind, self.name)?;
        if let Some(ns) = &self.namespace {
            write!(f, " (namespace {ns})")?;
        }
        Ok(())
    }
}

/// A chart level: the root chart or a subchart, named as Helm renders it (alias when set).
#[derive(Debug)]
pub struct Chart {
    /// The name in paths: the alias when one is set.
    pub name: String,
    pub parent: Option<ChartId>,
    pub children: Vec<ChartId>,
    /// Prefix of its documents' `# Source:` paths: `root/charts/sub`.
    pub manifest_prefix: String,
    /// Display path: `root/sub`.
    pub display: String,
    /// Listed in the parent's `Chart.yaml` dependencies (always true for the root).
    pub declared: bool,
    /// Not disabled by a condition or tags.
    pub enabled: bool,
    /// Why the chart is disabled, for messages (`condition db.enabled is false`).
    pub disabled_by: Option<String>,
    /// The stream holds documents of this chart although the known values disable it (why
    /// they would, as `disabled_by` says it): it was rendered with other values. Such a chart
    /// is enabled, so that no rendered document is dropped, and every command warns.
    pub rendered_while_disabled: Option<String>,
    /// `Chart.yaml` facts; `None` when the level is only known from `# Source:` paths.
    pub info: Option<ChartInfo>,
}

impl Chart {
    /// Whether a subchart reference (`helm.sh/depends-on/subcharts`, a dependency's
    /// `depends-on`) names this chart: by its name (the alias when set) or its dependency's name.
    #[must_use]
    pub fn answers_to(&self, reference: &str) -> bool {
        self.name == reference
            || self
                .info
                .as_ref()
                .and_then(|i| i.dependency.as_ref())
                .is_some_and(|d| d.name == reference)
    }
}

/// What is known about a chart from disk.
#[derive(Debug)]
pub struct ChartInfo {
    pub meta: ChartMeta,
    /// The parent's `dependencies[]` entry for this chart.
    pub dependency: Option<DependencySpec>,
    /// `templates/…` and `crds/…` files by chart-relative path.
    pub files: BTreeMap<String, FileId>,
    pub display_root: String,
    /// `helm.sh/depends-on/subcharts` of this chart's `Chart.yaml`.
    pub depends_on_subcharts: Option<Spanned<NameList>>,
    /// `depends-on` of each dependency entry, by effective name.
    pub dependency_depends_on: Vec<(String, Spanned<NameList>)>,
}

/// Where a document sits in its chart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// From `templates/`.
    Template,
    /// From `crds/`: applied before everything else, never sequenced.
    Crd,
}

/// One document of the rendered stream.
#[derive(Debug)]
pub struct Document {
    pub file: FileId,
    /// The document's bytes in `file`.
    pub span: Span,
    /// Its `# Source:` path.
    pub source_path: Option<String>,
    pub chart: ChartId,
    pub placement: Placement,
    /// The template (or `crds/`) file on disk, when the chart is on disk.
    pub template: Option<FileId>,
    pub content: Content,
}

impl Document {
    /// Whether the document holds only comments (or an explicit null): a template that
    /// rendered nothing. It is not a resource (SPEC §2): no plan step, finding or count.
    #[must_use]
    pub fn is_comment_only(&self) -> bool {
        matches!(self.content, Content::Empty)
    }
}

/// What a document holds.
#[derive(Debug)]
pub enum Content {
    Resource(Box<Resource>),
    /// Only comments (or an explicit null): not a resource.
    Empty,
    /// Not valid YAML (or over a cap): the message and where.
    Invalid {
        message: String,
        at: Loc,
    },
    /// Valid YAML that is not a Kubernetes object Helm can apply.
    NotAnObject {
        message: String,
        at: Loc,
        /// An object named only by `metadata.generateName` (its `id.name` holds the prefix):
        /// Helm and most tools refuse it, while Argo CD creates such a hook on every sync
        /// under a new name. `None` for anything else.
        generated: Option<Box<Resource>>,
    },
}

/// A hook: never sequenced, run around the plan by weight, then name, then Helm's kind order.
#[derive(Clone, Debug, PartialEq)]
pub struct Hook {
    /// Known events, lower-cased as Helm reads them.
    pub events: Vec<String>,
    /// Events Helm does not know (Helm drops such a resource entirely).
    pub unknown_events: Vec<String>,
    /// `helm.sh/hook-weight` as Helm reads it (0 when not an integer).
    pub weight: i64,
    /// The raw weight when it is not an integer.
    pub invalid_weight: Option<Spanned<String>>,
    pub delete_policies: Vec<String>,
    pub loc: Loc,
}

/// Helm's hook events.
pub const HOOK_EVENTS: [&str; 10] = [
    "pre-install",
    "post-install",
    "pre-delete",
    "post-delete",
    "pre-upgrade",
    "post-upgrade",
    "pre-rollback",
    "post-rollback",
    "test",
    "test-success",
];

/// A Kubernetes object.
#[derive(Debug)]
pub struct Resource {
    pub api_version: String,
    pub id: ResourceId,
    pub annotations: Vec<Annotation>,
    /// `metadata.labels`, read as annotations are (key, value, places).
    pub labels: Vec<Annotation>,
    pub seq: Sequencing,
    pub hook: Option<Hook>,
    /// Where `kind:` is written, for diagnostics about the whole resource.
    pub kind_loc: Loc,
    /// Byte ranges whose text must never be shown (Secret `data`/`stringData`).
    pub redact: Vec<Span>,
    /// Pod-spec references and CRD definitions, for the lint rules.
    pub facts: facts::Facts,
    /// Argo CD's wave and hook phases (`--dialect argo`).
    pub argo: argo::Argo,
    /// werf/nelm's stages and weight (`--dialect werf`).
    pub werf: werf::Werf,
    /// kapp's change groups and rules (`--dialect kapp`), read once the whole release is known.
    pub kapp: kapp::Kapp,
    /// KOTS's phases and waits (`--dialect kots`).
    pub kots: kots::Kots,
    /// The draft HIP's layers and weights (`--dialect draft`).
    pub draft: draft::Draft,
}

impl Resource {
    #[must_use]
    pub fn annotation(&self, key: &str) -> Option<&Annotation> {
        self.annotations.iter().rev().find(|a| a.key == key)
    }
}

/// What every command says of a chart level rendered although the known values disable it.
#[must_use]
pub fn values_mismatch_message(chart: &str, why: &str) -> String {
    format!(
        "the stream holds documents of subchart `{chart}`, which {why} disables with the values chartseq was given: it was rendered with other values; its documents are kept and planned as enabled (pass the values the stream was rendered with: -f/--set)"
    )
}

/// Everything chartseq knows about one release.
#[derive(Debug)]
pub struct Model {
    pub sources: SourceMap,
    /// Chart levels, root first, in pre-order.
    pub charts: Vec<Chart>,
    /// Documents in input order.
    pub documents: Vec<Document>,
    /// The rendered stream.
    pub stream: FileId,
}

impl Model {
    #[must_use]
    pub fn resource(&self, doc: DocId) -> Option<&Resource> {
        match &self.documents[doc].content {
            Content::Resource(r) => Some(r),
            _ => None,
        }
    }

    /// The object of a document named only by `metadata.generateName`, if it is one.
    #[must_use]
    pub fn generated(&self, doc: DocId) -> Option<&Resource> {
        match &self.documents[doc].content {
            Content::NotAnObject {
                generated: Some(r), ..
            } => Some(r),
            _ => None,
        }
    }

    /// The chart level whose manifest prefix is `prefix`.
    #[must_use]
    pub fn chart_by_prefix(&self, prefix: &str) -> Option<ChartId> {
        self.charts.iter().position(|c| c.manifest_prefix == prefix)
    }

    /// Every document that belongs to the plan proper (not a hook, not from `crds/`, not
    /// only comments).
    pub fn planned_documents(&self) -> impl Iterator<Item = DocId> + '_ {
        self.documents
            .iter()
            .enumerate()
            .filter(|(_, d)| {
                d.placement == Placement::Template
                    && !d.is_comment_only()
                    && !matches!(&d.content, Content::Resource(r) if r.hook.is_some())
            })
            .map(|(i, _)| i)
    }
}
