//! The README's commands marked `needs a cluster`, run as written on the test cluster.

use super::Ns;
use crate::readme::{readme_commands, shell};
use crate::{root, run, tool};

/// Every README command marked `needs a cluster` runs as written, in the README's order, in a
/// namespace of its own (`shop` becomes the test's namespace; `cargo run --` the built
/// chartseq). `scripts/cluster.sh up` and `down` are left out: they are what started this
/// cluster and stop it.
#[test]
fn the_readme_cluster_commands_run_on_the_test_cluster() {
    let Some(ns) = Ns::new("readme") else {
        return;
    };
    let Some(helm) = tool("helm") else {
        return;
    };
    // A Job `migrate` for the readiness example (the shop chart's is a hook, which helm
    // deletes once it succeeds).
    ns.create_as(
        "readme",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: m, image: shop:1}]\n",
    );
    let commands: Vec<_> = readme_commands()
        .into_iter()
        .filter(|c| c.marked("needs a cluster"))
        .filter(|c| !c.command.contains("scripts/cluster.sh"))
        .collect();
    assert!(commands.len() >= 10, "{}", commands.len());
    for c in &commands {
        let command = c
            .command
            .replace("cargo run -- ", "chartseq ")
            .replace("-n shop", &format!("-n {}", ns.name))
            .replace("namespace shop", &format!("namespace {}", ns.name));
        let (code, out, err) = run(shell(&command, &root(), &[&helm, &ns.kubectl])
            .env("KUBECONFIG", &ns.cluster.kubeconfig));
        if command.starts_with("kubectl create namespace") {
            // The test's namespace exists already.
            assert!(
                err.contains("AlreadyExists"),
                "{command}: {code}\n{out}{err}"
            );
            continue;
        }
        // `readiness` exits 1 for an object not ready yet; every other command succeeds.
        let expected: &[i32] = if command.contains("readiness") {
            &[0, 1]
        } else {
            &[0]
        };
        assert!(
            expected.contains(&code),
            "{command}: exit {code}\n{out}{err}"
        );
        assert!(
            !out.is_empty() || command.contains("uninstall"),
            "{command}: no output\n{err}"
        );
        if command.contains("readiness") {
            // Judged: out of the way of the chart's own hook of that name.
            ns.delete("job", "migrate");
        }
    }
}
