//! Request order, request by request, as the real API server's audit log shows it: the release record
//! before anything is applied, uninstall as the exact reverse of the plan with its delete
//! hooks around it, pruning in reverse plan order before the post hooks (Helm's order for
//! upgrade and rollback), and CRDs from `crds/` never deleted.
//!
//! `fixtures/apply/store.yaml`: group `base` (`ServiceAccount/runner`, `Secret/creds`,
//! `ConfigMap`s `beta`, `alpha`, `gamma` in that input order), group `app` after it
//! (`Service/api`, `Deployment`s `api`, `worker`), unsequenced `ConfigMap`s `notes-1`,
//! `notes-2`, and hooks for every event. `store-v2.yaml` drops `alpha`, `gamma`, `worker` and
//! both notes, and adds an unsequenced `ConfigMap/extra`.

use super::audit::Audit;
use super::{Ns, ok};
use crate::fixture;

/// The applies of one kind in one step go out together, so their arrival order is not part
/// of the contract: each run of consecutive `PATCH`es of one kind is sorted. Everything else
/// keeps the order the server saw.
fn settled(changes: Vec<String>) -> Vec<String> {
    let kind_of = |c: &str| {
        c.strip_prefix("PATCH ")
            .and_then(|o| o.split_once('/'))
            .map(|(k, _)| k.to_owned())
    };
    let mut out: Vec<String> = Vec::with_capacity(changes.len());
    let mut run_start = 0;
    for c in changes {
        let same = kind_of(&c).is_some() && out.last().is_some_and(|l| kind_of(l) == kind_of(&c));
        if !same {
            out[run_start..].sort();
            run_start = out.len();
        }
        out.push(c);
    }
    out[run_start..].sort();
    out
}

