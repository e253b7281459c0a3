//! Rendering a chart with the real `helm template`.
//!
//! helm is run with an argument vector (never a shell), a reduced environment and a timeout.
//! It is located through `--helm`, then `$CHARTSEQ_HELM`, then `PATH`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::source::values::ValueInputs;
use crate::source::{display_path, read};

/// How to call `helm template`.
#[derive(Clone, Debug)]
pub struct HelmOptions {
    pub helm: Option<PathBuf>,
    pub release_name: String,
    pub namespace: Option<String>,
    pub kube_version: Option<String>,
    pub values: ValueInputs,
    pub timeout: Duration,
    /// Bytes helm's output (the rendered stream) may have.
    pub max_output_bytes: u64,
    /// Set, a running render is stopped (its helm killed) and fails as cancelled: the
    /// language server's render that a newer edit made stale. Never set by the CLI.
    pub cancel: read::Cancel,
}

impl Default for HelmOptions {
    fn default() -> Self {
        Self {
            helm: None,
            release_name: "release-name".into(),
            namespace: None,
            kube_version: None,
            values: ValueInputs::default(),
            timeout: Duration::from_secs(300),
            max_output_bytes: read::MAX_INPUT_BYTES,
            cancel: read::Cancel::default(),
        }
    }
}

const INSTALL_HINT: &str = "install helm (https://helm.sh/docs/intro/install/), point --helm or $CHARTSEQ_HELM at it, \
or render the chart yourself and pipe it in:\n  helm template RELEASE ./chart | chartseq <command> - --chart ./chart";

/// Finds the helm binary.
pub fn find_helm(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(path) = explicit {
        return if path.is_file() {
            Ok(path.to_path_buf())
        } else {
            Err(
                Error::usage(format!("--helm {}: no such file", display_path(path)))
                    .with_detail(INSTALL_HINT),
            )
        };
    }
    if let Some(path) = std::env::var_os("CHARTSEQ_HELM").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(
                Error::usage(format!("$CHARTSEQ_HELM={}: no such file", path.display()))
                    .with_detail(INSTALL_HINT),
            )
        };
    }
    if let Some(paths) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&paths) {
            let candidate = dir.join("helm");
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(Error::program(
        "helm not found on PATH; chartseq renders chart directories with `helm template`",
    )
    .with_detail(INSTALL_HINT))
}

/// Runs `helm template` on a chart directory or archive; CRDs from `crds/` are always
/// included so that the plan can show the CRD phase.
pub fn render(chart: &Path, options: &HelmOptions) -> Result<Vec<u8>> {
    let helm = find_helm(options.helm.as_deref())?;
    validate_release_name(&options.release_name)?;
    let mut command = Command::new(&helm);
    command.arg("template").arg("--include-crds");
    // Every value is glued to its flag (`--values=FILE`), and the operands come after `--`:
    // nothing the user typed can become a flag of helm's.
    if let Some(ns) = &options.namespace {
        command.arg(format!("--namespace={ns}"));
    }
    if let Some(v) = &options.kube_version {
        command.arg(format!("--kube-version={v}"));
    }
    // Values reused from a release go first, under everything the user gives; the file lives
    // until helm is done.
    let reused = options
        .values
        .reused_layer()
        .map(|layer| -> Result<_> {
            let dir = crate::source::temp::TempDir::new("chartseq-values")?;
            let path = dir.path().join("reused-values.yaml");
            let text = serde_json::to_string(&layer)
                .map_err(|e| Error::new(format!("cannot write the reused values: {e}")))?;
            std::fs::write(&path, text)
                .map_err(|e| Error::io(format!("cannot write {}", path.display()), e))?;
            Ok((dir, path))
        })
        .transpose()?;
    if let Some((_, path)) = &reused {
        let mut arg = std::ffi::OsString::from("--values=");
        arg.push(path);
        command.arg(arg);
    }
    for file in &options.values.files {
        let mut arg = std::ffi::OsString::from("--values=");
        arg.push(file);
        command.arg(arg);
    }
    for set in &options.values.set {
        command.arg(format!("--set={set}"));
    }
    for set in &options.values.set_string {
        command.arg(format!("--set-string={set}"));
    }
    let chart_arg = if chart.is_relative() && !chart.starts_with(".") {
        Path::new(".").join(chart)
    } else {
        chart.to_path_buf()
    };
    command.arg("--").arg(&options.release_name).arg(chart_arg);
    reduce_environment(&mut command);
    let captured = match read::run_until(
        &mut command,
        options.max_output_bytes,
        Some(options.timeout),
        &options.cancel,
    )
    .map_err(|e| Error::io(format!("cannot run {}", helm.display()), e))?
    {
        read::Ended::Finished(captured) => captured,
        read::Ended::TimedOut => {
            return Err(Error::program(format!(
                "helm template did not finish within --helm-timeout {}",
                crate::duration::go_duration(options.timeout)
            )));
        }
        read::Ended::Cancelled => {
            return Err(Error::program(format!(
                "helm template for {} was cancelled",
                display_path(chart)
            )));
        }
    };
    let what = format!("the output of helm template for {}", display_path(chart));
    let out = captured.stdout.map_err(|e| {
        e.describe(
            &what,
            read::Cap {
                limit: options.max_output_bytes,
                raise: Some("--max-input-bytes"),
            },
        )
    })?;
    // helm's messages past the cap are cut, not fatal: the exit status says what happened.
    let err = match captured.stderr {
        Ok(bytes) => bytes,
        Err(read::ReadError::TooBig(_)) => b"(more than 1 MiB of errors)".to_vec(),
        Err(e) => {
            return Err(e.describe(
                "the errors of helm template",
                read::Cap {
                    limit: read::MAX_STDERR_BYTES,
                    raise: None,
                },
            ));
        }
    };
    let status = captured.status;
    if !status.success() {
        let stderr = String::from_utf8_lossy(&err).trim_end().to_owned();
        return Err(Error::render(
            status,
            crate::error::RenderFailure {
                chart: chart.to_path_buf(),
                stderr,
            },
        ));
    }
    Ok(out)
}

