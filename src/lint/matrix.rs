//! `lint --values-matrix`: a chart is not one rendering. Its default values, each
//! `ci/*-values.yaml` file and each subchart condition or tag flipped from its default, one
//! at a time, give other plans, and ordering mistakes often appear only when a subchart is
//! switched off. This module decides the flips (from the default rendering's chart tree, in
//! a fixed order) and folds the runs' findings together: each finding once, with the value
//! sets it appears under.

use std::collections::{BTreeMap, BTreeSet};

use super::{Finding, Report, Summary};
use crate::model::Model;

/// One flip: a `--set` that turns a condition or tag the other way, and its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flip {
    /// `subchart `db` disabled`, `tag `frontend` enabled`.
    pub label: String,
    /// `db.enabled=false`, `tags.frontend=true`.
    pub set: String,
}

/// A subchart's name below the root (`db`, `api/db`).
fn below_root(display: &str) -> &str {
    display.split_once('/').map_or(display, |(_, rest)| rest)
}

/// The flips of a chart tree (library charts left on), in a fixed order: each distinct condition path (pre-order of
/// the subcharts whose parent is rendered), then each tag by name. A condition is flipped at
/// its first path (Helm's first path holding a boolean decides, so a boolean there always
/// does); nested conditions are prefixed with their parent's path, as Helm reads them.
#[must_use]
pub fn flips(model: &Model) -> Vec<Flip> {
    let mut conditions: Vec<(String, Vec<String>, bool)> = Vec::new();
    let mut tags: BTreeMap<String, bool> = BTreeMap::new();
    for chart in &model.charts {
        let Some(info) = chart.info.as_ref() else {
            continue;
        };
        let Some(dep) = info.dependency.as_ref() else {
            continue;
        };
        // A library chart renders nothing and holds its parent's helpers: with it off, helm
        // cannot render the parent at all (Bitnami's `common`, under the `bitnami-common`
        // tag). Its condition and tags are not flipped for it.
        if info.meta.is_library() {
            continue;
        }
        let name = below_root(&chart.display).to_owned();
        if let Some(path) = dep
            .condition
            .as_deref()
            .and_then(|c| c.trim().split(',').find(|p| !p.is_empty()))
        {
            // `api/db`'s condition is read under `api.`.
            let prefix = name
                .rsplit_once('/')
                .map(|(parents, _)| format!("{}.", parents.replace('/', ".")))
                .unwrap_or_default();
            let full = format!("{prefix}{path}");
            match conditions.iter_mut().find(|(p, _, _)| *p == full) {
                Some((_, names, _)) => names.push(name.clone()),
                None => conditions.push((full, vec![name.clone()], chart.enabled)),
            }
        }
        for tag in &dep.tags {
            // A tag is on when any subchart it names is rendered.
            *tags.entry(tag.clone()).or_insert(false) |= chart.enabled;
        }
    }
    let mut out = Vec::new();
    for (path, names, enabled) in conditions {
        let state = if enabled { "disabled" } else { "enabled" };
        let names = names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let noun = if names.contains(", ") {
            "subcharts"
        } else {
            "subchart"
        };
        out.push(Flip {
            label: format!("{noun} {names} {state}"),
            set: format!("{path}={}", !enabled),
        });
    }
    for (tag, on) in tags {
        out.push(Flip {
            label: format!("tag `{tag}` {}", if on { "disabled" } else { "enabled" }),
            set: format!("tags.{tag}={}", !on),
        });
    }
    out
}

