//! The deployer's input limits on the real control plane: durations bounded by Go's largest,
//! object names and namespaces checked as the API server checks them before any request (the
//! fault proxy, forwarding without faults, counts every request), and an unreadable revision
//! in a release's own history stepped over.

use super::faults::Proxy;
use super::{Ns, ok};
use crate::{chartseq, run};

/// A value Go's `time.ParseDuration` refuses as too large: a flag error (exit 2) naming the
/// flag, never a panic, and nothing sent to the server.
#[test]
fn a_huge_timeout_is_refused_cleanly_by_every_command() {
    let Some(env) = Ns::new("hugetimeout") else {
        return;
    };
    let proxy = Proxy::start(&env, &[]);
    let shop = crate::fixture("apply/shop.yaml");
    let shop = shop.to_str().expect("a UTF-8 path");
    let huge = "99999999999999999999h";
    for flag in ["--timeout", "--readiness-timeout"] {
        for args in [
            vec!["apply", shop, "--release", "shop", flag, huge],
            vec!["rollback", "shop", "1", flag, huge],
            vec!["uninstall", "shop", flag, huge],
        ] {
            let (code, _, err) = proxy.chartseq(&env, &args);
            assert_eq!(code, 2, "{args:?}: {err}");
            assert!(
                err.contains(flag) && err.contains("largest duration"),
                "{args:?}: {err}"
            );
            assert!(!err.contains("panicked"), "{args:?}: {err}");
        }
        let (code, _, err) = run(chartseq().args(["lint", shop, flag, huge]));
        assert_eq!(code, 2, "lint {flag}: {err}");
        assert!(
            err.contains(flag) && err.contains("largest duration"),
            "lint {flag}: {err}"
        );
    }
    let stats = proxy.stats();
    assert_eq!(stats["requests"], 0, "{stats}");
}

/// Go's largest duration itself is accepted by every command; the bare number `45` is 45
/// seconds for each of them alike.
#[test]
fn durations_read_alike_in_apply_and_lint() {
    let shop = crate::fixture("apply/shop.yaml");
    let shop = shop.to_str().expect("a UTF-8 path");
    for value in ["2562047h47m16.854775807s", "45", "1h2m3.5s"] {
        let (code, _, err) = run(chartseq().args([
            "lint",
            shop,
            "--timeout",
            value,
            "--readiness-timeout",
            "1s",
        ]));
        assert!(code != 2, "lint --timeout {value}: {err}");
    }
    let Some(env) = Ns::new("durations") else {
        return;
    };
    ok(env.apply("shop", shop, &["--timeout", "45", "--dry-run"]));
}

/// Helm's encoding of a release text: base64 of gzip.
fn gzipped(bytes: &[u8]) -> String {
    use base64::Engine as _;
    use std::io::Write as _;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).expect("compresses");
    base64::engine::general_purpose::STANDARD.encode(gz.finish().expect("compresses"))
}

/// Stores a release Secret as another client would: `text` is the release text (a Secret's
/// data is its base64); `None` stores no `release` key.
fn release_secret(env: &Ns, release: &str, revision: u32, text: Option<&str>) {
    use base64::Engine as _;
    let name = format!("sh.helm.release.v1.{release}.v{revision}");
    let mut body = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "labels": {
            "owner": "helm", "name": release, "status": "deployed", "version": revision.to_string()}},
        "type": "helm.sh/release.v1",
        "data": {},
    });
    if let Some(text) = text {
        body["data"]["release"] =
            serde_json::json!(base64::engine::general_purpose::STANDARD.encode(text));
    }
    env.create_as("kubectl", &body.to_string());
}

fn release_json(value: &serde_json::Value) -> String {
    gzipped(value.to_string().as_bytes())
}

