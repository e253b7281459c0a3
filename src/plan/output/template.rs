//! `chartseq template`: the documents as the reference's `helm template` prints them, or in
//! plan order with Helm's resource-group markers.
//!
//! Documents are written byte for byte as they were read, with Helm's spacing between them
//! (`---`, the document, a blank line). By default (`--dialect hip`) the order is the one the
//! reference's `helm template` prints (the split HIP-0025 pull requests leave it as every helm
//! has it): the manifests by Helm's kind install order, then the hooks by the same kind order,
//! each kind's documents by `# Source:` path and then as rendered; no markers. Another dialect
//! prints its plan order. With markers (helm/helm#32314's ordered `helm template`), the plan
//! order with groups framed by `## START resource-group: <path> <group>` / `## END …`;
//! documents of only comments follow the plan; hooks come last, in the order Helm runs them
//! (weight, name, kind). The annotation `helm.sh/depends-on/resource-groups` is kept, as the
//! reference's `helm template` keeps it, unless asked to remove it (its key is not a valid
//! Kubernetes annotation key).
//!
//! The output is the input's documents reordered, plus any marker lines: a chart path or group
//! name that is not plain (a line break, a control character, a leading `"`) is written in a
//! marker as a quoted JSON string (`safe::marker_name`), so that no name can end the
//! comment line and add a document of its own. Readers of the stream drop marker lines
//! whatever their names (`source::split`), so `template` of this output prints it again.

use std::io::{self, Write};

use crate::model::annotations::DEPENDS_ON_GROUPS;
use crate::model::kinds::install_rank;
use crate::model::{Content, DocId, Model, Placement};
use crate::plan::{Dialect, Plan};
use crate::safe::marker_name;

/// What `chartseq template` prints besides the plan.
#[derive(Clone, Copy, Debug, Default)]
pub struct TemplateOptions {
    /// Print documents from `crds/` first (`--include-crds`).
    pub include_crds: bool,
    /// Keep `helm.sh/depends-on/resource-groups` in the output.
    pub keep_sequencing_annotations: bool,
    /// The plan order with `## START/END resource-group` markers (`--markers`), instead of
    /// what the reference's `helm template` prints.
    pub markers: bool,
}

pub fn write_template(
    out: &mut dyn Write,
    model: &Model,
    plan: &Plan,
    options: TemplateOptions,
) -> io::Result<()> {
    let mut buf: Vec<u8> = Vec::new();
    let crd = |doc: &DocId| model.documents[*doc].placement == Placement::Crd;
    if !options.markers && plan.dialect == Dialect::Hip {
        return write_helm_template(out, model, options);
    }
    if options.include_crds {
        for &doc in plan
            .crds
            .iter()
            .chain(plan.comments.iter().filter(|d| crd(d)))
        {
            write_doc(&mut buf, model, doc, options);
        }
    } else {
        // A dialect applies some templated documents first (werf: Namespaces): printed first.
        for &doc in plan.crds.iter().filter(|d| !crd(d)) {
            write_doc(&mut buf, model, doc, options);
        }
    }
    for step in &plan.steps {
        let chart = marker_name(&model.charts[step.chart].display);
        let group = step
            .group
            .as_deref()
            .filter(|_| options.markers)
            .map(marker_name);
        if let Some(group) = &group {
            buf.extend_from_slice(format!("## START resource-group: {chart} {group}\n").as_bytes());
        }
        for &doc in &step.resources {
            write_doc(&mut buf, model, doc, options);
        }
        if let Some(group) = &group {
            buf.extend_from_slice(format!("## END resource-group: {chart} {group}\n").as_bytes());
        }
    }
    // Documents of only comments belong to no step: they follow the plan, before the hooks,
    // as Helm lists them with the manifests.
    for &doc in plan.comments.iter().filter(|d| !crd(d)) {
        write_doc(&mut buf, model, doc, options);
    }
    // Then what the dialect's tool renders but never applies on install.
    for &doc in plan.hooks.iter().chain(&plan.not_installed) {
        write_doc(&mut buf, model, doc, options);
    }
    finish(out, buf)
}

