//! No rendered document ever vanishes: whatever the stream holds and whatever values chartseq
//! is given, every document is printed exactly once by `template` and every resource is in
//! the plan exactly once — also when the values disable a subchart the stream was rendered
//! with.

use std::fmt::Write as _;
use std::path::Path;

use crate::{chartseq, run, tool};

/// A chart whose subcharts are disabled by default: `c` (condition), `c/d` (condition, under
/// a disabled parent) and `e` (tag); `u` is rendered but undeclared.
fn chart(dir: &Path) {
    let files = [
        (
            "app/Chart.yaml",
            "apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n  - name: c\n    version: 1.0.0\n    condition: c.enabled\n  - name: e\n    version: 1.0.0\n    tags: [extra]\n",
        ),
        (
            "app/values.yaml",
            "c:\n  enabled: false\n  d:\n    enabled: false\ntags:\n  extra: false\n",
        ),
        (
            "app/charts/c/Chart.yaml",
            "apiVersion: v2\nname: c\nversion: 1.0.0\ndependencies:\n  - name: d\n    version: 1.0.0\n    condition: d.enabled\n",
        ),
        (
            "app/charts/c/charts/d/Chart.yaml",
            "apiVersion: v2\nname: d\nversion: 1.0.0\n",
        ),
        (
            "app/charts/e/Chart.yaml",
            "apiVersion: v2\nname: e\nversion: 1.0.0\n",
        ),
    ];
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
}

/// xorshift64*: reproducible streams without a dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
    }
}

const PREFIXES: [&str; 5] = [
    "app",
    "app/charts/c",
    "app/charts/c/charts/d",
    "app/charts/e",
    "app/charts/u",
];

/// A random stream: (text, names of resources, names of comment-only documents).
fn stream(rng: &mut Rng) -> (String, Vec<String>, Vec<String>) {
    let mut text = String::new();
    let mut resources = Vec::new();
    let mut comments = Vec::new();
    for i in 0..=rng.below(12) {
        let prefix = PREFIXES[rng.below(PREFIXES.len() as u64) as usize];
        let name = format!("doc-{i}");
        let _ = writeln!(text, "---\n# Source: {prefix}/templates/t{i}.yaml");
        match rng.below(6) {
            0 => {
                let _ = writeln!(text, "# only comments {name}");
                comments.push(name);
                continue;
            }
            1 => {
                let event = ["pre-install", "post-install"][rng.below(2) as usize];
                let _ = writeln!(
                    text,
                    "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {name}\n  annotations:\n    helm.sh/hook: {event}"
                );
            }
            kind => {
                let kind = ["ConfigMap", "Secret", "Service", "ServiceAccount"][kind as usize - 2];
                let _ = writeln!(
                    text,
                    "apiVersion: v1\nkind: {kind}\nmetadata:\n  name: {name}"
                );
                // Groups in a fixed order (b after a), missing ones now and then: never a
                // cycle, so that the plan always exists.
                match rng.below(4) {
                    0 => {
                        let _ = writeln!(text, "  annotations:\n    helm.sh/resource-group: a");
                    }
                    1 => {
                        let _ = writeln!(
                            text,
                            "  annotations:\n    helm.sh/resource-group: b\n    helm.sh/depends-on/resource-groups: '[\"a\"]'"
                        );
                    }
                    2 => {
                        let _ = writeln!(
                            text,
                            "  annotations:\n    helm.sh/resource-group: c\n    helm.sh/depends-on/resource-groups: '[\"missing\"]'"
                        );
                    }
                    _ => {}
                }
            }
        }
        resources.push(name);
    }
    (text, resources, comments)
}

fn values(rng: &mut Rng) -> Vec<String> {
    let mut args = Vec::new();
    for key in ["c.enabled", "c.d.enabled", "tags.extra"] {
        match rng.below(3) {
            0 => args.extend(["--set".to_owned(), format!("{key}=true")]),
            1 => args.extend(["--set".to_owned(), format!("{key}=false")]),
            _ => {}
        }
    }
    args
}

