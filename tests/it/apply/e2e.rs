//! Against a real cluster (kind in CI): run with `CHARTSEQ_E2E_KUBECONFIG=... cargo test
//! --test it apply::e2e -- --ignored`; without it they fail. Each test uses its own namespace, created with
//! `--create-namespace` and left behind (CI discards the kind cluster).

use crate::{chartseq, fixture, run};

/// The cluster to test against. These tests run only when asked for (`--ignored`), so a
/// missing cluster is a failure, never a silent pass.
fn kubeconfig() -> String {
    std::env::var("CHARTSEQ_E2E_KUBECONFIG")
        .ok()
        .filter(|k| !k.is_empty())
        .expect("$CHARTSEQ_E2E_KUBECONFIG must name the kubeconfig of a real cluster")
}

fn cs(kubeconfig: &str, args: &[&str]) -> (i32, String, String) {
    let mut cmd = chartseq();
    cmd.args(args).args(["--kubeconfig", kubeconfig]);
    run(&mut cmd)
}

#[test]
#[ignore = "needs a real cluster: set CHARTSEQ_E2E_KUBECONFIG"]
fn e2e_install_status_upgrade_uninstall() {
    let kc = kubeconfig();
    let ns = format!("chartseq-e2e-{}", std::process::id());
    let stream = fixture("apply/e2e.yaml");
    let stream = stream.to_str().expect("a UTF-8 path");
    let (code, out, err) = cs(
        &kc,
        &[
            "apply",
            stream,
            "--release",
            "e2e",
            "-n",
            &ns,
            "--create-namespace",
            "--wait-for-jobs",
            "--timeout",
            "5m",
            "--readiness-timeout",
            "3m",
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("release e2e applied: revision 1, status deployed"),
        "{out}"
    );
    let (code, out, _) = cs(&kc, &["status", "e2e", "-n", &ns]);
    assert_eq!(code, 0);
    assert!(
        out.contains("STATUS: deployed") && out.contains("Deployment/e2e-frontend"),
        "{out}"
    );
    // Upgrade with the same objects: a no-op for the server, a new revision for the record.
    let (code, out, err) = cs(
        &kc,
        &[
            "apply",
            stream,
            "--release",
            "e2e",
            "-n",
            &ns,
            "--timeout",
            "5m",
            "--readiness-timeout",
            "3m",
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("revision 2, status deployed"), "{out}");
    let (code, out, err) = cs(
        &kc,
        &[
            "uninstall",
            "e2e",
            "-n",
            &ns,
            "--timeout",
            "5m",
            "--readiness-timeout",
            "3m",
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let (code, _, err) = cs(&kc, &["status", "e2e", "-n", &ns]);
    assert_eq!(code, 2, "{err}");
}
