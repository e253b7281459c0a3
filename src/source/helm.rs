//! Rendering a chart with the real `helm template`.
//!
//! helm is run with an argument vector (never a shell), a reduced environment and a timeout.
//! It is located through `--helm`, then `$CHARTSEQ_HELM`, then `PATH`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::source::display_path;
use crate::source::values::ValueInputs;

/// How to call `helm template`.
#[derive(Clone, Debug)]
pub struct HelmOptions {
    pub helm: Option<PathBuf>,
    pub release_name: String,
    pub namespace: Option<String>,
    pub kube_version: Option<String>,
    pub values: ValueInputs,
    pub timeout: Duration,
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
                Error::new(format!("--helm {}: no such file", display_path(path)))
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
                Error::new(format!("$CHARTSEQ_HELM={}: no such file", path.display()))
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
    Err(Error::new(
        "helm not found on PATH; chartseq renders chart directories with `helm template`",
    )
    .with_detail(INSTALL_HINT))
}

/// Runs `helm template` on a chart directory or archive; CRDs from `crds/` are always
/// included so that the plan can show the CRD phase.
pub fn render(chart: &Path, options: &HelmOptions) -> Result<Vec<u8>> {
    let helm = find_helm(options.helm.as_deref())?;
    let mut command = Command::new(&helm);
    command.arg("template").arg(&options.release_name);
    let chart_arg = if chart.is_relative() && !chart.starts_with(".") {
        Path::new(".").join(chart)
    } else {
        chart.to_path_buf()
    };
    command.arg(chart_arg).arg("--include-crds");
    if let Some(ns) = &options.namespace {
        command.arg(format!("--namespace={ns}"));
    }
    if let Some(v) = &options.kube_version {
        command.arg(format!("--kube-version={v}"));
    }
    for file in &options.values.files {
        command.arg("--values").arg(file);
    }
    for set in &options.values.set {
        command.arg(format!("--set={set}"));
    }
    for set in &options.values.set_string {
        command.arg(format!("--set-string={set}"));
    }
    reduce_environment(&mut command);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());

    let mut child = command
        .spawn()
        .map_err(|e| Error::io(format!("cannot run {}", helm.display()), &e))?;
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| Error::new("helm stdout unavailable"))?;
    let mut stderr = child
        .stderr
        .take()
        .ok_or_else(|| Error::new("helm stderr unavailable"))?;
    let out_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        stdout.read_to_end(&mut buf).map(|_| buf)
    });
    let err_thread = std::thread::spawn(move || {
        let mut buf = Vec::new();
        stderr.read_to_end(&mut buf).map(|_| buf)
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| Error::io("waiting for helm", &e))?
        {
            break status;
        }
        if started.elapsed() > options.timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Error::new(format!(
                "helm template did not finish within {}s",
                options.timeout.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = out_thread
        .join()
        .map_err(|_| Error::new("reading helm output failed"))?
        .map_err(|e| Error::io("reading helm output", &e))?;
    let err = err_thread
        .join()
        .map_err(|_| Error::new("reading helm errors failed"))?
        .map_err(|e| Error::io("reading helm errors", &e))?;
    if !status.success() {
        return Err(Error::new(format!(
            "helm template failed for {} ({status})",
            display_path(chart)
        ))
        .with_detail(String::from_utf8_lossy(&err).trim_end().to_owned()));
    }
    Ok(out)
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
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir =
        std::env::temp_dir().join(format!("chartseq-v3-probe-{}-{nanos}", std::process::id()));
    let chart = dir.join("probe");
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
    let _ = std::fs::remove_dir_all(&dir);
    answer
}
