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
use crate::source::chart::ChartLimits;
use crate::source::read;

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

pub use super::temp::TempDir;

/// What git printed: its output (bounded) and its messages.
struct GitOutput {
    ok: bool,
    stdout: Vec<u8>,
    stderr: String,
}

/// Runs git in `dir` (the current directory when `None`), its output held to `limit` bytes.
/// Pathspecs are literal (`*` and `:(...)` in a path mean themselves).
fn git_in(dir: Option<&Path>, args: &[&str], limit: u64) -> Result<GitOutput, Error> {
    let mut cmd = Command::new("git");
    cmd.arg("--literal-pathspecs");
    if let Some(dir) = dir {
        cmd.arg("-C").arg(dir);
    }
    cmd.args(args);
    let captured = read::run(&mut cmd, limit, None)
        .map_err(|e| Error::io("cannot run git", e))?
        .ok_or_else(|| Error::program("git did not finish"))?;
    let stdout = captured.stdout.map_err(|e| {
        e.describe(
            &format!("the output of `git {}`", args.join(" ")),
            read::Cap {
                limit,
                raise: Some("--max-archive-bytes"),
            },
        )
    })?;
    let stderr = captured
        .stderr
        .map(|b| String::from_utf8_lossy(&b).trim().to_owned())
        .unwrap_or_default();
    Ok(GitOutput {
        ok: captured.status.success(),
        stdout,
        stderr,
    })
}

