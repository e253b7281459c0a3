//! `--dialect`: plans and templates in another tool's order, from fixtures built on each tool's
//! documented examples (`fixtures/dialects/<dialect>/`).

use crate::{chartseq, run, snapshot_settings};

/// Argo CD fixtures: the documented sync-waves and Helm-hooks examples, and one chart with a
/// subchart that exercises the fallbacks and the Namespace/CRD adjustment.
const ARGO: [&str; 4] = ["sync-waves", "helm-hooks", "subcharts", "generate-name"];

fn argo(name: &str, args: &[&str]) -> String {
    let stream = format!("fixtures/dialects/argo/{name}.yaml");
    let (code, out, err) = run(chartseq().args(args).args([&stream, "--dialect", "argo"]));
    assert_eq!(code, 0, "{name} {args:?}: {err}");
    assert!(err.is_empty(), "{name} {args:?}: {err}");
    out
}

#[test]
fn argo_plans_in_every_format_and_template() {
    let settings = snapshot_settings();
    for name in ARGO {
        let text = argo(name, &["plan"]);
        let json = argo(name, &["plan", "--format", "json"]);
        let dot = argo(name, &["plan", "--format", "dot"]);
        let mermaid = argo(name, &["plan", "--format", "mermaid"]);
        let template = argo(name, &["template", "--markers"]);
        let parsed: serde_json::Value = serde_json::from_str(&json).expect("plan json parses");
        assert_eq!(parsed["version"], 1);
        assert_eq!(parsed["dialect"], "argo");
        let steps = parsed["steps"].as_array().expect("steps");
        assert!(!steps.is_empty(), "{name}");
        for (i, step) in steps.iter().enumerate() {
            // Argo's steps span the release, each waiting for the one before.
            assert!(step["chart"].is_null(), "{name}: {step}");
            let after: Vec<usize> = i.checked_sub(1).into_iter().collect();
            assert_eq!(step["after"], serde_json::json!(after), "{name}");
        }
        settings.bind(|| {
            insta::assert_snapshot!(format!("dialect_argo_{name}"), text);
            insta::assert_snapshot!(format!("dialect_argo_json_{name}"), json);
            insta::assert_snapshot!(format!("dialect_argo_dot_{name}"), dot);
            insta::assert_snapshot!(format!("dialect_argo_mermaid_{name}"), mermaid);
            insta::assert_snapshot!(format!("dialect_argo_template_{name}"), template);
        });
    }
}

