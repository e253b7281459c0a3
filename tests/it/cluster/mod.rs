//! Deploys on a real Kubernetes control plane (`scripts/cluster.sh`: etcd, kube-apiserver,
//! kube-controller-manager, kube-scheduler from the v1.35 sources, kwok for the nodes), and
//! order proved from the API server's own audit log.
//!
//! One cluster serves the whole test binary: the one named by `$CHARTSEQ_TEST_KUBECONFIG` and
//! `$CHARTSEQ_TEST_AUDIT_LOG` (as `scripts/test.sh` starts it), else one this binary starts
//! itself and that stops when the binary exits. Every test has a namespace of its own, so tests
//! run side by side and read only their own audit events.

mod again;
mod argo_health;
mod argo_uninstall;
mod audit;
mod corpus;
mod deploy;
mod dialect_runs;
mod dialect_uninstall;
mod dialects;
mod e2e;
mod failures;
mod faults;
mod helm;
mod helm_parity;
mod limits;
mod order;
mod order_requests;
mod plugin;
mod preview;
mod readme;
mod reference;
mod reuse;
mod rollback;
mod safety;
mod storage;
mod terminal;
mod werf_namespaces;
mod werf_tracking;
mod werf_uninstall;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::{chartseq, root, run, tool};

pub use audit::Audit;

pub struct Cluster {
    pub kubeconfig: PathBuf,
    pub audit_log: PathBuf,
}

/// The test cluster, started on first use; `None` (the test is skipped, saying why) only when
/// Go is missing and `CHARTSEQ_REQUIRE_TOOLS` is not set.
pub fn cluster() -> Option<&'static Cluster> {
    static CLUSTER: OnceLock<Option<Cluster>> = OnceLock::new();
    CLUSTER.get_or_init(start).as_ref()
}

fn start() -> Option<Cluster> {
    if let (Some(kubeconfig), Some(audit_log)) = (
        std::env::var_os("CHARTSEQ_TEST_KUBECONFIG"),
        std::env::var_os("CHARTSEQ_TEST_AUDIT_LOG"),
    ) {
        return Some(Cluster {
            kubeconfig: kubeconfig.into(),
            audit_log: audit_log.into(),
        });
    }
    let go = Command::new("go").arg("version").output();
    if go.is_err() {
        assert!(
            std::env::var("CHARTSEQ_REQUIRE_TOOLS").as_deref() != Ok("1"),
            "Go is needed to build the test cluster (scripts/cluster.sh); none on PATH"
        );
        #[expect(
            clippy::print_stderr,
            reason = "a skipped test says why on the test's own stderr"
        )]
        {
            eprintln!("skipped: Go is not installed, so there is no test cluster");
        }
        return None;
    }
    let dir = root()
        .join("target/cluster")
        .join(format!("it-{}", std::process::id()));
    let out = Command::new(root().join("scripts/cluster.sh"))
        .arg("up")
        .arg(&dir)
        .env("CHARTSEQ_CLUSTER_OWNER", std::process::id().to_string())
        .output()
        .expect("scripts/cluster.sh runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scripts/cluster.sh up failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = |key: &str| -> PathBuf {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_else(|| panic!("scripts/cluster.sh printed no {key}: {stdout}"))
            .into()
    };
    Some(Cluster {
        kubeconfig: line("KUBECONFIG="),
        audit_log: line("AUDIT_LOG="),
    })
}

/// One test's namespace on the test cluster, deleted when the test ends.
pub struct Ns {
    pub name: String,
    pub cluster: &'static Cluster,
    pub kubectl: PathBuf,
    pub dir: tempfile::TempDir,
    /// Cluster-scoped objects the test made, deleted with the namespace.
    cluster_scoped: std::sync::Mutex<Vec<(String, String)>>,
}

