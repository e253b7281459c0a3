//! `rollback` after failed and interrupted upgrades is Helm's rollback, on the real control
//! plane: on two identical copies
//! of a release's history, `chartseq rollback` on one and real helm 4.1.4's `helm rollback` on
//! the other pick the same revision, leave every revision with the same status and
//! description, and leave the same objects behind.

use std::path::Path;

use super::{Ns, ok};
use crate::{fixture, tool};

/// One run of `chartseq apply` in a history: its `--set` values and whether it succeeds.
type Run = (&'static [&'static str], bool);

const WEB1: Run = (&["image=web:1"], true);
const WEB2: Run = (&["image=web:2"], true);
const WEB3: Run = (&["image=web:3"], true);
/// An upgrade that adds the cache object.
const WEB2_CACHE: Run = (&["image=web:2", "cache=true"], true);
const WEB4_CACHE: Run = (&["image=web:4", "cache=true"], true);
/// An upgrade the API server refuses part way (an invalid label value).
const REFUSED: Run = (&["image=web:2", "cache=true", "tier=not valid!"], false);

/// Runs `runs` with chartseq (revision 1 first; `set` added to each), then rewrites the stored
/// statuses as a failed or killed run leaves them: `(revision, status)`.
fn history(set: &[&str], helm: &Path, runs: &[Run], statuses: &[(u32, &str)]) -> Ns {
    let env = Ns::new("rollback").expect("a namespace (helm is there, so is kubectl)");
    let chart = fixture("apply/restore");
    let chart = chart.to_str().expect("a UTF-8 path");
    let helm = helm.to_str().expect("a UTF-8 path");
    for (values, succeeds) in runs {
        let mut args = vec!["apply", "shop", chart, "--helm", helm, "--timeout", "1m"];
        for v in set {
            args.extend(["--set", v]);
        }
        if !succeeds {
            // A run made to fail at the API server (a label value it refuses), not at the
            // lint gate that would stop it first (CS204).
            args.push("--no-lint");
        }
        for v in *values {
            args.extend(["--set", v]);
        }
        let (code, out, err) = env.chartseq(&args);
        assert_eq!(code == 0, *succeeds, "{values:?}: {out}\n{err}");
    }
    for &(revision, status) in statuses {
        let description = match status {
            "failed" => Some("Upgrade \"shop\" failed: context deadline exceeded"),
            "pending-upgrade" => Some("Preparing upgrade"),
            _ => None,
        };
        env.set_status("shop", revision, status, description);
    }
    env
}

/// The third revision's description starts with `prefix` in every copy.
fn third_described_as(envs: &[&Ns], prefix: &str) {
    for env in envs {
        assert!(
            revisions(env)[2].2.starts_with(prefix),
            "{:?}",
            revisions(env)
        );
    }
}

/// Every stored revision: number, status, description (its namespace spelled `NAMESPACE`).
fn revisions(env: &Ns) -> Vec<(u32, String, String)> {
    (1..=12)
        .filter_map(|v| env.stored_release("Secret", "shop", v))
        .map(|(_, r)| {
            (
                u32::try_from(r["version"].as_u64().expect("a version")).expect("small"),
                r["info"]["status"].as_str().unwrap_or_default().to_owned(),
                // The copies' namespaces differ; their descriptions otherwise agree.
                r["info"]["description"]
                    .as_str()
                    .unwrap_or_default()
                    .replace(&env.name, "NAMESPACE"),
            )
        })
        .collect()
}

