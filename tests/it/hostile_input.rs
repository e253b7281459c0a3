//! Hostile ways of handing chartseq its input: operands that look like options of the tools it
//! runs, devices and FIFOs, archives that break the chart tree's budget or hold one member
//! twice, links that lead back into their own chart, links in a repository at a revision.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::{chartseq, fixture, run, tool};

fn git(dir: &Path, args: &[&str]) {
    let (code, out, err) = run(std::process::Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args));
    assert_eq!(code, 0, "git {args:?}: {out}{err}");
}

/// A chart directory with one `ConfigMap` per name.
fn chart(dir: &Path, name: &str, resources: &[&str]) -> PathBuf {
    std::fs::create_dir_all(dir.join("templates")).expect("mkdir");
    std::fs::write(
        dir.join("Chart.yaml"),
        format!("apiVersion: v2\nname: {name}\nversion: 0.1.0\n"),
    )
    .expect("Chart.yaml");
    for r in resources {
        std::fs::write(
            dir.join(format!("templates/{r}.yaml")),
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {r}\n"),
        )
        .expect("template");
    }
    dir.to_path_buf()
}

/// Every entry below `dir`, as paths relative to it.
fn listing(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).expect("read_dir").flatten() {
            let path = entry.path();
            out.push(
                path.strip_prefix(dir)
                    .expect("below")
                    .to_string_lossy()
                    .into_owned(),
            );
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(path);
            }
        }
    }
    out.sort();
    out
}

/// `--release-name=--output-dir=DIR` once reached helm as its own flag and helm wrote the
/// chart into DIR: the name is checked by Helm's rule first, and helm gets its operands after
/// `--`, so nothing is written and the error says why.
#[test]
fn a_release_name_never_becomes_a_helm_flag() {
    let Some(helm) = tool("helm") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let out_dir = dir.path().join("written");
    let clean = fixture("integrations/charts/clean");
    let arg = format!("--release-name=--output-dir={}", out_dir.display());
    for command in ["plan", "template", "lint"] {
        let (code, out, err) = run(chartseq()
            .arg(command)
            .arg(&clean)
            .arg(&arg)
            .arg("--helm")
            .arg(&helm));
        assert_eq!(code, 2, "{command}: {out}{err}");
        assert!(
            err.contains("invalid release name \"--output-dir="),
            "{command}: {err}"
        );
        assert!(!out_dir.exists(), "{command}: helm wrote {out_dir:?}");
    }
    // Helm's rule: 53 characters at most, lowercase DNS labels.
    for bad in ["Web", &"x".repeat(54), "web.", "-web"] {
        let (code, _, err) = run(chartseq()
            .arg("plan")
            .arg(&clean)
            .arg(format!("--release-name={bad}"))
            .arg("--helm")
            .arg(&helm));
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("invalid release name"), "{bad}: {err}");
    }
    for good in ["web", &"x".repeat(53), "web.v2-1"] {
        let (code, _, err) = run(chartseq()
            .arg("plan")
            .arg(&clean)
            .arg(format!("--release-name={good}"))
            .arg("--helm")
            .arg(&helm));
        assert_eq!(code, 0, "{good}: {err}");
    }
    // A values file whose name looks like a flag is still a values file.
    let odd = dir.path().join("--output-dir=x.yaml");
    std::fs::write(&odd, "a: 1\n").expect("values");
    let (code, _, err) = run(chartseq()
        .current_dir(dir.path())
        .arg("plan")
        .arg(&clean)
        .args(["--values=--output-dir=x.yaml", "--helm"])
        .arg(&helm));
    assert_eq!(code, 0, "{err}");
    assert!(!dir.path().join("x.yaml").exists());
}

