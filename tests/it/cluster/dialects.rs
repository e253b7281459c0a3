//! Other tools' orders deployed on the real control plane: every step written only once the
//! steps it waits for were ready, on the API server's clock, for the tools' own documented
//! examples (`fixtures/dialects/`, sources named there) and for streams written here (werf's
//! weights, Argo CD's hook phases and `generateName` hooks).

use super::order::{assert_waits_held, plan};
use super::{Ns, ok};
use crate::fixture;

fn deploys_in_order(dialect: &str, example: &str, pairs: usize) {
    let Some(ns) = Ns::new(&format!("dialect-{dialect}")) else {
        return;
    };
    // In the test's own namespace, where an example names `default`.
    let text = std::fs::read_to_string(fixture(&format!("dialects/{example}")))
        .expect("the example reads")
        .replace("namespace: default", &format!("namespace: {}", ns.name));
    let path = ns.file("example.yaml", &text);
    let path = path.as_str();
    let out = ok(ns.chartseq(&[
        "apply",
        path,
        "--dialect",
        dialect,
        "--release",
        "docs",
        "--timeout",
        "2m",
    ]));
    assert!(out.contains("status deployed"), "{out}");
    let steps = plan(path, &["--dialect", dialect]);
    assert_eq!(assert_waits_held(&ns, &steps), pairs);
}

#[test]
fn argo_sync_waves_wait_wave_by_wave() {
    // Wave 1 (2 objects) after wave 0 (3); PostSync (2) after wave 1 (2).
    deploys_in_order("argo", "argo/sync-waves.yaml", 10);
}

#[test]
fn kapp_change_rules_wait_for_their_groups() {
    // redis-replica's Deployment after redis-primary (2); the ungrouped Job after all 4.
    deploys_in_order("kapp", "kapp/resource-ordering.yaml", 6);
}

/// A Job named only by `generateName`, with the given annotations, that kwok completes at once.
fn generated_job(prefix: &str, annotations: &str) -> String {
    format!(
        "apiVersion: batch/v1
kind: Job
metadata:
  generateName: {prefix}-
  annotations:{annotations}
spec:
  template:
    metadata:
      annotations: {{pod-complete.stage.kwok.x-k8s.io/delay: 1s}}
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: app:1}}]
"
    )
}

/// The Jobs whose names start with `prefix-` and five more characters, as the server named them.
fn jobs_named_from(ns: &Ns, prefix: &str) -> Vec<String> {
    let (code, out, err) = ns.kubectl(&["get", "jobs", "-o", "json"]);
    assert_eq!(code, 0, "{err}");
    let list: serde_json::Value = serde_json::from_str(&out).expect("kubectl prints JSON");
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|j| j["metadata"]["name"].as_str())
        .filter(|n| {
            n.strip_prefix(&format!("{prefix}-"))
                .is_some_and(|rest| rest.len() == 5)
        })
        .map(str::to_owned)
        .collect()
}

