use crate::lint::{Context, Diagnostic, Sink};
use crate::model::annotations::{DEPENDS_ON_GROUPS, DEPENDS_ON_GROUPS_ONE_SLASH};

declare_rule! {
    /// ## What it does
    /// Reports a resource that sets both spellings of the group-dependency annotation,
    /// `helm.sh/depends-on/resource-groups` (HIP-0025's text, two `/`) and
    /// `helm.sh/depends-on-resource-groups` (one `/`, the key the resource-group pull
    /// request's current code reads), with different groups. chartseq reads either; when both
    /// are set it plans with the two-`/` key.
    ///
    /// ## Why is this bad?
    /// Each Helm reads one of the two keys: a Helm that follows the HIP's text orders the
    /// resource after one set of groups, the reference implementation after the other. The
    /// install order then depends on which Helm deploys the chart.
    ///
    /// ## Example
    /// ```yaml
    /// helm.sh/resource-group: app
    /// helm.sh/depends-on/resource-groups: '["db"]'
    /// helm.sh/depends-on-resource-groups: '["db", "queue"]'
    /// ```
    ///
    /// Use instead: one list under both keys, or only one key:
    /// ```yaml
    /// helm.sh/resource-group: app
    /// helm.sh/depends-on/resource-groups: '["db", "queue"]'
    /// helm.sh/depends-on-resource-groups: '["db", "queue"]'
    /// ```
    pub static CONFLICTING_DEPENDENCY_KEYS = ("CS205", "conflicting-dependency-keys", Error,
        "both spellings of the group-dependency key are set and name different groups", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    for (doc, r) in ctx.resources() {
        let (Some(hip), Some(other)) = (&r.seq.depends_on, &r.seq.depends_on_also) else {
            continue;
        };
        // Malformed values are CS201's; order and repeats do not change what is waited for.
        let (Ok(a), Ok(b)) = (&hip.value, &other.value) else {
            continue;
        };
        if set(a) == set(b) {
            continue;
        }
        let list = |l: &Vec<String>| format!("[{}]", l.join(", "));
        sink.push(
            Diagnostic::new(
                &CONFLICTING_DEPENDENCY_KEYS,
                ctx.model.documents[doc].chart,
                other.loc,
                format!(
                    "`{DEPENDS_ON_GROUPS}` names {} but `{DEPENDS_ON_GROUPS_ONE_SLASH}` names {}: Helms that read one key or the other install in different orders",
                    list(a),
                    list(b)
                ),
            )
            .doc(doc)
            .label("disagrees with the two-`/` key")
            .secondary(hip.loc, "chartseq plans with this list")
            .help("write the same list under both keys, or keep only one"),
        );
    }
}

fn set(list: &[String]) -> std::collections::BTreeSet<&str> {
    list.iter().map(String::as_str).collect()
}