/// What the reference's `helm template` prints: `crds/` first when asked, then every other
/// document in Helm's order (its `SortManifests`: files by path, each file's documents as
/// rendered, then a stable sort by kind install order), manifests before hooks.
pub fn write_helm_template(
    out: &mut dyn Write,
    model: &Model,
    options: TemplateOptions,
) -> io::Result<()> {
    let mut buf = Vec::new();
    if options.include_crds {
        let crds: Vec<DocId> = (0..model.documents.len())
            .filter(|&d| model.documents[d].placement == Placement::Crd)
            .collect();
        for (i, &doc) in crds.iter().enumerate() {
            // Helm prints a CRD file as it is on disk, its final line break and its own: a
            // blank line after the file's last document.
            let last_of_file = crds.get(i + 1).is_none_or(|&next| {
                model.documents[next].source_path != model.documents[doc].source_path
            });
            let end: &[u8] = if last_of_file { b"\n\n" } else { b"\n" };
            write_doc_then(&mut buf, model, doc, options, end);
        }
    }
    let mut manifests = Vec::new();
    let mut hooks = Vec::new();
    for (doc, d) in model.documents.iter().enumerate() {
        if d.placement == Placement::Crd {
            continue;
        }
        let hook = matches!(&d.content, Content::Resource(r) if r.hook.is_some());
        let key = (
            helm_kind(model, doc),
            d.source_path.as_deref().unwrap_or(""),
            doc,
        );
        if hook {
            hooks.push(key);
        } else {
            manifests.push(key);
        }
    }
    for mut docs in [manifests, hooks] {
        docs.sort_by(|a, b| {
            install_rank(a.0)
                .cmp(&install_rank(b.0))
                .then(a.1.cmp(b.1))
                .then(a.2.cmp(&b.2))
        });
        for (_, _, doc) in docs {
            write_doc_then(&mut buf, model, doc, options, b"\n");
        }
    }
    finish(out, buf)
}

/// The kind Helm sorts a document by: empty for one it reads no kind from (only comments).
fn helm_kind(model: &Model, doc: DocId) -> &str {
    match &model.documents[doc].content {
        Content::Resource(r)
        | Content::NotAnObject {
            generated: Some(r), ..
        } => &r.id.kind,
        _ => "",
    }
}

fn finish(out: &mut dyn Write, mut buf: Vec<u8>) -> io::Result<()> {
    while buf.last() == Some(&b'\n') {
        buf.pop();
    }
    if !buf.is_empty() {
        buf.push(b'\n');
    }
    out.write_all(&buf)
}

fn write_doc(buf: &mut Vec<u8>, model: &Model, doc: DocId, options: TemplateOptions) {
    write_doc_then(buf, model, doc, options, b"\n\n");
}

/// One document after `---`, then `end`: Helm's flat `helm template` ends each with one line
/// break, the marked output of helm/helm#32314 with a blank line.
fn write_doc_then(
    buf: &mut Vec<u8>,
    model: &Model,
    doc: DocId,
    options: TemplateOptions,
    end: &[u8],
) {
    let d = &model.documents[doc];
    let bytes = &model.sources.get(d.file).bytes;
    let range = d.span.range();
    buf.extend_from_slice(b"---\n");
    let mut cursor = range.start;
    if !options.keep_sequencing_annotations {
        if let Content::Resource(r) = &d.content {
            for a in r.annotations.iter().filter(|a| a.key == DEPENDS_ON_GROUPS) {
                if let Some(cut) = removable_lines(
                    bytes,
                    a.key_loc.span.start as usize,
                    a.value_loc.span.end as usize,
                    range.end,
                ) {
                    buf.extend_from_slice(&bytes[cursor..cut.start]);
                    cursor = cut.end;
                }
            }
        }
    }
    buf.extend_from_slice(&bytes[cursor..range.end]);
    buf.extend_from_slice(end);
}

/// The whole lines holding an annotation from its key to the end of its value, when the
/// entry stands on lines of its own (block style); `None` keeps it (flow style).
fn removable_lines(
    bytes: &[u8],
    key_start: usize,
    value_end: usize,
    doc_end: usize,
) -> Option<std::ops::Range<usize>> {
    let line_start = bytes[..key_start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    if !bytes[line_start..key_start].iter().all(|&b| b == b' ') {
        return None;
    }
    let value_end = value_end.min(doc_end);
    let line_end = bytes[value_end..doc_end]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(doc_end, |p| value_end + p);
    let rest = bytes[value_end..line_end].trim_ascii();
    if !(rest.is_empty() || rest.starts_with(b"#")) {
        return None;
    }
    Some(line_start..(line_end + 1).min(doc_end))
}

#[cfg(test)]
mod tests {
    use super::removable_lines;

    #[test]
    fn removes_block_entries_keeps_flow_entries() {
        let text = b"  annotations:\n    a: b\n    helm.sh/depends-on/resource-groups: '[\"x\"]'\n    c: d\n";
        let key = text.windows(7).position(|w| w == b"helm.sh").expect("key");
        let end = key + "helm.sh/depends-on/resource-groups: '[\"x\"]'".len();
        let cut = removable_lines(text, key, end, text.len()).expect("block");
        let mut kept = text[..cut.start].to_vec();
        kept.extend_from_slice(&text[cut.end..]);
        assert_eq!(kept, b"  annotations:\n    a: b\n    c: d\n");
        let flow = b"annotations: {helm.sh/depends-on/resource-groups: '[]'}";
        assert_eq!(removable_lines(flow, 14, flow.len() - 1, flow.len()), None);
    }
}
