//! Which sequencing dialects a chart carries (`--dialect auto`, SPEC §6), from the ordering
//! keys of every dialect: a pure function of the model, shared by `plan`, `template`, `apply`,
//! lint and `migrate`.
//!
//! A dialect is carried when some resource has one of its ordering annotations (for HIP-0025
//! also the `Chart.yaml` subchart dependencies). Keys that only tune waiting (werf's
//! `track-termination-mode`, kapp's `disable-wait`, …) and Helm's own hook keys mark no
//! dialect.

use std::fmt::Write as _;

use crate::model::annotations;
use crate::model::{Content, Model};
use crate::plan::Dialect;
use crate::source::Loc;

/// HIP-0025's keys in `Chart.yaml`: the chart annotation and the dependencies' field.
const CHART_KEYS: [&str; 2] = [annotations::DEPENDS_ON_SUBCHARTS, "depends-on"];

/// The first place a chart carries a dialect's annotation.
#[derive(Clone, Debug, PartialEq)]
pub struct Detection {
    pub dialect: Dialect,
    /// The key found there.
    pub key: String,
    /// Where the key is written.
    pub loc: Loc,
}

/// The dialect whose ordering annotation `key` is, if any (the system whose row owns it).
#[must_use]
pub fn dialect_of(key: &str) -> Option<Dialect> {
    super::system::SYSTEMS
        .iter()
        .find(|s| (s.owns_key)(key))
        .map(|s| s.dialect)
}

/// Every dialect the chart carries, once each, at its first key in input order (resources,
/// then `Chart.yaml` files).
#[must_use]
pub fn detect(model: &Model) -> Vec<Detection> {
    let mut found: Vec<Detection> = Vec::new();
    let mut note = |dialect: Dialect, key: &str, loc: Loc| {
        if !found.iter().any(|d| d.dialect == dialect) {
            found.push(Detection {
                dialect,
                key: key.to_owned(),
                loc,
            });
        }
    };
    for doc in &model.documents {
        let Content::Resource(r) = &doc.content else {
            continue;
        };
        for a in &r.annotations {
            if let Some(dialect) = dialect_of(&a.key) {
                note(dialect, &a.key, a.key_loc);
            }
        }
        // A system's own configuration carried by the chart orders too (kapp's bindings).
        for system in super::system::SYSTEMS {
            if let Some((key, loc)) = (system.configuration)(r) {
                note(system.dialect, key, loc);
            }
        }
    }
    for chart in &model.charts {
        let Some(info) = &chart.info else { continue };
        if let Some(list) = &info.depends_on_subcharts {
            note(Dialect::Hip, CHART_KEYS[0], list.loc);
        }
        if let Some((_, list)) = info.dependency_depends_on.first() {
            note(Dialect::Hip, CHART_KEYS[1], list.loc);
        }
    }
    found
}

/// A chart that carries two or more dialects, so `--dialect auto` cannot choose.
#[derive(Clone, Debug, PartialEq)]
pub struct Mixed {
    /// Every dialect found, at its first key.
    pub found: Vec<Detection>,
}

impl Mixed {
    /// The refusal, naming each dialect with one place it is written and how to choose.
    #[must_use]
    pub fn message(&self, model: &Model) -> String {
        let mut text = String::from("--dialect auto: the chart carries the annotations of ");
        let names: Vec<String> = self
            .found
            .iter()
            .map(|d| {
                format!(
                    "{} ({} at {})",
                    d.dialect.name(),
                    d.key,
                    super::output::position(model, d.loc)
                )
            })
            .collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => {
                let _ = write!(text, "{} and {last}", rest.join(", "));
            }
            _ => text.push_str(&names.concat()),
        }
        let choices: Vec<String> = self
            .found
            .iter()
            .map(|d| format!("--dialect {}", d.dialect.name()))
            .collect();
        let _ = write!(text, "; choose one with {}", choices.join(" or "));
        text
    }
}

/// What `--dialect` asks for: one dialect, or the one the chart carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    Dialect(Dialect),
    Auto,
}

impl From<Dialect> for Choice {
    fn from(dialect: Dialect) -> Self {
        Choice::Dialect(dialect)
    }
}

impl Choice {
    /// The dialect to plan in for this model.
    pub fn resolve(self, model: &Model) -> Result<Dialect, Mixed> {
        match self {
            Choice::Dialect(dialect) => Ok(dialect),
            Choice::Auto => auto(model),
        }
    }
}

/// The dialect `--dialect auto` picks: the one the chart carries, HIP-0025 when it carries
/// none; a chart that carries two or more is refused.
pub fn auto(model: &Model) -> Result<Dialect, Mixed> {
    let mut found = detect(model);
    // The draft orders subcharts by the same `Chart.yaml` keys as HIP-0025: with the draft's
    // resource keys they mark no second dialect.
    if found.iter().any(|d| d.dialect == Dialect::Draft) {
        found.retain(|d| !(d.dialect == Dialect::Hip && CHART_KEYS.contains(&d.key.as_str())));
    }
    match found.as_slice() {
        [] => Ok(Dialect::Hip),
        [one] => Ok(one.dialect),
        _ => Err(Mixed { found }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dialects_keys_are_known() {
        for (key, dialect) in [
            ("helm.sh/resource-group", Dialect::Hip),
            ("helm.sh/readiness-success", Dialect::Hip),
            ("argocd.argoproj.io/sync-wave", Dialect::Argo),
            ("argocd.argoproj.io/hook", Dialect::Argo),
            ("werf.io/weight", Dialect::Werf),
            ("werf.io/deploy-dependency-db", Dialect::Werf),
            ("db.dependency.werf.io", Dialect::Werf),
            ("sa.external-dependency.werf.io/resource", Dialect::Werf),
            ("kapp.k14s.io/change-group", Dialect::Kapp),
            ("kapp.k14s.io/change-rule.1", Dialect::Kapp),
            ("kots.io/creation-phase", Dialect::Kots),
            ("kots.io/wait-for-properties", Dialect::Kots),
            ("helm.sh/layer", Dialect::Draft),
            ("helm.sh/depends-on/charts", Dialect::Draft),
            ("helm.sh/weight", Dialect::Draft),
        ] {
            assert_eq!(dialect_of(key), Some(dialect), "{key}");
        }
        for key in [
            "helm.sh/hook",
            "helm.sh/hook-weight",
            "kapp.k14s.io/change-groups",
            "kapp.k14s.io/disable-wait",
            "werf.io/track-termination-mode",
            "argocd.argoproj.io/sync-options",
            "kots.io/app-slug",
            "app.kubernetes.io/name",
        ] {
            assert_eq!(dialect_of(key), None, "{key}");
        }
    }
}
