//! Building the [`Model`] from what [`crate::source::input`] read: parse every document in
//! parallel, place each one in its chart level. No I/O.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::annotations::{
    self, Annotation, DEPENDS_ON_SUBCHARTS, HOOK, HOOK_DELETE_POLICY, HOOK_WEIGHT, Sequencing,
    Spanned,
};
use super::object::{Object, ReadObject};
use super::{
    Chart, ChartId, ChartInfo, Content, Document, HOOK_EVENTS, Hook, Model, Placement, Resource,
    ResourceId, kinds,
};
use crate::error::{Error, Result};
use crate::parse::{self, Limits, Node, Span};
use crate::source::chart::{self, LoadedChart};
use crate::source::input::{self, Input, InputTarget};
use crate::source::values::{self, coalesce};
use crate::source::{FileId, Loc, Origin, SourceMap, split_stream};

/// Loads the inputs into a model: reads them ([`input::read`], all the I/O) and builds the
/// model from what was read ([`build`]).
pub fn load(input: &Input) -> Result<Model> {
    build(input::read(input)?, input)
}

/// Builds the model from what was read, with no I/O: `input` says how (limits, the release's
/// namespace, whether the target was a stream).
pub fn build(read: input::Read, input: &Input) -> Result<Model> {
    let input::Read {
        sources,
        chart: loaded,
        user,
        stream,
    } = read;
    let mut charts = Vec::new();
    if let (Some(loaded), Some(user)) = (&loaded, user) {
        build_chart_tree(loaded, user, &mut charts)?;
    }

    let documents = parse_documents(&sources, stream, input.limits);
    // Only comments is a real rendering (every template disabled); nothing at all is not.
    if matches!(input.target, InputTarget::Stream(_)) && documents.is_empty() {
        return Err(no_documents(&sources, stream));
    }
    let mut model = Model {
        sources,
        charts,
        documents: Vec::new(),
        stream,
    };
    place_documents(&mut model, documents);
    enable_rendered_charts(&mut model);
    add_disk_crds(&mut model, input.limits);
    read_release_wide(&mut model, input.helm.namespace.as_deref());
    Ok(model)
}

/// A stream (file or standard input) with nothing in it is not a clean result: the command
/// that should have produced it most likely failed.
fn no_documents(sources: &SourceMap, stream: FileId) -> Error {
    let file = sources.get(stream);
    let hint = if file.origin == Origin::Stdin {
        "did the command piping into chartseq (helm template) fail?"
    } else {
        "render the chart into the file first (helm template), or lint the chart directory"
    };
    Error::invalid(format!(
        "no documents in input ({}): it is empty",
        file.name
    ))
    .with_detail(hint)
}

/// Builds a model from a rendered stream held in memory, with no chart on disk (what the
/// fuzz targets and embedders use).
#[must_use]
pub fn load_stream(name: &str, bytes: Vec<u8>, limits: Limits) -> Model {
    let mut sources = SourceMap::default();
    let stream = sources.add(name, Origin::Stdin, bytes);
    let documents = parse_documents(&sources, stream, limits);
    let mut model = Model {
        sources,
        charts: Vec::new(),
        documents: Vec::new(),
        stream,
    };
    place_documents(&mut model, documents);
    read_release_wide(&mut model, None);
    model
}

/// What the systems read across the whole release, once each object is read on its own: kapp's
/// namespaces and scopes, and the namespace Argo CD syncs each object in (they depend on the
/// release's CRDs and on the namespace the release is deployed in, `namespace`, when one is
/// given).
fn read_release_wide(model: &mut Model, namespace: Option<&str>) {
    super::kapp::settle(model, namespace.unwrap_or(super::kapp::DEFAULT_NAMESPACE));
    super::argo::settle(model, namespace);
}

