//! Where a finding lives for tools that only understand files in a repository (SARIF, GitHub
//! annotations, JUnit): a path relative to the repository root and, when the finding's
//! position is in that file, its line/column range.
//!
//! A finding located in the rendered stream (a key written by a helper, a stream read from
//! stdin) has no line in a file of the repository. It is then attached to the template file
//! its document came from, without a region, rather than to a made-up line.

use std::path::{Path, PathBuf};

use crate::lint::{Finding, Label, Position};
use crate::model::Model;
use crate::source::Origin;

/// A finding's place in the repository.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepoLocation {
    /// Relative to the repository root, `/`-separated.
    pub path: String,
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

/// `name` (a display path, relative to the current directory) relative to `root`.
fn relative(root: Option<&Path>, name: &str) -> String {
    let rel = std::env::current_dir()
        .ok()
        .zip(root)
        .and_then(|(cwd, root)| {
            let absolute = cwd.join(name);
            absolute.strip_prefix(root).ok().map(Path::to_path_buf)
        })
        .map_or_else(|| name.to_owned(), |p| p.to_string_lossy().into_owned());
    let rel = rel.replace('\\', "/");
    rel.strip_prefix("./").map_or(rel.clone(), str::to_owned)
}

/// Where `finding` sits in the repository rooted at `root`; `None` when it is in no file on
/// disk (a stream read from standard input).
#[must_use]
pub fn locate(model: &Model, finding: &Finding, root: Option<&Path>) -> Option<RepoLocation> {
    if let Some(id) = model.sources.find(&finding.location.file)
        && model.sources.get(id).origin == Origin::Disk
    {
        return Some(RepoLocation {
            path: relative(root, &finding.location.file),
            region: Some(finding.location.clone()),
        });
    }
    // The position is in the rendered stream: name the template file the document came from.
    let source = finding.source_path.as_deref()?;
    let template = model
        .documents
        .iter()
        .find(|d| d.source_path.as_deref() == Some(source))
        .and_then(|d| d.template)?;
    let file = model.sources.get(template);
    (file.origin == Origin::Disk).then(|| RepoLocation {
        path: relative(root, &file.name),
        region: None,
    })
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
    Some(RepoLocation {
        path: relative(root, &file.name),
        region: Some(Position {
            file: file.name.clone(),
            line: start.line,
            column: start.column,
            end_line: end.line,
            end_column: end.column,
        }),
    })
}
