//! `plan --uninstall --dialect argo`: Argo CD's own deletion of an application (argo-cd 37ee009
//! `controller/appcontroller.go` `finalizeApplicationDeletion`, `controller/sort_delete.go`,
//! `controller/hook.go`, `docs/user-guide/sync-waves.md` "`PreDelete` and `PostDelete` Hooks"),
//! over `fixtures/dialects/argo/delete-hooks.yaml`.

use crate::{chartseq, run};

const STREAM: &str = "fixtures/dialects/argo/delete-hooks.yaml";

fn plan(format: &str) -> String {
    let (code, out, err) = run(chartseq().args([
        "plan",
        STREAM,
        "--dialect",
        "argo",
        "--uninstall",
        "--format",
        format,
    ]));
    assert_eq!(code, 0, "{err}");
    out
}

/// The `PreDelete` hooks first, the cascade highest wave first (every phase of a wave, the
/// `PreSync` hook and the `PreDelete` hook still live included), the `PostDelete` hooks last (Helm's
/// `post-delete` is one), then what stays: the templated CRD, the `Delete=false` and `keep`
/// objects, and the `Skip` object Argo CD never applied.
#[test]
fn argo_uninstall_text_runs_delete_hooks_around_the_cascade_by_wave() {
    assert_eq!(
        plan("text"),
        "\
PreDelete hooks (created first, each waited healthy): Job/before-delete
Uninstall order (Argo CD's own cascade: highest sync wave first, all phases together, each wave gone before the next):
  1. delete:wave=2: Service/frontend, ConfigMap/frontend
  2. delete:wave=1: Service/backend, Job/migrate
  3. delete:wave=0: Job/before-delete, ConfigMap/config
PostDelete hooks (created once the cascade is done, each waited healthy): Job/after-delete
CRDs (kept: Argo CD never deletes a CRD): CustomResourceDefinition/widgets.example.com
Kept by their annotations (2):
    Secret/kept (helm.sh/resource-policy: keep),
    ConfigMap/stays (argocd.argoproj.io/sync-options: Delete=false)
Not deleted (never installed): ConfigMap/skipped
"
    );
}

fn names(list: &serde_json::Value) -> Vec<String> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|r| {
            let r = r.get("resource").unwrap_or(r);
            format!(
                "{}/{}",
                r["kind"].as_str().unwrap_or(""),
                r["name"].as_str().unwrap_or("")
            )
        })
        .collect()
}

/// The same order in JSON: the cascade as steps, each after the one before; the delete hooks,
/// the kept CRDs and the objects kept by their annotations beside them.
#[test]
fn argo_uninstall_json_lists_the_cascade_hooks_and_what_stays() {
    let json: serde_json::Value = serde_json::from_str(&plan("json")).expect("plan JSON");
    assert_eq!(json["order"], "uninstall");
    assert_eq!(json["dialect"], "argo");
    let steps: Vec<(String, Vec<String>, serde_json::Value)> = json["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            (
                s["group"].as_str().unwrap_or("").to_owned(),
                names(&s["resources"]),
                s["after_steps"].clone(),
            )
        })
        .collect();
    let step = |group: &str, resources: &[&str], after: serde_json::Value| {
        (
            group.to_owned(),
            resources
                .iter()
                .map(|r| (*r).to_owned())
                .collect::<Vec<_>>(),
            after,
        )
    };
    assert_eq!(
        steps,
        [
            step(
                "delete:wave=2",
                &["Service/frontend", "ConfigMap/frontend"],
                serde_json::json!([])
            ),
            step(
                "delete:wave=1",
                &["Service/backend", "Job/migrate"],
                serde_json::json!([1])
            ),
            step(
                "delete:wave=0",
                &["Job/before-delete", "ConfigMap/config"],
                serde_json::json!([2])
            ),
        ]
    );
    assert_eq!(names(&json["delete_hooks"]["pre"]), ["Job/before-delete"]);
    assert_eq!(names(&json["delete_hooks"]["post"]), ["Job/after-delete"]);
    assert_eq!(
        names(&json["crds"]),
        ["CustomResourceDefinition/widgets.example.com"]
    );
    assert_eq!(names(&json["kept"]), ["Secret/kept", "ConfigMap/stays"]);
    assert_eq!(
        json["kept"][1]["annotation"],
        "argocd.argoproj.io/sync-options: Delete=false"
    );
}

/// The cascade is drawn as the steps it is, in DOT and Mermaid alike.
#[test]
fn argo_uninstall_drawings_show_the_cascade() {
    let dot = plan("dot");
    assert!(
        dot.contains("s0 [label=\"delete:wave=2\\n2 resource(s)\"]")
            && dot.contains("s0 -> s1;")
            && dot.contains("s1 -> s2;"),
        "{dot}"
    );
    let mermaid = plan("mermaid");
    assert!(
        mermaid.contains("s0[\"delete:wave=2\"]") && mermaid.contains("s1 --> s2"),
        "{mermaid}"
    );
}
