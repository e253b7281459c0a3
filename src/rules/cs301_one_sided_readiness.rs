use crate::lint::{Context, Diagnostic, Sink};
use crate::model::annotations::{READINESS_FAILURE, READINESS_SUCCESS};

declare_rule! {
    /// ## What it does
    /// Reports a resource with only one of `helm.sh/readiness-success` and
    /// `helm.sh/readiness-failure` (or with one of them empty).
    /// Not checked on hooks, whose annotations are ignored (CS401 says so).
    ///
    /// ## Why is this bad?
    /// Custom readiness applies only when both are present and non-empty; with one alone
    /// Helm silently falls back to its default status checks, so the expression you wrote
    /// is never evaluated.
    ///
    /// ## Example
    /// ```yaml
    /// helm.sh/readiness-success: '["{.succeeded} >= 1"]'
    /// ```
    ///
    /// Use instead:
    /// ```yaml
    /// helm.sh/readiness-success: '["{.succeeded} >= 1"]'
    /// helm.sh/readiness-failure: '["{.failed} >= 1"]'
    /// ```
    pub static ONE_SIDED_READINESS = ("CS301", "one-sided-readiness", Error,
        "only one of readiness-success / readiness-failure", check);
}

fn check(ctx: &Context, sink: &mut Sink) {
    // A hook's sequencing and readiness annotations are ignored: CS401 is the one finding.
    for (doc, r) in ctx.resources().filter(|(_, r)| r.hook.is_none()) {
        let non_empty = |l: &Option<
            crate::model::annotations::Spanned<crate::model::annotations::NameList>,
        >| {
            l.as_ref()
                .is_some_and(|s| s.value.as_ref().map_or(true, |v| !v.is_empty()))
        };
        let success = non_empty(&r.seq.readiness_success);
        let failure = non_empty(&r.seq.readiness_failure);
        let (present, missing, list) = match (success, failure) {
            (true, false) => (
                READINESS_SUCCESS,
                READINESS_FAILURE,
                &r.seq.readiness_success,
            ),
            (false, true) => (
                READINESS_FAILURE,
                READINESS_SUCCESS,
                &r.seq.readiness_failure,
            ),
            _ => continue,
        };
        let Some(list) = list else { continue };
        sink.push(
            Diagnostic::new(
                &ONE_SIDED_READINESS,
                ctx.model.documents[doc].chart,
                list.loc,
                format!("`{present}` without a non-empty `{missing}` is ignored"),
            )
            .doc(doc)
            .label(format!("`{missing}` is missing"))
            .note("custom readiness applies only when both annotations are present and non-empty; otherwise the default status checks decide")
            .help(advice(&r.id.kind, present, missing)),
        );
    }
}

/// What to add for this kind: an expression that fits what its status reports, or, for kinds
/// whose status has no such state, the advice to leave the judgement to kstatus.
fn advice(kind: &str, present: &str, missing: &str) -> String {
    let example = if missing == READINESS_FAILURE {
        failure_example(kind)
    } else {
        Some(success_example(kind))
    };
    match example {
        Some(e) => {
            format!("add `{missing}` (for a {kind}, for example `{e}`), or remove `{present}`")
        }
        None => format!(
            "a {kind} reports no failure in its status; remove `{present}` and let the default status checks judge it, or add `{missing}` for a condition your controller sets"
        ),
    }
}

/// A failure expression that fits the kind's status; `None` when the status has no failure.
fn failure_example(kind: &str) -> Option<&'static str> {
    match kind {
        "Job" => Some("{.failed} >= 1"),
        "Pod" => Some("{.phase} == Failed"),
        "Deployment" => {
            Some("{.conditions[?(@.reason==\"ProgressDeadlineExceeded\")].status} == False")
        }
        // Workloads and core kinds whose status never says "failed".
        "StatefulSet"
        | "DaemonSet"
        | "ReplicaSet"
        | "ReplicationController"
        | "PersistentVolumeClaim"
        | "Service"
        | "ConfigMap"
        | "Secret"
        | "ServiceAccount"
        | "CronJob"
        | "Namespace"
        | "CustomResourceDefinition" => None,
        // Custom resources: the kstatus convention most controllers follow.
        _ => Some("{.conditions[?(@.type==\"Stalled\")].status} == True"),
    }
}

/// A success expression that fits the kind's status.
fn success_example(kind: &str) -> &'static str {
    match kind {
        "Job" => "{.succeeded} >= 1",
        "Pod" => "{.phase} == Running",
        "Deployment" | "StatefulSet" | "ReplicaSet" | "ReplicationController" => {
            "{.readyReplicas} >= 1"
        }
        "DaemonSet" => "{.numberReady} >= 1",
        "PersistentVolumeClaim" => "{.phase} == Bound",
        _ => "{.conditions[?(@.type==\"Ready\")].status} == True",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_suggested_expression_parses() {
        for kind in [
            "Job",
            "Pod",
            "Deployment",
            "StatefulSet",
            "DaemonSet",
            "Widget",
        ] {
            for e in [failure_example(kind), Some(success_example(kind))]
                .into_iter()
                .flatten()
            {
                assert!(crate::readiness::expr::parse(e).is_ok(), "{kind}: {e}");
            }
        }
        assert_eq!(failure_example("StatefulSet"), None);
        assert!(
            advice("StatefulSet", READINESS_SUCCESS, READINESS_FAILURE)
                .contains("reports no failure")
        );
        assert!(advice("Job", READINESS_SUCCESS, READINESS_FAILURE).contains("{.failed} >= 1"));
    }
}
