//! `chartseq migrate` on every dialect fixture chart, checked from the outside: the source
//! tool's plan (`plan --dialect X`) and a HIP-0025 plan of the migrated chart (`plan` of the
//! `--write` output) are read as JSON, and the order each gives is derived here, apart from the
//! proof's own code. For every pair the tool orders, the HIP-0025 plan keeps it or `lost` lists
//! it (or, for a pair the tool orders through others, a pair on the way); nothing in `lost` is
//! kept by the HIP-0025 plan; and no lost pair has both resources in groups of one chart level,
//! which can always order them (the migration did not try hard enough).
//!
//! The charts: every chart directory under `fixtures/migrate/` and `fixtures/dialects/`, and
//! every rendered stream of `fixtures/dialects/<tool>/`, turned back into the chart its
//! `# Source:` paths name (subcharts included).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::{chartseq, fixture, run, tool};

/// A resource as the JSON outputs name it: (apiVersion, kind, namespace, name).
type Key = (String, String, String, String);

/// Ordered pairs of resources.
type Pairs = BTreeSet<(Key, Key)>;

/// An object named only by `metadata.generateName` (Argo CD names it when it creates it) is
/// keyed by its prefix and a `*`.
fn key(r: &Value) -> Key {
    let s = |f: &str| r[f].as_str().unwrap_or_default().to_owned();
    let name = match r["name"].as_str() {
        Some(n) => n.to_owned(),
        None => format!("{}*", s("generateName")),
    };
    (s("apiVersion"), s("kind"), s("namespace"), name)
}

fn show(k: &Key) -> String {
    format!("{}/{}", k.1, k.3)
}

/// Helm cannot install an object without a name: in a HIP-0025 plan it is applied never.
fn unnamed(k: &Key) -> bool {
    k.3.ends_with('*')
}

/// Where HIP-0025 applies a resource on install.
#[derive(Clone, Copy, Debug)]
enum Pos {
    Crd,
    Pre(usize),
    Step(usize),
    Post(usize),
    Never,
}

/// The release order of a HIP-0025 plan (`plan --format json`), as Helm with HIP-0025 runs an
/// install: `crds/`, the pre-install hooks one by one, the steps (one waits for those in its
/// `after`), the post-install hooks one by one.
struct Hip {
    pos: BTreeMap<Key, Vec<Pos>>,
    /// `reach[j]`: the steps step `j` waits for, directly or not.
    reach: Vec<BTreeSet<usize>>,
    /// The chart level of each resource the migration put in a group.
    grouped: BTreeMap<Key, String>,
}

impl Hip {
    fn read(plan: &Value) -> Self {
        let mut pos: BTreeMap<Key, Vec<Pos>> = BTreeMap::new();
        for r in plan["crds"].as_array().into_iter().flatten() {
            let r = if r.get("resource").is_some() {
                &r["resource"]
            } else {
                r
            };
            pos.entry(key(r)).or_default().push(Pos::Crd);
        }
        for (i, h) in plan["hooks"].as_array().into_iter().flatten().enumerate() {
            let events: Vec<&str> = h["events"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let at = pos.entry(key(&h["resource"])).or_default();
            if events.contains(&"pre-install") {
                at.push(Pos::Pre(i));
            }
            if events.contains(&"post-install") {
                at.push(Pos::Post(i));
            }
            if !events.contains(&"pre-install") && !events.contains(&"post-install") {
                at.push(Pos::Never);
            }
        }
        let steps = plan["steps"].as_array().cloned().unwrap_or_default();
        let mut grouped = BTreeMap::new();
        for (i, s) in steps.iter().enumerate() {
            for r in s["resources"].as_array().into_iter().flatten() {
                pos.entry(key(r)).or_default().push(Pos::Step(i));
                if let (Some(chart), Some(_)) = (s["chart"].as_str(), s["group"].as_str()) {
                    grouped.insert(key(r), chart.to_owned());
                }
            }
        }
        for (k, at) in &mut pos {
            if unnamed(k) {
                *at = vec![Pos::Never];
            }
        }
        Hip {
            pos,
            reach: reach(&steps),
            grouped,
        }
    }

    /// Whether `a` is applied (and waited for) before `b` starts, at some time each is applied.
    fn keeps(&self, a: &Key, b: &Key) -> bool {
        let (Some(pa), Some(pb)) = (self.pos.get(a), self.pos.get(b)) else {
            return false;
        };
        pa.iter().any(|&x| {
            pb.iter().any(|&y| match (x, y) {
                (Pos::Crd, Pos::Pre(_) | Pos::Step(_) | Pos::Post(_))
                | (Pos::Pre(_), Pos::Step(_))
                | (Pos::Pre(_) | Pos::Step(_), Pos::Post(_)) => true,
                (Pos::Pre(i), Pos::Pre(j)) | (Pos::Post(i), Pos::Post(j)) => i < j,
                // Helm applies a step's Namespace first; it is ready at once.
                (Pos::Step(i), Pos::Step(j)) => {
                    self.reach[j].contains(&i) || (i == j && a.0 == "v1" && a.1 == "Namespace")
                }
                _ => false,
            })
        })
    }
}

/// For each step, the steps it waits for, directly or not (`after` holds 0-based indices).
fn reach(steps: &[Value]) -> Vec<BTreeSet<usize>> {
    let after: Vec<Vec<usize>> = steps
        .iter()
        .map(|s| {
            s["after"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_u64)
                .filter_map(|i| usize::try_from(i).ok())
                .collect()
        })
        .collect();
    (0..steps.len())
        .map(|j| {
            let mut seen = BTreeSet::new();
            let mut stack = after[j].clone();
            while let Some(i) = stack.pop() {
                if seen.insert(i) {
                    stack.extend(after.get(i).cloned().unwrap_or_default());
                }
            }
            seen
        })
        .collect()
}

/// The source tool's order (`plan --dialect X --format json`): its direct pairs (a step's
/// resources after those of each step in its `after`; what it applies first before its first
/// steps) and every pair it orders, directly or not.
fn source_pairs(plan: &Value) -> (Pairs, Pairs) {
    let steps = plan["steps"].as_array().cloned().unwrap_or_default();
    let members: Vec<Vec<Key>> = steps
        .iter()
        .map(|s| {
            s["resources"]
                .as_array()
                .into_iter()
                .flatten()
                .map(key)
                .collect()
        })
        .collect();
    let first: Vec<Key> = plan["crds"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            if r.get("resource").is_some() {
                key(&r["resource"])
            } else {
                key(r)
            }
        })
        .collect();
    let reach = reach(&steps);
    let (mut direct, mut all) = (BTreeSet::new(), BTreeSet::new());
    for (j, s) in steps.iter().enumerate() {
        let after: Vec<usize> = s["after"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_u64)
            .filter_map(|i| usize::try_from(i).ok())
            .collect();
        for b in &members[j] {
            for a in &first {
                all.insert((a.clone(), b.clone()));
                if after.is_empty() {
                    direct.insert((a.clone(), b.clone()));
                }
            }
            for &i in &reach[j] {
                for a in &members[i] {
                    all.insert((a.clone(), b.clone()));
                    if after.contains(&i) {
                        direct.insert((a.clone(), b.clone()));
                    }
                }
            }
        }
    }
    direct.retain(|(a, b)| a != b);
    all.retain(|(a, b)| a != b);
    (direct, all)
}