/// Argo CD hooks named by `generateName`: `apply --dialect argo` takes them without
/// `--no-lint` (the lint gate knows Argo CD creates them; Helm's CS000 does not apply), each
/// run creates new ones (the server names them), and uninstall deletes what the runs left, as
/// Argo CD's cascade deletion deletes every live object of the application, hooks included
/// (argo-cd `controller/appcontroller.go`, `shouldBeDeleted`), except one marked
/// `helm.sh/resource-policy: keep`.
#[test]
fn argo_generated_hooks_pass_the_lint_gate_and_uninstall_deletes_them() {
    let Some(ns) = Ns::new("argo-generated") else {
        return;
    };
    let stream = format!(
        "---\n# Source: app/templates/migrate.yaml\n{}---\n# Source: app/templates/test.yaml\n{}---\n# Source: app/templates/report.yaml\n{}---\n# Source: app/templates/app.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata: {{a: \"1\"}}\n",
        generated_job("schema-migrate", "\n    argocd.argoproj.io/hook: PreSync"),
        generated_job(
            "integration-test",
            "\n    argocd.argoproj.io/hook: PostSync\n    argocd.argoproj.io/hook-delete-policy: HookSucceeded"
        ),
        generated_job(
            "report",
            "\n    argocd.argoproj.io/hook: PostSync\n    helm.sh/resource-policy: keep"
        ),
    );
    let path = ns.file("argo.yaml", &stream);
    let apply = || {
        ok(ns.chartseq(&[
            "apply",
            &path,
            "--dialect",
            "argo",
            "--release",
            "gen",
            "--timeout",
            "2m",
        ]))
    };
    let out = apply();
    assert!(out.contains("status deployed"), "{out}");
    apply();
    // Two runs: two objects from each hook; HookSucceeded deleted the PostSync test's.
    let migrate = jobs_named_from(&ns, "schema-migrate");
    assert_eq!(migrate.len(), 2, "{migrate:?}");
    assert!(jobs_named_from(&ns, "integration-test").is_empty());
    let report = jobs_named_from(&ns, "report");
    assert_eq!(report.len(), 2, "{report:?}");
    // The PreSync hook completed before the release's object was written.
    let audit = ns.audit();
    let created = audit.created("ConfigMap", "app").received.clone();
    // Created by POST (the server named them), never patched.
    let job_writes: Vec<&str> = audit
        .writes()
        .filter(|e| e.resource == "jobs")
        .map(|e| e.verb.as_str())
        .collect();
    assert_eq!(job_writes.len(), 6, "{audit}");
    assert!(job_writes.iter().all(|v| *v == "create"), "{audit}");
    let first_ready = migrate
        .iter()
        .map(|m| audit.ready("Job", m))
        .min()
        .expect("two runs");
    assert!(first_ready < created, "{audit}");

    let out = ok(ns.chartseq(&["uninstall", "gen"]));
    assert!(ns.get("ConfigMap", "app").is_none(), "{out}");
    assert!(jobs_named_from(&ns, "schema-migrate").is_empty(), "{out}");
    assert_eq!(jobs_named_from(&ns, "report").len(), 2, "{out}");
    let deletions = ns.audit().deletions();
    for name in &migrate {
        assert!(deletions.contains(&format!("jobs/{name}")), "{deletions:?}");
    }
}

/// A Deployment whose pod kwok makes ready `delay` after it starts.
pub(super) fn deployment(name: &str, annotations: &str, delay: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  annotations:
    placeholder: \"x\"{annotations}
spec:
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata:
      labels: {{app: {name}}}
      annotations: {{pod-ready.stage.kwok.x-k8s.io/delay: {delay}}}
    spec:
      containers: [{{name: c, image: {name}:1}}]
"
    )
}

pub(super) fn config_map(name: &str, annotations: &str) -> String {
    format!(
        "apiVersion: v1
kind: ConfigMap
metadata:
  name: {name}
  annotations:
    placeholder: \"x\"{annotations}
data: {{a: \"1\"}}
"
    )
}

/// A Job whose pod kwok completes 1 s after it starts.
pub(super) fn job(name: &str, annotations: &str) -> String {
    format!(
        "apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  annotations:
    placeholder: \"x\"{annotations}
spec:
  template:
    metadata:
      annotations: {{pod-complete.stage.kwok.x-k8s.io/delay: 1s}}
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: {name}:1}}]
"
    )
}

/// A stream of `(template, document)` pairs of the chart `shop`.
pub(super) fn stream(docs: &[(&str, String)]) -> String {
    let mut out = String::new();
    for (file, doc) in docs {
        out.push_str("---\n# Source: shop/templates/");
        out.push_str(file);
        out.push('\n');
        out.push_str(doc);
    }
    out
}

/// Applies `text` in `dialect` and checks every wait of its plan on the API server's clock;
/// the audit log then.
fn apply_in_order(ns: &Ns, dialect: &str, text: &str, pairs: usize) -> super::Audit {
    let path = ns.file("stream.yaml", text);
    let out = ok(ns.chartseq(&[
        "apply",
        &path,
        "--dialect",
        dialect,
        "--release",
        "shop",
        "--timeout",
        "2m",
    ]));
    assert!(out.contains("status deployed"), "{out}");
    let steps = plan(&path, &["--dialect", dialect]);
    assert_eq!(assert_waits_held(ns, &steps), pairs);
    ns.audit()
}

