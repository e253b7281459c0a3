//! The proof: the edited chart, rendered by helm in a temporary copy and planned with
//! HIP-0025 semantics, against every ordering constraint of the source plan.
//!
//! A constraint is a pair "A is ready before B starts" between the resources of a source step
//! and those of each step it waits for (and the tool's first phase before its first steps);
//! the rest follow by transitivity. Resources are matched by identity (API group, kind,
//! namespace, name). In the HIP-0025 release order, `crds/` come first, then the pre-install
//! hooks one at a time, then the plan's steps (compared with the step graph's reachability),
//! then the post-install hooks. Within one step only a Namespace counts as before the rest
//! (Helm applies it first and it is ready at once).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use super::edit::Edited;
use super::{Lost, Mapping, Proof, Res, Stricter};
use crate::error::{Error, Result};
use crate::lint::locate::template_loc;
use crate::model::{self, DocId, Input, InputTarget, Model, ResourceId};
use crate::plan::Dialect;
use crate::plan::graph::StepGraph;
use crate::plan::{self, Plan};
use crate::source::chart::ChartLimits;
use crate::source::display_path;
use crate::source::temp::TempDir;

/// Where a resource sits in Helm's install.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Pos {
    Crd,
    PreHook(usize),
    Step(usize),
    PostHook(usize),
    /// A hook that does not run on install.
    NotInstalled,
}

/// The release order of a HIP-0025 plan, by resource identity.
struct HipOrder<'a> {
    model: &'a Model,
    plan: &'a Plan,
    graph: StepGraph,
    /// Every place of a resource (a hook of several events runs more than once).
    pos: HashMap<ResourceId, Vec<(Pos, DocId)>>,
    /// Steps something waits for.
    waited: BTreeSet<usize>,
}

impl<'a> HipOrder<'a> {
    fn new(model: &'a Model, plan: &'a Plan) -> Self {
        let mut pos = HashMap::new();
        let mut put = |doc: DocId, p: Pos| {
            if let Some(r) = model.resource(doc) {
                pos.entry(r.id.clone())
                    .or_insert_with(Vec::new)
                    .push((p, doc));
            }
        };
        for &doc in &plan.crds {
            put(doc, Pos::Crd);
        }
        for (i, &doc) in plan.hooks.iter().enumerate() {
            let events = model
                .resource(doc)
                .and_then(|r| r.hook.as_ref())
                .map(|h| h.events.clone())
                .unwrap_or_default();
            let pre = events.iter().any(|e| e == "pre-install");
            let post = events.iter().any(|e| e == "post-install");
            if pre {
                put(doc, Pos::PreHook(i));
            }
            if post {
                put(doc, Pos::PostHook(i));
            }
            if !pre && !post {
                put(doc, Pos::NotInstalled);
            }
        }
        for (i, step) in plan.steps.iter().enumerate() {
            for &doc in &step.resources {
                put(doc, Pos::Step(i));
            }
        }
        let waited = plan
            .steps
            .iter()
            .flat_map(|s| s.after.iter().copied())
            .collect();
        Self {
            model,
            plan,
            graph: StepGraph::new(&plan.steps),
            pos,
            waited,
        }
    }

    /// Whether `a` is in place before `b` starts (at one of the times each is applied);
    /// `Err` says why not.
    fn before(&self, a: &ResourceId, b: &ResourceId) -> Result<(), String> {
        let (Some(pas), Some(pbs)) = (self.pos.get(a), self.pos.get(b)) else {
            return Err("the migrated chart does not render both of them".to_owned());
        };
        let mut why = None;
        for &(pa, da) in pas {
            for &(pb, db) in pbs {
                match self.placed_before(pa, da, pb, db) {
                    Ok(()) => return Ok(()),
                    Err(e) => {
                        why.get_or_insert(e);
                    }
                }
            }
        }
        Err(why.unwrap_or_default())
    }