/// Every `name` of the plan's resources, wherever the plan puts them.
fn planned_names(plan: &serde_json::Value) -> Vec<String> {
    let resource_name = |r: &serde_json::Value| r["name"].as_str().map(str::to_owned);
    let mut names: Vec<String> = Vec::new();
    for crd in plan["crds"].as_array().into_iter().flatten() {
        names.extend(resource_name(crd));
    }
    for hook in plan["hooks"].as_array().into_iter().flatten() {
        names.extend(resource_name(&hook["resource"]));
    }
    for step in plan["steps"].as_array().into_iter().flatten() {
        for r in step["resources"].as_array().into_iter().flatten() {
            names.extend(resource_name(r));
        }
    }
    names
}

#[test]
fn every_rendered_document_is_kept_exactly_once_whatever_the_values() {
    let dir = tempfile::tempdir().expect("tempdir");
    chart(dir.path());
    let app = dir.path().join("app");
    let file = dir.path().join("stream.yaml");
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for case in 0..60 {
        let (text, resources, comments) = stream(&mut rng);
        let values = values(&mut rng);
        std::fs::write(&file, &text).expect("write the stream");
        let context = format!("case {case}, values {values:?}:\n{text}");

        let (code, out, err) = run(chartseq()
            .arg("template")
            .arg(&file)
            .arg("--chart")
            .arg(&app)
            .args(&values));
        assert_eq!(code, 0, "{context}\n{err}");
        for name in &resources {
            let seen = out.matches(&format!("  name: {name}\n")).count();
            assert_eq!(seen, 1, "{name} printed {seen} times; {context}\n{out}");
        }
        for name in &comments {
            let seen = out.matches(&format!("# only comments {name}\n")).count();
            assert_eq!(seen, 1, "{name} printed {seen} times; {context}\n{out}");
        }

        let (code, out, err) = run(chartseq()
            .arg("plan")
            .arg(&file)
            .arg("--chart")
            .arg(&app)
            .args(["--format", "json"])
            .args(&values));
        assert_eq!(code, 0, "{context}\n{err}");
        let plan: serde_json::Value = serde_json::from_str(&out).expect("the plan is JSON");
        let mut planned = planned_names(&plan);
        planned.sort();
        let mut expected = resources.clone();
        expected.sort();
        assert_eq!(planned, expected, "{context}\n{out}");
    }
}

/// The reproduction as a user ran it: helm renders with a subchart turned on, chartseq is
/// given the chart's own values. Nothing is dropped, and every command says why.
#[test]
fn a_stream_rendered_with_other_values_keeps_every_document_and_warns() {
    let Some(helm) = tool("helm") else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    chart(dir.path());
    let app = dir.path().join("app");
    for (sub, name) in [
        ("app", "top"),
        ("app/charts/c", "sub"),
        ("app/charts/c/charts/d", "subsub"),
    ] {
        let templates = dir.path().join(sub).join("templates");
        std::fs::create_dir_all(&templates).expect("mkdir");
        std::fs::write(
            templates.join("cm.yaml"),
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"),
        )
        .expect("write");
    }
    let rendered = std::process::Command::new(&helm)
        .args(["template", "r"])
        .arg(&app)
        .args(["--set", "c.enabled=true", "--set", "c.d.enabled=true"])
        .output()
        .expect("helm runs");
    assert!(rendered.status.success(), "{rendered:?}");
    let file = dir.path().join("stream.yaml");
    std::fs::write(&file, &rendered.stdout).expect("write");
    for command in ["template", "plan"] {
        let (code, out, err) = run(chartseq().arg(command).arg(&file).arg("--chart").arg(&app));
        assert_eq!(code, 0, "{err}");
        for name in ["top", "sub", "subsub"] {
            assert!(out.contains(name), "{command} dropped {name}:\n{out}");
        }
        assert!(
            err.contains("subchart `app/c`, which condition `c.enabled` disables"),
            "{command}: {err}"
        );
    }
    let (code, out, err) = run(chartseq()
        .args(["lint", "--format", "concise"])
        .arg(&file)
        .arg("--chart")
        .arg(&app));
    assert!(code <= 1, "{err}");
    assert!(out.contains("CS105"), "{out}\n{err}");
}
