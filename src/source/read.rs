//! The one bounded reader every input goes through: values files, rendered streams (files,
//! standard input, pipes, devices), chart archives, git's output and helm's output.
//!
//! At most `limit + 1` bytes are read (`Read::take`), so a device (`/dev/zero`), a FIFO or a
//! pipe is refused at the same limit as a regular file, and a regular file over the limit is
//! refused before it is read.

use std::io::Read;
use std::path::Path;

use crate::error::Error;

/// Bytes a rendered stream (a TARGET file or standard input) may have by default: spans are
/// 32-bit byte offsets.
pub const MAX_INPUT_BYTES: u64 = u32::MAX as u64;

/// A cap on one read: the limit and how the user raises it.
#[derive(Clone, Copy, Debug)]
pub struct Cap<'a> {
    pub limit: u64,
    /// The flag that raises the limit (`--max-document-bytes`); `None` for a fixed limit.
    pub raise: Option<&'a str>,
}

impl Cap<'_> {
    /// The error for `what` (`values file x.yaml`) over this cap; `size` when it is known.
    #[must_use]
    pub fn exceeded(&self, what: &str, size: Option<u64>) -> Error {
        let size = size.map_or_else(
            || "more than the limit of".to_owned(),
            |s| format!("{s} bytes, more than the limit of"),
        );
        let raise = self
            .raise
            .map_or_else(String::new, |flag| format!(" (raise it with {flag})"));
        Error::invalid(format!("{what} has {size} {}{raise}", self.limit))
    }
}

/// Why a bounded read failed.
#[derive(Debug)]
pub enum ReadError {
    Io(std::io::Error),
    /// Over the limit: the size when it was known before reading.
    TooBig(Option<u64>),
}

impl ReadError {
    /// The error for `what` (`values file x.yaml`): `cannot read what: ...` or over the cap.
    #[must_use]
    pub fn describe(self, what: &str, cap: Cap<'_>) -> Error {
        match self {
            Self::Io(e) => Error::io(format!("cannot read {what}"), e),
            Self::TooBig(size) => cap.exceeded(what, size),
        }
    }
}

/// Reads all of `reader`, refusing more than `limit` bytes (at most `limit + 1` are read).
pub fn bounded(reader: impl Read, limit: u64) -> Result<Vec<u8>, ReadError> {
    bounded_with_capacity(reader, limit, 0)
}

fn bounded_with_capacity(
    reader: impl Read,
    limit: u64,
    capacity: u64,
) -> Result<Vec<u8>, ReadError> {
    let mut buf = Vec::with_capacity(usize::try_from(capacity.min(limit)).unwrap_or(0));
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut buf)
        .map_err(ReadError::Io)?;
    if buf.len() as u64 > limit {
        return Err(ReadError::TooBig(None));
    }
    Ok(buf)
}

/// Reads a file (a regular file, a device, a FIFO), refusing more than `limit` bytes; a regular
/// file over the limit is refused unread.
pub fn file(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let meta = file.metadata().map_err(ReadError::Io)?;
    if meta.is_dir() {
        return Err(ReadError::Io(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "is a directory",
        )));
    }
    let size = if meta.is_file() { meta.len() } else { 0 };
    if size > limit {
        return Err(ReadError::TooBig(Some(size)));
    }
    bounded_with_capacity(file, limit, size)
}

/// [`file`] with its errors described: `what` names the input (`values file x.yaml`).
pub fn file_or_error(
    path: &Path,
    limit: u64,
    what: &str,
    raise: Option<&str>,
) -> Result<Vec<u8>, Error> {
    file(path, limit).map_err(|e| e.describe(what, Cap { limit, raise }))
}

/// What a child process wrote, each stream held to its limit.
#[derive(Debug)]
pub struct Captured {
    pub status: std::process::ExitStatus,
    pub stdout: Result<Vec<u8>, ReadError>,
    pub stderr: Result<Vec<u8>, ReadError>,
}

/// Bytes of a child's standard error kept: enough for any message, bounded like every input.
pub const MAX_STDERR_BYTES: u64 = 1024 * 1024;

