//! Hostile input: every case ends with a clear, located error (exit 2 for the whole input,
//! or the document reported and kept for a single bad document), never a panic or a hang.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::{chartseq, run};

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write input");
    path
}

/// Runs `plan` on a file; asserts no panic and that it ends. The bound only catches a run
/// that never ends (a quadratic blow-up on these inputs takes hours); speed is measured by the
/// benchmarks, so it is wide enough for a loaded two-core machine.
fn plan(path: &Path, extra: &[&str]) -> (i32, String, String) {
    let started = Instant::now();
    let format: &[&str] = if extra.contains(&"--format") {
        &[]
    } else {
        &["--format", "json"]
    };
    let result = run(chartseq().arg("plan").arg(path).args(format).args(extra));
    assert!(
        started.elapsed() < Duration::from_secs(600),
        "took {:?}",
        started.elapsed()
    );
    assert!(!result.2.contains("panicked"), "panic: {}", result.2);
    assert!(
        (0..=2).contains(&result.0),
        "exit {}: {}",
        result.0,
        result.2
    );
    result
}

fn doc(name: &str, annotations: &str) -> String {
    format!(
        "---\n# Source: c/templates/{name}.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  annotations:\n{annotations}"
    )
}

#[test]
fn yaml_bombs_and_deep_nesting_fail_located_and_the_rest_loads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut bomb = String::from(
        "---\n# Source: c/templates/bomb.yaml\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n",
    );
    for i in 1..12 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        writeln!(bomb, "a{i}: &a{i} [{refs}]").expect("write");
    }
    bomb.push_str("---\n# Source: c/templates/self.yaml\nself: &s [*s]\n");
    bomb.push_str("---\n# Source: c/templates/deep.yaml\n");
    bomb.push_str(&"[".repeat(10_000));
    bomb.push_str(&"]".repeat(10_000));
    bomb.push('\n');
    bomb.push_str(&doc("fine", "    helm.sh/resource-group: g\n"));
    let path = write(dir.path(), "bombs.yaml", bomb);
    let (code, out, err) = plan(&path, &[]);
    assert_eq!(code, 1, "bad documents are findings");
    assert!(err.contains("alias expansion exceeds"), "{err}");
    assert!(
        err.contains("bombs.yaml:") && err.contains("c/templates/self.yaml"),
        "{err}"
    );
    assert!(err.contains("c/templates/deep.yaml"), "{err}");
    assert!(
        out.contains("\"group\": \"g\""),
        "the good document still loads: {out}"
    );
}

#[test]
fn oversized_documents_and_long_lines() {
    let dir = tempfile::tempdir().expect("tempdir");
    let long = "x".repeat(10 * 1024 * 1024);
    let path = write(
        dir.path(),
        "long.yaml",
        doc("long", &format!("    note: {long}\n")),
    );
    let (code, _, err) = plan(&path, &[]);
    assert_eq!(code, 0, "a 10 MB line is fine: {err}");
    let (code, _, err) = plan(&path, &["--max-document-bytes", "1048576"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("more than the limit of 1048576") && err.contains("--max-document-bytes"),
        "{err}"
    );
}

#[test]
fn a_single_200_mb_document_is_refused_by_the_cap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut big = doc("big", "    a: b\n");
    big.push_str("data:\n");
    let line = format!("  k: {}\n", "v".repeat(1000));
    while big.len() < 200 * 1024 * 1024 {
        big.push_str(&line);
    }
    let path = write(dir.path(), "big.yaml", big);
    let (code, _, err) = plan(&path, &[]);
    assert_eq!(code, 1);
    assert!(err.contains("more than the limit of 67108864"), "{err}");
}

