//! A release whose first install failed, run again: Helm upgrades it (`helm upgrade
//! --install` installs only when there is no history or its last revision is uninstalled), so
//! the pre-upgrade hooks run and the history reads as helm's own. Real helm 4.1.4 does the same
//! steps in a namespace of its own, and both histories are read by helm.

use std::path::Path;

use super::Ns;
use crate::{fixture, tool};

const FAIL: &str = "image=chartseq.invalid/fail:1";
/// Given on the second run: without values helm would reuse the failed run's.
const PASS: &str = "image=registry.invalid/check:1";

/// `(revision, status, description)` of every revision, as `helm history` reads them.
fn history(ns: &Ns, helm: &Path) -> Vec<(u64, String, String)> {
    let (code, out, err) = ns.helm(helm, "", &["history", "again", "-o", "json"]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<serde_json::Value> = serde_json::from_str(&out).expect("helm prints JSON");
    rows.iter()
        .map(|r| {
            (
                r["revision"].as_u64().expect("a revision"),
                r["status"].as_str().expect("a status").to_owned(),
                r["description"].as_str().expect("a description").to_owned(),
            )
        })
        .collect()
}

fn hooks_ran(ns: &Ns) -> (bool, bool) {
    (
        ns.get("configmap", "ran-pre-install").is_some(),
        ns.get("configmap", "ran-pre-upgrade").is_some(),
    )
}

#[test]
fn a_release_whose_first_install_failed_is_upgraded_as_helm_does() {
    let Some(helm) = tool("helm") else { return };
    let Some(by_helm) = Ns::new("again-helm") else {
        return;
    };
    let Some(ours) = Ns::new("again-ours") else {
        return;
    };
    let chart = fixture("apply/again");
    let chart = chart.to_str().expect("a UTF-8 path");
    let helm_path = helm.to_str().expect("a UTF-8 path");

    let run = |set: &[&str]| {
        let mut args = vec![
            "upgrade",
            "--install",
            "again",
            chart,
            "--wait",
            "--timeout",
            "1m",
        ];
        args.extend_from_slice(set);
        by_helm.helm(&helm, "", &args)
    };
    let (code, _, err) = run(&["--set", FAIL]);
    assert_ne!(code, 0, "helm's first install fails in its hook: {err}");
    let (code, _, err) = run(&["--set", PASS]);
    assert_eq!(code, 0, "helm's second run succeeds: {err}");

    let apply = |set: &[&str]| {
        let mut args = vec![
            "apply",
            "again",
            chart,
            "--helm",
            helm_path,
            "--timeout",
            "1m",
        ];
        args.extend_from_slice(set);
        ours.chartseq(&args)
    };
    let (code, out, err) = apply(&["--set", FAIL]);
    assert_ne!(
        code, 0,
        "the first install fails in its hook:\n{out}\n{err}"
    );
    assert_eq!(hooks_ran(&ours), (true, false));
    let (code, out, err) = apply(&["--set", PASS]);
    assert_eq!(code, 0, "the second run succeeds:\n{out}\n{err}");

    // The second run is an upgrade in both: its pre-upgrade hook ran.
    assert_eq!(hooks_ran(&by_helm), (true, true));
    assert_eq!(hooks_ran(&ours), (true, true));
    let theirs = history(&by_helm, &helm);
    let mine = history(&ours, &helm);
    assert_eq!(
        theirs
            .iter()
            .map(|(r, s, _)| (*r, s.as_str()))
            .collect::<Vec<_>>(),
        [(1, "superseded"), (2, "deployed")],
        "{theirs:?}"
    );
    assert_eq!(mine.len(), 2, "{mine:?}");
    for ((_, status, text), (_, helm_status, helm_text)) in mine.iter().zip(&theirs) {
        assert_eq!(status, helm_status, "chartseq {mine:?}\nhelm {theirs:?}");
        // The failure's cause is worded by each tool; the kind of operation is helm's.
        let head = |t: &str| t.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
        assert_eq!(
            head(text),
            head(helm_text),
            "chartseq {mine:?}\nhelm {theirs:?}"
        );
    }
}
