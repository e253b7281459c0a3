//! Where a finding lives for tools that only understand files in a repository (SARIF, GitHub
//! annotations, JUnit): a path relative to the repository root and, when the finding's
//! position is in that file, its line/column range.
//!
//! A finding located in the rendered stream by a key written by a helper has no line in a
//! template. It is then attached to the template file its document came from, without a
//! region, rather than to a made-up line. A stream linted without its chart is itself the
//! file; a stream read from stdin is in no file at all.

use std::path::{Path, PathBuf};

use crate::lint::{Finding, Label, Position};
use crate::model::Model;
use crate::source::Origin;

/// A finding's place in the repository.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepoLocation {
    /// Relative to the repository root, `/`-separated; absolute when the file is outside it.
    pub path: String,
    /// Whether `path` is relative to the repository root.
    pub in_repository: bool,
    /// The range in that file, when the finding's position is in it.
    pub region: Option<Position>,
}

/// The repository root: the nearest directory at or above the current one holding `.git`,
/// else the current directory.
#[must_use]
pub fn repository_root() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    let root = cwd
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .map_or_else(|| cwd.clone(), Path::to_path_buf);
    Some(root)
}

/// `name` (a display path, relative to the current directory) relative to `root`, or
/// absolute (and `false`) when the file is outside the repository.
fn relative(root: Option<&Path>, name: &str) -> (String, bool) {
    let cwd = std::env::current_dir().ok();
    let absolute = cwd
        .as_ref()
        .map(|cwd| crate::source::lexical(&cwd.join(name)));
    // A file reached through a symbolic link (a linked chart directory, a linked working
    // directory) is the file the link leads to: that is the path the repository holds.
    let resolved = cwd
        .as_ref()
        .and_then(|cwd| cwd.join(name).canonicalize().ok());
    let resolved_root = root.and_then(|r| r.canonicalize().ok());
    let below = |path: &Option<PathBuf>, root: Option<&Path>| {
        let (path, root) = (path.as_ref()?, root?);
        path.strip_prefix(root).ok().map(Path::to_path_buf)
    };
    let (path, inside) = if let Some(rel) = below(&resolved, resolved_root.as_deref()) {
        (rel, true)
    } else if let Some(rel) = below(&absolute, root) {
        (rel, true)
    } else if let Some(path) = resolved.or(absolute) {
        (path, false)
    } else {
        (PathBuf::from(name), !Path::new(name).is_absolute())
    };
    let text = path.to_string_lossy().replace('\\', "/");
    let text = text.strip_prefix("./").map_or(text.clone(), str::to_owned);
    (text, inside)
}

fn on_disk(model: &Model, name: &str) -> bool {
    model
        .sources
        .find(name)
        .is_some_and(|id| model.sources.get(id).origin == Origin::Disk)
}

fn at(root: Option<&Path>, name: &str, region: Option<Position>) -> RepoLocation {
    let (path, in_repository) = relative(root, name);
    RepoLocation {
        path,
        in_repository,
        region,
    }
}

/// Where `finding` sits in the repository rooted at `root`: its template line; else (a line
/// written by a helper) the template file; else (a stream without its chart) the line of the
/// rendered stream file; `None` when it is in no file on disk (a stream read from stdin).
#[must_use]
pub fn locate(model: &Model, finding: &Finding, root: Option<&Path>) -> Option<RepoLocation> {
    if on_disk(model, &finding.location.file) {
        return Some(at(
            root,
            &finding.location.file,
            Some(finding.location.clone()),
        ));
    }
    let template = finding.source_path.as_deref().and_then(|source| {
        model
            .documents
            .iter()
            .find(|d| d.source_path.as_deref() == Some(source))
            .and_then(|d| d.template)
    });
    if let Some(template) = template {
        let file = model.sources.get(template);
        if file.origin == Origin::Disk {
            return Some(at(root, &file.name, None));
        }
    }
    let rendered = finding.rendered.as_ref()?;
    on_disk(model, &rendered.file).then(|| at(root, &rendered.file, Some(rendered.clone())))
}

/// Where a finding with no place in a file on disk (its chart read from an archive) is
/// attached: the archive on disk, else the chart's `Chart.yaml`; without a region, as no line
/// of those files is meant.
#[must_use]
pub fn fallback(model: &Model, finding: &Finding, root: Option<&Path>) -> Option<RepoLocation> {
    let archive = |name: &str| {
        [".tgz:", ".tar.gz:"]
            .iter()
            .filter_map(|ext| name.find(ext).map(|i| name[..i + ext.len() - 1].to_owned()))
            .min_by_key(String::len)
    };
    if let Some(path) = archive(&finding.location.file).filter(|p| Path::new(p).is_file()) {
        return Some(at(root, &path, None));
    }
    let meta = model.charts.first()?.info.as_ref()?.meta.file;
    let file = model.sources.get(meta);
    if let Some(path) = archive(&file.name).filter(|p| Path::new(p).is_file()) {
        return Some(at(root, &path, None));
    }
    (file.origin == Origin::Disk).then(|| at(root, &file.name, None))
}

/// Where a label of the human rendering sits in the repository, when its file is on disk.
#[must_use]
pub fn label_location(model: &Model, label: &Label, root: Option<&Path>) -> Option<RepoLocation> {
    let file = model.sources.get(label.loc.file);
    if file.origin != Origin::Disk {
        return None;
    }
    let start = file.line_col(label.loc.span.start);
    let end = file.line_col(label.loc.span.end.max(label.loc.span.start));
    Some(at(
        root,
        &file.name,
        Some(Position {
            file: file.name.clone(),
            line: start.line,
            column: start.column,
            end_line: end.line,
            end_column: end.column,
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_with_dots_are_folded() {
        assert_eq!(
            crate::source::lexical(Path::new("/r/sub/../charts/./a.yaml")),
            Path::new("/r/charts/a.yaml")
        );
        let cwd = std::env::current_dir().expect("cwd");
        let root = cwd.parent().map(Path::to_path_buf);
        let name = cwd
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let (path, inside) = relative(root.as_deref(), &format!("../{name}/x.yaml"));
        assert_eq!((path, inside), (format!("{name}/x.yaml"), true));
    }
}