/// werf: weight -1 (a kept `ConfigMap`), weight 0 (a `Deployment` ready 2 s after its pod
/// starts and a `ConfigMap`), weight 1 (a `ConfigMap` and a `Deployment`): each weight goes out
/// only once every resource of the one before is ready, the slow Deployment included, and the
/// resources of one weight go together.
#[test]
fn werf_waits_for_every_resource_of_a_weight_before_the_next() {
    let Some(ns) = Ns::new("werf-weights") else {
        return;
    };
    let text = stream(&[
        ("db.yaml", deployment("db", "", "2s")),
        ("db-config.yaml", config_map("db-config", "")),
        ("app.yaml", config_map("app", "\n    werf.io/weight: \"1\"")),
        (
            "web.yaml",
            deployment("web", "\n    werf.io/weight: \"1\"", "1s"),
        ),
        (
            "data.yaml",
            config_map(
                "data",
                "\n    werf.io/weight: \"-1\"\n    helm.sh/resource-policy: keep",
            ),
        ),
    ]);
    // 2 pairs (weight 0 after data), 4 (weight 1 after weight 0).
    let audit = apply_in_order(&ns, "werf", &text, 6);
    let db_ready = audit.ready("Deployment", "db");
    // One weight's resources go together: the ConfigMap of weight 0 did not wait for db.
    assert!(
        audit.created("ConfigMap", "db-config").received < db_ready,
        "{audit}"
    );
    // Uninstall deletes as nelm's native uninstall does, every weight at once (it has no
    // weights: one stage, deleted in the order written, here with no delete dependency), not
    // in the reverse of the weights; and keeps what is marked keep (weight -1's ConfigMap),
    // saying so.
    let out = ok(ns.chartseq(&["uninstall", "shop"]));
    assert!(out.contains("ConfigMap/data"), "{out}");
    let deleted = ns.audit().deletions();
    let position = |name: &str| {
        deleted
            .iter()
            .position(|d| d == name)
            .unwrap_or_else(|| panic!("{name} not deleted: {deleted:?}"))
    };
    assert!(
        position("deployments/db") < position("deployments/web"),
        "{deleted:?}"
    );
    assert!(position("configmaps/db-config") < position("configmaps/app"));
    assert!(
        !deleted.contains(&"configmaps/data".to_owned()),
        "{deleted:?}"
    );
    assert!(ns.get("ConfigMap", "data").is_some());
    assert!(ns.get("Deployment", "db").is_none());
}

/// Argo CD: a `PreSync` hook Job, wave 0 (a Job and a Deployment), wave 1 (a Deployment) and
/// a `PostSync` hook Job: each phase runs to completion, each wave waits for the one before to
/// be healthy (a Job complete, not only started), `PostSync` for the whole sync.
#[test]
fn argo_runs_hook_phases_to_completion_and_waits_for_health_between_waves() {
    let Some(ns) = Ns::new("argo-phases") else {
        return;
    };
    let text = stream(&[
        (
            "migrate.yaml",
            job("migrate", "\n    argocd.argoproj.io/hook: PreSync"),
        ),
        ("seed.yaml", job("seed", "")),
        ("db.yaml", deployment("db", "", "1s")),
        (
            "web.yaml",
            deployment("web", "\n    argocd.argoproj.io/sync-wave: \"1\"", "1s"),
        ),
        (
            "smoke.yaml",
            job("smoke", "\n    argocd.argoproj.io/hook: PostSync"),
        ),
    ]);
    // Wave 0 (2) after the PreSync hook, wave 1 after wave 0 (2), PostSync after wave 1.
    let audit = apply_in_order(&ns, "argo", &text, 5);
    // The seed Job counted complete, not started: wave 1 after its completion.
    assert!(
        audit.created("Deployment", "web").received > audit.ready("Job", "seed"),
        "{audit}"
    );
}

