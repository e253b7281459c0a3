//! `chartseq migrate`: moves a chart's ordering from another tool's annotations to HIP-0025
//! (SPEC §6, DIALECTS.md §7), as an edit of the template files a person owns, and proves what
//! the new order keeps.
//!
//! Each source dialect is a mapping module over its planner's output ([`argo`], [`werf`]): it
//! says which HIP-0025 annotations each resource needs ([`Mapping`]). [`edit`] turns that into
//! line edits of the templates, next to the source annotation as written, with the template's
//! own indentation and quoting; what it cannot place safely becomes a manual edit. [`proof`]
//! renders the edited chart in a temporary copy, plans it with HIP-0025 semantics and checks
//! every ordering constraint of the source plan against it.

pub mod argo;
pub mod detect;
pub mod draft;
mod edit;
pub mod kapp;
pub mod kots;
pub mod ordinal;
pub mod output;
mod proof;
mod subcharts;
pub mod werf;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::{self, DocId, Input, InputTarget, Model, ResourceId};
use crate::plan::{self, Dialect};
use crate::source::Loc;

/// What `chartseq migrate` was asked to do.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The chart (a directory): rendering flags as for every command.
    pub input: Input,
    /// The source tool; `None` detects it ([`detect::detect`]).
    pub from: Option<Dialect>,
    /// Write the edits into the chart.
    pub write: bool,
    /// Remove the source annotations the migration carried over.
    pub drop_source_annotations: bool,
    /// `--strict`: succeed only when nothing is lost and no manual edit is pending (the exit
    /// code says so, and the last line of standard error says why not).
    pub strict: bool,
}

/// The HIP-0025 annotations one resource needs, and where its source annotations are.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Want {
    /// The source annotation (its key, in the rendered stream) the new lines go next to;
    /// `None` when the resource has none (an unannotated resource at ordinal 0): the lines go
    /// into its template's `metadata`.
    pub anchor: Option<Loc>,
    /// Annotations to set, in order: (key, value as the string Helm reads).
    pub set: Vec<(String, String)>,
    /// Source annotations whose meaning the migration carried over (key locations), removed
    /// with `--drop-source-annotations`.
    pub carried: Vec<Loc>,
}

/// A change the migration cannot make in a template and asks a person to make.
#[derive(Clone, Debug, PartialEq)]
pub struct Manual {
    /// The document the change is for; one past every document (`usize::MAX`) for a change
    /// of a `Chart.yaml`.
    pub doc: DocId,
    /// Where (rendered stream, or a template) the change belongs.
    pub at: Option<Loc>,
    pub reason: String,
    /// The exact lines to write.
    pub snippet: String,
}

/// An ordering the source tool had and HIP-0025 does not keep.
#[derive(Clone, Debug, PartialEq)]
pub struct Lost {
    pub before: Res,
    pub after: Res,
    pub reason: String,
}

/// A wait HIP-0025 adds that the source tool did not have.
#[derive(Clone, Debug, PartialEq)]
pub struct Stricter {
    pub resource: Res,
    pub reason: String,
}

/// A resource as SPEC §6's JSON names it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Res {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    /// The name, or the `metadata.generateName` prefix of an object named only by it.
    pub name: String,
    /// Named only by `metadata.generateName` (`name` is the prefix).
    pub generated: bool,
}

impl Res {
    #[must_use]
    pub fn of(model: &Model, doc: DocId) -> Option<Self> {
        let r = model.resource(doc)?;
        Some(Res {
            api_version: r.api_version.clone(),
            kind: r.id.kind.clone(),
            namespace: r.id.namespace.clone(),
            name: r.id.name.clone(),
            generated: false,
        })
    }

    /// A resource, or an object named only by `metadata.generateName` (Argo CD names such a
    /// hook when it creates it; Helm cannot install it).
    #[must_use]
    pub fn of_any(model: &Model, doc: DocId) -> Option<Self> {
        Res::of(model, doc).or_else(|| {
            let r = model.generated(doc)?;
            Some(Res {
                api_version: r.api_version.clone(),
                kind: r.id.kind.clone(),
                namespace: r.id.namespace.clone(),
                name: r.id.name.clone(),
                generated: true,
            })
        })
    }
}

