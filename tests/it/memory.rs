//! Memory bounds, proved by running the work under an address-space cap (`ulimit -v`): a run
//! that tries to hold more than the cap fails to allocate and aborts, which the tests see as a
//! crash. The caps are several times what a correct run needs, so they catch a blow-up, not
//! a slow machine.

use std::ffi::OsStr;
use std::process::Command;

/// `cmd` run under an address-space cap of `mib` MiB, with its arguments, environment and
/// directory kept.
pub fn capped(cmd: &Command, mib: u64) -> Command {
    let mut wrapped = Command::new("sh");
    wrapped
        .arg("-c")
        .arg(format!("ulimit -v {} && exec \"$0\" \"$@\"", mib * 1024))
        .arg(cmd.get_program())
        .args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        wrapped.current_dir(dir);
    }
    wrapped
}

/// This test binary re-run for one test (`name`, exact) under a cap, with `CHARTSEQ_CHILD=1`
/// so that the test does its work instead of spawning: for library calls, which have no
/// command of their own. Returns (exit code, stdout, stderr).
pub fn run_test_capped(name: &str, mib: u64) -> (i32, String, String) {
    let exe = std::env::current_exe().expect("the test binary");
    let mut cmd = Command::new(exe);
    cmd.args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env("CHARTSEQ_CHILD", "1")
        .env("RUST_BACKTRACE", "0");
    crate::run(&mut capped(&cmd, mib))
}

/// Whether this process is the capped child of [`run_test_capped`].
pub fn in_child() -> bool {
    std::env::var_os("CHARTSEQ_CHILD").as_deref() == Some(OsStr::new("1"))
}