/// KOTS applies one object at a time and waits right after a `wait-for-ready` object before
/// the next one (`ensureResourcesPresent`): what its kind order puts before `db` in the phase
/// goes out at once, what comes after it (the migration Job, a Deployment later in the input)
/// only once `db` is ready.
#[test]
fn kots_wait_for_ready_holds_back_the_rest_of_its_phase() {
    let Some(ns) = Ns::new("kots-wait") else {
        return;
    };
    let text = stream(&[
        ("migrate.yaml", job("migrate", "")),
        (
            "db.yaml",
            deployment("db", "\n    kots.io/wait-for-ready: \"true\"", "2s"),
        ),
        ("web.yaml", deployment("web", "", "1s")),
        ("settings.yaml", config_map("settings", "")),
    ]);
    // The Job and the later Deployment after the ConfigMap and db: 4 pairs.
    let audit = apply_in_order(&ns, "kots", &text, 4);
    let db_ready = audit.ready("Deployment", "db");
    assert!(
        audit.created("ConfigMap", "settings").received < db_ready,
        "{audit}"
    );
    assert!(
        audit.created("Job", "migrate").received > db_ready,
        "{audit}"
    );
    assert!(
        audit.created("Deployment", "web").received > db_ready,
        "{audit}"
    );
}

/// werf waits for a Job to complete (kubedog), where kstatus would count it ready once started.
#[test]
fn werf_waits_for_a_job_to_complete_where_kstatus_would_count_it_started() {
    let Some(ns) = Ns::new("werf-job") else {
        return;
    };
    let text = stream(&[
        ("seed.yaml", job("seed", "")),
        ("app.yaml", config_map("app", "\n    werf.io/weight: \"1\"")),
    ]);
    let audit = apply_in_order(&ns, "werf", &text, 1);
    // The Job's controller wrote it started before it wrote it complete; app after complete.
    let started = audit
        .events
        .iter()
        .find(|e| e.resource == "jobs" && e.name == "seed" && e.subresource == "status")
        .map(|e| e.received.clone())
        .expect("the Job's status");
    let completed = audit.ready("Job", "seed");
    assert!(started < completed, "{audit}");
    assert!(
        audit.created("ConfigMap", "app").received > completed,
        "{audit}"
    );
}

/// kapp: `app` waits for the change group of the slow `db`; `cache` is in no group and waits
/// for nothing; `metrics` disables kapp's wait, so `dash`, which waits for its group, does not
/// wait for it to be ready.
#[test]
fn kapp_applies_a_change_once_what_it_waits_for_is_done() {
    let Some(ns) = Ns::new("kapp-changes") else {
        return;
    };
    let group = |g: &str| format!("\n    kapp.k14s.io/change-group: \"shop.io/{g}\"");
    let after =
        |g: &str| format!("\n    kapp.k14s.io/change-rule: \"upsert after upserting shop.io/{g}\"");
    let text = stream(&[
        ("db.yaml", deployment("db", &group("db"), "2s")),
        ("app.yaml", config_map("app", &after("db"))),
        ("cache.yaml", config_map("cache", "")),
        (
            "metrics.yaml",
            deployment(
                "metrics",
                &format!("{}\n    kapp.k14s.io/disable-wait: \"\"", group("metrics")),
                "60s",
            ),
        ),
        ("dash.yaml", config_map("dash", &after("metrics"))),
    ]);
    let path = ns.file("stream.yaml", &text);
    let out = ok(ns.chartseq(&[
        "apply",
        &path,
        "--dialect",
        "kapp",
        "--release",
        "shop",
        "--timeout",
        "2m",
    ]));
    assert!(out.contains("status deployed"), "{out}");
    let audit = ns.audit();
    let db_ready = audit.ready("Deployment", "db");
    assert!(
        audit.created("ConfigMap", "app").received > db_ready,
        "{audit}"
    );
    // Nothing orders `cache`: it goes out with the first changes.
    assert!(
        audit.created("ConfigMap", "cache").received < db_ready,
        "{audit}"
    );
    // `metrics` is not waited for: `dash` is out while it is still not available.
    assert!(audit.written("ConfigMap", "dash"), "{audit}");
    let metrics = ns.get("Deployment", "metrics").expect("metrics");
    assert!(
        metrics["status"]["availableReplicas"].as_i64().unwrap_or(0) == 0,
        "{metrics}"
    );
}

