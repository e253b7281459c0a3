//! The reference implementation's sequenced-uninstall tests (`caretak3r/helm`,
//! `pkg/action/uninstall_sequenced_test.go`), run against the test API server: each test
//! names the test it comes from. The reference records delete calls on a fake client; here the
//! server's log shows each delete and when the object was gone.

use std::fmt::Write as _;

use super::support::{Env, start};

/// The reference's `configMapManifest(name, annotations)` rendered from `source`.
fn cm(source: &str, name: &str, annotations: &[(&str, &str)]) -> String {
    let mut text = format!(
        "---\n# Source: {source}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"
    );
    if !annotations.is_empty() {
        text.push_str("  annotations:\n");
        for (k, v) in annotations {
            let _ = writeln!(text, "    {k}: '{v}'");
        }
    }
    text
}

/// Applies `stream` as release `r` (with `extra` arguments), then uninstalls it; returns the
/// `ConfigMap`s in the order they were deleted and the uninstall's output.
fn install_then_uninstall(env: &Env, stream: &str, extra: &[&str]) -> (Vec<String>, String) {
    let path = env.stream("rendered.yaml", stream);
    let mut args = vec!["apply", path.as_str(), "--release", "r", "-n", "default"];
    args.extend_from_slice(extra);
    let (code, out, err) = env.run(&args);
    assert_eq!(code, 0, "{out}\n{err}");
    let before = env.log().len();
    let (code, out, err) = env.run(&["uninstall", "r", "-n", "default"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let deleted = env.log()[before..]
        .iter()
        .filter(|e| e.verb == "delete" && e.kind == "ConfigMap" && !e.dry_run)
        .map(|e| e.name.clone())
        .collect();
    (deleted, out)
}

/// Each object is gone before the next one's delete is sent (a step waits gone).
fn each_gone_before_the_next(env: &Env, order: &[&str]) {
    for pair in order.windows(2) {
        let gone = env
            .last_at("gone", "ConfigMap", pair[0])
            .unwrap_or_else(|| panic!("{} never gone", pair[0]));
        let next = env
            .last_at("delete", "ConfigMap", pair[1])
            .unwrap_or_else(|| panic!("{} never deleted", pair[1]));
        assert!(
            gone <= next,
            "{} deleted before {} was gone",
            pair[1],
            pair[0]
        );
    }
}

const GROUPS: &str = "helm.sh/resource-group";
const DEPENDS: &str = "helm.sh/depends-on/resource-groups";

/// Source: `pkg/action/uninstall_sequenced_test.go`, `TestUninstall_Sequenced_ReverseOrder`.
#[test]
fn reference_uninstall_sequenced_reverse_order() {
    let env = start("");
    let stream = cm(
        "c/templates/database.yaml",
        "database",
        &[(GROUPS, "database")],
    ) + &cm(
        "c/templates/app.yaml",
        "app",
        &[(GROUPS, "app"), (DEPENDS, r#"["database"]"#)],
    );
    let (deleted, _) = install_then_uninstall(&env, &stream, &[]);
    assert_eq!(deleted, ["app", "database"]);
    each_gone_before_the_next(&env, &["app", "database"]);
}

/// Source: `pkg/action/uninstall_sequenced_test.go`, `TestUninstall_Sequenced_WithSubcharts`
/// (and `…_StorageDecodedChart_NestedSubcharts`: chartseq plans from the stored manifest's
/// `# Source:` paths too): the parent's own resources, then the subchart, then its subchart.
#[test]
fn reference_uninstall_sequenced_with_subcharts() {
    let env = start("");
    let stream = cm(
        "parent/charts/bar/charts/nginx/templates/nginx.yaml",
        "nginx",
        &[],
    ) + &cm("parent/charts/bar/templates/bar.yaml", "bar", &[])
        + &cm("parent/templates/parent.yaml", "parent", &[]);
    let (deleted, _) = install_then_uninstall(&env, &stream, &[]);
    assert_eq!(deleted, ["parent", "bar", "nginx"]);
    each_gone_before_the_next(&env, &["parent", "bar", "nginx"]);
}

/// Source: `pkg/action/uninstall_sequenced_test.go`,
/// `TestUninstall_Sequenced_DeletesVendoredSubchart`: a subchart in `charts/` that
/// `Chart.yaml` does not declare is deleted too, after the parent's resources and before the
/// declared subcharts (the exact reverse of install).
#[test]
fn reference_uninstall_sequenced_deletes_vendored_subchart() {
    let env = start("");
    let chart = env.dir.path().join("parent");
    std::fs::create_dir_all(chart.join("templates")).expect("chart dir");
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v3\nname: parent\nversion: 0.1.0\ndependencies:\n- {name: database, version: 0.1.0}\n",
    )
    .expect("Chart.yaml");
    for sub in ["database", "vendored"] {
        let dir = chart.join("charts").join(sub);
        std::fs::create_dir_all(dir.join("templates")).expect("subchart dir");
        std::fs::write(
            dir.join("Chart.yaml"),
            format!("apiVersion: v3\nname: {sub}\nversion: 0.1.0\n"),
        )
        .expect("Chart.yaml");
    }
    let stream = cm(
        "parent/charts/database/templates/database.yaml",
        "database",
        &[],
    ) + &cm(
        "parent/charts/vendored/templates/vendored.yaml",
        "vendored",
        &[],
    ) + &cm("parent/templates/parent.yaml", "parent", &[]);
    let chart = chart.to_str().expect("UTF-8").to_owned();
    // The undeclared subchart is a lint warning (CS104), not an error.
    let (deleted, _) = install_then_uninstall(&env, &stream, &["--chart", &chart]);
    assert_eq!(deleted, ["parent", "vendored", "database"]);
}

/// Source: `pkg/action/uninstall_sequenced_test.go`, `TestUninstall_Sequenced_KeepPolicy`:
/// the kept object is never deleted and is named in the result.
#[test]
fn reference_uninstall_sequenced_keep_policy() {
    let env = start("");
    let stream = cm(
        "c/templates/database-live.yaml",
        "database-live",
        &[(GROUPS, "database")],
    ) + &cm(
        "c/templates/database-keep.yaml",
        "database-keep",
        &[(GROUPS, "database"), ("helm.sh/resource-policy", "keep")],
    ) + &cm(
        "c/templates/app.yaml",
        "app",
        &[(GROUPS, "app"), (DEPENDS, r#"["database"]"#)],
    );
    let (deleted, out) = install_then_uninstall(&env, &stream, &[]);
    assert_eq!(deleted, ["app", "database-live"]);
    assert!(env.get("ConfigMap", "database-keep").is_some());
    assert!(
        out.contains("kept (helm.sh/resource-policy: keep):\n  ConfigMap/database-keep"),
        "{out}"
    );
}

/// Source: `pkg/action/uninstall_sequenced_test.go`, `TestUninstall_Sequenced_Hooks`: the
/// pre-delete hook runs before the first delete, the post-delete hook after the last object
/// is gone.
#[test]
fn reference_uninstall_sequenced_hooks() {
    let env = start("");
    let hook = |name: &str, event: &str| {
        cm(
            &format!("c/templates/{name}.yaml"),
            name,
            &[
                ("helm.sh/hook", event),
                ("helm.sh/hook-delete-policy", "hook-succeeded"),
            ],
        )
    };
    let stream = cm(
        "c/templates/database.yaml",
        "database",
        &[(GROUPS, "database")],
    ) + &cm(
        "c/templates/app.yaml",
        "app",
        &[(GROUPS, "app"), (DEPENDS, r#"["database"]"#)],
    ) + &hook("pre-hook", "pre-delete")
        + &hook("post-hook", "post-delete");
    let path = env.stream("rendered.yaml", &stream);
    let (code, out, err) = env.run(&["apply", &path, "--release", "r", "-n", "default"]);
    assert_eq!(code, 0, "{out}\n{err}");
    // Install runs neither delete hook.
    assert!(env.at("apply", "ConfigMap", "pre-hook").is_none());
    let (code, out, err) = env.run(&["uninstall", "r", "-n", "default"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let pre = env.position("apply", "ConfigMap", "pre-hook");
    let app = env.position("delete", "ConfigMap", "app");
    let database_gone = env.position("gone", "ConfigMap", "database");
    let post = env.position("apply", "ConfigMap", "post-hook");
    assert!(pre < app && database_gone < post, "{:#?}", env.log());
}

/// Source: `pkg/action/uninstall_sequenced_test.go`, `TestUninstall_Sequenced_DryRun`:
/// nothing is deleted.
#[test]
fn reference_uninstall_sequenced_dry_run() {
    let env = start("");
    let stream = cm(
        "c/templates/database.yaml",
        "database",
        &[(GROUPS, "database")],
    ) + &cm(
        "c/templates/app.yaml",
        "app",
        &[(GROUPS, "app"), (DEPENDS, r#"["database"]"#)],
    );
    let path = env.stream("rendered.yaml", &stream);
    let (code, out, err) = env.run(&["apply", &path, "--release", "r", "-n", "default"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let (code, out, err) = env.run(&["uninstall", "r", "-n", "default", "--dry-run"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(env.count("delete", "ConfigMap", "app"), 0);
    assert_eq!(env.count("delete", "ConfigMap", "database"), 0);
}

/// The reference's `groupActionManifest(path, name, group, dependencies…)`, dependencies
/// under its key (`helm.sh/depends-on-resource-groups`), and `sequenceManifest(path, name)`.
fn group_cm(source: &str, name: &str, group: &str, deps: &[&str]) -> String {
    let list = serde_json::to_string(deps).expect("JSON");
    if deps.is_empty() {
        cm(source, name, &[(GROUPS, group)])
    } else {
        cm(
            source,
            name,
            &[
                (GROUPS, group),
                ("helm.sh/depends-on-resource-groups", list.as_str()),
            ],
        )
    }
}

/// `what` of `kind/a` happened before the apply of `kind/b` (a `ConfigMap` is ready once
/// applied, so its apply is when its step's wait ends).
fn before_apply(env: &Env, what: &str, a: (&str, &str), b: (&str, &str)) {
    let first = env.position(what, a.0, a.1);
    let then = env.position("apply", b.0, b.1);
    assert!(
        first < then,
        "{what} {a:?} after apply {b:?}: {:#?}",
        env.log()
    );
}

/// Source: `pkg/action/sequencing_groups_test.go`,
/// `TestGroupSequencedApply_OrderAndFailureBoundaries` ("group-only chart applies groups
/// before unsequenced resources"), with the reference's dependency key.
#[test]
fn reference_group_only_chart_applies_groups_before_unsequenced() {
    let env = start("");
    let stream = group_cm(
        "parent/templates/database.yaml",
        "database",
        "database",
        &[],
    ) + &group_cm("parent/templates/app.yaml", "app", "app", &["database"])
        + &cm("parent/templates/plain.yaml", "plain", &[]);
    let path = env.stream("rendered.yaml", &stream);
    let (code, out, err) = env.run(&["apply", &path, "--release", "r", "-n", "default"]);
    assert_eq!(code, 0, "{out}\n{err}");
    before_apply(
        &env,
        "apply",
        ("ConfigMap", "database"),
        ("ConfigMap", "app"),
    );
    before_apply(&env, "apply", ("ConfigMap", "app"), ("ConfigMap", "plain"));

    // TestGroupSequencedDelete_ExactReverseOrder: plain, app, database, each gone first.
    let before = env.log().len();
    let (code, out, err) = env.run(&["uninstall", "r", "-n", "default"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let deleted: Vec<String> = env.log()[before..]
        .iter()
        .filter(|e| e.verb == "delete" && e.kind == "ConfigMap" && !e.dry_run)
        .map(|e| e.name.clone())
        .collect();
    assert_eq!(deleted, ["plain", "app", "database"]);
    each_gone_before_the_next(&env, &["plain", "app", "database"]);
}

/// Source: `pkg/action/sequencing_groups_test.go`,
/// `TestGroupSequencedApply_OrderAndFailureBoundaries` ("subchart group batches apply before
/// parent group batches").
#[test]
fn reference_subchart_group_batches_apply_before_parent_group_batches() {
    let env = start("");
    let stream = group_cm(
        "parent/charts/child/templates/database.yaml",
        "child-database",
        "database",
        &[],
    ) + &group_cm(
        "parent/charts/child/templates/app.yaml",
        "child-app",
        "app",
        &["database"],
    ) + &group_cm(
        "parent/templates/database.yaml",
        "parent-database",
        "database",
        &[],
    ) + &group_cm(
        "parent/templates/app.yaml",
        "parent-app",
        "app",
        &["database"],
    );
    let path = env.stream("rendered.yaml", &stream);
    let (code, out, err) = env.run(&["apply", &path, "--release", "r", "-n", "default"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let order = [
        "child-database",
        "child-app",
        "parent-database",
        "parent-app",
    ];
    for pair in order.windows(2) {
        before_apply(
            &env,
            "apply",
            ("ConfigMap", pair[0]),
            ("ConfigMap", pair[1]),
        );
    }
}

/// Source: `pkg/action/sequencing_groups_test.go`,
/// `TestGroupSequencedApply_OrderAndFailureBoundaries` ("create failure prevents the next
/// batch mutation"): the database never becomes ready, so the app is never sent. (The
/// reference's fake fails the wait; here the object never becomes ready and the wait times
/// out.)
#[test]
fn reference_failure_prevents_the_next_batch_mutation() {
    let env = start("resources:\n- {kind: Deployment, name: database, never: true}\n");
    let database = "---\n# Source: parent/templates/database.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: database\n  annotations:\n    helm.sh/resource-group: database\nspec:\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec:\n      containers: [{name: db, image: postgres:16}]\n";
    let stream =
        database.to_owned() + &group_cm("parent/templates/app.yaml", "app", "app", &["database"]);
    let path = env.stream("rendered.yaml", &stream);
    let (code, out, err) = env.run(&[
        "apply",
        &path,
        "--release",
        "r",
        "-n",
        "default",
        "--readiness-timeout",
        "1s",
    ]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(env.at("apply", "Deployment", "database").is_some());
    assert!(
        env.at("apply", "ConfigMap", "app").is_none(),
        "{:#?}",
        env.log()
    );
}
