//! Release storage at its limits: a multi-megabyte release fits one Secret (gzip, as Helm
//! stores it) and reads back through real helm; a release that cannot fit is refused before
//! anything is applied; `--history-max` prunes old revisions but never the deployed one.

use std::fmt::Write as _;

use super::support::{Env, start};
use crate::tool;

/// A rendered stream of `count` `ConfigMap`s of generated, config-like text (compressible the
/// way real manifests are, about 10:1), about `count` × 18 KB: 300 make a stream the size of
/// kube-prometheus-stack rendered.
fn big_stream(count: usize) -> String {
    let mut out = String::new();
    for i in 0..count {
        let _ = write!(
            out,
            "---\n# Source: big/templates/config-{i}.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config-{i}\n  labels:\n    app.kubernetes.io/name: big\n    app.kubernetes.io/component: part-{}\ndata:\n  settings.yaml: |\n",
            i % 7
        );
        for j in 0..240 {
            let _ = writeln!(
                out,
                "    option_{j}_{}: \"value {} for component {} of release big\"  # tuned {}",
                (i * 31 + j * 17) % 997,
                (i * 7 + j * 13) % 1009,
                i % 7,
                j % 5
            );
        }
    }
    out
}

/// Text that does not compress: base64 of pseudo-random bytes.
fn noise(len: usize, seed: u64) -> String {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from(B64[(x % 64) as usize])
        })
        .collect()
}

fn release_objects(env: &Env) -> Vec<String> {
    env.server
        .server
        .object_names()
        .into_iter()
        .filter(|n| n.contains("sh.helm.release.v1."))
        .collect()
}

#[test]
fn a_multi_megabyte_release_round_trips_within_one_secret() {
    let env = start("");
    let text = big_stream(300);
    assert!(text.len() > 5_000_000, "{} bytes", text.len());
    let stream = env.stream("big.yaml", &text);
    let (code, out, err) = env.run(&["apply", "big", &stream, "-n", "default", "--no-lint"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let (secret, release) = env.stored_release("Secret", "big", 1).expect("stored");
    let stored = secret["data"]["release"].as_str().expect("data").len() / 4 * 3;
    assert!(stored < 1024 * 1024, "the Secret holds {stored} bytes");
    let manifest = release["manifest"].as_str().expect("a manifest");
    assert!(manifest.len() > 5_000_000);
    assert_eq!(manifest.matches("kind: ConfigMap").count(), 300);
    // Read back by chartseq (status plans nothing again: the recorded plan is used) ...
    let (code, out, err) = env.run(&["status", "big", "-n", "default"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("ConfigMap/config-299 (namespace default): ready"),
        "{out}"
    );
    // ... and by helm, byte for byte.
    if let Some(helm) = tool("helm") {
        let (code, got, err) = env.helm(&helm, "secret", &["get", "manifest", "big"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(got.trim_end(), manifest.trim_end());
    }
    let (code, _, err) = env.run(&["uninstall", "big", "-n", "default", "--timeout", "2m"]);
    assert_eq!(code, 0, "{err}");
    assert!(env.get("ConfigMap", "config-0").is_none());
}

#[test]
fn a_release_too_large_to_store_is_refused_before_anything_is_applied() {
    let env = start("");
    let mut text = String::new();
    for i in 0..2 {
        let _ = write!(
            text,
            "---\n# Source: blob/templates/blob-{i}.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: blob-{i}\ndata:\n  blob: {}\n",
            noise(700_000, 7 + i)
        );
    }
    let stream = env.stream("blob.yaml", &text);
    for storage in ["secret", "configmap"] {
        let (code, out, err) = env.run(&[
            "apply",
            "blob",
            &stream,
            "-n",
            "default",
            "--storage",
            storage,
        ]);
        assert_eq!(code, 1, "{out}\n{err}");
        let object = if storage == "secret" {
            "Secret"
        } else {
            "ConfigMap"
        };
        assert!(
            err.contains("release blob revision 1 would be stored as")
                && err.contains(&format!("but a {object} holds at most 1048576 bytes"))
                && err.contains("nothing was applied"),
            "{err}"
        );
    }
    assert!(
        env.log()
            .iter()
            .all(|e| e.verb != "apply" && e.verb != "update"),
        "{:#?}",
        env.log()
    );
    assert!(release_objects(&env).is_empty());
}

#[test]
fn history_max_prunes_old_revisions_but_keeps_the_deployed_one() {
    let env = start("resources:\n- {kind: Deployment, name: app, never: true}\n");
    let good = env.stream(
        "good.yaml",
        "---\n# Source: s/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata: {a: \"1\"}\n",
    );
    let bad = env.stream(
        "bad.yaml",
        "---\n# Source: s/templates/app.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n    spec: {containers: [{name: a, image: a}]}\n",
    );
    let apply = |stream: &str| {
        env.run(&[
            "apply",
            "s",
            stream,
            "-n",
            "default",
            "--history-max",
            "2",
            "--timeout",
            "1s",
        ])
        .0
    };
    assert_eq!(apply(&good), 0);
    // Three failed upgrades: the deployed revision 1 survives every pruning.
    for _ in 0..3 {
        assert_eq!(apply(&bad), 1);
    }
    let mut names = release_objects(&env);
    names.sort();
    assert_eq!(
        names,
        [
            "Secret/default/sh.helm.release.v1.s.v1",
            "Secret/default/sh.helm.release.v1.s.v4"
        ]
    );
    // HELM_MAX_HISTORY is read as helm reads it; the deployed revision still survives the
    // pruning before the new one (Helm's removeLeastRecent), then is superseded.
    let mut cmd = env.cmd(&["apply", "s", &good, "-n", "default"]);
    cmd.env("HELM_MAX_HISTORY", "1");
    assert_eq!(crate::run(&mut cmd).0, 0);
    let mut names = release_objects(&env);
    names.sort();
    assert_eq!(
        names,
        [
            "Secret/default/sh.helm.release.v1.s.v1",
            "Secret/default/sh.helm.release.v1.s.v5"
        ]
    );
}

#[test]
fn an_unknown_storage_driver_stops_before_connecting() {
    let env = start("");
    let mut cmd = env.cmd(&["list"]);
    cmd.env("HELM_DRIVER", "sql");
    let (code, _, err) = crate::run(&mut cmd);
    assert_eq!(code, 2);
    assert!(
        err.contains("$HELM_DRIVER: the sql storage driver is not supported by chartseq"),
        "{err}"
    );
    assert!(env.log().is_empty());
}
