//! Faults on the real control plane: chartseq talks to the API server through
//! `tests/cluster/cmd/faultproxy` (built by `scripts/cluster.sh`), which answers some requests
//! with 503 and 429, cuts watches part way and adds latency, on a schedule each test sets; the
//! release must come out as it would without them, nothing lost. The proxy also says which
//! reads and watches it forwarded, so the tests see how chartseq lists, watches and resumes.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use super::{Ns, ok};
use crate::{chartseq, fixture, root, run};

/// A running fault proxy in front of the test cluster, stopped when dropped.
pub struct Proxy {
    child: Child,
    addr: String,
    kubeconfig: PathBuf,
}

/// The value of `key: VALUE` in the test cluster's kubeconfig (written by
/// `scripts/cluster.sh`, one such key a line).
fn kubeconfig_value(text: &str, key: &str) -> String {
    text.lines()
        .find_map(|l| l.trim().strip_prefix(&format!("{key}: ")))
        .unwrap_or_else(|| panic!("no {key} in the test kubeconfig"))
        .trim()
        .to_owned()
}

impl Proxy {
    /// Starts the proxy with `flags` (`-fail-every N`, `-cut-watches D`, `-latency D`) and
    /// writes a kubeconfig that points at it.
    pub fn start(ns: &Ns, flags: &[&str]) -> Self {
        let bin = root().join("target/cluster/bin/faultproxy");
        if !bin.is_file() {
            ok(run(
                Command::new(root().join("scripts/cluster.sh")).arg("build")
            ));
        }
        let text = std::fs::read_to_string(&ns.cluster.kubeconfig).expect("the kubeconfig");
        let mut child = Command::new(&bin)
            .args(["-upstream", &kubeconfig_value(&text, "server")])
            .args(["-ca", &kubeconfig_value(&text, "certificate-authority")])
            .args(["-cert", &kubeconfig_value(&text, "client-certificate")])
            .args(["-key", &kubeconfig_value(&text, "client-key")])
            .args(flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the fault proxy starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("its stdout"))
            .read_line(&mut line)
            .expect("the proxy prints its address");
        let addr = line.trim().to_owned();
        assert!(!addr.is_empty(), "the fault proxy printed no address");
        let kubeconfig = ns.dir.path().join("proxy-kubeconfig");
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: proxy\n  cluster: {{server: 'http://{addr}'}}\ncontexts:\n- name: proxy\n  context: {{cluster: proxy, user: proxy}}\ncurrent-context: proxy\nusers:\n- name: proxy\n  user: {{}}\n"
            ),
        )
        .expect("the kubeconfig is written");
        Self {
            child,
            addr,
            kubeconfig,
        }
    }

    /// `chartseq ARGS --kubeconfig PROXY -n NS`.
    pub fn chartseq(&self, ns: &Ns, args: &[&str]) -> (i32, String, String) {
        run(chartseq()
            .args(args)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(["-n", &ns.name]))
    }

    /// The kubeconfig that points at the proxy.
    pub fn kubeconfig(&self) -> &str {
        self.kubeconfig.to_str().expect("a UTF-8 path")
    }

    /// What the proxy injected and forwarded so far.
    pub fn stats(&self) -> Value {
        let mut stream = std::net::TcpStream::connect(&self.addr).expect("the proxy accepts");
        write!(
            stream,
            "GET /faultproxy/stats HTTP/1.0\r\nHost: {}\r\n\r\n",
            self.addr
        )
        .expect("the request is sent");
        let mut response = String::new();
        stream
            .read_to_string(&mut response)
            .expect("the response is read");
        let body = response.split("\r\n\r\n").nth(1).unwrap_or_default();
        serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {response}"))
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn count(stats: &Value, key: &str) -> u64 {
    stats[key].as_u64().unwrap_or(0)
}

/// The collections listed (a GET of a namespaced collection without a label selector; the
/// release storage lists by label), by path, and how often.
fn lists(stats: &Value) -> BTreeMap<String, usize> {
    let mut by_path = BTreeMap::new();
    for read in stats["reads"].as_array().into_iter().flatten() {
        let read = read.as_str().unwrap_or_default();
        let (path, query) = read.split_once('?').unwrap_or((read, ""));
        let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let collection = matches!(
            segments.as_slice(),
            ["api", _, "namespaces", _, _] | ["apis", _, _, "namespaces", _, _]
        );
        if collection && !query.contains("labelSelector") {
            *by_path.entry(path.to_owned()).or_default() += 1;
        }
    }
    by_path
}

/// The watches, by path, each path's in the order they started.
fn watches(stats: &Value) -> BTreeMap<String, Vec<Value>> {
    let mut by_path: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for w in stats["watches"].as_array().into_iter().flatten() {
        by_path
            .entry(w["path"].as_str().unwrap_or_default().to_owned())
            .or_default()
            .push(w.clone());
    }
    by_path
}

fn shop() -> String {
    fixture("cluster/shop.yaml")
        .to_str()
        .expect("UTF-8")
        .to_owned()
}

#[test]
fn a_release_survives_server_errors_rate_limits_cut_watches_and_latency() {
    let Some(ns) = Ns::new("faults") else { return };
    // Every fifth request that is not a watch fails (503, then 429 with Retry-After), every
    // watch is cut after 400 ms while db takes 2 s and queue 1 s, and each request is 20 ms
    // slower.
    let proxy = Proxy::start(
        &ns,
        &[
            "-fail-every",
            "5",
            "-cut-watches",
            "400ms",
            "-latency",
            "20ms",
        ],
    );
    let out = ok(proxy.chartseq(
        &ns,
        &["apply", &shop(), "--release", "shop", "--timeout", "3m"],
    ));
    assert!(
        out.contains("release shop applied: revision 1, status deployed"),
        "{out}"
    );
    let stats = proxy.stats();
    assert!(
        count(&stats, "answered_503") > 0
            && count(&stats, "answered_429") > 0
            && count(&stats, "watches_cut") > 0,
        "faults were injected: {stats}"
    );
    // Nothing lost: every object is there, and every wait held on the server's clock.
    for (kind, name) in [
        ("statefulset", "db"),
        ("configmap", "db-config"),
        ("deployment", "queue"),
        ("deployment", "app"),
        ("service", "web"),
    ] {
        assert!(ns.get(kind, name).is_some(), "{kind}/{name}");
    }
    let steps = super::order::plan(&shop(), &[]);
    assert_eq!(super::order::assert_waits_held(&ns, &steps), 4);
    let (_, release) = ns.stored_release("Secret", "shop", 1).expect("recorded");
    assert_eq!(release["info"]["status"], "deployed");
    // And back out, through the same faults.
    ok(proxy.chartseq(&ns, &["uninstall", "shop", "--timeout", "3m"]));
    for (kind, name) in [
        ("statefulset", "db"),
        ("deployment", "app"),
        ("service", "web"),
    ] {
        assert!(ns.get(kind, name).is_none(), "{kind}/{name} left");
    }
}

/// A group of two `Deployment`s and a `ConfigMap`, a `ConfigMap` in a second namespace after
/// them, then a `ConfigMap` and a `Service`: three kinds, two namespaces for one of them.
fn watched(second: &str, a_delay: &str, b_delay: &str) -> String {
    format!(
        "---
# Source: watched/templates/a.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: a
  annotations:
    helm.sh/resource-group: first
spec:
  selector: {{matchLabels: {{app: a}}}}
  template:
    metadata:
      labels: {{app: a}}
      annotations: {{pod-ready.stage.kwok.x-k8s.io/delay: {a_delay}}}
    spec:
      containers: [{{name: a, image: a:1}}]
---
# Source: watched/templates/b.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: b
  annotations:
    helm.sh/resource-group: first
spec:
  selector: {{matchLabels: {{app: b}}}}
  template:
    metadata:
      labels: {{app: b}}
      annotations: {{pod-ready.stage.kwok.x-k8s.io/delay: {b_delay}}}
    spec:
      containers: [{{name: b, image: b:1}}]
---
# Source: watched/templates/settings.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  annotations:
    helm.sh/resource-group: first
data: {{a: \"1\"}}
---
# Source: watched/templates/public.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: public
  namespace: {second}
  annotations:
    helm.sh/resource-group: second
    helm.sh/depends-on/resource-groups: '[\"first\"]'
data: {{b: \"2\"}}
---
# Source: watched/templates/web.yaml
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {{app: a}}
  ports: [{{port: 80}}]
---
# Source: watched/templates/late.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: late
data: {{c: \"3\"}}
"
    )
}

/// A second namespace for the stream's cross-namespace object.
fn second_namespace(ns: &Ns) -> String {
    let second = ns.cluster_name("namespace", "second");
    ok(ns.kubectl(&["create", "namespace", &second]));
    second
}

#[test]
fn one_list_and_one_watch_per_kind_and_namespace_for_the_whole_run() {
    let Some(ns) = Ns::new("watches") else { return };
    let second = second_namespace(&ns);
    // No faults: the proxy only records.
    let proxy = Proxy::start(&ns, &[]);
    let stream = ns.file("watched.yaml", &watched(&second, "500ms", "300ms"));
    ok(proxy.chartseq(
        &ns,
        &["apply", &stream, "--release", "shop", "--timeout", "1m"],
    ));
    let stats = proxy.stats();
    let n = &ns.name;
    let expected: BTreeMap<String, usize> = [
        format!("/api/v1/namespaces/{n}/configmaps"),
        format!("/api/v1/namespaces/{n}/services"),
        format!("/api/v1/namespaces/{second}/configmaps"),
        format!("/apis/apps/v1/namespaces/{n}/deployments"),
    ]
    .into_iter()
    .map(|p| (p, 1))
    .collect();
    let counts: BTreeMap<String, usize> = watches(&stats)
        .into_iter()
        .map(|(path, w)| (path, w.len()))
        .collect();
    assert_eq!(counts, expected, "{stats:#}");
    assert_eq!(lists(&stats), expected, "{stats:#}");
    // Every watch starts where its list left off, not from the beginning of time.
    for w in watches(&stats).values().flatten() {
        assert!(
            w["from"]
                .as_str()
                .is_some_and(|v| v.parse::<u64>().is_ok_and(|v| v > 0)),
            "{w}"
        );
    }
}

#[test]
fn a_cut_watch_resumes_from_the_last_resource_version_it_delivered() {
    let Some(ns) = Ns::new("resume") else { return };
    let second = second_namespace(&ns);
    // Watches are cut every 300 ms while the Deployments take 2 s and 1.5 s to become ready.
    let proxy = Proxy::start(&ns, &["-cut-watches", "300ms"]);
    let stream = ns.file("watched.yaml", &watched(&second, "2s", "1500ms"));
    ok(proxy.chartseq(
        &ns,
        &["apply", &stream, "--release", "shop", "--timeout", "1m"],
    ));
    let stats = proxy.stats();
    let by_path = watches(&stats);
    let mut resumed_after_events = 0;
    for (path, chain) in &by_path {
        for pair in chain.windows(2) {
            let (before, after) = (&pair[0], &pair[1]);
            let last = before["last"].as_str().unwrap_or_default();
            let expected = if last.is_empty() {
                before["from"].clone()
            } else {
                resumed_after_events += 1;
                Value::from(last)
            };
            assert_eq!(
                after["from"], expected,
                "{path}: the next watch starts after the last event the cut one delivered\n{chain:#?}"
            );
        }
    }
    let deployments = &by_path[&format!("/apis/apps/v1/namespaces/{}/deployments", ns.name)];
    assert!(
        deployments.len() >= 4,
        "the Deployments' watch was cut and resumed several times: {deployments:#?}"
    );
    assert!(
        resumed_after_events > 0,
        "some watch delivered events before it was cut: {by_path:#?}"
    );
    // Resuming never lists again.
    for (path, count) in lists(&stats) {
        assert_eq!(count, 1, "{path} was listed again: {stats:#}");
    }
}
