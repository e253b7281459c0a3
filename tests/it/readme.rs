//! Every command line of the README's shell blocks (`sh`, `console`) is run or marked: run
//! here (the cheap ones, with helm where they render; those written with the names a user's
//! repository has, `./mychart`, `charts/*`, `HEAD~1:charts/shop`, run as written by the shell
//! in a scratch repository that has them), run by a named test, or marked in the README as
//! needing a published release or a cluster. A shown `echo $?` is checked against the command
//! before it. A command added to the README without an entry here fails the test, and an
//! entry cannot say "only an example".

use std::path::Path;
use std::process::Command;

use crate::{chartseq, fixture, root, run, tool};

/// How a README command is exercised.
enum Cover {
    /// Run by this test: its arguments after `chartseq` (or `cargo run --`), whether it needs
    /// helm, and the directory it runs in (relative to the root).
    Run(&'static [&'static str], bool, &'static str),
    /// Run as written by `sh` in the scratch repository ([`scratch`]), chartseq and helm on
    /// `PATH`.
    Scratch,
    /// Run by this test of the suite (its function name).
    Test(&'static str),
    /// Marked `needs a published release` in the README (checked).
    Release,
    /// Marked `needs a cluster` in the README (checked).
    Cluster,
    /// `echo $?` after a command: the code shown is the one the command before it exits with
    /// (checked on that command).
    ExitShown,
    /// The command that runs this suite (`scripts/test.sh`, checked to run `cargo test`).
    Suite,
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
        // pre-commit's rust language installs the checkout with `cargo install --path`.
        Cover::Test("pre_commit_rust_hook_builds_chartseq_and_lints"),
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
    ("echo $?", Cover::ExitShown),
    ("chartseq lint ./mychart", Cover::Scratch),
    ("chartseq lint charts/*", Cover::Scratch),
    (
        "chartseq lint",
        Cover::Test("a_directory_of_charts_lints_every_chart_but_vendored_subcharts"),
    ),
    (
        "helm template r ./mychart | chartseq lint - --chart ./mychart",
        Cover::Scratch,
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
        Cover::Scratch,
    ),
    (
        "chartseq diff origin/main:charts/shop charts/shop --format markdown --output-file comment.md",
        Cover::Scratch,
    ),
    (
        "chartseq diff old.rendered.yaml new.rendered.yaml --format json",
        Cover::Scratch,
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
        "kubectl get job migrate -n shop -o yaml | chartseq readiness -",
        Cover::Cluster,
    ),
    (
        "chartseq readiness objects.yaml --success '{.succeeded} == 1' --failure '{.failed} >= 1'",
        Cover::Scratch,
    ),
    (
        "chartseq apply shop fixtures/apply/shop.yaml -n shop --atomic --wait-for-jobs",
        Cover::Cluster,
    ),
    (
        "chartseq apply shop fixtures/apply/shop-v2.yaml -n shop --dry-run --diff",
        Cover::Cluster,
    ),
    ("chartseq history shop -n shop -o json", Cover::Cluster),
    ("chartseq status shop -n shop", Cover::Cluster),
    ("chartseq rollback shop 1 -n shop --dry-run", Cover::Cluster),
    ("chartseq list -A", Cover::Cluster),
    ("chartseq uninstall shop -n shop", Cover::Cluster),
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
        Cover::Cluster,
    ),
    ("kubectl create namespace shop", Cover::Cluster),
    (
        "cargo run -- apply fixtures/cluster/shop.yaml --release shop -n shop",
        Cover::Cluster,
    ),
    ("helm list -n shop", Cover::Cluster),
    ("scripts/cluster.sh down", Cover::Cluster),
    (
        "chartseq lint --changed-since origin/main .",
        Cover::Scratch,
    ),
    (
        "chartseq lint charts/* --format sarif --output-file chartseq.sarif",
        Cover::Scratch,
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
        Cover::Release,
    ),
    ("helm chartseq plan ./chart", Cover::Release),
    (
        "helm chartseq apply shop ./chart -n prod --kube-context prod-cluster",
        Cover::Release,
    ),
    ("helm chartseq uninstall shop -n prod", Cover::Release),
    ("scripts/test.sh", Cover::Suite),
];

/// A command line of the README.
pub(crate) struct ReadmeCommand {
    /// Without its trailing comment.
    pub command: String,
    /// The whole line.
    pub line: String,
    /// Its block's text.
    pub block: String,
    /// The exit code a following `$ echo $?` shows.
    pub shown_exit: Option<i32>,
}

impl ReadmeCommand {
    /// Marked in the README (on its line, or a comment line of its block) with `marker`.
    pub(crate) fn marked(&self, marker: &str) -> bool {
        self.line.contains(marker)
            || self
                .block
                .lines()
                .any(|l| l.trim_start().starts_with('#') && l.contains(marker))
    }
}

/// The README's command lines, in order.
pub(crate) fn readme_commands() -> Vec<ReadmeCommand> {
    let text = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let mut out: Vec<ReadmeCommand> = Vec::new();
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
        let first = out.len();
        for (i, l) in block.iter().enumerate() {
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
            if command == "echo $?" {
                let code = block.get(i + 1).and_then(|c| c.trim().parse().ok());
                assert!(
                    code.is_some(),
                    "`echo $?` without the code it shows: {whole}"
                );
                assert!(
                    out.len() > first,
                    "`echo $?` with no command before it: {whole}"
                );
                if let Some(before) = out.last_mut() {
                    before.shown_exit = code;
                }
            }
            out.push(ReadmeCommand {
                command,
                line: t.to_owned(),
                block: whole.clone(),
                shown_exit: None,
            });
        }
    }
    out
}

