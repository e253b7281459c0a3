//! The reference implementation's sequenced-uninstall tests (`caretak3r/helm`,
//! `pkg/action/uninstall_sequenced_test.go`), run on the real control plane: each test
//! names the test it comes from. The reference records delete calls on a fake client; here the
//! API server's audit log shows each delete, and when it was done.

use std::fmt::Write as _;

use super::audit::Audit;
use super::{Ns, ok};

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
fn install_then_uninstall(ns: &Ns, stream: &str, extra: &[&str]) -> (Vec<String>, String) {
    let path = ns.file("rendered.yaml", stream);
    ok(ns.apply("r", &path, extra));
    let out = ok(ns.chartseq(&["uninstall", "r"]));
    (deleted_configmaps(&ns.audit()), out)
}

/// The `ConfigMap`s the tests deleted, in the order the server did it.
fn deleted_configmaps(audit: &Audit) -> Vec<String> {
    audit
        .deletions()
        .iter()
        .filter_map(|d| d.strip_prefix("configmaps/"))
        .map(str::to_owned)
        .collect()
}

/// A `ConfigMap` has no finalizer: it is gone once its delete is done. Each was gone before
/// the next one's delete arrived (a step waits gone).
fn each_gone_before_the_next(ns: &Ns, order: &[&str]) {
    let audit = ns.audit();
    let delete = |name: &str| {
        audit
            .events
            .iter()
            .find(|e| e.verb == "delete" && e.resource == "configmaps" && e.name == name)
            .unwrap_or_else(|| panic!("{name} never deleted:\n{audit}"))
    };
    for pair in order.windows(2) {
        let (gone, next) = (delete(pair[0]), delete(pair[1]));
        assert!(
            gone.completed < next.received,
            "{} deleted before {} was gone:\n{audit}",
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
    let Some(env) = Ns::new("refreverse") else {
        return;
    };
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
    let Some(env) = Ns::new("refsubcharts") else {
        return;
    };
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
    let Some(env) = Ns::new("vendored") else {
        return;
    };
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
    let Some(env) = Ns::new("refkeep") else {
        return;
    };
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
    assert!(env.get("configmap", "database-keep").is_some());
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
    let Some(env) = Ns::new("refhooks") else {
        return;
    };
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
    let path = env.file("rendered.yaml", &stream);
    ok(env.apply("r", &path, &[]));
    // Install runs neither delete hook.
    assert!(!env.audit().written("ConfigMap", "pre-hook"));
    ok(env.chartseq(&["uninstall", "r"]));
    let audit = env.audit();
    let pre = &audit.created("ConfigMap", "pre-hook").completed;
    let delete = |name: &str| {
        audit
            .events
            .iter()
            .find(|e| e.verb == "delete" && e.resource == "configmaps" && e.name == name)
            .unwrap_or_else(|| panic!("{name} never deleted:\n{audit}"))
    };
    let post = &audit.created("ConfigMap", "post-hook").received;
    assert!(
        *pre < delete("app").received && delete("database").completed < *post,
        "{audit}"
    );
}

/// Source: `pkg/action/uninstall_sequenced_test.go`, `TestUninstall_Sequenced_DryRun`:
/// nothing is deleted.
#[test]
fn reference_uninstall_sequenced_dry_run() {
    let Some(env) = Ns::new("refdryrun") else {
        return;
    };
    let stream = cm(
        "c/templates/database.yaml",
        "database",
        &[(GROUPS, "database")],
    ) + &cm(
        "c/templates/app.yaml",
        "app",
        &[(GROUPS, "app"), (DEPENDS, r#"["database"]"#)],
    );
    let path = env.file("rendered.yaml", &stream);
    ok(env.apply("r", &path, &[]));
    ok(env.chartseq(&["uninstall", "r", "--dry-run"]));
    let audit = env.audit();
    assert_eq!(audit.count("delete", "ConfigMap", "app"), 0);
    assert_eq!(audit.count("delete", "ConfigMap", "database"), 0);
    assert!(env.get("configmap", "app").is_some());
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

/// The apply of `ConfigMap` `a` was done before the apply of `b` arrived (a `ConfigMap` is
/// ready once applied, so its apply is when its step's wait ends).
fn before_apply(ns: &Ns, a: &str, b: &str) {
    let audit = ns.audit();
    let first = &audit.created("ConfigMap", a).completed;
    let then = &audit.created("ConfigMap", b).received;
    assert!(first < then, "{a} after {b}:\n{audit}");
}

/// Source: `pkg/action/sequencing_groups_test.go`,
/// `TestGroupSequencedApply_OrderAndFailureBoundaries` ("group-only chart applies groups
/// before unsequenced resources"), with the reference's dependency key.
#[test]
fn reference_group_only_chart_applies_groups_before_unsequenced() {
    let Some(env) = Ns::new("refgroups") else {
        return;
    };
    let stream = group_cm(
        "parent/templates/database.yaml",
        "database",
        "database",
        &[],
    ) + &group_cm("parent/templates/app.yaml", "app", "app", &["database"])
        + &cm("parent/templates/plain.yaml", "plain", &[]);
    let path = env.file("rendered.yaml", &stream);
    ok(env.apply("r", &path, &[]));
    before_apply(&env, "database", "app");
    before_apply(&env, "app", "plain");

    // TestGroupSequencedDelete_ExactReverseOrder: plain, app, database, each gone first.
    ok(env.chartseq(&["uninstall", "r"]));
    assert_eq!(
        deleted_configmaps(&env.audit()),
        ["plain", "app", "database"]
    );
    each_gone_before_the_next(&env, &["plain", "app", "database"]);
}

/// Source: `pkg/action/sequencing_groups_test.go`,
/// `TestGroupSequencedApply_OrderAndFailureBoundaries` ("subchart group batches apply before
/// parent group batches").
#[test]
fn reference_subchart_group_batches_apply_before_parent_group_batches() {
    let Some(env) = Ns::new("refsubgroups") else {
        return;
    };
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
    let path = env.file("rendered.yaml", &stream);
    ok(env.apply("r", &path, &[]));
    let order = [
        "child-database",
        "child-app",
        "parent-database",
        "parent-app",
    ];
    for pair in order.windows(2) {
        before_apply(&env, pair[0], pair[1]);
    }
}

/// Source: `pkg/action/sequencing_groups_test.go`,
/// `TestGroupSequencedApply_OrderAndFailureBoundaries` ("create failure prevents the next
/// batch mutation"): the database never becomes ready, so the app is never sent. (The
/// reference's fake fails the wait; here the object never becomes ready and the wait times
/// out.)
#[test]
fn reference_failure_prevents_the_next_batch_mutation() {
    let Some(env) = Ns::new("refnever") else {
        return;
    };
    // An image kwok never makes ready.
    let database = "---\n# Source: parent/templates/database.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: database\n  annotations:\n    helm.sh/resource-group: database\nspec:\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec:\n      containers: [{name: db, image: chartseq.invalid/fail:1}]\n";
    let stream =
        database.to_owned() + &group_cm("parent/templates/app.yaml", "app", "app", &["database"]);
    let path = env.file("rendered.yaml", &stream);
    let (code, out, err) = env.apply("r", &path, &["--readiness-timeout", "1s"]);
    assert_eq!(code, 1, "{out}\n{err}");
    let audit = env.audit();
    assert!(audit.written("Deployment", "database"), "{audit}");
    assert!(!audit.written("ConfigMap", "app"), "{audit}");
}
