use std::collections::{BTreeMap, BTreeSet};

use crate::lint::{Context, Diagnostic, Sink};
use crate::model::annotations::RESOURCE_GROUP;
use crate::plan::system;

declare_rule! {
    /// ## What it does
    /// Reports a chart whose resources carry the ordering annotations of another deployment
    /// tool — werf (`werf.io/weight`, `werf.io/deploy-on`, `werf.io/deploy-dependency-<id>`,
    /// `<id>.dependency.werf.io`, external dependencies), Argo CD
    /// (`argocd.argoproj.io/sync-wave`, `argocd.argoproj.io/hook`), kapp
    /// (`kapp.k14s.io/change-group`, `kapp.k14s.io/change-rule`) or KOTS
    /// (`kots.io/creation-phase`, `kots.io/deletion-phase`, `kots.io/wait-for-ready`,
    /// `kots.io/wait-for-properties`). One finding per chart level and tool, at the first such
    /// annotation, counting the others. The superseded draft keys of Helm's own sequencing
    /// (`helm.sh/layer`, …) are CS202's.
    ///
    /// ## Why is this bad?
    /// Nothing is wrong for the tool that reads them, but Helm ignores them: installed with
    /// Helm's sequencing, the chart gets none of that order. `chartseq plan --dialect <tool>`
    /// shows the order the tool uses, and `chartseq migrate --from <tool>` writes the same
    /// order as HIP-0025 resource groups. On a chart that already carries HIP-0025 groups (a
    /// migrated chart keeps its old annotations for the old tool by default), the finding says
    /// so, CS604 reports where the two orders disagree, and `chartseq migrate --from <tool>
    /// --drop-source-annotations` removes the old keys once the old tool is gone.
    ///
    /// ## Example
    /// ```yaml
    /// metadata:
    ///   annotations:
    ///     argocd.argoproj.io/sync-wave: "1"
    /// ```
    ///
    /// Use instead (as `chartseq migrate --from argo` writes it):
    /// ```yaml
    /// metadata:
    ///   annotations:
    ///     helm.sh/resource-group: wave-1
    ///     helm.sh/depends-on/resource-groups: '["wave-0"]'
    /// ```
    pub static FOREIGN_ORDERING_ANNOTATIONS = ("CS601", "foreign-ordering-annotations", Info,
        "ordering annotations of werf, Argo CD, kapp or KOTS that Helm ignores (names the tool and `chartseq migrate --from …`)", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    // The chart levels that carry HIP-0025 groups (a migrated chart keeps its old keys).
    let with_groups: BTreeSet<usize> = ctx
        .resources()
        .filter(|(_, r)| r.annotations.iter().any(|a| a.key == RESOURCE_GROUP))
        .map(|(d, _)| ctx.model.documents[d].chart)
        .collect();
    for entry in system::SYSTEMS.iter().filter(|e| e.foreign) {
        // Per chart level: the first annotation (document, annotation), the count and the keys.
        let mut found: BTreeMap<usize, (usize, usize, Vec<&str>, usize)> = BTreeMap::new();
        for (doc, r) in ctx.resources() {
            let chart = ctx.model.documents[doc].chart;
            for (i, a) in r.annotations.iter().enumerate() {
                if !(entry.owns_key)(&a.key) {
                    continue;
                }
                let slot = found.entry(chart).or_insert((doc, i, Vec::new(), 0));
                slot.3 += 1;
                if !slot.2.contains(&a.key.as_str()) {
                    slot.2.push(&a.key);
                }
            }
        }
        for (chart, (doc, index, keys, count)) in found {
            let Some(first) = ctx
                .model
                .resource(doc)
                .and_then(|r| r.annotations.get(index))
            else {
                continue;
            };
            let display = &ctx.model.charts[chart].display;
            let what = if count == 1 {
                format!("an ordering annotation of {}", entry.tool)
            } else {
                format!("{count} ordering annotations of {}", entry.tool)
            };
            let shown: Vec<String> = keys.iter().take(4).map(|k| format!("`{k}`")).collect();
            let more = if keys.len() > 4 {
                format!(" and {} more keys", keys.len() - 4)
            } else {
                String::new()
            };
            let mut d = Diagnostic::new(
                &FOREIGN_ORDERING_ANNOTATIONS,
                chart,
                first.key_loc,
                format!(
                    "chart {display} carries {what} ({}{more}), which Helm ignores",
                    shown.join(", ")
                ),
            )
            .doc(doc)
            .label(format!("{} ordering", entry.tool));
            d = d.note(format!(
                "`chartseq plan --dialect {}` shows the order {} uses",
                entry.name, entry.tool
            ));
            // Kept beside HIP-0025 groups (as `migrate` keeps them by default): both orders
            // apply, one per tool, and CS604 checks that they agree.
            let migrated = with_groups.contains(&chart);
            let help = if migrated {
                format!(
                    "the chart also carries HIP-0025 resource groups, which Helm's sequencing follows (CS604 reports where the two orders disagree); once {} no longer deploys the chart, `chartseq migrate --from {} --drop-source-annotations` removes those it carried over",
                    entry.tool, entry.name
                )
            } else {
                format!(
                    "to install in this order with Helm's sequencing, run `chartseq migrate --from {}`",
                    entry.name
                )
            };
            sink.push(d.help(help));
        }
    }
}
