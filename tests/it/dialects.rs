//! `--dialect`: plans and templates in another tool's order, from fixtures built on each tool's
//! documented examples (`fixtures/dialects/<dialect>/`).

use crate::{chartseq, run, snapshot_settings};

/// Argo CD fixtures: the documented sync-waves and Helm-hooks examples, and one chart with a
/// subchart that exercises the fallbacks and the Namespace/CRD adjustment.
const ARGO: [&str; 3] = ["sync-waves", "helm-hooks", "subcharts"];

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
        let template = argo(name, &["template"]);
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
    let template = argo("helm-hooks", &["template"]);
    let up = template.find("name: maint-page-up").expect("printed");
    let frontend = template.find("name: frontend").expect("printed");
    assert!(frontend < up, "{template}");
}

/// werf fixtures: werf's own end-to-end chart with the nelm README's annotations.
const WERF: [&str; 1] = ["complex"];

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
            &["template"],
        ] {
            let (code, out, err) = werf(name, args);
            assert_eq!(code, 0, "{name} {args:?}: {err}");
            assert!(err.is_empty(), "{name} {args:?}: {err}");
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
        // A manual dependency drops the weight: the Deployment floats in its stage.
        ("install:dependencies", vec!["worker"], vec![1]),
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
    for args in [&["plan"][..], &["plan", "--format", "json"], &["template"]] {
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

#[test]
fn hip_is_the_default_dialect() {
    let stream = "fixtures/charts/platform.rendered.yaml";
    let chart = "fixtures/charts/platform";
    for args in [&["plan"][..], &["plan", "--format", "json"], &["template"]] {
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
fn unsupported_dialects_and_dialect_uninstall_are_usage_errors() {
    let stream = "fixtures/dialects/argo/sync-waves.yaml";
    for dialect in ["kots", "draft", "auto", "Argo"] {
        let (code, out, err) = run(chartseq().args(["plan", stream, "--dialect", dialect]));
        assert_eq!(code, 2, "{dialect}: {out}");
        assert!(err.contains("--dialect"), "{dialect}: {err}");
    }
    let (code, out, err) =
        run(chartseq().args(["plan", stream, "--dialect", "argo", "--uninstall"]));
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("only supported with --dialect hip"), "{err}");
}
