//! `--from auto`: which tool's ordering annotations a chart carries.
//!
//! A minimal reader of annotation key prefixes, kept apart so that a shared detection
//! function can replace it: werf (`werf.io/`, `….werf.io`), Argo CD (`argocd.argoproj.io/`),
//! kapp (`kapp.k14s.io/`), KOTS (`kots.io/`), the draft HIP's keys.

use super::Source;
use crate::error::{Error, Result};
use crate::model::Model;

/// The tool whose ordering annotation a key is.
fn tool_of(key: &str) -> Option<Source> {
    if key == "argocd.argoproj.io/sync-wave" || key == "argocd.argoproj.io/hook" {
        return Some(Source::Argo);
    }
    if key == "werf.io/weight"
        || key == "werf.io/deploy-on"
        || key.starts_with("werf.io/deploy-dependency-")
        || key.ends_with(".dependency.werf.io")
        || key.contains(".external-dependency.werf.io")
    {
        return Some(Source::Werf);
    }
    if key.starts_with("kapp.k14s.io/change-") || key == "kapp.k14s.io/exists" {
        return Some(Source::Kapp);
    }
    if key == "kots.io/creation-phase" || key.starts_with("kots.io/wait-for-") {
        return Some(Source::Kots);
    }
    if matches!(
        key,
        "helm.sh/layer"
            | "helm.sh/dependson/layer"
            | "helm.sh/depends-on/layer"
            | "helm.sh/depends-on/layers"
            | "helm.sh/dependson/chart"
            | "helm.sh/depends-on/chart"
            | "helm.sh/depends-on/charts"
            | "helm.sh/weight"
            | "helm.sh/resource-ready"
    ) {
        return Some(Source::Draft);
    }
    None
}

/// The one dialect whose ordering annotations the chart carries; `None` when it carries none.
/// Several dialects at once is an error: the user must pick one with `--from`.
pub fn detect(model: &Model) -> Result<Option<Source>> {
    let mut found: Vec<Source> = Vec::new();
    for doc in 0..model.documents.len() {
        let Some(r) = model.resource(doc) else {
            continue;
        };
        for a in &r.annotations {
            if let Some(t) = tool_of(&a.key) {
                if !found.contains(&t) {
                    found.push(t);
                }
            }
        }
    }
    match found.as_slice() {
        [] => Ok(None),
        [d] => Ok(Some(*d)),
        several => Err(Error::new(format!(
            "the chart carries ordering annotations of several tools ({}): pick one with --from",
            several
                .iter()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_name_their_tool() {
        assert_eq!(tool_of("argocd.argoproj.io/sync-wave"), Some(Source::Argo));
        assert_eq!(tool_of("werf.io/weight"), Some(Source::Werf));
        assert_eq!(tool_of("db.dependency.werf.io"), Some(Source::Werf));
        assert_eq!(tool_of("kapp.k14s.io/change-group"), Some(Source::Kapp));
        assert_eq!(tool_of("helm.sh/resource-group"), None);
        assert_eq!(tool_of("argocd.argoproj.io/sync-options"), None);
    }
}
