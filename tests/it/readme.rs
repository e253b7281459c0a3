//! Every command line of the README's shell blocks (`sh`, `console`) is accounted for: run
//! here (the cheap ones, with helm where they render), run by a named test, marked in the
//! README as needing a published release, or an example with placeholders or a cluster,
//! with the reason. A command added to the README without an entry here fails the test.

use crate::{chartseq, root, run, tool};

/// How a README command is exercised.
enum Cover {
    /// Run by this test: its arguments after `chartseq` (or `cargo run --`), whether it needs
    /// helm, and the directory it runs in (relative to the root).
    Run(&'static [&'static str], bool, &'static str),
    /// Run by this test of the suite (its function name).
    Test(&'static str),
    /// Marked `needs a published release` in the README (checked).
    Release,
    /// Not runnable as written (placeholders, a cluster, a file of the user's): why.
    Example(&'static str),
}

const COMMANDS: &[(&str, Cover)] = &[
    (
        "chartseq plan fixtures/charts/platform.rendered.yaml --chart fixtures/charts/platform",
        Cover::Run(
            &[
                "plan",
                "fixtures/charts/platform.rendered.yaml",
                "--chart",
                "fixtures/charts/platform",
            ],
            false,
            ".",
        ),
    ),
    (
        "curl -fsSLO https://github.com/chartseq/chartseq/releases/download/v0.1.0/chartseq-0.1.0-x86_64-unknown-linux-musl.tar.gz",
        Cover::Release,
    ),
    (
        "curl -fsSLO https://github.com/chartseq/chartseq/releases/download/v0.1.0/SHA256SUMS",
        Cover::Release,
    ),
    ("sha256sum --ignore-missing -c SHA256SUMS", Cover::Release),
    (
        "tar -xzf chartseq-0.1.0-x86_64-unknown-linux-musl.tar.gz",
        Cover::Release,
    ),
    (
        "install chartseq-0.1.0-x86_64-unknown-linux-musl/chartseq ~/.local/bin/",
        Cover::Release,
    ),
    (
        "gh attestation verify chartseq-0.1.0-x86_64-unknown-linux-musl.tar.gz --repo chartseq/chartseq",
        Cover::Release,
    ),
    (
        "cargo install --locked --path .",
        Cover::Example(
            "builds and installs this checkout (about ten minutes); CI's `cargo publish --dry-run` builds the same sources",
        ),
    ),
    ("cargo install --locked chartseq", Cover::Release),
    ("cargo binstall chartseq", Cover::Release),
    (
        "chartseq completions bash > ~/.local/share/bash-completion/completions/chartseq",
        Cover::Run(&["completions", "bash"], false, "."),
    ),
    ("chartseq man | man -l -", Cover::Run(&["man"], false, ".")),
    (
        "cargo run -- plan fixtures/charts/platform.rendered.yaml --chart fixtures/charts/platform",
        Cover::Run(
            &[
                "plan",
                "fixtures/charts/platform.rendered.yaml",
                "--chart",
                "fixtures/charts/platform",
            ],
            false,
            ".",
        ),
    ),
    (
        "cargo run -- lint fixtures/charts/demotions.rendered.yaml --chart fixtures/charts/demotions",
        Cover::Run(
            &[
                "lint",
                "fixtures/charts/demotions.rendered.yaml",
                "--chart",
                "fixtures/charts/demotions",
            ],
            false,
            ".",
        ),
    ),
    (
        "cd fixtures/migrate/werf && chartseq migrate complex --from werf",
        Cover::Run(
            &["migrate", "complex", "--from", "werf"],
            true,
            "fixtures/migrate/werf",
        ),
    ),
    (
        "echo $?",
        Cover::Example("shows the exit code of the command before it"),
    ),
    (
        "chartseq lint ./mychart",
        Cover::Example("`./mychart` stands for the user's chart"),
    ),
    (
        "chartseq lint charts/*",
        Cover::Example(
            "`charts/*` stands for the user's charts; cli::a_chart_helm_cannot_render_is_a_finding_and_the_others_are_linted lints several",
        ),
    ),
    (
        "chartseq lint",
        Cover::Test("a_directory_of_charts_lints_every_chart_but_vendored_subcharts"),
    ),
    (
        "helm template r ./mychart | chartseq lint - --chart ./mychart",
        Cover::Example("`./mychart` stands for the user's chart"),
    ),
    (
        "chartseq explain CS101",
        Cover::Run(&["explain", "CS101"], false, "."),
    ),
    ("chartseq rules", Cover::Run(&["rules"], false, ".")),
    (
        "chartseq lint fixtures/lint/values-matrix/shop",
        Cover::Run(&["lint", "fixtures/lint/values-matrix/shop"], true, "."),
    ),
    (
        "chartseq lint fixtures/lint/values-matrix/shop --values-matrix",
        Cover::Run(
            &[
                "lint",
                "fixtures/lint/values-matrix/shop",
                "--values-matrix",
            ],
            true,
            ".",
        ),
    ),
    (
        "chartseq diff HEAD~1:charts/shop charts/shop",
        Cover::Example("a git revision of the user's repository"),
    ),
    (
        "chartseq diff origin/main:charts/shop charts/shop --format markdown --output-file comment.md",
        Cover::Example("a git revision of the user's repository"),
    ),
    (
        "chartseq diff old.rendered.yaml new.rendered.yaml --format json",
        Cover::Example("two renderings of the user's chart"),
    ),
    (
        "chartseq diff fixtures/diff/group-renamed/old fixtures/diff/group-renamed/new",
        Cover::Run(
            &[
                "diff",
                "fixtures/diff/group-renamed/old",
                "fixtures/diff/group-renamed/new",
            ],
            true,
            ".",
        ),
    ),
    (
        "kubectl get job migrate -o yaml | chartseq readiness -",
        Cover::Example("reads a live object from a cluster"),
    ),
    (
        "chartseq readiness objects.yaml --success '{.succeeded} == 1' --failure '{.failed} >= 1'",
        Cover::Example("`objects.yaml` stands for the user's recorded objects"),
    ),
    (
        "chartseq apply shop ./mychart -n shop [-f values.yaml] [--atomic] [--wait-for-jobs]",
        Cover::Example("a synopsis with optional flags; deploys need a cluster (tests/it/cluster)"),
    ),
    (
        "chartseq uninstall shop -n shop [--dry-run]",
        Cover::Example("a synopsis; needs a cluster (tests/it/cluster)"),
    ),
    (
        "chartseq rollback shop [REVISION] -n shop [--dry-run] [--take-ownership]",
        Cover::Example("a synopsis; needs a cluster (tests/it/cluster)"),
    ),
    (
        "chartseq history shop -n shop [-o json]",
        Cover::Example("a synopsis; needs a cluster (tests/it/cluster)"),
    ),
    (
        "chartseq status shop -n shop [-o json]",
        Cover::Example("a synopsis; needs a cluster (tests/it/cluster)"),
    ),
    (
        "chartseq list [-n shop | -A] [-o json]",
        Cover::Example("a synopsis; needs a cluster (tests/it/cluster)"),
    ),
    (
        "chartseq apply shop fixtures/apply/shop.yaml --kubeconfig $K >/dev/null",
        Cover::Test("the_readme_example_is_real"),
    ),
    (
        "chartseq apply shop fixtures/apply/shop-v2.yaml --kubeconfig $K --dry-run --diff",
        Cover::Test("the_readme_example_is_real"),
    ),
    (
        "eval \"$(scripts/cluster.sh up | sed 's/^/export /')\"",
        Cover::Example("starts a control plane; the cluster tests use scripts/cluster.sh"),
    ),
    (
        "kubectl create namespace shop",
        Cover::Example("needs a cluster"),
    ),
    (
        "cargo run -- apply fixtures/cluster/shop.yaml --release shop -n shop",
        Cover::Example("needs a cluster (tests/it/cluster deploys fixtures/cluster/shop.yaml)"),
    ),
    ("helm list -n shop", Cover::Example("needs a cluster")),
    (
        "scripts/cluster.sh down",
        Cover::Example("stops the control plane started above"),
    ),
    (
        "chartseq lint --changed-since origin/main .",
        Cover::Example("a git revision of the user's repository"),
    ),
    (
        "chartseq lint charts/* --format sarif --output-file chartseq.sarif",
        Cover::Example("`charts/*` stands for the user's charts"),
    ),
    (
        "helm plugin install https://github.com/chartseq/chartseq --version v0.1.0 --verify=false",
        Cover::Release,
    ),
    (
        "helm plugin install https://github.com/chartseq/chartseq --version v0.1.0",
        Cover::Release,
    ),
    (
        "helm chartseq lint ./chart -f values-prod.yaml --set image.tag=1.2.3 -n prod",
        Cover::Example("`./chart` and its values stand for the user's"),
    ),
    (
        "helm chartseq plan ./chart",
        Cover::Example(
            "`./chart` stands for the user's chart; release::helm_plugin_installs_from_a_git_tag_as_the_readme_says runs the installed plugin",
        ),
    ),
    (
        "helm chartseq apply shop ./chart -n prod --kube-context prod-cluster",
        Cover::Example("needs a cluster"),
    ),
    (
        "helm chartseq uninstall shop -n prod",
        Cover::Example("needs a cluster"),
    ),
    (
        "scripts/test.sh",
        Cover::Example("runs the whole suite, this test included"),
    ),
];

/// The README's command lines: (command without its trailing comment, whole line, the block's
/// text).
fn readme_commands() -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(lang) = line.strip_prefix("```") else {
            continue;
        };
        let block: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .collect();
        if !["sh", "bash", "console", "shell"].contains(&lang) {
            continue;
        }
        let whole = block.join("\n");
        for l in &block {
            let t = l.trim();
            let t = if lang == "console" {
                match t.strip_prefix("$ ") {
                    Some(c) => c,
                    None => continue,
                }
            } else {
                t
            };
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let command = t.split("  #").next().unwrap_or(t).trim().to_owned();
            out.push((command, t.to_owned(), whole.clone()));
        }
    }
    out
}