impl std::fmt::Display for Res {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.kind, self.name)?;
        if self.generated {
            f.write_str("*")?;
        }
        if let Some(ns) = &self.namespace {
            write!(f, " (namespace {ns})")?;
        }
        Ok(())
    }
}

/// What a dialect's mapping module produces from its plan.
#[derive(Clone, Debug, Default)]
pub struct Mapping {
    pub wants: BTreeMap<DocId, Want>,
    pub manual: Vec<Manual>,
    /// What HIP-0025 cannot say at all (external dependencies, delete rules, …).
    pub lost: Vec<Lost>,
    /// The group chain made for each chart level, for the report.
    pub chains: Vec<(model::ChartId, Vec<String>)>,
    /// Ordering constraints of the source tool that its plan does not draw (werf's manual
    /// dependencies; every constraint of a tool chartseq has no planner for): (before,
    /// after), checked by the proof like the plan's own.
    pub constraints: Vec<(DocId, DocId)>,
    /// Waits HIP-0025 adds that the mapping knows of (KOTS waits only where annotated).
    pub stricter: Vec<Stricter>,
    /// Uninstall orders of the source tool: (gone first, deleted after, the annotation key).
    /// HIP-0025 uninstalls in the exact reverse of its install order, so the proof keeps one
    /// when the migrated chart installs the second before the first.
    pub delete_constraints: Vec<(DocId, DocId, String)>,
}

impl Mapping {
    /// The entry of a document, created on first use.
    pub fn want(&mut self, doc: DocId) -> &mut Want {
        self.wants.entry(doc).or_default()
    }
}

/// One edit of a template file, as SPEC §6's JSON lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct FileEdit {
    /// The file as the user would name it.
    pub file: String,
    /// 1-based line in the original file the edit is at.
    pub line: usize,
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

/// A manual edit, located for the report.
#[derive(Clone, Debug, PartialEq)]
pub struct ManualEdit {
    pub file: String,
    pub line: usize,
    pub resource: Option<Res>,
    pub reason: String,
    pub snippet: String,
}

/// The proof: constraints of the source plan checked against the migrated chart's HIP plan.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Proof {
    /// Number of ordering constraints (pairs) kept.
    pub kept: usize,
    pub lost: Vec<Lost>,
    pub stricter: Vec<Stricter>,
}

/// The result of a migration.
#[derive(Clone, Debug)]
pub struct Migration {
    /// The source tool; `None` when detection found no foreign ordering annotations.
    pub from: Option<Dialect>,
    pub edits: Vec<FileEdit>,
    pub manual: Vec<ManualEdit>,
    /// A unified diff of every edited file (paths relative to the chart directory).
    pub diff: String,
    pub proof: Proof,
    /// Group chains per chart level (chart display path, groups in order).
    pub chains: Vec<(String, Vec<String>)>,
    /// Files written (with `--write`).
    pub written: Vec<PathBuf>,
}

impl Migration {
    /// Whether an ordering was lost (exit 1).
    #[must_use]
    pub fn lost_anything(&self) -> bool {
        !self.proof.lost.is_empty()
    }
}

/// How a system's order becomes HIP-0025 edits: from the model and the system's own plan.
pub type Map = fn(&Model, &plan::Plan) -> Mapping;

/// The mapping of every system `migrate --from` reads (every one but HIP-0025), one row each.
const MAPPINGS: &[(Dialect, Map)] = &[
    (Dialect::Argo, argo::map),
    (Dialect::Werf, werf::map),
    (Dialect::Kapp, kapp::map),
    (Dialect::Kots, kots::map),
    (Dialect::Draft, draft::map),
];

/// The mapping from a system's order to HIP-0025's, if migrate reads that system.
#[must_use]
pub fn mapping(from: Dialect) -> Option<Map> {
    MAPPINGS
        .iter()
        .find(|(d, _)| *d == from)
        .map(|(_, map)| *map)
}