/// The resources of `chartseq plan --uninstall --format json`, in order, as `Kind/name`.
fn planned_uninstall(stream: &str) -> Vec<String> {
    let path = fixture(&format!("apply/{stream}"));
    let (code, out, err) = crate::run(crate::chartseq().args([
        "plan",
        path.to_str().expect("a UTF-8 path"),
        "--uninstall",
        "--format",
        "json",
    ]));
    assert_eq!(code, 0, "{err}");
    let plan: serde_json::Value = serde_json::from_str(&out).expect("the plan is JSON");
    plan["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .flat_map(|s| s["resources"].as_array().expect("resources").iter())
        .map(|r| {
            format!(
                "{}/{}",
                r["kind"].as_str().expect("a kind"),
                r["name"].as_str().expect("a name")
            )
        })
        .collect()
}

/// The kind of an audit log's resource name.
fn kind(resource: &str) -> &str {
    match resource {
        "secrets" => "Secret",
        "configmaps" => "ConfigMap",
        "jobs" => "Job",
        "deployments" => "Deployment",
        "services" => "Service",
        "serviceaccounts" => "ServiceAccount",
        "widgets" => "Widget",
        other => other,
    }
}

/// chartseq's successful changes (dry runs excluded) from event `from` of the namespace's
/// audit log on, in the order the server completed them, as `METHOD Kind/name` (server-side
/// applies are `PATCH`).
fn changes_since(ns: &Ns, from: usize) -> Vec<String> {
    ns.audit()
        .events
        .iter()
        .skip(from)
        .filter(|e| {
            e.user == super::audit::TEST_USER
                && !e.user_agent.starts_with("kubectl")
                && e.subresource.is_empty()
                && (200..300).contains(&e.code)
        })
        .filter_map(|e| {
            let method = match e.verb.as_str() {
                "create" => "POST",
                "update" => "PUT",
                "patch" => "PATCH",
                "delete" => "DELETE",
                _ => return None,
            };
            Some(format!("{method} {}/{}", kind(&e.resource), e.name))
        })
        .collect()
}

/// A mark for [`changes_since`]: the namespace's audit events so far.
fn mark(ns: &Ns) -> usize {
    ns.audit().events.len()
}

/// chartseq's deletes from event `from` on: each arrived after the previous one was done, so
/// the order the server saw is the order they were sent, one at a time.
fn assert_deleted_one_at_a_time(ns: &Ns, from: usize) {
    let audit: Audit = ns.audit();
    let deletes: Vec<_> = audit
        .events
        .iter()
        .skip(from)
        .filter(|e| {
            e.verb == "delete"
                && e.user == super::audit::TEST_USER
                && !e.user_agent.starts_with("kubectl")
        })
        .collect();
    for pair in deletes.windows(2) {
        assert!(
            pair[1].received >= pair[0].completed,
            "{}/{} was sent while {}/{} was still in flight:\n{audit}",
            pair[1].resource,
            pair[1].name,
            pair[0].resource,
            pair[0].name
        );
    }
}

fn store(name: &str) -> String {
    fixture(&format!("apply/{name}"))
        .to_str()
        .expect("UTF-8")
        .to_owned()
}

fn installed(test: &str) -> Option<Ns> {
    let ns = Ns::new(test)?;
    ok(ns.apply("shop", &store("store.yaml"), &[]));
    Some(ns)
}

#[test]
fn uninstall_deletes_in_the_exact_reverse_of_the_plan_between_its_delete_hooks() {
    let Some(env) = installed("ordunins") else {
        return;
    };
    let from = mark(&env);
    ok(env.chartseq(&["uninstall", "shop"]));
    let changes = changes_since(&env, from);
    assert_eq!(
        changes,
        [
            // The revision is marked first, so an interrupted uninstall is visible.
            "PUT Secret/sh.helm.release.v1.shop.v1",
            // pre-delete hooks by weight: backup (-1), then mark (5; no policy, so it stays
            // for now); hook-succeeded deletes backup once every pre-delete hook succeeded,
            // as Helm does.
            "PATCH Job/backup",
            "PATCH ConfigMap/mark",
            "DELETE Job/backup",
            // The plan in exact reverse: the unsequenced step, app, base, and inside each
            // step the resources reversed (kinds reversed, input order reversed).
            "DELETE ConfigMap/notes-2",
            "DELETE ConfigMap/notes-1",
            "DELETE Deployment/worker",
            "DELETE Deployment/api",
            "DELETE Service/api",
            "DELETE ConfigMap/gamma",
            "DELETE ConfigMap/alpha",
            "DELETE ConfigMap/beta",
            "DELETE Secret/creds",
            "DELETE ServiceAccount/runner",
            // post-delete hooks, after everything is gone.
            "PATCH Job/report",
            "DELETE Job/report",
            // Hook objects their policies left behind, then the release's revisions.
            "DELETE ConfigMap/mark",
            "DELETE Secret/sh.helm.release.v1.shop.v1",
        ],
        "{changes:#?}"
    );
    // The same order `chartseq plan --uninstall` prints.
    let hooks = ["Job/backup", "Job/report", "ConfigMap/mark"];
    let deleted: Vec<String> = changes
        .iter()
        .filter_map(|c| c.strip_prefix("DELETE "))
        .filter(|o| !o.starts_with("Secret/sh.helm.release.") && !hooks.contains(o))
        .map(str::to_owned)
        .collect();
    assert_eq!(deleted, planned_uninstall("store.yaml"));
    assert_deleted_one_at_a_time(&env, from);
    let left = ok(env.kubectl(&[
        "get",
        "deployments,jobs,services,configmaps,secrets,serviceaccounts",
        "-o",
        "name",
    ]));
    let left: Vec<&str> = left
        .lines()
        .filter(|n| !matches!(*n, "configmap/kube-root-ca.crt" | "serviceaccount/default"))
        .collect();
    assert_eq!(left, Vec::<&str>::new());
}

#[test]
fn the_release_record_is_written_pending_before_anything_is_applied() {
    let Some(env) = Ns::new("ordrecord") else {
        return;
    };
    // What the server stores at each moment, as a watch of the namespace's Secrets sees it.
    let watch = std::process::Command::new(&env.kubectl)
        .args([
            "get",
            "secrets",
            "--watch",
            "-o",
            "json",
            "-n",
            &env.name,
            "--kubeconfig",
        ])
        .arg(&env.cluster.kubeconfig)
        .env_remove("KUBECONFIG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("kubectl watches");
    // The watch is open once kubectl has listed: give it a moment.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    ok(env.apply("shop", &store("store.yaml"), &[]));
    let changes = changes_since(&env, 0);
    assert_eq!(
        changes.first().map(String::as_str),
        Some("POST Secret/sh.helm.release.v1.shop.v1"),
        "{changes:#?}"
    );

    // An upgrade: its pending revision before its first apply too.
    let from = mark(&env);
    ok(env.apply("shop", &store("store-v2.yaml"), &[]));
    let changes = changes_since(&env, from);
    assert_eq!(
        changes.first().map(String::as_str),
        Some("POST Secret/sh.helm.release.v1.shop.v2"),
        "{changes:#?}"
    );
    let mut watch = watch;
    let _ = watch.kill();
    let output = watch.wait_with_output().expect("kubectl ends");
    // kubectl prints one JSON object after another.
    let text = String::from_utf8_lossy(&output.stdout);
    let seen: Vec<serde_json::Value> = serde_json::Deserializer::from_str(&text)
        .into_iter::<serde_json::Value>()
        .filter_map(Result::ok)
        .collect();
    let statuses = |name: &str| -> Vec<String> {
        seen.iter()
            .filter(|o| o["metadata"]["name"] == name)
            .map(|o| {
                o["metadata"]["labels"]["status"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect()
    };
    // What the server stored first: a pending revision, then the final status.
    let v1 = statuses("sh.helm.release.v1.shop.v1");
    assert_eq!(
        v1.first().map(String::as_str),
        Some("pending-install"),
        "{v1:?}"
    );
    let v2 = statuses("sh.helm.release.v1.shop.v2");
    assert_eq!(
        v2.first().map(String::as_str),
        Some("pending-upgrade"),
        "{v2:?}"
    );
    assert_eq!(v2.last().map(String::as_str), Some("deployed"), "{v2:?}");
}

#[test]
fn an_upgrade_prunes_in_reverse_plan_order_after_the_plan_and_before_post_upgrade_hooks() {
    let Some(env) = installed("ordupgrade") else {
        return;
    };
    let from = mark(&env);
    ok(env.apply("shop", &store("store-v2.yaml"), &[]));
    let changes = settled(changes_since(&env, from));
    assert_eq!(
        changes,
        [
            "POST Secret/sh.helm.release.v1.shop.v2",
            // The new plan: base, app, the unsequenced step.
            "PATCH ServiceAccount/runner",
            "PATCH Secret/creds",
            "PATCH ConfigMap/beta",
            "PATCH Service/api",
            "PATCH Deployment/api",
            "PATCH ConfigMap/extra",
            // What left the chart, in reverse plan order, as Helm prunes: before the
            // post-upgrade hooks.
            "DELETE ConfigMap/notes-2",
            "DELETE ConfigMap/notes-1",
            "DELETE Deployment/worker",
            "DELETE ConfigMap/gamma",
            "DELETE ConfigMap/alpha",
            "PATCH Job/announce",
            "DELETE Job/announce",
            // Recorded deployed, the previous revision superseded.
            "PUT Secret/sh.helm.release.v1.shop.v2",
            "PUT Secret/sh.helm.release.v1.shop.v1",
        ],
        "{changes:#?}"
    );
    assert_deleted_one_at_a_time(&env, from);
}

#[test]
fn a_rollback_runs_its_hooks_around_the_plan_and_prunes_before_post_rollback_hooks() {
    let Some(env) = installed("ordrollback") else {
        return;
    };
    ok(env.apply("shop", &store("store-v2.yaml"), &[]));
    let from = mark(&env);
    ok(env.chartseq(&["rollback", "shop", "1"]));
    let changes = settled(changes_since(&env, from));
    assert_eq!(
        changes,
        [
            "POST Secret/sh.helm.release.v1.shop.v3",
            // pre-rollback: snapshot, deleted once it succeeded (hook-succeeded).
            "PATCH Job/snapshot",
            "DELETE Job/snapshot",
            // Revision 1's plan, every resource back.
            "PATCH ServiceAccount/runner",
            "PATCH Secret/creds",
            "PATCH ConfigMap/alpha",
            "PATCH ConfigMap/beta",
            "PATCH ConfigMap/gamma",
            "PATCH Service/api",
            "PATCH Deployment/api",
            "PATCH Deployment/worker",
            "PATCH ConfigMap/notes-1",
            "PATCH ConfigMap/notes-2",
            // What revision 2 had and revision 1 has not, before the post-rollback hooks.
            "DELETE ConfigMap/extra",
            // post-rollback: check has no policy (before-hook-creation), so it stays.
            "PATCH Job/check",
            // As Helm: the deployed revision superseded, then the rollback recorded deployed.
            "PUT Secret/sh.helm.release.v1.shop.v2",
            "PUT Secret/sh.helm.release.v1.shop.v3",
        ],
        "{changes:#?}"
    );
    assert!(env.get("job", "check").is_some());

    // A second rollback re-creates the post-rollback hook: the old one is deleted first.
    let from = mark(&env);
    ok(env.chartseq(&["rollback", "shop", "2"]));
    let changes = changes_since(&env, from);
    let at = |c: &str| {
        changes
            .iter()
            .position(|x| x == c)
            .unwrap_or_else(|| panic!("no {c} in {changes:#?}"))
    };
    assert!(
        at("DELETE Job/check") < at("PATCH Job/check"),
        "{changes:#?}"
    );
    assert!(at("DELETE ConfigMap/notes-1") < at("PATCH Job/check"));

    // Uninstall removes the hook objects left behind last, in reverse hook order (check,
    // weight 0, ran before mark, weight 5), then every revision.
    let from = mark(&env);
    ok(env.chartseq(&["uninstall", "shop"]));
    let changes = changes_since(&env, from);
    let tail: Vec<&str> = changes
        .iter()
        .skip_while(|c| *c != "DELETE Job/report")
        .map(String::as_str)
        .collect();
    assert_eq!(
        tail,
        [
            "DELETE Job/report",
            "DELETE ConfigMap/mark",
            "DELETE Job/check",
            "DELETE Secret/sh.helm.release.v1.shop.v1",
            "DELETE Secret/sh.helm.release.v1.shop.v2",
            "DELETE Secret/sh.helm.release.v1.shop.v3",
            "DELETE Secret/sh.helm.release.v1.shop.v4",
        ],
        "{changes:#?}"
    );
}

#[test]
fn crds_from_the_crds_directory_are_kept_on_uninstall() {
    let Some(env) = Ns::new("ordcrds") else {
        return;
    };
    // The CRD's group made this test's own (CRDs are cluster-scoped; tests run side by side).
    let group = format!("{}.example.com", env.name);
    let crd = format!("widgets.{group}");
    env.owns("customresourcedefinition", &crd);
    let text = std::fs::read_to_string(fixture("apply/widgets.yaml"))
        .expect("the fixture")
        .replace("widgets.example.com", &crd)
        .replace("group: example.com", &format!("group: {group}"))
        .replace(
            "apiVersion: example.com/v1",
            &format!("apiVersion: {group}/v1"),
        )
        // No controller writes the Widget's status: this test is about order, not readiness.
        .lines()
        .filter(|l| !l.contains("helm.sh/readiness-"))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    assert!(!text.contains("readiness-success"), "{text}");
    let path = env.file("widgets.yaml", &text);
    ok(env.apply("shop", &path, &["--timeout", "1m"]));
    let from = mark(&env);
    ok(env.chartseq(&["uninstall", "shop"]));
    let changes = changes_since(&env, from);
    assert_eq!(
        changes,
        [
            "PUT Secret/sh.helm.release.v1.shop.v1",
            "DELETE ConfigMap/consumer",
            "DELETE Widget/w",
            "DELETE Secret/sh.helm.release.v1.shop.v1",
        ],
        "{changes:#?}"
    );
    let (code, _, _) = env.kubectl(&["get", "crd", &crd]);
    assert_eq!(code, 0, "the CRD is still there");
}
