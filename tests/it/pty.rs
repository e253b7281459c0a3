//! Runs `chartseq` on a real pseudo-terminal, as a person at a terminal runs it: stdin, stdout
//! and stderr are the terminal's slave side, with a chosen window size and environment, and the
//! screen's bytes are read from the master side.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
use rustix::termios::{Winsize, tcsetwinsize};

/// What a terminal run showed: exit code (`None`: it had not ended by the bound and was
/// killed) and everything written to the screen.
pub struct Screen {
    pub code: Option<i32>,
    pub bytes: String,
}

/// Runs `cmd` with a terminal of `columns` × 24 as its stdin, stdout and stderr. The bound
/// only catches a run that never ends; a hang is reported as `code: None`, never waited out.
pub fn run_in_terminal(cmd: &mut Command, columns: u16, bound: Duration) -> Screen {
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)
        .expect("a pseudo-terminal opens");
    grantpt(&master).expect("grantpt");
    unlockpt(&master).expect("unlockpt");
    let name = ptsname(&master, Vec::new()).expect("the terminal has a name");
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(name.to_str().expect("a UTF-8 terminal name"))
        .expect("the terminal's slave side opens");
    tcsetwinsize(
        &slave,
        Winsize {
            ws_row: 24,
            ws_col: columns,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )
    .expect("the window size is set");
    let fd = |f: &std::fs::File| Stdio::from(OwnedFd::from(f.try_clone().expect("dup")));
    cmd.stdin(fd(&slave))
        .stdout(fd(&slave))
        .stderr(fd(&slave))
        .env("TERM", "xterm-256color")
        .env("COLUMNS", columns.to_string());
    let mut child = cmd.spawn().expect("chartseq starts");
    // Only the child may hold the terminal's slave side, or the screen never ends.
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    drop(slave);
    // Read the screen on a thread: a full terminal buffer would otherwise stop the child.
    let mut master = std::fs::File::from(master);
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let mut chunk = [0_u8; 4096];
        // EIO once every slave descriptor is closed: the screen is complete.
        while let Ok(n) = master.read(&mut chunk) {
            if n == 0 {
                break;
            }
            bytes.extend_from_slice(&chunk[..n]);
        }
        bytes
    });
    let started = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().expect("the child can be waited for") {
            break Some(status.code().unwrap_or(-1));
        }
        if started.elapsed() > bound {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let bytes = reader.join().expect("the screen reader ends");
    Screen {
        code,
        bytes: String::from_utf8_lossy(&bytes).into_owned(),
    }
}
