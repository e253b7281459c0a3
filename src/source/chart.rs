//! Charts on disk: directories and `.tgz` archives, with their subcharts in `charts/`.
//!
//! Only what sequencing needs is read: `Chart.yaml`, `values.yaml`, `templates/**`, `crds/**`
//! and `charts/*` (directories and archives, recursively). Every file is registered in the
//! [`SourceMap`] so that diagnostics can point into templates and `Chart.yaml`. Symbolic links
//! in a chart directory are followed as Helm follows them (monorepos link shared subcharts);
//! links inside archives are refused.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::parse::{Limits, Node, parse_document};
use crate::source::{FileId, Origin, SourceMap, display_join, display_path, read};

/// Caps on chart input (archives in particular). The byte and file caps are totals for the
/// whole chart tree: its directories, its archives and what they expand to, nested archives
/// included.
#[derive(Clone, Copy, Debug)]
pub struct ChartLimits {
    /// Bytes the chart tree may hold: files read from disk (links followed, archives as
    /// stored) plus every byte each archive expands to.
    pub max_archive_bytes: u64,
    /// Files the chart tree may hold (archive members included).
    pub max_files: usize,
    /// Nesting of subcharts.
    pub max_depth: usize,
}

impl Default for ChartLimits {
    fn default() -> Self {
        Self {
            max_archive_bytes: 256 * 1024 * 1024,
            max_files: 100_000,
            max_depth: 32,
        }
    }
}

/// A `dependencies[]` entry of `Chart.yaml`.
#[derive(Clone, Debug)]
pub struct DependencySpec {
    pub name: String,
    pub version: Option<String>,
    pub alias: Option<String>,
    pub condition: Option<String>,
    pub tags: Vec<String>,
    /// The `depends-on` value as written (a list of names or aliases when well formed).
    pub depends_on: Option<Node>,
    /// The whole entry, for locations.
    pub node: Node,
}

impl DependencySpec {
    /// The name the subchart goes by: its alias when set.
    #[must_use]
    pub fn effective_name(&self) -> &str {
        self.alias.as_deref().unwrap_or(&self.name)
    }
}

/// `Chart.yaml`, parsed.
#[derive(Clone, Debug)]
pub struct ChartMeta {
    pub file: FileId,
    pub node: Node,
    pub api_version: Option<String>,
    pub name: String,
    pub version: Option<String>,
    pub dependencies: Vec<DependencySpec>,
}

impl ChartMeta {
    /// `type: library`: a chart of helpers that renders nothing itself.
    #[must_use]
    pub fn is_library(&self) -> bool {
        self.node.get("type").and_then(Node::as_str) == Some("library")
    }

    /// The `annotations` entry with this key: (key node, value node).
    #[must_use]
    pub fn annotation(&self, key: &str) -> Option<(&Node, &Node)> {
        self.node.get("annotations")?.entry(key)
    }
}

/// A chart read from disk or from an archive, before values decide what is enabled.
#[derive(Debug)]
pub struct LoadedChart {
    /// Name of its directory or archive under the parent's `charts/` (the root's own name
    /// for the root).
    pub dir_name: String,
    /// Display path of the chart root (`mychart`, `mychart/charts/db-1.0.tgz:db`).
    pub display_root: String,
    pub meta: ChartMeta,
    /// `values.yaml` as JSON (an empty object when absent).
    pub values: serde_json::Value,
    /// `templates/…` and `crds/…` files by path relative to the chart root.
    pub files: BTreeMap<String, FileId>,
    pub subcharts: Vec<LoadedChart>,
}

/// Files of one chart: relative path → bytes, plus how to display them.
struct ChartFiles {
    display_root: String,
    origin: Origin,
    files: BTreeMap<String, Vec<u8>>,
    /// Where a file reached through a symbolic link really is (the file a person edits),
    /// by relative path; other files are shown as `display_root/relative path`.
    real_names: BTreeMap<String, String>,
    /// The directory on disk, when the root is shown with `..` steps: a file of a chart above
    /// the current directory is then shown by its own shortest path (`x.yaml` rather than
    /// `../templates/x.yaml` from inside `templates/`).
    dir: Option<PathBuf>,
}