/// A name or namespace that would change a request's path (`/`, `..`, `?`) or that the API
/// server refuses is refused before any request, naming the object and its template.
#[test]
fn names_and_namespaces_are_checked_before_any_request() {
    let good = "---\n# Source: shop/templates/ok.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n";
    for (object, shown) in [
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg/../../secrets/topsecret\n",
            "invalid name \"cfg/../../secrets/topsecret\" for a ConfigMap (from shop/templates/evil.yaml",
        ),
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"x?y=/configmaps/victim\"\n",
            "invalid name \"x?y=/configmaps/victim\" for a ConfigMap",
        ),
        (
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: \"x?y=/configmaps/victim\"\n",
            "invalid namespace \"x?y=/configmaps/victim\" for ConfigMap \"x\"",
        ),
        (
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: ..\n",
            "invalid name \"..\" for a Secret",
        ),
        (
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: 1web\n",
            "RFC 1035 label",
        ),
        (
            "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: a%2Fb\n",
            "may not contain '%'",
        ),
    ] {
        let Some(env) = Ns::new("evilnames") else {
            return;
        };
        let proxy = Proxy::start(&env, &[]);
        let stream = env.file(
            "evil.yaml",
            &format!("{good}---\n# Source: shop/templates/evil.yaml\n{object}"),
        );
        for extra in [&[][..], &["--dry-run"], &["--dry-run", "--diff"]] {
            let mut args = vec!["apply", "shop", &stream, "--no-lint"];
            args.extend_from_slice(extra);
            let (code, out, err) = proxy.chartseq(&env, &args);
            assert_eq!(code, 2, "{object}\n{out}\n{err}");
            assert!(err.contains(shown), "{object}\n{err}");
            assert!(err.contains("nothing was sent"), "{err}");
        }
        let stats = proxy.stats();
        assert_eq!(stats["requests"], 0, "{stats}");
    }
    // The release namespace, for every command.
    let Some(env) = Ns::new("evilns") else {
        return;
    };
    let proxy = Proxy::start(&env, &[]);
    let shop = crate::fixture("apply/shop.yaml");
    let shop = shop.to_str().expect("a UTF-8 path");
    for args in [
        vec!["apply", shop, "--release", "shop"],
        vec!["uninstall", "shop"],
        vec!["rollback", "shop", "1"],
        vec!["list"],
        vec!["history", "shop"],
        vec!["status", "shop"],
    ] {
        for ns in ["a/b", "..", "x?y=/z", "Default"] {
            let mut args = args.clone();
            args.extend(["-n", ns, "--kubeconfig", proxy.kubeconfig()]);
            let (code, _, err) = run(chartseq().args(&args));
            assert_eq!(code, 2, "{args:?}: {err}");
            assert!(err.contains("invalid namespace"), "{args:?}: {err}");
        }
    }
    let stats = proxy.stats();
    assert_eq!(stats["requests"], 0, "{stats}");
}

/// A stored revision whose objects have such names (written by another client) is refused by
/// uninstall and rollback before they change anything.
#[test]
fn stored_revisions_with_unsendable_names_are_refused_before_any_change() {
    let Some(env) = Ns::new("evilstored") else {
        return;
    };
    let proxy = Proxy::start(&env, &[]);
    let release = serde_json::json!({"name": "evil", "namespace": env.name, "version": 1,
        "info": {"status": "deployed"},
        "manifest": "---\n# Source: evil/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg/../../secrets/topsecret\n"});
    release_secret(&env, "evil", 1, Some(&release_json(&release)));
    for args in [&["uninstall", "evil"][..], &["rollback", "evil", "1"]] {
        let (code, out, err) = proxy.chartseq(&env, args);
        assert_eq!(code, 2, "{args:?}\n{out}\n{err}");
        assert!(
            err.contains("invalid name \"cfg/../../secrets/topsecret\" for a ConfigMap (from evil/templates/cm.yaml)"),
            "{err}"
        );
    }
    assert_eq!(env.audit().chartseq_changes(), Vec::<String>::new());
    let stats = proxy.stats();
    assert!(!stats.to_string().contains("topsecret"), "{stats}");
}

/// An unreadable revision in a release's own history is named and stepped over: the upgrade
/// runs and its revision follows the unreadable one instead of colliding with it.
#[test]
fn an_upgrade_steps_over_an_unreadable_revision() {
    let Some(env) = Ns::new("unreadable") else {
        return;
    };
    let shop = crate::fixture("apply/shop.yaml");
    let shop = shop.to_str().expect("a UTF-8 path");
    ok(env.apply("shop", shop, &[]));
    release_secret(&env, "shop", 2, Some(&gzipped(b"{not json")));
    let (code, out, err) = env.apply("shop", shop, &[]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        err.contains(&format!("warning: skipped the unreadable release record Secret {}/sh.helm.release.v1.shop.v2: not a release", env.name)),
        "{err}"
    );
    assert!(out.contains("revision 3, status deployed"), "{out}");
    assert!(env.stored_release("Secret", "shop", 3).is_some());
}