/// A document in the stream is never dropped: a chart level (or one above it) that the known
/// values disable but whose documents were rendered is enabled, and says why it would not be.
/// The stream was rendered with other values than chartseq was given.
fn enable_rendered_charts(model: &mut Model) {
    let mut rendered = vec![false; model.charts.len()];
    for doc in &model.documents {
        let mut at = Some(doc.chart);
        while let Some(c) = at {
            if rendered[c] {
                break;
            }
            rendered[c] = true;
            at = model.charts[c].parent;
        }
    }
    // The subcharts of a disabled chart were not read from disk; those the stream shows are
    // known from their paths, and declared when the chart's Chart.yaml lists them.
    for id in 0..model.charts.len() {
        let Some(parent) = model.charts[id].parent else {
            continue;
        };
        if model.charts[id].info.is_none()
            && !model.charts[parent].enabled
            && model.charts[parent].info.as_ref().is_some_and(|i| {
                i.meta
                    .dependencies
                    .iter()
                    .any(|d| d.effective_name() == model.charts[id].name)
            })
        {
            model.charts[id].declared = true;
        }
    }
    for (chart, rendered) in model.charts.iter_mut().zip(rendered) {
        if rendered && !chart.enabled {
            chart.enabled = true;
            chart.rendered_while_disabled = Some(
                chart
                    .disabled_by
                    .take()
                    .unwrap_or_else(|| "its values".to_owned()),
            );
        }
    }
}

/// When the stream carries no `crds/` documents (rendered without `--include-crds`), the CRDs
/// of the enabled charts are read from disk, so the plan still shows the CRD phase.
fn add_disk_crds(model: &mut Model, limits: Limits) {
    if model
        .documents
        .iter()
        .any(|d| d.placement == Placement::Crd)
    {
        return;
    }
    let mut added = Vec::new();
    for (id, chart) in model.charts.iter().enumerate() {
        let enabled = std::iter::successors(Some(id), |&c| model.charts[c].parent)
            .all(|c| model.charts[c].enabled);
        let Some(info) = chart.info.as_ref().filter(|_| enabled) else {
            continue;
        };
        for (rel, &file) in info.files.range("crds/".to_owned()..) {
            if !rel.starts_with("crds/") {
                break;
            }
            let lower = rel.to_ascii_lowercase();
            if ![".yaml", ".yml", ".json"]
                .iter()
                .any(|ext| lower.ends_with(ext))
            {
                continue;
            }
            let bytes = &model.sources.get(file).bytes;
            for raw in split_stream(bytes) {
                let span = Span::new(raw.range.start, raw.range.end);
                let content = extract(&bytes[raw.range], span.start, file, limits);
                added.push(Document {
                    file,
                    span,
                    source_path: Some(format!("{}/{rel}", chart.manifest_prefix)),
                    chart: id,
                    placement: Placement::Crd,
                    template: Some(file),
                    content,
                });
            }
        }
    }
    model.documents.extend(added);
}

// ---------------------------------------------------------------------------------------------
// Charts on disk

fn build_chart_tree(
    root: &LoadedChart,
    user: serde_json::Value,
    charts: &mut Vec<Chart>,
) -> Result<()> {
    let missing: Vec<&str> = root
        .meta
        .dependencies
        .iter()
        .filter(|d| !root.subcharts.iter().any(|s| s.meta.name == d.name))
        .map(|d| d.name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(Error::invalid(format!(
            "found in Chart.yaml, but missing in charts/ directory: {}",
            missing.join(", ")
        ))
        .with_detail(format!(
            "run `helm dependency build {}` to fetch them",
            root.display_root
        )));
    }
    let mut values = user;
    coalesce(&mut values, &coalesced_defaults(root));
    add_chart(
        root,
        None,
        &root.meta.name,
        None,
        true,
        None,
        &values,
        "",
        charts,
    );
    Ok(())
}

/// The subchart loaded for a dependency entry: same chart name, preferring an exact version.
fn find_subchart<'a>(
    parent: &'a LoadedChart,
    dep: &chart::DependencySpec,
) -> Option<&'a LoadedChart> {
    let mut candidates = parent.subcharts.iter().filter(|s| s.meta.name == dep.name);
    let first = candidates.next()?;
    Some(
        std::iter::once(first)
            .chain(candidates)
            .find(|s| s.meta.version.is_some() && s.meta.version == dep.version)
            .unwrap_or(first),
    )
}