/// `--changed-since=--output=F` once reached `git diff` as its option: git wrote F, saw no
/// change and lint passed. A revision is resolved to a commit first, and one starting with `-`
/// is refused, so nothing is written and the run fails.
#[test]
fn a_revision_never_becomes_a_git_option() {
    let repo = tempfile::tempdir().expect("tempdir");
    let top = repo.path();
    git(top, &["init", "-q", "-b", "main"]);
    chart(&top.join("charts/app"), "app", &["a"]);
    git(top, &["add", "-A"]);
    git(top, &["commit", "-q", "-m", "one"]);
    let before = listing(top);
    let (code, out, err) =
        run(chartseq()
            .current_dir(top)
            .args(["lint", "--changed-since=--output=F", "."]));
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("--changed-since") && err.contains("is not a git revision"),
        "{err}"
    );
    assert_eq!(listing(top), before, "git wrote a file");
    // A revision is still a revision.
    let (code, _, err) =
        run(chartseq()
            .current_dir(top)
            .args(["lint", "--changed-since=main", "."]));
    assert_eq!(code, 0, "{err}");

    // `diff REF:path` takes the same care.
    let (code, _, err) = run(chartseq().current_dir(top).args([
        "diff",
        "--",
        "--output=G:charts/app",
        "charts/app",
    ]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is not a git revision"), "{err}");
    assert_eq!(listing(top), before, "git wrote a file");
}

/// Values files, TARGET streams and `--chart` archives are read through one bounded reader:
/// `/dev/zero` and a FIFO are refused at the limit a regular file is held to, promptly.
#[cfg(unix)]
#[test]
fn devices_and_fifos_are_held_to_the_limit_of_regular_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let clean = fixture("integrations/charts/clean");
    let timed = |cmd: &mut std::process::Command| {
        let started = Instant::now();
        let result = run(cmd);
        assert!(started.elapsed() < Duration::from_secs(120), "no hang");
        result
    };
    // `-f /dev/zero`: refused at --max-document-bytes, before helm runs.
    let (code, _, err) = timed(chartseq().arg("plan").arg(&clean).args([
        "-f",
        "/dev/zero",
        "--max-document-bytes",
        "1048576",
    ]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("values file /dev/zero has more than the limit of 1048576")
            && err.contains("--max-document-bytes"),
        "{err}"
    );
    // The default limit holds for devices too (64 MiB, not the 2 GiB once read).
    let (code, _, err) = timed(chartseq().arg("plan").arg(&clean).args(["-f", "/dev/zero"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("more than the limit of 67108864"), "{err}");

    // The TARGET: a device, and standard input from it.
    let (code, _, err) =
        timed(chartseq().args(["plan", "/dev/zero", "--max-input-bytes", "1048576"]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "/dev/zero has more than the limit of 1048576 (raise it with --max-input-bytes)"
        ),
        "{err}"
    );
    let zero = std::fs::File::open("/dev/zero").expect("/dev/zero");
    let (code, _, err) = timed(
        chartseq()
            .args(["plan", "-", "--max-input-bytes", "1048576"])
            .stdin(zero),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("standard input has more than the limit of 1048576"),
        "{err}"
    );
    // A regular file over the limit is refused unread, with its size.
    let stream = dir.path().join("s.yaml");
    std::fs::write(&stream, vec![b'#'; 2048]).expect("write");
    let (code, _, err) = timed(
        chartseq()
            .arg("plan")
            .arg(&stream)
            .args(["--max-input-bytes", "1024"]),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("has 2048 bytes, more than the limit of 1024"),
        "{err}"
    );

    // A FIFO fed more than the limit, as a values file and as the TARGET.
    for (name, args) in [
        (
            "values.fifo",
            vec![
                "plan",
                "CHART",
                "-f",
                "FIFO",
                "--max-document-bytes",
                "65536",
            ],
        ),
        (
            "stream.fifo",
            vec!["plan", "FIFO", "--max-input-bytes", "65536"],
        ),
    ] {
        let fifo = dir.path().join(name);
        let (code, _, err) = run(std::process::Command::new("mkfifo").arg(&fifo));
        assert_eq!(code, 0, "mkfifo: {err}");
        let writer_path = fifo.clone();
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            if let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(&writer_path) {
                let chunk = vec![b'#'; 65536];
                for _ in 0..64 {
                    if f.write_all(&chunk).is_err() {
                        break;
                    }
                }
            }
        });
        let args: Vec<PathBuf> = args
            .iter()
            .map(|a| match *a {
                "CHART" => clean.clone(),
                "FIFO" => fifo.clone(),
                other => PathBuf::from(other),
            })
            .collect();
        let (code, _, err) = timed(chartseq().args(&args));
        writer.join().expect("writer");
        assert_eq!(code, 2, "{name}: {err}");
        assert!(
            err.contains(&format!("{name} has more than the limit of 65536")),
            "{name}: {err}"
        );
    }
}

/// helm's output is read through the same bounded reader.
#[test]
fn helm_output_is_held_to_the_input_limit() {
    let Some(helm) = tool("helm") else {
        return;
    };
    let clean = fixture("integrations/charts/clean");
    let (code, _, err) = run(chartseq()
        .arg("plan")
        .arg(&clean)
        .args(["--max-input-bytes", "100", "--helm"])
        .arg(&helm));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("the output of helm template for")
            && err.contains("more than the limit of 100 (raise it with --max-input-bytes)"),
        "{err}"
    );
}

