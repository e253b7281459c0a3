//! The local Kubernetes test cluster (`scripts/cluster.sh`, sources in `tests/cluster/`): its
//! smoke check, which brings the cluster up, runs a Deployment and a Job to their real status,
//! checks that nothing leaves loopback, and brings it down leaving no process.
//!
//! Only with `CHARTSEQ_CLUSTER=1`: the cluster needs Go and its first build compiles Kubernetes
//! (minutes), so it is opted into, not implied by `CHARTSEQ_REQUIRE_TOOLS`.

use std::process::Command;

#[test]
fn cluster_smoke() {
    if std::env::var("CHARTSEQ_CLUSTER").as_deref() != Ok("1") {
        #[expect(
            clippy::print_stderr,
            reason = "a skipped test says why on the test's own stderr"
        )]
        {
            eprintln!("skipped: set CHARTSEQ_CLUSTER=1 to build and start the test cluster");
        }
        return;
    }
    let Some(kubectl) = crate::tool("kubectl") else {
        return;
    };
    let output = Command::new(crate::root().join("tests/cluster/smoke.sh"))
        .env("CHARTSEQ_KUBECTL", kubectl)
        .env_remove("KUBECONFIG")
        .output()
        .expect("tests/cluster/smoke.sh runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("1 passed, 0 failed"),
        "the cluster smoke check failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
}