/// A scratch git repository holding what the README's examples name as the user's: a chart
/// `mychart/`, charts under `charts/` (`shop` changed by the last commit, which `origin/main`
/// does not have), `objects.yaml` (a finished Job), and two renderings `old.rendered.yaml`,
/// `new.rendered.yaml`.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let at = dir.path();
    let copy = |from: &str, to: &str| copy_dir(&fixture(from), &at.join(to));
    copy("charts/platform", "mychart");
    copy("charts/platform", "charts/platform");
    copy("diff/group-renamed/old", "charts/shop");
    let file = |from: &str, to: &str| {
        std::fs::copy(fixture(from), at.join(to)).expect("copy a fixture");
    };
    file("charts/two-groups.rendered.yaml", "old.rendered.yaml");
    file("charts/diamond.rendered.yaml", "new.rendered.yaml");
    std::fs::write(
        at.join("objects.yaml"),
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\nstatus:\n  succeeded: 1\n",
    )
    .expect("objects.yaml");
    let git = |args: &[&str]| {
        let (code, out, err) = run(Command::new("git")
            .current_dir(at)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args([
                "-c",
                "commit.gpgsign=false",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args));
        assert_eq!(code, 0, "git {args:?}: {out}{err}");
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "charts"]);
    git(&["update-ref", "refs/remotes/origin/main", "HEAD"]);
    std::fs::remove_dir_all(at.join("charts/shop")).expect("remove");
    copy("diff/group-renamed/new", "charts/shop");
    git(&["add", "-A"]);
    git(&["commit", "-qm", "rename db"]);
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create");
    for entry in std::fs::read_dir(from).expect("read a fixture") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// `PATH` with chartseq's and the given tools' directories first.
pub(crate) fn path_with(tools: &[&Path]) -> std::ffi::OsString {
    let chartseq = Path::new(env!("CARGO_BIN_EXE_chartseq"));
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<std::path::PathBuf> = std::iter::once(chartseq)
        .chain(tools.iter().copied())
        .filter_map(Path::parent)
        .map(Path::to_path_buf)
        .chain(std::env::split_paths(&path))
        .collect();
    std::env::join_paths(dirs).expect("a PATH")
}

/// A command run by `sh -c` with the environment chartseq's tests run in.
pub(crate) fn shell(command: &str, dir: &Path, tools: &[&Path]) -> Command {
    let scrubbed = chartseq();
    let mut sh = Command::new("sh");
    sh.arg("-c").arg(command).current_dir(dir);
    for (key, value) in scrubbed.get_envs() {
        if value.is_none() {
            sh.env_remove(key);
        }
    }
    sh.env("PATH", path_with(tools));
    sh
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
    let scratch = scratch();
    let mut missing = Vec::new();
    for c in &commands {
        let command = &c.command;
        let Some((_, cover)) = COMMANDS.iter().find(|(known, _)| known == command) else {
            missing.push(command.clone());
            continue;
        };
        let code = match cover {
            Cover::Release => {
                assert!(
                    c.marked("needs a published release"),
                    "not marked as needing a published release in the README: {}",
                    c.line
                );
                None
            }
            Cover::Cluster => {
                assert!(
                    c.marked("needs a cluster"),
                    "not marked as needing a cluster in the README: {}",
                    c.line
                );
                // The cluster tests run every command so marked on the test cluster.
                assert!(sources.contains(&format!("fn {CLUSTER_TEST}()")));
                None
            }
            Cover::Test(name) => {
                assert!(
                    sources.contains(&format!("fn {name}()")),
                    "{command}: no test `{name}`"
                );
                None
            }
            Cover::ExitShown => None,
            Cover::Suite => {
                let script = std::fs::read_to_string(root().join(command.as_str()))
                    .expect("the test script");
                assert!(script.contains("cargo test"), "{command} runs no tests");
                None
            }
            Cover::Scratch => {
                let Some(helm) = &helm else { continue };
                let (code, out, err) = run(&mut shell(command, scratch.path(), &[helm]));
                assert!(
                    !err.contains("command not found") && !err.contains("not found"),
                    "{command}: {err}"
                );
                assert!(
                    !out.is_empty() || command.contains("--output-file"),
                    "{command}: no output\n{err}"
                );
                Some((code, out, err))
            }
            Cover::Run(args, needs_helm, dir) => {
                let mut cmd = chartseq();
                cmd.current_dir(root().join(dir)).args(*args);
                if *needs_helm {
                    let Some(helm) = &helm else { continue };
                    cmd.env("CHARTSEQ_HELM", helm);
                }
                let (code, out, err) = run(&mut cmd);
                assert!(!out.is_empty(), "{command}: no output");
                Some((code, out, err))
            }
        };
        if let Some((code, out, err)) = code {
            match c.shown_exit {
                Some(shown) => assert_eq!(
                    code, shown,
                    "{command}: the README shows exit {shown}\n{out}{err}"
                ),
                // 0 clean, 1 findings (the README shows both); 2 would be chartseq failing.
                None => assert!(code == 0 || code == 1, "{command}: exit {code}\n{out}{err}"),
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
        .filter(|c| !commands.iter().any(|r| r.command == *c))
        .collect();
    assert!(stale.is_empty(), "no longer in the README: {stale:#?}");
}

/// The cluster test that runs the README's commands marked `needs a cluster`.
const CLUSTER_TEST: &str = "the_readme_cluster_commands_run_on_the_test_cluster";
