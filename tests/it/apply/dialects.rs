//! `chartseq apply --dialect`: another tool's order **and its waits**, against the test API
//! server (DIALECTS.md §1.4–1.5 werf, §2.4 Argo CD), the KOTS-style `all-properties-equal` wait
//! through the deployer, uninstall in the reverse of the recorded dialect order, and the same
//! ownership and `keep` rules as HIP-0025. Being moved to the real control plane
//! (`tests/it/cluster/dialects.rs`), where werf's weights, Argo CD's phases and waves and its
//! `generateName` hooks already are.

use std::time::Duration;

use super::support::{Env, start, t};

fn deployment(name: &str, annotations: &str) -> String {
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
    metadata: {{labels: {{app: {name}}}}}
    spec:
      containers: [{{name: c, image: {name}:1}}]
"
    )
}

fn config_map(name: &str, annotations: &str) -> String {
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

fn job(name: &str, annotations: &str) -> String {
    format!(
        "apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  annotations:
    placeholder: \"x\"{annotations}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: {name}:1}}]
"
    )
}

/// A stream of `(template, document)` pairs.
fn stream(docs: &[(&str, String)]) -> String {
    let mut out = String::new();
    for (file, doc) in docs {
        out.push_str("---\n# Source: shop/templates/");
        out.push_str(file);
        out.push('\n');
        out.push_str(doc);
    }
    out
}

fn apply(env: &Env, path: &str, dialect: &str) -> (i32, String, String) {
    env.run(&[
        "apply",
        path,
        "--release",
        "shop",
        "-n",
        "default",
        "--dialect",
        dialect,
    ])
}

fn ok(result: (i32, String, String)) -> String {
    let (code, out, err) = result;
    assert_eq!(code, 0, "{out}\n{err}");
    out
}

/// werf: weight 0 (a `Deployment` that takes a while, a `ConfigMap`), weight 1 (a `ConfigMap`
/// and a `Deployment`), and a `ConfigMap` kept on uninstall.
fn werf_stream() -> String {
    stream(&[
        ("db.yaml", deployment("db", "")),
        ("db-config.yaml", config_map("db-config", "")),
        ("app.yaml", config_map("app", "\n    werf.io/weight: \"1\"")),
        ("web.yaml", deployment("web", "\n    werf.io/weight: \"1\"")),
        (
            "data.yaml",
            config_map(
                "data",
                "\n    werf.io/weight: \"-1\"\n    helm.sh/resource-policy: keep",
            ),
        ),
    ])
}

/// Argo CD: a `PreSync` hook, wave 0 (a `Job` and a `Deployment`), wave 1 (a `Deployment`), a
/// `PostSync` hook.
fn argo_stream(post_sync: bool) -> String {
    let mut docs = vec![
        (
            "migrate.yaml",
            job("migrate", "\n    argocd.argoproj.io/hook: PreSync"),
        ),
        ("seed.yaml", job("seed", "")),
        ("db.yaml", deployment("db", "")),
        (
            "web.yaml",
            deployment("web", "\n    argocd.argoproj.io/sync-wave: \"1\""),
        ),
    ];
    if post_sync {
        docs.push((
            "smoke.yaml",
            job("smoke", "\n    argocd.argoproj.io/hook: PostSync"),
        ));
    }
    stream(&docs)
}

#[test]
fn a_dialect_release_reads_back_with_its_order_and_waits() {
    let env = start("");
    let path = env.stream("werf.yaml", &werf_stream());
    ok(apply(&env, &path, "werf"));
    let (_, release) = env
        .stored_release("Secret", "shop", 1)
        .expect("the revision is stored");
    assert_eq!(release["chartseq"]["dialect"], "werf");
    let labels: Vec<&str> = release["chartseq"]["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|s| s["label"].as_str())
        .collect();
    assert_eq!(
        labels,
        ["install:weight=-1", "install:weight=0", "install:weight=1"]
    );
    assert!(
        release["chartseq"]["waits"]
            .as_array()
            .is_some_and(|w| w.iter().all(|w| w[1]["wait"] == "status")),
        "{}",
        release["chartseq"]
    );
    // `status` shows the recorded plan as it ran.
    let out = ok(env.run(&["status", "shop", "-n", "default"]));
    assert!(out.contains("install:weight=1"), "{out}");
    // An upgrade with the same chart keeps working from the recorded revision, and a
    // rollback re-runs a revision read back from storage with its dialect, order and waits.
    ok(apply(&env, &path, "werf"));
    assert!(env.release_secret(2).is_some());
    ok(env.run(&["rollback", "shop", "1", "-n", "default"]));
    let (_, again) = env
        .stored_release("Secret", "shop", 3)
        .expect("the rollback is stored");
    assert_eq!(again["chartseq"]["dialect"], "werf");
    assert_eq!(again["chartseq"]["steps"], release["chartseq"]["steps"]);
    assert_eq!(again["chartseq"]["waits"], release["chartseq"]["waits"]);
}

/// A custom resource from `crds/`, and a `ConfigMap` one weight later.
const WIDGETS: &str = "---
# Source: widgets/crds/widget.yaml
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
# Source: widgets/templates/widget.yaml
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
spec: {size: 1}
---
# Source: widgets/templates/consumer.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: consumer
  annotations:
    werf.io/weight: \"1\"
data: {uses: w}
";

/// Installs `WIDGETS` planned in werf's order, with the Widget's wait replaced by `wait`, the
/// way a dialect planner (KOTS `kots.io/wait-for-properties`) sets it; whether it succeeded.
fn install_with_wait(env: &Env, wait: chartseq::plan::Wait) -> Result<(), String> {
    use chartseq::apply::{self, Context, cluster, deploy, judge, storage};
    let model = chartseq::model::load_stream(
        "widgets.yaml",
        WIDGETS.as_bytes().to_vec(),
        chartseq::parse::Limits::default(),
    );
    let mut plan = chartseq::plan::plan_in(&model, chartseq::plan::Dialect::Werf)
        .map_err(|e| format!("{e:?}"))?;
    let widget = (0..model.documents.len())
        .find(|&d| model.resource(d).is_some_and(|r| r.id.kind == "Widget"))
        .ok_or("no Widget")?;
    plan.waits.insert(widget, wait);
    let record = apply::release::record_from_plan(&model, &plan, "shop", "default")?;
    let kubeconfig = env.server.kubeconfig.clone();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let connection = cluster::Connection {
            kubeconfig: Some(kubeconfig),
            ..cluster::Connection::default()
        };
        let cluster = cluster::KubeCluster::connect(&connection)
            .await
            .map_err(|e| e.message)?;
        let (events, _rx) = tokio::sync::mpsc::unbounded_channel();
        let (_cancel_tx, cancel) = tokio::sync::watch::channel(false);
        let ctx = Context {
            cluster: std::sync::Arc::new(cluster),
            judge: std::sync::Arc::new(judge::Engine),
            settings: deploy::RunSettings {
                timeout: Duration::from_secs(10),
                readiness_timeout: Duration::from_secs(3),
                wait_for_jobs: false,
                dry_run: false,
                force_conflicts: false,
                take_ownership: false,
            },
            atomic: false,
            events,
            cancel,
            driver: storage::Driver::Secret,
            history_max: 10,
        };
        apply::install(&ctx, record)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    })
}

