//! Which charts to read: those under a directory that is not a chart itself, those given
//! files belong to, and (`chartseq lint --changed-since REF`) those a change touches, as a
//! pull-request check wants them (like chart-testing's `ct lint`).
//!
//! The changed files come from `git diff --name-only REF...HEAD` (the changes since the merge
//! base, what a pull request adds) plus uncommitted ones, so a local run sees work in
//! progress. Each file belongs to the chart root above it: the nearest directory with a
//! `Chart.yaml`, climbing out of `charts/` directories so that a change to a vendored
//! subchart re-lints its parent, which is what renders it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::source::git;

/// The chart root a file belongs to, if any, not above `stop`.
#[must_use]
pub fn chart_root(file: &Path, stop: &Path) -> Option<PathBuf> {
    let mut root: Option<PathBuf> = None;
    for dir in file.ancestors().skip(1) {
        if !dir.starts_with(stop) {
            break;
        }
        if dir.join("Chart.yaml").is_file() {
            match &root {
                // Climb out of `parent/charts/<this>`: the parent renders it.
                Some(found)
                    if found.parent().and_then(Path::file_name) == Some("charts".as_ref())
                        && found.parent().and_then(Path::parent) == Some(dir) =>
                {
                    root = Some(dir.to_path_buf());
                }
                None => root = Some(dir.to_path_buf()),
                Some(_) => break,
            }
        }
    }
    root
}

/// The chart roots the given files (or directories) belong to, once each, sorted.
#[must_use]
pub fn owning_charts(files: &[PathBuf]) -> Vec<PathBuf> {
    let Ok(cwd) = std::env::current_dir() else {
        return Vec::new();
    };
    let charts: BTreeSet<PathBuf> = files
        .iter()
        .filter_map(|f| {
            let absolute = cwd.join(f);
            // A chart directory itself is its own root.
            let probe = if absolute.join("Chart.yaml").is_file() {
                absolute.join("Chart.yaml")
            } else {
                absolute
            };
            chart_root(&probe, Path::new("/"))
        })
        .map(|chart| match chart.strip_prefix(&cwd) {
            Ok(rel) if rel.as_os_str().is_empty() => PathBuf::from("."),
            Ok(rel) => rel.to_path_buf(),
            Err(_) => chart,
        })
        .collect();
    charts.into_iter().collect()
}

/// The chart roots under `search` (a directory) with files changed since `since`, sorted.
pub fn changed_charts(since: &str, search: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let cwd =
        std::env::current_dir().map_err(|e| Error::io("cannot read the current directory", e))?;
    let first = search.first().map_or(cwd.as_path(), PathBuf::as_path);
    let probe = if first.is_dir() {
        first
    } else {
        first.parent().unwrap_or(Path::new("."))
    };
    let top = PathBuf::from(git::output(probe, &["rev-parse", "--show-toplevel"])?.trim());
    let top = top.canonicalize().unwrap_or(top);
    // The revision is resolved to a commit first (never passed where git could read it as an
    // option: `--output=F` would have git write a file), and only the commit goes on.
    let commit = git::resolve_commit(Some(&top), since)
        .map_err(|e| e.context("--changed-since"))?
        .ok_or_else(|| {
            Error::usage(format!(
                "--changed-since: `{}` is not a git revision here",
                since.escape_debug()
            ))
        })?;
    let mut files = BTreeSet::new();
    let range = format!("{commit}...HEAD");
    for args in [
        vec!["diff", "--name-only", "--no-renames", range.as_str()],
        vec!["diff", "--name-only", "--no-renames", "HEAD"],
        vec!["ls-files", "--others", "--exclude-standard"],
    ] {
        for line in git::output(&top, &args)?.lines().filter(|l| !l.is_empty()) {
            files.insert(top.join(line));
        }
    }
    let roots: Vec<PathBuf> = search
        .iter()
        .map(|s| cwd.join(s).canonicalize().unwrap_or_else(|_| cwd.join(s)))
        .collect();
    let mut charts = BTreeSet::new();
    for file in &files {
        for root in roots.iter().filter(|r| file.starts_with(r)) {
            if let Some(chart) = chart_root(file, root) {
                let shown = chart
                    .strip_prefix(&cwd)
                    .map_or_else(|_| chart.clone(), Path::to_path_buf);
                charts.insert(if shown.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    shown
                });
            }
        }
    }
    Ok(charts.into_iter().collect())
}

/// Every chart under a directory that is not a chart itself, sorted, as the GitHub Action
/// finds them: each directory with a `Chart.yaml`, except the vendored subcharts under a
/// chart's `charts/` (its parent renders them). `.git` and `node_modules` are not searched,
/// and links to directories are not followed (no loops).
#[must_use]
pub fn charts_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        let is_chart = at.join("Chart.yaml").is_file();
        if is_chart {
            found.push(at.clone());
        }
        let Ok(entries) = std::fs::read_dir(&at) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name();
            let skip = name == ".git"
                || name == "node_modules"
                || (is_chart && name == "charts")
                || !entry.file_type().is_ok_and(|t| t.is_dir());
            if !skip {
                pending.push(entry.path());
            }
        }
    }
    found.sort();
    found
        .into_iter()
        .map(|p| match p.strip_prefix(".") {
            Ok(rel) if !rel.as_os_str().is_empty() && dir == Path::new(".") => rel.to_path_buf(),
            _ => p,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_under_a_directory_skip_vendored_subcharts() {
        let dir = tempfile::tempdir().expect("tempdir");
        let top = dir.path();
        for chart in [
            "charts/app",
            "charts/app/charts/db",
            "charts/web",
            "other/nested",
            ".git/x",
            "node_modules/y",
        ] {
            std::fs::create_dir_all(top.join(chart)).expect("mkdir");
            std::fs::write(top.join(chart).join("Chart.yaml"), "name: x\n").expect("write");
        }
        assert_eq!(
            charts_under(top),
            vec![
                top.join("charts/app"),
                top.join("charts/web"),
                top.join("other/nested")
            ]
        );
    }

    #[test]
    fn files_belong_to_the_outermost_rendering_chart() {
        let dir = tempfile::tempdir().expect("tempdir");
        let top = dir.path();
        for chart in ["app", "app/charts/db", "other/nested"] {
            std::fs::create_dir_all(top.join(chart).join("templates")).expect("mkdir");
            std::fs::write(top.join(chart).join("Chart.yaml"), "name: x\n").expect("write");
        }
        let root = |file: &str| chart_root(&top.join(file), top);
        assert_eq!(root("app/templates/a.yaml"), Some(top.join("app")));
        // A vendored subchart is rendered by its parent.
        assert_eq!(
            root("app/charts/db/templates/x.yaml"),
            Some(top.join("app"))
        );
        assert_eq!(root("app/charts/db/Chart.yaml"), Some(top.join("app")));
        // A chart beside another (not under `charts/`) is its own root.
        assert_eq!(
            root("other/nested/values.yaml"),
            Some(top.join("other/nested"))
        );
        assert_eq!(root("README.md"), None);
        // Nothing above the search directory counts.
        assert_eq!(
            chart_root(
                &top.join("app/templates/a.yaml"),
                &top.join("app/templates")
            ),
            None
        );
    }
}