#[test]
fn encodings_and_odd_bytes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), "utf16.yaml", [0xFF, 0xFE, b'a', 0, b':', 0]);
    let (code, _, err) = plan(&path, &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains("utf16.yaml:1:1") && err.contains("UTF-16"),
        "{err}"
    );

    let mut bad = doc("ok", "    helm.sh/resource-group: g\n").into_bytes();
    bad.extend_from_slice(b"---\n# Source: c/templates/bad.yaml\nkind: \xff\xfe\n");
    let path = write(dir.path(), "utf8.yaml", bad);
    let (code, _, err) = plan(&path, &[]);
    assert_eq!(code, 1);
    assert!(
        err.contains("utf8.yaml:") && err.contains("invalid UTF-8"),
        "{err}"
    );

    let lf = doc("crlf", "    helm.sh/resource-group: g\n");
    let crlf = lf.replace('\n', "\r\n");
    let a = plan(&write(dir.path(), "lf.yaml", &lf), &[]);
    let b = plan(&write(dir.path(), "crlf.yaml", &crlf), &[]);
    assert_eq!((a.0, &a.1), (b.0, &b.1), "CRLF line endings plan like LF");

    let path = write(
        dir.path(),
        "tabs.yaml",
        "---\n# Source: c/templates/t.yaml\nkind: A\nmetadata:\n\tname: x\n",
    );
    let (code, _, err) = plan(&path, &[]);
    assert_eq!(code, 1);
    assert!(
        err.contains("tabs.yaml:5:"),
        "a tab in indentation is located: {err}"
    );

    let path = write(
        dir.path(),
        "nul.yaml",
        b"---\n# Source: c/templates/n.yaml\nkind: A\x00\n".as_slice(),
    );
    let (code, _, err) = plan(&path, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("nul.yaml:3:"), "{err}");

    let bom = [
        b"\xEF\xBB\xBF".as_slice(),
        doc("bom", "    helm.sh/resource-group: g\n").as_bytes(),
    ]
    .concat();
    let (code, out, err) = plan(&write(dir.path(), "bom.yaml", bom), &[]);
    assert_eq!(code, 0, "a UTF-8 byte order mark is skipped: {err}");
    assert!(out.contains("\"name\": \"bom\""));
}

#[test]
fn documents_that_are_not_objects_are_kept_and_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stream = "---\n# Source: c/templates/list.yaml\n- a\n- b\n---\n# Source: c/templates/scalar.yaml\njust text\n\
        ---\n# Source: c/templates/nokind.yaml\napiVersion: v1\nmetadata:\n  name: x\n\
        ---\n# Source: c/templates/nometa.yaml\napiVersion: v1\nkind: ConfigMap\n\
        ---\n# Source: c/templates/block.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: block\ndata:\n  f: |\n    ---\n    not a separator\n\
        ---\n# Source: c/templates/dup.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: first\n  name: second\n";
    let path = write(dir.path(), "odd.yaml", stream);
    let (code, out, err) = plan(&path, &[]);
    assert_eq!(code, 1);
    assert!(err.contains("list.yaml): the document is a list"), "{err}");
    assert!(
        err.contains("scalar.yaml): the document is a string"),
        "{err}"
    );
    assert!(
        err.contains("nokind.yaml): the object has no `kind`"),
        "{err}"
    );
    assert!(
        err.contains("nometa.yaml): the ConfigMap has no `metadata.name`"),
        "{err}"
    );
    assert!(
        out.contains("\"name\": \"block\""),
        "an indented --- does not split: {out}"
    );
    assert!(
        out.contains("\"name\": \"second\""),
        "duplicate keys: the last wins, as in Helm: {out}"
    );
    let plan: serde_json::Value = serde_json::from_str(&out).expect("json");
    let docs: usize = plan["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| s["resources"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(docs, 6, "nothing is lost");
}

#[test]
fn many_tiny_documents() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut stream = String::with_capacity(1_000_000 * 12);
    for i in 0..1_000_000 {
        writeln!(stream, "---\na: {i}").expect("write");
    }
    let path = write(dir.path(), "tiny.yaml", stream);
    let (code, out, err) = plan(&path, &["--format", "text"]);
    assert_eq!(code, 1, "a million non-objects are a million findings");
    assert_eq!(err.lines().count(), 1_000_000, "each is reported once");
    assert!(
        out.contains("Chart: chart"),
        "{}",
        &out[..out.len().min(300)]
    );
}