impl ChartFiles {
    /// The name a file is shown by.
    fn shown(&self, rel: &str) -> String {
        if let Some(real) = self.real_names.get(rel) {
            return real.clone();
        }
        match &self.dir {
            Some(dir) => display_path(&dir.join(rel)),
            None => display_join(&self.display_root, rel),
        }
    }
}

/// What the rest of a chart tree may still hold: bytes and files, counted over every
/// directory and archive of the tree, so that many archives each under the cap cannot add up
/// to more than it.
struct Budget {
    bytes: u64,
    files: usize,
    limits: ChartLimits,
    /// The chart named on the command line, for messages.
    root: String,
}

impl Budget {
    fn new(root: String, limits: ChartLimits) -> Self {
        Self {
            bytes: limits.max_archive_bytes,
            files: limits.max_files,
            limits,
            root,
        }
    }

    /// Counts `bytes` more; an error when the tree would hold more than the cap.
    fn spend(&mut self, bytes: u64, at: &str) -> Result<()> {
        match self.bytes.checked_sub(bytes) {
            Some(left) => {
                self.bytes = left;
                Ok(())
            }
            None => Err(too_big(at, &self.root, self.limits)),
        }
    }

    /// Counts one file more.
    fn file(&mut self, at: &str) -> Result<()> {
        match self.files.checked_sub(1) {
            Some(left) => {
                self.files = left;
                Ok(())
            }
            None => Err(Error::invalid(format!(
                "{at}: more than {} files in the chart {} (its subcharts and archives together)",
                self.limits.max_files, self.root
            ))),
        }
    }
}

/// Loads a chart directory or a `.tgz` archive.
pub fn load(path: &Path, sources: &mut SourceMap, limits: ChartLimits) -> Result<LoadedChart> {
    let shown = display_path(path);
    let mut budget = Budget::new(shown.clone(), limits);
    let files = if path.is_dir() {
        read_dir_chart(path, &mut budget)?
    } else {
        let bytes = read::file(path, budget.bytes).map_err(|e| match e {
            read::ReadError::TooBig(_) => too_big(&shown, &shown, limits),
            read::ReadError::Io(e) => Error::io(format!("cannot read chart archive {shown}"), e),
        })?;
        budget.spend(bytes.len() as u64, &shown)?;
        read_archive(&shown, &bytes, &mut budget)?
    };
    let dir_name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    build(dir_name, files, sources, &mut budget, 0)
}

/// Loads a chart from the bytes of a `.tgz` archive.
pub fn load_archive(
    display: &str,
    bytes: &[u8],
    sources: &mut SourceMap,
    limits: ChartLimits,
) -> Result<LoadedChart> {
    let mut budget = Budget::new(display.to_owned(), limits);
    budget.spend(bytes.len() as u64, display)?;
    let files = read_archive(display, bytes, &mut budget)?;
    build(display.to_owned(), files, sources, &mut budget, 0)
}