/// Longest release name helm accepts (`maxReleaseNameLen` in Helm's chart utilities).
pub const MAX_RELEASE_NAME: usize = 53;

/// Helm's release-name rule (`ValidateReleaseName`): at most 53 characters, dot-separated
/// labels of lowercase letters, digits and `-`, each starting and ending with a letter or
/// digit. Checked before helm runs, so a name is never taken for something else.
pub fn validate_release_name(name: &str) -> Result<()> {
    let label_ok = |label: &str| {
        let bytes = label.as_bytes();
        let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
        bytes.first().is_some_and(alnum)
            && bytes.last().is_some_and(alnum)
            && bytes.iter().all(|b| alnum(b) || *b == b'-')
    };
    if name.is_empty() || name.len() > MAX_RELEASE_NAME || !name.split('.').all(label_ok) {
        return Err(Error::usage(format!(
            "invalid release name {name:?}: helm accepts at most {MAX_RELEASE_NAME} characters, dot-separated labels of lowercase letters, digits and `-`, each starting and ending with a letter or digit"
        )));
    }
    Ok(())
}

/// helm's environment: only what it needs (`PATH`, `HOME`, `TMPDIR`, `HELM_*`, `XDG_*`), and
/// never a cluster.
fn reduce_environment(command: &mut Command) {
    command.env_clear();
    for (key, value) in std::env::vars_os() {
        let key_text = key.to_string_lossy();
        if matches!(
            key_text.as_ref(),
            "PATH" | "HOME" | "TMPDIR" | "USER" | "LANG"
        ) || key_text.starts_with("HELM_")
            || key_text.starts_with("XDG_")
        {
            command.env(&key, &value);
        }
    }
    // helm template never needs a cluster; make sure it cannot reach one.
    command.env("KUBECONFIG", "/dev/null");
}

/// Whether a helm renders charts with `apiVersion: v3` (released helm up to v4.1.4 refuses
/// them: "invalid chart apiVersion").
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum ChartV3 {
    /// This helm (its version) renders v3 charts.
    Accepted(String),
    /// This helm (its version) refuses v3 charts.
    Refused(String),
    /// No helm was asked (the input was rendered elsewhere) or it could not be run.
    #[default]
    Unknown,
}

/// Asks the helm that `render` would run whether it accepts `apiVersion: v3` charts, by
/// rendering an empty v3 chart in a temporary directory (removed afterwards). Asked once per
/// helm binary and process.
#[must_use]
pub fn chart_v3(explicit: Option<&Path>) -> ChartV3 {
    static CACHE: std::sync::Mutex<Vec<(PathBuf, ChartV3)>> = std::sync::Mutex::new(Vec::new());
    let Ok(helm) = find_helm(explicit) else {
        return ChartV3::Unknown;
    };
    let Ok(mut cache) = CACHE.lock() else {
        return ChartV3::Unknown;
    };
    if let Some((_, known)) = cache.iter().find(|(p, _)| *p == helm) {
        return known.clone();
    }
    let answer = probe_chart_v3(&helm);
    cache.push((helm, answer.clone()));
    answer
}

fn probe_chart_v3(helm: &Path) -> ChartV3 {
    let mut version = Command::new(helm);
    version.args(["version", "--template", "{{.Version}}"]);
    reduce_environment(&mut version);
    let version = match version.stdin(Stdio::null()).stderr(Stdio::null()).output() {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        _ => return ChartV3::Unknown,
    };
    let Ok(dir) = crate::source::temp::TempDir::new("chartseq-v3-probe") else {
        return ChartV3::Unknown;
    };
    let chart = dir.path().join("probe");
    let written = std::fs::create_dir_all(&chart).and_then(|()| {
        std::fs::write(
            chart.join("Chart.yaml"),
            "apiVersion: v3\nname: probe\nversion: 0.1.0\n",
        )
    });
    let answer = if written.is_ok() {
        let mut template = Command::new(helm);
        template.arg("template").arg("probe").arg(&chart);
        reduce_environment(&mut template);
        match template
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
        {
            Ok(status) if status.success() => ChartV3::Accepted(version),
            Ok(_) => ChartV3::Refused(version),
            Err(_) => ChartV3::Unknown,
        }
    } else {
        ChartV3::Unknown
    };
    drop(dir);
    answer
}

#[cfg(test)]
mod tests {
    use super::validate_release_name;

    #[test]
    fn release_names_follow_helms_rule() {
        for good in ["release-name", "a", "web.v2", "a1-b2", &"x".repeat(53)] {
            assert!(validate_release_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "--output-dir=/tmp/x",
            "-a",
            "a-",
            "A",
            "a..b",
            ".a",
            "a_b",
            "a b",
            &"x".repeat(54),
        ] {
            assert!(validate_release_name(bad).is_err(), "{bad}");
        }
    }
}