#[test]
fn huge_annotations_and_graphs_stay_fast() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A 1 MB annotation value.
    let value = "x".repeat(1024 * 1024);
    let (code, _, err) = plan(
        &write(
            dir.path(),
            "mb.yaml",
            doc("mb", &format!("    helm.sh/resource-group: '{value}'\n")),
        ),
        &[],
    );
    assert_eq!(code, 0, "{err}");
    // 100k depends-on entries, all missing: the group is demoted, quickly.
    let names: Vec<String> = (0..100_000).map(|i| format!("\"g{i}\"")).collect();
    let deps = format!(
        "    helm.sh/resource-group: app\n    helm.sh/depends-on/resource-groups: '[{}]'\n",
        names.join(",")
    );
    let (code, out, err) = plan(&write(dir.path(), "wide.yaml", doc("wide", &deps)), &[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"group\": null"), "demoted to unsequenced");
    // 100k groups in a chain whose head is missing: the demotion cascades in one pass.
    let mut chain = String::new();
    for i in 0..100_000 {
        let dep = if i == 0 {
            "ghost".to_owned()
        } else {
            format!("g{}", i - 1)
        };
        chain.push_str(&doc(&format!("c{i}"), &format!("    helm.sh/resource-group: g{i}\n    helm.sh/depends-on/resource-groups: '[\"{dep}\"]'\n")));
    }
    let path = write(dir.path(), "chain.yaml", &chain);
    let (code, out, err) = plan(&path, &["--format", "text"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Resource-group batches: (none)"),
        "every group demoted"
    );
    // Fifty demotions are named, the rest counted: a warning per group would bury the plan.
    assert_eq!(
        err.lines().filter(|l| l.contains("depends on `")).count(),
        50,
        "{err}"
    );
    assert!(
        err.contains("warning: 99950 more group(s) depend on a missing group"),
        "{err}"
    );
    // The same chain with its head present: 100k batches.
    let (code, out, err) = plan(
        &write(
            dir.path(),
            "chain-ok.yaml",
            chain.replacen("'[\"ghost\"]'", "'[]'", 1),
        ),
        &["--format", "text"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Batch 100000: g99999"), "one batch per link");
    // And closed into a cycle: reported as its path, without recursion.
    let cycle = chain.replacen("'[\"ghost\"]'", "'[\"g99999\"]'", 1);
    let (code, _, err) = plan(&write(dir.path(), "chain-cycle.yaml", cycle), &[]);
    assert_eq!(code, 1);
    assert!(
        err.contains("g0 -> g99999 -> g99998"),
        "{}",
        &err[..err.len().min(300)]
    );
}

/// Writes a gzipped tar archive with the given members (path, bytes); links as (path, target).
pub(crate) fn tgz(path: &Path, members: &[(&str, &[u8])], links: &[(&str, &str)]) {
    let file = std::fs::File::create(path).expect("create archive");
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
    let mut builder = tar::Builder::new(gz);
    for (name, bytes) in members {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        // `set_path` refuses `..`, so write the raw name as an attacker would.
        let raw = header.as_old_mut();
        raw.name[..name.len()].copy_from_slice(name.as_bytes());
        header.set_cksum();
        builder.append(&header, *bytes).expect("append");
    }
    for (name, target) in links {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(tar::EntryType::Symlink);
        header.set_size(0);
        builder
            .append_link(&mut header, name, target)
            .expect("link");
    }
    builder
        .into_inner()
        .expect("finish tar")
        .finish()
        .expect("finish gzip");
}

/// An archive case: name, members, links, expected error text.
type Case<'a> = (
    &'a str,
    Vec<(&'a str, &'a [u8])>,
    Vec<(&'a str, &'a str)>,
    &'a str,
);

const CHART_YAML: &[u8] = b"apiVersion: v2\nname: evil\nversion: 0.1.0\n";

#[test]
fn hostile_chart_archives_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stream = write(dir.path(), "s.yaml", doc("x", "    a: b\n"));

    let cases: Vec<Case> = vec![
        (
            "slip.tgz",
            vec![
                ("evil/Chart.yaml", CHART_YAML),
                ("evil/../../escape.yaml", b"x"),
            ],
            vec![],
            "escapes the chart",
        ),
        (
            "abs.tgz",
            vec![("evil/Chart.yaml", CHART_YAML), ("/etc/evil.yaml", b"x")],
            vec![],
            "escapes the chart",
        ),
        (
            "link.tgz",
            vec![("evil/Chart.yaml", CHART_YAML)],
            vec![("evil/templates/x.yaml", "/etc/passwd")],
            "is a link",
        ),
        (
            "two.tgz",
            vec![
                ("evil/Chart.yaml", CHART_YAML),
                ("other/Chart.yaml", CHART_YAML),
            ],
            vec![],
            "more than one chart",
        ),
    ];
    for (name, members, links, expected) in cases {
        let archive = dir.path().join(name);
        tgz(&archive, &members, &links);
        let (code, _, err) = run(chartseq()
            .arg("plan")
            .arg(&stream)
            .arg("--chart")
            .arg(&archive));
        assert_eq!(code, 2, "{name}: {err}");
        assert!(
            err.contains(expected) && err.contains(name),
            "{name}: {err}"
        );
    }
    assert!(
        !dir.path().join("escape.yaml").exists() && !Path::new("/etc/evil.yaml").exists(),
        "nothing is written"
    );

    // A decompression bomb: 64 MiB of zeros is a few dozen kilobytes compressed.
    let zeros = vec![0u8; 64 * 1024 * 1024];
    let archive = dir.path().join("bomb.tgz");
    tgz(
        &archive,
        &[
            ("evil/Chart.yaml", CHART_YAML),
            ("evil/templates/zeros.yaml", &zeros),
        ],
        &[],
    );
    assert!(std::fs::metadata(&archive).expect("archive").len() < 1024 * 1024);
    let (code, _, err) = run(chartseq()
        .arg("plan")
        .arg(&stream)
        .arg("--chart")
        .arg(&archive)
        .args(["--max-archive-bytes", "16777216"]));
    assert_eq!(code, 2);
    assert!(
        err.contains("decompression bomb") && err.contains("--max-archive-bytes"),
        "{err}"
    );

    let not_gzip = write(dir.path(), "plain.tgz", b"not an archive");
    let (code, _, err) = run(chartseq()
        .arg("plan")
        .arg(&stream)
        .arg("--chart")
        .arg(&not_gzip));
    assert_eq!(code, 2);
    assert!(err.contains("plain.tgz"), "{err}");
}

