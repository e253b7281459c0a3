//! The walk-through a user takes on any cluster, on the test cluster: install with
//! `--wait-for-jobs`, status, an upgrade with the same objects (a new revision, nothing changed
//! on the server), uninstall, and status of the release that is gone.

use super::{Ns, ok};
use crate::fixture;

#[test]
fn install_status_upgrade_uninstall() {
    let Some(ns) = Ns::new("e2e") else { return };
    let stream = fixture("apply/e2e.yaml");
    let stream = stream.to_str().expect("a UTF-8 path");
    let apply = [
        "apply",
        stream,
        "--release",
        "e2e",
        "--wait-for-jobs",
        "--timeout",
        "2m",
        "--readiness-timeout",
        "1m",
    ];
    let out = ok(ns.chartseq(&apply));
    assert!(
        out.contains("release e2e applied: revision 1, status deployed"),
        "{out}"
    );
    let out = ok(ns.chartseq(&["status", "e2e"]));
    assert!(
        out.contains("STATUS: deployed") && out.contains("Deployment/e2e-frontend"),
        "{out}"
    );
    // Upgrade with the same objects: a no-op for the server, a new revision for the record.
    let out = ok(ns.chartseq(&apply));
    assert!(out.contains("revision 2, status deployed"), "{out}");
    ok(ns.chartseq(&["uninstall", "e2e", "--timeout", "2m"]));
    let (code, _, err) = ns.chartseq(&["status", "e2e"]);
    assert_eq!(code, 2, "{err}");
    assert!(ns.get("deployment", "e2e-frontend").is_none());
}