    fn placed_before(&self, pa: Pos, da: DocId, pb: Pos, db: DocId) -> Result<(), String> {
        let chart = |d: DocId| self.model.documents[d].chart;
        match (pa, pb) {
            (Pos::NotInstalled, _) | (_, Pos::NotInstalled) => {
                Err("Helm runs that hook only on other operations than install".to_owned())
            }
            (Pos::Crd, Pos::Crd) => {
                Err("both are in crds/, which Helm applies together".to_owned())
            }
            (Pos::Crd, _)
            | (Pos::PreHook(_), Pos::Step(_))
            | (Pos::PreHook(_) | Pos::Step(_), Pos::PostHook(_)) => Ok(()),
            (_, Pos::Crd) => Err("Helm applies crds/ before everything".to_owned()),
            (Pos::PreHook(i), Pos::PreHook(j)) | (Pos::PostHook(i), Pos::PostHook(j)) => {
                if i < j {
                    Ok(())
                } else {
                    Err("Helm runs hooks by weight, then name, and runs this one first".to_owned())
                }
            }
            (Pos::Step(_), Pos::PreHook(_)) => {
                Err("Helm runs pre-install hooks before every templated resource".to_owned())
            }
            (Pos::PostHook(_), _) => {
                Err("Helm runs post-install hooks after every other resource".to_owned())
            }
            (Pos::Step(i), Pos::Step(j)) => {
                if self.graph.before(i, j) {
                    return Ok(());
                }
                if i == j {
                    let ra = self.model.resource(da);
                    if ra.is_some_and(|r| r.id.kind == "Namespace" && r.id.group.is_empty()) {
                        return Ok(());
                    }
                    return Err(format!(
                        "both are in the same HIP-0025 step ({}), applied together",
                        self.step_name(i)
                    ));
                }
                let (ca, cb) = (chart(da), chart(db));
                if ca == cb {
                    return Err(format!(
                        "the migrated groups do not order {} before {}",
                        self.step_name(i),
                        self.step_name(j)
                    ));
                }
                let charts = &self.model.charts;
                if is_ancestor(self.model, ca, cb) {
                    Err(format!(
                        "cross-subchart inversion: HIP-0025 installs subchart {} completely before the resources of {}",
                        charts[cb].display, charts[ca].display
                    ))
                } else {
                    Err(format!(
                        "HIP-0025 orders groups only within one chart: {} and {} are not ordered (Chart.yaml `depends-on` can order sibling subcharts only when every resource of one comes first)",
                        charts[ca].display, charts[cb].display
                    ))
                }
            }
        }
    }

    fn step_name(&self, i: usize) -> String {
        let s = &self.plan.steps[i];
        let chart = &self.model.charts[s.chart].display;
        match &s.group {
            Some(g) => format!("{chart} group {g}"),
            None => format!("{chart} unsequenced"),
        }
    }

    /// Whether HIP-0025 waits for the resource's readiness before something else starts.
    fn waits_for(&self, id: &ResourceId) -> bool {
        self.pos.get(id).is_some_and(|ps| {
            ps.iter()
                .any(|&(p, _)| matches!(p, Pos::Step(i) if self.waited.contains(&i)))
        })
    }
}

/// Whether chart `ancestor` is an ancestor of `c`.
fn is_ancestor(model: &Model, ancestor: model::ChartId, c: model::ChartId) -> bool {
    let mut cur = model.charts[c].parent;
    while let Some(p) = cur {
        if p == ancestor {
            return true;
        }
        cur = model.charts[p].parent;
    }
    false
}

/// The template line of a resource (its `kind:`), for reports.
pub(super) fn place(model: &Model, doc: DocId) -> String {
    let Some(r) = model.resource(doc) else {
        return String::new();
    };
    kind_place(model, r)
}

/// [`place`], also for an object named only by `metadata.generateName`.
fn place_any(model: &Model, doc: DocId) -> String {
    match model.resource(doc).or_else(|| model.generated(doc)) {
        Some(r) => kind_place(model, r),
        None => String::new(),
    }
}

fn kind_place(model: &Model, r: &model::Resource) -> String {
    let loc = template_loc(model, r.kind_loc).unwrap_or(r.kind_loc);
    let f = model.sources.get(loc.file);
    format!("{}:{}", f.name, f.line_col(loc.span.start).line)
}

/// What a copy of the chart may still write: the chart limits, for every file of the chart
/// directory (not only those sequencing reads: helm renders the copy).
struct CopyBudget {
    bytes: u64,
    files: usize,
    limits: ChartLimits,
}