/// Children of a loaded chart with their effective names: declared dependencies first (in
/// `Chart.yaml` order), then subcharts nobody declared.
fn children(parent: &LoadedChart) -> Vec<(String, &LoadedChart, Option<&chart::DependencySpec>)> {
    let mut out: Vec<(String, &LoadedChart, Option<&chart::DependencySpec>)> = Vec::new();
    for dep in &parent.meta.dependencies {
        if let Some(sub) = find_subchart(parent, dep) {
            out.push((dep.effective_name().to_owned(), sub, Some(dep)));
        }
    }
    for sub in &parent.subcharts {
        if !parent
            .meta
            .dependencies
            .iter()
            .any(|d| d.name == sub.meta.name)
        {
            out.push((sub.meta.name.clone(), sub, None));
        }
    }
    out
}

/// A chart's values with its subcharts' defaults under their names, recursively (Helm's
/// `coalesceDeps`; the parent's values win).
fn coalesced_defaults(chart: &LoadedChart) -> serde_json::Value {
    let mut values = chart.values.clone();
    for (name, sub, _) in children(chart) {
        if let serde_json::Value::Object(map) = &mut values {
            let slot = map
                .entry(name)
                .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()));
            coalesce(slot, &coalesced_defaults(sub));
        }
    }
    values
}

#[expect(
    clippy::too_many_arguments,
    reason = "one recursive walk carrying its context"
)]
fn add_chart(
    loaded: &LoadedChart,
    parent: Option<ChartId>,
    name: &str,
    dependency: Option<&chart::DependencySpec>,
    enabled: bool,
    disabled_by: Option<String>,
    values: &serde_json::Value,
    condition_prefix: &str,
    charts: &mut Vec<Chart>,
) -> ChartId {
    let id = charts.len();
    let (manifest_prefix, display) = match parent {
        Some(p) => (
            format!("{}/charts/{name}", charts[p].manifest_prefix),
            format!("{}/{name}", charts[p].display),
        ),
        None => (name.to_owned(), name.to_owned()),
    };
    let file = loaded.meta.file;
    let depends_on_subcharts = loaded
        .meta
        .annotation(DEPENDS_ON_SUBCHARTS)
        .map(|(_, v)| Spanned {
            value: annotations::parse_name_list(&annotations::AnnotationValue::from_node(v)),
            loc: Loc { file, span: v.span },
        });
    let dependency_depends_on = loaded
        .meta
        .dependencies
        .iter()
        .filter_map(|d| {
            let node = d.depends_on.as_ref().filter(|n| !n.is_null())?;
            Some((
                d.effective_name().to_owned(),
                Spanned {
                    value: annotations::parse_yaml_name_list(node),
                    loc: Loc {
                        file,
                        span: node.span,
                    },
                },
            ))
        })
        .collect();
    charts.push(Chart {
        name: name.to_owned(),
        parent,
        children: Vec::new(),
        manifest_prefix,
        display,
        declared: parent.is_none() || dependency.is_some(),
        enabled,
        disabled_by,
        rendered_while_disabled: None,
        info: Some(ChartInfo {
            meta: loaded.meta.clone(),
            dependency: dependency.cloned(),
            files: loaded.files.clone(),
            display_root: loaded.display_root.clone(),
            depends_on_subcharts,
            dependency_depends_on,
        }),
    });
    if !enabled {
        return id;
    }
    for (child_name, sub, dep) in children(loaded) {
        let (child_enabled, why) = match dep {
            Some(dep) => {
                let on = values::dependency_enabled(
                    dep.condition.as_deref(),
                    &dep.tags,
                    values,
                    condition_prefix,
                );
                let why = (!on).then(|| {
                    let tags: Vec<String> = dep.tags.iter().map(|t| format!("`{t}`")).collect();
                    let tags = match tags.as_slice() {
                        [] => None,
                        [one] => Some(format!("tag {one}")),
                        _ => Some(format!("tags {}", tags.join(", "))),
                    };
                    match (&dep.condition, tags) {
                        (Some(c), Some(tags)) => format!("condition `{c}` or {tags}"),
                        (Some(c), None) => format!("condition `{c}`"),
                        (None, Some(tags)) => tags,
                        (None, None) => "its values".to_owned(),
                    }
                });
                (on, why)
            }
            None => (true, None),
        };
        let prefix = format!("{condition_prefix}{child_name}.");
        let child = add_chart(
            sub,
            Some(id),
            &child_name,
            dep,
            child_enabled,
            why,
            values,
            &prefix,
            charts,
        );
        charts[id].children.push(child);
    }
    id
}