impl Ns {
    /// A kubectl in this namespace for a thread that plays an operator the test needs (no
    /// controller runs for a custom resource here): runs `kubectl ARGS` and says whether it
    /// succeeded.
    pub fn kubectl_for_operator(&self) -> impl Fn(&[&str]) -> bool + Send + 'static {
        let (kubectl, kubeconfig, namespace) = (
            self.kubectl.clone(),
            self.cluster.kubeconfig.clone(),
            self.name.clone(),
        );
        move |args| {
            std::process::Command::new(&kubectl)
                .args(args)
                .arg("--kubeconfig")
                .arg(&kubeconfig)
                .args(["-n", &namespace])
                .env_remove("KUBECONFIG")
                .output()
                .is_ok_and(|o| o.status.success())
        }
    }

    /// A new namespace named after `test`; `None` when the test is skipped (no cluster or no
    /// kubectl, and tools are not required).
    pub fn new(test: &str) -> Option<Self> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let kubectl = tool("kubectl")?;
        let cluster = cluster()?;
        let name = format!(
            "{test}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let ns = Self {
            name,
            cluster,
            kubectl,
            dir: tempfile::tempdir().expect("a temporary directory"),
            cluster_scoped: std::sync::Mutex::new(Vec::new()),
        };
        let (code, _, err) = ns.kubectl(&["create", "namespace", &ns.name]);
        assert_eq!(code, 0, "kubectl create namespace failed: {err}");
        Some(ns)
    }

    /// `chartseq ARGS --kubeconfig … -n NS`.
    pub fn chartseq(&self, args: &[&str]) -> (i32, String, String) {
        run(&mut self.command(args))
    }

    /// The command [`Ns::chartseq`] runs, for a test to add to.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = chartseq();
        cmd.args(args)
            .arg("--kubeconfig")
            .arg(&self.cluster.kubeconfig)
            .args(["-n", &self.name]);
        cmd
    }

    /// `kubectl ARGS` in this namespace.
    pub fn kubectl(&self, args: &[&str]) -> (i32, String, String) {
        let mut cmd = Command::new(&self.kubectl);
        cmd.args(args)
            .arg("--kubeconfig")
            .arg(&self.cluster.kubeconfig)
            .args(["-n", &self.name])
            .env_remove("KUBECONFIG");
        run(&mut cmd)
    }

    /// An object as the server holds it, or `None`.
    pub fn get(&self, kind: &str, name: &str) -> Option<serde_json::Value> {
        let (code, out, _) = self.kubectl(&["get", kind, name, "-o", "json"]);
        (code == 0).then(|| serde_json::from_str(&out).expect("kubectl prints JSON"))
    }

    /// Real helm with its own configuration directories, in this namespace, with
    /// `HELM_DRIVER` as given (empty: helm's default).
    pub fn helm(
        &self,
        helm: &std::path::Path,
        driver: &str,
        args: &[&str],
    ) -> (i32, String, String) {
        let home = self.dir.path().join("helm-home");
        run(
            crate::helm_command(helm, &self.cluster.kubeconfig, &home, driver)
                .args(["-n", &self.name])
                .args(args),
        )
    }

    /// A release revision as stored: the storage object and the release JSON it holds,
    /// decoded as Helm decodes it (base64, gzip; a Secret's data is base64 once more).
    pub fn stored_release(
        &self,
        kind: &str,
        name: &str,
        revision: u32,
    ) -> Option<(serde_json::Value, serde_json::Value)> {
        let object = self.get(kind, &format!("sh.helm.release.v1.{name}.v{revision}"))?;
        let release = crate::decode_release(kind, &object)?;
        Some((object, release))
    }

    /// This namespace's events in the audit log so far (dry runs excluded).
    pub fn audit(&self) -> Audit {
        Audit::read(&self.cluster.audit_log, &self.name)
    }

    /// `chartseq apply STREAM --release RELEASE EXTRA` in this namespace.
    pub fn apply(&self, release: &str, stream: &str, extra: &[&str]) -> (i32, String, String) {
        let mut args = vec!["apply", stream, "--release", release];
        args.extend_from_slice(extra);
        self.chartseq(&args)
    }

    /// Writes an object (YAML or JSON) as another client would: a forced server-side apply
    /// by field manager `manager`, in this namespace unless the object is cluster-scoped.
    pub fn create_as(&self, manager: &str, object: &str) {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = self.file(
            &format!("foreign-{}.yaml", NEXT.fetch_add(1, Ordering::Relaxed)),
            object,
        );
        let manager = format!("--field-manager={manager}");
        ok(self.kubectl(&[
            "apply",
            "--server-side",
            "--force-conflicts",
            &manager,
            "-f",
            &path,
        ]));
    }

    /// A cluster-scoped name of this test's own (`BASE-NAMESPACE`), deleted with the
    /// namespace as `kind`.
    pub fn cluster_name(&self, kind: &str, base: &str) -> String {
        let name = format!("{base}-{}", self.name);
        self.owns(kind, &name);
        name
    }

    /// Has the cluster-scoped object `kind/name` deleted with the namespace.
    pub fn owns(&self, kind: &str, name: &str) {
        self.cluster_scoped
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((kind.to_owned(), name.to_owned()));
    }

    /// A `PersistentVolume` bound in advance to this namespace's claim `claim`, so that the
    /// claim becomes `Bound` through the real volume binder.
    pub fn volume_for(&self, claim: &str) {
        let name = self.cluster_name("persistentvolume", claim);
        self.create_as(
            "kubectl",
            &serde_json::json!({"apiVersion": "v1", "kind": "PersistentVolume",
                "metadata": {"name": name},
                "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                    "persistentVolumeReclaimPolicy": "Retain",
                    "hostPath": {"path": format!("/tmp/{name}")},
                    "claimRef": {"namespace": self.name, "name": claim}}})
            .to_string(),
        );
    }

    /// Deletes an object and waits until it is gone.
    pub fn delete(&self, kind: &str, name: &str) {
        ok(self.kubectl(&["delete", kind, name, "--wait=true"]));
    }

    /// Stores release `release`'s revision again with `status` (and `description`, when
    /// given), in the release and in the Secret's label, as a run killed or failed part way
    /// leaves it.
    pub fn set_status(
        &self,
        release: &str,
        revision: u32,
        status: &str,
        description: Option<&str>,
    ) {
        use base64::Engine as _;
        use std::io::Write as _;
        let (object, mut record) = self
            .stored_release("Secret", release, revision)
            .expect("the revision is stored");
        record["info"]["status"] = status.into();
        if let Some(description) = description {
            record["info"]["description"] = description.into();
        }
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(record.to_string().as_bytes()).expect("gzip");
        let b64 = base64::engine::general_purpose::STANDARD;
        let text = b64.encode(gz.finish().expect("gzip"));
        let mut labels = object["metadata"]["labels"].clone();
        labels["status"] = status.into();
        let name = format!("sh.helm.release.v1.{release}.v{revision}");
        let secret = serde_json::json!({"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
            "metadata": {"name": name, "labels": labels},
            "data": {"release": b64.encode(text)}});
        self.create_as("helm", &secret.to_string());
    }

    /// Writes a file into the test's directory; its path.
    pub fn file(&self, name: &str, text: &str) -> String {
        let path = self.dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("the directory is made");
        }
        std::fs::write(&path, text).expect("the file is written");
        path.to_str().expect("a UTF-8 path").to_owned()
    }
}