/// Copies a chart directory, following links as the chart loader follows them (a copy must
/// never write through a link into the original), within the chart limits. A link back into
/// a directory it is in is not followed (following it never ends): it is recreated as a link
/// to the copy of that directory, so helm reads the copy as it reads the original (it skips
/// the link when `.helmignore` names it, and refuses the chart otherwise). Irregular files
/// and broken links are left out, as before.
fn copy_tree(
    from: &Path,
    to: &Path,
    chain: &mut Vec<(PathBuf, PathBuf)>,
    budget: &mut CopyBudget,
) -> Result<()> {
    if chain.len() > budget.limits.max_depth * 2 + 32 {
        return Err(Error::invalid(format!(
            "{}: directories nest too deep to copy",
            display_path(from)
        )));
    }
    std::fs::create_dir_all(to)
        .map_err(|e| Error::io(format!("cannot create {}", to.display()), e))?;
    let entries = std::fs::read_dir(from)
        .map_err(|e| Error::io(format!("cannot read {}", display_path(from)), e))?;
    let mut entries: Vec<_> = entries.filter_map(std::result::Result::ok).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        budget.files = budget.files.checked_sub(1).ok_or_else(|| {
            Error::invalid(format!(
                "{}: more than {} files to copy",
                display_path(from),
                budget.limits.max_files
            ))
        })?;
        let path = entry.path();
        let target = to.join(entry.file_name());
        let Ok(meta) = std::fs::metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            let real = path
                .canonicalize()
                .map_err(|e| Error::io(format!("cannot read {}", display_path(&path)), e))?;
            if let Some((_, copy_of)) = chain.iter().find(|(r, _)| *r == real) {
                link_back(&target, copy_of)?;
                continue;
            }
            chain.push((real, target.clone()));
            let copied = copy_tree(&path, &target, chain, budget);
            chain.pop();
            copied?;
        } else if meta.is_file() {
            copy_file(&path, &target, budget)?;
        }
    }
    Ok(())
}

/// Copies one file, held to what the copy may still write (a file that grows while it is
/// copied stops there).
fn copy_file(from: &Path, to: &Path, budget: &mut CopyBudget) -> Result<()> {
    let too_big = || {
        Error::invalid(format!(
            "{}: the chart directory holds more than {} bytes to copy; raise --max-archive-bytes if it is genuine",
            display_path(from),
            budget.limits.max_archive_bytes
        ))
    };
    let input = std::fs::File::open(from)
        .map_err(|e| Error::io(format!("cannot copy {}", display_path(from)), e))?;
    let mut output = std::fs::File::create(to)
        .map_err(|e| Error::io(format!("cannot write {}", to.display()), e))?;
    let copied = std::io::copy(
        &mut std::io::Read::take(input, budget.bytes.saturating_add(1)),
        &mut output,
    )
    .map_err(|e| Error::io(format!("cannot copy {}", display_path(from)), e))?;
    budget.bytes = budget.bytes.checked_sub(copied).ok_or_else(too_big)?;
    Ok(())
}

/// Makes `at` a relative link to `dir`, a directory of the copy that holds it.
fn link_back(at: &Path, dir: &Path) -> Result<()> {
    let parent = at.parent().unwrap_or(at);
    let steps = parent
        .strip_prefix(dir)
        .map_or(0, |rest| rest.components().count());
    let relative: PathBuf = if steps == 0 {
        PathBuf::from(".")
    } else {
        std::iter::repeat_n("..", steps).collect()
    };
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&relative, at)
            .map_err(|e| Error::io(format!("cannot create the link {}", at.display()), e))
    }
    #[cfg(not(unix))]
    {
        let _ = relative;
        Err(Error::invalid(format!(
            "{}: a link back into a directory it is in cannot be copied here",
            at.display()
        )))
    }
}