#[test]
fn all_properties_equal_waits_until_every_pair_holds_after_a_status_change() {
    use chartseq::plan::Wait;
    let pairs = vec![
        (".status.phase".to_owned(), "Ready".to_owned()),
        (".spec.size".to_owned(), "1".to_owned()),
    ];
    let scenario = "resources:\n- {kind: CustomResourceDefinition, name: widgets.example.com, readyAfterMs: 50}\n- kind: Widget\n  name: w\n  status:\n  - {afterMs: 200, value: {phase: Provisioning}}\n  - {afterMs: 700, value: {phase: Ready}}\n";
    let env = start(scenario);
    install_with_wait(&env, Wait::Properties(pairs.clone())).expect("installs");
    // The ConfigMap of the next weight waited for the status that made every pair hold.
    let ready = env.last_at("ready", "Widget", "w").expect("status set");
    assert!(ready > t(&env, "ready", "Widget", "w"));
    assert!(t(&env, "apply", "ConfigMap", "consumer") >= ready);

    // A pair that never holds (the value is compared as exact text) times out, naming it.
    let env = start(scenario);
    let never = vec![
        (".status.phase".to_owned(), "Ready".to_owned()),
        (".spec.size".to_owned(), "01".to_owned()),
    ];
    let err = install_with_wait(&env, Wait::Properties(never)).expect_err("times out");
    assert!(
        err.contains("Widget/w") && err.contains(".spec.size=01 (success): observed \"1\""),
        "{err}"
    );
    assert!(!env.exists("ConfigMap", "consumer"));

    // `exists`: the next weight goes out as soon as the Widget is there, before any status.
    let env = start(scenario);
    install_with_wait(&env, Wait::Exists).expect("installs");
    let first_status = env.at("ready", "Widget", "w").unwrap_or(u64::MAX);
    assert!(t(&env, "apply", "ConfigMap", "consumer") < first_status);
}