/// Symbolic links in a chart directory are followed, as Helm follows them, but a loop, an
/// irregular file, a broken link or more bytes than the archive cap end in a clear error, and a
/// link inside an archive stays refused even when a link leads to the archive.
#[cfg(unix)]
#[test]
fn symlinks_in_a_chart_directory_are_followed_within_limits() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().expect("tempdir");
    let stream = write(dir.path(), "s.yaml", doc("x", "    a: b\n"));
    let fresh = |name: &str| {
        let chart = dir.path().join(name);
        std::fs::create_dir_all(chart.join("templates")).expect("mkdir");
        std::fs::create_dir_all(chart.join("charts")).expect("mkdir");
        std::fs::write(chart.join("Chart.yaml"), CHART_YAML).expect("write");
        chart
    };
    let plan_with = |chart: &Path, extra: &[&str]| {
        let started = Instant::now();
        let result = run(chartseq()
            .arg("plan")
            .arg(&stream)
            .arg("--chart")
            .arg(chart)
            .args(extra));
        assert!(started.elapsed() < Duration::from_secs(60), "no hang");
        result
    };

    // Outside the chart is fine: that is what a monorepo does.
    let outside = fresh("outside");
    let shared = dir.path().join("shared.yaml");
    std::fs::write(&shared, "# a shared template\n").expect("write");
    symlink(&shared, outside.join("templates/shared.yaml")).expect("symlink");
    let (code, _, err) = plan_with(&outside, &[]);
    assert_eq!(code, 0, "{err}");

    let looped = fresh("looped");
    symlink("..", looped.join("charts/self")).expect("symlink");
    let (code, _, err) = plan_with(&looped, &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains("looped/charts/self: symbolic link loop"),
        "{err}"
    );
    let looped_templates = fresh("looped-templates");
    symlink(".", looped_templates.join("templates/again")).expect("symlink");
    let (code, _, err) = plan_with(&looped_templates, &[]);
    assert_eq!(code, 2);
    assert!(err.contains("templates/again: symbolic link loop"), "{err}");

    let device = fresh("device");
    symlink("/dev/zero", device.join("templates/zero.yaml")).expect("symlink");
    let (code, _, err) = plan_with(&device, &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains("templates/zero.yaml") && err.contains("irregular file"),
        "{err}"
    );

    let broken = fresh("broken");
    symlink("nowhere.yaml", broken.join("templates/gone.yaml")).expect("symlink");
    let (code, _, err) = plan_with(&broken, &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains("cannot read symbolic link") && err.contains("templates/gone.yaml"),
        "{err}"
    );

    let big = fresh("big");
    let blob = dir.path().join("blob.yaml");
    std::fs::write(&blob, vec![b'#'; 2 * 1024 * 1024]).expect("write");
    symlink(&blob, big.join("templates/blob.yaml")).expect("symlink");
    let (code, _, err) = plan_with(&big, &["--max-archive-bytes", "1048576"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("more than 1048576 bytes") && err.contains("--max-archive-bytes"),
        "{err}"
    );
    let (code, _, err) = plan_with(&big, &[]);
    assert_eq!(code, 0, "within the default cap: {err}");

    // An archive reached through a link is still an archive: its links are refused.
    let archived = fresh("archived");
    let archive = dir.path().join("sub-0.1.0.tgz");
    tgz(
        &archive,
        &[(
            "sub/Chart.yaml",
            b"apiVersion: v2\nname: sub\nversion: 0.1.0\n",
        )],
        &[("sub/templates/x.yaml", "/etc/passwd")],
    );
    symlink(&archive, archived.join("charts/sub-0.1.0.tgz")).expect("symlink");
    let (code, _, err) = plan_with(&archived, &[]);
    assert_eq!(code, 2);
    assert!(err.contains("is a link"), "{err}");
}