// ---------------------------------------------------------------------------------------------
// Documents

struct ParsedDoc {
    span: Span,
    source_path: Option<String>,
    content: Content,
}

fn parse_documents(sources: &SourceMap, stream: FileId, limits: Limits) -> Vec<ParsedDoc> {
    let bytes = &sources.get(stream).bytes;
    let bom = if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        3
    } else {
        0
    };
    let raw = split_stream(&bytes[bom..]);
    raw.into_par_iter()
        .map(|doc| {
            let range = doc.range.start + bom..doc.range.end + bom;
            let span = Span::new(range.start, range.end);
            let content = extract(&bytes[range.clone()], range.start as u32, stream, limits);
            ParsedDoc {
                span,
                source_path: doc.source_path,
                content,
            }
        })
        .collect()
}

/// Parses one document and keeps what sequencing needs; the tree is dropped here.
fn extract(bytes: &[u8], base: u32, file: FileId, limits: Limits) -> Content {
    let loc = |span: Span| Loc { file, span };
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let at = base + e.valid_up_to() as u32;
            return Content::Invalid {
                message: "invalid UTF-8".into(),
                at: loc(Span {
                    start: at,
                    end: at + 1,
                }),
            };
        }
    };
    let node = match parse::parse_document(text, base, limits) {
        Ok(Some(node)) => node,
        Ok(None) => return Content::Empty,
        Err(e) => {
            return Content::Invalid {
                message: e.message,
                at: loc(Span {
                    start: e.offset,
                    end: e.offset,
                }),
            };
        }
    };
    if node.is_null() {
        return Content::Empty;
    }
    if node.as_map().is_none() {
        return Content::NotAnObject {
            message: format!(
                "the document is {}, not a Kubernetes object",
                node.describe()
            ),
            at: loc(node.span),
            generated: None,
        };
    }
    let field = |key: &str| {
        node.get(key)
            .and_then(Node::as_str)
            .filter(|s| !s.is_empty())
    };
    let Some(api_version) = field("apiVersion") else {
        return Content::NotAnObject {
            message: "the object has no `apiVersion`".into(),
            at: loc(node.span),
            generated: None,
        };
    };
    let Some((kind_key, kind_node)) = node.entry("kind") else {
        return Content::NotAnObject {
            message: "the object has no `kind`".into(),
            at: loc(node.span),
            generated: None,
        };
    };
    let Some(kind) = kind_node.as_str().filter(|s| !s.is_empty()) else {
        return Content::NotAnObject {
            message: "`kind` is not a string".into(),
            at: loc(kind_node.span),
            generated: None,
        };
    };
    let metadata = node.get("metadata");
    let name = metadata
        .and_then(|m| m.get("name"))
        .and_then(Node::as_scalar)
        .filter(|s| !s.is_empty());
    // Named only by `generateName`: read as an object all the same (Argo CD creates such
    // hooks), kept apart from the resources every other reader sees.
    let generate_name = metadata
        .and_then(|m| m.get("generateName"))
        .and_then(Node::as_str)
        .filter(|s| !s.is_empty());
    let generated = name.is_none();
    let Some(name) = name.or(generate_name) else {
        return Content::NotAnObject {
            message: format!("the {kind} has no `metadata.name`"),
            at: loc(kind_key.span),
            generated: None,
        };
    };
    let namespace = metadata
        .and_then(|m| m.get("namespace"))
        .and_then(Node::as_scalar)
        .filter(|s| !s.is_empty());
    let annotations = annotations::read_annotations(metadata, file);
    let seq = Sequencing::from_annotations(&annotations);
    let hook = read_hook(&annotations);
    let group = kinds::api_group(api_version);
    let object = Object {
        annotations: &annotations,
        api_group: group,
        kind,
        namespace,
        node: &node,
        file,
        text: (text, base),
    };
    // Each system reads its part once, in one shape.
    let argo = super::argo::Argo::read_object(&object);
    let werf = super::werf::Werf::read_object(&object);
    let kapp = super::kapp::Kapp::read_object(&object);
    let kots = super::kots::Kots::read_object(&object);
    let draft = super::draft::Draft::read_object(&object);
    let mut redact = Vec::new();
    if kind == "Secret" {
        for key in ["data", "stringData"] {
            if let Some(v) = node.get(key) {
                redact.push(v.span);
            }
        }
    }
    let mut facts = super::facts::read(kind, api_version, &node, file);
    facts.readiness = super::facts::readiness(&seq);
    let resource = Box::new(Resource {
        api_version: api_version.to_owned(),
        id: ResourceId {
            group: kinds::api_group(api_version).to_owned(),
            kind: kind.to_owned(),
            namespace: namespace.map(str::to_owned),
            name: name.to_owned(),
        },
        annotations,
        labels: annotations::read_labels(metadata, file),
        seq,
        hook,
        kind_loc: loc(Span {
            start: kind_key.span.start,
            end: kind_node.span.end,
        }),
        redact,
        facts,
        argo,
        werf,
        kapp,
        kots,
        draft,
    });
    if generated {
        return Content::NotAnObject {
            message: format!(
                "the {kind} has no `metadata.name`, only `metadata.generateName` (Argo CD names such a hook when it creates it; Helm cannot install it)"
            ),
            at: loc(kind_key.span),
            generated: Some(resource),
        };
    }
    Content::Resource(resource)
}

