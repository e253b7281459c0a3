//! Readiness watches as the test API server saw them: one list and one watch per kind and
//! namespace for a whole run, and a dropped watch resumed from the last resourceVersion it
//! delivered, never relisted.

use std::collections::BTreeMap;

use super::apiserver::RequestEntry;
use super::support::{Env, start};

/// A group of two `Deployment`s and a `ConfigMap`, a `ConfigMap` in another namespace after
/// them, then a `ConfigMap` and a `Service`: three kinds, two namespaces for one of them.
const STREAM: &str = "---
# Source: watched/templates/a.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: a
  annotations:
    helm.sh/resource-group: first
spec:
  selector: {matchLabels: {app: a}}
  template:
    metadata: {labels: {app: a}}
    spec:
      containers: [{name: a, image: a:1}]
---
# Source: watched/templates/b.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: b
  annotations:
    helm.sh/resource-group: first
spec:
  selector: {matchLabels: {app: b}}
  template:
    metadata: {labels: {app: b}}
    spec:
      containers: [{name: b, image: b:1}]
---
# Source: watched/templates/settings.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  annotations:
    helm.sh/resource-group: first
data: {a: \"1\"}
---
# Source: watched/templates/public.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: public
  namespace: kube-public
  annotations:
    helm.sh/resource-group: second
    helm.sh/depends-on/resource-groups: '[\"first\"]'
data: {b: \"2\"}
---
# Source: watched/templates/web.yaml
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: a}
  ports: [{port: 80}]
---
# Source: watched/templates/late.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: late
data: {c: \"3\"}
";

fn apply(env: &Env, scenario_note: &str) {
    let stream = env.stream("watched.yaml", STREAM);
    let (code, out, err) = env.run(&["apply", &stream, "--release", "shop", "-n", "default"]);
    assert_eq!(code, 0, "{scenario_note}\n{out}\n{err}");
}

/// Watches by path, each path's in arrival order.
fn watches(requests: &[RequestEntry]) -> BTreeMap<String, Vec<RequestEntry>> {
    let mut by_path: BTreeMap<String, Vec<RequestEntry>> = BTreeMap::new();
    for r in requests.iter().filter(|r| r.watch) {
        by_path.entry(r.path.clone()).or_default().push(r.clone());
    }
    by_path
}

/// How often each collection was listed without a selector (discovery is no list; the release
/// storage lists by label).
fn lists(requests: &[RequestEntry]) -> BTreeMap<String, usize> {
    let mut by_path = BTreeMap::new();
    for r in requests.iter().filter(|r| {
        r.method == "GET"
            && !r.watch
            && r.kind.is_some()
            && r.name.is_none()
            && !r.query.contains_key("labelSelector")
    }) {
        *by_path.entry(r.path.clone()).or_default() += 1;
    }
    by_path
}

#[test]
fn one_list_and_one_watch_per_kind_and_namespace_for_the_whole_run() {
    let env = start("defaultDelayMs: 40\n");
    apply(&env, "no faults");
    let requests = env.requests();
    let counts: BTreeMap<String, usize> = watches(&requests)
        .into_iter()
        .map(|(path, w)| (path, w.len()))
        .collect();
    let expected: BTreeMap<String, usize> = [
        "/api/v1/namespaces/default/configmaps",
        "/api/v1/namespaces/default/services",
        "/api/v1/namespaces/kube-public/configmaps",
        "/apis/apps/v1/namespaces/default/deployments",
    ]
    .into_iter()
    .map(|p| (p.to_owned(), 1))
    .collect();
    assert_eq!(counts, expected, "{requests:#?}");
    assert_eq!(lists(&requests), expected, "{requests:#?}");
    // Every watch starts where its list left off, not from the beginning of time.
    for w in watches(&requests).values().flatten() {
        assert!(
            w.query
                .get("resourceVersion")
                .is_some_and(|v| v.parse::<u64>().is_ok_and(|v| v > 0)),
            "{w:#?}"
        );
    }
}

#[test]
fn a_dropped_watch_resumes_from_the_last_resource_version_it_delivered() {
    // Watches are cut every 100 ms while the Deployments take 700 ms to become ready.
    let env = start(
        "defaultDelayMs: 40\nresources:\n- {kind: Deployment, name: a, readyAfterMs: 700}\n- {kind: Deployment, name: b, readyAfterMs: 450}\nfaults: {watchDropMs: 100}\n",
    );
    apply(&env, "watches dropped every 100 ms");
    let requests = env.requests();
    let by_path = watches(&requests);
    let mut resumed_after_events = 0;
    for (path, chain) in &by_path {
        for pair in chain.windows(2) {
            let (before, after) = (&pair[0], &pair[1]);
            let from = before.query.get("resourceVersion").cloned();
            let expected = before.last_event_rv.map(|v| v.to_string()).or(from);
            assert_eq!(
                after.query.get("resourceVersion"),
                expected.as_ref(),
                "{path}: the next watch starts after the last event the dropped one delivered\n{chain:#?}"
            );
            if before.last_event_rv.is_some() {
                resumed_after_events += 1;
            }
        }
    }
    let deployments = &by_path["/apis/apps/v1/namespaces/default/deployments"];
    assert!(
        deployments.len() >= 4,
        "the Deployments' watch was dropped and resumed several times: {deployments:#?}"
    );
    assert!(
        resumed_after_events > 0,
        "some watch delivered events before it was cut: {by_path:#?}"
    );
    // Resuming never lists again.
    for (path, count) in lists(&requests) {
        assert_eq!(count, 1, "{path} was listed again: {requests:#?}");
    }
}
