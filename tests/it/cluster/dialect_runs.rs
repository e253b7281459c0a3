//! What a release deployed in another tool's order does across runs, on the real control
//! plane: read back from storage with its order and waits, hooks recreated on upgrade, objects
//! a tool applies before its hooks, hooks a tool never installs, and waits on a custom
//! resource's properties (whose status no controller writes: the test writes it, as the
//! resource's operator would).

use std::time::Duration;

use super::dialects::{config_map, deployment, job, stream, werf_stream};
use super::{Audit, Ns, ok, wait_until_found};

/// `chartseq apply STREAM --dialect D --release shop`.
fn apply(ns: &Ns, path: &str, dialect: &str) -> String {
    ok(ns.chartseq(&[
        "apply",
        path,
        "--dialect",
        dialect,
        "--release",
        "shop",
        "--timeout",
        "2m",
    ]))
}

/// The tests' successful writes (create, apply) of `resource/name`.
fn writes(audit: &Audit, resource: &str, name: &str) -> usize {
    audit
        .writes()
        .filter(|e| e.resource == resource && e.name == name)
        .count()
}

#[test]
fn a_dialect_release_reads_back_with_its_order_and_waits() {
    let Some(ns) = Ns::new("dialect-readback") else {
        return;
    };
    let path = ns.file("werf.yaml", &werf_stream());
    apply(&ns, &path, "werf");
    let (_, release) = ns
        .stored_release("Secret", "shop", 1)
        .expect("the revision is stored");
    assert_eq!(release["chartseq"]["dialect"], "werf");
    let labels: Vec<&str> = release["chartseq"]["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .filter_map(|s| s["label"].as_str())
        .collect();
    assert_eq!(labels, ["install:weight=0", "install:weight=1"]);
    // `status` shows the recorded plan as it ran.
    let out = ok(ns.chartseq(&["status", "shop"]));
    assert!(out.contains("install:weight=1"), "{out}");
    // An upgrade keeps working from the recorded revision, and a rollback re-runs a revision
    // read back from storage with its dialect, order and waits.
    apply(&ns, &path, "werf");
    assert!(ns.stored_release("Secret", "shop", 2).is_some());
    ok(ns.chartseq(&["rollback", "shop", "1"]));
    let (_, again) = ns
        .stored_release("Secret", "shop", 3)
        .expect("the rollback is stored");
    assert_eq!(again["chartseq"]["dialect"], "werf");
    assert_eq!(again["chartseq"]["steps"], release["chartseq"]["steps"]);
    assert_eq!(again["chartseq"]["waits"], release["chartseq"]["waits"]);
}

#[test]
fn an_upgrade_recreates_the_hooks_a_dialect_runs_in_its_steps() {
    let Some(ns) = Ns::new("dialect-rehook") else {
        return;
    };
    let argo = ns.file(
        "argo.yaml",
        &stream(&[
            (
                "migrate.yaml",
                job("migrate", "\n    argocd.argoproj.io/hook: PreSync"),
            ),
            ("seed.yaml", job("seed", "")),
            ("app.yaml", config_map("app", "")),
            (
                "smoke.yaml",
                job("smoke", "\n    argocd.argoproj.io/hook: PostSync"),
            ),
        ]),
    );
    apply(&ns, &argo, "argo");
    apply(&ns, &argo, "argo");
    let audit = ns.audit();
    let deleted = audit.deletions();
    // Argo's default BeforeHookCreation: deleted before each new run, once.
    for hook in ["jobs/migrate", "jobs/smoke"] {
        assert_eq!(
            deleted.iter().filter(|d| *d == hook).count(),
            1,
            "{deleted:?}"
        );
    }
    assert_eq!(writes(&audit, "jobs", "migrate"), 2, "{audit}");
    // A non-hook Job is an ordinary resource: applied again in place, never deleted.
    assert!(!deleted.iter().any(|d| d == "jobs/seed"), "{deleted:?}");

    let Some(ns) = Ns::new("dialect-rehook-werf") else {
        return;
    };
    let werf = ns.file(
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
    apply(&ns, &werf, "werf");
    apply(&ns, &werf, "werf");
    let audit = ns.audit();
    // Helm's default before-hook-creation, once per run; never run twice in one.
    let deleted = audit.deletions();
    assert_eq!(
        deleted.iter().filter(|d| *d == "jobs/migrate").count(),
        1,
        "{deleted:?}"
    );
    assert_eq!(writes(&audit, "jobs", "migrate"), 2, "{audit}");
    assert!(
        audit.created("ConfigMap", "app").received > audit.ready("Job", "migrate"),
        "{audit}"
    );
}

#[test]
fn what_a_dialect_applies_before_its_hooks_is_a_first_step_and_werf_deletes_it_with_the_rest() {
    let Some(ns) = Ns::new("dialect-prehook") else {
        return;
    };
    let extra = format!("{}-extra", ns.name);
    let path = ns.file(
        "werf.yaml",
        &stream(&[
            (
                "migrate.yaml",
                job("migrate", "\n    helm.sh/hook: pre-install"),
            ),
            ("app.yaml", config_map("app", "")),
            (
                "namespace.yaml",
                format!(
                    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: {extra}\n  annotations:\n    werf.io/weight: \"5\"\n"
                ),
            ),
        ]),
    );
    let out = apply(&ns, &path, "werf");
    assert!(out.contains("werf (before hooks)"), "{out}");
    let audit = ns.audit();
    // A Namespace's events are its own namespace's in the audit log.
    let created_ns = Audit::read(&ns.cluster.audit_log, &extra);
    // The Namespace (werf's pre-pre-install stage, whatever its weight) before the hook.
    assert!(
        created_ns.created("Namespace", &extra).received < audit.created("Job", "migrate").received,
        "{created_ns}\n{audit}"
    );
    assert!(
        audit.created("ConfigMap", "app").received > audit.ready("Job", "migrate"),
        "{audit}"
    );
    // nelm's native uninstall deletes its whole release in one stage, in the order written
    // (no delete dependency here), the hook and the Namespace included: not the exact
    // reverse of install, which would delete the ConfigMap first and the Namespace last.
    ok(ns.chartseq(&["uninstall", "shop"]));
    let deleted = ns.audit().deletions();
    let gone = Audit::read(&ns.cluster.audit_log, &extra).events;
    assert!(
        gone.iter().any(|e| e.verb == "delete"
            && e.resource == "namespaces"
            && (200..300).contains(&e.code)),
        "the Namespace is deleted"
    );
    let objects: Vec<&String> = deleted
        .iter()
        .filter(|d| !d.starts_with("secrets/"))
        .collect();
    assert_eq!(objects, ["jobs/migrate", "configmaps/app"], "{deleted:?}");
}

#[test]
fn hooks_a_dialect_never_installs_are_not_run_and_delete_hooks_run_on_uninstall() {
    let Some(ns) = Ns::new("dialect-skiphook") else {
        return;
    };
    let path = ns.file(
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
    apply(&ns, &path, "argo");
    // Argo skips it; Helm would have run it as a pre-install hook.
    let audit = ns.audit();
    assert!(!audit.written("Job", "skipped"), "{audit}");
    assert!(!audit.written("Job", "cleanup"), "{audit}");
    ok(ns.chartseq(&["uninstall", "shop"]));
    let audit = ns.audit();
    assert!(!audit.written("Job", "skipped"), "{audit}");
    let app_deleted = audit
        .events
        .iter()
        .find(|e| e.verb == "delete" && e.resource == "configmaps" && e.name == "app")
        .expect("app is deleted");
    assert!(
        audit.ready("Job", "cleanup") < app_deleted.received,
        "{audit}"
    );
}

/// A custom resource kind of the test's own (a CRD is cluster-wide): its group, and the stream
/// of a CRD from `crds/`, a `Widget` of it, and a `ConfigMap` one werf weight later.
fn widgets(ns: &Ns) -> (String, String) {
    let group = format!("{}.example.com", ns.name);
    let text = format!(
        "---
# Source: widgets/crds/widget.yaml
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
# Source: widgets/templates/widget.yaml
apiVersion: {group}/v1
kind: Widget
metadata:
  name: w
spec: {{size: 1}}
---
# Source: widgets/templates/consumer.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: consumer
  annotations:
    werf.io/weight: \"1\"
data: {{uses: w}}
"
    );
    (group, text)
}

/// Plays the Widget's operator: once the Widget exists, writes its status `Provisioning`, then
/// `Ready` half a second later.
fn operate(ns: &Ns, group: &str) -> std::thread::JoinHandle<()> {
    let resource = format!("widgets.{group}");
    let run = ns.kubectl_for_operator();
    std::thread::spawn(move || {
        wait_until_found(&run, &[&resource, "w"]);
        for (pause, phase) in [(200, "Provisioning"), (500, "Ready")] {
            std::thread::sleep(Duration::from_millis(pause));
            let patch = format!("{{\"status\":{{\"phase\":\"{phase}\"}}}}");
            assert!(
                run(&[
                    "patch",
                    &resource,
                    "w",
                    "--subresource=status",
                    "--type=merge",
                    "-p",
                    &patch
                ]),
                "the status is written"
            );
        }
    })
}

/// When the test's status writes of the Widget arrived, in order.
fn status_writes(audit: &Audit) -> Vec<String> {
    audit
        .events
        .iter()
        .filter(|e| e.resource == "widgets" && e.subresource == "status" && e.verb == "patch")
        .filter(|e| (200..300).contains(&e.code))
        .map(|e| e.received.clone())
        .collect()
}

/// Installs the widgets stream planned in werf's order, with the Widget's wait replaced by
/// `wait`, the way a dialect planner (KOTS `kots.io/wait-for-properties`) sets it.
fn install_with_wait(ns: &Ns, text: &str, wait: chartseq::plan::Wait) -> Result<(), String> {
    use chartseq::apply::{self, Context, cluster, deploy, judge, storage};
    let model = chartseq::model::load_stream(
        "widgets.yaml",
        text.as_bytes().to_vec(),
        chartseq::parse::Limits::default(),
    );
    let mut plan = chartseq::plan::plan_in(&model, chartseq::plan::Dialect::Werf)
        .map_err(|e| format!("{e:?}"))?;
    let widget = (0..model.documents.len())
        .find(|&d| model.resource(d).is_some_and(|r| r.id.kind == "Widget"))
        .ok_or("no Widget")?;
    plan.waits.insert(widget, wait);
    let record = apply::release::record_from_plan(&model, &plan, "shop", &ns.name)?;
    let kubeconfig = ns.cluster.kubeconfig.clone();
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
                timeout: Duration::from_secs(30),
                readiness_timeout: Duration::from_secs(5),
                wait_for_jobs: false,
                dry_run: false,
                force_conflicts: false,
                take_ownership: false,
                argo_health: None,
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

/// KOTS' `kots.io/wait-for-properties` pairs as a wait.
fn properties(pairs: &[(String, String)]) -> chartseq::plan::Wait {
    let parsed = chartseq::readiness::AllPropertiesEqual::parse(pairs)
        .expect("the paths parse")
        .expect("pairs are given");
    chartseq::plan::Wait::Properties(parsed)
}

#[test]
fn all_properties_equal_waits_until_every_pair_holds_after_a_status_change() {
    let Some(ns) = Ns::new("props") else { return };
    let (group, text) = widgets(&ns);
    ns.owns("customresourcedefinition", &format!("widgets.{group}"));
    let pairs = vec![
        (".status.phase".to_owned(), "Ready".to_owned()),
        (".spec.size".to_owned(), "1".to_owned()),
    ];
    let operator = operate(&ns, &group);
    install_with_wait(&ns, &text, properties(&pairs)).expect("installs");
    operator.join().expect("the operator thread ends");
    // The ConfigMap of the next weight waited for the status write that made every pair hold.
    let audit = ns.audit();
    let statuses = status_writes(&audit);
    assert_eq!(statuses.len(), 2, "{audit}");
    assert!(
        audit.created("ConfigMap", "consumer").received > statuses[1],
        "{audit}"
    );

    // A pair that never holds (the value is compared as exact text) times out, naming it.
    let Some(ns) = Ns::new("props-never") else {
        return;
    };
    let (group, text) = widgets(&ns);
    ns.owns("customresourcedefinition", &format!("widgets.{group}"));
    let never = vec![
        (".status.phase".to_owned(), "Ready".to_owned()),
        (".spec.size".to_owned(), "01".to_owned()),
    ];
    let operator = operate(&ns, &group);
    let err = install_with_wait(&ns, &text, properties(&never)).expect_err("times out");
    operator.join().expect("the operator thread ends");
    assert!(
        err.contains("Widget/w") && err.contains(".spec.size=01 (success): observed \"1\""),
        "{err}"
    );
    assert!(ns.get("configmap", "consumer").is_none());

    // `exists`: the next weight goes out once the Widget is there, with no status at all.
    let Some(ns) = Ns::new("props-exists") else {
        return;
    };
    let (group, text) = widgets(&ns);
    ns.owns("customresourcedefinition", &format!("widgets.{group}"));
    install_with_wait(&ns, &text, chartseq::plan::Wait::Exists).expect("installs");
    let audit = ns.audit();
    assert!(status_writes(&audit).is_empty(), "{audit}");
    assert!(audit.written("ConfigMap", "consumer"), "{audit}");
}

#[test]
fn kots_waits_only_where_annotated_and_for_every_property() {
    let Some(ns) = Ns::new("kots-props") else {
        return;
    };
    let (group, widgets) = widgets(&ns);
    ns.owns("customresourcedefinition", &format!("widgets.{group}"));
    let widgets = widgets
        .replace(
            "metadata:\n  name: w\n",
            "metadata:\n  name: w\n  annotations:\n    kots.io/wait-for-properties: .status.phase=Ready,.spec.size=1\n",
        )
        .replace("werf.io/weight", "kots.io/creation-phase");
    let rest = stream(&[
        (
            "db.yaml",
            deployment("db", "\n    kots.io/wait-for-ready: \"true\"", "1s"),
        ),
        // Never ready, not annotated: KOTS does not wait for it.
        (
            "never.yaml",
            deployment("never", "", "1s")
                .replace("image: never:1", "image: \"chartseq.invalid/fail:1\""),
        ),
        (
            "late.yaml",
            config_map("late", "\n    kots.io/creation-phase: \"2\""),
        ),
    ]);
    let path = ns.file("kots.yaml", &format!("{widgets}{rest}"));
    let operator = operate(&ns, &group);
    let out = ok(ns.chartseq(&[
        "apply",
        &path,
        "--release",
        "shop",
        "--dialect",
        "kots",
        "--readiness-timeout",
        "30s",
    ]));
    operator.join().expect("the operator thread ends");
    let audit = ns.audit();
    // Phase 1 waited for both pairs: the status write that made `.status.phase=Ready` hold.
    let statuses = status_writes(&audit);
    assert_eq!(statuses.len(), 2, "{audit}");
    let consumer = audit.created("ConfigMap", "consumer").received.clone();
    assert!(consumer > statuses[1], "{out}\n{audit}");
    // Phase 0's wait-for-ready Deployment was waited for too; the other one never was ready.
    assert!(consumer > audit.ready("Deployment", "db"), "{audit}");
    let never = ns.get("deployment", "never").expect("never is applied");
    assert_ne!(never["status"]["readyReplicas"], 1, "{never:#}");
    assert!(
        audit.created("ConfigMap", "late").received > consumer,
        "{audit}"
    );
}