/// Reads a chart directory the way Helm's loader does (`sympath.Walk`): symbolic links are
/// followed wherever they point (a monorepo's `charts/common -> ../../common`), files are named
/// by the path of the link, not of its target. What Helm lacks is added: a link back into a
/// directory being walked is a loop and an error (Helm recurses until the path is too long),
/// and the archive caps hold for what the links reach (files, bytes). Irregular files (a
/// device, a FIFO) are refused as Helm refuses them.
fn read_dir_chart(root: &Path, budget: &mut Budget) -> Result<ChartFiles> {
    let canonical_root = root.canonicalize().map_err(|e| {
        Error::io(
            format!("cannot read chart directory {}", display_path(root)),
            e,
        )
    })?;
    let mut files = BTreeMap::new();
    let mut real_names = BTreeMap::new();
    // Each directory to read, with the real directories above it (for loop detection) and
    // whether a link led there.
    let mut pending: Vec<(PathBuf, Vec<PathBuf>, bool)> =
        vec![(PathBuf::new(), vec![canonical_root], false)];
    while let Some((rel_dir, ancestors, through_link)) = pending.pop() {
        let dir = root.join(&rel_dir);
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| Error::io(format!("cannot read directory {}", display_path(&dir)), e))?;
        let mut entries: Vec<_> = entries.filter_map(std::result::Result::ok).collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            let rel = rel_dir.join(entry.file_name());
            let rel_text = rel.to_string_lossy().replace('\\', "/");
            let full = entry.path();
            let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
            // Follows links; a broken link fails here, as it fails Helm.
            let meta = std::fs::metadata(&full).map_err(|e| {
                let what = if is_link { "symbolic link " } else { "" };
                Error::io(format!("cannot read {what}{}", display_path(&full)), e)
            })?;
            if meta.is_dir() {
                if !wanted(&rel_text, true) {
                    continue;
                }
                let target = full
                    .canonicalize()
                    .map_err(|e| Error::io(format!("cannot read {}", display_path(&full)), e))?;
                if ancestors.contains(&target) {
                    return Err(Error::invalid(format!(
                        "{}: symbolic link loop: it leads back to {}, which contains it",
                        display_path(&full),
                        target.display()
                    )));
                }
                let mut chain = ancestors.clone();
                chain.push(target);
                pending.push((rel, chain, through_link || is_link));
                continue;
            }
            if !wanted(&rel_text, false) {
                continue;
            }
            if !meta.is_file() {
                return Err(Error::invalid(format!(
                    "{}: cannot load an irregular file (a device, FIFO or socket) into a chart",
                    display_path(&full)
                )));
            }
            let shown = display_path(&full);
            budget.file(&shown)?;
            // Read through the bounded reader: a file that grows while it is read stops at
            // what the tree may still hold.
            let bytes = read::file(&full, budget.bytes).map_err(|e| match e {
                read::ReadError::TooBig(_) => too_big(&shown, &budget.root, budget.limits),
                read::ReadError::Io(e) => Error::io(format!("cannot read {shown}"), e),
            })?;
            budget.spend(bytes.len() as u64, &shown)?;
            if through_link || is_link {
                if let Ok(target) = full.canonicalize() {
                    real_names.insert(rel_text.clone(), display_path(&target));
                }
            }
            files.insert(rel_text, bytes);
        }
    }
    let display_root = display_path(root);
    let above = display_root.split('/').any(|s| s == "..");
    Ok(ChartFiles {
        display_root,
        origin: Origin::Disk,
        files,
        real_names,
        dir: above.then(|| root.to_path_buf()),
    })
}

/// Whether a chart-relative path matters for sequencing.
fn wanted(rel: &str, is_dir: bool) -> bool {
    let segments: Vec<&str> = rel.split('/').collect();
    let mut rest = segments.as_slice();
    loop {
        match rest {
            ["charts"] => return is_dir,
            ["charts", archive] if !is_dir => {
                let lower = archive.to_ascii_lowercase();
                return [".tgz", ".tar.gz"].iter().any(|ext| lower.ends_with(ext));
            }
            ["charts", _sub] => return is_dir,
            ["charts", _sub, tail @ ..] => rest = tail,
            ["Chart.yaml" | "values.yaml"] => return !is_dir,
            ["templates" | "crds", ..] => return true,
            _ => return false,
        }
    }
}

/// A member's path as a loader reads it: `\\` as `/`, `.` segments and empty segments (`//`)
/// dropped; an absolute path or a `..` segment escapes the chart.
fn normalise_member(display: &str, raw: &str) -> Result<String> {
    let path = raw.replace('\\', "/");
    let escapes = path.starts_with('/') || path.split('/').any(|s| s == "..");
    if escapes {
        return Err(Error::invalid(format!(
            "{display}: archive member `{}` escapes the chart (absolute path or `..`)",
            raw.escape_debug()
        )));
    }
    Ok(path
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect::<Vec<_>>()
        .join("/"))
}

