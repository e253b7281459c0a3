//! How chartseq runs helm, proven with a fake helm (a shell script) that records what it was
//! given: the argument vector, a reduced environment with `KUBECONFIG=/dev/null`, and
//! `--helm-timeout` killing a helm that never finishes.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::{chartseq, run};

/// Writes an executable script `helm` in `dir` with the given body.
pub fn fake_helm(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("helm");
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).expect("write fake helm");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// A chart directory with only `Chart.yaml`: the fake helm renders it.
pub fn chart(dir: &Path) -> PathBuf {
    let chart = dir.join("c");
    std::fs::create_dir_all(chart.join("templates")).expect("mkdir");
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    )
    .expect("Chart.yaml");
    chart
}

#[test]
fn helm_gets_arguments_and_a_reduced_environment() {
    let dir = tempfile::tempdir().expect("tempdir");
    let record = dir.path().join("record");
    std::fs::create_dir_all(&record).expect("mkdir");
    let record_text = record.to_str().expect("a UTF-8 path");
    let helm = fake_helm(
        dir.path(),
        &format!(
            "for a in \"$@\"; do printf '%s\\n' \"$a\"; done > '{record_text}/args'\n\
             env > '{record_text}/env'\n\
             printf -- '---\\n# Source: c/templates/cm.yaml\\napiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: rendered-by-fake\\n'\n"
        ),
    );
    let chart = chart(dir.path());
    let (code, out, err) = run(chartseq()
        .arg("plan")
        .arg(&chart)
        .arg("--helm")
        .arg(&helm)
        .args([
            "--kube-version",
            "1.29.3",
            "-n",
            "shop",
            "--release-name",
            "r1",
        ])
        .args(["--set", "a=b", "--set-string", "c=d"])
        .env("KUBECONFIG", dir.path().join("real-kubeconfig"))
        .env("AWS_SECRET_ACCESS_KEY", "planted-cloud-secret")
        .env("KUBERNETES_SERVICE_HOST", "10.0.0.1")
        .env("HELM_DEBUG", "kept")
        .env("XDG_CACHE_HOME", "/kept/cache"));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("ConfigMap/rendered-by-fake"), "{out}");

    let args = std::fs::read_to_string(record.join("args")).expect("helm ran");
    let args: Vec<&str> = args.lines().collect();
    // Options first, then the operands after `--`: nothing typed becomes a flag of helm's.
    assert_eq!(args[0], "template", "{args:?}");
    let end = args.len();
    assert_eq!(args[end - 3..end - 1], ["--", "r1"], "{args:?}");
    assert!(args[end - 1].ends_with("/c"), "{args:?}");
    for expected in [
        "--include-crds",
        "--namespace=shop",
        "--kube-version=1.29.3",
        "--set=a=b",
        "--set-string=c=d",
    ] {
        assert!(args.contains(&expected), "{expected} missing: {args:?}");
    }

    let env = std::fs::read_to_string(record.join("env")).expect("helm ran");
    let vars: Vec<(&str, &str)> = env.lines().filter_map(|l| l.split_once('=')).collect();
    let get = |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    assert_eq!(get("KUBECONFIG"), Some("/dev/null"), "{env}");
    assert_eq!(get("HELM_DEBUG"), Some("kept"), "{env}");
    assert_eq!(get("XDG_CACHE_HOME"), Some("/kept/cache"), "{env}");
    assert!(get("PATH").is_some(), "{env}");
    assert!(!env.contains("planted-cloud-secret"), "{env}");
    // Nothing but the allowed names reaches helm (the shell adds PWD, SHLVL and `_`).
    for (name, _) in &vars {
        assert!(
            matches!(
                *name,
                "PATH" | "HOME" | "TMPDIR" | "USER" | "LANG" | "KUBECONFIG" | "PWD" | "SHLVL" | "_"
            ) || name.starts_with("HELM_")
                || name.starts_with("XDG_"),
            "helm was given ${name}:\n{env}"
        );
    }
}

#[test]
fn a_hung_helm_is_killed_at_the_helm_timeout() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pid_file = dir.path().join("pid");
    let helm = fake_helm(
        dir.path(),
        &format!(
            "echo $$ > '{}'\nexec sleep 60\n",
            pid_file.to_str().expect("a UTF-8 path")
        ),
    );
    let chart = chart(dir.path());
    let started = Instant::now();
    let (code, out, err) = run(chartseq()
        .arg("plan")
        .arg(&chart)
        .arg("--helm")
        .arg(&helm)
        .args(["--helm-timeout", "1"]));
    let took = started.elapsed();
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("helm template did not finish within --helm-timeout 1s"),
        "{err}"
    );
    assert!(took < Duration::from_secs(20), "took {took:?}");
    let pid = std::fs::read_to_string(&pid_file).expect("helm started");
    let proc = PathBuf::from(format!("/proc/{}", pid.trim()));
    assert!(!proc.exists(), "helm (pid {}) is still running", pid.trim());
}