/// `diff REF:path` reads a subchart that is a symbolic link inside the repository (a
/// monorepo's `charts/app/charts/common -> ../../common`) as `lint` reads the working tree:
/// from the revision, relative to the link's directory; a link out of the repository and a
/// link back into its own chart are clear errors.
#[cfg(unix)]
#[test]
fn diff_follows_links_inside_the_repository_at_a_revision() {
    use std::os::unix::fs::symlink;
    let Some(helm) = tool("helm") else {
        return;
    };
    let repo = tempfile::tempdir().expect("tempdir");
    let top = repo.path();
    git(top, &["init", "-q", "-b", "main"]);
    chart(&top.join("charts/common"), "common", &["shared"]);
    let app = chart(&top.join("charts/app"), "app", &["web"]);
    std::fs::create_dir_all(app.join("charts")).expect("mkdir");
    symlink("../../common", app.join("charts/common")).expect("symlink");
    // A template linked from elsewhere in the repository, through a linked directory.
    std::fs::create_dir_all(top.join("shared")).expect("mkdir");
    std::fs::write(
        top.join("shared/extra.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n",
    )
    .expect("write");
    symlink("shared", top.join("lib")).expect("symlink");
    symlink("../../../lib/extra.yaml", app.join("templates/extra.yaml")).expect("symlink");
    git(top, &["add", "-A"]);
    git(top, &["commit", "-q", "-m", "one"]);
    let diff = |dir: &Path, args: &[&str]| {
        run(chartseq()
            .current_dir(dir)
            .arg("diff")
            .args(args)
            .args(["--format", "json", "--helm"])
            .arg(&helm))
    };
    let (code, out, err) = diff(top, &["HEAD:charts/app", "charts/app"]);
    assert_eq!(code, 0, "the revision is the working tree: {out}{err}");
    let (code, out, err) = diff(top, &["HEAD:charts/app", "HEAD:charts/app"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = run(chartseq()
        .current_dir(top)
        .args(["diff", "HEAD:charts/app", "HEAD:charts/app/charts/common"])
        .args(["--format", "json", "--helm"])
        .arg(&helm));
    assert_eq!(code, 1, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("json");
    let removed: Vec<&str> = json["resources"]["removed"]
        .as_array()
        .expect("removed")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(
        removed,
        ["extra", "web"],
        "the linked template is read: {out}"
    );
    // The revision's copy of the linked chart is read, not the working tree's.
    chart(&top.join("charts/common"), "common", &["shared", "added"]);
    let (code, out, err) = diff(top, &["HEAD:charts/app", "charts/app"]);
    assert_eq!(code, 1, "{out}{err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(json["resources"]["added"][0]["name"], "added", "{out}");
    assert_eq!(
        json["resources"]["removed"].as_array().map(Vec::len),
        Some(0)
    );
    // From a subdirectory, and through a linked directory on the way.
    let (code, out, err) = diff(&top.join("charts"), &["HEAD:app", "HEAD:app"]);
    assert_eq!(code, 0, "{out}{err}");
    symlink("charts/app", top.join("app-link")).expect("symlink");
    git(top, &["add", "-A"]);
    git(top, &["commit", "-q", "-m", "link"]);
    let (code, out, err) = diff(top, &["HEAD:app-link", "HEAD:charts/app"]);
    assert_eq!(code, 0, "{out}{err}");

    // A link out of the repository: the revision does not hold what it leads to.
    let outside = tempfile::tempdir().expect("outside");
    chart(outside.path(), "far", &["far"]);
    std::fs::remove_file(app.join("charts/common")).expect("rm");
    symlink(outside.path(), app.join("charts/common")).expect("symlink");
    git(top, &["add", "-A"]);
    git(top, &["commit", "-q", "-m", "absolute"]);
    let (code, _, err) = diff(top, &["HEAD:charts/app", "HEAD~1:charts/app"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("charts/app/charts/common") && err.contains("outside the repository"),
        "{err}"
    );
    std::fs::remove_file(app.join("charts/common")).expect("rm");
    symlink("../../../../escape", app.join("charts/common")).expect("symlink");
    git(top, &["add", "-A"]);
    git(top, &["commit", "-q", "-m", "escape"]);
    let (code, _, err) = diff(top, &["HEAD:charts/app", "HEAD~2:charts/app"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("outside the repository"), "{err}");
    // A link back into its own chart is the loop the working-tree loader reports.
    std::fs::remove_file(app.join("charts/common")).expect("rm");
    symlink(".", app.join("templates/again")).expect("symlink");
    git(top, &["add", "-A"]);
    git(top, &["commit", "-q", "-m", "loop"]);
    let started = Instant::now();
    let (code, _, err) = diff(top, &["HEAD:charts/app", "HEAD~3:charts/app"]);
    assert!(started.elapsed() < Duration::from_secs(120), "no hang");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("templates/again: symbolic link loop"), "{err}");
}

/// A gzipped tar archive with the given members, names written raw (as an attacker or an
/// odd packer writes them: `c/./Chart.yaml`).
fn tgz(path: &Path, members: &[(&str, &[u8])]) {
    crate::hostile::tgz(path, members, &[]);
}

/// A subchart archive `name-0.1.0.tgz` whose one template is `size` bytes of comment.
fn padded_subchart(dir: &Path, name: &str, size: usize) -> Vec<u8> {
    let path = dir.join(format!("{name}-0.1.0.tgz"));
    let chart_yaml = format!("apiVersion: v2\nname: {name}\nversion: 0.1.0\n");
    let padding = vec![b'#'; size];
    tgz(
        &path,
        &[
            (&format!("{name}/Chart.yaml"), chart_yaml.as_bytes()),
            (&format!("{name}/templates/pad.yaml"), &padding),
        ],
    );
    std::fs::read(&path).expect("archive")
}

fn plan_with_chart(chart: &Path, extra: &[&str]) -> (i32, String, String) {
    let stream = fixture("charts/diamond.rendered.yaml");
    let started = Instant::now();
    let result = run(chartseq()
        .arg("plan")
        .arg(&stream)
        .arg("--chart")
        .arg(chart)
        .args(extra));
    assert!(started.elapsed() < Duration::from_secs(120), "no hang");
    assert!(!result.2.contains("panicked"), "{}", result.2);
    result
}

/// `--max-archive-bytes` is a budget for the whole chart tree: several subchart archives each
/// under it, directly or nested in another archive, cannot add up to more (six archives just
/// under 256 MiB once took `plan` to 1.5 GiB).
#[test]
fn the_archive_cap_is_a_total_for_the_chart_tree() {
    use chartseq::source::chart::ChartLimits;
    let dir = tempfile::tempdir().expect("tempdir");
    // Four subchart archives of 400 KiB each in a chart directory.
    let parent = chart(&dir.path().join("parent"), "parent", &[]);
    std::fs::create_dir_all(parent.join("charts")).expect("mkdir");
    for name in ["a", "b", "c", "d"] {
        let bytes = padded_subchart(dir.path(), name, 400 * 1024);
        std::fs::write(parent.join(format!("charts/{name}-0.1.0.tgz")), bytes).expect("write");
    }
    let (code, _, err) = plan_with_chart(&parent, &["--max-archive-bytes", "1048576"]);
    assert_eq!(
        code, 2,
        "each archive is under the cap, the tree is not: {err}"
    );
    assert!(
        err.contains("1048576") && err.contains("--max-archive-bytes"),
        "{err}"
    );
    let (code, _, err) = plan_with_chart(&parent, &["--max-archive-bytes", "4194304"]);
    assert_eq!(code, 0, "the whole tree fits in 4 MiB: {err}");

    // The same subcharts nested in one packaged chart.
    let members: Vec<(String, Vec<u8>)> = ["a", "b", "c", "d"]
        .iter()
        .map(|n| {
            (
                format!("outer/charts/{n}-0.1.0.tgz"),
                padded_subchart(dir.path(), n, 400 * 1024),
            )
        })
        .chain(std::iter::once((
            "outer/Chart.yaml".to_owned(),
            b"apiVersion: v2\nname: outer\nversion: 0.1.0\n".to_vec(),
        )))
        .collect();
    let borrowed: Vec<(&str, &[u8])> = members
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let outer = dir.path().join("outer-0.1.0.tgz");
    tgz(&outer, &borrowed);
    let (code, _, err) = plan_with_chart(&outer, &["--max-archive-bytes", "1048576"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--max-archive-bytes"), "{err}");
    let (code, _, err) = plan_with_chart(&outer, &["--max-archive-bytes", "4194304"]);
    assert_eq!(code, 0, "{err}");

    // The file cap is a total too: the outer chart's five members and two in each subchart.
    let limits = ChartLimits {
        max_files: 12,
        ..ChartLimits::default()
    };
    let mut sources = chartseq::source::SourceMap::default();
    let err = chartseq::source::chart::load(&outer, &mut sources, limits)
        .expect_err("13 files at 12")
        .to_string();
    assert!(err.contains("more than 12 files"), "{err}");
    let limits = ChartLimits {
        max_files: 13,
        ..ChartLimits::default()
    };
    let mut sources = chartseq::source::SourceMap::default();
    assert!(chartseq::source::chart::load(&outer, &mut sources, limits).is_ok());
}

/// An archive holding `c/Chart.yaml` and `c/./Chart.yaml` was read one way by chartseq and
/// the other by Helm: member paths are normalised as a loader reads them and a member that
/// is there twice is refused, naming the archive and the member; an odd but unambiguous
/// spelling (`./c/…`, `c/./templates/…`) still loads.
#[test]
fn archive_members_are_normalised_and_duplicates_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cyclic: &[u8] = b"apiVersion: v2\nname: c\nversion: 0.1.0\ndependencies:\n  - name: x\n    depends-on: [y]\n  - name: y\n    depends-on: [x]\n";
    let plain: &[u8] = b"apiVersion: v2\nname: c\nversion: 0.1.0\n";
    let parent = chart(&dir.path().join("parent"), "parent", &[]);
    std::fs::create_dir_all(parent.join("charts")).expect("mkdir");
    let archive = parent.join("charts/c-0.1.0.tgz");
    for (first, second) in [
        ("c/Chart.yaml", "c/./Chart.yaml"),
        ("c/Chart.yaml", "./c//Chart.yaml"),
        ("c/templates/x.yaml", "c/templates/./x.yaml"),
    ] {
        tgz(&archive, &[(first, plain), (second, cyclic)]);
        let (code, _, err) = plan_with_chart(&parent, &[]);
        assert_eq!(code, 2, "{first} and {second}: {err}");
        assert!(
            err.contains("charts/c-0.1.0.tgz: archive holds")
                && err.contains("twice")
                && err.contains(first)
                && err.contains(second),
            "{err}"
        );
    }
    tgz(
        &archive,
        &[
            ("./c/Chart.yaml", plain),
            ("c/./templates//x.yaml", b"# x\n"),
        ],
    );
    let mut sources = chartseq::source::SourceMap::default();
    let loaded = chartseq::source::chart::load(
        &archive,
        &mut sources,
        chartseq::source::chart::ChartLimits::default(),
    )
    .expect("an unambiguous archive loads");
    assert!(
        loaded.files.contains_key("templates/x.yaml"),
        "{:?}",
        loaded.files.keys()
    );
    tgz(
        &archive,
        &[("c/Chart.yaml", plain), ("c/a/../../x.yaml", b"x")],
    );
    let (code, _, err) = plan_with_chart(&parent, &[]);
    assert_eq!(code, 2);
    assert!(err.contains("escapes the chart"), "{err}");
}

/// `migrate` proves its edit on a copy of the chart: a link back into its own chart
/// (`a -> .`, which `.helmignore` hides from helm) once made that copy recurse until it had
/// written gigabytes. The copy follows the loader's link rules (the loop is recreated as a
/// link inside the copy, never followed) and the chart caps, and its temporary directory is
/// gone afterwards, on error too; one a killed run left behind is removed by the next run.
#[cfg(unix)]
#[test]
fn migrate_copies_a_self_linked_chart_within_the_caps_and_cleans_up() {
    use std::os::unix::fs::symlink;
    let Some(helm) = tool("helm") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).expect("mkdir");
    let chart = dir.path().join("layers");
    let src = fixture("migrate/draft/layers");
    std::fs::create_dir_all(chart.join("templates")).expect("mkdir");
    std::fs::copy(src.join("Chart.yaml"), chart.join("Chart.yaml")).expect("copy");
    for t in ["app", "database", "migrate", "queue"] {
        let rel = format!("templates/{t}.yaml");
        std::fs::copy(src.join(&rel), chart.join(&rel)).expect("copy");
    }
    std::fs::create_dir_all(chart.join("files")).expect("mkdir");
    std::fs::write(chart.join("files/blob.bin"), vec![0u8; 1024 * 1024]).expect("blob");
    symlink(".", chart.join("a")).expect("symlink");
    std::fs::write(chart.join(".helmignore"), "a\n").expect("helmignore");
    // What a killed run left: its process is gone.
    let mut gone = std::process::Command::new("true").spawn().expect("true");
    let dead = gone.id();
    gone.wait().expect("wait");
    let left = tmp.join(format!("chartseq-migrate-{dead}-0-0"));
    std::fs::create_dir_all(left.join("layers")).expect("mkdir");
    let an_hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::open(&left)
        .and_then(|d| d.set_modified(an_hour_ago))
        .expect("age the directory");
    // One of a process that is gone but only just: it may belong to a process this one cannot
    // see (another PID namespace sharing the directory), so it stays.
    let recent = tmp.join(format!("chartseq-migrate-{dead}-1-0"));
    std::fs::create_dir_all(&recent).expect("mkdir");

    let migrate = |cap: &str| {
        let started = Instant::now();
        let result = run(chartseq()
            .current_dir(dir.path())
            .env("TMPDIR", &tmp)
            .args([
                "migrate",
                "layers",
                "--from",
                "draft",
                "--max-archive-bytes",
                cap,
            ])
            .arg("--helm")
            .arg(&helm));
        assert!(started.elapsed() < Duration::from_secs(120), "no hang");
        result
    };
    // The copy holds the chart once (about 1 MiB): 4 MiB is plenty; the loop once wrote
    // the chart 64 times over before it stopped.
    let (code, _, err) = migrate("4194304");
    assert_eq!(code, 1, "migrated, the draft's timeout lost: {err}");
    assert!(err.contains("kept: 3 ordering constraints"), "{err}");
    assert_eq!(
        listing(&tmp),
        [format!("chartseq-migrate-{dead}-1-0")],
        "temporary files left"
    );
    std::fs::remove_dir(&recent).expect("rm");
    // Under the cap, the copy fails, and still removes what it wrote.
    let (code, _, err) = migrate("524288");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("more than 524288 bytes to copy") && err.contains("--max-archive-bytes"),
        "{err}"
    );
    assert_eq!(listing(&tmp), Vec::<String>::new(), "temporary files left");
    assert!(
        chart.join("a").symlink_metadata().is_ok() && listing(&chart).len() == 10,
        "the chart itself is untouched: {:?}",
        listing(&chart)
    );
}

/// A finding in a template reached through a link at a revision names the file where it is
/// in the repository (`REF:charts/common/…`), not the temporary copy; a path with `..` from a
/// subdirectory reads the same chart.
#[cfg(unix)]
#[test]
fn diff_names_linked_files_at_a_revision_by_their_repository_path() {
    use std::os::unix::fs::symlink;
    let Some(helm) = tool("helm") else {
        return;
    };
    let repo = tempfile::tempdir().expect("tempdir");
    let top = repo.path();
    git(top, &["init", "-q", "-b", "main"]);
    let common = chart(&top.join("charts/common"), "common", &[]);
    let bad = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n  annotations:\n    helm.sh/resource-group: shared\n    helm.sh/depends-on/resource-groups: db\n";
    std::fs::write(common.join("templates/shared.yaml"), bad).expect("write");
    let app = chart(&top.join("charts/app"), "app", &["web"]);
    std::fs::create_dir_all(app.join("charts")).expect("mkdir");
    symlink("../../common", app.join("charts/common")).expect("symlink");
    git(top, &["add", "-A"]);
    git(top, &["commit", "-q", "-m", "one"]);
    // Fixed in the working tree: the finding of the revision's side is "fixed".
    std::fs::write(
        common.join("templates/shared.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n",
    )
    .expect("write");
    let (code, out, err) = run(chartseq()
        .current_dir(top.join("charts/app"))
        .args(["diff", "HEAD:../app", ".", "--format", "json", "--helm"])
        .arg(&helm));
    assert_eq!(code, 1, "{out}{err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("json");
    let fixed: Vec<&str> = json["findings"]["fixed"]
        .as_array()
        .expect("fixed")
        .iter()
        .filter_map(|f| f["location"]["file"].as_str())
        .collect();
    assert!(
        fixed.contains(&"HEAD:../common/templates/shared.yaml"),
        "{fixed:?}\n{out}"
    );
}