/// werf: an object that waits for objects outside the release (an external dependency, both
/// spellings) is applied only once they exist; its weight's other resource goes out at once;
/// uninstall leaves the external objects alone.
#[test]
fn werf_waits_for_external_dependencies_to_exist_then_proceeds() {
    let Some(ns) = Ns::new("werf-external") else {
        return;
    };
    let text = stream(&[
        (
            "uses-cert.yaml",
            config_map(
                "uses-cert",
                "\n    tls.external-dependency.werf.io: v1:Secret:tls",
            ),
        ),
        (
            "uses-creds.yaml",
            config_map(
                "uses-creds",
                "\n    creds.external-dependency.werf.io/resource: secret/creds",
            ),
        ),
        ("free.yaml", config_map("free", "")),
    ]);
    let path = ns.file("stream.yaml", &text);
    let child = ns
        .command(&[
            "apply",
            &path,
            "--dialect",
            "werf",
            "--release",
            "shop",
            "--timeout",
            "2m",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("chartseq starts");
    let started = std::time::Instant::now();
    while ns.get("ConfigMap", "free").is_none() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "free was never applied"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(ns.get("ConfigMap", "uses-cert").is_none());
    assert!(ns.get("ConfigMap", "uses-creds").is_none());
    // Someone else creates the Secrets: the install proceeds.
    for name in ["tls", "creds"] {
        let (code, _, err) = ns.kubectl(&["create", "secret", "generic", name]);
        assert_eq!(code, 0, "{err}");
    }
    let output = child.wait_with_output().expect("chartseq ends");
    let (out, err) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(output.status.code(), Some(0), "{out}\n{err}");
    let audit = ns.audit();
    for (uses, secret) in [("uses-cert", "tls"), ("uses-creds", "creds")] {
        // The Secret's arrival: a watcher sees a write, and may act on it, before the server
        // logs its completion (see `Audit::ready`), so only a request that arrived before the
        // write did cannot have waited for it.
        let secret_at = audit
            .events
            .iter()
            .find(|e| e.resource == "secrets" && e.name == secret && e.verb == "create")
            .map(|e| e.received.clone())
            .expect("the Secret's creation");
        assert!(
            audit.created("ConfigMap", uses).received > secret_at,
            "{audit}"
        );
    }
    ok(ns.chartseq(&["uninstall", "shop"]));
    assert!(ns.get("Secret", "tls").is_some() && ns.get("Secret", "creds").is_some());
    assert!(ns.get("ConfigMap", "uses-cert").is_none());
}

/// werf: an external dependency that never appears times out naming it, and the object that
/// waits for it is never applied.
#[test]
fn werf_external_dependency_that_never_appears_times_out_naming_it() {
    let Some(ns) = Ns::new("werf-external-missing") else {
        return;
    };
    let text = stream(&[(
        "uses-cert.yaml",
        config_map(
            "uses-cert",
            "\n    tls.external-dependency.werf.io: v1:Secret:other-ns:tls",
        ),
    )]);
    let path = ns.file("stream.yaml", &text);
    let (code, out, err) = ns.chartseq(&[
        "apply",
        &path,
        "--dialect",
        "werf",
        "--release",
        "shop",
        "--readiness-timeout",
        "1s",
    ]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("(external dependencies): timed out after 1s waiting for 1 resource(s):")
            && err.contains("Secret/tls (namespace other-ns): not found"),
        "{err}"
    );
    assert!(ns.get("ConfigMap", "uses-cert").is_none());
}

/// kapp never creates an object marked `kapp.k14s.io/exists` (it waits for someone else to):
/// such a chart is refused before anything is applied.
#[test]
fn kapp_exists_objects_are_refused_before_anything_is_applied() {
    let Some(ns) = Ns::new("kapp-exists") else {
        return;
    };
    let text = stream(&[
        ("app.yaml", config_map("app", "")),
        (
            "ns.yaml",
            config_map("shared", "\n    kapp.k14s.io/exists: \"\""),
        ),
    ]);
    let path = ns.file("stream.yaml", &text);
    let (code, out, err) = ns.chartseq(&["apply", &path, "--dialect", "kapp", "--release", "shop"]);
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(
        err.contains("kapp.k14s.io/exists") && err.contains("ConfigMap/shared"),
        "{err}"
    );
    assert!(ns.audit().writes().next().is_none(), "nothing applied");
}

/// The werf stream of the weights test, without the pod delays that matter only for waits.
pub(super) fn werf_stream() -> String {
    stream(&[
        ("db.yaml", deployment("db", "", "1s")),
        ("db-config.yaml", config_map("db-config", "")),
        ("app.yaml", config_map("app", "\n    werf.io/weight: \"1\"")),
    ])
}

/// Ownership is checked the same under a dialect as in HIP-0025: an object of someone else
/// stops the run before anything is applied, and is left untouched.
#[test]
fn ownership_is_checked_the_same_under_a_dialect() {
    let Some(ns) = Ns::new("dialect-ownership") else {
        return;
    };
    let (code, _, err) = ns.kubectl(&["create", "configmap", "app", "--from-literal=owner=team-b"]);
    assert_eq!(code, 0, "{err}");
    let path = ns.file("stream.yaml", &werf_stream());
    for dialect in ["werf", "argo"] {
        let (code, out, err) =
            ns.chartseq(&["apply", &path, "--dialect", dialect, "--release", "shop"]);
        assert_eq!(code, 1, "{out}\n{err}");
        assert!(
            err.contains("do not belong to release shop") && err.contains("ConfigMap/app"),
            "{err}"
        );
        assert!(ns.get("Deployment", "db").is_none());
        assert_eq!(
            ns.get("ConfigMap", "app").expect("still there")["data"]["owner"],
            "team-b"
        );
    }
}

/// nelm applies what a workload refers to before it, in the same weight, with no annotation
/// (its automatic dependencies): the service account the Deployment runs as and the secret it
/// reads, which a by-kind-and-name listing would put after it.
#[test]
fn werf_applies_what_a_workload_refers_to_first() {
    let Some(ns) = Ns::new("werf-auto") else {
        return;
    };
    let app = deployment("app", "", "1s").replace(
        "      containers: [{name: c, image: app:1}]\n",
        "      serviceAccountName: runner\n      containers: [{name: c, image: app:1, env: [{name: A, valueFrom: {secretKeyRef: {name: token, key: a}}}]}]\n",
    );
    let text = stream(&[
        ("app.yaml", app),
        (
            "sa.yaml",
            "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: runner\n".to_owned(),
        ),
        (
            "token.yaml",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: token\nstringData: {a: b}\n"
                .to_owned(),
        ),
    ]);
    let path = ns.file("stream.yaml", &text);
    ok(ns.chartseq(&["apply", &path, "--dialect", "werf", "--release", "shop"]));
    let audit = ns.audit();
    let app_at = &audit.created("Deployment", "app").received;
    assert!(
        audit.created("ServiceAccount", "runner").completed < *app_at,
        "{audit}"
    );
    assert!(
        audit.created("Secret", "token").completed < *app_at,
        "{audit}"
    );
}

/// Argo CD reports a sync done once its last wave is applied when no hook follows it, so a
/// Deployment of that wave that is never healthy does not fail it; HIP-0025 waits for it and
/// fails. (The Argo CD run waits only for `db`, ready after a second: its budget is generous so
/// that a loaded machine cannot fail it.)
#[test]
fn argo_does_not_wait_for_the_last_wave_without_hooks() {
    let Some(ns) = Ns::new("argo-last-wave") else {
        return;
    };
    let text = stream(&[
        ("db.yaml", deployment("db", "", "1s")),
        (
            "web.yaml",
            deployment("web", "\n    argocd.argoproj.io/sync-wave: \"1\"", "1h"),
        ),
    ]);
    let path = ns.file("stream.yaml", &text);
    let (code, out, err) = ns.chartseq(&[
        "apply",
        &path,
        "--dialect",
        "argo",
        "--release",
        "shop",
        "--readiness-timeout",
        "60s",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(ns.get("Deployment", "web").is_some());
    let (code, _, err) = ns.chartseq(&[
        "apply",
        &path,
        "--release",
        "hip",
        "--take-ownership",
        "--readiness-timeout",
        "2s",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("timed out") && err.contains("Deployment/web"),
        "{err}"
    );
}

/// kapp's wait rules from a `Config` in the chart, as kapp's own e2e test
/// `TestSupportUnblockingChanges` (carvel-dev/kapp @ a89576c `test/e2e/order_test.go`) runs
/// them: the Widget's `Progressing` condition (`unblockChanges`) lets `test-cm`, which waits
/// for the Widget's group, be applied while the Widget is still waited for; the deploy ends
/// only once its `Available` condition (`success`) is there. The conditions are written with
/// kubectl, as the test writes them (no controller runs for a custom resource here).
#[test]
fn kapp_wait_rule_conditions_unblock_then_finish_the_deploy() {
    let Some(ns) = Ns::new("kapp-wait-rules") else {
        return;
    };
    let group = format!("{}.example.com", ns.name);
    ns.owns("customresourcedefinition", &format!("widgets.{group}"));
    let text = format!(
        r#"---
# Source: shop/crds/widget.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.{group}
spec:
  group: {group}
  scope: Namespaced
  names: {{kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {{status: {{}}}}
    schema: {{openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}}}
---
# Source: shop/templates/kapp-config.yaml
apiVersion: kapp.k14s.io/v1alpha1
kind: Config
metadata:
  name: kapp-config
waitRules:
- conditionMatchers:
  - type: Failed
    status: "True"
    failure: true
  - type: Progressing
    status: "True"
    unblockChanges: true
  - type: Available
    status: "True"
    success: true
  resourceMatchers:
  - apiGroupKindMatcher: {{apiGroup: {group}, kind: Widget}}
---
# Source: shop/templates/widget.yaml
apiVersion: {group}/v1
kind: Widget
metadata:
  name: w
  annotations:
    kapp.k14s.io/change-group: "cr"
spec: {{size: 1}}
---
# Source: shop/templates/test-cm.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: test-cm
  annotations:
    kapp.k14s.io/change-rule: "upsert after upserting cr"
"#
    );
    let path = ns.file("stream.yaml", &text);
    let resource = format!("widgets.{group}");
    let run_kubectl = ns.kubectl_for_operator();
    let writer = std::thread::spawn(move || {
        let wait_for = |what: &[&str]| super::wait_until_found(&run_kubectl, what);
        let conditions = |list: &str| format!("{{\"status\":{{\"conditions\":[{list}]}}}}");
        let status = |patch: &str| {
            run_kubectl(&[
                "patch",
                &resource,
                "w",
                "--subresource=status",
                "--type=merge",
                "-p",
                patch,
            ])
        };
        wait_for(&[&resource, "w"]);
        // Left in progress a while: `test-cm` must not go out before the unblocking condition.
        std::thread::sleep(std::time::Duration::from_secs(2));
        status(&conditions(r#"{"type":"Progressing","status":"True"}"#));
        wait_for(&["configmap", "test-cm"]);
        std::thread::sleep(std::time::Duration::from_secs(2));
        status(&conditions(
            r#"{"type":"Progressing","status":"True"},{"type":"Available","status":"True"}"#,
        ));
    });
    let out = ok(ns.chartseq(&[
        "apply",
        &path,
        "--dialect",
        "kapp",
        "--release",
        "shop",
        "--timeout",
        "2m",
    ]));
    writer.join().expect("the status writer ends");
    assert!(out.contains("status deployed"), "{out}");
    let audit = ns.audit();
    let patches: Vec<&str> = audit
        .events
        .iter()
        .filter(|e| e.resource == "widgets" && e.subresource == "status" && e.verb == "patch")
        .map(|e| e.received.as_str())
        .collect();
    assert_eq!(patches.len(), 2, "{audit}");
    // Applied once the Widget unblocked it, before the Widget was done.
    let cm = audit.created("ConfigMap", "test-cm").received.clone();
    assert!(
        cm.as_str() > patches[0] && cm.as_str() < patches[1],
        "{audit}"
    );
    // The release is recorded deployed only after the success condition.
    let deployed = audit
        .events
        .iter()
        .filter(|e| {
            e.resource == "secrets"
                && e.name.starts_with("sh.helm.release.v1.shop.")
                && matches!(e.verb.as_str(), "create" | "update" | "patch")
        })
        .map(|e| e.received.as_str())
        .max()
        .expect("the release is stored");
    assert!(deployed > patches[1], "{audit}");
    // The Config object is kapp's: never sent.
    assert!(!audit.written("Config", "kapp-config"), "{audit}");
}