/// Reads the members of a chart archive that sequencing needs. Every byte the archive
/// expands to (all members, read or not) and every member kept count against the chart
/// tree's budget. Member paths are normalised as a loader reads them, and a member that is
/// there twice after normalisation (`c/Chart.yaml` and `c/./Chart.yaml`) is refused: tools
/// disagree on which one counts (Helm keeps the last).
fn read_archive(display: &str, bytes: &[u8], budget: &mut Budget) -> Result<ChartFiles> {
    let decoder = flate2::read::GzDecoder::new(bytes);
    let mut stream = decoder.take(budget.bytes.saturating_add(1));
    let read = read_members(display, &mut stream, budget);
    // The stream ran into the cap: whatever tar said, that is why it stopped.
    let used = budget.bytes.saturating_add(1) - stream.limit();
    if used > budget.bytes {
        return Err(bomb(display, budget));
    }
    let (top, files) = read?;
    budget.spend(used, display)?;
    Ok(ChartFiles {
        display_root: format!("{display}:{top}"),
        origin: Origin::Archive,
        files,
        real_names: BTreeMap::new(),
        dir: None,
    })
}

/// The members of one archive: the chart's top directory and its files by relative path.
fn read_members(
    display: &str,
    stream: impl Read,
    budget: &mut Budget,
) -> Result<(String, BTreeMap<String, Vec<u8>>)> {
    let mut archive = tar::Archive::new(stream);
    let mut files = BTreeMap::new();
    // The member path each kept file came from (to name both of a duplicate).
    let mut raw_names: BTreeMap<String, String> = BTreeMap::new();
    let mut top: Option<String> = None;
    // Bytes of kept members: with what the stream read, never more than the budget.
    let mut kept = 0u64;
    let entries = archive
        .entries()
        .map_err(|e| Error::io(format!("{display}: not a gzipped tar archive"), e))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| Error::io(format!("{display}: corrupt archive"), e))?;
        let kind = entry.header().entry_type();
        if kind.is_dir()
            || kind.is_pax_global_extensions()
            || kind.is_pax_local_extensions()
            || kind.is_gnu_longname()
        {
            continue;
        }
        let raw_path = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let path = normalise_member(display, &raw_path)?;
        if !(kind.is_file() || kind == tar::EntryType::Continuous) {
            if kind.is_symlink() || kind.is_hard_link() {
                return Err(Error::invalid(format!(
                    "{display}: archive member `{path}` is a link; charts may not contain links"
                )));
            }
            continue;
        }
        let Some((first, rel)) = path.split_once('/') else {
            continue;
        };
        match &top {
            None => top = Some(first.to_owned()),
            Some(t) if t != first => {
                return Err(Error::invalid(format!(
                    "{display}: archive holds more than one chart (`{t}/` and `{first}/`)"
                )));
            }
            Some(_) => {}
        }
        if !wanted(rel, false) {
            continue;
        }
        if let Some(earlier) = raw_names.get(rel) {
            return Err(Error::invalid(format!(
                "{display}: archive holds `{path}` twice (as `{}` and `{}`); repack it with one of them",
                earlier.escape_debug(),
                raw_path.escape_debug()
            )));
        }
        budget.file(&format!("{display}:{path}"))?;
        // The size in the header is what tar will read for this member: refuse before
        // reading when it would break the cap.
        if kept.saturating_add(entry.size()) > budget.bytes {
            return Err(bomb(display, budget));
        }
        let mut data = Vec::new();
        entry
            .read_to_end(&mut data)
            .map_err(|e| Error::io(format!("{display}: cannot read archive member `{path}`"), e))?;
        kept += data.len() as u64;
        raw_names.insert(rel.to_owned(), raw_path);
        files.insert(rel.to_owned(), data);
    }
    let Some(top) = top else {
        return Err(Error::invalid(format!("{display}: archive holds no chart")));
    };
    Ok((top, files))
}

fn too_big(at: &str, root: &str, limits: ChartLimits) -> Error {
    let whole = if at == root {
        String::new()
    } else {
        format!(" (at {at})")
    };
    Error::invalid(format!(
        "{root}: the chart tree (its subcharts and archives expanded, its symbolic links followed) holds more than {} bytes{whole}; raise --max-archive-bytes if it is genuine",
        limits.max_archive_bytes
    ))
}