/// The release's objects (the chart renders Deployments and `ConfigMap`s; the namespace's own
/// CA bundle aside) and the app's image.
fn objects(env: &Ns) -> (Vec<String>, String) {
    let out = ok(env.kubectl(&["get", "deployments,configmaps", "-o", "name"]));
    let mut names: Vec<String> = out
        .lines()
        .filter(|n| *n != "configmap/kube-root-ca.crt")
        .map(str::to_owned)
        .collect();
    names.sort();
    let image = env.get("deployment", "shop-app").expect("the app")["spec"]["template"]["spec"]
        ["containers"][0]["image"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    (names, image)
}

/// Every stored revision: number and status.
fn statuses(env: &Ns) -> Vec<(u32, String)> {
    revisions(env).into_iter().map(|(v, s, _)| (v, s)).collect()
}

fn expect(list: &[(u32, &str)]) -> Vec<(u32, String)> {
    list.iter().map(|&(v, s)| (v, s.to_owned())).collect()
}

/// Two identical copies of a history, for chartseq and for helm.
fn copies(
    set: &[&str],
    runs: &[Run],
    statuses: &[(u32, &str)],
) -> Option<(std::path::PathBuf, Ns, Ns)> {
    let helm = tool("helm")?;
    tool("kubectl")?;
    super::cluster()?;
    let ours = history(set, &helm, runs, statuses);
    let theirs = history(set, &helm, runs, statuses);
    assert_eq!(revisions(&ours), revisions(&theirs), "identical histories");
    Some((helm, ours, theirs))
}

/// `chartseq rollback shop ARGS` on one copy and `helm rollback shop ARGS` on the other:
/// (chartseq's exit code and output, helm's).
fn roll_back(helm: &Path, ours: &Ns, theirs: &Ns, args: &[&str]) -> ((i32, String), (i32, String)) {
    roll_back_with(helm, ours, theirs, args, &[], &[])
}

/// [`roll_back`] with flags for chartseq alone and for helm alone.
fn roll_back_with(
    helm: &Path,
    ours: &Ns,
    theirs: &Ns,
    args: &[&str],
    chartseq_flags: &[&str],
    helm_flags: &[&str],
) -> ((i32, String), (i32, String)) {
    let mut command = vec!["rollback", "shop"];
    command.extend_from_slice(args);
    let mut chartseq_args = command.clone();
    chartseq_args.extend_from_slice(chartseq_flags);
    command.extend_from_slice(helm_flags);
    let (code, out, err) = ours.chartseq(&chartseq_args);
    let chartseq = (code, format!("{out}\n{err}"));
    let (code, out, err) = theirs.helm(helm, "", &command);
    (chartseq, (code, format!("{out}\n{err}")))
}

/// Rolls back both copies; both must succeed and agree on every revision and object. The
/// chartseq copy.
fn both_roll_back(runs: &[Run], statuses: &[(u32, &str)], args: &[&str]) -> Option<Ns> {
    let (helm, ours, theirs) = copies(&[], runs, statuses)?;
    let ((code, out), (helm_code, helm_out)) = roll_back(&helm, &ours, &theirs, args);
    assert_eq!(code, 0, "chartseq: {out}");
    assert_eq!(helm_code, 0, "helm: {helm_out}");
    assert!(helm_out.contains("Rollback was a success!"), "{helm_out}");
    assert_eq!(revisions(&ours), revisions(&theirs));
    assert_eq!(objects(&ours), objects(&theirs));
    Some(ours)
}

const NO_CACHE: [&str; 1] = ["deployment.apps/shop-app"];

#[test]
fn after_a_failed_upgrade_rollback_returns_to_the_revision_before_it_as_helm_does() {
    let Some(env) = both_roll_back(&[WEB1, WEB2_CACHE], &[(1, "deployed"), (2, "failed")], &[])
    else {
        return;
    };
    assert_eq!(
        statuses(&env),
        expect(&[(1, "superseded"), (2, "failed"), (3, "deployed")])
    );
    assert_eq!(revisions(&env)[2].2, "Rollback to 1");
    // The failed upgrade's image is gone, and so is the object it added.
    assert_eq!(
        objects(&env),
        (NO_CACHE.map(str::to_owned).to_vec(), "web:1".to_owned())
    );
}

#[test]
fn after_a_killed_upgrade_rollback_returns_to_the_revision_before_it_as_helm_does() {
    let Some(env) = both_roll_back(
        &[WEB1, WEB2_CACHE],
        &[(1, "deployed"), (2, "pending-upgrade")],
        &[],
    ) else {
        return;
    };
    // Helm leaves the killed run's revision as it was: only `deployed` ones are superseded.
    assert_eq!(
        statuses(&env),
        expect(&[(1, "superseded"), (2, "pending-upgrade"), (3, "deployed")])
    );
    assert_eq!(
        objects(&env),
        (NO_CACHE.map(str::to_owned).to_vec(), "web:1".to_owned())
    );
    // The release is no longer locked: the next upgrade runs.
    let chart = fixture("apply/restore");
    let out = ok(env.chartseq(&[
        "apply",
        "shop",
        chart.to_str().expect("UTF-8"),
        "--helm",
        tool("helm").expect("helm").to_str().expect("UTF-8"),
    ]));
    assert!(out.contains("revision 4, status deployed"), "{out}");
}

#[test]
fn rollback_after_a_failure_with_a_longer_history_goes_back_one_revision_as_helm_does() {
    let runs = [WEB1, WEB2, WEB3, WEB4_CACHE];
    let failed = [(3, "deployed"), (4, "failed")];
    let Some(env) = both_roll_back(&runs, &failed, &[]) else {
        return;
    };
    // Revision 3, not 2: the revision before the newest, not before the last deployed.
    assert_eq!(revisions(&env)[4].2, "Rollback to 3");
    assert_eq!(
        statuses(&env),
        expect(&[
            (1, "superseded"),
            (2, "superseded"),
            (3, "superseded"),
            (4, "failed"),
            (5, "deployed")
        ])
    );
    assert_eq!(
        objects(&env),
        (NO_CACHE.map(str::to_owned).to_vec(), "web:3".to_owned())
    );
    // A revision named explicitly is taken as it is.
    let Some(env) = both_roll_back(&runs, &failed, &["1"]) else {
        return;
    };
    assert_eq!(revisions(&env)[4].2, "Rollback to 1");
    assert_eq!(objects(&env).1, "web:1");
}

#[test]
fn with_no_revision_before_the_newest_both_refuse_and_record_nothing() {
    let Some((helm, ours, theirs)) = copies(&[], &[WEB1], &[]) else {
        return;
    };
    let ((code, out), (helm_code, helm_out)) = roll_back(&helm, &ours, &theirs, &[]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("release shop has no revision 0 (the one before the newest, 1) to roll back to; stored revisions: 1"),
        "{out}"
    );
    assert_eq!(helm_code, 1, "{helm_out}");
    assert!(helm_out.contains("release has no 0 version"), "{helm_out}");
    assert_eq!(revisions(&ours), revisions(&theirs));
    assert_eq!(statuses(&ours), expect(&[(1, "deployed")]));
}

#[test]
fn a_rollback_that_fails_to_apply_supersedes_the_newest_revision_as_helm_does() {
    let Some((helm, ours, theirs)) = copies(&[], &[WEB1, REFUSED], &[]) else {
        return;
    };
    assert_eq!(statuses(&ours), expect(&[(1, "deployed"), (2, "failed")]));
    // Back to the revision the API server refuses: applying it fails again.
    let ((code, out), (helm_code, helm_out)) = roll_back(&helm, &ours, &theirs, &["2"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("shop-cache"), "{out}");
    assert_eq!(helm_code, 1, "{helm_out}");
    assert_eq!(statuses(&ours), statuses(&theirs));
    assert_eq!(
        statuses(&ours),
        expect(&[(1, "deployed"), (2, "superseded"), (3, "failed")])
    );
    third_described_as(&[&ours, &theirs], "Rollback \"shop\" failed: ");
}

#[test]
fn a_rollback_whose_objects_never_become_ready_leaves_the_newest_revision_as_helm_does() {
    // Each new pod of the app takes 1.5 s to become ready (kwok's pod stage): the history's
    // runs wait for it, the rollbacks give up after 500 ms (helm: `--wait --timeout 500ms`).
    let Some((helm, ours, theirs)) = copies(
        &["readyAfter=1500ms"],
        &[WEB1, WEB2_CACHE],
        &[(1, "deployed"), (2, "failed")],
    ) else {
        return;
    };
    let ((code, out), (helm_code, helm_out)) = roll_back_with(
        &helm,
        &ours,
        &theirs,
        &[],
        &["--readiness-timeout", "500ms", "--timeout", "500ms"],
        &["--wait", "--timeout", "500ms"],
    );
    assert_eq!(code, 1, "{out}");
    assert_eq!(helm_code, 1, "{helm_out}");
    assert_eq!(statuses(&ours), statuses(&theirs));
    // The newest revision keeps its status; the rollback's own revision failed waiting.
    assert_eq!(
        statuses(&ours),
        expect(&[(1, "deployed"), (2, "failed"), (3, "failed")])
    );
    third_described_as(&[&ours, &theirs], "Release \"shop\" failed: ");
}

#[test]
fn a_failed_rollback_hook_records_the_rollback_failed_and_leaves_the_rest() {
    // Helm leaves the revision `pending-rollback` when a rollback hook fails, which blocks
    // every later upgrade; chartseq records it failed. The other revisions are untouched, as
    // in Helm: nothing was applied.
    let Some(env) = Ns::new("rbhook") else { return };
    // The pre-rollback hook's pod fails (an image kwok fails), and its Job gives up at once.
    let store = |name: &str| {
        let text = std::fs::read_to_string(fixture(&format!("apply/{name}"))).expect("the fixture");
        let failing = text.replace(
            "  name: snapshot\n  annotations:\n    helm.sh/hook: pre-rollback\n    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: j, image: busybox}]",
            "  name: snapshot\n  annotations:\n    helm.sh/hook: pre-rollback\n    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded\nspec:\n  backoffLimit: 0\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: j, image: chartseq.invalid/fail:1}]",
        );
        assert_ne!(failing, text, "{name} has the snapshot hook");
        env.file(name, &failing)
    };
    let (v1, v2) = (store("store.yaml"), store("store-v2.yaml"));
    for stream in [&v1, &v2] {
        ok(env.apply("shop", stream, &["--timeout", "1m"]));
    }
    let (code, out, err) = env.chartseq(&["rollback", "shop", "--timeout", "1m"]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert_eq!(
        statuses(&env),
        expect(&[(1, "superseded"), (2, "deployed"), (3, "failed")])
    );
    let failed = &revisions(&env)[2].2;
    assert!(failed.starts_with("Rollback \"shop\" failed: "), "{failed}");
    assert!(
        env.get("configmap", "extra").is_some(),
        "revision 2's objects stay"
    );
    // The release is not locked.
    ok(env.apply("shop", &v1, &["--timeout", "1m"]));
}
