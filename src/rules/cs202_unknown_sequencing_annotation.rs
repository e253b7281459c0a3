use crate::lint::{Context, Diagnostic, Sink};
use crate::model::annotations::{
    DEPENDS_ON_GROUPS, DEPENDS_ON_GROUPS_ONE_SLASH, DEPENDS_ON_SUBCHARTS, HOOK, HOOK_DELETE_POLICY,
    HOOK_WEIGHT, READINESS_FAILURE, READINESS_SUCCESS, RESOURCE_GROUP,
};
use crate::model::draft::SUPERSEDED;
use crate::parse::Node;
use crate::source::Loc;

declare_rule! {
    /// ## What it does
    /// Reports an annotation key that looks like a HIP-0025 sequencing key but is not one:
    /// a misspelling (the right key is suggested), or a key of the superseded draft
    /// (`helm.sh/layer`, `helm.sh/dependson/layer`, `helm.sh/depends-on/layer(s)`,
    /// `helm.sh/dependson/chart`, `helm.sh/depends-on/chart(s)`, `helm.sh/weight`,
    /// `helm.sh/resource-ready`, `helm.sh/readiness-timeout`), with its HIP-0025 equivalent. Checked on resources and
    /// in `Chart.yaml` (annotations and `dependencies[].depends-on`).
    ///
    /// ## Why is this bad?
    /// Helm ignores keys it does not know: the resource is installed as if it had no
    /// sequencing at all, and nothing tells you.
    ///
    /// ## Example
    /// ```yaml
    /// helm.sh/resource-groups: db
    /// helm.sh/layer: db
    /// ```
    ///
    /// Use instead:
    /// ```yaml
    /// helm.sh/resource-group: db
    /// ```
    pub static UNKNOWN_SEQUENCING_ANNOTATION = ("CS202", "unknown-sequencing-annotation", Warning,
        "a misspelled or superseded helm.sh/ sequencing key", check);
}

const RESOURCE_KEYS: [&str; 5] = [
    RESOURCE_GROUP,
    DEPENDS_ON_GROUPS,
    DEPENDS_ON_GROUPS_ONE_SLASH,
    READINESS_SUCCESS,
    READINESS_FAILURE,
];

/// Other `helm.sh/` annotations Helm knows; never reported.
const OTHER_HELM_KEYS: [&str; 5] = [
    HOOK,
    HOOK_WEIGHT,
    HOOK_DELETE_POLICY,
    "helm.sh/resource-policy",
    "helm.sh/hook-output-log-policy",
];

/// What is wrong with a key, if anything: (message, help).
fn judge(key: &str, known: &[&str]) -> Option<(String, String)> {
    if known.contains(&key) || OTHER_HELM_KEYS.contains(&key) {
        return None;
    }
    let lower = key.to_ascii_lowercase();
    if let Some((old, new)) = SUPERSEDED.iter().find(|(old, _)| *old == lower) {
        return Some((
            format!("`{key}` is a key of the superseded sequencing draft and does nothing"),
            format!("use {new} instead (HIP-0025 replaced `{old}`)"),
        ));
    }
    let (best, distance) = known
        .iter()
        .map(|k| (*k, strsim::damerau_levenshtein(&lower, k)))
        .min_by_key(|(_, d)| *d)?;
    // Close to a real key, or the right name under another prefix (`helm.io/resource-group`).
    let same_tail = lower.rsplit('/').next() == best.rsplit('/').next() && lower.contains('/');
    let close = distance <= 3 || (distance <= 6 && lower.starts_with("helm.sh/"));
    if !(close || same_tail) || distance == 0 {
        return None;
    }
    Some((
        format!("unknown sequencing annotation `{key}`: Helm ignores it"),
        format!("did you mean `{best}`?"),
    ))
}

fn check(ctx: &Context, sink: &mut Sink) {
    for (doc, r) in ctx.resources() {
        let chart = ctx.model.documents[doc].chart;
        for a in &r.annotations {
            if let Some((message, help)) = judge(&a.key, &RESOURCE_KEYS) {
                sink.push(
                    Diagnostic::new(&UNKNOWN_SEQUENCING_ANNOTATION, chart, a.key_loc, message)
                        .doc(doc)
                        .label("not a sequencing annotation")
                        .help(help),
                );
            }
        }
    }
    for (id, chart) in ctx.model.charts.iter().enumerate() {
        let Some(info) = &chart.info else { continue };
        let file = info.meta.file;
        let annotations = info
            .meta
            .node
            .get("annotations")
            .and_then(Node::as_map)
            .unwrap_or_default();
        for (k, _) in annotations {
            let Some(key) = k.as_scalar() else { continue };
            if let Some((message, help)) = judge(key, &[DEPENDS_ON_SUBCHARTS]) {
                sink.push(
                    Diagnostic::new(
                        &UNKNOWN_SEQUENCING_ANNOTATION,
                        id,
                        Loc { file, span: k.span },
                        message,
                    )
                    .label("not a sequencing annotation")
                    .help(help),
                );
            }
        }
        for dep in &info.meta.dependencies {
            for (k, _) in dep.node.as_map().unwrap_or_default() {
                let Some(key) = k.as_scalar() else { continue };
                if key == "depends-on" {
                    continue;
                }
                let norm = key.to_ascii_lowercase().replace(['_', '-'], "");
                if norm == "dependson" || strsim::damerau_levenshtein(key, "depends-on") <= 2 {
                    sink.push(
                        Diagnostic::new(
                            &UNKNOWN_SEQUENCING_ANNOTATION,
                            id,
                            Loc { file, span: k.span },
                            format!("unknown dependency field `{key}`: Helm ignores it"),
                        )
                        .label("not `depends-on`")
                        .help("did you mean `depends-on`?"),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_judged() {
        assert!(judge("helm.sh/resource-group", &RESOURCE_KEYS).is_none());
        assert!(judge("helm.sh/hook", &RESOURCE_KEYS).is_none());
        assert!(judge("app.kubernetes.io/name", &RESOURCE_KEYS).is_none());
        assert!(judge("checksum/config", &RESOURCE_KEYS).is_none());
        let (_, help) = judge("helm.sh/resource-groups", &RESOURCE_KEYS).expect("typo");
        assert_eq!(help, "did you mean `helm.sh/resource-group`?");
        let (_, help) = judge("helm.io/resource-group", &RESOURCE_KEYS).expect("prefix");
        assert!(help.contains("helm.sh/resource-group"));
        let (msg, help) = judge("helm.sh/layer", &RESOURCE_KEYS).expect("draft");
        assert!(msg.contains("superseded") && help.contains("helm.sh/resource-group"));
    }
}