fn bomb(display: &str, budget: &Budget) -> Error {
    Error::invalid(format!(
        "{display}: archive expands beyond the {} bytes the chart tree {} may hold (a decompression bomb?); raise --max-archive-bytes if it is genuine",
        budget.limits.max_archive_bytes, budget.root
    ))
}

fn build(
    dir_name: String,
    mut chart: ChartFiles,
    sources: &mut SourceMap,
    budget: &mut Budget,
    depth: usize,
) -> Result<LoadedChart> {
    if depth > budget.limits.max_depth {
        return Err(Error::invalid(format!(
            "{}: subcharts nested deeper than {} levels",
            chart.display_root, budget.limits.max_depth
        )));
    }
    let root = chart.display_root.clone();

    let Some(chart_yaml) = chart.files.remove("Chart.yaml") else {
        return Err(Error::invalid(format!(
            "{root}: no Chart.yaml (not a chart)"
        )));
    };
    let chart_yaml_name = chart.shown("Chart.yaml");
    let file = sources.add(chart_yaml_name.clone(), chart.origin.clone(), chart_yaml);
    let meta = parse_meta(&chart_yaml_name, file, sources)?;

    let values = match chart.files.remove("values.yaml") {
        Some(bytes) => {
            let name = chart.shown("values.yaml");
            let id = sources.add(name.clone(), chart.origin.clone(), bytes);
            yaml_file_to_json(&name, id, sources)?
        }
        None => serde_json::Value::Object(serde_json::Map::new()),
    };

    // Split off subcharts: `charts/<dir>/…` and `charts/<archive>.tgz`.
    let mut sub_dirs: BTreeMap<String, ChartFiles> = BTreeMap::new();
    let mut sub_archives: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut files = BTreeMap::new();
    for (rel, bytes) in std::mem::take(&mut chart.files) {
        if let Some(rest) = rel.strip_prefix("charts/") {
            match rest.split_once('/') {
                Some((dir, inner)) => {
                    let sub = sub_dirs
                        .entry(dir.to_owned())
                        .or_insert_with(|| ChartFiles {
                            display_root: display_join(&root, &format!("charts/{dir}")),
                            origin: chart.origin.clone(),
                            files: BTreeMap::new(),
                            real_names: BTreeMap::new(),
                            dir: chart.dir.as_ref().map(|d| d.join("charts").join(dir)),
                        });
                    if let Some(real) = chart.real_names.remove(&rel) {
                        sub.real_names.insert(inner.to_owned(), real);
                    }
                    sub.files.insert(inner.to_owned(), bytes);
                }
                None => {
                    sub_archives.insert(rest.to_owned(), bytes);
                }
            }
        } else {
            let id = sources.add(chart.shown(&rel), chart.origin.clone(), bytes);
            files.insert(rel, id);
        }
    }

    let mut subcharts = Vec::new();
    for (dir, files) in sub_dirs {
        subcharts.push(build(dir, files, sources, budget, depth + 1)?);
    }
    // Each archive is expanded and dropped in turn, under what the tree may still hold.
    while let Some((name, bytes)) = sub_archives.pop_first() {
        let files = read_archive(
            &display_join(&root, &format!("charts/{name}")),
            &bytes,
            budget,
        )?;
        drop(bytes);
        subcharts.push(build(name, files, sources, budget, depth + 1)?);
    }

    Ok(LoadedChart {
        dir_name,
        display_root: root,
        meta,
        values,
        files,
        subcharts,
    })
}

/// Parses a whole YAML file registered in `sources` into a tree.
pub fn parse_yaml_file(name: &str, file: FileId, sources: &SourceMap) -> Result<Option<Node>> {
    parse_yaml_file_with(name, file, sources, Limits::default())
}