#[test]
fn ten_thousand_subcharts_and_dependency_loops() {
    let dir = tempfile::tempdir().expect("tempdir");
    let chart = dir.path().join("wide");
    for i in 0..10_000 {
        let sub = chart.join(format!("charts/s{i}"));
        std::fs::create_dir_all(&sub).expect("mkdir");
        std::fs::write(
            sub.join("Chart.yaml"),
            format!("apiVersion: v2\nname: s{i}\nversion: 0.1.0\n"),
        )
        .expect("write");
    }
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: wide\nversion: 0.1.0\n",
    )
    .expect("write");
    let mut stream = String::new();
    for i in (0..10_000).step_by(1000) {
        write!(
            stream,
            "---\n# Source: wide/charts/s{i}/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s{i}\n"
        )
        .expect("write");
    }
    let stream = write(dir.path(), "wide.yaml", stream);
    let started = Instant::now();
    let (code, out, err) = run(chartseq()
        .arg("plan")
        .arg(&stream)
        .arg("--chart")
        .arg(&chart));
    assert!(started.elapsed() < Duration::from_secs(60));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Undeclared subchart \"s9000\""),
        "undeclared subcharts go last, by name"
    );

    // `file://` dependencies are never followed: chartseq reads `charts/` only, so two charts
    // naming each other cannot loop; the missing subchart is reported as Helm reports it.
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    for (me, other) in [(&a, "b"), (&b, "a")] {
        std::fs::create_dir_all(me).expect("mkdir");
        std::fs::write(
            me.join("Chart.yaml"),
            format!("apiVersion: v2\nname: {}\nversion: 0.1.0\ndependencies:\n  - name: {other}\n    version: 0.1.0\n    repository: file://../{other}\n", if other == "b" { "a" } else { "b" }),
        )
        .expect("write");
    }
    let (code, _, err) = run(chartseq().arg("plan").arg(&stream).arg("--chart").arg(&a));
    assert_eq!(code, 2);
    assert!(
        err.contains("found in Chart.yaml, but missing in charts/ directory: b"),
        "{err}"
    );
}