#[test]
fn an_upgrade_recreates_the_hooks_a_dialect_runs_in_its_steps() {
    let env = start("");
    let argo = env.stream("argo.yaml", &argo_stream(true));
    ok(apply(&env, &argo, "argo"));
    ok(apply(&env, &argo, "argo"));
    // Argo's default BeforeHookCreation: deleted before each new run.
    assert_eq!(env.count("delete", "Job", "migrate"), 1);
    assert_eq!(env.count("delete", "Job", "smoke"), 1);
    assert_eq!(env.count("apply", "Job", "migrate"), 2);
    // A non-hook Job is an ordinary resource: applied again in place.
    assert_eq!(env.count("delete", "Job", "seed"), 0);

    let env = start("");
    let werf = env.stream(
        "werf.yaml",
        &stream(&[
            (
                "migrate.yaml",
                job(
                    "migrate",
                    "\n    helm.sh/hook: pre-install,pre-upgrade\n    werf.io/weight: \"2\"",
                ),
            ),
            ("app.yaml", config_map("app", "")),
        ]),
    );
    ok(apply(&env, &werf, "werf"));
    ok(apply(&env, &werf, "werf"));
    // Helm's default before-hook-creation, once per run; never run twice in one.
    assert_eq!(env.count("delete", "Job", "migrate"), 1);
    assert_eq!(env.count("apply", "Job", "migrate"), 2);
    assert!(t(&env, "apply", "ConfigMap", "app") >= t(&env, "apply", "Job", "migrate"));
}

#[test]
fn what_a_dialect_applies_before_its_hooks_is_a_first_step_and_deleted_last() {
    let env = start("");
    let path = env.stream(
        "werf.yaml",
        &stream(&[
            (
                "migrate.yaml",
                job("migrate", "\n    helm.sh/hook: pre-install"),
            ),
            ("app.yaml", config_map("app", "")),
            (
                "namespace.yaml",
                "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: extra\n  annotations:\n    werf.io/weight: \"5\"\n"
                    .to_owned(),
            ),
        ]),
    );
    let out = ok(apply(&env, &path, "werf"));
    assert!(out.contains("werf (before hooks)"), "{out}");
    // The Namespace (werf's pre-pre-install stage, whatever its weight) before the hook.
    assert!(t(&env, "apply", "Namespace", "extra") <= t(&env, "apply", "Job", "migrate"));
    assert!(
        t(&env, "apply", "ConfigMap", "app")
            >= env.last_at("ready", "Job", "migrate").expect("done")
    );
    let from = env.log().len();
    ok(env.run(&["uninstall", "shop", "-n", "default"]));
    let deleted: Vec<String> = env.log()[from..]
        .iter()
        .filter(|e| e.verb == "delete" && e.kind != "Secret")
        .map(|e| format!("{}/{}", e.kind, e.name))
        .collect();
    assert_eq!(deleted, ["ConfigMap/app", "Job/migrate", "Namespace/extra"]);
}