/// [`parse_yaml_file`] under the caller's limits (a user's values file, under the command
/// line's `--max-depth`, `--max-document-bytes`, ...).
pub fn parse_yaml_file_with(
    name: &str,
    file: FileId,
    sources: &SourceMap,
    limits: Limits,
) -> Result<Option<Node>> {
    let source = sources.get(file);
    let text = std::str::from_utf8(&source.bytes).map_err(|e| {
        let pos = source.line_col(e.valid_up_to() as u32);
        Error::invalid(format!(
            "{name}:{}:{}: not valid UTF-8",
            pos.line, pos.column
        ))
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let offset = (source.bytes.len() - text.len()) as u32;
    parse_document(text, offset, limits).map_err(|e| {
        let pos = source.line_col(e.offset);
        Error::invalid(format!(
            "{name}:{}:{}: invalid YAML: {}",
            pos.line, pos.column, e.message
        ))
    })
}

fn yaml_file_to_json(name: &str, file: FileId, sources: &SourceMap) -> Result<serde_json::Value> {
    Ok(match parse_yaml_file(name, file, sources)? {
        None => serde_json::Value::Object(serde_json::Map::new()),
        Some(node) if node.is_null() => serde_json::Value::Object(serde_json::Map::new()),
        Some(node) => match node.to_json() {
            v @ serde_json::Value::Object(_) => v,
            _ => {
                return Err(Error::invalid(format!(
                    "{name}: values must be a mapping, found {}",
                    node.describe()
                )));
            }
        },
    })
}

fn parse_meta(name: &str, file: FileId, sources: &SourceMap) -> Result<ChartMeta> {
    let Some(node) = parse_yaml_file(name, file, sources)? else {
        return Err(Error::invalid(format!("{name}: empty Chart.yaml")));
    };
    if node.as_map().is_none() {
        return Err(Error::invalid(format!(
            "{name}: Chart.yaml must be a mapping, found {}",
            node.describe()
        )));
    }
    let text = |n: Option<&Node>| n.and_then(Node::as_scalar).map(str::to_owned);
    let Some(chart_name) = text(node.get("name")).filter(|n| !n.is_empty()) else {
        return Err(Error::invalid(format!("{name}: Chart.yaml has no `name`")));
    };
    let mut dependencies = Vec::new();
    if let Some(deps) = node.get("dependencies").filter(|d| !d.is_null()) {
        let Some(items) = deps.as_seq() else {
            let pos = sources.get(file).line_col(deps.span.start);
            return Err(Error::invalid(format!(
                "{name}:{}:{}: `dependencies` must be a list",
                pos.line, pos.column
            )));
        };
        for item in items {
            let Some(dep_name) = text(item.get("name")).filter(|n| !n.is_empty()) else {
                let pos = sources.get(file).line_col(item.span.start);
                return Err(Error::invalid(format!(
                    "{name}:{}:{}: dependency without a `name`",
                    pos.line, pos.column
                )));
            };
            let tags = item
                .get("tags")
                .and_then(Node::as_seq)
                .map(|t| {
                    t.iter()
                        .filter_map(Node::as_scalar)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            dependencies.push(DependencySpec {
                name: dep_name,
                version: text(item.get("version")),
                alias: text(item.get("alias")).filter(|a| !a.is_empty()),
                condition: text(item.get("condition")).filter(|c| !c.is_empty()),
                tags,
                depends_on: item.get("depends-on").cloned(),
                node: item.clone(),
            });
        }
    }
    Ok(ChartMeta {
        file,
        api_version: text(node.get("apiVersion")),
        name: chart_name,
        version: text(node.get("version")),
        dependencies,
        node,
    })
}

#[cfg(test)]
mod tests {
    use super::wanted;

    #[test]
    fn wanted_keeps_sequencing_inputs_only() {
        assert!(wanted("Chart.yaml", false));
        assert!(wanted("templates/a/b.yaml", false));
        assert!(wanted("crds/x.yaml", false));
        assert!(wanted("charts/db", true));
        assert!(wanted("charts/db/templates/x.yaml", false));
        assert!(wanted("charts/db-1.0.0.tgz", false));
        assert!(wanted("charts/db/charts/cache/values.yaml", false));
        assert!(!wanted("README.md", false));
        assert!(!wanted("files/big.bin", false));
        assert!(!wanted("charts/db/README.md", false));
    }
}