/// Runs a migration: maps, edits, proves; with `write`, writes the edited templates.
pub fn migrate(settings: &Settings) -> Result<Migration> {
    let InputTarget::Chart(chart_dir) = &settings.input.target else {
        let path = match &settings.input.target {
            InputTarget::Chart(p) | InputTarget::Stream(p) => p,
        };
        if path.as_os_str() != "-" && !path.exists() {
            return Err(Error::usage(format!(
                "{}: no such path",
                crate::source::display_path(path)
            )));
        }
        return Err(Error::usage(
            "migrate edits a chart's templates: give it a chart directory",
        ));
    };
    if !chart_dir.is_dir() {
        return Err(Error::usage(format!(
            "{}: migrate edits a chart's templates: give it a chart directory, not an archive",
            crate::source::display_path(chart_dir)
        )));
    }
    let model = model::load(&settings.input)?;
    let from = match settings.from {
        Some(d) => d,
        None => match detect::detect(&model)? {
            Some(d) => d,
            None => {
                return Ok(Migration {
                    from: None,
                    edits: Vec::new(),
                    manual: Vec::new(),
                    diff: String::new(),
                    proof: Proof::default(),
                    chains: Vec::new(),
                    written: Vec::new(),
                });
            }
        },
    };
    let source_plan = plan::plan_in(&model, from).map_err(|e| {
        let mut text = Vec::new();
        let _ = plan::output::write_plan_error(&mut text, &model, &e);
        Error::invalid(format!(
            "{} refuses this chart's order, so there is nothing faithful to migrate",
            from.named()
        ))
        .with_detail(String::from_utf8_lossy(&text).trim_end().to_owned())
    })?;
    let Some(map) = mapping(from) else {
        return Err(Error::usage(if from == Dialect::Hip {
            "the chart's order is HIP-0025's already: migrate reads another tool's".to_owned()
        } else {
            format!("migrate does not read {}'s order", from.named())
        }));
    };
    let mut mapping = map(&model, &source_plan);
    // The draft orders subcharts as HIP-0025 does; the other tools' orders span the release.
    if from.release_wide() {
        subcharts::order(&model, &source_plan, from.named(), &mut mapping);
    }
    // Documents that could not be read are in no plan: said, not silently dropped.
    for (doc, d) in model.documents.iter().enumerate() {
        if let model::Content::Invalid { message, at }
        | model::Content::NotAnObject { message, at, .. } = &d.content
        {
            mapping.manual.push(Manual {
                doc,
                at: Some(*at),
                reason: format!(
                    "this document could not be read ({message}), so it is not migrated"
                ),
                snippet: String::new(),
            });
        }
    }
    let edited = edit::apply(
        &model,
        chart_dir,
        &mapping,
        settings.drop_source_annotations,
    );
    let proof = proof::prove(
        &model,
        &source_plan,
        from,
        chart_dir,
        &edited,
        &settings.input,
        &mapping,
    )?;
    let mut written = Vec::new();
    if settings.write {
        for file in &edited.files {
            std::fs::write(&file.disk_path, &file.new_text)
                .map_err(|e| Error::io(format!("cannot write {}", file.disk_path.display()), e))?;
            written.push(file.disk_path.clone());
        }
    }
    let chains = mapping
        .chains
        .iter()
        .map(|(chart, groups)| (model.charts[*chart].display.clone(), groups.clone()))
        .collect();
    Ok(Migration {
        from: Some(from),
        edits: edited.edits,
        manual: edited.manual,
        diff: edited.diff,
        proof,
        chains,
        written,
    })
}

/// The chart directory's path relative to which a template is edited.
fn relative_to(root: &Path, file: &Path) -> Option<PathBuf> {
    file.strip_prefix(root).ok().map(Path::to_path_buf)
}

/// The `ResourceId` key a resource is matched by across the original and migrated models.
fn identity(model: &Model, doc: DocId) -> Option<ResourceId> {
    model.resource(doc).map(|r| r.id.clone())
}

/// The identity of an object named only by `metadata.generateName` (its prefix as the name).
fn generated_identity(model: &Model, doc: DocId) -> Option<ResourceId> {
    model.generated(doc).map(|r| r.id.clone())
}
