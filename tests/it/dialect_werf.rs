//! `--dialect werf`: werf's tracking annotations and a Namespace's own manual dependencies,
//! from fixtures that name the nelm README sections and code they follow
//! (`fixtures/dialects/werf/tracking*.yaml`, `fixtures/dialects/werf/namespaces.yaml`).

use crate::{chartseq, run};

fn werf(name: &str, args: &[&str]) -> (i32, String, String) {
    let stream = format!("fixtures/dialects/werf/{name}.yaml");
    run(chartseq().args(args).args([&stream, "--dialect", "werf"]))
}

/// The plan lists the tracking each resource's annotations ask for, in text and JSON: the
/// fail mode, the failures allowed (per replica × `spec.replicas`, none for a Job) and the
/// no-activity timeout of the kinds kubedog tracks generically.
#[test]
fn werf_plan_shows_the_tracking_the_chart_writes() {
    let (code, text, err) = werf("tracking", &["plan"]);
    assert_eq!(code, 0, "{err}");
    for line in [
        "Tracked as the chart says (werf's fail mode and failures):",
        "  Deployment/web: fail-mode FailWholeDeployProcessImmediately, 6 failures allowed, from werf.io/failures-allowed-per-replica: 2",
        "  ConfigMap/settings: fail-mode IgnoreAndContinueDeployProcess, no activity 4m0s, from werf.io/fail-mode: IgnoreAndContinueDeployProcess",
        "  Certificate/tls: fail-mode FailWholeDeployProcessImmediately, 0 failures allowed, no activity 8m30s, from werf.io/no-activity-timeout: 8m30s",
        "  Job/migrate: fail-mode HopeUntilEndOfDeployProcess, 0 failures allowed, from werf.io/fail-mode: HopeUntilEndOfDeployProcess, werf.io/failures-allowed-per-replica: 0",
    ] {
        assert!(text.lines().any(|l| l == line), "{line:?} in\n{text}");
    }
    // A resource that writes none of them is not listed.
    assert!(!text.contains("ConfigMap/plain:"), "{text}");
    let (code, json, err) = werf("tracking", &["plan", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let plan: serde_json::Value = serde_json::from_str(&json).expect("plan JSON parses");
    let tracking: Vec<(String, String, u64, Option<String>)> = plan["tracking"]
        .as_array()
        .expect("tracking")
        .iter()
        .map(|t| {
            (
                t["resource"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                t["fail_mode"].as_str().unwrap_or_default().to_owned(),
                t["failures_allowed"].as_u64().unwrap_or(u64::MAX),
                t["no_activity_timeout"].as_str().map(str::to_owned),
            )
        })
        .collect();
    let mode = |m: &str| m.to_owned();
    assert_eq!(
        tracking,
        [
            (
                "web".into(),
                mode("FailWholeDeployProcessImmediately"),
                6,
                None
            ),
            (
                "settings".into(),
                mode("IgnoreAndContinueDeployProcess"),
                0,
                Some("4m0s".into())
            ),
            (
                "tls".into(),
                mode("FailWholeDeployProcessImmediately"),
                0,
                Some("8m30s".into())
            ),
            (
                "migrate".into(),
                mode("HopeUntilEndOfDeployProcess"),
                0,
                None
            ),
        ]
    );
    assert_eq!(
        plan["tracking"][0]["annotations"],
        serde_json::json!({"werf.io/failures-allowed-per-replica": "2"})
    );
    // A plan of a chart that writes none has no such key (and no such section).
    let (code, json, _) = werf("dependencies", &["plan", "--format", "json"]);
    assert_eq!(code, 0);
    assert!(!json.contains("\"tracking\""), "{json}");
}

/// Values nelm's `validateTrack` refuses fail the plan before anything, each at its place,
/// and lint reports them (CS602) at the same lines.
#[test]
fn werf_refuses_tracking_values_nelm_refuses() {
    for args in [&["plan"][..], &["plan", "--format", "json"]] {
        let (code, out, err) = werf("tracking-invalid", args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(out.is_empty(), "no partial plan: {out}");
        for (what, at) in [
            (
                "werf.io/fail-mode: \"Hope\" is not a fail mode werf knows",
                ":12:24",
            ),
            (
                "werf.io/failures-allowed-per-replica: \"-1\" is negative",
                ":13:43",
            ),
            (
                "werf.io/no-activity-timeout: \"90\" is not a Go duration",
                ":14:34",
            ),
        ] {
            assert!(
                err.contains(what)
                    && err.contains(&format!(
                        "tracking-invalid.yaml{at} (from refused/templates/app.yaml)"
                    )),
                "{what} at {at}: {err}"
            );
        }
    }
    let (code, out, err) = run(chartseq().args([
        "lint",
        "fixtures/dialects/werf/tracking-invalid.yaml",
        "--format",
        "concise",
    ]));
    assert_eq!(code, 1, "{out}{err}");
    // At the template's lines (counted in the rendered document: no chart on disk here).
    for at in ["app.yaml:7:24", "app.yaml:8:43", "app.yaml:9:34"] {
        assert!(
            out.lines().any(|l| l.contains(at) && l.contains("CS602")),
            "{at}: {out}"
        );
    }
}

/// A Namespace with a manual dependency floats in werf's first stage: a step after the
/// Namespace it names, before the pre-install hooks; one naming an object of another stage
/// goes with the CRDs (the dependency has no effect, as the nelm README says), and a CRD's
/// dependency is dropped.
#[test]
fn werf_orders_a_namespace_after_the_namespace_it_depends_on() {
    let (code, json, err) = werf("namespaces", &["plan", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("werf.io/deploy-dependency-web: `kind=Deployment,name=web` matches no resource of the pre-pre-install stage"),
        "{err}"
    );
    let plan: serde_json::Value = serde_json::from_str(&json).expect("plan JSON parses");
    let names = |list: &serde_json::Value| -> Vec<String> {
        list.as_array()
            .expect("a list")
            .iter()
            .map(|r| {
                format!(
                    "{}/{}",
                    r["kind"].as_str().unwrap_or(""),
                    r["name"].as_str().unwrap_or("")
                )
            })
            .collect()
    };
    assert_eq!(
        names(&plan["crds"]),
        [
            "CustomResourceDefinition/widgets.example.com",
            "Namespace/infra",
            "Namespace/lonely"
        ]
    );
    let steps: Vec<(String, Vec<String>, Vec<u64>)> = plan["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            (
                s["group"].as_str().unwrap_or_default().to_owned(),
                names(&s["resources"]),
                s["after"]
                    .as_array()
                    .expect("after")
                    .iter()
                    .filter_map(serde_json::Value::as_u64)
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [
            (
                "pre-pre-install:Namespace/app".to_owned(),
                vec!["Namespace/app".to_owned()],
                vec![]
            ),
            (
                "pre-install:weight=0".to_owned(),
                vec!["ConfigMap/setup".to_owned()],
                vec![0]
            ),
            (
                "install:weight=0".to_owned(),
                vec!["ConfigMap/web".to_owned()],
                vec![1]
            ),
        ]
    );
    // The text plan says the same.
    let (code, text, _) = werf("namespaces", &["plan"]);
    assert_eq!(code, 0);
    assert!(
        text.contains(
            "  Applied first: CustomResourceDefinition/widgets.example.com, Namespace/infra, Namespace/lonely\n  1. pre-pre-install:Namespace/app: Namespace/app\n  2. pre-install:weight=0: ConfigMap/setup"
        ),
        "{text}"
    );
}

/// werf's own uninstall order (nelm's native `release uninstall`): the objects nothing holds
/// back first, then each once what its delete dependencies match is gone — the example of
/// nelm's README and its automatic delete dependencies (`fixtures/dialects/werf/delete-dependencies.yaml`
/// names them) — and what werf leaves listed as not deleted; in text and JSON.
#[test]
fn werf_uninstalls_each_object_once_what_it_waits_for_is_gone() {
    let (code, text, err) = werf("delete-dependencies", &["plan", "--uninstall"]);
    assert_eq!(code, 0, "{err}");
    for line in [
        "pre-delete hooks: Job/cleanup (weight 0)",
        "Uninstall order (werf's own):",
        "  1. shop group uninstall 1/3: Widget/w1, ClusterRoleBinding/app, StatefulSet/postgres",
        "      CustomResourceDefinition/widgets.example.com, ClusterRole/app, Deployment/app",
        "  3. shop group uninstall 3/3: ServiceAccount/app",
        "Not deleted (as werf leaves them): ConfigMap/kept",
    ] {
        assert!(text.lines().any(|l| l == line), "{line:?} in\n{text}");
    }
    let (code, json, err) = werf(
        "delete-dependencies",
        &["plan", "--uninstall", "--format", "json"],
    );
    assert_eq!(code, 0, "{err}");
    let plan: serde_json::Value = serde_json::from_str(&json).expect("plan JSON parses");
    assert_eq!(plan["order"], "uninstall");
    let steps: Vec<(Vec<String>, Vec<u64>)> = plan["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            (
                s["resources"]
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
                    .collect(),
                s["after"]
                    .as_array()
                    .expect("after")
                    .iter()
                    .filter_map(serde_json::Value::as_u64)
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        steps,
        vec![
            (
                vec![
                    "Widget/w1".to_owned(),
                    "ClusterRoleBinding/app".to_owned(),
                    "StatefulSet/postgres".to_owned()
                ],
                vec![]
            ),
            (
                vec![
                    "CustomResourceDefinition/widgets.example.com".to_owned(),
                    "ClusterRole/app".to_owned(),
                    "Deployment/app".to_owned()
                ],
                vec![0]
            ),
            (vec!["ServiceAccount/app".to_owned()], vec![1]),
        ]
    );
}

/// What werf cannot uninstall fails `plan --uninstall` (exit 1) at its lines, while the install
/// plan of the same chart is made: a cycle of delete dependencies, and one without `state`.
/// A delete dependency nelm refuses makes it pass over all of that object's delete
/// dependencies.
#[test]
fn werf_refuses_to_uninstall_what_nelm_cannot_and_passes_over_what_it_ignores() {
    let (code, _, err) = werf("uninstall-cycle", &["plan", "--uninstall"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("error[CS605]: the werf uninstall order forms a cycle: ConfigMap/a -> ConfigMap/b -> ConfigMap/a")
            && err.contains("uninstall-cycle.yaml:12:34 (from cycle/templates/a.yaml): ConfigMap/a waits for ConfigMap/b"),
        "{err}"
    );
    let (code, _, err) = werf("uninstall-cycle", &["plan"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = werf("uninstall-invalid", &["plan", "--uninstall"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("werf.io/delete-dependency-third: \"kind=ConfigMap,name=third\" is missing the `state` property")
            && err.contains("werf would refuse to uninstall the release")
            && err.contains("uninstall-invalid.yaml:23:38 (from invalid/templates/second.yaml)"),
        "{err}"
    );
    // Without the one werf cannot read: `first` waits for nothing, its valid dependency
    // passed over with the invalid one.
    let text =
        std::fs::read_to_string("fixtures/dialects/werf/uninstall-invalid.yaml").expect("fixture");
    let without_second = text.replace(
        "    werf.io/delete-dependency-third: kind=ConfigMap,name=third\n",
        "",
    );
    assert_ne!(text, without_second);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("invalid.yaml");
    std::fs::write(&path, without_second).expect("written");
    let (code, out, err) = run(chartseq().args([
        "plan",
        path.to_str().expect("UTF-8"),
        "--dialect",
        "werf",
        "--uninstall",
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines().any(|l| l
            == "  1. invalid group uninstall: ConfigMap/first, ConfigMap/second, ConfigMap/third"),
        "{out}"
    ); // Passed over, and said so, at the value werf refuses.
    assert!(
        err.contains("warning[CS602]: werf.io/delete-dependency-bad: \"state=present,kind=ConfigMap,name=third\" is using the unknown state `present` (a delete dependency knows only `absent`); werf passes over every delete dependency of ConfigMap/first when it uninstalls the release"),
        "{err}"
    );
    let (code, out, _) =
        run(chartseq().args(["lint", path.to_str().expect("UTF-8"), "--format", "json"]));
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("so werf silently passes over every delete dependency of ConfigMap/first when it uninstalls the release"),
        "{out}"
    );
}

/// `lint` reports what makes werf refuse to uninstall, at its lines, as uninstall refusals.
#[test]
fn lint_reports_what_werf_cannot_uninstall() {
    let (code, out, _) = run(chartseq().args([
        "lint",
        "fixtures/dialects/werf/uninstall-cycle.yaml",
        "--format",
        "json",
    ]));
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("the werf uninstall order forms a cycle: ConfigMap/a -> ConfigMap/b -> ConfigMap/a, so werf refuses to uninstall the release"),
        "{out}"
    );
    let (code, out, _) = run(chartseq().args([
        "lint",
        "fixtures/dialects/werf/uninstall-invalid.yaml",
        "--format",
        "json",
    ]));
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("is missing the `state` property, which werf's uninstall reads (write `state=absent`), so werf refuses to uninstall the release"),
        "{out}"
    );
    let (code, out, err) =
        run(chartseq().args(["lint", "fixtures/dialects/werf/delete-dependencies.yaml"]));
    assert!(
        !out.contains("CS605") && !out.contains("CS602"),
        "{code} {out} {err}"
    );
}