/// Renders and plans the edited chart and checks the source plan's constraints against it.
pub(super) fn prove(
    model: &Model,
    source: &Plan,
    from: Dialect,
    chart_dir: &Path,
    edited: &Edited,
    input: &Input,
    mapping: &Mapping,
) -> Result<Proof> {
    // Removed when dropped, on error too; a killed run's copy is removed by the next run.
    let temp = TempDir::new("chartseq-migrate")?;
    let name = chart_dir
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(std::ffi::OsStr::to_os_string))
        .unwrap_or_else(|| "chart".into());
    let copy = temp.path().join(name);
    let mut budget = CopyBudget {
        bytes: input.chart_limits.max_archive_bytes,
        files: input.chart_limits.max_files,
        limits: input.chart_limits,
    };
    let root = chart_dir
        .canonicalize()
        .map_err(|e| Error::io(format!("cannot read {}", display_path(chart_dir)), e))?;
    copy_tree(
        chart_dir,
        &copy,
        &mut vec![(root, copy.clone())],
        &mut budget,
    )?;
    for file in &edited.files {
        let path = copy.join(&file.rel);
        std::fs::write(&path, &file.new_text)
            .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
    }
    let mut migrated_input = input.clone();
    migrated_input.target = InputTarget::Chart(copy.clone());
    let migrated =
        model::load(&migrated_input).map_err(|e| e.context("rendering the migrated chart"))?;
    let hip = plan::plan(&migrated).map_err(|e| {
        let mut text = Vec::new();
        let _ = plan::output::write_plan_error(&mut text, &migrated, &e);
        Error::new("the migrated chart has no HIP-0025 plan")
            .with_detail(String::from_utf8_lossy(&text).trim_end().to_owned())
    })?;
    let order = HipOrder::new(&migrated, &hip);

    let mut proof = Proof::default();
    let mut seen: BTreeSet<(ResourceId, ResourceId)> = BTreeSet::new();
    let mut check = |a: DocId, b: DocId, proof: &mut Proof| {
        let (Some(ia), Some(ib)) = (super::identity(model, a), super::identity(model, b)) else {
            // An object named only by `generateName` is in the tool's order (Argo CD names it
            // when it creates it) and can be in no HIP-0025 order until it has a name.
            let any = |d| super::identity(model, d).or_else(|| super::generated_identity(model, d));
            let (Some(ia), Some(ib)) = (any(a), any(b)) else {
                return;
            };
            if ia == ib || !seen.insert((ia, ib)) {
                return;
            }
            if let (Some(before), Some(after)) = (Res::of_any(model, a), Res::of_any(model, b)) {
                let unnamed = if before.generated { &before } else { &after };
                let reason = format!(
                    "{} ordered {before} ({}) before {after} ({}); {unnamed} has only a `metadata.generateName`, which Helm cannot install: give it a name (the manual edit) and migrate again",
                    from.named(),
                    place_any(model, a),
                    place_any(model, b),
                );
                proof.lost.push(Lost {
                    before,
                    after,
                    reason,
                });
            }
            return;
        };
        if ia == ib || !seen.insert((ia.clone(), ib.clone())) {
            return;
        }
        match order.before(&ia, &ib) {
            Ok(()) => proof.kept += 1,
            Err(why) => {
                let (Some(before), Some(after)) = (Res::of(model, a), Res::of(model, b)) else {
                    return;
                };
                proof.lost.push(Lost {
                    before,
                    after,
                    reason: format!(
                        "{} ordered {} ({}) before {} ({}); {why}",
                        from.named(),
                        Res::of(model, a).map(|r| r.to_string()).unwrap_or_default(),
                        place(model, a),
                        Res::of(model, b).map(|r| r.to_string()).unwrap_or_default(),
                        place(model, b),
                    ),
                });
            }
        }
    };
    for step in &source.steps {
        if step.after.is_empty() {
            for &a in &source.crds {
                for &b in &step.resources {
                    check(a, b, &mut proof);
                }
            }
        }
        for &p in &step.after {
            for &a in &source.steps[p].resources {
                for &b in &step.resources {
                    check(a, b, &mut proof);
                }
            }
        }
    }
    for &(a, b) in &mapping.constraints {
        check(a, b, &mut proof);
    }
    for (first, then, key) in &mapping.delete_constraints {
        let (Some(ifirst), Some(ithen)) = (
            super::identity(model, *first),
            super::identity(model, *then),
        ) else {
            continue;
        };
        match order.before(&ithen, &ifirst) {
            Ok(()) => proof.kept += 1,
            Err(why) => {
                let (Some(before), Some(after)) = (Res::of(model, *first), Res::of(model, *then))
                else {
                    continue;
                };
                proof.lost.push(Lost {
                    reason: format!(
                        "{key}: {} deletes {after} only once {before} is gone; HIP-0025 uninstalls in the exact reverse of its install order, which does not install {after} ({}) before {before} ({}): {why}",
                        from.named(),
                        place(model, *then),
                        place(model, *first),
                    ),
                    before,
                    after,
                });
            }
        }
    }
    proof.lost.extend(mapping.lost.iter().cloned());

    // Waits HIP-0025 adds: Argo CD does not wait for its last wave (werf waits for everything).
    proof.stricter.extend(mapping.stricter.iter().cloned());
    if from == Dialect::Argo {
        let waited: BTreeSet<usize> = source
            .steps
            .iter()
            .flat_map(|s| s.after.iter().copied())
            .collect();
        let mut stricter: BTreeMap<ResourceId, Stricter> = BTreeMap::new();
        for (i, step) in source.steps.iter().enumerate() {
            if waited.contains(&i) {
                continue;
            }
            for &doc in &step.resources {
                let Some(r) = model.resource(doc) else {
                    continue;
                };
                if r.argo.is_hook || !order.waits_for(&r.id) {
                    continue;
                }
                if let Some(res) = Res::of(model, doc) {
                    stricter.entry(r.id.clone()).or_insert(Stricter {
                        resource: res,
                        reason: format!(
                            "HIP-0025 waits for it to be ready before what follows in the chart ({}); Argo CD does not wait for its last wave",
                            place(model, doc)
                        ),
                    });
                }
            }
        }
        proof.stricter.extend(stricter.into_values());
    }
    proof
        .lost
        .sort_by(|a, b| (&a.before, &a.after).cmp(&(&b.before, &b.after)));
    Ok(proof)
}
