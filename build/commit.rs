//! The commit chartseq is built from, for `chartseq --version`. Shared by `build.rs` and the
//! tests that check it (`tests/it/release.rs` includes this file).
//!
//! In order: `$CHARTSEQ_COMMIT` (a packager building from a tarball names it), then git when the
//! package directory is a git checkout (never a repository above it: a crate unpacked inside
//! someone's home repository is not that commit), then the `.cargo_vcs_info.json` that `cargo
//! package` writes into a published crate, else `unknown`. Nothing here fails the build.

use std::path::{Path, PathBuf};
use std::process::Command;

/// How many hexadecimal digits of the commit are printed.
pub const SHORT: usize = 12;

/// The commit and the files whose change means it may have changed (for `rerun-if-changed`;
/// only files that exist, since cargo re-runs a build script for a missing one every time).
pub struct Found {
    pub commit: String,
    pub watch: Vec<PathBuf>,
}

pub fn find(manifest_dir: &Path, from_env: Option<&str>) -> Found {
    if let Some(commit) = from_env.map(str::trim).filter(|c| !c.is_empty()) {
        return Found {
            commit: commit.to_owned(),
            watch: Vec::new(),
        };
    }
    if manifest_dir.join(".git").exists() {
        if let Some(found) = from_git(manifest_dir) {
            return found;
        }
    }
    let vcs_info = manifest_dir.join(".cargo_vcs_info.json");
    if let Some(commit) = std::fs::read_to_string(&vcs_info)
        .ok()
        .and_then(|text| sha1_of_vcs_info(&text))
    {
        return Found {
            commit,
            watch: vec![vcs_info],
        };
    }
    Found {
        commit: "unknown".to_owned(),
        watch: Vec::new(),
    }
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

fn from_git(dir: &Path) -> Option<Found> {
    let full = git(dir, &["rev-parse", "HEAD"])?;
    let commit = short(&full)?;
    // HEAD names the branch; the branch's ref file (or packed-refs) moves with each commit.
    let mut watch = Vec::new();
    let mut paths = vec!["HEAD".to_owned(), "packed-refs".to_owned()];
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        paths.push(branch);
    }
    for path in paths {
        if let Some(file) = git(dir, &["rev-parse", "--git-path", &path]) {
            let file = dir.join(file);
            if file.is_file() {
                watch.push(file);
            }
        }
    }
    Some(Found { commit, watch })
}

fn short(full: &str) -> Option<String> {
    (full.len() >= SHORT && full.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| full[..SHORT].to_ascii_lowercase())
}

/// `{"git": {"sha1": "…"}, …}`, read without a JSON parser (build scripts have no
/// dependencies here).
fn sha1_of_vcs_info(text: &str) -> Option<String> {
    let after = &text[text.find("\"sha1\"")? + "\"sha1\"".len()..];
    let after = after.trim_start().strip_prefix(':')?.trim_start();
    let value = after.strip_prefix('"')?;
    short(&value[..value.find('"')?])
}
