//! Releases and the ways of installing them: one version everywhere, the commit in `--version`,
//! the release workflow's targets and names, and the download paths of the Action, the helm
//! plugin and the pre-commit hook, each run against a release laid out as the workflow publishes
//! it and served by a loopback HTTP server (nothing here reaches beyond 127.0.0.1).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::integrations::{CYCLE_LINE, copy_dir, scratch_repo, scrubbed};
use crate::{chartseq, root, run, tool};

#[path = "../../build/commit.rs"]
mod commit;

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).expect(rel)
}

/// Every `X.Y.Z` right after `prefix` in `text`.
fn versions_after(text: &str, prefix: &str) -> Vec<String> {
    text.match_indices(prefix)
        .map(|(at, _)| {
            text[at + prefix.len()..]
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect::<String>()
                .trim_end_matches('.')
                .to_owned()
        })
        .collect()
}

#[test]
fn one_version_everywhere() {
    let manifest: toml::Table = read("Cargo.toml").parse().expect("Cargo.toml");
    assert_eq!(manifest["package"]["version"].as_str(), Some(VERSION));
    // plugin.yaml: helm's install hook downloads the release of this version.
    assert_eq!(
        versions_after(&read("plugin.yaml"), "\nversion: "),
        [VERSION],
        "plugin.yaml"
    );
    // CHANGELOG.md: an Unreleased section, then this version's, with notes.
    let changelog = read("CHANGELOG.md");
    let headings: Vec<&str> = changelog.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(headings.first(), Some(&"## [Unreleased]"), "{headings:?}");
    let latest = headings.get(1).expect("a released version");
    assert!(
        latest.starts_with(&format!("## [{VERSION}] - ")),
        "CHANGELOG.md's latest release is {latest}, Cargo.toml says {VERSION}"
    );
    let (code, notes, err) =
        run(Command::new(root().join("scripts/release-notes.sh")).arg(VERSION));
    assert_eq!(code, 0, "{err}");
    assert!(notes.starts_with("### "), "{notes}");
    assert!(!notes.contains(&format!("## [{VERSION}]")), "{notes}");
    let (code, _, err) = run(Command::new(root().join("scripts/release-notes.sh")).arg("0.0.0"));
    assert_eq!(code, 1);
    assert!(err.contains("has no notes for 0.0.0"), "{err}");
    // The README's pinned examples: downloads, the Action, pre-commit, the helm plugin, the
    // container image.
    let readme = read("README.md");
    for prefix in [
        "chartseq/chartseq@v",
        "rev: v",
        "--version v",
        "version: v",
        "releases/download/v",
        "ghcr.io/chartseq/chartseq:",
    ] {
        let found = versions_after(&readme, prefix);
        assert!(!found.is_empty(), "README.md pins nothing with {prefix:?}");
        for version in found {
            assert_eq!(version, VERSION, "README.md pins {prefix}{version}");
        }
    }
    // The binary.
    let (code, out, _) = run(chartseq().arg("--version"));
    assert_eq!(code, 0);
    let commit = out
        .strip_prefix(&format!("chartseq {VERSION} ("))
        .and_then(|rest| rest.strip_suffix(")\n"))
        .unwrap_or_else(|| panic!("--version prints {out:?}"));
    let found = commit::find(&root(), None);
    assert_eq!(commit, found.commit);
    if root().join(".git").exists() {
        let (_, head, _) = run(Command::new("git")
            .arg("-C")
            .arg(root())
            .args(["rev-parse", "HEAD"]));
        assert_eq!(commit, &head.trim()[..commit::SHORT]);
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let (code, out, err) = run(Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args));
    assert_eq!(code, 0, "git {args:?}: {err}");
    out.trim().to_owned()
}

/// The build script's commit lookup: environment, then the package's own git checkout, then a
/// published crate's `.cargo_vcs_info.json`, else `unknown`; it never fails the build.
#[test]
fn commit_lookup_falls_back_without_git() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plain = dir.path().join("tarball");
    std::fs::create_dir_all(&plain).expect("mkdir");
    let found = commit::find(&plain, None);
    assert_eq!(found.commit, "unknown");
    assert!(found.watch.is_empty());
    assert_eq!(commit::find(&plain, Some("  ")).commit, "unknown");
    assert_eq!(commit::find(&plain, Some("0123abc")).commit, "0123abc");
    // A published crate.
    std::fs::write(
        plain.join(".cargo_vcs_info.json"),
        "{\n  \"git\": {\n    \"sha1\": \"89ABCDEF0123456789abcdef0123456789abcdef\"\n  },\n  \"path_in_vcs\": \"\"\n}",
    )
    .expect("write");
    let found = commit::find(&plain, None);
    assert_eq!(found.commit, "89abcdef0123");
    assert_eq!(found.watch, [plain.join(".cargo_vcs_info.json")]);
    std::fs::write(plain.join(".cargo_vcs_info.json"), "{\"git\": {}}").expect("write");
    assert_eq!(commit::find(&plain, None).commit, "unknown");
    // A git checkout: its HEAD, and the files that move with it (that exist).
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).expect("mkdir");
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("a"), "a").expect("write");
    git(&repo, &["add", "a"]);
    git(&repo, &["commit", "-q", "-m", "a"]);
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let found = commit::find(&repo, None);
    assert_eq!(found.commit, head[..commit::SHORT]);
    assert!(found.watch.iter().all(|f| f.is_file()), "{:?}", found.watch);
    assert!(
        found.watch.iter().any(|f| f.ends_with("refs/heads/main")),
        "{:?}",
        found.watch
    );
    // A directory inside someone else's repository is not that repository's commit.
    let nested = repo.join("vendor/chartseq");
    std::fs::create_dir_all(&nested).expect("mkdir");
    assert_eq!(commit::find(&nested, None).commit, "unknown");
}