fn read_hook(annotations: &[Annotation]) -> Option<Hook> {
    let find = |key: &str| annotations.iter().rev().find(|a| a.key == key);
    let hook = find(HOOK)?;
    let raw = hook.value.as_str().unwrap_or_default();
    let mut events = Vec::new();
    let mut unknown_events = Vec::new();
    for event in raw.split(',') {
        let event = event.trim().to_lowercase();
        if HOOK_EVENTS.contains(&event.as_str()) {
            events.push(event);
        } else {
            unknown_events.push(event);
        }
    }
    let (weight, invalid_weight) = match find(HOOK_WEIGHT) {
        None => (0, None),
        Some(a) => match a.value.as_str().and_then(|w| w.parse::<i64>().ok()) {
            Some(w) => (w, None),
            None => (
                0,
                Some(Spanned {
                    value: a.value.as_str().unwrap_or_default().to_owned(),
                    loc: a.value_loc,
                }),
            ),
        },
    };
    let delete_policies = find(HOOK_DELETE_POLICY)
        .and_then(|a| a.value.as_str())
        .map(|v| v.split(',').map(|p| p.trim().to_lowercase()).collect())
        .unwrap_or_default();
    Some(Hook {
        events,
        unknown_events,
        weight,
        invalid_weight,
        delete_policies,
        loc: hook.value_loc,
    })
}

/// Splits a `# Source:` path into its chart levels, its placement and the chart-relative path:
/// `root/charts/sub/templates/x.yaml` → (`[root, sub]`, Template, `templates/x.yaml`).
fn split_source_path(path: &str) -> (Vec<&str>, Placement, String) {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let Some((&root, mut rest)) = segments.split_first() else {
        return (Vec::new(), Placement::Template, String::new());
    };
    let mut levels = vec![root];
    while let ["charts", sub, tail @ ..] = rest {
        if tail.is_empty() {
            break;
        }
        levels.push(sub);
        rest = tail;
    }
    let placement = if rest.first() == Some(&"crds") {
        Placement::Crd
    } else {
        Placement::Template
    };
    (levels, placement, rest.join("/"))
}

