//! Real helm 4.1.4 and chartseq on the same releases, on the real control plane, in both
//! directions and with both storage drivers: what one writes the other lists, shows,
//! upgrades, rolls back and uninstalls.

use std::path::Path;

use super::Ns;
use crate::{fixture, tool};

const CHART: &str = "apply/interop";

fn chart() -> String {
    fixture(CHART).to_str().expect("a UTF-8 path").to_owned()
}

/// `chartseq apply NAME CHART`, rendered by this helm.
fn chartseq_apply(
    env: &Ns,
    helm: &Path,
    driver: &str,
    release: &str,
    extra: &[&str],
) -> (i32, String, String) {
    let chart = chart();
    let helm = helm.to_str().expect("a UTF-8 path");
    let mut args = vec!["apply", release, &chart, "--helm", helm];
    args.extend_from_slice(extra);
    let mut cmd = env.command(&args);
    cmd.env("HELM_DRIVER", driver);
    crate::run(&mut cmd)
}

fn lines_with<'a>(text: &'a str, word: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.contains(word)).collect()
}

#[test]
fn helm_reads_upgrades_and_uninstalls_a_chartseq_release() {
    let Some(helm) = tool("helm") else { return };
    for (driver, kind) in [("secret", "Secret"), ("configmap", "ConfigMap")] {
        let Some(env) = Ns::new(&format!("interop-{driver}")) else {
            return;
        };
        let (code, out, err) = chartseq_apply(
            &env,
            &helm,
            driver,
            "shop",
            &["--set", "sequenced=true", "--set", "greeting=hi"],
        );
        assert_eq!(code, 0, "{out}\n{err}");
        // Sequenced: the app waited for its database group, on the API server's clock.
        let audit = env.audit();
        assert!(
            audit.created("Deployment", "shop-app").received > audit.ready("ConfigMap", "shop-db"),
            "{audit}"
        );

        // The record is Helm's own.
        let (object, release) = env
            .stored_release(kind, "shop", 1)
            .expect("stored as helm stores it");
        let labels = &object["metadata"]["labels"];
        assert_eq!(
            (
                labels["owner"].as_str(),
                labels["name"].as_str(),
                labels["status"].as_str(),
                labels["version"].as_str()
            ),
            (Some("helm"), Some("shop"), Some("deployed"), Some("1")),
            "{driver}"
        );
        assert!(
            labels["modifiedAt"]
                .as_str()
                .is_some_and(|s| s.parse::<u64>().is_ok())
        );
        if kind == "Secret" {
            assert_eq!(object["type"], "helm.sh/release.v1");
        }
        assert_eq!(release["sequenced"], true);
        assert_eq!(release["apply_method"], "ssa");
        assert_eq!(release["version"], 1);
        assert_eq!(release["info"]["status"], "deployed");
        assert_eq!(release["chart"]["metadata"]["version"], "0.2.0");
        assert_eq!(
            release["config"],
            serde_json::json!({"sequenced": true, "greeting": "hi"})
        );
        assert_eq!(
            release["hooks"][0]["events"],
            serde_json::json!(["pre-install", "pre-upgrade"])
        );

        let h = |args: &[&str]| env.helm(&helm, driver, args);
        let (code, out, err) = h(&["list"]);
        assert_eq!(code, 0, "{err}");
        let row = lines_with(&out, "shop");
        assert_eq!(row.len(), 1, "{out}");
        let cells: Vec<&str> = row[0].split('\t').map(str::trim).collect();
        assert_eq!(
            (cells[0], cells[1], cells[2], cells[4], cells[5], cells[6]),
            (
                "shop",
                env.name.as_str(),
                "1",
                "deployed",
                "interop-0.2.0",
                "1.2"
            ),
            "{out}"
        );
        let (code, out, _) = h(&["status", "shop"]);
        assert_eq!(code, 0);
        assert!(
            out.contains("STATUS: deployed")
                && out.contains("REVISION: 1")
                && out.contains("DESCRIPTION: Install complete"),
            "{out}"
        );
        let (_, out, _) = h(&["history", "shop"]);
        assert!(
            out.lines()
                .nth(1)
                .is_some_and(|l| l.contains("deployed") && l.contains("Install complete")),
            "{out}"
        );
        // The manifest as rendered, sequencing annotations included (PR #32314 rebuilds its
        // uninstall order from them), hooks apart.
        let (_, manifest, _) = h(&["get", "manifest", "shop"]);
        assert_eq!(
            manifest.trim_end(),
            release["manifest"].as_str().expect("a manifest").trim_end()
        );
        assert!(
            manifest.contains("# Source: interop/templates/db.yaml"),
            "{manifest}"
        );
        assert!(
            manifest.contains("helm.sh/depends-on/resource-groups: '[\"db\"]'"),
            "{manifest}"
        );
        assert!(!manifest.contains("kind: Job"), "{manifest}");
        let (_, values, _) = h(&["get", "values", "shop"]);
        assert!(
            values.contains("USER-SUPPLIED VALUES:") && values.contains("greeting: hi"),
            "{values}"
        );
        let (_, all, _) = h(&["get", "values", "shop", "--all"]);
        assert!(all.contains("image: web:1"), "{all}");
        let (_, hooks, _) = h(&["get", "hooks", "shop"]);
        assert!(hooks.contains("name: shop-migrate"), "{hooks}");

        // helm upgrades it (rendered without the key it cannot send) ...
        // (waiting, so that the rollout is over before chartseq judges the Deployment)
        let (code, out, err) = h(&[
            "upgrade",
            "shop",
            &chart(),
            "--set",
            "image=web:2",
            "--wait",
            "--timeout",
            "2m",
        ]);
        assert_eq!(code, 0, "{out}\n{err}");
        let app = env.get("Deployment", "shop-app").expect("the app");
        assert_eq!(
            app["spec"]["template"]["spec"]["containers"][0]["image"],
            "web:2"
        );
        let (_, out, _) = h(&["history", "shop"]);
        let statuses: Vec<&str> = out
            .lines()
            .skip(1)
            .map(|l| l.split('\t').nth(2).unwrap_or_default().trim())
            .collect();
        assert_eq!(statuses, ["superseded", "deployed"], "{out}");
        // ... chartseq reads what helm wrote ...
        let mut cmd = env.command(&["status", "shop"]);
        cmd.env("HELM_DRIVER", driver);
        let (code, out, err) = crate::run(&mut cmd);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("REVISION: 2")
                && out.contains("SEQUENCED: false")
                && out.contains(&format!(
                    "Deployment/shop-app (namespace {}): ready",
                    env.name
                )),
            "{out}"
        );
        // ... and helm uninstalls it.
        let (code, out, err) = h(&["uninstall", "shop"]);
        assert_eq!(code, 0, "{err}");
        assert!(out.contains("release \"shop\" uninstalled"), "{out}");
        assert!(
            env.get("Deployment", "shop-app").is_none()
                && env.get("ConfigMap", "shop-db").is_none()
        );
        assert!(
            env.stored_release(kind, "shop", 1).is_none()
                && env.stored_release(kind, "shop", 2).is_none()
        );
    }
}