/// Turns a rendered stream back into the chart its `# Source:` paths name (a `Chart.yaml` for
/// the root and each `charts/<name>`); documents without one go to `templates/stream.yaml`.
fn chart_of_stream(stream: &Path, into: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(stream).expect("read the stream");
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    let mut root = None;
    for doc in text.split("\n---") {
        let source = doc
            .lines()
            .find_map(|l| l.strip_prefix("# Source: "))
            .map(str::trim);
        let mut body = String::new();
        for l in doc
            .lines()
            .filter(|l| !l.starts_with("# Source: ") && l.trim() != "---")
        {
            body.push_str(l);
            body.push('\n');
        }
        if !body.lines().any(|l| l.starts_with("kind:")) {
            continue;
        }
        let path = match source {
            Some(p) => p.to_owned(),
            None => "templates/stream.yaml".to_owned(),
        };
        let (top, rest) = path.split_once('/')?;
        let rel = if top == "templates" || top == "crds" {
            path.clone()
        } else {
            root.get_or_insert_with(|| top.to_owned());
            rest.to_owned()
        };
        let file = files.entry(rel).or_default();
        file.push_str("---\n");
        file.push_str(&body);
    }
    let root = root.unwrap_or_else(|| "stream".to_owned());
    let dir = into.join(&root);
    let chart = |d: &Path, name: &str| {
        std::fs::create_dir_all(d).expect("create a chart directory");
        std::fs::write(
            d.join("Chart.yaml"),
            format!("apiVersion: v2\nname: {name}\nversion: 0.1.0\n"),
        )
        .expect("write Chart.yaml");
    };
    chart(&dir, &root);
    for (rel, body) in files {
        let path = dir.join(&rel);
        // Each `charts/<name>` on the way is a subchart.
        let parts: Vec<&str> = rel.split('/').collect();
        for (i, w) in parts.windows(2).enumerate() {
            if w[0] == "charts" && i + 2 < parts.len() {
                chart(&dir.join(parts[..i + 2].join("/")), w[1]);
            }
        }
        std::fs::create_dir_all(path.parent().expect("a file in a chart")).expect("create");
        // A stream's CRDs are not templates: crds/ takes them verbatim, as helm does.
        std::fs::write(&path, body).expect("write a template");
    }
    Some(dir)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create");
    for entry in std::fs::read_dir(from).expect("read fixture") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// The dialect a fixture path is written for.
fn dialect_of(path: &Path) -> Option<&'static str> {
    let s = path.to_string_lossy();
    ["werf", "argo", "kapp", "kots", "draft"]
        .into_iter()
        .find(|d| s.contains(&format!("/{d}/")))
}