#[test]
fn hooks_a_dialect_never_installs_are_not_run_and_delete_hooks_run_on_uninstall() {
    let env = start("");
    let path = env.stream(
        "argo.yaml",
        &stream(&[
            (
                "skipped.yaml",
                job(
                    "skipped",
                    "\n    helm.sh/hook: pre-install\n    argocd.argoproj.io/hook: Skip",
                ),
            ),
            (
                "cleanup.yaml",
                job(
                    "cleanup",
                    "\n    helm.sh/hook: pre-delete\n    helm.sh/hook-delete-policy: hook-succeeded",
                ),
            ),
            ("app.yaml", config_map("app", "")),
        ]),
    );
    ok(apply(&env, &path, "argo"));
    // Argo skips it; Helm would have run it as a pre-install hook.
    assert_eq!(env.count("apply", "Job", "skipped"), 0);
    assert_eq!(env.count("apply", "Job", "cleanup"), 0);
    ok(env.run(&["uninstall", "shop", "-n", "default"]));
    assert_eq!(env.count("apply", "Job", "skipped"), 0);
    assert!(t(&env, "apply", "Job", "cleanup") < t(&env, "delete", "ConfigMap", "app"));
}

#[test]
fn kots_waits_only_where_annotated_and_for_every_property() {
    let scenario = "resources:\n- {kind: CustomResourceDefinition, name: widgets.example.com, readyAfterMs: 50}\n- kind: Widget\n  name: w\n  status:\n  - {afterMs: 200, value: {phase: Provisioning}}\n  - {afterMs: 700, value: {phase: Ready}}\n- {kind: Deployment, name: db, readyAfterMs: 400}\n- {kind: Deployment, name: never, never: true}\n";
    let env = start(scenario);
    let widgets = WIDGETS
        .replace(
            "metadata:\n  name: w\n",
            "metadata:\n  name: w\n  annotations:\n    kots.io/wait-for-properties: .status.phase=Ready,.spec.size=1\n",
        )
        .replace("werf.io/weight", "kots.io/creation-phase");
    let rest = stream(&[
        (
            "db.yaml",
            deployment("db", "\n    kots.io/wait-for-ready: \"true\""),
        ),
        // Never ready, not annotated: KOTS does not wait for it.
        ("never.yaml", deployment("never", "")),
        (
            "late.yaml",
            config_map("late", "\n    kots.io/creation-phase: \"2\""),
        ),
    ]);
    let path = env.stream("kots.yaml", &format!("{widgets}{rest}"));
    let out = ok(env.run(&[
        "apply",
        &path,
        "--release",
        "shop",
        "-n",
        "default",
        "--dialect",
        "kots",
        "--readiness-timeout",
        "5s",
    ]));
    // Phase 1 waited for both pairs: the status that made `.status.phase=Ready` hold.
    let ready = env.last_at("ready", "Widget", "w").expect("status set");
    assert!(ready > t(&env, "ready", "Widget", "w"), "{out}");
    assert!(t(&env, "apply", "ConfigMap", "consumer") >= ready);
    // Phase 0's wait-for-ready Deployment was waited for too; the other one never was.
    assert!(t(&env, "apply", "ConfigMap", "consumer") >= t(&env, "ready", "Deployment", "db"));
    assert!(env.at("ready", "Deployment", "never").is_none());
    assert!(t(&env, "apply", "ConfigMap", "late") >= t(&env, "apply", "ConfigMap", "consumer"));
}