impl Drop for Ns {
    fn drop(&mut self) {
        let objects = std::mem::take(
            &mut *self
                .cluster_scoped
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        for (kind, name) in objects {
            let _ = self.kubectl(&["delete", &kind, &name, "--ignore-not-found", "--wait=false"]);
        }
        // Not waited for: the namespace controller empties it while other tests run.
        let _ = self.kubectl(&["delete", "namespace", &self.name, "--wait=false"]);
    }
}

/// Asserts a command succeeded; its stdout.
pub fn ok(result: (i32, String, String)) -> String {
    let (code, out, err) = result;
    assert_eq!(code, 0, "exit {code}\nstdout:\n{out}\nstderr:\n{err}");
    out
}

/// `tests/cluster/smoke.sh` on a cluster of its own: the release it claims, `OpenAPI` v3,
/// a Ready node, a `Deployment` and a `Job` brought to their status by the controllers and kwok,
/// every socket on loopback, writes audited, and nothing left after `down`.
#[test]
fn the_cluster_script_starts_a_real_control_plane_and_leaves_nothing_behind() {
    let Some(kubectl) = tool("kubectl") else {
        return;
    };
    if cluster().is_none() {
        return;
    }
    let (code, out, err) =
        run(Command::new(root().join("tests/cluster/smoke.sh")).env("CHARTSEQ_KUBECTL", kubectl));
    assert_eq!(code, 0, "{out}\n{err}");
    for line in [
        "server: \"gitVersion\": \"v1.35.",
        "node: Ready",
        "deployment: Available, 2/2 ready",
        "job: Complete",
        "all on 127.0.0.0/8",
        "down: no process left, state removed",
        "1 passed, 0 failed",
    ] {
        assert!(out.contains(line), "no `{line}` in:\n{out}");
    }
}

/// Waits, up to 90 s, until `kubectl get WHAT` finds it (an operator thread's first step: the
/// object it writes to exists).
pub fn wait_until_found(kubectl: &impl Fn(&[&str]) -> bool, what: &[&str]) {
    let started = std::time::Instant::now();
    while !kubectl(&[&["get"], what].concat())
        && started.elapsed() < std::time::Duration::from_secs(90)
    {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
