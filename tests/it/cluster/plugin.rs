//! The helm plugin as a user meets it, on the real control plane: installed with `helm plugin install`, started by a
//! `helm` found on PATH (so `HELM_BIN` is the bare name `helm`), with helm's own global flags
//! (-n, --kube-context, --kube-apiserver, --kubeconfig) reaching every chartseq command.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{Ns, ok};
use crate::{chartseq, fixture, root, run, tool};

/// `helm` by its bare name, with the plugin installed in its own data directory.
struct Helm {
    path: std::ffi::OsString,
    home: PathBuf,
    kubeconfig: PathBuf,
}

impl Helm {
    fn install(env: &Ns, helm: &Path) -> Self {
        let dir = helm.parent().expect("helm's directory");
        let mut path = std::ffi::OsString::from(dir);
        path.push(":");
        path.push(std::env::var_os("PATH").unwrap_or_default());
        let me = Self {
            path,
            home: env.dir.path().join("plugin-home"),
            kubeconfig: env.cluster.kubeconfig.clone(),
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

/// `chartseq ARGS --kubeconfig TEST-CLUSTER` (the namespace in ARGS).
fn cs(env: &Ns, args: &[&str]) -> (i32, String, String) {
    run(chartseq()
        .args(args)
        .arg("--kubeconfig")
        .arg(&env.cluster.kubeconfig))
}

#[test]
fn helm_chartseq_acts_where_helm_flags_point() {
    let Some(helm) = tool("helm") else { return };
    let Some(env) = Ns::new("plugin") else { return };
    let first = env.name.clone();
    let shopns = env.cluster_name("namespace", "shopns");
    let stream = fixture("apply/hooks.yaml");
    let stream = stream.to_str().expect("UTF-8");
    for ns in [first.as_str(), shopns.as_str()] {
        ok(cs(
            &env,
            &["apply", "shop", stream, "-n", ns, "--create-namespace"],
        ));
    }
    let h = Helm::install(&env, &helm);

    // helm takes -n for itself; the plugin hands it on: only shopns's release goes.
    let (code, out, err) = h.run(&["chartseq", "uninstall", "shop", "-n", &shopns]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("release shop uninstalled"), "{out}");
    // kubectl in namespace `ns` (Ns::kubectl names the test's own).
    let get = |ns: &str, name: &str| {
        run(Command::new(&env.kubectl)
            .args(["get", "configmap", name, "-n", ns, "--kubeconfig"])
            .arg(&env.cluster.kubeconfig)
            .env_remove("KUBECONFIG"))
        .0 == 0
    };
    assert!(!get(&shopns, "app"));
    assert!(get(&first, "app"));
    let (code, _, err) = cs(&env, &["status", "shop", "-n", &first]);
    assert_eq!(code, 0, "the first namespace's release stays: {err}");
    let (code, _, _) = cs(&env, &["status", "shop", "-n", &shopns]);
    assert_eq!(code, 2);

    // --kube-context reaches chartseq.
    let (code, _, err) = h.run(&["--kube-context", "nope", "chartseq", "status", "shop"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nope"), "{err}");

    // --kube-apiserver overrides a kubeconfig that points nowhere (its certificates stay).
    let text = std::fs::read_to_string(&env.cluster.kubeconfig).expect("the kubeconfig reads");
    let server = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("server: "))
        .expect("a server")
        .trim()
        .to_owned();
    let dead = env.dir.path().join("dead.kubeconfig");
    std::fs::write(&dead, text.replace(&server, "https://127.0.0.1:9")).expect("written");
    let (code, out, err) = h.run(&[
        "--kubeconfig",
        dead.to_str().expect("UTF-8"),
        "--kube-apiserver",
        &server,
        "chartseq",
        "list",
        "-A",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("shop") && l.contains(first.as_str())),
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
        err.contains("cannot reach the Kubernetes API server at https://127.0.0.1:9"),
        "{err}"
    );

    // HELM_BIN is the bare `helm`: charts still render with it, and apply takes NAME CHART.
    let chart = fixture("apply/interop");
    let chart = chart.to_str().expect("UTF-8");
    let (code, out, err) = h.run(&["chartseq", "template", chart, "--set", "greeting=hey"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("greeting: \"hey\""), "{out}");
    let (code, out, err) = h.run(&["chartseq", "apply", "web", chart, "-n", &shopns]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(get(&shopns, "web-db"));
    // ... and helm itself sees that release where the plugin put it.
    let (code, out, _) = h.run(&["list", "-n", &shopns]);
    assert_eq!(code, 0);
    assert!(
        out.lines()
            .any(|l| l.starts_with("web") && l.contains("interop-0.2.0")),
        "{out}"
    );
}
