//! What an upgrade does with the previous revision's values, step for step with real helm
//! 4.1.4 in a namespace of its own: without values it reuses them, with values it takes only
//! those, and `--reuse-values`, `--reset-values`, `--reset-then-reuse-values` as helm's.

use super::Ns;
use crate::{fixture, tool};

/// The `ConfigMap`'s data and the stored values (`helm get values`), as helm reads them.
fn state(ns: &Ns, helm: &std::path::Path) -> (serde_json::Value, serde_json::Value) {
    let data = ns.get("configmap", "app").expect("the ConfigMap")["data"].clone();
    let (code, out, err) = ns.helm(helm, "", &["get", "values", "reuse", "-o", "json"]);
    assert_eq!(code, 0, "{err}");
    (data, serde_json::from_str(&out).expect("helm prints JSON"))
}

#[test]
fn upgrades_reuse_reset_and_merge_values_as_helm_upgrade_does() {
    let Some(helm) = tool("helm") else { return };
    let Some(by_helm) = Ns::new("reuse-helm") else {
        return;
    };
    let Some(ours) = Ns::new("reuse-ours") else {
        return;
    };
    let chart = fixture("apply/reuse");
    let chart = chart.to_str().expect("a UTF-8 path");
    let helm_path = helm.to_str().expect("a UTF-8 path");
    let steps: [&[&str]; 6] = [
        &["--set", "greeting=bonjour"],
        &[],
        &["--set", "size=large"],
        &["--reuse-values", "--set", "greeting=hola"],
        &["--reset-then-reuse-values", "--set", "size=medium"],
        &["--reset-values"],
    ];
    let mut seen = Vec::new();
    for step in steps {
        let mut args = vec!["upgrade", "--install", "reuse", chart];
        args.extend_from_slice(step);
        let (code, _, err) = by_helm.helm(&helm, "", &args);
        assert_eq!(code, 0, "helm {step:?}: {err}");
        let mut args = vec!["apply", "reuse", chart, "--helm", helm_path];
        args.extend_from_slice(step);
        let (code, out, err) = ours.chartseq(&args);
        assert_eq!(code, 0, "chartseq {step:?}:\n{out}\n{err}");
        let theirs = state(&by_helm, &helm);
        assert_eq!(state(&ours, &helm), theirs, "after {step:?}");
        seen.push(theirs.0["greeting"].clone());
    }
    // The steps mean something: helm's own answers moved as its rules say.
    assert_eq!(
        seen,
        ["bonjour", "bonjour", "hello", "hola", "hola", "hello"],
        "greeting after each step"
    );
}
