//! `chartseq migrate`: patches of real charts (`fixtures/migrate/`, origins in each README),
//! the proof of what the HIP-0025 order keeps and loses, exit codes, idempotence and lint.
//! Every run works on a temporary copy of the fixture, from its parent directory, so that
//! paths in the output are the chart's own.

use std::path::{Path, PathBuf};

use crate::{chartseq, fixture, run, snapshot_settings, tool};

/// A copy of a fixture chart in a temporary directory: (directory, chart name).
fn copy(rel: &str) -> (tempfile::TempDir, String) {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let src = fixture(rel);
    let name = src
        .file_name()
        .expect("a chart directory")
        .to_string_lossy()
        .into_owned();
    copy_dir(&src, &tmp.path().join(&name));
    (tmp, name)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create");
    for entry in std::fs::read_dir(from).expect("read fixture") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// Runs `chartseq migrate` in `dir` with helm; `None` when helm is not available.
fn migrate(helm: &Path, dir: &Path, args: &[&str]) -> (i32, String, String) {
    run(chartseq()
        .current_dir(dir)
        .env("CHARTSEQ_HELM", helm)
        .arg("migrate")
        .args(args))
}

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out).expect("migrate JSON parses")
}

fn reasons(v: &serde_json::Value, key: &str) -> Vec<String> {
    v[key]
        .as_array()
        .expect("a list")
        .iter()
        .map(|l| l["reason"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn argo_operators_installer_keeps_every_wave() {
    let Some(helm) = tool("helm") else { return };
    let (tmp, chart) = copy("migrate/argo/operators-installer");
    let (code, diff, report) = migrate(&helm, tmp.path(), &[&chart, "--from", "argo"]);
    assert_eq!(code, 0, "{report}");
    // Every wave becomes a group next to its sync-wave line, chained in order.
    for (wave, prev) in [
        ("n50", "n60"),
        ("n40", "n50"),
        ("n30", "n40"),
        ("n20", "n30"),
        ("n10", "n20"),
    ] {
        assert!(
            diff.contains(&format!("+    helm.sh/resource-group: \"wave-{wave}\"")),
            "{diff}"
        );
        assert!(
            diff.contains(&format!(
                "+    helm.sh/depends-on/resource-groups: '[\"wave-{prev}\"]'"
            )),
            "{diff}"
        );
    }
    // The approver Job gates the verifier: completion readiness; the last wave's Job needs none.
    assert_eq!(
        diff.matches("helm.sh/readiness-success").count(),
        1,
        "{diff}"
    );
    let (code, out, _) = migrate(
        &helm,
        tmp.path(),
        &[&chart, "--from", "argo", "--format", "json"],
    );
    assert_eq!(code, 0);
    let v = json(&out);
    assert_eq!(v["version"], 1);
    assert_eq!(v["from"], "argo");
    assert_eq!(v["edits"].as_array().map(Vec::len), Some(9));
    assert!(v["lost"].as_array().is_some_and(Vec::is_empty), "{out}");
    assert!(v["manual"].as_array().is_some_and(Vec::is_empty), "{out}");
    assert!(report.contains("kept: 11 ordering constraints"), "{report}");
    snapshot_settings().bind(|| {
        insta::assert_snapshot!("migrate_argo_operators_installer_diff", diff);
        insta::assert_snapshot!("migrate_argo_operators_installer_report", report);
        insta::assert_snapshot!("migrate_argo_operators_installer_json", out);
    });
}

/// nelm's automatic dependencies carried into HIP-0025: Helm's kind order already applies the
/// config map and the service account before the Deployment inside one group; the resource claim,
/// a kind Helm does not order, needs the Deployment in a group after it.
#[test]
fn werf_automatic_dependencies_become_groups_where_kind_order_does_not_keep_them() {
    let Some(helm) = tool("helm") else { return };
    let (tmp, chart) = copy("migrate/werf/auto");
    let (code, diff, report) = migrate(&helm, tmp.path(), &[&chart, "--from", "werf"]);
    assert_eq!(code, 0, "{report}");
    assert!(
        report.contains("auto: weight-n1 -> weight-0 -> weight-0-deps"),
        "{report}"
    );
    assert!(report.contains("lost: 0"), "{report}");
    let deployment = diff
        .split("kind: Deployment")
        .nth(1)
        .expect("the Deployment is edited");
    assert!(
        deployment.contains("helm.sh/resource-group: \"weight-0-deps\"")
            && deployment.contains("helm.sh/depends-on/resource-groups: '[\"weight-0\"]'"),
        "{diff}"
    );
    let claim = diff
        .split("kind: ResourceClaim")
        .nth(1)
        .and_then(|rest| rest.split("kind: Deployment").next())
        .expect("the ResourceClaim is edited");
    assert!(
        claim.contains("helm.sh/resource-group: \"weight-0\""),
        "{diff}"
    );
}

#[test]
fn werf_e2e_chart_reports_what_hip_cannot_say() {
    let Some(helm) = tool("helm") else { return };
    let (tmp, chart) = copy("migrate/werf/complex");
    let (code, diff, report) = migrate(&helm, tmp.path(), &[&chart, "--from", "werf"]);
    // Lost constraints: exit 1, the patch is still produced.
    assert_eq!(code, 1, "{report}");
    assert!(
        diff.contains("+    helm.sh/resource-group: \"weight-10\""),
        "{diff}"
    );
    // The unannotated Service is weight 0 to werf: it gets a group in its metadata.
    assert!(
        diff.contains("+  annotations:\n+    helm.sh/resource-group: \"weight-0\""),
        "{diff}"
    );
    let (code, out, _) = migrate(
        &helm,
        tmp.path(),
        &[&chart, "--from", "werf", "--format", "json"],
    );
    assert_eq!(code, 1);
    let v = json(&out);
    let lost = reasons(&v, "lost");
    assert_eq!(lost.len(), 9, "{out}");
    // Two weights, and the sub-subchart's deploy-dependency on its parent's Deployment.
    assert_eq!(
        lost.iter()
            .filter(|r| r.contains("cross-subchart inversion"))
            .count(),
        3,
        "{out}"
    );
    assert_eq!(
        lost.iter()
            .filter(|r| r.contains("external dependency"))
            .count(),
        2,
        "{out}"
    );
    // Every resource werf applies only after the pre-install hook that waits for
    // serviceaccount/default waits for it too: the install stage's four, listed once each.
    let through: Vec<&str> = v["lost"]
        .as_array()
        .expect("lost")
        .iter()
        .filter(|l| {
            l["before"]["name"] == "default"
                && l["reason"]
                    .as_str()
                    .is_some_and(|r| r.contains("only after Job/hook-subchart"))
        })
        .filter_map(|l| l["after"]["name"].as_str())
        .collect();
    assert_eq!(
        through,
        [
            "deployment-rootchart",
            "deployment-subchart",
            "service-rootchart",
            "service-subchart"
        ],
        "{out}"
    );
    // The rootchart Service werf deploys (weight 0) before the subchart's Deployment (weight 10).
    assert!(v["lost"].as_array().expect("lost").iter().any(|l| {
        l["before"]["name"] == "service-rootchart" && l["after"]["name"] == "deployment-subchart"
    }));
    let manual = reasons(&v, "manual");
    assert_eq!(manual.len(), 1, "{out}");
    assert!(manual[0].contains("werf.io/deploy-dependency-subchart"));
    assert_eq!(
        v["manual"][0]["file"],
        "complex/charts/subchart/charts/subsubchart/templates/deployment.yaml"
    );
    snapshot_settings().bind(|| {
        insta::assert_snapshot!("migrate_werf_complex_diff", diff);
        insta::assert_snapshot!("migrate_werf_complex_report", report);
    });
}

/// The errors of rules CS0xx–CS3xx `lint` finds in a chart: (code, message).
fn lint_errors(helm: &Path, dir: &Path, chart: &str) -> Vec<(String, String)> {
    let (code, out, err) = run(chartseq()
        .current_dir(dir)
        .env("CHARTSEQ_HELM", helm)
        .args([
            "lint",
            chart,
            "--select",
            "CS0,CS1,CS2,CS3",
            "--format",
            "json",
            "--fail-on",
            "never",
        ]));
    assert_eq!(code, 0, "{chart}: {out}{err}");
    json(&out)["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| (d["code"].to_string(), d["message"].to_string()))
        .collect()
}

/// `--write` applies the diff; migrating again changes nothing; the result lints clean of
/// CS0xx–CS3xx errors (the sync-waves example keeps the one it had: an object with only a
/// `generateName`, which Helm cannot install either; the draft example keeps its two draft
/// keys with two `/`, which the API server refuses (CS204) until `--drop-source-annotations`
/// removes them).
#[test]
fn migrated_charts_are_idempotent_and_lint_clean() {
    let Some(helm) = tool("helm") else { return };
    for (rel, from, exit, errors_before) in [
        ("migrate/argo/operators-installer", "argo", 0, 0),
        // Its Sync hooks' names are manual edits: exit 1.
        ("migrate/argo/sync-waves", "argo", 1, 1),
        ("migrate/werf/complex", "werf", 1, 0),
        ("migrate/kots/phases", "kots", 1, 0),
        ("migrate/draft/layers", "draft", 1, 2),
        ("migrate/kapp/kontinuous", "kapp", 1, 0),
        ("migrate/kapp/defaults", "kapp", 0, 0),
    ] {
        let (tmp, chart) = copy(rel);
        let before = lint_errors(&helm, tmp.path(), &chart);
        assert_eq!(before.len(), errors_before, "{rel}: {before:?}");
        let (code, diff, report) = migrate(&helm, tmp.path(), &[&chart, "--from", from, "--write"]);
        assert_eq!(code, exit, "{rel}: {report}");
        assert!(!diff.is_empty());
        let (code, again, report) = migrate(&helm, tmp.path(), &[&chart, "--from", from]);
        assert_eq!(code, exit, "{rel}: {report}");
        assert_eq!(again, "", "{rel}: migrating a migrated chart changed it");
        assert_eq!(lint_errors(&helm, tmp.path(), &chart), before, "{rel}");
    }
}

#[test]
fn source_annotations_are_dropped_on_request() {
    let Some(helm) = tool("helm") else { return };
    let (tmp, chart) = copy("migrate/argo/operators-installer");
    let (code, diff, report) = migrate(
        &helm,
        tmp.path(),
        &[&chart, "--from", "argo", "--drop-source-annotations"],
    );
    assert_eq!(code, 0, "{report}");
    assert_eq!(
        diff.matches("-    argocd.argoproj.io/sync-wave:").count(),
        9,
        "{diff}"
    );
    assert!(diff.contains("+    helm.sh/resource-group: \"wave-n60\""));
}

#[test]
fn auto_detects_the_dialect_or_finds_nothing() {
    let Some(helm) = tool("helm") else { return };
    let (tmp, chart) = copy("migrate/argo/operators-installer");
    let (code, out, _) = migrate(
        &helm,
        tmp.path(),
        &[&chart, "--from", "auto", "--format", "json"],
    );
    assert_eq!(code, 0);
    assert_eq!(json(&out)["from"], "argo");
    // A HIP-0025 chart without foreign annotations: nothing to change.
    let (tmp, chart) = copy("charts/platform");
    let (code, diff, report) = migrate(&helm, tmp.path(), &[&chart, "--from", "auto"]);
    assert_eq!((code, diff.as_str()), (0, ""), "{report}");
    assert!(report.contains("nothing to migrate"), "{report}");
}

#[test]
fn what_cannot_be_migrated_exits_2() {
    let Some(helm) = tool("helm") else { return };
    let stream: PathBuf = fixture("charts/platform.rendered.yaml");
    let (code, _, err) = migrate(
        &helm,
        &crate::root(),
        &[&stream.to_string_lossy(), "--from", "argo"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("give it a chart directory"), "{err}");
    let (code, _, err) = migrate(&helm, &crate::root(), &["no/such/chart", "--from", "werf"]);
    assert_eq!(code, 2, "{err}");
}

/// Argo CD's own sync-waves example: `Sync` hooks become grouped resources (with a note on
/// their immutable spec), a Job others wait for gets completion readiness, unannotated
/// resources (wave 0) get a group in their metadata, and documents of one template are told
/// apart by kind and name even though helm prints them in kind order.
#[test]
fn argo_sync_waves_example_groups_sync_hooks() {
    let Some(helm) = tool("helm") else { return };
    let (tmp, chart) = copy("migrate/argo/sync-waves");
    let (code, diff, report) = migrate(&helm, tmp.path(), &[&chart, "--from", "argo"]);
    // The Sync hooks' names are manual edits, left to do: exit 1.
    assert_eq!(code, 1, "{report}");
    assert_eq!(
        diff.matches("+  annotations:\n+    helm.sh/resource-group: \"wave-0\"\n   name: backend")
            .count(),
        2,
        "{diff}"
    );
    assert!(
        !diff.contains("+      annotations:"),
        "a pod template was edited: {diff}"
    );
    assert!(report.contains("kept: 6 ordering constraints"), "{report}");
    assert!(
        report.contains("name: maint-page-up-{{ .Release.Revision }}"),
        "{report}"
    );
    // generateName objects are not read (no name): listed, not silently dropped.
    assert!(report.contains("could not be read"), "{report}");
    snapshot_settings().bind(|| {
        insta::assert_snapshot!("migrate_argo_sync_waves_diff", diff);
        insta::assert_snapshot!("migrate_argo_sync_waves_report", report);
    });
}

/// cluster-api-operator: keys written quoted get quoted keys; a Deployment whose annotations
/// come from values is a manual edit, the chain closes over its missing group, and the proof
/// says what that costs (and that HIP-0025 now waits for the providers before the unsequenced
/// operator). With its default values the same waves are Helm hooks already: nothing to do.
#[test]
fn argo_cluster_api_operator_manual_edit_and_hooks() {
    let Some(helm) = tool("helm") else { return };
    let (tmp, chart) = copy("migrate/argo/cluster-api-operator");
    let values = format!("{chart}/argo-values.yaml");
    let (code, diff, report) = migrate(
        &helm,
        tmp.path(),
        &[&chart, "-f", &values, "--from", "argo"],
    );
    assert_eq!(code, 1, "{report}");
    assert!(
        diff.contains("+    \"helm.sh/resource-group\": \"wave-1\"\n"),
        "{diff}"
    );
    // wave-0 has no member that can be edited: wave-1 depends on nothing rather than on it.
    assert!(!diff.contains("wave-0"), "{diff}");
    let (_, out, _) = migrate(
        &helm,
        tmp.path(),
        &[&chart, "-f", &values, "--from", "argo", "--format", "json"],
    );
    let v = json(&out);
    assert_eq!(
        v["manual"][0]["file"],
        "cluster-api-operator/templates/deployment.yaml"
    );
    assert_eq!(v["manual"][0]["snippet"], "helm.sh/resource-group: wave-0");
    assert!(
        v["manual"][0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("from the value `deploymentAnnotations`")),
        "{out}"
    );
    assert_eq!(v["lost"].as_array().map(Vec::len), Some(2), "{out}");
    assert_eq!(v["stricter"].as_array().map(Vec::len), Some(2), "{out}");
    snapshot_settings().bind(|| {
        insta::assert_snapshot!("migrate_argo_cluster_api_operator_diff", diff);
        insta::assert_snapshot!("migrate_argo_cluster_api_operator_json", out);
    });
    // The manual edit made (the group in the value): the Namespaces Argo CD applies after the
    // operator's Deployment (wave 1 after wave 0, none of the Deployment in them) wait for it
    // in HIP-0025 too, proved on the re-rendered plan: nothing lost.
    let grouped = format!("{chart}/grouped-values.yaml");
    let (code, diff, report) = migrate(
        &helm,
        tmp.path(),
        &[&chart, "-f", &values, "-f", &grouped, "--from", "argo"],
    );
    assert_eq!(code, 0, "{report}");
    assert!(report.contains("lost: 0"), "{report}");
    assert_eq!(
        diff.matches("\"helm.sh/depends-on/resource-groups\": '[\"wave-0\"]'")
            .count(),
        2,
        "{diff}"
    );
    let (code, diff, report) = migrate(
        &helm,
        tmp.path(),
        &[
            &chart,
            "--set",
            "core.cluster-api.version=v1.7.0",
            "--from",
            "argo",
        ],
    );
    assert_eq!((code, diff.as_str()), (0, ""), "{report}");
    assert!(report.contains("kept: 2 ordering constraints"), "{report}");
}

/// KOTS: phases become a chain, split after the waited `StatefulSet` (KOTS holds back what it
/// applies after it); one `.status` property pair becomes a readiness pair and the AND-ed
/// second pair is lost; the CRD's deletion phase 1 (deleted after everything else) is kept, as
/// HIP-0025 installs it first and uninstalls in reverse; waits KOTS never made are stricter.
#[test]
fn kots_phases_split_after_waits() {
    let Some(helm) = tool("helm") else { return };
    let (tmp, chart) = copy("migrate/kots/phases");
    let (code, diff, report) = migrate(&helm, tmp.path(), &[&chart, "--from", "kots"]);
    assert_eq!(code, 1, "{report}");
    assert!(
        report.contains(
            "phases: phase-n1 -> phase-0 -> phase-0-after-database -> phase-1 -> phase-2"
        ),
        "{report}"
    );
    assert!(
        diff.contains("+    helm.sh/resource-group: 'phase-0'\n"),
        "{diff}"
    );
    assert!(
        diff.contains("+    helm.sh/readiness-success: '[\"{.status.ready} == true\"]'"),
        "{diff}"
    );
    let (_, out, _) = migrate(
        &helm,
        tmp.path(),
        &[&chart, "--from", "kots", "--format", "json"],
    );
    let v = json(&out);
    let lost = reasons(&v, "lost");
    assert_eq!(lost.len(), 1, "{out}");
    assert!(!lost.iter().any(|r| r.contains("kots.io/deletion-phase")));
    assert!(
        lost.iter()
            .any(|r| r.contains("only `.status.ready=true` is kept"))
    );
    let stricter: Vec<&str> = v["stricter"]
        .as_array()
        .expect("stricter")
        .iter()
        .filter_map(|s| s["resource"]["name"].as_str())
        .collect();
    assert_eq!(
        stricter,
        ["tasks.example.com", "database", "migrate"],
        "{out}"
    );
    snapshot_settings().bind(|| {
        insta::assert_snapshot!("migrate_kots_phases_diff", diff);
        insta::assert_snapshot!("migrate_kots_phases_report", report);
    });
}

/// The draft HIP: keys renamed, list values rewritten as JSON arrays in strings (a
/// comma-separated string included), `resource-ready` as a readiness pair; the per-resource
/// timeout is lost; `--drop-source-annotations` removes the superseded keys it carried over.
#[test]
fn draft_keys_are_renamed_and_rewritten() {
    let Some(helm) = tool("helm") else { return };
    let (tmp, chart) = copy("migrate/draft/layers");
    let (code, diff, report) = migrate(
        &helm,
        tmp.path(),
        &[&chart, "--from", "draft", "--drop-source-annotations"],
    );
    assert_eq!(code, 1, "{report}");
    assert!(
        diff.contains("+    helm.sh/depends-on/resource-groups: '[\"migrate\", \"queue\"]'"),
        "{diff}"
    );
    assert!(
        diff.contains("+    helm.sh/readiness-success: '[\"{.succeeded} == 1\"]'"),
        "{diff}"
    );
    assert!(diff.contains("-    helm.sh/layer: app"), "{diff}");
    // Not carried over, so kept: HIP-0025 has no per-resource timeout.
    assert!(!diff.contains("-    helm.sh/readiness-timeout"), "{diff}");
    assert!(report.contains("kept: 3 ordering constraints"), "{report}");
    assert!(
        report.contains("helm.sh/readiness-timeout: HIP-0025 has one --readiness-timeout"),
        "{report}"
    );
    snapshot_settings().bind(|| {
        insta::assert_snapshot!("migrate_draft_layers_diff", diff);
    });
}

/// kapp as kontinuous uses it: one group per step of kapp's plan, a DAG from the upsert rules,
/// the unannotated `ConfigMap` (which kapp's default rules apply first) in `kapp-defaults`, the
/// gating Job with completion readiness; `exists` is lost, and the Namespace, which kapp
/// orders against nothing here (the objects are in the release namespace), stays unsequenced.
#[test]
fn kapp_rules_become_a_dag_of_classes() {
    let Some(helm) = tool("helm") else { return };
    let (tmp, chart) = copy("migrate/kapp/kontinuous");
    let (code, diff, report) = migrate(&helm, tmp.path(), &[&chart, "--from", "kapp"]);
    assert_eq!(code, 1, "{report}");
    assert!(diff.contains(
        "+    helm.sh/depends-on/resource-groups: '[\"kapp-defaults\", \"kapp-kontinuous-migrate\"]'"
    ), "{diff}");
    assert!(
        diff.contains("+    helm.sh/resource-group: kapp-kontinuous-pg"),
        "{diff}"
    );
    assert_eq!(
        diff.matches("helm.sh/readiness-success").count(),
        1,
        "{diff}"
    );
    assert!(report.contains("kept: 5 ordering constraints"), "{report}");
    assert!(report.contains("kapp.k14s.io/exists"), "{report}");
    let (code, out, _) = migrate(
        &helm,
        tmp.path(),
        &[&chart, "--from", "auto", "--format", "json"],
    );
    assert_eq!(code, 1);
    assert_eq!(json(&out)["from"], "kapp");
    snapshot_settings().bind(|| {
        insta::assert_snapshot!("migrate_kapp_kontinuous_diff", diff);
    });
}

/// `fixtures/migrate/kapp/defaults`: every order comes from kapp's default rules (CRD before
/// its custom resource, a Namespace before what is in it, the pod-related `ConfigMap` before
/// the namespaced rest); the migrated groups are kapp's own steps, each depending on the steps
/// kapp makes it wait for, so nothing is lost, and the `IngressClass` kapp orders against
/// nothing stays unsequenced.
#[test]
fn kapp_default_rules_become_groups() {
    let Some(helm) = tool("helm") else { return };
    let (tmp, chart) = copy("migrate/kapp/defaults");
    let (code, out, _) = migrate(
        &helm,
        tmp.path(),
        &[&chart, "--from", "kapp", "--format", "json"],
    );
    assert_eq!(code, 0, "{out}");
    let v = json(&out);
    assert_eq!(v["lost"].as_array().map(Vec::len), Some(0), "{out}");
    let (code, diff, report) = migrate(&helm, tmp.path(), &[&chart, "--from", "kapp"]);
    assert_eq!(code, 0, "{report}");
    assert!(
        report.contains(
            "  defaults: kapp-shop-crds, kapp-shop-namespace, kapp-defaults, kapp-shop-widget, kapp-app\n"
        ),
        "{report}"
    );
    assert!(
        report.contains("  kept: 6 ordering constraints\n"),
        "{report}"
    );
    for (file, group, on) in [
        ("crd.yaml", "kapp-shop-crds", None),
        ("namespace.yaml", "kapp-shop-namespace", None),
        (
            "configmap.yaml",
            "\"kapp-defaults\"",
            Some(r#"["kapp-shop-namespace"]"#),
        ),
        (
            "widget.yaml",
            "kapp-shop-widget",
            Some(r#"["kapp-defaults", "kapp-shop-crds", "kapp-shop-namespace"]"#),
        ),
        (
            "deployment.yaml",
            "\"kapp-app\"",
            Some(r#"["kapp-defaults", "kapp-shop-namespace"]"#),
        ),
    ] {
        let section = diff
            .split("--- a/templates/")
            .find(|s| s.starts_with(file))
            .unwrap_or_else(|| panic!("{file} is not edited: {diff}"));
        assert!(
            section.contains(&format!("+    helm.sh/resource-group: {group}\n")),
            "{file}: {diff}"
        );
        match on {
            Some(on) => assert!(
                section.contains(&format!(
                    "+    helm.sh/depends-on/resource-groups: '{on}'\n"
                )),
                "{file}: {diff}"
            ),
            None => assert!(!section.contains("depends-on"), "{file}: {diff}"),
        }
    }
    assert!(!diff.contains("ingressclass.yaml"), "{diff}");
}

/// A path that does not exist is named as such, not as a chart of the wrong kind.
#[test]
fn a_missing_path_is_named_as_missing() {
    let (code, _, err) = run(chartseq().args(["migrate", "no/such/chart", "--from", "argo"]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("chartseq: error: no/such/chart: no such path"),
        "{err}"
    );
}

/// Argo CD applies the hooks of one phase and wave kind by kind (gitops-engine's `runTasks`);
/// Helm runs hooks by weight, then name. With the wave as weight, the Job `a-migrate` would run
/// before the `ServiceAccount` and `ConfigMap` it uses: each kind gets a weight of its own, in
/// Argo CD's order, the next wave after them, and the proof keeps every kind-before-kind pair.
#[test]
fn argo_hooks_of_one_wave_keep_argos_kind_order() {
    let Some(helm) = tool("helm") else { return };
    let (tmp, chart) = copy("migrate/argo/hook-kinds");
    let (code, out, report) = migrate(
        &helm,
        tmp.path(),
        &[&chart, "--from", "argo", "--format", "json"],
    );
    assert_eq!(code, 0, "{report}");
    let v = json(&out);
    assert!(reasons(&v, "lost").is_empty(), "{out}");
    let (_, diff, report) = migrate(&helm, tmp.path(), &[&chart, "--from", "argo"]);
    assert!(report.contains("kept: 7 ordering constraints"), "{report}");
    let weights: Vec<&str> = diff
        .lines()
        .filter_map(|l| l.strip_prefix("+    helm.sh/hook-weight: "))
        .collect();
    // a-migrate (Job), z-settings (ConfigMap), m-runner (ServiceAccount), b-seed (wave 1).
    assert_eq!(weights, ["\"2\"", "\"1\"", "\"0\"", "\"3\""], "{diff}");
}

/// A manual edit pending is work left: `migrate` exits 1 even when the proof loses nothing,
/// and its counts are worded for one (`1 file`, `1 ordering constraint`).
/// `fixtures/migrate/argo/values-annotations`: one wave written in the template, the other
/// from values.
#[test]
fn a_pending_manual_edit_exits_1() {
    let Some(helm) = tool("helm") else { return };
    let (tmp, chart) = copy("migrate/argo/values-annotations");
    let (code, diff, report) = migrate(&helm, tmp.path(), &[&chart, "--from", "argo"]);
    assert_eq!(code, 1, "{report}");
    assert!(
        diff.contains("+    helm.sh/resource-group: \"wave-0\""),
        "{diff}"
    );
    assert!(report.contains("Manual edits (1):"), "{report}");
    assert!(report.contains("  lost: 0\n"), "{report}");
    assert!(report.contains(", in 1 file ("), "{report}");
    assert!(
        report.contains("  kept: 1 ordering constraint\n"),
        "{report}"
    );
}

/// A manual edit names the line a person edits, not the rendered stream: the helper's line in
/// `_helpers.tpl` when a helper writes the annotation (`fixtures/migrate/argo/helper-annotations`),
/// the values file's line when a template inserts it from values
/// (`fixtures/migrate/argo/values-annotations`), the template's line that puts it in named in
/// the reason; in the text report and in JSON.
#[test]
fn a_manual_edit_names_the_helper_or_values_line() {
    let Some(helm) = tool("helm") else { return };
    for (fixture, file, line, through) in [
        (
            "migrate/argo/helper-annotations",
            "helper-annotations/templates/_helpers.tpl",
            3,
            "the helper `helper-annotations.worker` writes it and helper-annotations/templates/worker.yaml:6 includes it",
        ),
        (
            "migrate/argo/values-annotations",
            "values-annotations/values.yaml",
            3,
            "values-annotations/values.yaml sets it and values-annotations/templates/worker.yaml:6 inserts it",
        ),
    ] {
        let (tmp, chart) = copy(fixture);
        let (code, _, report) = migrate(&helm, tmp.path(), &[&chart, "--from", "argo"]);
        assert_eq!(code, 1, "{report}");
        assert!(
            report.contains(&format!("  {file}:{line}: ConfigMap/worker: ")),
            "{report}"
        );
        let (_, out, _) = migrate(
            &helm,
            tmp.path(),
            &[&chart, "--from", "argo", "--format", "json"],
        );
        let v = json(&out);
        assert_eq!(v["manual"].as_array().map(Vec::len), Some(1), "{out}");
        assert_eq!(v["manual"][0]["file"], file, "{out}");
        assert_eq!(v["manual"][0]["line"], line, "{out}");
        assert!(
            v["manual"][0]["reason"]
                .as_str()
                .is_some_and(|r| r.contains(through)),
            "{out}"
        );
    }
}

/// `--strict`: exit 0 only when nothing is lost and no manual edit is pending (operators-installer
/// keeps every wave); else exit 1 and standard error ends with every lost order and pending edit,
/// in JSON too (werf's e2e chart loses nine, the values-annotations chart loses none but leaves
/// one edit). Without it the exit codes are the same and that closing list is not written.
#[test]
fn strict_passes_only_a_complete_migration_and_lists_what_fails_it() {
    let Some(helm) = tool("helm") else { return };
    let (tmp, chart) = copy("migrate/argo/operators-installer");
    let (code, _, report) = migrate(&helm, tmp.path(), &[&chart, "--from", "argo", "--strict"]);
    assert_eq!(code, 0, "{report}");
    assert!(!report.contains("--strict"), "{report}");

    let (tmp, chart) = copy("migrate/werf/complex");
    for format in ["text", "json"] {
        let args = [chart.as_str(), "--from", "werf", "--format", format];
        let (plain, out, report) = migrate(&helm, tmp.path(), &args);
        assert_eq!(plain, 1, "{report}");
        assert!(!report.contains("--strict"), "{report}");
        let (code, strict_out, strict) =
            migrate(&helm, tmp.path(), &[&args[..], &["--strict"]].concat());
        assert_eq!(code, 1, "{strict}");
        assert_eq!(
            strict_out, out,
            "--strict changes only the exit gate's message"
        );
        let tail = &strict[strict.find("--strict: not complete").expect(&strict)..];
        assert!(
            tail.starts_with("--strict: not complete: 9 orders lost, 1 manual edit pending\n"),
            "{tail}"
        );
        assert_eq!(tail.matches("\n  lost: ").count(), 9, "{tail}");
        assert!(
            tail.contains(
                "  lost: Deployment/deployment-rootchart before Deployment/deployment-subchart\n"
            ),
            "{tail}"
        );
        assert!(
            tail.ends_with(
                "  manual edit: complex/charts/subchart/charts/subsubchart/templates/deployment.yaml:6\n"
            ),
            "{tail}"
        );
    }

    let (tmp, chart) = copy("migrate/argo/values-annotations");
    let (code, _, report) = migrate(&helm, tmp.path(), &[&chart, "--from", "argo", "--strict"]);
    assert_eq!(code, 1, "{report}");
    assert!(
        report.contains("--strict: not complete: 0 orders lost, 1 manual edit pending\n"),
        "{report}"
    );
}

/// `fixtures/migrate/argo/sibling-subcharts`: Argo CD applies all of subchart `db` (wave −1)
/// before subchart `web` (wave 1). No group can say that across charts; `depends-on` on `web`'s
/// entry in the parent's `Chart.yaml` can, and migrate asks for it (it edits templates only).
/// Once it is written, the proof keeps both orders and `--strict` passes.
#[test]
fn sibling_subcharts_applied_one_after_the_other_ask_for_depends_on() {
    let Some(helm) = tool("helm") else { return };
    let (tmp, chart) = copy("migrate/argo/sibling-subcharts");
    let (code, diff, report) = migrate(&helm, tmp.path(), &[&chart, "--from", "argo"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(diff, "");
    assert!(
        report.contains(
            "  sibling-subcharts/Chart.yaml:1: Argo CD applies every resource of subchart `db` before those of sibling-subcharts/web: HIP-0025 keeps that with `depends-on` in its `dependencies` entry for `web`"
        ),
        "{report}"
    );
    assert!(
        report.contains(
            "        - name: web\n          version: 0.1.0\n          depends-on: [db]\n"
        ),
        "{report}"
    );
    assert!(report.contains("  lost: 2\n"), "{report}");
    let chart_yaml = tmp.path().join(&chart).join("Chart.yaml");
    let text = std::fs::read_to_string(&chart_yaml).expect("read Chart.yaml");
    let edited = text.replace(
        "  - name: web\n    version: 0.1.0\n",
        "  - name: web\n    version: 0.1.0\n    depends-on: [db]\n",
    );
    assert_ne!(edited, text);
    std::fs::write(&chart_yaml, edited).expect("write Chart.yaml");
    let (code, _, report) = migrate(&helm, tmp.path(), &[&chart, "--from", "argo", "--strict"]);
    assert_eq!(code, 0, "{report}");
    assert!(
        report.contains("  kept: 2 ordering constraints\n"),
        "{report}"
    );
    assert!(!report.contains("Manual edits"), "{report}");
}

/// `fixtures/migrate/werf/delete-dependency`: a werf delete dependency is an uninstall order;
/// HIP-0025 uninstalls in the exact reverse of its install order, so the proof keeps the one
/// whose target the migrated chart installs later (`settings` waits for `app` to be gone) and
/// loses the one against the install order (`app` waits for `cache`, installed before it).
#[test]
fn werf_delete_dependencies_are_kept_where_the_reverse_install_order_keeps_them() {
    let Some(helm) = tool("helm") else { return };
    let (tmp, chart) = copy("migrate/werf/delete-dependency");
    let (code, out, _) = migrate(
        &helm,
        tmp.path(),
        &[&chart, "--from", "werf", "--format", "json"],
    );
    assert_eq!(code, 1, "{out}");
    let v = json(&out);
    let lost = v["lost"].as_array().expect("a list");
    assert_eq!(lost.len(), 1, "{out}");
    assert_eq!(lost[0]["before"]["name"], "cache", "{out}");
    assert_eq!(lost[0]["after"]["name"], "app", "{out}");
    let reason = lost[0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("werf.io/delete-dependency-cache: werf deletes Deployment/app only once Service/cache is gone; HIP-0025 uninstalls in the exact reverse of its install order"),
        "{reason}"
    );
    assert!(
        !reasons(&v, "lost")
            .iter()
            .any(|r| r.contains("delete-dependency-app")),
        "{out}"
    );
    let (_, _, report) = migrate(&helm, tmp.path(), &[&chart, "--from", "werf"]);
    assert!(
        report.contains("  kept: 3 ordering constraints\n"),
        "{report}"
    );
}

/// `fixtures/migrate/kapp/delete-rules`: `delete … deleting` rules are uninstall orders; the one
/// HIP-0025's uninstall (the reverse of the migrated install order) keeps is kept (`app`
/// deleted before `db`), the other is lost (`cache` deleted before `app`, installed after it).
#[test]
fn kapp_delete_rules_are_kept_where_the_reverse_install_order_keeps_them() {
    let Some(helm) = tool("helm") else { return };
    let (tmp, chart) = copy("migrate/kapp/delete-rules");
    let (code, out, _) = migrate(
        &helm,
        tmp.path(),
        &[&chart, "--from", "kapp", "--format", "json"],
    );
    assert_eq!(code, 1, "{out}");
    let v = json(&out);
    let lost = v["lost"].as_array().expect("a list");
    assert_eq!(lost.len(), 1, "{out}");
    assert_eq!(lost[0]["before"]["name"], "cache", "{out}");
    assert_eq!(lost[0]["after"]["name"], "app", "{out}");
    let (_, _, report) = migrate(&helm, tmp.path(), &[&chart, "--from", "kapp"]);
    assert!(
        report.contains("  kept: 3 ordering constraints\n"),
        "{report}"
    );
}

/// `-n` is Argo CD's destination namespace for `migrate --from argo` too: the Namespace of
/// that name joins the wave of the first object Argo CD syncs in it (here a `ClusterRole`, whose
/// written namespace Argo CD clears), and the migrated chart keeps that order; without `-n`
/// it keeps its own wave. The chart is the templates of `fixtures/dialects/argo/destination.yaml`.
#[test]
fn argo_destination_namespace_is_migrated_with_n() {
    let Some(helm) = tool("helm") else { return };
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let chart = tmp.path().join("shop");
    std::fs::create_dir_all(chart.join("templates")).expect("create");
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: shop\nversion: 0.1.0\n",
    )
    .expect("write Chart.yaml");
    let stream = std::fs::read_to_string(fixture("dialects/argo/destination.yaml"))
        .expect("the fixture reads");
    for doc in stream.split("---\n").skip(1) {
        let (source, body) = doc.split_once('\n').expect("a Source line");
        let file = source
            .strip_prefix("# Source: shop/")
            .expect("a template of shop");
        std::fs::write(chart.join(file), body).expect("write a template");
    }
    let groups = |args: &[&str]| {
        let mut all = vec!["shop", "--from", "argo"];
        all.extend_from_slice(args);
        let (code, out, err) = migrate(&helm, tmp.path(), &all);
        assert_eq!(code, 0, "{out}\n{err}");
        err.lines()
            .find_map(|l| l.trim().strip_prefix("shop: ").map(str::to_owned))
            .unwrap_or_else(|| panic!("no groups line:\n{err}"))
    };
    assert_eq!(groups(&[]), "wave-n1 -> wave-1 -> wave-2 -> wave-3");
    assert_eq!(groups(&["-n", "shop"]), "wave-n1 -> wave-1 -> wave-2");
}