/// Inputs the fuzzers found (`fixtures/fuzz/<target>/`), replayed as they were run: each must
/// finish, quickly, with the outcome written here (the nested ranges that once ran for
/// minutes now stop at the cap on produced values).
#[test]
fn fuzz_reproducers_stay_fixed() {
    const CAPPED: &str = "execute:  is not found / execute: the template produces more than 1048576 values; it cannot be evaluated";
    const EXPECTED: [(&str, &str); 2] = [
        ("nested-range-timeout", CAPPED),
        ("nested-range-timeout-2", CAPPED),
    ];
    use chartseq::readiness::jsonpath::{self, ExecOptions};
    let object = serde_json::json!({
        "metadata": {"name": "x", "labels": {"a.b/c": "d"}},
        "status": {"replicas": 3, "ready": 1.5, "ok": true, "conditions": [
            {"type": "Ready", "status": "True"}, {"type": "Progressing", "status": "False"}
        ], "nested": [[1, 2], [3]], "empty": {}, "null": null}
    });
    let dir = crate::fixture("fuzz/jsonpath");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&dir).expect("reproducers").flatten() {
        let bytes = std::fs::read(entry.path()).expect("read");
        let text = String::from_utf8_lossy(&bytes);
        let started = Instant::now();
        let outcome = match jsonpath::parse(&text) {
            Err(e) => format!("parse: {}", e.message),
            Ok(path) => [false, true]
                .map(|allow_missing_keys| {
                    match path.execute(&object, ExecOptions { allow_missing_keys }) {
                        Ok(out) => format!("printed {out:?}"),
                        Err(e) => format!("execute: {}", e.message),
                    }
                })
                .join(" / "),
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        let expected = EXPECTED.iter().find(|(file, _)| *file == name).map_or_else(
            || panic!("{name}: add the outcome it must have to EXPECTED"),
            |(_, outcome)| *outcome,
        );
        assert_eq!(outcome, expected, "{name}");
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{}: {:?}",
            entry.path().display(),
            started.elapsed()
        );
        replayed += 1;
    }
    assert!(replayed >= 1);
}

