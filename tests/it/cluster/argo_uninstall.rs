//! `chartseq uninstall` of a release applied with `--dialect argo` deletes it as Argo CD
//! deletes an application (argo-cd 37ee009 `controller/appcontroller.go`
//! `finalizeApplicationDeletion`): the `PreDelete` hook created and healthy before anything is
//! deleted, the cascade highest sync wave first (`controller/sort_delete.go`), the `PostDelete`
//! hook created once the last object is gone, a templated CRD left in place (`shouldBeDeleted`),
//! Helm's `pre-delete` hook run once as one of the `PreDelete` hooks (`controller/hook.go`), all
//! proved from the API server's audit log.

use super::dialects::{config_map, job, stream};
use super::{Ns, ok};

/// The first successful deletion of `resource/name` by the tests, as its arrival time.
fn deleted(audit: &super::Audit, resource: &str, name: &str) -> (String, String) {
    audit
        .events
        .iter()
        .find(|e| {
            e.verb == "delete"
                && e.resource == resource
                && e.name == name
                && (200..300).contains(&e.code)
        })
        .map_or_else(
            || panic!("{resource}/{name} is never deleted:\n{audit}"),
            |e| (e.received.clone(), e.completed.clone()),
        )
}

#[test]
fn argo_uninstall_runs_delete_hooks_around_a_cascade_highest_wave_first() {
    let Some(ns) = Ns::new("argo-uninstall") else {
        return;
    };
    let group = format!("{}.example.com", ns.name);
    let crd_name = format!("widgets.{group}");
    ns.owns("customresourcedefinition", &crd_name);
    let crd = format!(
        "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {crd_name}
spec:
  group: {group}
  scope: Namespaced
  names: {{kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {{openAPIV3Schema: {{type: object, x-kubernetes-preserve-unknown-fields: true}}}}
"
    );
    let wave = |n: u8| format!("\n    argocd.argoproj.io/sync-wave: \"{n}\"");
    let text = stream(&[
        ("crd.yaml", crd),
        ("zero.yaml", config_map("zero", &wave(0))),
        ("one.yaml", config_map("one", &wave(1))),
        ("two.yaml", config_map("two", &wave(2))),
        (
            "before.yaml",
            job("before", "\n    argocd.argoproj.io/hook: PreDelete"),
        ),
        (
            "helm-before.yaml",
            job(
                "helm-before",
                "\n    helm.sh/hook: pre-delete\n    helm.sh/hook-delete-policy: hook-succeeded",
            ),
        ),
        (
            "after.yaml",
            job(
                "after",
                "\n    argocd.argoproj.io/hook: PostDelete\n    argocd.argoproj.io/hook-delete-policy: HookSucceeded",
            ),
        ),
    ]);
    let path = ns.file("stream.yaml", &text);
    let out = ok(ns.chartseq(&[
        "apply",
        &path,
        "--dialect",
        "argo",
        "--release",
        "shop",
        "--timeout",
        "2m",
    ]));
    assert!(out.contains("status deployed"), "{out}");
    // Argo CD never runs delete hooks on a sync.
    let audit = ns.audit();
    assert!(
        !audit.written("Job", "before") && !audit.written("Job", "after"),
        "{audit}"
    );

    let (code, out, err) = ns.chartseq(&["uninstall", "shop", "--timeout", "2m"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        format!("{out}{err}").contains(&format!(
            "kept CustomResourceDefinition/{crd_name}: Argo CD never deletes a CRD"
        )),
        "{out}\n{err}"
    );
    let audit = ns.audit();
    let cascade: Vec<String> = audit
        .deletions()
        .into_iter()
        .filter(|d| d.starts_with("configmaps/"))
        .collect();
    assert_eq!(
        cascade,
        ["configmaps/two", "configmaps/one", "configmaps/zero"],
        "{out}\n{audit}"
    );
    // The PreDelete hook was created and complete before the first deletion.
    let before_ready = audit.ready("Job", "before");
    let (two, two_done) = deleted(&audit, "configmaps", "two");
    assert!(
        audit.created("Job", "before").received < two && before_ready < two,
        "{audit}"
    );
    // Helm's `pre-delete` hook is one of Argo CD's PreDelete hooks: run once, its way, with
    // the other.
    assert_eq!(
        audit.count("patch", "Job", "helm-before") + audit.count("create", "Job", "helm-before"),
        1,
        "{audit}"
    );
    assert!(audit.ready("Job", "helm-before") < two, "{audit}");
    // Each wave went out once the one above was gone.
    let (one, one_done) = deleted(&audit, "configmaps", "one");
    let (zero, zero_done) = deleted(&audit, "configmaps", "zero");
    assert!(two_done <= one && one_done <= zero, "{audit}");
    // The PreDelete hook still live went with its wave (0), the PostDelete hook was created
    // after the last deletion of the cascade, and deleted by its policy once healthy.
    let (hook_deleted, hook_done) = deleted(&audit, "jobs", "before");
    assert!(hook_deleted > two_done, "{audit}");
    let after_created = audit.created("Job", "after").received.clone();
    assert!(
        after_created > zero_done && after_created > hook_done,
        "{audit}"
    );
    let (after_gone, _) = deleted(&audit, "jobs", "after");
    assert!(after_gone > audit.ready("Job", "after"), "{audit}");
    // The templated CRD stays: Argo CD never deletes a CRD.
    assert!(
        ns.get("customresourcedefinition", &crd_name).is_some(),
        "{out}"
    );
    assert!(ns.get("job", "after").is_none() && ns.get("configmap", "zero").is_none());
}

/// A Job of `image` named by `name:` or, with `generated`, only by `generateName: name-`.
fn hook_job(name: &str, generated: bool, image: &str, annotations: &str) -> String {
    let naming = if generated {
        format!("generateName: {name}-")
    } else {
        format!("name: {name}")
    };
    format!(
        "apiVersion: batch/v1
kind: Job
metadata:
  {naming}
  annotations:{annotations}
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations: {{pod-complete.stage.kwok.x-k8s.io/delay: 1s}}
    spec:
      restartPolicy: Never
      containers: [{{name: c, image: {image}}}]
"
    )
}

/// The Jobs the server named from `prefix-`.
fn jobs_from(ns: &Ns, prefix: &str) -> Vec<String> {
    let (code, out, err) = ns.kubectl(&["get", "jobs", "-o", "json"]);
    assert_eq!(code, 0, "{err}");
    let list: serde_json::Value = serde_json::from_str(&out).expect("kubectl prints JSON");
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|j| j["metadata"]["name"].as_str())
        .filter(|n| {
            n.strip_prefix(&format!("{prefix}-"))
                .is_some_and(|rest| rest.len() == 5)
        })
        .map(str::to_owned)
        .collect()
}

/// A failed `PreDelete` hook stops the deletion before anything is deleted (Argo CD's
/// `executeHooks` returns an error and the application stays), and the failed hook is deleted
/// so that the next attempt creates it anew; the release stays, to be uninstalled again.
#[test]
fn argo_uninstall_stops_before_any_deletion_when_a_pre_delete_hook_fails() {
    let Some(ns) = Ns::new("argo-predelete-fails") else {
        return;
    };
    let text = stream(&[
        ("app.yaml", config_map("app", "")),
        (
            "before.yaml",
            hook_job(
                "before",
                false,
                "chartseq.invalid/fail:1",
                "\n    argocd.argoproj.io/hook: PreDelete",
            ),
        ),
    ]);
    let path = ns.file("stream.yaml", &text);
    ok(ns.chartseq(&["apply", &path, "--dialect", "argo", "--release", "shop"]));
    let (code, out, err) = ns.chartseq(&["uninstall", "shop", "--timeout", "1m"]);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("Job/before"), "{err}");
    let audit = ns.audit();
    assert!(audit.written("Job", "before"), "{audit}");
    assert!(ns.get("configmap", "app").is_some(), "{audit}");
    assert_eq!(
        audit.deletions(),
        ["jobs/before"],
        "only the failed hook is deleted:\n{audit}"
    );
    assert!(ns.get("job", "before").is_none());
    let (_, release) = ns
        .stored_release("Secret", "shop", 1)
        .expect("the release stays");
    assert_eq!(release["info"]["status"], "uninstalling", "{release}");
}

/// Hooks named by `generateName`: the object a `PreDelete` hook created goes with its wave
/// (wave 1 here, before the wave-0 `ConfigMap`), as Argo CD's cascade deletes every live
/// object; a `PostDelete` hook without a delete policy stays once it ran (`hook.DeletePolicies`
/// gives `BeforeHookCreation`, which `cleanupHooks` does not act on), one with
/// `HookSucceeded` is deleted.
#[test]
fn argo_uninstall_deletes_generated_pre_delete_hooks_by_wave_and_keeps_post_delete_ones_by_policy()
{
    let Some(ns) = Ns::new("argo-generated-delete") else {
        return;
    };
    let text = stream(&[
        ("app.yaml", config_map("app", "")),
        (
            "before.yaml",
            hook_job(
                "before",
                true,
                "app:1",
                "\n    argocd.argoproj.io/hook: PreDelete\n    argocd.argoproj.io/sync-wave: \"1\"",
            ),
        ),
        (
            "stays.yaml",
            hook_job(
                "stays",
                true,
                "app:1",
                "\n    argocd.argoproj.io/hook: PostDelete",
            ),
        ),
        (
            "goes.yaml",
            hook_job(
                "goes",
                true,
                "app:1",
                "\n    argocd.argoproj.io/hook: PostDelete\n    argocd.argoproj.io/hook-delete-policy: HookSucceeded",
            ),
        ),
    ]);
    let path = ns.file("stream.yaml", &text);
    ok(ns.chartseq(&["apply", &path, "--dialect", "argo", "--release", "shop"]));
    let out = ok(ns.chartseq(&["uninstall", "shop", "--timeout", "2m"]));
    let audit = ns.audit();
    let deletions = audit.deletions();
    let before = deletions
        .iter()
        .position(|d| d.starts_with("jobs/before-"))
        .unwrap_or_else(|| panic!("the PreDelete hook's object is deleted: {out}\n{audit}"));
    let app = deletions
        .iter()
        .position(|d| d == "configmaps/app")
        .unwrap_or_else(|| panic!("app is deleted: {audit}"));
    assert!(before < app, "wave 1 before wave 0: {deletions:?}");
    assert!(jobs_from(&ns, "before").is_empty(), "{out}");
    assert_eq!(jobs_from(&ns, "stays").len(), 1, "{out}\n{audit}");
    assert!(jobs_from(&ns, "goes").is_empty(), "{out}\n{audit}");
    assert!(
        deletions.iter().any(|d| d.starts_with("jobs/goes-")),
        "{deletions:?}"
    );
}

/// A hook that is Helm's `pre-install` and `pre-delete` at once is Argo CD's `PreSync` hook and
/// its `PreDelete` hook (`isHookOfType` reads `helm.sh/hook` on its own): the sync runs it and,
/// with no delete policy, leaves it; the deletion finds it live, so it does not run it again
/// (`executeHooks` creates only the hooks it does not find), judges it healthy, and the cascade
/// deletes it with its wave. Written once, deleted once.
#[test]
fn argo_uninstall_does_not_run_again_a_delete_hook_the_sync_left() {
    let Some(ns) = Ns::new("argo-hook-left") else {
        return;
    };
    let text = stream(&[
        ("app.yaml", config_map("app", "")),
        (
            "both.yaml",
            job("both", "\n    helm.sh/hook: pre-install,pre-delete"),
        ),
    ]);
    let path = ns.file("stream.yaml", &text);
    ok(ns.chartseq(&["apply", &path, "--dialect", "argo", "--release", "shop"]));
    assert!(ns.get("job", "both").is_some(), "the sync leaves it");
    let (code, out, err) = ns.chartseq(&["uninstall", "shop", "--timeout", "1m"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        format!("{out}{err}").contains("PreDelete hooks (already there): waiting for 1 resource"),
        "{out}\n{err}"
    );
    let audit = ns.audit();
    let writes = audit.count("create", "Job", "both") + audit.count("patch", "Job", "both");
    assert_eq!(writes, 1, "{audit}");
    assert_eq!(audit.count("delete", "Job", "both"), 1, "{audit}");
    assert!(ns.get("job", "both").is_none() && ns.get("configmap", "app").is_none());
}
