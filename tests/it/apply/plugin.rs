//! The helm plugin as a user meets it: installed with `helm plugin install`, started by a
//! `helm` found on PATH (so `HELM_BIN` is the bare name `helm`), with helm's own global flags
//! (-n, --kube-context, --kube-apiserver, --kubeconfig) reaching every chartseq command.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::support::{Env, start};
use crate::{fixture, root, run, tool};

/// `helm` by its bare name, with the plugin installed in its own data directory.
struct Helm {
    path: std::ffi::OsString,
    home: PathBuf,
    kubeconfig: PathBuf,
}

impl Helm {
    fn install(env: &Env, helm: &Path) -> Self {
        let dir = helm.parent().expect("helm's directory");
        let mut path = std::ffi::OsString::from(dir);
        path.push(":");
        path.push(std::env::var_os("PATH").unwrap_or_default());
        let me = Self {
            path,
            home: env.dir.path().join("plugin-home"),
            kubeconfig: env.server.kubeconfig.clone(),
        };
        let (code, out, err) = run(me.cmd().args(["plugin", "install"]).arg(root()));
        assert_eq!(code, 0, "{out}{err}");
        me
    }

    fn cmd(&self) -> Command {
        let mut cmd = Command::new("helm");
        cmd.current_dir(root())
            .env("PATH", &self.path)
            .env("HELM_DATA_HOME", self.home.join("data"))
            .env("HELM_PLUGINS", self.home.join("data").join("plugins"))
            .env("HELM_CONFIG_HOME", self.home.join("config"))
            .env("HELM_CACHE_HOME", self.home.join("cache"))
            .env("CHARTSEQ_BIN", env!("CARGO_BIN_EXE_chartseq"))
            .env("KUBECONFIG", &self.kubeconfig);
        for var in [
            "HELM_NAMESPACE",
            "HELM_KUBECONTEXT",
            "HELM_DRIVER",
            "CHARTSEQ_HELM",
        ] {
            cmd.env_remove(var);
        }
        cmd
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        run(self.cmd().args(args))
    }
}

#[test]
fn helm_chartseq_acts_where_helm_flags_point() {
    let Some(helm) = tool("helm") else { return };
    let env = start("");
    let stream = fixture("apply/hooks.yaml");
    let stream = stream.to_str().expect("UTF-8");
    for ns in ["default", "shopns"] {
        let (code, _, err) = env.run(&["apply", "shop", stream, "-n", ns, "--create-namespace"]);
        assert_eq!(code, 0, "{err}");
    }
    let h = Helm::install(&env, &helm);

    // helm takes -n for itself; the plugin hands it on: only shopns's release goes.
    let (code, out, err) = h.run(&["chartseq", "uninstall", "shop", "-n", "shopns"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("release shop uninstalled"), "{out}");
    assert!(
        env.server
            .server
            .object("ConfigMap", Some("shopns"), "app")
            .is_none()
    );
    assert!(
        env.server
            .server
            .object("ConfigMap", Some("default"), "app")
            .is_some()
    );
    let (code, _, err) = env.run(&["status", "shop", "-n", "default"]);
    assert_eq!(code, 0, "the default namespace's release stays: {err}");
    let (code, _, _) = env.run(&["status", "shop", "-n", "shopns"]);
    assert_eq!(code, 2);

    // --kube-context reaches chartseq.
    let (code, _, err) = h.run(&["--kube-context", "nope", "chartseq", "status", "shop"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nope"), "{err}");

    // --kube-apiserver overrides a kubeconfig that points nowhere.
    let dead = env.dir.path().join("dead.kubeconfig");
    let text = std::fs::read_to_string(&env.server.kubeconfig)
        .expect("the kubeconfig reads")
        .replace(&env.server.addr.to_string(), "127.0.0.1:9");
    std::fs::write(&dead, text).expect("written");
    let (code, out, err) = h.run(&[
        "--kubeconfig",
        dead.to_str().expect("UTF-8"),
        "--kube-apiserver",
        &format!("http://{}", env.server.addr),
        "chartseq",
        "list",
        "-A",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("shop") && l.contains("default")),
        "{out}"
    );
    // Without it, the dead address is named.
    let (code, _, err) = h.run(&[
        "--kubeconfig",
        dead.to_str().expect("UTF-8"),
        "chartseq",
        "list",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("cannot reach the Kubernetes API server at http://127.0.0.1:9"),
        "{err}"
    );

    // HELM_BIN is the bare `helm`: charts still render with it, and apply takes NAME CHART.
    let chart = fixture("apply/interop");
    let chart = chart.to_str().expect("UTF-8");
    let (code, out, err) = h.run(&["chartseq", "template", chart, "--set", "greeting=hey"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("greeting: \"hey\""), "{out}");
    let (code, out, err) = h.run(&["chartseq", "apply", "web", chart, "-n", "shopns"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        env.server
            .server
            .object("ConfigMap", Some("shopns"), "web-db")
            .is_some()
    );
    // ... and helm itself sees that release where the plugin put it.
    let (code, out, _) = h.run(&["list", "-n", "shopns"]);
    assert_eq!(code, 0);
    assert!(
        out.lines()
            .any(|l| l.starts_with("web") && l.contains("interop-0.2.0")),
        "{out}"
    );
}
