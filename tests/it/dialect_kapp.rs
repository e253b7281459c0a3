//! `--dialect kapp`: plans and templates in kapp's order, from fixtures built on kapp's own
//! examples and tests (`fixtures/dialects/kapp/`).

use crate::{chartseq, run, snapshot_settings};

/// Fixtures that plan: kapp's resource-ordering example, its documented apply-ordering example
/// as its change-graph test extends it, and its default rules over a chart with a subchart.
const KAPP: [&str; 3] = ["resource-ordering", "change-graph", "defaults"];

fn kapp(name: &str, args: &[&str]) -> (i32, String, String) {
    let stream = format!("fixtures/dialects/kapp/{name}.yaml");
    run(chartseq().args(args).args([&stream, "--dialect", "kapp"]))
}

fn plan_json(name: &str) -> serde_json::Value {
    let (code, json, err) = kapp(name, &["plan", "--format", "json"]);
    assert_eq!(code, 0, "{name}: {err}");
    serde_json::from_str(&json).expect("plan json parses")
}

/// Each step as (group, `Kind/name` of its resources, the steps it waits for).
fn steps(parsed: &serde_json::Value) -> Vec<(String, Vec<String>, Vec<u64>)> {
    parsed["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            let names = s["resources"]
                .as_array()
                .expect("resources")
                .iter()
                .map(|r| {
                    format!(
                        "{}/{}",
                        r["kind"].as_str().unwrap_or(""),
                        r["name"].as_str().unwrap_or("")
                    )
                })
                .collect();
            let after = s["after"]
                .as_array()
                .expect("after")
                .iter()
                .filter_map(serde_json::Value::as_u64)
                .collect();
            (s["group"].as_str().unwrap_or("").to_owned(), names, after)
        })
        .collect()
}

