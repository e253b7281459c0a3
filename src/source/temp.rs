//! Temporary directories: removed when dropped (on success and on error alike), and named
//! `<prefix>-<pid>-<n>-<nanos>` so that a run killed before it could remove its own
//! (SIGKILL, SIGINT, SIGTERM: chartseq installs no signal handler) has it removed by a later
//! run with the same prefix: on Linux once that process is gone and the directory is ten
//! minutes old, elsewhere once it is a day old.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::Error;

/// How old a temporary directory of a process that cannot be checked must be to be stale.
const STALE_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// How old a temporary directory of a process that is gone must be to be stale.
const GONE_AFTER: Duration = Duration::from_secs(10 * 60);

/// A temporary directory removed when dropped.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    /// Creates `$TMPDIR/<prefix>-<pid>-<n>-<nanos>`, after removing those of the same prefix
    /// that killed runs left behind.
    pub fn new(prefix: &str) -> Result<Self, Error> {
        use std::sync::atomic::{AtomicU32, Ordering};
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let base = std::env::temp_dir();
        sweep(&base, prefix);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = base.join(format!(
            "{prefix}-{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir)
            .map_err(|e| Error::io(format!("cannot create {}", dir.display()), e))?;
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

/// Removes the directories `<prefix>-<pid>-…` in `base` whose process is gone (Linux: no
/// `/proc/<pid>`) and that are ten minutes old, or that are a day old. Best effort:
/// what cannot be read or removed is left alone.
fn sweep(base: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    let procfs = Path::new("/proc/self").exists();
    let own = std::process::id();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|rest| rest.strip_prefix('-'))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        // Only real directories (never through a link), never this process's own.
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        if pid == own || !meta.is_dir() {
            continue;
        }
        let age = meta
            .modified()
            .ok()
            .and_then(|m| m.elapsed().ok())
            .unwrap_or_default();
        // A process of another PID namespace sharing this directory is not in `/proc`: the
        // directory must also be older than any run takes to be stale.
        let stale = age > STALE_AFTER
            || procfs && age > GONE_AFTER && !Path::new("/proc").join(pid.to_string()).exists();
        if stale {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