#[test]
fn chartseq_upgrades_and_rolls_back_a_helm_release() {
    let Some(helm) = tool("helm") else { return };
    let Some(env) = Ns::new("interop-rollback") else {
        return;
    };
    let h = |args: &[&str]| env.helm(&helm, "", args);
    let (code, out, err) = h(&["install", "shop", &chart()]);
    assert_eq!(code, 0, "{out}\n{err}");
    // helm's objects carry Helm's marks: chartseq takes them over as the same release.
    let (code, out, err) = chartseq_apply(
        &env,
        &helm,
        "",
        "shop",
        &["--set", "sequenced=true", "--set", "image=web:2"],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("release shop applied: revision 2, status deployed"),
        "{out}"
    );
    let (_, release) = env.stored_release("Secret", "shop", 2).expect("revision 2");
    assert_eq!(release["sequenced"], true);
    assert_eq!(release["info"]["description"], "Upgrade complete");
    let (code, out, err) = env.chartseq(&["rollback", "shop", "1"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("release shop rolled back: revision 3, status deployed"),
        "{out}"
    );
    let app = env.get("Deployment", "shop-app").expect("the app");
    assert_eq!(
        app["spec"]["template"]["spec"]["containers"][0]["image"],
        "web:1"
    );

    let (code, out, err) = h(&["history", "shop"]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip(1)
        .map(|l| l.split('\t').map(str::trim).collect())
        .collect();
    let summary: Vec<(&str, &str, &str)> = rows.iter().map(|r| (r[0], r[2], r[5])).collect();
    assert_eq!(
        summary,
        [
            ("1", "superseded", "Install complete"),
            ("2", "superseded", "Upgrade complete"),
            ("3", "deployed", "Rollback to 1"),
        ],
        "{out}"
    );
    let (code, out, _) = h(&["status", "shop"]);
    assert_eq!(code, 0);
    assert!(out.contains("REVISION: 3"), "{out}");
    // Helm's list and chartseq's agree.
    let (_, out, _) = env.chartseq(&["list"]);
    let row = lines_with(&out, "shop");
    assert!(
        row.len() == 1 && row[0].contains("deployed") && row[0].contains("interop-0.2.0"),
        "{out}"
    );
}

/// The CHART column `helm list` prints (`name-version`) for a release applied from a stream.
fn helm_list_chart(env: &Ns, helm: &Path) -> (String, String) {
    let (code, out, err) = env.helm(helm, "secret", &["list"]);
    assert_eq!(code, 0, "{err}");
    let row = lines_with(&out, "shop");
    assert_eq!(row.len(), 1, "{out}");
    let cells: Vec<&str> = row[0].split('\t').map(str::trim).collect();
    (cells[5].to_owned(), cells[6].to_owned())
}

#[test]
fn helm_list_names_the_chart_of_a_release_applied_from_a_rendered_stream() {
    let Some(helm) = tool("helm") else { return };
    // Helm's chart helpers label every object `helm.sh/chart: name-version`: the version the
    // stream was rendered from.
    let Some(env) = Ns::new("list-chart-labelled") else {
        return;
    };
    let labelled = env.file(
        "labelled.yaml",
        "---\n# Source: shop/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n    helm.sh/chart: shop-1.4.2\n    app.kubernetes.io/version: \"3.0\"\n",
    );
    let (code, out, err) = env.chartseq(&["apply", &labelled, "--release", "shop"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(
        helm_list_chart(&env, &helm),
        ("shop-1.4.2".to_owned(), "3.0".to_owned())
    );

    // Without labels there is no version to find: a placeholder, never `shop-`.
    let Some(env) = Ns::new("list-chart-bare") else {
        return;
    };
    let bare = env.file(
        "bare.yaml",
        "---\n# Source: shop/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
    );
    let (code, out, err) = env.chartseq(&["apply", &bare, "--release", "shop"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(helm_list_chart(&env, &helm).0, "shop-0.0.0");
}