fn place_documents(model: &mut Model, parsed: Vec<ParsedDoc>) {
    if model.charts.is_empty() {
        let root = parsed
            .iter()
            .find_map(|d| {
                d.source_path
                    .as_deref()
                    .and_then(|p| p.split('/').find(|s| !s.is_empty()))
            })
            .unwrap_or("chart")
            .to_owned();
        model
            .charts
            .push(inferred_chart(root.clone(), None, root.clone(), root));
    }
    let mut by_prefix: BTreeMap<String, ChartId> = model
        .charts
        .iter()
        .enumerate()
        .map(|(i, c)| (c.manifest_prefix.clone(), i))
        .collect();
    for doc in parsed {
        let (levels, placement, rel) = doc.source_path.as_deref().map_or(
            (Vec::new(), Placement::Template, String::new()),
            split_source_path,
        );
        let mut chart = 0;
        for sub in levels.iter().skip(1) {
            let prefix = format!("{}/charts/{sub}", model.charts[chart].manifest_prefix);
            if let Some(&id) = by_prefix.get(&prefix) {
                chart = id;
                continue;
            }
            let id = model.charts.len();
            let display = format!("{}/{sub}", model.charts[chart].display);
            model.charts.push(inferred_chart(
                (*sub).to_owned(),
                Some(chart),
                prefix.clone(),
                display,
            ));
            model.charts[chart].children.push(id);
            by_prefix.insert(prefix, id);
            chart = id;
        }
        let template = model.charts[chart]
            .info
            .as_ref()
            .and_then(|i| i.files.get(&rel))
            .copied();
        model.documents.push(Document {
            file: model.stream,
            span: doc.span,
            source_path: doc.source_path,
            chart,
            placement,
            template,
            content: doc.content,
        });
    }
    reorder_preorder(model);
}

fn inferred_chart(
    name: String,
    parent: Option<ChartId>,
    manifest_prefix: String,
    display: String,
) -> Chart {
    Chart {
        name,
        parent,
        children: Vec::new(),
        manifest_prefix,
        display,
        declared: parent.is_none(),
        enabled: true,
        disabled_by: None,
        rendered_while_disabled: None,
        info: None,
    }
}

/// Renumbers charts so that ids follow the pre-order walk (inferred levels were appended).
fn reorder_preorder(model: &mut Model) {
    let mut order = Vec::with_capacity(model.charts.len());
    let mut stack = vec![0];
    while let Some(id) = stack.pop() {
        order.push(id);
        stack.extend(model.charts[id].children.iter().rev());
    }
    if order.iter().enumerate().all(|(i, &id)| i == id) {
        return;
    }
    let mut new_id = vec![0; model.charts.len()];
    for (new, &old) in order.iter().enumerate() {
        new_id[old] = new;
    }
    let mut old: Vec<Option<Chart>> = std::mem::take(&mut model.charts)
        .into_iter()
        .map(Some)
        .collect();
    for &o in &order {
        if let Some(mut chart) = old[o].take() {
            chart.parent = chart.parent.map(|p| new_id[p]);
            chart.children = chart.children.iter().map(|&c| new_id[c]).collect();
            model.charts.push(chart);
        }
    }
    for doc in &mut model.documents {
        doc.chart = new_id[doc.chart];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_paths_map_to_levels() {
        let (levels, placement, rel) =
            split_source_path("p/charts/sub/charts/leaf/templates/x.yaml");
        assert_eq!(
            (levels, placement, rel.as_str()),
            (
                vec!["p", "sub", "leaf"],
                Placement::Template,
                "templates/x.yaml"
            )
        );
        let (levels, placement, _) = split_source_path("kps/charts/crds/crds/a.yaml");
        assert_eq!((levels, placement), (vec!["kps", "crds"], Placement::Crd));
        let (levels, _, rel) = split_source_path("p/templates/charts/x.yaml");
        assert_eq!(
            (levels, rel.as_str()),
            (vec!["p"], "templates/charts/x.yaml")
        );
    }
}
