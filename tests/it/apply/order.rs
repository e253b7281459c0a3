//! Request order, request by request, as the test API server saw it: the release record
//! before anything is applied, uninstall as the exact reverse of the plan with its delete
//! hooks around it, pruning in reverse plan order before the post hooks (Helm's order for
//! upgrade and rollback), and CRDs from `crds/` never deleted.
//!
//! `fixtures/apply/store.yaml`: group `base` (`ServiceAccount/runner`, `Secret/creds`,
//! `ConfigMap`s `beta`, `alpha`, `gamma` in that input order), group `app` after it
//! (`Service/api`, `Deployment`s `api`, `worker`), unsequenced `ConfigMap`s `notes-1`,
//! `notes-2`, and hooks for every event. `store-v2.yaml` drops `alpha`, `gamma`, `worker` and
//! both notes, and adds an unsequenced `ConfigMap/extra`.

use super::support::{Env, start};
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

fn ok(result: (i32, String, String)) -> String {
    let (code, out, err) = result;
    assert_eq!(code, 0, "{out}\n{err}");
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

/// Every `DELETE` from request `from` on arrived after the previous one was answered: the
/// order the server saw is the order they were sent, one at a time.
fn assert_deleted_one_at_a_time(env: &Env, from: usize) {
    let deletes: Vec<_> = env
        .requests()
        .into_iter()
        .skip(from)
        .filter(|r| r.method == "DELETE")
        .collect();
    for pair in deletes.windows(2) {
        let answered = pair[0].answer.expect("every delete is answered");
        assert!(
            pair[1].answered_before >= answered,
            "{} was sent while {} was still in flight",
            pair[1].object(),
            pair[0].object()
        );
    }
}

fn installed(scenario: &str) -> Env {
    let env = start(scenario);
    ok(env.apply("store.yaml", &[]));
    env
}

#[test]
fn uninstall_deletes_in_the_exact_reverse_of_the_plan_between_its_delete_hooks() {
    // Some latency on every answer: requests sent together overlap at the server.
    let env = installed("faults: {slowMs: 10}\n");
    let from = env.mark();
    ok(env.run(&["uninstall", "shop", "-n", "default"]));
    let changes = env.changes_since(from);
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
    assert_eq!(env.leftovers(), Vec::<String>::new());
}

#[test]
fn the_release_record_is_written_pending_before_anything_is_applied() {
    let env = start("");
    ok(env.apply("store.yaml", &[]));
    let changes = env.changes_since(0);
    assert_eq!(
        changes.first().map(String::as_str),
        Some("POST Secret/sh.helm.release.v1.shop.v1"),
        "{changes:#?}"
    );
    // What the server stored at that moment: a pending revision, before any other object.
    let events = env.server.server.events();
    let first = events
        .iter()
        .find(|e| e.kind == "ADDED" && e.namespace.as_deref() == Some("default"))
        .expect("something was created");
    assert_eq!(
        first.object["metadata"]["name"], "sh.helm.release.v1.shop.v1",
        "{:#?}",
        first.object
    );
    assert_eq!(
        first.object["metadata"]["labels"]["status"], "pending-install",
        "{:#?}",
        first.object["metadata"]
    );

    // An upgrade: its pending revision before its first apply too.
    let from = env.mark();
    ok(env.apply("store-v2.yaml", &[]));
    let changes = env.changes_since(from);
    assert_eq!(
        changes.first().map(String::as_str),
        Some("POST Secret/sh.helm.release.v1.shop.v2"),
        "{changes:#?}"
    );
    let v2 = events_of(&env, "sh.helm.release.v1.shop.v2");
    assert_eq!(
        v2.first().map(String::as_str),
        Some("pending-upgrade"),
        "{v2:?}"
    );
    assert_eq!(v2.last().map(String::as_str), Some("deployed"), "{v2:?}");
}

/// The `status` label of every stored version of a release Secret, oldest first.
fn events_of(env: &Env, secret: &str) -> Vec<String> {
    env.server
        .server
        .events()
        .iter()
        .filter(|e| e.object["kind"] == "Secret" && e.object["metadata"]["name"] == secret)
        .map(|e| {
            e.object["metadata"]["labels"]["status"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

#[test]
fn an_upgrade_prunes_in_reverse_plan_order_after_the_plan_and_before_post_upgrade_hooks() {
    let env = installed("faults: {slowMs: 10}\n");
    let from = env.mark();
    ok(env.apply("store-v2.yaml", &[]));
    let changes = settled(env.changes_since(from));
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
    let env = installed("");
    ok(env.apply("store-v2.yaml", &[]));
    let from = env.mark();
    ok(env.run(&["rollback", "shop", "1", "-n", "default"]));
    let changes = settled(env.changes_since(from));
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
    assert!(env.exists("Job", "check"));

    // A second rollback re-creates the post-rollback hook: the old one is deleted first.
    let from = env.mark();
    ok(env.run(&["rollback", "shop", "2", "-n", "default"]));
    let changes = env.changes_since(from);
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
    let from = env.mark();
    ok(env.run(&["uninstall", "shop", "-n", "default"]));
    let changes = env.changes_since(from);
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
    let env = start(
        "resources:\n- kind: Widget\n  name: w\n  status: [{afterMs: 50, value: {phase: Ready}}]\n",
    );
    let path = fixture("apply/widgets.yaml");
    ok(env.run(&[
        "apply",
        path.to_str().expect("a UTF-8 path"),
        "--release",
        "shop",
    ]));
    let from = env.mark();
    ok(env.run(&["uninstall", "shop", "-n", "default"]));
    let changes = env.changes_since(from);
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
    assert!(
        env.server
            .server
            .object("CustomResourceDefinition", None, "widgets.example.com")
            .is_some(),
        "the CRD is still there"
    );
}
