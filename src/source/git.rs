//! A chart at a git revision (`REF:path/to/chart`, as `chartseq diff` takes it), read with
//! git into a temporary directory: `git archive` of the tree, or `git show` of a file (a
//! packaged chart, a rendered stream). The working tree is never touched.
//!
//! The path is relative to the current directory, like every other target (git's own
//! `REF:path` is relative to the repository's top): `chartseq diff HEAD~1:chart chart`
//! compares the same chart.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::Error;

/// A revision and a path, split from `REF:path`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Revision {
    pub rev: String,
    pub path: String,
}

impl Revision {
    /// Reads `REF:path`. An existing file or directory of that name is a path, not a
    /// revision (a `:` is legal in file names), so callers ask this only for names that do
    /// not exist.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        let (rev, path) = text.split_once(':')?;
        (!rev.is_empty()).then(|| Self {
            rev: rev.to_owned(),
            path: path.to_owned(),
        })
    }
}

impl std::fmt::Display for Revision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.rev, self.path)
    }
}

/// A temporary directory removed when dropped.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(prefix: &str) -> Result<Self, Error> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "{prefix}-{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir)
            .map_err(|e| Error::io(format!("cannot create {}", dir.display()), &e))?;
        Ok(Self(dir))
    }

    #[must_use]
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs git in `dir` (the current directory when `None`).
fn git_in(dir: Option<&Path>, args: &[&str]) -> Result<std::process::Output, Error> {
    let mut cmd = Command::new("git");
    if let Some(dir) = dir {
        cmd.arg("-C").arg(dir);
    }
    cmd.args(args)
        .output()
        .map_err(|e| Error::io("cannot run git (needed to read REF:path)", &e))
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).trim().to_owned()
}

fn git(args: &[&str]) -> Result<std::process::Output, Error> {
    git_in(None, args)
}

/// The object `rev:path` names (the path relative to the current directory), as a
/// `commit:path-from-the-top` spec, its type, and the repository's top directory.
fn object(revision: &Revision) -> Result<(String, String, PathBuf), Error> {
    let resolved = git(&[
        "rev-parse",
        "--verify",
        "--quiet",
        &format!("{}^{{commit}}", revision.rev),
    ])?;
    if !resolved.status.success() {
        return Err(Error::new(format!(
            "{revision}: `{}` is not a git revision here",
            revision.rev
        ))
        .with_detail("name a commit, branch or tag (`HEAD~1`, `origin/main`) before the `:`; an existing path is read as a path"));
    }
    let commit = String::from_utf8_lossy(&resolved.stdout).trim().to_owned();
    let prefix = git(&["rev-parse", "--show-prefix"])?;
    let prefix = String::from_utf8_lossy(&prefix.stdout).trim().to_owned();
    let top = git(&["rev-parse", "--show-toplevel"])?;
    let top = PathBuf::from(String::from_utf8_lossy(&top.stdout).trim());
    let path = revision.path.trim_start_matches("./").trim_end_matches('/');
    let full = if path.is_empty() || path == "." {
        prefix.trim_end_matches('/').to_owned()
    } else {
        format!("{prefix}{path}")
    };
    let spec = format!("{commit}:{full}");
    let kind = git_in(Some(&top), &["cat-file", "-t", &spec])?;
    if !kind.status.success() {
        return Err(Error::new(format!(
            "{revision}: no `{}` at revision {}",
            if full.is_empty() { "." } else { &full },
            revision.rev
        ))
        .with_detail(stderr(&kind)));
    }
    Ok((
        spec,
        String::from_utf8_lossy(&kind.stdout).trim().to_owned(),
        top,
    ))
}

/// Writes the chart (or file) `revision` names into `dir`; returns the target path inside it.
pub fn checkout(revision: &Revision, dir: &Path) -> Result<PathBuf, Error> {
    let (spec, kind, top) = object(revision)?;
    let base = Path::new(&revision.path)
        .file_name()
        .map_or_else(|| "chart".into(), std::ffi::OsStr::to_os_string);
    let target = dir.join(base);
    match kind.as_str() {
        "tree" => {
            let archive = git_in(Some(&top), &["archive", "--format=tar", &spec])?;
            if !archive.status.success() {
                return Err(Error::new(format!("{revision}: git archive failed"))
                    .with_detail(stderr(&archive)));
            }
            std::fs::create_dir(&target)
                .map_err(|e| Error::io(format!("cannot create {}", target.display()), &e))?;
            tar::Archive::new(archive.stdout.as_slice())
                .unpack(&target)
                .map_err(|e| Error::io(format!("{revision}: cannot unpack the tree"), &e))?;
        }
        "blob" => {
            let shown = git_in(Some(&top), &["cat-file", "blob", &spec])?;
            if !shown.status.success() {
                return Err(Error::new(format!("{revision}: git cat-file failed"))
                    .with_detail(stderr(&shown)));
            }
            std::fs::write(&target, &shown.stdout)
                .map_err(|e| Error::io(format!("cannot write {}", target.display()), &e))?;
        }
        other => {
            return Err(Error::new(format!(
                "{revision}: names a git {other}, not a chart directory or file"
            )));
        }
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_split_at_the_first_colon() {
        assert_eq!(
            Revision::parse("HEAD~1:charts/web"),
            Some(Revision {
                rev: "HEAD~1".into(),
                path: "charts/web".into()
            })
        );
        assert_eq!(
            Revision::parse("main:"),
            Some(Revision {
                rev: "main".into(),
                path: String::new()
            })
        );
        assert_eq!(Revision::parse(":x"), None);
        assert_eq!(Revision::parse("chart"), None);
    }
}