/// The release targets, as `install-release.sh --targets` lists them.
fn targets() -> Vec<String> {
    let (code, out, err) =
        run(Command::new(root().join("scripts/install-release.sh")).arg("--targets"));
    assert_eq!(code, 0, "{err}");
    out.lines().map(str::to_owned).collect()
}

/// The release target of this machine.
fn host_target() -> String {
    let (code, out, err) =
        run(Command::new(root().join("scripts/install-release.sh")).arg("--target"));
    assert_eq!(code, 0, "{err}");
    out.trim().to_owned()
}

/// The release workflow builds exactly the targets the installers download, names the
/// archives as they expect, and publishes checksums, attestations and the changelog's notes.
#[test]
fn release_workflow_builds_what_the_installers_download() {
    let workflow = read(".github/workflows/release.yml");
    let built: BTreeSet<String> = workflow
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- target: "))
        .map(str::to_owned)
        .collect();
    let downloaded: BTreeSet<String> = targets().into_iter().collect();
    assert_eq!(built, downloaded);
    assert_eq!(built.len(), 5);
    for needle in [
        "name=\"chartseq-$VERSION-$TARGET\"",
        "tar -czf \"$name.tar.gz\" \"$name\"",
        "7z a -tzip \"$name.zip\" \"$name\"",
        "sha256sum chartseq-* > SHA256SUMS",
        "actions/attest-build-provenance@v2",
        "scripts/release-notes.sh \"$VERSION\" > notes.md",
        "gh release create",
        "does not match Cargo.toml's version",
        "docker/build-push-action@v6",
        "\"$bin\" completions bash",
        "\"$bin\" man --dir",
        "cp README.md CHANGELOG.md LICENSE",
        "subject-digest: ${{ steps.push.outputs.digest }}",
    ] {
        assert!(workflow.contains(needle), "release.yml lacks {needle}");
    }
    // actionlint (with shellcheck on the `run:` scripts when it is on PATH).
    if let Some(actionlint) = tool("actionlint") {
        let mut cmd = scrubbed(&actionlint);
        if let Some(shellcheck) = tool("shellcheck") {
            let dir = shellcheck.parent().expect("dir").to_owned();
            cmd.env(
                "PATH",
                format!(
                    "{}:{}",
                    dir.display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            );
        }
        let (code, out, err) = run(cmd.arg(".github/workflows/release.yml"));
        assert_eq!(code, 0, "actionlint: {out}{err}");
    }
    if let Some(checker) = tool("check_jsonschema") {
        let (code, out, err) = run(scrubbed(&checker)
            .args(["--builtin-schema", "vendor.github-workflows"])
            .arg(".github/workflows/release.yml"));
        assert_eq!(code, 0, "{out}{err}");
    }
    if let Some(shellcheck) = tool("shellcheck") {
        let (code, out, err) = run(scrubbed(&shellcheck).args([
            "scripts/install-release.sh",
            "scripts/action-install.sh",
            "scripts/plugin-install.sh",
            "scripts/pre-commit-release.sh",
            "scripts/release-notes.sh",
            "scripts/helm-plugin.sh",
        ]));
        assert_eq!(code, 0, "shellcheck: {out}{err}");
    }
}

/// A release of `version` laid out as the workflow publishes it, under `dir/vVERSION/`: every
/// target's archive holds a stand-in that prints its target, except `real`'s, which holds
/// the chartseq under test.
fn fake_release(dir: &Path, version: &str, real: Option<&str>) {
    let out = dir.join(format!("v{version}"));
    let stage = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(&out).expect("mkdir");
    let mut sums = String::new();
    for target in targets() {
        let name = format!("chartseq-{version}-{target}");
        let windows = target.contains("windows");
        let inner = stage.path().join(&name);
        std::fs::create_dir_all(&inner).expect("mkdir");
        let binary = inner.join(if windows { "chartseq.exe" } else { "chartseq" });
        if real == Some(target.as_str()) {
            std::fs::copy(env!("CARGO_BIN_EXE_chartseq"), &binary).expect("copy");
        } else {
            std::fs::write(&binary, format!("#!/bin/sh\necho stand-in for {target}\n"))
                .expect("write");
        }
        let archive = if windows {
            let archive = format!("{name}.zip");
            let (code, _, err) = run(Command::new("python3")
                .current_dir(stage.path())
                .args(["-m", "zipfile", "-c"])
                .arg(out.join(&archive))
                .arg(&name));
            assert_eq!(code, 0, "{err}");
            archive
        } else {
            let archive = format!("{name}.tar.gz");
            let file = std::fs::File::create(out.join(&archive)).expect("create");
            // Stored, not compressed: the debug binary is large, and gzip is gzip either way.
            let gz = flate2::write::GzEncoder::new(file, flate2::Compression::none());
            let mut tar = tar::Builder::new(gz);
            let mut header = tar::Header::new_gnu();
            let bytes = std::fs::read(&binary).expect("read");
            header.set_size(bytes.len() as u64);
            header.set_mode(0o755);
            header.set_cksum();
            tar.append_data(&mut header, format!("{name}/chartseq"), bytes.as_slice())
                .expect("append");
            tar.into_inner().expect("tar").finish().expect("gzip");
            archive
        };
        let (code, line, err) = run(Command::new("sha256sum").current_dir(&out).arg(&archive));
        assert_eq!(code, 0, "{err}");
        sums.push_str(&line);
    }
    std::fs::write(out.join("SHA256SUMS"), sums).expect("write");
}

/// `python3 -m http.server` on 127.0.0.1 (a free port), serving `dir`; stopped on drop.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn serve(dir: &Path) -> Server {
        let mut child = Command::new("python3")
            .args([
                "-u",
                "-m",
                "http.server",
                "0",
                "--bind",
                "127.0.0.1",
                "--directory",
            ])
            .arg(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the server's first line");
        // "Serving HTTP on 127.0.0.1 port 41235 (http://127.0.0.1:41235/) ..."
        let port: u16 = line
            .split(" port ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("http.server said {line:?}"));
        Server {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn install_release(url: &str, args: &[&str]) -> (i32, String, String) {
    run(scrubbed(root().join("scripts/install-release.sh"))
        .env("CHARTSEQ_RELEASE_URL", url)
        .args(args))
}

#[test]
fn install_release_picks_the_platform_archive_and_refuses_a_bad_checksum() {
    // Every spelling of a platform the callers pass: helm's GOOS/GOARCH, GitHub runners',
    // uname's.
    for (os, arch, want) in [
        ("linux", "amd64", "x86_64-unknown-linux-musl"),
        ("linux", "arm64", "aarch64-unknown-linux-musl"),
        ("darwin", "amd64", "x86_64-apple-darwin"),
        ("darwin", "arm64", "aarch64-apple-darwin"),
        ("windows", "amd64", "x86_64-pc-windows-msvc"),
        ("Linux", "X64", "x86_64-unknown-linux-musl"),
        ("Linux", "ARM64", "aarch64-unknown-linux-musl"),
        ("macOS", "X64", "x86_64-apple-darwin"),
        ("macOS", "ARM64", "aarch64-apple-darwin"),
        ("Windows", "X64", "x86_64-pc-windows-msvc"),
        ("Linux", "x86_64", "x86_64-unknown-linux-musl"),
        ("Linux", "aarch64", "aarch64-unknown-linux-musl"),
        ("Darwin", "arm64", "aarch64-apple-darwin"),
        ("MINGW64_NT-10.0-20348", "x86_64", "x86_64-pc-windows-msvc"),
    ] {
        let (code, out, err) = install_release("", &["--target", os, arch]);
        assert_eq!((code, out.trim()), (0, want), "{os}/{arch}: {err}");
    }
    for (os, arch) in [("windows", "arm64"), ("freebsd", "amd64"), ("linux", "386")] {
        let (code, out, err) = install_release("", &["--target", os, arch]);
        assert_eq!((code, out.as_str()), (2, ""), "{os}/{arch}");
        assert!(
            err.contains(&format!("no release binary for {os}/{arch}")),
            "{err}"
        );
    }

    let site = tempfile::tempdir().expect("tempdir");
    fake_release(site.path(), VERSION, None);
    let server = Server::serve(site.path());
    let dest = tempfile::tempdir().expect("tempdir");
    for target in targets() {
        let into = dest.path().join(&target);
        let (code, _, err) = install_release(
            &server.url,
            &[
                &format!("v{VERSION}"),
                &target,
                into.to_str().expect("utf-8"),
            ],
        );
        assert_eq!(code, 0, "{target}: {err}");
        assert!(err.contains("verified against SHA256SUMS"), "{err}");
        let exe = if target.contains("windows") {
            "chartseq.exe"
        } else {
            "chartseq"
        };
        let text = std::fs::read_to_string(into.join(exe)).expect("installed");
        assert_eq!(text, format!("#!/bin/sh\necho stand-in for {target}\n"));
        assert_eq!(
            std::fs::read_dir(&into).expect("dir").count(),
            1,
            "{target}"
        );
    }

    // A release that does not exist: exit 3, which callers may fall back on.
    let into = dest.path().join("missing");
    let (code, _, err) = install_release(
        &server.url,
        &[
            "9.9.9",
            "x86_64-unknown-linux-musl",
            into.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(code, 3, "{err}");
    assert!(
        err.contains(&format!(
            "could not download {}/v9.9.9/SHA256SUMS",
            server.url
        )),
        "{err}"
    );
    assert!(!into.exists());

    // An archive that does not match SHA256SUMS: refused, nothing installed.
    let archive = site.path().join(format!(
        "v{VERSION}/chartseq-{VERSION}-aarch64-apple-darwin.tar.gz"
    ));
    let mut bytes = std::fs::read(&archive).expect("archive");
    bytes.push(0);
    std::fs::write(&archive, bytes).expect("write");
    let into = dest.path().join("tampered");
    let (code, _, err) = install_release(
        &server.url,
        &[
            VERSION,
            "aarch64-apple-darwin",
            into.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("checksum mismatch for chartseq-"), "{err}");
    assert!(err.contains("nothing installed"), "{err}");
    assert!(!into.join("chartseq").exists());
    // An archive SHA256SUMS does not list: refused too.
    let sums = site.path().join(format!("v{VERSION}/SHA256SUMS"));
    let text = std::fs::read_to_string(&sums).expect("sums");
    std::fs::write(
        &sums,
        text.lines()
            .filter(|l| !l.contains("x86_64-apple-darwin"))
            .fold(String::new(), |acc, l| acc + l + "\n"),
    )
    .expect("write");
    let (code, _, err) = install_release(
        &server.url,
        &[
            VERSION,
            "x86_64-apple-darwin",
            into.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("has no line for chartseq-"), "{err}");
    assert!(!into.join("chartseq").exists());
}

/// The Action's install script in a simulated runner, with a stand-in `cargo` that records
/// how it was called.
struct ActionRun {
    code: i32,
    stdout: String,
    output: String,
    cargo: String,
    installed: Option<String>,
}

fn action_install(url: &str, env: &[(&str, &str)]) -> ActionRun {
    let dir = tempfile::tempdir().expect("tempdir");
    let fake = dir.path().join("fake");
    std::fs::create_dir_all(&fake).expect("mkdir");
    let log = dir.path().join("cargo.log");
    let cargo = fake.join("cargo");
    std::fs::write(
        &cargo,
        format!("#!/bin/sh\necho \"$@\" >> '{}'\n", log.display()),
    )
    .expect("write");
    let (code, _, _) = run(Command::new("chmod").arg("+x").arg(&cargo));
    assert_eq!(code, 0);
    let output = dir.path().join("output");
    let rooted = dir.path().join("root");
    let script = root().join("scripts/action-install.sh");
    let path = format!(
        "{}:{}",
        fake.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut resolve = scrubbed(&script);
    let mut install = scrubbed(&script);
    for cmd in [&mut resolve, &mut install] {
        cmd.env("PATH", &path)
            .env("CHARTSEQ_RELEASE_URL", url)
            .env("GITHUB_OUTPUT", &output)
            .env("ACTION_PATH", root())
            .env("ACTION_REPOSITORY", "chartseq/chartseq")
            .env("SERVER_URL", "https://github.com")
            .env("ROOT", &rooted)
            .envs(env.iter().copied());
    }
    let (code, _, err) = run(resolve.arg("resolve"));
    assert_eq!(code, 0, "{err}");
    let (code, stdout, err) = run(install.arg("install"));
    ActionRun {
        code,
        stdout: format!("{stdout}{err}"),
        output: std::fs::read_to_string(&output).unwrap_or_default(),
        cargo: std::fs::read_to_string(&log).unwrap_or_default(),
        installed: std::fs::read_to_string(rooted.join("bin/chartseq")).ok(),
    }
}

#[test]
fn action_downloads_a_release_and_compiles_anything_else() {
    let site = tempfile::tempdir().expect("tempdir");
    fake_release(site.path(), VERSION, None);
    let server = Server::serve(site.path());
    let tag = format!("v{VERSION}");
    let arm = [("RUNNER_OS", "Linux"), ("RUNNER_ARCH", "ARM64")];

    // `version: vX.Y.Z`, and `uses: chartseq/chartseq@vX.Y.Z` without it: the runner's binary.
    for env in [
        [("VERSION", tag.as_str()), ("ACTION_REF", "main")],
        [("VERSION", ""), ("ACTION_REF", tag.as_str())],
    ] {
        let action = action_install(&server.url, &[&arm[..], &env[..]].concat());
        assert_eq!(action.code, 0, "{}", action.stdout);
        assert_eq!(
            action.installed.as_deref(),
            Some("#!/bin/sh\necho stand-in for aarch64-unknown-linux-musl\n")
        );
        assert_eq!(action.cargo, "", "nothing compiled");
        assert_eq!(
            action.output,
            format!("key=rel-{VERSION}\nrelease={VERSION}\n")
        );
        assert!(
            action.stdout.contains("verified against SHA256SUMS"),
            "{}",
            action.stdout
        );
    }
    let mac = [
        ("RUNNER_OS", "macOS"),
        ("RUNNER_ARCH", "X64"),
        ("VERSION", tag.as_str()),
    ];
    let action = action_install(&server.url, &mac);
    assert_eq!(
        action.installed.as_deref(),
        Some("#!/bin/sh\necho stand-in for x86_64-apple-darwin\n")
    );

    // A branch: compiled from the action's checkout, and the log says why.
    let action = action_install(&server.url, &[&arm[..], &[("ACTION_REF", "main")]].concat());
    assert_eq!(action.code, 0, "{}", action.stdout);
    assert!(
        action.stdout.contains(
            "chartseq: main is not a release tag, so chartseq is compiled from source with cargo"
        ),
        "{}",
        action.stdout
    );
    assert!(
        action.cargo.starts_with("install --locked --root "),
        "{}",
        action.cargo
    );
    assert!(action.cargo.contains(" --path "), "{}", action.cargo);
    assert!(action.output.starts_with("key=src-") && action.output.ends_with("\nrelease=\n"));
    // A commit as `version`: compiled from that commit.
    let action = action_install(&server.url, &[("VERSION", "0123abcd")]);
    assert!(
        action
            .cargo
            .contains("--git https://github.com/chartseq/chartseq --rev 0123abcd chartseq"),
        "{}",
        action.cargo
    );
    assert_eq!(action.output, "key=rev-0123abcd\nrelease=\n");

    // A release whose binary is not there (not published yet): compiled from its tag, warned.
    let action = action_install(&server.url, &[&arm[..], &[("VERSION", "v9.9.9")]].concat());
    assert_eq!(action.code, 0, "{}", action.stdout);
    assert!(
        action.stdout.contains("::warning title=chartseq::the release binary of chartseq v9.9.9 could not be downloaded"),
        "{}",
        action.stdout
    );
    assert!(
        action.cargo.contains("--tag v9.9.9 chartseq"),
        "{}",
        action.cargo
    );

    // A download that does not match SHA256SUMS: the step fails, nothing installed or built.
    let sums = site.path().join(format!("v{VERSION}/SHA256SUMS"));
    let text = std::fs::read_to_string(&sums).expect("sums");
    let tampered = text.lines().fold(String::new(), |acc, line| {
        if line.ends_with("-aarch64-unknown-linux-musl.tar.gz") {
            acc + &"0".repeat(64) + &line[64..] + "\n"
        } else {
            acc + line + "\n"
        }
    });
    assert_ne!(tampered, text);
    std::fs::write(&sums, tampered).expect("write");
    let action = action_install(
        &server.url,
        &[&arm[..], &[("VERSION", tag.as_str())]].concat(),
    );
    assert_eq!(action.code, 1, "{}", action.stdout);
    assert!(
        action.stdout.contains("::error title=chartseq::"),
        "{}",
        action.stdout
    );
    assert_eq!(action.installed, None);
    assert_eq!(action.cargo, "");

    // action.yml runs the script in both steps, with the runner's platform.
    let action = read("action.yml");
    for needle in [
        "\"$GITHUB_ACTION_PATH/scripts/action-install.sh\" resolve",
        "\"$GITHUB_ACTION_PATH/scripts/action-install.sh\" install",
        "RUNNER_OS: ${{ runner.os }}",
        "RUNNER_ARCH: ${{ runner.arch }}",
        "ACTION_REF: ${{ github.action_ref }}",
        "key: chartseq-${{ runner.os }}-${{ runner.arch }}-${{ steps.source.outputs.key }}",
    ] {
        assert!(action.contains(needle), "action.yml lacks {needle}");
    }
}

/// The plugin's files, copied to a directory of their own (helm links a local plugin's
/// directory, and the hook writes `bin/` there).
fn plugin_checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(root().join("plugin.yaml"), dir.path().join("plugin.yaml")).expect("copy");
    copy_dir(&root().join("scripts"), &dir.path().join("scripts"));
    dir
}

fn helm_home(helm: &Path, home: &Path, url: &str) -> Command {
    let mut cmd = scrubbed(helm);
    let data = home.join("data");
    cmd.env("HELM_DATA_HOME", &data)
        .env("HELM_PLUGINS", data.join("plugins"))
        .env("HELM_CONFIG_HOME", home.join("config"))
        .env("HELM_CACHE_HOME", home.join("cache"))
        .env("CHARTSEQ_RELEASE_URL", url)
        .env_remove("CHARTSEQ_HELM");
    cmd
}

#[test]
fn helm_plugin_install_downloads_the_release_binary() {
    let Some(helm) = tool("helm") else {
        return;
    };
    let site = tempfile::tempdir().expect("tempdir");
    fake_release(site.path(), VERSION, Some(&host_target()));
    let server = Server::serve(site.path());
    let checkout = plugin_checkout();
    let home = tempfile::tempdir().expect("tempdir");
    let (code, out, err) = run(helm_home(&helm, home.path(), &server.url)
        .args(["plugin", "install"])
        .arg(checkout.path()));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Installed plugin: chartseq"), "{out}{err}");
    assert!(
        format!("{out}{err}")
            .contains(&format!("installed chartseq {VERSION} ({})", host_target())),
        "{out}{err}"
    );
    let installed = checkout.path().join("bin/chartseq");
    assert_eq!(
        std::fs::read(&installed).expect("the binary"),
        std::fs::read(env!("CARGO_BIN_EXE_chartseq")).expect("chartseq")
    );
    // `helm chartseq lint` runs it, with no chartseq on PATH.
    let path = std::env::var("PATH").unwrap_or_default();
    assert!(
        !std::env::split_paths(&path).any(|d| d.join("chartseq").is_file()),
        "a chartseq on PATH would hide what this test checks"
    );
    let (code, out, err) = run(helm_home(&helm, home.path(), &server.url).args([
        "chartseq",
        "lint",
        "fixtures/integrations/charts/cycle",
        "--format",
        "concise",
    ]));
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.starts_with(
            "fixtures/integrations/charts/cycle/templates/app.yaml:7:41: CS001 [error]"
        ),
        "{out}{err}"
    );
    let (_, out, _) =
        run(helm_home(&helm, home.path(), &server.url).args(["chartseq", "--version"]));
    assert!(out.starts_with(&format!("chartseq {VERSION} (")), "{out}");

    // A helm that runs no `platformHooks` (before 3.18): the first run downloads the binary.
    let old_helm = plugin_checkout();
    let plugin_run = || {
        let mut cmd = scrubbed(old_helm.path().join("scripts/helm-plugin.sh"));
        cmd.env("HELM_PLUGIN_DIR", old_helm.path())
            .env("CHARTSEQ_RELEASE_URL", &server.url);
        cmd
    };
    let (code, out, err) = run(plugin_run().arg("--version"));
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with(&format!("chartseq {VERSION} (")), "{out}");
    assert!(err.contains("verified against SHA256SUMS"), "{err}");
    let (code, out, err) = run(plugin_run().arg("--version"));
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with(&format!("chartseq {VERSION} (")), "{out}");
    assert_eq!(err, "", "the second run downloads nothing");
}

#[test]
fn helm_plugin_install_says_what_to_do_when_the_download_is_impossible() {
    let Some(helm) = tool("helm") else {
        return;
    };
    // A release without this version, and then one whose archive was altered.
    let site = tempfile::tempdir().expect("tempdir");
    fake_release(site.path(), "0.0.1", None);
    let server = Server::serve(site.path());
    let checkout = plugin_checkout();
    let home = tempfile::tempdir().expect("tempdir");
    let (code, out, err) = run(helm_home(&helm, home.path(), &server.url)
        .args(["plugin", "install"])
        .arg(checkout.path()));
    assert_ne!(code, 0, "{out}{err}");
    let text = format!("{out}{err}");
    assert_eq!(
        text.matches("install chartseq ").count(),
        1,
        "the advice is given once: {text}"
    );
    assert!(
        text.contains(&format!(
            "helm chartseq: the chartseq {VERSION} release binary for {} could not be downloaded; install chartseq {VERSION} yourself",
            host_target()
        )),
        "{text}"
    );
    assert!(
        text.contains("cargo install --locked chartseq --version"),
        "{text}"
    );
    assert!(!checkout.path().join("bin/chartseq").exists());

    fake_release(site.path(), VERSION, None);
    let archive = site.path().join(format!(
        "v{VERSION}/chartseq-{VERSION}-{}.tar.gz",
        host_target()
    ));
    std::fs::write(&archive, b"not the archive").expect("write");
    let home = tempfile::tempdir().expect("tempdir");
    let checkout = plugin_checkout();
    let (code, out, err) = run(helm_home(&helm, home.path(), &server.url)
        .args(["plugin", "install"])
        .arg(checkout.path()));
    assert_ne!(code, 0, "{out}{err}");
    let text = format!("{out}{err}");
    assert!(
        text.contains("failed verification against its SHA256SUMS"),
        "{text}"
    );
    assert!(!checkout.path().join("bin/chartseq").exists());
}

/// The `chartseq-lint-release` hook through real pre-commit: no chartseq on PATH and no
/// cargo needed; the release binary is downloaded once into the cache and reused.
#[test]
fn pre_commit_release_hook_runs_the_downloaded_binary() {
    let (Some(pre_commit), Some(helm)) = (tool("pre_commit"), tool("helm")) else {
        return;
    };
    let site = tempfile::tempdir().expect("tempdir");
    fake_release(site.path(), VERSION, Some(&host_target()));
    let server = Server::serve(site.path());
    let repo = scratch_repo(&[("clean", "clean"), ("cycle", "cyc")]);
    let home = tempfile::tempdir().expect("tempdir");
    let cache = home.path().join("cache");
    let url = server.url.clone();
    let try_repo = |files: &[&str]| {
        run(scrubbed(&pre_commit)
            .current_dir(repo.path())
            .env("PRE_COMMIT_HOME", home.path().join("pre-commit"))
            .env("XDG_CACHE_HOME", &cache)
            .env("CHARTSEQ_RELEASE_URL", &url)
            .env("CHARTSEQ_HELM", &helm)
            .arg("try-repo")
            .arg(root())
            .arg("chartseq-lint-release")
            .arg("--files")
            .args(files))
    };
    let (code, out, err) = try_repo(&["cyc/templates/app.yaml", "cyc/Chart.yaml"]);
    assert_eq!(code, 1, "{out}{err}");
    assert_eq!(out.matches(CYCLE_LINE).count(), 1, "{out}{err}");
    let cached: PathBuf = cache.join(format!("chartseq/{VERSION}/{}/chartseq", host_target()));
    assert!(cached.is_file());
    // The second run uses the cache: the server is gone.
    drop(server);
    let (code, out, err) = try_repo(&["clean/values.yaml"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Passed"), "{out}");
}

/// The `.rs` files under `dir`, relative to the repository root.
fn sources(dir: &Path, into: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            sources(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root()).expect("under the root");
            into.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// What `cargo install chartseq` builds from, and nothing the tests need: the package list
/// (offline, from the lock file), the manifest's crates.io metadata, and `cargo binstall`'s
/// archive names matching the release workflow's.
#[test]
fn crate_package_holds_the_sources_and_not_the_test_data() {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let (code, out, err) = run(scrubbed(cargo).args([
        "package",
        "--list",
        "--locked",
        "--offline",
        "--allow-dirty",
    ]));
    assert_eq!(code, 0, "{err}");
    let listed: BTreeSet<&str> = out.lines().collect();
    for needed in [
        "Cargo.toml",
        "Cargo.lock",
        "build.rs",
        "build/commit.rs",
        "README.md",
        "CHANGELOG.md",
        "LICENSE",
        "src/main.rs",
        "src/lib.rs",
        "src/cli/mod.rs",
    ] {
        assert!(listed.contains(needed), "the package lacks {needed}");
    }
    let outside: Vec<&&str> = listed
        .iter()
        .filter(|f| {
            !f.starts_with("src/")
                && ![
                    "Cargo.toml",
                    "Cargo.toml.orig",
                    "Cargo.lock",
                    ".cargo_vcs_info.json",
                    "build.rs",
                    "build/commit.rs",
                    "README.md",
                    "CHANGELOG.md",
                    "LICENSE",
                ]
                .contains(f)
        })
        .collect();
    assert!(
        outside.is_empty(),
        "packaged beyond the sources: {outside:?}"
    );
    // Every source file is in it.
    let mut all = Vec::new();
    sources(&root().join("src"), &mut all);
    for file in &all {
        assert!(listed.contains(file.as_str()), "the package lacks {file}");
    }

    let manifest: toml::Table = read("Cargo.toml").parse().expect("Cargo.toml");
    let package = &manifest["package"];
    for key in [
        "description",
        "license",
        "repository",
        "readme",
        "keywords",
        "categories",
        "rust-version",
    ] {
        assert!(package.get(key).is_some(), "Cargo.toml lacks package.{key}");
    }
    let binstall = &package["metadata"]["binstall"];
    assert_eq!(
        binstall["pkg-url"].as_str(),
        Some(
            "{ repo }/releases/download/v{ version }/{ name }-{ version }-{ target }{ archive-suffix }"
        )
    );
    assert_eq!(
        binstall["bin-dir"].as_str(),
        Some("{ name }-{ version }-{ target }/{ bin }{ binary-ext }")
    );
    assert_eq!(binstall["pkg-fmt"].as_str(), Some("tgz"));
    assert_eq!(
        binstall["overrides"]["x86_64-pc-windows-msvc"]["pkg-fmt"].as_str(),
        Some("zip")
    );
}

/// The subcommands `chartseq --help` lists.
fn subcommands() -> Vec<String> {
    let (code, out, _) = run(chartseq().arg("--help"));
    assert_eq!(code, 0);
    out.split("Commands:\n")
        .nth(1)
        .expect("a command list")
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn completions_cover_every_command_and_parse() {
    let commands = subcommands();
    assert!(commands.len() > 10, "{commands:?}");
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let (code, script, err) = run(chartseq().args(["completions", shell]));
        assert_eq!(code, 0, "{shell}: {err}");
        for command in &commands {
            assert!(script.contains(command.as_str()), "{shell} lacks {command}");
        }
        assert!(script.contains("--format"), "{shell} lacks lint's flags");
    }
    // bash reads the bash script without a syntax error, and completes a subcommand.
    let (_, script, _) = run(chartseq().args(["completions", "bash"]));
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("chartseq.bash");
    std::fs::write(&file, &script).expect("write");
    let (code, out, err) = run(Command::new("bash").arg("-c").arg(format!(
        "source '{}' && COMP_WORDS=(chartseq li) COMP_CWORD=1 && _chartseq chartseq li chartseq && printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        file.display()
    )));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out.lines().collect::<BTreeSet<_>>(),
        ["lint", "list"].into_iter().collect(),
        "{out}"
    );
    let (code, _, err) = run(chartseq().args(["completions", "tcsh"]));
    assert_eq!(code, 2);
    assert!(err.contains("possible values: bash"), "{err}");
}

#[test]
fn man_pages_document_every_command() {
    let (code, page, err) = run(chartseq().arg("man"));
    assert_eq!(code, 0, "{err}");
    assert!(
        page.contains(&format!(".TH chartseq 1  \"chartseq {VERSION} (")),
        "{page}"
    );
    for command in subcommands() {
        assert!(
            page.contains(&format!("chartseq\\-{command}(1)")),
            "chartseq(1) does not list {command}"
        );
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, out, err) = run(chartseq()
        .args(["man", "--dir"])
        .arg(dir.path().join("man")));
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    for command in subcommands() {
        let file = dir.path().join(format!("man/chartseq-{command}.1"));
        assert!(file.is_file(), "{}", file.display());
    }
    let lint = std::fs::read_to_string(dir.path().join("man/chartseq-lint.1")).expect("page");
    assert!(lint.contains("\\-\\-fail\\-on"), "{lint}");
    // groff formats it without a warning, where groff is installed.
    if Command::new("groff").arg("--version").output().is_ok() {
        let (code, text, err) = run(Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(dir.path().join("man/chartseq.1")));
        assert_eq!(code, 0, "{text}{err}");
        assert_eq!(err, "", "groff warns");
    }
}

/// The container image's Dockerfile passes hadolint and builds what the README says: the
/// static binary from the locked sources, the helm the tests use, a non-root user. (Building
/// the image needs the base images from a registry, which the tests do not reach.)
#[test]
fn dockerfile_lints_clean_and_runs_as_non_root() {
    let dockerfile = read("Dockerfile");
    if let Some(hadolint) = tool("hadolint") {
        let (code, out, err) = run(scrubbed(&hadolint).arg("Dockerfile"));
        assert_eq!(code, 0, "hadolint: {out}{err}");
        // It does flag a root image.
        let dir = tempfile::tempdir().expect("tempdir");
        let root_image = dir.path().join("Dockerfile");
        std::fs::write(
            &root_image,
            "FROM alpine:3.22\nUSER root\nRUN apk add curl\n",
        )
        .expect("write");
        let (code, _, _) = run(scrubbed(&hadolint).arg(&root_image));
        assert_ne!(code, 0);
    }
    for needle in [
        "cargo build --release --locked --bin chartseq",
        "ARG CHARTSEQ_COMMIT=unknown",
        "sha256sum -c",
        "USER 10001",
        "ENTRYPOINT [\"chartseq\"]",
    ] {
        assert!(dockerfile.contains(needle), "Dockerfile lacks {needle}");
    }
    // The helm the tests run (scripts/get-tools.sh) is the image's.
    let tools = read("scripts/get-tools.sh");
    let helm = versions_after(&dockerfile, "ARG HELM_VERSION=v");
    assert_eq!(helm.len(), 1);
    assert!(
        tools.contains(&format!("helm v{}", helm[0])),
        "Dockerfile's helm {helm:?}"
    );
    // The build context leaves out what the image must not depend on.
    let ignored = read(".dockerignore");
    for path in [".git", "target", ".tools"] {
        assert!(
            ignored.lines().any(|l| l == path),
            ".dockerignore lacks {path}"
        );
    }
}

/// The README's install line, from a git repository at the release tag (a `file://` URL
/// standing in for GitHub): helm 4 refuses a source it cannot verify without `--verify=false`,
/// and with it the hook downloads the tag's release binary.
#[test]
fn helm_plugin_installs_from_a_git_tag_as_the_readme_says() {
    let Some(helm) = tool("helm") else {
        return;
    };
    let readme = read("README.md");
    let line = format!(
        "helm plugin install https://github.com/chartseq/chartseq --version v{VERSION} --verify=false"
    );
    assert!(readme.contains(&line), "README.md lacks {line}");

    let site = tempfile::tempdir().expect("tempdir");
    fake_release(site.path(), VERSION, Some(&host_target()));
    let server = Server::serve(site.path());
    let checkout = plugin_checkout();
    let repo = checkout.path().join("chartseq");
    std::fs::create_dir_all(&repo).expect("mkdir");
    std::fs::rename(
        checkout.path().join("plugin.yaml"),
        repo.join("plugin.yaml"),
    )
    .expect("mv");
    std::fs::rename(checkout.path().join("scripts"), repo.join("scripts")).expect("mv");
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "plugin"]);
    git(&repo, &["tag", &format!("v{VERSION}")]);
    let url = format!("file://{}", repo.display());
    let home = tempfile::tempdir().expect("tempdir");
    let install = |extra: &[&str]| {
        run(helm_home(&helm, home.path(), &server.url)
            .args([
                "plugin",
                "install",
                &url,
                "--version",
                &format!("v{VERSION}"),
            ])
            .args(extra))
    };
    let (code, out, err) = install(&[]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("Use --verify=false"), "{err}");
    let (code, out, err) = install(&["--verify=false"]);
    assert_eq!(code, 0, "{out}{err}");
    let installed = home.path().join("data/plugins/chartseq/bin/chartseq");
    assert!(installed.is_file(), "{out}{err}");
    let (code, out, err) =
        run(helm_home(&helm, home.path(), &server.url).args(["chartseq", "--version"]));
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with(&format!("chartseq {VERSION} (")), "{out}");
}

/// The pre-commit hook's script when the release cannot be had: it names the other hooks and
/// fails; with a tampered archive it installs nothing in the cache.
#[test]
fn pre_commit_release_script_fails_clearly_without_a_release() {
    let site = tempfile::tempdir().expect("tempdir");
    fake_release(site.path(), "0.0.1", None);
    let server = Server::serve(site.path());
    let cache = tempfile::tempdir().expect("tempdir");
    let script = || {
        let mut cmd = scrubbed(root().join("scripts/pre-commit-release.sh"));
        cmd.env("CHARTSEQ_RELEASE_URL", &server.url)
            .env("CHARTSEQ_CACHE_DIR", cache.path())
            .arg("--version");
        cmd
    };
    let (code, out, err) = run(&mut script());
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains(&format!(
            "chartseq-lint-release: could not install the chartseq {VERSION} release binary; use the chartseq-lint hook"
        )),
        "{err}"
    );
    fake_release(site.path(), VERSION, None);
    let archive = site.path().join(format!(
        "v{VERSION}/chartseq-{VERSION}-{}.tar.gz",
        host_target()
    ));
    std::fs::write(&archive, b"tampered").expect("write");
    let (code, _, err) = run(&mut script());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("checksum mismatch"), "{err}");
    let cached = cache
        .path()
        .join(format!("{VERSION}/{}/chartseq", host_target()));
    assert!(!cached.exists());
}

/// plugin.yaml uses only keys every helm 3 knows (helm before 3.18 reads it strictly and refuses
/// the plugin for an unknown key such as `platformHooks` or a command's `args`), and its install
/// and update hooks run the download script.
#[test]
fn plugin_yaml_loads_in_every_helm_3_and_hooks_the_download() {
    let plugin = read("plugin.yaml");
    // helm 3.8's plugin Metadata and PlatformCommand fields.
    let top = [
        "name",
        "version",
        "usage",
        "description",
        "ignoreFlags",
        "platformCommand",
        "command",
        "hooks",
        "downloaders",
        "useTunnel",
    ];
    let command = ["os", "arch", "command"];
    let mut section = "";
    for line in plugin.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let key = line
            .trim_start()
            .trim_start_matches("- ")
            .split(':')
            .next()
            .unwrap_or_default();
        if indent == 0 {
            assert!(
                top.contains(&key),
                "plugin.yaml: helm 3 refuses the key {key}"
            );
            section = key;
        } else if section == "platformCommand" {
            assert!(
                command.contains(&key),
                "plugin.yaml: helm 3 refuses the key {key}"
            );
        } else if section == "hooks" {
            assert!(["install", "update"].contains(&key), "hook {key}");
            assert!(
                line.ends_with(": '\"$HELM_PLUGIN_DIR/scripts/plugin-install.sh\"'"),
                "{line}"
            );
        }
    }
    assert!(
        plugin.contains("\n  - os: windows\n"),
        "Windows has its command"
    );
}