/// `--max-depth` and `--max-alias-nodes` hold at the values given, not only at their defaults:
/// a document the defaults accept is refused by a lower cap and accepted again at the cap.
#[test]
fn yaml_limit_flags_take_their_values() {
    let dir = tempfile::tempdir().expect("tempdir");
    // 30 levels of nesting below the document's own map.
    let nested = format!(
        "{}x: {}{}\n",
        doc("deep", "    helm.sh/resource-group: g\n"),
        "[".repeat(30),
        "]".repeat(30)
    );
    let deep = write(dir.path(), "deep.yaml", nested);
    let (code, _, err) = plan(&deep, &[]);
    assert_eq!(code, 0, "the default depth accepts 30 levels: {err}");
    let (code, _, err) = plan(&deep, &["--max-depth", "20"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("nesting deeper than 20 levels"), "{err}");
    let (code, _, err) = plan(&deep, &["--max-depth", "40"]);
    assert_eq!(code, 0, "40 levels are enough: {err}");

    // Three aliases of a ten-item list: 30 nodes expanded.
    let aliased = format!(
        "{}data:\n  a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n  b: *a\n  c: *a\n  d: *a\n",
        doc("aliases", "    helm.sh/resource-group: g\n")
    );
    let alias_file = write(dir.path(), "aliases.yaml", aliased);
    let (code, _, err) = plan(&alias_file, &[]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = plan(&alias_file, &["--max-alias-nodes", "15"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("alias expansion exceeds 15 nodes"), "{err}");
    let (code, _, err) = plan(&alias_file, &["--max-alias-nodes", "1000"]);
    assert_eq!(code, 0, "{err}");
}

/// A chart directory `depth` subcharts deep: c0/charts/c1/charts/c2/…
fn nested_chart(root: &Path, depth: usize) -> PathBuf {
    let top = root.join("c0");
    let mut dir = top.clone();
    for level in 0..=depth {
        std::fs::create_dir_all(dir.join("templates")).expect("mkdir");
        std::fs::write(
            dir.join("Chart.yaml"),
            format!("apiVersion: v2\nname: c{level}\nversion: 0.1.0\n"),
        )
        .expect("Chart.yaml");
        if level < depth {
            dir = dir.join("charts").join(format!("c{}", level + 1));
        }
    }
    top
}

fn load_chart(path: &Path, limits: chartseq::source::chart::ChartLimits) -> Result<usize, String> {
    let mut sources = chartseq::source::SourceMap::default();
    chartseq::source::chart::load(path, &mut sources, limits)
        .map(|_| sources.len())
        .map_err(|e| e.to_string())
}

/// The subchart nesting cap and the file count cap hold at the values given, for chart
/// directories and archives alike.
#[test]
fn chart_limits_take_their_values() {
    use chartseq::source::chart::ChartLimits;
    let dir = tempfile::tempdir().expect("tempdir");
    let chart = nested_chart(dir.path(), 4);
    let limits = |max_depth, max_files| ChartLimits {
        max_depth,
        max_files,
        ..ChartLimits::default()
    };
    assert!(load_chart(&chart, ChartLimits::default()).is_ok());
    assert!(
        load_chart(&chart, limits(4, 100)).is_ok(),
        "4 levels are allowed at 4"
    );
    let err = load_chart(&chart, limits(3, 100)).expect_err("4 levels are too deep at 3");
    assert!(
        err.contains("subcharts nested deeper than 3 levels"),
        "{err}"
    );
    // The default allows 32 levels: 33 are refused.
    let deepest = nested_chart(&dir.path().join("deepest"), 33);
    let err = load_chart(&deepest, ChartLimits::default()).expect_err("33 levels");
    assert!(
        err.contains("subcharts nested deeper than 32 levels"),
        "{err}"
    );

    // Five Chart.yaml files in the directory.
    assert!(
        load_chart(&chart, limits(32, 5)).is_ok(),
        "five files are allowed at 5"
    );
    let err = load_chart(&chart, limits(32, 4)).expect_err("five files at 4");
    assert!(err.contains("more than 4 files"), "{err}");
    let archive = dir.path().join("c-0.1.0.tgz");
    let members: Vec<(String, Vec<u8>)> = (0..5)
        .map(|i| {
            let name = if i == 0 {
                "c/Chart.yaml".to_owned()
            } else {
                format!("c/templates/t{i}.yaml")
            };
            let body = if i == 0 {
                b"apiVersion: v2\nname: c\nversion: 0.1.0\n".to_vec()
            } else {
                format!("# t{i}\n").into_bytes()
            };
            (name, body)
        })
        .collect();
    let borrowed: Vec<(&str, &[u8])> = members
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    tgz(&archive, &borrowed, &[]);
    assert!(load_chart(&archive, limits(32, 5)).is_ok());
    let err = load_chart(&archive, limits(32, 4)).expect_err("five members at 4");
    assert!(err.contains("more than 4 files"), "{err}");
}