#[test]
fn every_readme_command_is_run_or_marked() {
    let commands = readme_commands();
    let sources: String = ["", "cluster/", "plan/"]
        .iter()
        .flat_map(|d| {
            std::fs::read_dir(root().join("tests/it").join(d))
                .into_iter()
                .flatten()
        })
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "rs"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    let helm = tool("helm");
    let mut missing = Vec::new();
    for (command, line, block) in &commands {
        let Some((_, cover)) = COMMANDS.iter().find(|(c, _)| c == command) else {
            missing.push(command.clone());
            continue;
        };
        match cover {
            Cover::Release => assert!(
                line.contains("needs a published release")
                    || block.contains("# needs a published release"),
                "not marked as needing a published release in the README: {line}"
            ),
            Cover::Test(name) => assert!(
                sources.contains(&format!("fn {name}()")),
                "{command}: no test `{name}`"
            ),
            Cover::Example(why) => assert!(!why.is_empty()),
            Cover::Run(args, needs_helm, dir) => {
                let mut cmd = chartseq();
                cmd.current_dir(root().join(dir)).args(*args);
                if *needs_helm {
                    let Some(helm) = &helm else { continue };
                    cmd.env("CHARTSEQ_HELM", helm);
                }
                let (code, out, err) = run(&mut cmd);
                // 0 clean, 1 findings (the README shows both); 2 would be chartseq failing.
                assert!(code == 0 || code == 1, "{command}: exit {code}\n{out}{err}");
                assert!(!out.is_empty(), "{command}: no output");
            }
        }
    }
    assert!(
        missing.is_empty(),
        "README commands no test accounts for (add each to COMMANDS): {missing:#?}"
    );
    let stale: Vec<&str> = COMMANDS
        .iter()
        .map(|(c, _)| *c)
        .filter(|c| !commands.iter().any(|(r, _, _)| r == c))
        .collect();
    assert!(stale.is_empty(), "no longer in the README: {stale:#?}");
}