/// What identifies one finding across renderings: its rule, template location and words
/// (the rendered location differs from one rendering to the next).
pub type Key = (&'static str, super::Position, String);

/// What makes two findings of different renderings the same finding.
#[must_use]
pub fn key(f: &Finding) -> Key {
    (f.code, f.location.clone(), f.message.clone())
}

/// Folds the reports of one chart's value sets (`labels[i]` names `reports[i]`) together:
/// each finding stays in the first report it appears in, annotated with the value sets it
/// appears under; a finding missing from some says which it needs (`only with: …`). The
/// first report records the matrix (`Report::matrix`).
pub fn fold(reports: &mut [Report], labels: &[String]) {
    let mut seen: BTreeMap<Key, BTreeSet<usize>> = BTreeMap::new();
    for (i, r) in reports.iter().enumerate() {
        for f in &r.findings {
            seen.entry(key(f)).or_default().insert(i);
        }
    }
    let total = reports.len();
    let mut reported: BTreeSet<Key> = BTreeSet::new();
    for r in reports.iter_mut() {
        let findings = std::mem::take(&mut r.findings);
        for mut f in findings {
            let k = key(&f);
            if !reported.insert(k.clone()) {
                continue;
            }
            let under: Vec<&String> = seen
                .get(&k)
                .into_iter()
                .flatten()
                .filter_map(|&i| labels.get(i))
                .collect();
            f.value_sets = under.iter().map(|s| (*s).clone()).collect();
            if under.len() == total {
                f.notes.push(format!(
                    "values matrix: found with every value set ({total} renderings)"
                ));
            } else {
                let only = join(&under);
                let not: Vec<&String> = labels.iter().filter(|l| !under.contains(l)).collect();
                f.message = format!("{} (only with: {only})", f.message);
                f.notes.push(
                    crate::safe::one_line(&format!(
                        "values matrix: found with {only}; not with {}",
                        join(&not)
                    ))
                    .into_owned(),
                );
            }
            r.findings.push(f);
        }
        r.summary = Summary::of(&r.findings);
    }
    if let Some(first) = reports.first_mut() {
        first.matrix = Some(labels.to_vec());
    }
}

fn join(labels: &[&String]) -> String {
    labels
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::{Position, Severity};

    fn finding(code: &'static str, line: u32, rendered_line: u32) -> Finding {
        let at = |line| Position {
            file: "t.yaml".into(),
            line,
            column: 1,
            end_line: line,
            end_column: 2,
        };
        Finding {
            code,
            name: "n",
            severity: Severity::Error,
            message: "m".into(),
            help: String::new(),
            notes: Vec::new(),
            chart: "c".into(),
            resource: None,
            location: at(line),
            rendered: Some(at(rendered_line)),
            labels: Vec::new(),
            source_path: None,
            guessed: false,
            approximate: false,
            inserted_by: None,
            value_sets: Vec::new(),
            reference_severity: None,
        }
    }

    fn report(findings: Vec<Finding>) -> Report {
        Report {
            summary: Summary::of(&findings),
            findings,
            matrix: None,
        }
    }

    #[test]
    fn each_finding_once_in_its_first_run_with_its_value_sets() {
        let labels: Vec<String> = ["default values", "subchart `db` disabled"]
            .map(String::from)
            .to_vec();
        // CS001 everywhere (at another rendered line each time), CS102 only when flipped.
        let mut reports = vec![
            report(vec![finding("CS001", 3, 10)]),
            report(vec![finding("CS001", 3, 20), finding("CS102", 5, 30)]),
        ];
        fold(&mut reports, &labels);
        assert_eq!(reports[0].findings.len(), 1);
        assert_eq!(reports[0].findings[0].value_sets, labels);
        assert_eq!(reports[0].findings[0].message, "m");
        assert_eq!(
            reports[0].findings[0].notes,
            ["values matrix: found with every value set (2 renderings)"]
        );
        assert_eq!(reports[1].findings.len(), 1);
        let only = &reports[1].findings[0];
        assert_eq!(only.code, "CS102");
        assert_eq!(only.message, "m (only with: subchart `db` disabled)");
        assert_eq!(
            only.notes,
            ["values matrix: found with subchart `db` disabled; not with default values"]
        );
        assert_eq!(reports[1].summary.errors, 1);
        assert_eq!(reports[0].matrix.as_deref(), Some(&labels[..]));
        assert!(reports[1].matrix.is_none());
    }
}