/// Argo CD's documented hooks are named by `generateName`; Argo CD names each when it creates
/// it, on every sync (`getSyncTasks`). They are planned as hooks, identified by kind,
/// `generateName` and template, sorted by `generateName`; an object without a name that is no
/// hook is refused, as Argo CD's dry run refuses it, and Helm's order refuses them all.
#[test]
fn argo_plans_hooks_named_by_generate_name() {
    let json = argo("generate-name", &["plan", "--format", "json"]);
    let expected: Vec<(&str, Vec<&str>, Vec<u64>)> = vec![
        ("PreSync:wave=0", vec!["Job/", "Job/"], vec![]),
        ("Sync:wave=0", vec!["Deployment/app"], vec![0]),
        ("PostSync:wave=0", vec!["Job/", "Job/", "Job/"], vec![1]),
    ];
    assert_eq!(borrowed(&steps_of(&json)), expected);
    let parsed: serde_json::Value = serde_json::from_str(&json).expect("plan json parses");
    let generated: Vec<(&str, &str)> = parsed["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .flat_map(|s| s["resources"].as_array().expect("resources"))
        .filter(|r| r["name"].is_null())
        .map(|r| {
            assert!(r.get("error").is_none(), "{r}");
            (
                r["generateName"].as_str().expect("generateName"),
                r["source"].as_str().expect("source"),
            )
        })
        .collect();
    assert_eq!(
        generated,
        [
            ("schema-migrate-", "app/templates/migrate.yaml"),
            ("schema-migrate-", "app/templates/twice.yaml"),
            ("app-slack-notification-", "app/templates/slack.yaml"),
            ("integration-test-", "app/templates/test.yaml"),
            ("schema-migrate-", "app/templates/twice.yaml"),
        ]
    );
    let text = argo("generate-name", &["plan"]);
    assert!(
        text.contains(
            "PreSync:wave=0 (2):\n      Job/schema-migrate-* (from app/templates/migrate.yaml),\n"
        ),
        "{text}"
    );
    // Not a hook: refused, naming what is missing.
    let (code, _, err) = dialect_run("argo/generate-name-plain", "argo", &["plan"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("the ConfigMap has no `metadata.name`, only `metadata.generateName`")
            && !err.contains("the Job has no"),
        "{err}"
    );
    // Helm cannot install any of them.
    let (code, _, err) = dialect_run("argo/generate-name", "hip", &["plan"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("the Job has no `metadata.name`"), "{err}");
}

/// The order itself, stated apart from the snapshots.
#[test]
fn argo_order_follows_gitops_engine() {
    let json = argo("subcharts", &["plan", "--format", "json"]);
    let parsed: serde_json::Value = serde_json::from_str(&json).expect("plan json parses");
    let steps: Vec<(String, Vec<String>)> = parsed["steps"]
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
            (s["group"].as_str().unwrap_or("").to_owned(), names)
        })
        .collect();
    let expected: Vec<(&str, Vec<&str>)> = vec![
        // "05" is wave 5 by Go's Atoi.
        ("PreSync:wave=5", vec!["Job/migrate"]),
        ("PreSync:wave=7", vec!["Pod/smoke"]),
        // The subchart's wave -2 goes before the parent's objects: waves span the release.
        ("Sync:wave=-2", vec!["StatefulSet/db"]),
        // The CRD from crds/ (wave 5) moves in front of its first Widget and takes wave -1.
        (
            "Sync:wave=-1",
            vec![
                "CustomResourceDefinition/widgets.example.com",
                "Widget/default",
            ],
        ),
        // "1.5" is not an integer and there is no hook weight: wave 0.
        ("Sync:wave=0", vec!["Deployment/app"]),
        // " 2" is not an integer: the hook weight "+2" decides, on a non-hook.
        ("Sync:wave=2", vec!["ConfigMap/config"]),
        // A hook in two phases runs in each.
        ("PostSync:wave=7", vec!["Pod/smoke"]),
    ];
    let got: Vec<(&str, Vec<&str>)> = steps
        .iter()
        .map(|(g, r)| (g.as_str(), r.iter().map(String::as_str).collect()))
        .collect();
    assert_eq!(got, expected);
    // The Namespace (wave 3) moves in front of the first object in it, a PreSync hook, and
    // takes its phase: applied before the hooks, so listed under `crds`.
    let first: Vec<&str> = parsed["crds"]
        .as_array()
        .expect("crds")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(first, ["shop"]);
    let skipped: Vec<&str> = parsed["not_installed"]
        .as_array()
        .expect("not_installed")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    // Skip alone, a SyncFail hook and a Helm test hook are never applied on sync.
    assert_eq!(skipped, ["backup", "notify", "test"]);
}

/// `-n` is Argo CD's destination namespace: objects written without a namespace, and
/// cluster-scoped ones (whose namespace Argo CD clears), are synced in it, so the Namespace of
/// that name moves in front of the first of them — in the text plan, the JSON plan and the
/// template alike. Without `-n` the plan is what it was: only written namespaces count.
#[test]
fn argo_takes_n_as_the_destination_namespace() {
    let step_names = |json: &str| -> Vec<(String, Vec<String>)> {
        steps_of(json)
            .into_iter()
            .map(|(group, names, _)| (group, names))
            .collect()
    };
    let owned = |steps: &[(&str, &[&str])]| -> Vec<(String, Vec<String>)> {
        steps
            .iter()
            .map(|(g, r)| ((*g).to_owned(), r.iter().map(|s| (*s).to_owned()).collect()))
            .collect()
    };
    let without = argo("destination", &["plan", "--format", "json"]);
    assert_eq!(
        step_names(&without),
        owned(&[
            ("Sync:wave=-1", &["ConfigMap/config"]),
            ("Sync:wave=1", &["ClusterRole/reader"]),
            ("Sync:wave=2", &["ConfigMap/app"]),
            ("Sync:wave=3", &["Namespace/shop"]),
        ])
    );
    // The ClusterRole written in `elsewhere` is synced in `shop`: the Namespace joins its
    // wave, in front of it; the ConfigMap written in `elsewhere` stays there.
    let with = argo("destination", &["plan", "--format", "json", "-n", "shop"]);
    assert_eq!(
        step_names(&with),
        owned(&[
            ("Sync:wave=-1", &["ConfigMap/config"]),
            ("Sync:wave=1", &["Namespace/shop", "ClusterRole/reader"]),
            ("Sync:wave=2", &["ConfigMap/app"]),
        ])
    );
    let text = argo("destination", &["plan", "-n", "shop"]);
    assert!(
        text.contains("  2. Sync:wave=1: Namespace/shop, ClusterRole/reader\n  3. Sync:wave=2: ConfigMap/app\n"),
        "{text}"
    );
    assert!(!text.contains("wave=3"), "{text}");
    let text = argo("destination", &["plan"]);
    assert!(
        text.contains("  4. Sync:wave=3: Namespace/shop\n"),
        "{text}"
    );
    let template = argo("destination", &["template", "--markers", "-n", "shop"]);
    let namespace = template.find("name: shop").expect("printed");
    let reader = template.find("name: reader").expect("printed");
    assert!(namespace < reader, "{template}");
    let template = argo("destination", &["template", "--markers"]);
    let namespace = template.find("name: shop").expect("printed");
    let app = template.find("name: app").expect("printed");
    assert!(app < namespace, "{template}");
}

#[test]
fn argo_never_applies_hooks_without_a_sync_phase() {
    let text = argo("helm-hooks", &["plan"]);
    assert!(
        text.contains("Not applied on install: Job/maint-page-up, Job/maint-page-down"),
        "{text}"
    );
    // Objects without a sync wave take their hook weight as the wave, hook or not.
    assert!(
        text.contains("Sync:wave=2: Service/frontend, ReplicaSet/frontend"),
        "{text}"
    );
    // `template` still prints what is not applied, after the plan.
    let template = argo("helm-hooks", &["template", "--markers"]);
    let up = template.find("name: maint-page-up").expect("printed");
    let frontend = template.find("name: frontend").expect("printed");
    assert!(frontend < up, "{template}");
}

/// werf fixtures: werf's own end-to-end chart with the nelm README's annotations.
const WERF: [&str; 3] = ["complex", "dependencies", "auto"];

fn werf(name: &str, args: &[&str]) -> (i32, String, String) {
    let stream = format!("fixtures/dialects/werf/{name}.yaml");
    run(chartseq().args(args).args([&stream, "--dialect", "werf"]))
}

#[test]
fn werf_plans_in_every_format_and_template() {
    let settings = snapshot_settings();
    for name in WERF {
        let mut outputs = Vec::new();
        for args in [
            &["plan"][..],
            &["plan", "--format", "json"],
            &["plan", "--format", "dot"],
            &["plan", "--format", "mermaid"],
            &["template", "--markers"],
        ] {
            let (code, out, err) = werf(name, args);
            assert_eq!(code, 0, "{name} {args:?}: {err}");
            if name == "complex" {
                // The worker's dependency names a StatefulSet the release does not have: werf
                // passes over it, and the plan says so.
                assert!(
                    err.starts_with("warning[CS603]: werf.io/deploy-dependency-db: `kind=StatefulSet,name=postgres` matches no resource of the install stage"),
                    "{name} {args:?}: {err}"
                );
            } else {
                assert!(err.is_empty(), "{name} {args:?}: {err}");
            }
            outputs.push(out);
        }
        let parsed: serde_json::Value =
            serde_json::from_str(&outputs[1]).expect("plan json parses");
        assert_eq!(parsed["dialect"], "werf");
        settings.bind(|| {
            insta::assert_snapshot!(format!("dialect_werf_{name}"), outputs[0]);
            insta::assert_snapshot!(format!("dialect_werf_json_{name}"), outputs[1]);
            insta::assert_snapshot!(format!("dialect_werf_dot_{name}"), outputs[2]);
            insta::assert_snapshot!(format!("dialect_werf_mermaid_{name}"), outputs[3]);
            insta::assert_snapshot!(format!("dialect_werf_template_{name}"), outputs[4]);
        });
    }
}

/// The order itself, stated apart from the snapshots.
#[test]
fn werf_order_is_stages_then_weights_across_the_release() {
    let (code, json, err) = werf("complex", &["plan", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let parsed: serde_json::Value = serde_json::from_str(&json).expect("plan json parses");
    let steps: Vec<(String, Vec<String>, Vec<u64>)> = parsed["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            let names = s["resources"]
                .as_array()
                .expect("resources")
                .iter()
                .map(|r| r["name"].as_str().unwrap_or("").to_owned())
                .collect();
            let after = s["after"]
                .as_array()
                .expect("after")
                .iter()
                .filter_map(serde_json::Value::as_u64)
                .collect();
            (s["group"].as_str().unwrap_or("").to_owned(), names, after)
        })
        .collect();
    let expected: Vec<(&str, Vec<&str>, Vec<u64>)> = vec![
        // deploy-on makes a regular Job a pre-install hook.
        ("pre-install:weight=-5", vec!["migrate"], vec![]),
        // The hook weight orders hooks; the hook runs in both hook stages.
        ("pre-install:weight=10", vec!["hook-subchart"], vec![0]),
        // Weights span the release: the subchart's -1 goes before the root's 0, and weight
        // 10 joins the subchart's and the sub-subchart's Deployments.
        ("install:weight=-1", vec!["configmap-subchart"], vec![1]),
        (
            "install:weight=0",
            vec![
                "configmap-rootchart",
                "deployment-rootchart",
                "cr-rootchart",
                "cr-subchart",
            ],
            vec![2],
        ),
        (
            "install:weight=10",
            vec!["deployment-subchart", "deployment-subsubchart"],
            vec![3],
        ),
        // A manual dependency drops the weight: the Deployment floats in its stage, a step of
        // its own; its target (a StatefulSet) is not in the release, so it waits for the
        // stage before only.
        ("install:Deployment/worker", vec!["worker"], vec![1]),
        ("post-install:weight=10", vec!["hook-subchart"], vec![4, 5]),
    ];
    let got: Vec<(&str, Vec<&str>, Vec<u64>)> = steps
        .iter()
        .map(|(g, r, a)| {
            (
                g.as_str(),
                r.iter().map(String::as_str).collect(),
                a.clone(),
            )
        })
        .collect();
    assert_eq!(got, expected);
    assert_eq!(parsed["not_installed"][0]["name"], "test-subchart");
    // Every CRD first, whatever its weight ("20" ignored), from both charts' crds/: applied
    // before the pre-install hooks, so listed under `crds`.
    let first: Vec<&str> = parsed["crds"]
        .as_array()
        .expect("crds")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(first, ["rootcrs.example.org", "subcrs.example.org"]);
}

#[test]
fn werf_refuses_the_values_werf_rejects() {
    for args in [
        &["plan"][..],
        &["plan", "--format", "json"],
        &["template", "--markers"],
    ] {
        let (code, out, err) = werf("invalid", args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(out.is_empty(), "no partial plan: {out}");
        assert!(
            err.contains("werf.io/weight: \"1.5\" is not an integer")
                && err.contains("invalid.yaml:10:21 (from invalid/templates/configmap.yaml)"),
            "{err}"
        );
        assert!(
            err.contains("werf.io/deploy-on: \"pre-uninstall\" is not a werf event")
                && err.contains("invalid.yaml:18:24"),
            "{err}"
        );
    }
    // The same stream plans in HIP-0025's order, which does not read werf's annotations.
    let (code, _, err) = run(chartseq().args(["plan", "fixtures/dialects/werf/invalid.yaml"]));
    assert_eq!(code, 0, "{err}");
}

/// Manual dependencies are edges: a resource with one floats in its stage, as a step of its
/// own after the steps of its targets; external dependencies are kept for the deployer.
#[test]
fn werf_dependencies_are_edges_and_external_objects_are_kept() {
    let (code, json, err) = werf("dependencies", &["plan", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let parsed: serde_json::Value = serde_json::from_str(&json).expect("plan json parses");
    let steps: Vec<(String, Vec<u64>)> = parsed["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            (
                s["group"].as_str().unwrap_or("").to_owned(),
                s["after"]
                    .as_array()
                    .expect("after")
                    .iter()
                    .filter_map(serde_json::Value::as_u64)
                    .collect(),
            )
        })
        .collect();
    let expected = [
        ("install:weight=-10", vec![]),
        ("install:weight=0", vec![0]),
        // Its weight 5 is ignored: it waits for its target's weight only.
        ("install:Job/migrate", vec![0]),
        // Both dependency forms; the new external form also makes it float.
        ("install:Deployment/app", vec![1, 2]),
    ];
    let got: Vec<(&str, Vec<u64>)> = steps.iter().map(|(g, a)| (g.as_str(), a.clone())).collect();
    assert_eq!(
        got,
        expected
            .iter()
            .map(|(g, a)| (*g, a.clone()))
            .collect::<Vec<_>>()
    );
    let external = &parsed["external"][0];
    assert_eq!(external["resource"]["name"], "app");
    assert_eq!(external["annotation"], "creds.external-dependency.werf.io");
    assert_eq!(
        external["waits_for"],
        serde_json::json!({"apiVersion": "v1", "kind": "Secret", "namespace": "infra", "name": "db-creds"})
    );
}

/// nelm's automatic dependencies (no annotation): inside a weight, what a resource refers to
/// is applied before it — the config map a container reads, the service account it runs as and
/// the binding that grants it, a binding's role and subjects, a scaled object's target — while
/// the weights stay as they are. The listing is otherwise by kind and name.
#[test]
fn werf_automatic_dependencies_order_a_weight_as_nelm_does() {
    let (code, json, err) = dialect_run("werf/auto", "werf", &["plan", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "{err}");
    let steps = steps_of(&json);
    assert_eq!(steps.len(), 1, "{steps:?}");
    let order = &steps[0].1;
    let at = |name: &str| {
        order
            .iter()
            .position(|n| n == name)
            .unwrap_or_else(|| panic!("{name} in {order:?}"))
    };
    for (before, after) in [
        ("ConfigMap/configmap-envs", "Deployment/backend"),
        ("ServiceAccount/my-sa", "Deployment/worker"),
        ("ClusterRoleBinding/my-crb", "Deployment/worker"),
        ("ServiceAccount/my-sa", "ClusterRoleBinding/my-crb"),
        ("ClusterRole/my-cr", "ClusterRoleBinding/my-crb"),
        ("Deployment/worker", "ScaledObject/worker"),
    ] {
        assert!(at(before) < at(after), "{before} before {after}: {order:?}");
    }
    assert_eq!(
        order,
        &[
            "ClusterRole/my-cr",
            "ConfigMap/configmap-envs",
            "Deployment/backend",
            "Secret/optional-secret",
            "Secret/zz-cache-env",
            "Service/zz-cache",
            "ServiceAccount/my-sa",
            "ClusterRoleBinding/my-crb",
            "Deployment/worker",
            "ScaledObject/worker",
            "StatefulSet/cache",
        ]
    );
    // A target of a later weight: nelm's plan graph refuses the cycle, and so does the plan.
    let (code, out, err) = dialect_run("werf/auto-cycle", "werf", &["plan"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        err.contains(
            "the werf order forms a cycle: Deployment/backend -> ConfigMap/configmap-envs -> Deployment/backend"
        ) && err.contains("auto-cycle.yaml:26:19") && err.contains("auto-cycle.yaml:35:21"),
        "{err}"
    );
}

#[test]
fn werf_refuses_a_cycle_of_dependencies_with_each_edge() {
    let (code, out, err) = werf("cycle", &["plan"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty(), "no partial plan: {out}");
    assert!(
        err.contains("Deployment/api -> Deployment/worker -> Deployment/api"),
        "{err}"
    );
    assert!(err.contains("cycle.yaml:10:39"), "{err}");
    assert!(err.contains("cycle.yaml:30:36"), "{err}");
}

#[test]
fn hip_is_the_default_dialect() {
    let stream = "fixtures/charts/platform.rendered.yaml";
    let chart = "fixtures/charts/platform";
    for args in [
        &["plan"][..],
        &["plan", "--format", "json"],
        &["template", "--markers"],
    ] {
        let plain = run(chartseq().args(args).args([stream, "--chart", chart]));
        let hip = run(chartseq()
            .args(args)
            .args([stream, "--chart", chart, "--dialect", "hip"]));
        assert_eq!(plain.0, 0, "{args:?}: {}", plain.2);
        assert_eq!(plain, hip, "{args:?}");
        // A HIP plan has no dialect key: its JSON keeps its shape.
        assert!(!plain.1.contains("\"dialect\""), "{args:?}");
    }
}

#[test]
fn unsupported_dialects_are_usage_errors() {
    let stream = "fixtures/dialects/argo/sync-waves.yaml";
    for dialect in ["Argo", "KOTS"] {
        let (code, out, err) = run(chartseq().args(["plan", stream, "--dialect", dialect]));
        assert_eq!(code, 2, "{dialect}: {out}");
        assert!(err.contains("--dialect"), "{dialect}: {err}");
    }
}

/// Runs `chartseq ARGS STREAM --dialect DIALECT` on `fixtures/dialects/<path>.yaml`.
fn dialect_run(path: &str, dialect: &str, args: &[&str]) -> (i32, String, String) {
    let stream = format!("fixtures/dialects/{path}.yaml");
    run(chartseq().args(args).args([&stream, "--dialect", dialect]))
}

/// Every plan format and `template`, snapshotted, for fixtures that plan cleanly.
fn snapshot_every_format(dialect: &str, names: &[&str]) {
    let settings = snapshot_settings();
    for name in names {
        let mut outputs = Vec::new();
        for args in [
            &["plan"][..],
            &["plan", "--format", "json"],
            &["plan", "--format", "dot"],
            &["plan", "--format", "mermaid"],
            &["template", "--markers"],
        ] {
            let (code, out, err) = dialect_run(&format!("{dialect}/{name}"), dialect, args);
            assert_eq!(code, 0, "{name} {args:?}: {err}");
            assert!(err.is_empty(), "{name} {args:?}: {err}");
            outputs.push(out);
        }
        let parsed: serde_json::Value =
            serde_json::from_str(&outputs[1]).expect("plan json parses");
        assert_eq!(parsed["dialect"], dialect, "{name}");
        settings.bind(|| {
            insta::assert_snapshot!(format!("dialect_{dialect}_{name}"), outputs[0]);
            insta::assert_snapshot!(format!("dialect_{dialect}_json_{name}"), outputs[1]);
            insta::assert_snapshot!(format!("dialect_{dialect}_dot_{name}"), outputs[2]);
            insta::assert_snapshot!(format!("dialect_{dialect}_mermaid_{name}"), outputs[3]);
            insta::assert_snapshot!(format!("dialect_{dialect}_template_{name}"), outputs[4]);
        });
    }
}

/// Each step's group, resources (`Kind/name`) and `after`, from plan JSON.
fn steps_of(json: &str) -> Vec<(String, Vec<String>, Vec<u64>)> {
    let parsed: serde_json::Value = serde_json::from_str(json).expect("plan json parses");
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

fn borrowed(steps: &[(String, Vec<String>, Vec<u64>)]) -> Vec<(&str, Vec<&str>, Vec<u64>)> {
    steps
        .iter()
        .map(|(g, r, a)| {
            (
                g.as_str(),
                r.iter().map(String::as_str).collect(),
                a.clone(),
            )
        })
        .collect()
}

#[test]
fn kots_plans_in_every_format_and_template() {
    snapshot_every_format("kots", &["documented"]);
}

/// The order itself, stated apart from the snapshots.
#[test]
fn kots_order_is_phases_then_kots_kind_order_across_the_release() {
    let (code, json, err) = dialect_run("kots/documented", "kots", &["plan", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let steps = steps_of(&json);
    let expected: Vec<(&str, Vec<&str>, Vec<u64>)> = vec![
        // The subchart's Secret shares the CRD's phase: phases span the release; the CRD
        // from crds/ is a manifest like the rest.
        (
            "phase=-1",
            vec![
                "Secret/db-credentials",
                "CustomResourceDefinition/myresources.example.com",
            ],
            vec![],
        ),
        // "invalid" is phase 0; kinds KOTS lists first, the custom resource last.
        // KOTS waits for the `wait-for-ready` StatefulSet before it applies the next object:
        // the phase is split after it.
        (
            "phase=0",
            vec![
                "ConfigMap/settings",
                "Service/my-statefulset",
                "StatefulSet/my-statefulset",
            ],
            vec![0],
        ),
        (
            "phase=0 after StatefulSet/my-statefulset",
            vec!["MyResource/my-resource"],
            vec![1],
        ),
        // "01" is phase 1; the Helm hook is an ordinary manifest; the webhook configuration
        // is a kind KOTS does not list, applied after the waited custom resource.
        (
            "phase=1",
            vec!["ConfigMap/config", "Job/migrate", "MyResource/ready"],
            vec![2],
        ),
        (
            "phase=1 after MyResource/ready",
            vec!["ValidatingWebhookConfiguration/validate"],
            vec![3],
        ),
        ("phase=2", vec!["Deployment/api"], vec![4]),
    ];
    assert_eq!(borrowed(&steps), expected);
    let parsed: serde_json::Value = serde_json::from_str(&json).expect("plan json parses");
    assert_eq!(parsed["crds"], serde_json::json!([]));
    assert_eq!(parsed["hooks"], serde_json::json!([]));
}

/// KOTS applies one object at a time and, right after a `wait-for-ready` object, waits for it
/// before the next (`ensureResourcesPresent`): the objects sorted before it in its phase go
/// first, unwaited; the rest of the phase, the migration Job included, waits for it.
#[test]
fn kots_wait_for_ready_holds_back_the_rest_of_its_phase() {
    for args in [
        &["plan"][..],
        &["plan", "--format", "json"],
        &["plan", "--format", "dot"],
        &["plan", "--format", "mermaid"],
        &["template", "--markers"],
    ] {
        let (code, out, err) = dialect_run("kots/wait-for-ready", "kots", args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(
            out.contains("phase=0 after StatefulSet/postgres"),
            "{args:?}: {out}"
        );
    }
    let (_, json, _) = dialect_run("kots/wait-for-ready", "kots", &["plan", "--format", "json"]);
    let expected: Vec<(&str, Vec<&str>, Vec<u64>)> = vec![
        // KOTS's kind order puts the Deployment before the StatefulSet: it goes unwaited.
        (
            "phase=0",
            vec![
                "Secret/postgres",
                "Service/postgres",
                "Deployment/api",
                "StatefulSet/postgres",
            ],
            vec![],
        ),
        (
            "phase=0 after StatefulSet/postgres",
            vec!["StatefulSet/cache"],
            vec![0],
        ),
        // Two waited objects in one phase: a split after each; the Job waits for both.
        (
            "phase=0 after StatefulSet/cache",
            vec!["Job/migrate"],
            vec![1],
        ),
        ("phase=1", vec!["ConfigMap/late"], vec![2]),
    ];
    assert_eq!(borrowed(&steps_of(&json)), expected);
}

#[test]
fn kots_refuses_the_property_pairs_kots_refuses() {
    for args in [
        &["plan"][..],
        &["plan", "--format", "json"],
        &["template", "--markers"],
    ] {
        let (code, out, err) = dialect_run("kots/invalid", "kots", args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(out.is_empty(), "no partial plan: {out}");
        assert!(
            err.contains("kots.io/wait-for-properties: \"=1\" is a pair with an empty path")
                && err.contains("invalid.yaml:13:35 (from invalid/templates/job.yaml)"),
            "{err}"
        );
        assert!(
            err.contains("is a pair whose path does not parse")
                && err.contains("invalid.yaml:28:34 (from invalid/templates/cluster.yaml)"),
            "{err}"
        );
        // A phase that is not an integer is KOTS's phase 0, not a refusal.
        assert!(!err.contains("creation-phase"), "{err}");
    }
}

const DRAFT: [&str; 3] = ["hip-9999", "layers", "weights"];

#[test]
fn draft_plans_in_every_format_and_template() {
    snapshot_every_format("draft", &DRAFT);
}

/// The order itself, stated apart from the snapshots.
#[test]
fn draft_order_is_layers_and_weights_per_chart_level() {
    let (code, json, err) = dialect_run("draft/hip-9999", "draft", &["plan", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let expected: Vec<(&str, Vec<&str>, Vec<u64>)> = vec![
        // The subchart first (its resources are unsequenced at its level).
        ("", vec!["Deployment/dependency"], vec![]),
        ("layer1", vec!["ConfigMap/foo"], vec![0]),
        ("layer2", vec!["ConfigMap/bar"], vec![1]),
        ("layer3", vec!["ConfigMap/fizz"], vec![1]),
        // Resources without the draft's keys go last.
        ("", vec!["Service/web"], vec![2, 3]),
    ];
    assert_eq!(borrowed(&steps_of(&json)), expected);

    // `["database, queue"]` names two layers; a layer without edges stays a layer.
    let (code, json, err) = dialect_run("draft/layers", "draft", &["plan", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let expected: Vec<(&str, Vec<&str>, Vec<u64>)> = vec![
        ("layer1", vec!["Job/barz"], vec![]),
        ("layer2", vec!["ConfigMap/fizz"], vec![0]),
        ("database", vec!["Service/db-service"], vec![1]),
        ("queue", vec!["Deployment/queue-processor"], vec![1]),
        ("app", vec!["Deployment/my-app"], vec![2, 3]),
    ];
    assert_eq!(borrowed(&steps_of(&json)), expected);

    let (code, json, err) = dialect_run("draft/weights", "draft", &["plan", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let expected: Vec<(&str, Vec<&str>, Vec<u64>)> = vec![
        ("weight=-2", vec!["ConfigMap/foo"], vec![]),
        ("weight=-1", vec!["ConfigMap/bar"], vec![0]),
        // The unquoted 0 is read as Helm reads it: "0".
        ("weight=0", vec!["ConfigMap/fizz"], vec![1]),
        ("", vec!["ConfigMap/plain"], vec![2]),
    ];
    assert_eq!(borrowed(&steps_of(&json)), expected);
}

/// A layer or subchart named but not there is passed over (the draft's reviewers: such a
/// resource is deployed without waiting; HIP-0025 deploys it too): the plan is made, exit 0,
/// with the warning on standard error, while lint keeps its CS603 finding. A cycle is refused.
#[test]
fn draft_passes_over_references_to_nothing_and_refuses_cycles() {
    for args in [
        &["plan"][..],
        &["plan", "--format", "json"],
        &["template", "--markers"],
    ] {
        let (code, out, err) = dialect_run("draft/reference", "draft", args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(!out.is_empty(), "{args:?}");
        assert!(err.contains("warning[CS603]"), "{args:?}: {err}");
    }
    let (_, json, _) = dialect_run("draft/reference", "draft", &["plan", "--format", "json"]);
    // The layer waits for nothing: it is the first (only) group.
    assert_eq!(
        borrowed(&steps_of(&json)),
        vec![("queue", vec!["ConfigMap/queue-processor"], vec![])]
    );
    let lint = run(chartseq().args(["lint", "fixtures/dialects/draft/reference.yaml"]));
    assert_eq!(lint.0, 1, "{}", lint.2);
    assert!(
        lint.1.contains("error[CS603/dialect-reference-to-nothing]"),
        "{}",
        lint.1
    );
    // The fix in the draft's own words (layers, subcharts), not another tool's.
    assert!(
        lint.1
            .contains("name a layer a resource of the same chart declares")
            && !lint.1.contains("stage"),
        "{}",
        lint.1
    );
    let (code, out, err) = dialect_run("draft/reference", "draft", &["plan"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Batch 1: queue"), "{out}");
    assert!(
        err.contains("helm.sh/depends-on/layers: `another-layer` names no layer of this chart")
            && err.contains("reference.yaml:15:32 (from app/templates/queue.yaml)"),
        "{err}"
    );
    assert!(
        err.contains("helm.sh/depends-on/charts: `cache` names no enabled subchart")
            && err.contains("reference.yaml:16:32"),
        "{err}"
    );
    let (code, out, err) = dialect_run("draft/cycle", "draft", &["template", "--markers"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("the draft HIP order forms a cycle: first -> second -> first")
            && err.contains("cycle.yaml:13:31 (from app/templates/a.yaml): first waits for second")
            && err.contains("cycle.yaml:22:31 (from app/templates/b.yaml): second waits for first"),
        "{err}"
    );
}

/// One rule for every dialect and HIP-0025: a reference the tool passes over is a warning on
/// standard error and the plan is made (exit 0).
#[test]
fn a_reference_to_nothing_is_a_warning_in_every_dialect() {
    for (path, dialect, warning) in [
        ("draft/reference", "draft", "warning[CS603]"),
        ("kapp/reference", "kapp", "warning[CS603]"),
        ("werf/complex", "werf", "warning[CS603]"),
    ] {
        let (code, out, err) = dialect_run(path, dialect, &["plan"]);
        assert_eq!(code, 0, "{path}: {err}");
        assert!(!out.is_empty() && err.contains(warning), "{path}: {err}");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let stream = dir.path().join("missing.yaml");
    std::fs::write(
        &stream,
        "---\n# Source: app/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    helm.sh/resource-group: a\n    helm.sh/depends-on/resource-groups: '[\"nothing\"]'\n",
    )
    .expect("write");
    let (code, out, err) = run(chartseq()
        .args(["plan"])
        .arg(&stream)
        .args(["--dialect", "hip"]));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("ConfigMap/a") && err.contains("depends on `nothing`"),
        "{err}"
    );
}

#[test]
fn auto_picks_the_dialect_the_chart_carries() {
    for (path, dialect) in [
        ("kots/documented", Some("kots")),
        ("draft/weights", Some("draft")),
        ("argo/sync-waves", Some("argo")),
        ("werf/complex", Some("werf")),
        // Only Helm hooks: no dialect of another tool, so HIP-0025.
        ("argo/helm-hooks", None),
    ] {
        let (code, json, err) = dialect_run(path, "auto", &["plan", "--format", "json"]);
        assert_eq!(code, 0, "{path}: {err}");
        let parsed: serde_json::Value = serde_json::from_str(&json).expect("plan json parses");
        assert_eq!(parsed["dialect"].as_str(), dialect, "{path}");
        // The same plan as asking for that dialect.
        let explicit = dialect_run(
            path,
            dialect.unwrap_or("hip"),
            &["plan", "--format", "json"],
        );
        assert_eq!(explicit.1, json, "{path}");
    }
    // HIP-0025's annotations: HIP-0025.
    let stream = "fixtures/charts/platform.rendered.yaml";
    let chart = "fixtures/charts/platform";
    for args in [&["plan"][..], &["template", "--markers"]] {
        let auto = run(chartseq()
            .args(args)
            .args([stream, "--chart", chart, "--dialect", "auto"]));
        let hip = run(chartseq().args(args).args([stream, "--chart", chart]));
        assert_eq!(auto.0, 0, "{}", auto.2);
        assert_eq!(auto, hip, "{args:?}");
    }
}

#[test]
fn auto_refuses_a_chart_that_mixes_two_dialects_unless_one_is_chosen() {
    for args in [&["plan"][..], &["template", "--markers"]] {
        let (code, out, err) = dialect_run("mixed", "auto", args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{out}");
        assert!(
            err.contains(
                "argo (argocd.argoproj.io/sync-wave at fixtures/dialects/mixed.yaml:10:5)"
            ) && err.contains("kots (kots.io/creation-phase at fixtures/dialects/mixed.yaml:18:5)")
                && err.contains("--dialect argo or --dialect kots"),
            "{err}"
        );
    }
    let (code, json, err) = dialect_run("mixed", "kots", &["plan", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let expected: Vec<(&str, Vec<&str>, Vec<u64>)> = vec![
        ("phase=0", vec!["ConfigMap/config"], vec![]),
        ("phase=2", vec!["ConfigMap/app"], vec![0]),
    ];
    assert_eq!(borrowed(&steps_of(&json)), expected);
    let (code, json, err) = dialect_run("mixed", "argo", &["plan", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let expected: Vec<(&str, Vec<&str>, Vec<u64>)> = vec![
        ("Sync:wave=-1", vec!["ConfigMap/config"], vec![]),
        ("Sync:wave=0", vec!["ConfigMap/app"], vec![0]),
    ];
    assert_eq!(borrowed(&steps_of(&json)), expected);
}

/// The draft orders subcharts by HIP-0025's `Chart.yaml` keys: with the draft's layers they
/// are no second dialect, and the subchart order is kept.
#[test]
fn draft_subcharts_follow_chart_yaml_and_auto_picks_the_draft() {
    let stream = "fixtures/dialects/draft/chart.rendered.yaml";
    let chart = "fixtures/dialects/draft/chart";
    let (code, json, err) = run(chartseq().args([
        "plan",
        stream,
        "--chart",
        chart,
        "--dialect",
        "auto",
        "--format",
        "json",
    ]));
    assert_eq!(code, 0, "{err}");
    let parsed: serde_json::Value = serde_json::from_str(&json).expect("plan json parses");
    assert_eq!(parsed["dialect"], "draft");
    let expected: Vec<(&str, Vec<&str>, Vec<u64>)> = vec![
        ("", vec!["ConfigMap/nginx"], vec![]),
        ("", vec!["ConfigMap/rabbitmq"], vec![]),
        // `bar` waits for `nginx` and `rabbitmq` (its `depends-on`).
        ("", vec!["ConfigMap/bar"], vec![0, 1]),
        ("database", vec!["Service/db-service"], vec![0, 1, 2]),
        ("app", vec!["ConfigMap/my-app"], vec![3]),
    ];
    assert_eq!(borrowed(&steps_of(&json)), expected);
}

/// `plan --dialect kots` on a chart names the template line of a value KOTS refuses, the place
/// `lint` names (not the line in the rendered stream), at a terminal as a person runs it.
#[test]
fn plan_and_lint_locate_a_refused_kots_value_at_the_same_template_line() {
    let Some(helm) = crate::tool("helm") else {
        return;
    };
    let chart = "fixtures/dialects/kots/refused";
    let screen = crate::pty::run_in_terminal(
        chartseq()
            .args(["plan", chart, "--dialect", "kots", "--helm"])
            .arg(&helm),
        120,
        std::time::Duration::from_secs(60),
    );
    assert_eq!(screen.code, Some(1), "{}", screen.bytes);
    let (code, lint, err) = run(chartseq()
        .args([
            "lint", chart, "--format", "concise", "--select", "CS602", "--helm",
        ])
        .arg(&helm));
    assert_eq!(code, 1, "{err}");
    let place = lint
        .lines()
        .find_map(|l| l.split_once(": CS602").map(|(p, _)| p.to_owned()))
        .expect("a CS602 finding");
    assert_eq!(place, format!("{chart}/templates/seed.yaml:11:35"));
    assert!(
        screen.bytes.contains(&format!("  --> {place}\r\n")),
        "{}",
        screen.bytes
    );
    assert!(
        !screen.bytes.contains("(helm template)"),
        "{}",
        screen.bytes
    );
}