/// What git prints to standard output in `dir` (held to what any input may be), as text; its
/// messages are the error when it fails.
pub fn output(dir: &Path, args: &[&str]) -> Result<String, Error> {
    let out = git_in(Some(dir), args, read::MAX_INPUT_BYTES)?;
    if !out.ok {
        return Err(Error::program(format!(
            "git {} failed: {}",
            args.join(" "),
            out.stderr
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Output of git's small answers (a hash, a path, a type): far below this.
const SMALL: u64 = 1024 * 1024;

fn git(args: &[&str]) -> Result<GitOutput, Error> {
    git_in(None, args, SMALL)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim().to_owned()
}

/// Refuses a revision git would read as an option (`--output=F`): it is never passed on.
pub fn check_revision(rev: &str) -> Result<(), Error> {
    if rev.starts_with('-') {
        return Err(Error::usage(format!(
            "`{}` is not a git revision: it starts with `-`",
            rev.escape_debug()
        )));
    }
    Ok(())
}

/// The commit a revision names, resolved with `rev-parse --verify` (options ended first).
pub fn resolve_commit(dir: Option<&Path>, rev: &str) -> Result<Option<String>, Error> {
    check_revision(rev)?;
    let resolved = git_in(
        dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &format!("{rev}^{{commit}}"),
        ],
        SMALL,
    )?;
    Ok(resolved.ok.then(|| text(&resolved.stdout)))
}

/// A commit of the repository at `top`, read path by path as the file system would read a
/// checkout of it: symbolic links (mode 120000) followed within the repository.
struct Snapshot<'a> {
    top: &'a Path,
    commit: &'a str,
    revision: &'a Revision,
}

/// Most symbolic links followed while resolving one path (Linux's `MAXSYMLINKS`).
const MAX_LINK_HOPS: usize = 40;

impl Snapshot<'_> {
    /// The entry at `path` (from the top): its mode and object, when there is one.
    fn entry(&self, path: &str) -> Result<Option<(String, String)>, Error> {
        if path.is_empty() {
            return Ok(Some((
                "040000".to_owned(),
                format!("{}^{{tree}}", self.commit),
            )));
        }
        let out = git_in(
            Some(self.top),
            &["ls-tree", "-z", "--full-tree", self.commit, "--", path],
            SMALL,
        )?;
        if !out.ok {
            return Err(
                Error::program(format!("{}: git ls-tree failed", self.revision))
                    .with_detail(out.stderr),
            );
        }
        // `<mode> <type> <object>\t<path>\0`, the entry itself (not its contents).
        let listing = String::from_utf8_lossy(&out.stdout);
        Ok(listing.split('\0').find_map(|line| {
            let (head, name) = line.split_once('\t')?;
            (name == path).then(|| {
                let mut fields = head.split(' ');
                let mode = fields.next().unwrap_or_default().to_owned();
                let object = fields.nth(1).unwrap_or_default().to_owned();
                (mode, object)
            })
        }))
    }

    /// The text of a symbolic link's blob.
    fn link_text(&self, object: &str) -> Result<String, Error> {
        let out = git_in(Some(self.top), &["cat-file", "blob", object], 4096)?;
        if !out.ok {
            return Err(
                Error::program(format!("{}: git cat-file failed", self.revision))
                    .with_detail(out.stderr),
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The real path (from the top) of `path`, each symbolic link on the way followed from the
    /// directory it is in, as the kernel follows them; `None` when nothing is there. Each
    /// link passed is recorded in `links` (its path and text), for the checkout to recreate.
    /// A link leading above the repository or to an absolute path is an error: a revision
    /// holds only the repository.
    fn resolve(
        &self,
        path: &str,
        links: &mut Vec<(String, String)>,
    ) -> Result<Option<String>, Error> {
        let mut pending: std::collections::VecDeque<String> =
            path.split('/').map(str::to_owned).collect();
        let mut done: Vec<String> = Vec::new();
        let mut hops = 0;
        while let Some(part) = pending.pop_front() {
            match part.as_str() {
                "" | "." => continue,
                ".." => {
                    if done.pop().is_none() {
                        return Err(self.outside(path));
                    }
                    continue;
                }
                _ => done.push(part),
            }
            let here = done.join("/");
            let Some((mode, object)) = self.entry(&here)? else {
                return Ok(None);
            };
            if mode != "120000" {
                continue;
            }
            hops += 1;
            if hops > MAX_LINK_HOPS {
                return Err(Error::invalid(format!(
                    "{}:{here}: symbolic link loop (more than {MAX_LINK_HOPS} links followed)",
                    self.revision.rev
                )));
            }
            let target = self.link_text(&object)?;
            if target.starts_with('/') || target.is_empty() {
                return Err(Error::invalid(format!(
                    "{}:{here}: the symbolic link leads to `{}`, outside the repository, which a revision does not hold",
                    self.revision.rev,
                    target.escape_debug()
                )));
            }
            links.push((here, target.clone()));
            done.pop();
            for (i, seg) in target.split('/').enumerate() {
                pending.insert(i, seg.to_owned());
            }
        }
        Ok(Some(done.join("/")))
    }

    fn outside(&self, path: &str) -> Error {
        Error::invalid(format!(
            "{}:{path}: leads outside the repository, which a revision does not hold",
            self.revision.rev
        ))
    }
}

/// A chart (or file) of a revision written into a temporary directory.
#[derive(Debug)]
pub struct Checkout {
    /// The target inside the copy: the chart directory or the file.
    pub target: PathBuf,
    /// The copy of the repository's top (only what the target needs).
    pub root: PathBuf,
    /// The current directory relative to the repository's top (`charts/` or empty).
    pub prefix: String,
}

/// What a checkout may still write: bytes of git's output and entries.
struct Budget {
    bytes: u64,
    files: usize,
    limits: ChartLimits,
}

/// Writes the chart (or file) `revision` names into `dir`, with the repository's layout, and
/// whatever its symbolic links lead to inside the repository (so that the chart loader
/// follows them as it follows them in a working tree, loop rules included); a link leading
/// out of the repository is an error. Everything written, links followed, is held to the
/// chart limits.
pub fn checkout(revision: &Revision, dir: &Path, limits: ChartLimits) -> Result<Checkout, Error> {
    if !git(&["rev-parse", "--show-toplevel"])?.ok {
        return Err(Error::usage(format!(
            "{revision}: the current directory is not in a git repository, so it has no revision `{}` to read",
            revision.rev
        ))
        .with_detail("REF:path reads a chart at a revision of the repository chartseq runs in: run it inside the repository, or name a path on disk"));
    }
    let Some(commit) = resolve_commit(None, &revision.rev)? else {
        return Err(Error::usage(format!(
            "{revision}: `{}` is not a git revision here",
            revision.rev
        ))
        .with_detail("name a commit, branch or tag (`HEAD~1`, `origin/main`) before the `:`; an existing path is read as a path"));
    };
    let prefix = text(&git(&["rev-parse", "--show-prefix"])?.stdout);
    let top = PathBuf::from(text(&git(&["rev-parse", "--show-toplevel"])?.stdout));
    let path = revision.path.trim_start_matches("./").trim_end_matches('/');
    let full = if path.is_empty() || path == "." {
        prefix.trim_end_matches('/').to_owned()
    } else {
        format!("{prefix}{path}")
    };
    let snapshot = Snapshot {
        top: &top,
        commit: &commit,
        revision,
    };
    let root = dir.join("repository");
    std::fs::create_dir(&root)
        .map_err(|e| Error::io(format!("cannot create {}", root.display()), e))?;
    let mut budget = Budget {
        bytes: limits.max_archive_bytes,
        files: limits.max_files,
        limits,
    };
    let mut links = Vec::new();
    let Some(real) = snapshot.resolve(&full, &mut links)? else {
        return Err(Error::usage(format!(
            "{revision}: no `{}` at revision {}",
            if full.is_empty() { "." } else { &full },
            revision.rev
        )));
    };
    // The path as named, its links recreated: the chart is read where the user named it.
    let mut written: Vec<String> = Vec::new();
    let mut queue: Vec<(String, String)> = Vec::new();
    materialize(&snapshot, &root, &real, &mut budget, &mut queue)?;
    written.push(real.clone());
    for (at, target) in links {
        make_link(&snapshot, &root, &at, &target)?;
    }
    // Links inside what was written: recreate each, and write what it leads to unless that
    // is written already or is a directory the link is in (a loop the loader reports).
    let mut made = std::collections::BTreeSet::new();
    while let Some((at, target)) = queue.pop() {
        if !made.insert(at.clone()) {
            continue;
        }
        let base = at.rsplit_once('/').map_or("", |(d, _)| d);
        let joined = if base.is_empty() {
            target.clone()
        } else {
            format!("{base}/{target}")
        };
        if target.starts_with('/') || target.is_empty() {
            return Err(Error::invalid(format!(
                "{}:{at}: the symbolic link leads to `{}`, outside the repository, which a revision does not hold",
                revision.rev,
                target.escape_debug()
            )));
        }
        let mut passed = Vec::new();
        let resolved = snapshot.resolve(&joined, &mut passed)?;
        make_link(&snapshot, &root, &at, &target)?;
        for (link, text) in passed {
            make_link(&snapshot, &root, &link, &text)?;
        }
        let Some(resolved) = resolved else {
            // A broken link: the loader says so if it reads it, as in a working tree.
            continue;
        };
        let covered = written.iter().any(|w| within(&resolved, w));
        if covered || within(base, &resolved) {
            continue;
        }
        materialize(&snapshot, &root, &resolved, &mut budget, &mut queue)?;
        written.push(resolved);
    }
    // The path as named: directories on the way that nothing else wrote are made (a `..`
    // in it must pass through them), links on the way were recreated above.
    let mut target = root.clone();
    for part in full.split('/').filter(|p| !p.is_empty()) {
        target.push(part);
        if part != "." && part != ".." && target.symlink_metadata().is_err() {
            std::fs::create_dir(&target)
                .map_err(|e| Error::io(format!("cannot create {}", target.display()), e))?;
        }
    }
    Ok(Checkout {
        target,
        root,
        prefix,
    })
}

/// Whether repository path `path` is `dir` or below it.
fn within(path: &str, dir: &str) -> bool {
    dir.is_empty()
        || path == dir
        || path
            .strip_prefix(dir)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Recreates the link at repository path `at` (its text already checked to stay inside).
fn make_link(snapshot: &Snapshot<'_>, root: &Path, at: &str, target: &str) -> Result<(), Error> {
    let place = root.join(at);
    if place.symlink_metadata().is_ok() {
        return Ok(());
    }
    if let Some(parent) = place.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| Error::io(format!("cannot create {}", parent.display()), e))?;
    }
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(target, &place).map_err(|e| {
            Error::io(
                format!(
                    "{}:{at}: cannot recreate the symbolic link",
                    snapshot.revision.rev
                ),
                e,
            )
        })
    }
    #[cfg(not(unix))]
    {
        let _ = target;
        Err(Error::invalid(format!(
            "{}:{at}: symbolic links at a revision are read on Unix only",
            snapshot.revision.rev
        )))
    }
}

/// Writes repository path `real` (a tree or a file, no link on the way) under `root`; links
/// inside a tree are queued as (path, text).
fn materialize(
    snapshot: &Snapshot<'_>,
    root: &Path,
    real: &str,
    budget: &mut Budget,
    queue: &mut Vec<(String, String)>,
) -> Result<(), Error> {
    let revision = snapshot.revision;
    let spec = format!("{}:{real}", snapshot.commit);
    let kind = git_in(Some(snapshot.top), &["cat-file", "-t", &spec], SMALL)?;
    if !kind.ok {
        // git's own words (`fatal: path '…' does not exist in 'HEAD'`) say the same, less
        // plainly.
        return Err(Error::usage(format!(
            "{revision}: no `{real}` at revision {}",
            revision.rev
        )));
    }
    let place = if real.is_empty() {
        root.to_path_buf()
    } else {
        root.join(real)
    };
    match text(&kind.stdout).as_str() {
        "tree" => {
            let archive = git_in(
                Some(snapshot.top),
                &["archive", "--format=tar", &spec],
                budget.bytes,
            )?;
            if !archive.ok {
                return Err(Error::program(format!("{revision}: git archive failed"))
                    .with_detail(archive.stderr));
            }
            budget.bytes -= archive.stdout.len() as u64;
            std::fs::create_dir_all(&place)
                .map_err(|e| Error::io(format!("cannot create {}", place.display()), e))?;
            unpack(snapshot, &archive.stdout, root, real, budget, queue)
        }
        "blob" => {
            let shown = git_in(
                Some(snapshot.top),
                &["cat-file", "blob", &spec],
                budget.bytes,
            )?;
            if !shown.ok {
                return Err(Error::program(format!("{revision}: git cat-file failed"))
                    .with_detail(shown.stderr));
            }
            budget.bytes -= shown.stdout.len() as u64;
            write_new(root, &place, &shown.stdout)
        }
        other => Err(Error::usage(format!(
            "{revision}: `{real}` is a git {other}, not a chart directory or file"
        ))),
    }
}

/// Writes a file of the copy, unless it is there already (the same commit wrote it), never
/// through a link.
fn write_new(root: &Path, place: &Path, bytes: &[u8]) -> Result<(), Error> {
    if place.symlink_metadata().is_ok() {
        return Ok(());
    }
    let parent = place.parent().unwrap_or(root);
    std::fs::create_dir_all(parent)
        .map_err(|e| Error::io(format!("cannot create {}", parent.display()), e))?;
    let inside = match (parent.canonicalize(), root.canonicalize()) {
        (Ok(p), Ok(r)) => p.starts_with(r),
        _ => false,
    };
    if !inside {
        return Err(Error::invalid(format!(
            "{}: would be written through a symbolic link",
            place.display()
        )));
    }
    std::fs::write(place, bytes)
        .map_err(|e| Error::io(format!("cannot write {}", place.display()), e))
}

/// Unpacks `git archive` output for repository path `base` under `root`: directories and
/// regular files are written, links queued.
fn unpack(
    snapshot: &Snapshot<'_>,
    tar_bytes: &[u8],
    root: &Path,
    base: &str,
    budget: &mut Budget,
    queue: &mut Vec<(String, String)>,
) -> Result<(), Error> {
    let revision = snapshot.revision;
    let corrupt = |e: std::io::Error| Error::io(format!("{revision}: cannot unpack the tree"), e);
    let mut archive = tar::Archive::new(tar_bytes);
    for entry in archive.entries().map_err(corrupt)? {
        let mut entry = entry.map_err(corrupt)?;
        let kind = entry.header().entry_type();
        if kind.is_pax_global_extensions() || kind.is_pax_local_extensions() {
            continue;
        }
        let raw = entry.path_bytes().into_owned();
        let rel = String::from_utf8_lossy(&raw)
            .trim_end_matches('/')
            .to_owned();
        if rel.starts_with('/') || rel.split('/').any(|s| s == "..") {
            return Err(Error::invalid(format!(
                "{revision}: git archive member `{rel}` escapes the tree"
            )));
        }
        let at = match (base.is_empty(), rel.is_empty()) {
            (_, true) => base.to_owned(),
            (true, false) => rel.clone(),
            (false, false) => format!("{base}/{rel}"),
        };
        budget.files = budget.files.checked_sub(1).ok_or_else(|| {
            Error::invalid(format!(
                "{revision}: more than {} files",
                budget.limits.max_files
            ))
        })?;
        let place = root.join(&at);
        if kind.is_dir() {
            std::fs::create_dir_all(&place)
                .map_err(|e| Error::io(format!("cannot create {}", place.display()), e))?;
        } else if kind.is_symlink() {
            let target = entry
                .link_name_bytes()
                .map(|t| String::from_utf8_lossy(&t).into_owned())
                .unwrap_or_default();
            queue.push((at, target));
        } else if kind.is_file() {
            let mut data = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut data).map_err(corrupt)?;
            write_new(root, &place, &data)?;
        }
    }
    Ok(())
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