/// Every dialect fixture chart: (dialect, a copy of the chart in `tmp`, its fixture name).
fn fixture_charts(tmp: &Path) -> Vec<(&'static str, PathBuf, String)> {
    let mut out = Vec::new();
    for top in ["migrate", "dialects"] {
        for d in ["werf", "argo", "kapp", "kots", "draft"] {
            let dir = fixture(top).join(d);
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut entries: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
            entries.sort();
            for path in entries {
                let name = format!(
                    "{top}/{d}/{}",
                    path.file_name().unwrap_or_default().to_string_lossy()
                );
                let into = tmp.join(name.replace('/', "_"));
                if path.join("Chart.yaml").is_file() {
                    let to = into.join(path.file_name().unwrap_or_default());
                    copy_dir(&path, &to);
                    out.push((dialect_of(&path).unwrap_or(d), to, name));
                } else if path.extension().is_some_and(|e| e == "yaml")
                    && let Some(chart) = chart_of_stream(&path, &into)
                {
                    out.push((d, chart, name));
                }
            }
        }
    }
    out
}

/// The plan's JSON; `None` when there is none (the tool refuses the chart). A plan with a
/// document Helm cannot install (an object named only by `generateName`) exits 1 and is
/// printed all the same.
fn plan_json(helm: &Path, chart: &Path, dialect: &str) -> Option<Value> {
    let (code, out, err) = run(chartseq()
        .env("CHARTSEQ_HELM", helm)
        .arg("plan")
        .arg(chart)
        .args(["--dialect", dialect, "--format", "json"]));
    assert!(
        (0..=2).contains(&code),
        "{}: plan --dialect {dialect} exits {code}: {err}",
        chart.display()
    );
    serde_json::from_str(&out).ok()
}

#[test]
fn migrate_loses_exactly_what_the_hip_plan_of_the_migrated_chart_does_not_keep() {
    let Some(helm) = tool("helm") else { return };
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let charts = fixture_charts(tmp.path());
    assert!(charts.len() >= 20, "{} fixture charts", charts.len());
    let mut failures = Vec::new();
    let mut checked = 0;
    for (dialect, chart, name) in &charts {
        // A chart the tool itself refuses has no order to migrate: migrate does not pass it.
        let Some(source) = plan_json(&helm, chart, dialect) else {
            let (code, _, err) = run(chartseq()
                .env("CHARTSEQ_HELM", &helm)
                .arg("migrate")
                .arg(chart)
                .args(["--from", dialect]));
            assert!(
                code == 1 || code == 2,
                "{name}: the tool refuses it, yet migrate: {err}"
            );
            continue;
        };
        let (code, out, err) = run(chartseq()
            .env("CHARTSEQ_HELM", &helm)
            .arg("migrate")
            .arg(chart)
            .args(["--from", dialect, "--write", "--format", "json"]));
        assert!(
            code == 0 || code == 1,
            "{name}: migrate exits {code}: {err}"
        );
        let report: Value = serde_json::from_str(&out).expect("migrate JSON parses");
        let Some(migrated) = plan_json(&helm, chart, "hip") else {
            failures.push(format!("{name}: the migrated chart has no HIP-0025 plan"));
            continue;
        };
        let hip = Hip::read(&migrated);
        // Uninstall orders (a werf delete dependency, a kapp delete rule, a KOTS deletion
        // phase; their reasons say `uninstall`) are of another operation than the install
        // plans compared here.
        let lost: BTreeSet<(Key, Key)> = report["lost"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|l| {
                !l["reason"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("uninstall")
            })
            .map(|l| (key(&l["before"]), key(&l["after"])))
            .collect();
        let (direct, all) = source_pairs(&source);
        for (a, b) in &direct {
            if !hip.keeps(a, b) && !lost.contains(&(a.clone(), b.clone())) {
                failures.push(format!(
                    "{name}: {dialect} orders {} before {}, the migrated HIP-0025 plan does not, and lost does not say so",
                    show(a),
                    show(b)
                ));
            }
        }
        // A pair ordered through others: a pair on the way is lost.
        for (a, b) in &all {
            if hip.keeps(a, b) || direct.contains(&(a.clone(), b.clone())) {
                continue;
            }
            let on_the_way = lost.iter().any(|(x, y)| {
                (x == a || all.contains(&(a.clone(), x.clone())))
                    && (y == b || all.contains(&(y.clone(), b.clone())))
            });
            if !on_the_way {
                failures.push(format!(
                    "{name}: {dialect} orders {} before {} (through others), the migrated HIP-0025 plan does not, and no pair on the way is lost",
                    show(a),
                    show(b)
                ));
            }
        }
        for (a, b) in &lost {
            if a == b {
                continue;
            }
            if hip.keeps(a, b) {
                failures.push(format!(
                    "{name}: lost lists {} before {}, yet the migrated HIP-0025 plan keeps it",
                    show(a),
                    show(b)
                ));
            }
            // Groups of one chart level can say any order the tool has (its order has no
            // cycle) between resources that have one.
            if let (Some(ca), Some(cb)) = (hip.grouped.get(a), hip.grouped.get(b))
                && ca == cb
            {
                failures.push(format!(
                    "{name}: lost lists {} before {}, both in groups of {ca}, which could order them",
                    show(a),
                    show(b)
                ));
            }
        }
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} charts migrated");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