/// A flag that stops a child process run by [`run_until`]: once set, the child is killed and
/// reaped, and [`Ended::Cancelled`] returned. Clones share the flag.
#[derive(Clone, Debug, Default)]
pub struct Cancel(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Cancel {
    /// Stops the child of every run that polls this flag (now or later).
    pub fn cancel(&self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    #[must_use]
    pub fn is_cancelled(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// How a child run by [`run_until`] ended.
#[derive(Debug)]
pub enum Ended {
    /// It exited (or was stopped for output over its limit): what it wrote.
    Finished(Captured),
    /// It ran past the timeout and was killed.
    TimedOut,
    /// Its [`Cancel`] was set and it was killed.
    Cancelled,
}

/// Runs `command` with its standard output and error read through [`bounded`] (output to
/// `limit`, errors to [`MAX_STDERR_BYTES`]): output over its limit is closed and the child
/// killed; errors over theirs are cut (`stderr` is `TooBig`) and the rest discarded. With `timeout`, a child still running after
/// it is killed and `Ok(None)` is returned.
pub fn run(
    command: &mut std::process::Command,
    limit: u64,
    timeout: Option<std::time::Duration>,
) -> std::io::Result<Option<Captured>> {
    Ok(
        match run_until(command, limit, timeout, &Cancel::default())? {
            Ended::Finished(captured) => Some(captured),
            Ended::TimedOut | Ended::Cancelled => None,
        },
    )
}

/// [`run`], also stopped when `cancel` is set: the child is killed and reaped (no zombie),
/// and the threads reading its output are left to end when its pipes close (a grandchild
/// holding them cannot keep the caller waiting).
pub fn run_until(
    command: &mut std::process::Command,
    limit: u64,
    timeout: Option<std::time::Duration>,
    cancel: &Cancel,
) -> std::io::Result<Ended> {
    use std::process::Stdio;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    if cancel.is_cancelled() {
        return Ok(Ended::Cancelled);
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let over = Arc::new(AtomicBool::new(false));
    // Output over its limit stops the child; errors over theirs are kept to the limit and the
    // rest drained, so a chatty child is neither blocked nor stopped.
    let reader = |stream: Option<Box<dyn Read + Send>>, limit: u64, fatal: bool| {
        let over = Arc::clone(&over);
        std::thread::spawn(move || {
            let Some(mut stream) = stream else {
                return Ok(Vec::new());
            };
            let result = bounded(&mut stream, limit);
            if matches!(result, Err(ReadError::TooBig(_))) {
                if fatal {
                    over.store(true, Ordering::SeqCst);
                } else {
                    let _ = std::io::copy(&mut stream, &mut std::io::sink());
                }
            }
            result
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        limit,
        true,
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        MAX_STDERR_BYTES,
        false,
    );
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        let late = timeout.is_some_and(|t| started.elapsed() > t);
        let cancelled = cancel.is_cancelled();
        if late || cancelled || over.load(Ordering::SeqCst) {
            let _ = child.kill();
            let status = child.wait()?;
            if cancelled {
                return Ok(Ended::Cancelled);
            }
            if late {
                return Ok(Ended::TimedOut);
            }
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    let joined = |handle: std::thread::JoinHandle<Result<Vec<u8>, ReadError>>| {
        handle.join().unwrap_or_else(|_| {
            Err(ReadError::Io(std::io::Error::other(
                "the thread reading a child's output failed",
            )))
        })
    };
    Ok(Ended::Finished(Captured {
        status,
        stdout: joined(out),
        stderr: joined(err),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cancelled run kills its child and reaps it (no `/proc` entry left, not even a
    /// zombie's), and returns without waiting for the child's own end.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_cancelled_child_is_killed_and_reaped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pid_file = dir.path().join("pid");
        let mut command = std::process::Command::new("sh");
        command.arg("-c").arg(format!(
            "echo $$ > '{}'; exec sleep 600",
            pid_file.display()
        ));
        let cancel = Cancel::default();
        let stopper = cancel.clone();
        let pid = pid_file.clone();
        let watcher = std::thread::spawn(move || {
            // Cancelled once the child has started (a hang is caught by the test's bound).
            while std::fs::read_to_string(&pid).map_or(true, |t| !t.ends_with('\n')) {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            stopper.cancel();
        });
        let started = std::time::Instant::now();
        let ended = run_until(&mut command, 1024, None, &cancel).expect("runs");
        watcher.join().expect("watcher");
        assert!(matches!(ended, Ended::Cancelled), "{ended:?}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(300),
            "hung"
        );
        let pid = std::fs::read_to_string(&pid_file).expect("pid");
        assert!(
            !Path::new(&format!("/proc/{}", pid.trim())).exists(),
            "the child {} is left",
            pid.trim()
        );
        // Set before the run: nothing is started.
        let mut never = std::process::Command::new("sh");
        never
            .arg("-c")
            .arg(format!("touch '{}'", dir.path().join("ran").display()));
        assert!(matches!(
            run_until(&mut never, 1024, None, &cancel),
            Ok(Ended::Cancelled)
        ));
        assert!(!dir.path().join("ran").exists());
    }

    #[test]
    fn a_reader_is_refused_past_its_limit_without_reading_on() {
        let mut zeros = std::io::repeat(0);
        assert!(matches!(
            bounded(&mut zeros, 1024),
            Err(ReadError::TooBig(None))
        ));
        assert_eq!(
            bounded(&b"12345"[..], 5).expect("at the limit").len(),
            5,
            "exactly the limit is accepted"
        );
        assert!(matches!(
            bounded(&b"123456"[..], 5),
            Err(ReadError::TooBig(_))
        ));
    }

    #[cfg(unix)]
    #[test]
    fn devices_are_held_to_the_limit_and_files_over_it_are_refused_unread() {
        let err = file(Path::new("/dev/zero"), 4096).expect_err("endless");
        assert!(matches!(err, ReadError::TooBig(None)));
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("big");
        std::fs::write(&path, vec![b'x'; 100]).expect("write");
        assert!(matches!(file(&path, 99), Err(ReadError::TooBig(Some(100)))));
        assert_eq!(file(&path, 100).expect("fits").len(), 100);
        let text = file_or_error(&path, 10, "values file big", Some("--max-document-bytes"))
            .expect_err("over")
            .to_string();
        assert_eq!(
            text,
            "values file big has 100 bytes, more than the limit of 10 (raise it with --max-document-bytes)"
        );
        assert!(matches!(file(dir.path(), 10), Err(ReadError::Io(_))));
    }

    #[cfg(unix)]
    #[test]
    fn a_child_is_stopped_past_its_output_limit_but_not_for_chatty_errors() {
        let mut endless = std::process::Command::new("sh");
        endless.args(["-c", "yes"]);
        let captured = run(&mut endless, 65536, None)
            .expect("sh runs")
            .expect("no timeout");
        assert!(matches!(captured.stdout, Err(ReadError::TooBig(None))));
        assert!(!captured.status.success(), "killed");

        let mut chatty = std::process::Command::new("sh");
        chatty.args(["-c", "head -c 3000000 /dev/zero >&2; echo done"]);
        let captured = run(&mut chatty, 65536, None)
            .expect("sh runs")
            .expect("no timeout");
        assert!(captured.status.success());
        assert_eq!(captured.stdout.expect("output"), b"done\n");
        assert!(matches!(captured.stderr, Err(ReadError::TooBig(None))));
    }
}
