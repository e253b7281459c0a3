//! Release storage at its limits, on the real control plane: a multi-megabyte release fits one Secret (gzip, as Helm
//! stores it) and reads back through real helm; a release that cannot fit is refused before
//! anything is applied; `--history-max` prunes old revisions but never the deployed one.

use std::fmt::Write as _;

use super::{Ns, ok};
use crate::tool;

/// A rendered stream of `count` `ConfigMap`s of `lines` lines of generated, config-like text
/// (compressible the way real manifests are, about 10:1), about `count` × `lines` × 75 bytes:
/// 5 MB is the size of kube-prometheus-stack rendered.
fn big_stream(count: usize, lines: usize) -> String {
    let mut out = String::new();
    for i in 0..count {
        let _ = write!(
            out,
            "---\n# Source: big/templates/config-{i}.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: config-{i}\n  labels:\n    app.kubernetes.io/name: big\n    app.kubernetes.io/component: part-{}\ndata:\n  settings.yaml: |\n",
            i % 7
        );
        for j in 0..lines {
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

/// The release storage objects in the namespace, as `kind/name`, sorted.
fn release_objects(ns: &Ns) -> Vec<String> {
    let out = ok(ns.kubectl(&["get", "secrets,configmaps", "-o", "name"]));
    let mut names: Vec<String> = out
        .lines()
        .filter(|n| n.contains("sh.helm.release.v1."))
        .map(str::to_owned)
        .collect();
    names.sort();
    names
}

#[test]
fn a_multi_megabyte_release_round_trips_within_one_secret() {
    let Some(ns) = Ns::new("big") else { return };
    // Few large objects: the size is the point, and each object costs a round trip.
    let text = big_stream(30, 2400);
    assert!(text.len() > 5_000_000, "{} bytes", text.len());
    let stream = ns.file("big.yaml", &text);
    ok(ns.chartseq(&["apply", "big", &stream, "--no-lint", "--timeout", "2m"]));
    let (secret, release) = ns.stored_release("Secret", "big", 1).expect("stored");
    let stored = secret["data"]["release"].as_str().expect("data").len() / 4 * 3;
    assert!(stored < 1024 * 1024, "the Secret holds {stored} bytes");
    let manifest = release["manifest"].as_str().expect("a manifest");
    assert!(manifest.len() > 5_000_000);
    assert_eq!(manifest.matches("kind: ConfigMap").count(), 30);
    // Read back by chartseq (status plans nothing again: the recorded plan is used) ...
    let out = ok(ns.chartseq(&["status", "big"]));
    assert!(
        out.contains(&format!(
            "ConfigMap/config-29 (namespace {}): ready",
            ns.name
        )),
        "{out}"
    );
    // ... and by helm, byte for byte.
    if let Some(helm) = tool("helm") {
        let got = ok(ns.helm(&helm, "secret", &["get", "manifest", "big"]));
        assert_eq!(got.trim_end(), manifest.trim_end());
    }
    ok(ns.chartseq(&["uninstall", "big", "--timeout", "2m"]));
    assert!(ns.get("configmap", "config-0").is_none());
}

#[test]
fn a_release_too_large_to_store_is_refused_before_anything_is_applied() {
    let Some(ns) = Ns::new("toolarge") else {
        return;
    };
    let mut text = String::new();
    for i in 0..2 {
        let _ = write!(
            text,
            "---\n# Source: blob/templates/blob-{i}.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: blob-{i}\ndata:\n  blob: {}\n",
            noise(700_000, 7 + i)
        );
    }
    let stream = ns.file("blob.yaml", &text);
    for storage in ["secret", "configmap"] {
        let (code, out, err) = ns.chartseq(&["apply", "blob", &stream, "--storage", storage]);
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
    let audit = ns.audit();
    assert_eq!(audit.chartseq_changes(), Vec::<String>::new(), "{audit}");
    assert!(release_objects(&ns).is_empty());
}

#[test]
fn history_max_prunes_old_revisions_but_keeps_the_deployed_one() {
    let Some(ns) = Ns::new("historymax") else {
        return;
    };
    let good = ns.file(
        "good.yaml",
        "---\n# Source: s/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata: {a: \"1\"}\n",
    );
    // An image kwok is configured never to make ready.
    let bad = ns.file(
        "bad.yaml",
        "---\n# Source: s/templates/app.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\nspec:\n  selector: {matchLabels: {app: a}}\n  template:\n    metadata: {labels: {app: a}}\n    spec: {containers: [{name: a, image: chartseq.invalid/fail:1}]}\n",
    );
    let apply = |stream: &str| {
        ns.chartseq(&[
            "apply",
            "s",
            stream,
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
    assert_eq!(
        release_objects(&ns),
        [
            "secret/sh.helm.release.v1.s.v1",
            "secret/sh.helm.release.v1.s.v4"
        ]
    );
    // HELM_MAX_HISTORY is read as helm reads it; the deployed revision still survives the
    // pruning before the new one (Helm's removeLeastRecent), then is superseded.
    let mut cmd = ns.command(&["apply", "s", &good]);
    cmd.env("HELM_MAX_HISTORY", "1");
    ok(crate::run(&mut cmd));
    assert_eq!(
        release_objects(&ns),
        [
            "secret/sh.helm.release.v1.s.v1",
            "secret/sh.helm.release.v1.s.v5"
        ]
    );
}

#[test]
fn an_unknown_storage_driver_stops_before_connecting() {
    let Some(ns) = Ns::new("driver") else { return };
    let mut cmd = ns.command(&["list"]);
    cmd.env("HELM_DRIVER", "sql");
    let (code, _, err) = crate::run(&mut cmd);
    assert_eq!(code, 2);
    assert!(
        err.contains("$HELM_DRIVER: the sql storage driver is not supported by chartseq"),
        "{err}"
    );
    let audit = ns.audit();
    assert!(
        audit
            .events
            .iter()
            .filter(|e| e.user == super::audit::TEST_USER)
            .all(|e| e.user_agent.starts_with("kubectl")),
        "{audit}"
    );
}