fn names(parsed: &serde_json::Value, key: &str) -> Vec<String> {
    parsed[key]
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|r| r["name"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn kapp_plans_in_every_format_and_template() {
    let settings = snapshot_settings();
    for name in KAPP {
        let mut outputs = Vec::new();
        for args in [
            &["plan"][..],
            &["plan", "--format", "json"],
            &["plan", "--format", "dot"],
            &["plan", "--format", "mermaid"],
            &["template", "--markers"],
        ] {
            let (code, out, err) = kapp(name, args);
            assert_eq!(code, 0, "{name} {args:?}: {err}");
            assert!(err.is_empty(), "{name} {args:?}: {err}");
            outputs.push(out);
        }
        let parsed: serde_json::Value =
            serde_json::from_str(&outputs[1]).expect("plan json parses");
        assert_eq!(parsed["dialect"], "kapp", "{name}");
        let list = parsed["steps"].as_array().expect("steps");
        assert!(!list.is_empty(), "{name}");
        for (i, step) in list.iter().enumerate() {
            // kapp's groups span the release; each step waits only for earlier steps.
            assert!(step["chart"].is_null(), "{name}: {step}");
            let after = step["after"].as_array().expect("after");
            assert!(
                after
                    .iter()
                    .all(|a| a.as_u64().is_some_and(|a| a < i as u64)),
                "{name}: {step}"
            );
        }
        settings.bind(|| {
            insta::assert_snapshot!(format!("dialect_kapp_{name}"), outputs[0]);
            insta::assert_snapshot!(format!("dialect_kapp_json_{name}"), outputs[1]);
            insta::assert_snapshot!(format!("dialect_kapp_dot_{name}"), outputs[2]);
            insta::assert_snapshot!(format!("dialect_kapp_mermaid_{name}"), outputs[3]);
            insta::assert_snapshot!(format!("dialect_kapp_template_{name}"), outputs[4]);
        });
    }
}

type Expected<'a> = Vec<(&'a str, Vec<&'a str>, Vec<u64>)>;

fn assert_steps(name: &str, expected: &Expected<'_>) {
    let parsed = plan_json(name);
    let got = steps(&parsed);
    let got: Expected<'_> = got
        .iter()
        .map(|(g, r, a)| {
            (
                g.as_str(),
                r.iter().map(String::as_str).collect(),
                a.clone(),
            )
        })
        .collect();
    assert_eq!(&got, expected, "{name}");
}

/// The order itself, stated apart from the snapshots: kapp's example README shows the
/// primary, then the replica, then the sync check.
#[test]
fn kapp_orders_its_resource_ordering_example() {
    assert_steps(
        "resource-ordering",
        &vec![
            (
                "redis-primary",
                vec!["Service/redis-primary", "Deployment/redis-primary"],
                vec![],
            ),
            // Same group, different rules: the Service waits for nothing, as kapp's README
            // output shows it created with the primary.
            ("redis-replica", vec!["Service/redis-replica"], vec![]),
            ("redis-replica#2", vec!["Deployment/redis-replica"], vec![0]),
            // Two rules on one object (`change-rule` and `change-rule.1`).
            ("ungrouped", vec!["Job/sync-check"], vec![0, 1, 2]),
        ],
    );
}

#[test]
fn kapp_orders_its_change_graph_test_with_its_defaults() {
    assert_steps(
        "change-graph",
        &vec![
            (
                "change-groups.kapp.k14s.io/pod-related",
                vec!["ConfigMap/app-config"],
                vec![],
            ),
            // Namespaced objects that are not pod-related wait for the ConfigMap (default
            // rule, namespace `default` given by kapp).
            (
                "apps.big.co/deployment",
                vec!["Service/app", "Ingress/app"],
                vec![0],
            ),
            // `upsert before deleting …` orders nothing on install.
            (
                "apps.big.co/import-etcd-into-db",
                vec!["Job/import-etcd-into-db"],
                vec![0],
            ),
            (
                "apps.big.co/db-migrations",
                vec!["Job/migrations"],
                vec![0, 2],
            ),
            (
                "apps.big.co/deployment#2",
                vec!["Deployment/app"],
                vec![0, 3],
            ),
            // After every member of the group: the Service, the Ingress and the Deployment.
            ("ungrouped", vec!["Job/app-health-check"], vec![0, 1, 4]),
        ],
    );
}

#[test]
fn kapp_default_rules_span_the_release() {
    let parsed = plan_json("defaults");
    let steps = steps(&parsed);
    let step_of = |resource: &str| {
        steps
            .iter()
            .position(|(_, r, _)| r.iter().any(|n| n == resource))
            .unwrap_or_else(|| panic!("{resource} in no step: {steps:?}"))
    };
    let waits = |resource: &str| -> Vec<String> {
        let mut names: Vec<String> = steps[step_of(resource)]
            .2
            .iter()
            .flat_map(|&a| steps[usize::try_from(a).expect("index")].1.clone())
            .collect();
        names.sort();
        names
    };
    // A custom resource waits for its own CRD only (a cluster-scoped kind, so nothing else);
    // the CRD from crds/ is part of the order.
    assert_eq!(
        waits("KappCRD1/kapp-cr-1"),
        ["CustomResourceDefinition/kapp-crd-1"]
    );
    // A namespaced custom resource: its CRD, its Namespace, and the pod-related objects.
    assert_eq!(
        waits("KappCRD2/kapp-cr-2"),
        [
            "ConfigMap/app-config",
            "CustomResourceDefinition/kapp-crd-2",
            "Namespace/app1",
            "Secret/external-tls",
            "Secret/kapp-secret-1",
            "Secret/kapp-secret-3",
        ]
    );
    // Pod-related objects wait for their own Namespace only; kapp-secret-3 has none written,
    // so kapp's app namespace (`default`), which the release does not create.
    assert_eq!(
        waits("Secret/kapp-secret-1"),
        ["Namespace/kapp-namespace-2"]
    );
    assert!(waits("Secret/kapp-secret-3").is_empty());
    // The disable annotation turns off the Namespace rule, not the pod-related one.
    assert!(!waits("Deployment/standalone").contains(&"Namespace/app1".to_owned()));
    assert!(waits("Deployment/standalone").contains(&"ConfigMap/app-config".to_owned()));
    // A placeholder group (`db.platform.io/{kind}-{name}`) from the subchart orders the root
    // chart's Helm hook, which kapp applies as an ordinary object.
    assert!(
        steps
            .iter()
            .any(|(g, r, _)| g == "db.platform.io/StatefulSet-db" && r == &["StatefulSet/db"]),
        "{steps:?}"
    );
    assert!(waits("Job/migrate").contains(&"StatefulSet/db".to_owned()));
    assert_eq!(names(&parsed, "hooks_as_resources"), ["migrate"]);
    assert_eq!(names(&parsed, "hooks"), Vec::<String>::new());
    assert_eq!(names(&parsed, "crds"), Vec::<String>::new());
    // `noop` objects and kapp's own configuration are never applied.
    assert_eq!(names(&parsed, "not_installed"), ["legacy", "kapp-config"]);
    let (_, text, _) = kapp("defaults", &["plan"]);
    assert!(
        text.contains(
            "Helm hooks applied as ordinary resources (kapp does not read helm.sh/hook): Job/migrate"
        ),
        "{text}"
    );
}

#[test]
fn kapp_drops_an_optional_default_rule_that_would_close_a_cycle() {
    assert_steps(
        "optional-cycle",
        &vec![
            (
                "change-groups.kapp.k14s.io/pod-related#2",
                vec!["ConfigMap/web-config"],
                vec![],
            ),
            // Waits for the other ConfigMap, not for the one that waits for it.
            ("apps.big.co/web", vec!["Deployment/web"], vec![0]),
            (
                "change-groups.kapp.k14s.io/pod-related",
                vec!["ConfigMap/web-settings"],
                vec![1],
            ),
        ],
    );
}

/// A refused plan: exit 1 (no plan could be made), nothing on stdout, in every output.
fn refused(name: &str) -> String {
    let mut first = None;
    for args in [
        &["plan"][..],
        &["plan", "--format", "json"],
        &["template", "--markers"],
    ] {
        let (code, out, err) = kapp(name, args);
        assert_eq!(code, 1, "{name} {args:?}: {err}");
        assert!(out.is_empty(), "no partial plan: {out}");
        assert_eq!(first.get_or_insert_with(|| err.clone()), &err, "{args:?}");
    }
    first.unwrap_or_default()
}

#[test]
fn kapp_refuses_the_values_kapp_rejects() {
    let err = refused("invalid");
    for (message, at) in [
        (
            "kapp.k14s.io/change-rule: \"upsert  after upserting apps.big.co/db\" is not a change rule",
            "invalid.yaml:14:31 (from invalid/templates/job.yaml)",
        ),
        (
            "kapp.k14s.io/change-rule.create: \"create after upserting apps.big.co/db\" is not a change rule: unknown action `create`",
            "invalid.yaml:15:38",
        ),
        (
            "kapp.k14s.io/change-group: \"invalid/_\" is not a valid change group name",
            "invalid.yaml:23:32 (from invalid/templates/config.yaml)",
        ),
        (
            "is using the placeholder `{crd-kind}`, which has no value for this ConfigMap",
            "invalid.yaml:24:37",
        ),
        (
            "is using an unknown placeholder `{nmae}`",
            "invalid.yaml:25:31",
        ),
    ] {
        let line = err
            .lines()
            .position(|l| l.contains(message))
            .unwrap_or_else(|| panic!("{message}: {err}"));
        let next = err.lines().nth(line + 1).unwrap_or_default();
        assert!(next.contains(at), "{message}: {next}");
    }
    assert_eq!(
        err.matches("kapp would refuse to install").count(),
        5,
        "{err}"
    );
    // The same stream plans in HIP-0025's order, which does not read kapp's annotations.
    let (code, _, err) = run(chartseq().args(["plan", "fixtures/dialects/kapp/invalid.yaml"]));
    assert_eq!(code, 0, "{err}");
}

#[test]
fn kapp_reports_rules_that_name_no_group() {
    // kapp adds no edge for such a rule and goes on: so does the plan, saying so.
    let (code, out, err) = kapp("reference", &["plan"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.is_empty(), "the plan is printed");
    assert!(
        err.contains("warning[CS603]: kapp.k14s.io/change-rule: `apps.big.co/db-migrations` is a change group no object of the release is in")
            && err.contains("reference.yaml:14:31 (from ref/templates/app.yaml)"),
        "{err}"
    );
    assert!(
        err.contains(
            "`apps.big.co/legacy` is a change group only `kapp.k14s.io/noop` objects are in"
        ) && err.contains("reference.yaml:15:38"),
        "{err}"
    );
    // A rule on deleting a group names objects being removed: not reported.
    assert!(!err.contains("apps.big.co/etcd"), "{err}");
    assert_eq!(err.matches("warning[CS603]").count(), 2, "{err}");
    // Lint reports both as errors at the same places.
    let (code, out, _) = run(chartseq().args([
        "lint",
        "fixtures/dialects/kapp/reference.yaml",
        "--format",
        "concise",
    ]));
    assert_eq!(code, 1, "{out}");
    assert_eq!(out.matches("CS603").count(), 2, "{out}");
    assert!(out.contains("ref/templates/app.yaml:7:31: CS603"), "{out}");
}

#[test]
fn kapp_reports_cycles_with_each_edge() {
    let err = refused("cycle");
    // kapp's own test reports job1 -> job3 -> job2 -> job1.
    assert!(
        err.contains("error[CS605]: the kapp order forms a cycle: Job/job1 -> Job/job3 -> Job/job2 -> Job/job1"),
        "{err}"
    );
    for edge in [
        "cycle.yaml:14:31 (from cycle/templates/jobs.yaml): Job/job1 waits for Job/job3",
        "cycle.yaml:32:31 (from cycle/templates/jobs.yaml): Job/job3 waits for Job/job2",
        "cycle.yaml:23:31 (from cycle/templates/jobs.yaml): Job/job2 waits for Job/job1",
        // A rule on the object's own group.
        "cycle.yaml:41:31 (from cycle/templates/self.yaml): Job/self waits for Job/self",
    ] {
        assert!(err.contains(edge), "{edge}: {err}");
    }
}

#[test]
fn kapp_uninstall_is_kapps_own_delete_order() {
    // kapp's example has upsert rules only: nothing orders its deletes, which all start at
    // once, unlike the exact reverse of its install.
    let (code, out, err) = kapp("resource-ordering", &["plan", "--uninstall"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Uninstall order (kapp's own):"), "{out}");
    let (code, json, err) = kapp(
        "resource-ordering",
        &["plan", "--uninstall", "--format", "json"],
    );
    assert_eq!(code, 0, "{err}");
    let parsed: serde_json::Value = serde_json::from_str(&json).expect("plan json parses");
    assert!(
        steps(&parsed).iter().all(|(_, _, after)| after.is_empty()),
        "{json}"
    );
}

#[test]
fn auto_picks_kapp_for_a_kapp_chart() {
    for args in [
        &["plan", "--format", "json"][..],
        &["template", "--markers"],
    ] {
        let stream = "fixtures/dialects/kapp/resource-ordering.yaml";
        let auto = run(chartseq().args(args).args([stream, "--dialect", "auto"]));
        let (code, out, err) = kapp("resource-ordering", args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert_eq!(auto, (code, out, err), "{args:?}");
    }
}

/// kapp configuration in the chart (`fixtures/dialects/kapp/config.yaml`, built on kapp's
/// `TestSupportUnblockingChanges` and its configuration docs): the bindings of the `Config`
/// and of the `ConfigMap` labelled `kapp.k14s.io/config` join kapp's default ones, in the text
/// and the JSON plan; the `Config` is not applied, the `ConfigMap` is.
#[test]
fn kapp_reads_the_configuration_a_chart_carries() {
    let pod_related = "change-groups.kapp.k14s.io/pod-related";
    let second = format!("{pod_related}#2");
    assert_steps(
        "config",
        &vec![
            (pod_related, vec!["ConfigMap/kapp-config"], vec![]),
            // kapp's e2e test: the CronTab first, then `test-cm` (`upsert after upserting cr`).
            ("cr", vec!["CronTab/my-new-cron-object-1"], vec![0]),
            (second.as_str(), vec!["ConfigMap/test-cm"], vec![1]),
            // The `Config`'s group binding and rule binding.
            ("apps.big.co/db", vec!["StatefulSet/db"], vec![0, 2]),
            // The ConfigMap's: namespaced Deployments are `apps.big.co/deployment`, which the
            // Job named by `kindNamespaceNameMatcher` waits for.
            (
                "apps.big.co/deployment",
                vec!["Deployment/app"],
                vec![0, 2, 3],
            ),
            ("ungrouped", vec!["Job/smoke"], vec![0, 2, 4]),
        ],
    );
    let parsed = plan_json("config");
    assert_eq!(names(&parsed, "not_installed"), ["kapp-config"]);
    let (code, text, err) = kapp("config", &["plan"]);
    assert_eq!(code, 0, "{err}");
    for line in [
        "4. apps.big.co/db (after 1, 3): StatefulSet/db",
        "5. apps.big.co/deployment (after 1, 3, 4): Deployment/app",
        "6. ungrouped (after 1, 3, 5): Job/smoke",
        "Not applied on install: Config/kapp-config",
    ] {
        assert!(text.contains(line), "{line}: {text}");
    }
    // Without the configuration, kapp orders the StatefulSet, the Deployment and the Job
    // only after the ConfigMaps.
    let stripped: String = std::fs::read_to_string("fixtures/dialects/kapp/config.yaml")
        .expect("fixture")
        .split("\n---\n")
        .filter(|d| !d.contains("kapp.k14s.io/v1alpha1"))
        .collect::<Vec<_>>()
        .join("\n---\n");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("stripped.yaml");
    std::fs::write(&path, stripped).expect("writes");
    let (code, text, err) = run(chartseq().args(["plan", "--dialect", "kapp"]).arg(&path));
    assert_eq!(code, 0, "{err}");
    assert!(!text.contains("apps.big.co"), "{text}");
}

/// What kapp refuses in a chart's configuration, and two different objects of one identity,
/// each at its place, by `plan` and by `lint` alike (`fixtures/dialects/kapp/config-invalid.yaml`).
#[test]
fn kapp_refuses_configuration_it_cannot_read_and_two_objects_of_one_identity() {
    let err = refused("config-invalid");
    let expected = [
        (
            "kapp config: \"webMatcher\" is a resource matcher kapp does not know",
            "config-invalid.yaml:17:5 (from bad/templates/kapp-config.yaml)",
        ),
        (
            "kapp config: \"upsert after upserting apps.big.co/{nmae}\" is using an unknown placeholder `{nmae}`",
            "config-invalid.yaml:27:5 (from bad/templates/kapp-rules.yaml)",
        ),
        (
            "is labelled `kapp.k14s.io/config` without `data.\"config.yml\"`",
            "config-invalid.yaml:33:1 (from bad/templates/labelled.yaml)",
        ),
        (
            "kapp resource identity: \"configmap/settings (v1) cluster\" is found multiple times with different content (kapp: \"Found resource 'configmap/settings (v1) cluster' multiple times with different content\")",
            "config-invalid.yaml:51:1 (from bad/templates/settings-again.yaml)",
        ),
    ];
    for (message, at) in expected {
        let line = err
            .lines()
            .position(|l| l.contains(message))
            .unwrap_or_else(|| panic!("{message}: {err}"));
        let next = err.lines().nth(line + 1).unwrap_or_default();
        assert!(next.contains(at), "{message}: {next}");
    }
    assert_eq!(
        err.matches("kapp would refuse to install").count(),
        4,
        "{err}"
    );
    let (code, out, _) = run(chartseq().args([
        "lint",
        "fixtures/dialects/kapp/config-invalid.yaml",
        "--format",
        "concise",
    ]));
    assert_eq!(code, 1, "{out}");
    // Each at its template line.
    for at in [
        "bad/templates/kapp-config.yaml:8:5",
        "bad/templates/kapp-rules.yaml:8:5",
        "bad/templates/labelled.yaml:2:1",
        "bad/templates/settings-again.yaml:2:1",
    ] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(at) && l.contains("CS602")),
            "{at}: {out}"
        );
    }
}

/// The same object twice is one object for kapp: applied once, the copy listed as not applied.
#[test]
fn kapp_applies_the_same_object_twice_once() {
    let doc = "---\n# Source: c/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same\n  annotations:\n    kapp.k14s.io/change-group: g\ndata:\n  k: v\n";
    let copy = doc.replace("templates/a.yaml", "templates/b.yaml");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("twice.yaml");
    std::fs::write(&path, format!("{doc}{copy}")).expect("writes");
    let (code, json, err) = run(chartseq()
        .args(["plan", "--dialect", "kapp", "--format", "json"])
        .arg(&path));
    assert_eq!(code, 0, "{err}");
    let parsed: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert_eq!(names(&parsed, "not_installed"), ["same"]);
    assert_eq!(steps(&parsed).len(), 1);
}

/// A bound rule naming a group no object is in: kapp passes over it, and so does the plan,
/// warning at the rule in the configuration.
#[test]
fn kapp_reports_bound_rules_that_name_no_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bound.yaml");
    std::fs::write(
        &path,
        "---\n# Source: c/templates/config.yaml\napiVersion: kapp.k14s.io/v1alpha1\nkind: Config\nmetadata:\n  name: c\nchangeRuleBindings:\n- rules: [\"upsert after upserting apps.big.co/nothing\"]\n  resourceMatchers:\n  - allMatcher: {}\n---\n# Source: c/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
    )
    .expect("writes");
    let (code, out, err) = run(chartseq().args(["plan", "--dialect", "kapp"]).arg(&path));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1. ungrouped: ConfigMap/cm"), "{out}");
    assert!(
        err.contains("warning[CS603]: kapp config changeRuleBindings: `apps.big.co/nothing` is a change group no object of the release is in"),
        "{err}"
    );
    assert!(
        err.contains("bound.yaml:8:11 (from c/templates/config.yaml)"),
        "{err}"
    );
}
