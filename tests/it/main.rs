//! Integration tests: one binary, one module per area.
//!
//! Every test that runs the `chartseq` binary goes through [`chartseq`], which scrubs the
//! environment so that a developer's `KUBECONFIG`, colours or CI variables never change a
//! result. Snapshots live in the top-level `snapshots/` directory.

#![expect(
    clippy::must_use_candidate,
    reason = "test helpers are called for their values; the lint adds noise here"
)]

#[cfg(feature = "apply")]
mod cli;
#[cfg(feature = "apply")]
mod cluster;
mod dialect_argo_uninstall;
mod dialect_kapp;
mod dialect_uninstall;
mod dialect_werf;
mod dialects;
mod diff;
mod escaping;
mod helm_call;
mod hostile;
mod hostile_input;
mod integrations;
mod lint;
#[cfg(feature = "lsp")]
mod lsp;
mod matrix;
mod memory;
mod migrate;
mod migrate_proof;
mod nodrop;
mod parity;
mod paths;
mod plan;
mod pty;
mod readiness;
mod readme;
mod reference;
mod release;
mod secrets;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A path under `fixtures/`.
pub fn fixture(rel: &str) -> PathBuf {
    root().join("fixtures").join(rel)
}

/// insta settings: snapshots in `snapshots/`, no module prefix in names.
pub fn snapshot_settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root().join("snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings
}

/// A `chartseq` command with a scrubbed environment, run from the repository root.
pub fn chartseq() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_chartseq"));
    cmd.current_dir(root());
    for var in [
        "KUBECONFIG",
        "NO_COLOR",
        "CLICOLOR",
        "CLICOLOR_FORCE",
        "FORCE_COLOR",
        "CI",
        "TERM",
    ] {
        cmd.env_remove(var);
    }
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GITHUB_") {
            cmd.env_remove(key);
        }
    }
    cmd
}

/// Runs a command and returns (exit code, stdout, stderr).
pub fn run(cmd: &mut Command) -> (i32, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().expect("the chartseq binary runs");
    (
        status.code().unwrap_or(-1),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

/// A tool (`helm`, `kubectl`) named by `$CHARTSEQ_HELM` / `$CHARTSEQ_KUBECTL`. Without it the
/// calling test is skipped, unless `CHARTSEQ_REQUIRE_TOOLS=1` (as `scripts/test.sh` sets),
/// where a missing tool fails the test.
pub fn tool(name: &str) -> Option<PathBuf> {
    let var = format!("CHARTSEQ_{}", name.to_uppercase());
    let found = std::env::var_os(&var)
        .map(PathBuf::from)
        .filter(|p| Path::new(p).is_file());
    if found.is_none() {
        assert!(
            std::env::var("CHARTSEQ_REQUIRE_TOOLS").as_deref() != Ok("1"),
            "${var} must name the {name} binary (run scripts/test.sh)"
        );
        #[expect(
            clippy::print_stderr,
            reason = "a skipped test says why on the test's own stderr"
        )]
        {
            eprintln!("skipped: ${var} is not set (scripts/test.sh installs {name})");
        }
    }
    found
}

/// The release a Helm storage object (`Secret` or `ConfigMap`) holds, decoded as Helm decodes
/// it: base64, gzip, JSON (a Secret's data is base64 once more).
pub fn decode_release(kind: &str, object: &serde_json::Value) -> Option<serde_json::Value> {
    use base64::Engine as _;
    use std::io::Read as _;
    let data = object["data"]["release"].as_str()?;
    let b64 = base64::engine::general_purpose::STANDARD;
    let text = if kind == "Secret" {
        String::from_utf8(b64.decode(data).ok()?).ok()?
    } else {
        data.to_owned()
    };
    let gz = b64.decode(text).ok()?;
    let mut json = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut json)
        .ok()?;
    serde_json::from_slice(&json).ok()
}

/// Real helm against `kubeconfig` with configuration directories of its own under `home`,
/// `HELM_DRIVER` as given (empty: helm's default), and nothing from the caller's environment
/// that would point it elsewhere.
pub fn helm_command(helm: &Path, kubeconfig: &Path, home: &Path, driver: &str) -> Command {
    let mut cmd = Command::new(helm);
    cmd.arg("--kubeconfig")
        .arg(kubeconfig)
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("HELM_DATA_HOME", home.join("data"))
        .env("HELM_DRIVER", driver)
        .env_remove("KUBECONFIG")
        .env_remove("HELM_NAMESPACE")
        .env_remove("HELM_KUBECONTEXT");
    cmd
}
