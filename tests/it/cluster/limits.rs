//! The deployer's input limits on the real control plane: durations bounded by Go's largest,
//! object names and namespaces checked as the API server checks them before any request (the
//! fault proxy, forwarding without faults, counts every request), and an unreadable revision
//! in a release's own history stepped over; release records read defensively (a corrupt or
//! oversized one is skipped with a warning, never the end of a listing) and decompressed
//! within a bound.

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

/// Stores a release Secret in `namespace` as another client would: `text` is the release text
/// (a Secret's data is its base64); `None` stores no `release` key.
fn release_secret_in(env: &Ns, namespace: &str, release: &str, revision: u32, text: Option<&str>) {
    use base64::Engine as _;
    let name = format!("sh.helm.release.v1.{release}.v{revision}");
    let mut body = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace, "labels": {
            "owner": "helm", "name": release, "status": "deployed", "version": revision.to_string()}},
        "type": "helm.sh/release.v1",
        "data": {},
    });
    if let Some(text) = text {
        body["data"]["release"] =
            serde_json::json!(base64::engine::general_purpose::STANDARD.encode(text));
    }
    let path = env.file(&format!("{namespace}-{name}.json"), &body.to_string());
    ok(run(std::process::Command::new(&env.kubectl)
        .args([
            "apply",
            "--server-side",
            "--field-manager=kubectl",
            "-f",
            &path,
        ])
        .arg("--kubeconfig")
        .arg(&env.cluster.kubeconfig)
        .env_remove("KUBECONFIG")));
}

/// [`release_secret_in`] the test's own namespace.
fn release_secret(env: &Ns, release: &str, revision: u32, text: Option<&str>) {
    release_secret_in(env, &env.name.clone(), release, revision, text);
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

/// Every kind of unreadable record, each among readable ones: the listing names each one it
/// skipped and shows every other; records missing fields are shown as helm shows them.
#[test]
fn a_corrupt_release_record_is_a_warning_never_the_end_of_a_listing() {
    use serde_json::json;
    let Some(env) = Ns::new("corrupt") else {
        return;
    };
    let other = env.cluster_name("namespace", "other");
    ok(env.kubectl(&["create", "namespace", &other]));
    let own = env.name.clone();
    let shop = crate::fixture("apply/shop.yaml");
    ok(env.apply("shop", shop.to_str().expect("UTF-8"), &[]));
    let unreadable: Vec<(&str, Option<String>, &str)> = vec![
        ("badbase64", Some("%%% not base64".to_owned()), "not base64"),
        (
            "badgzip",
            Some({
                use base64::Engine as _;
                base64::engine::general_purpose::STANDARD.encode([0x1f, 0x8b, 0x08, 0, 1, 2, 3])
            }),
            "not gzip",
        ),
        ("badjson", Some(gzipped(b"{not json")), "not a release"),
        (
            "badversion",
            Some(release_json(&json!({"name": "badversion", "version": "1"}))),
            "no revision number",
        ),
        (
            "notanobject",
            Some(release_json(&json!(["a", "b"]))),
            "not a release",
        ),
        ("nodata", None, "no release data"),
        ("bomb", Some(quick_bomb(65)), "expands to more than 64 MiB"),
    ];
    for (name, text, _) in &unreadable {
        release_secret_in(&env, &other, name, 1, text.as_deref());
    }
    // Readable, with fields missing or of the wrong type.
    release_secret_in(
        &env,
        &other,
        "nochart",
        1,
        Some(&release_json(
            &json!({"name": "nochart", "namespace": other, "version": 1,
            "info": {"status": "deployed", "last_deployed": "2024-01-02T03:04:05Z"}, "manifest": ""}),
        )),
    );
    release_secret_in(
        &env,
        &other,
        "noinfo",
        1,
        Some(&release_json(
            &json!({"name": "noinfo", "namespace": other, "version": 1,
            "chart": {"metadata": {"name": "c", "version": "1.0.0", "appVersion": "2.0"}}}),
        )),
    );
    release_secret_in(
        &env,
        &other,
        "wrongtypes",
        1,
        Some(&release_json(
            &json!({"name": "wrongtypes", "namespace": other, "version": 1,
            "info": "deployed", "chart": "c", "manifest": 5, "hooks": "h", "chartseq": 7}),
        )),
    );
    // The release's own history: an unreadable revision and a readable one without a chart.
    release_secret(&env, "shop", 5, Some(&gzipped(b"[")));
    release_secret(
        &env,
        "shop",
        6,
        Some(&release_json(
            &json!({"name": "shop", "namespace": own, "version": 6}),
        )),
    );

    // Every namespace: other tests' releases are listed too; the rows read are this test's.
    let cs = |args: &[&str]| {
        run(chartseq()
            .args(args)
            .arg("--kubeconfig")
            .arg(&env.cluster.kubeconfig))
    };
    let (code, out, err) = cs(&["list", "-A"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    for (name, _, reason) in &unreadable {
        let line = err
            .lines()
            .find(|l| l.contains(&format!("Secret {other}/sh.helm.release.v1.{name}.v1:")))
            .unwrap_or_else(|| panic!("no warning names {name}: {err}"));
        assert!(
            line.starts_with("chartseq: warning: ") && line.contains(reason),
            "{line}"
        );
        assert!(
            !out.lines()
                .any(|l| l.split_whitespace().next() == Some(name)),
            "{out}"
        );
    }
    let row = |name: &str| {
        out.lines()
            .find(|l| {
                let mut fields = l.split_whitespace();
                fields.next() == Some(name)
                    && fields
                        .next()
                        .is_some_and(|n| n == own.as_str() || n == other.as_str())
            })
            .unwrap_or_else(|| panic!("no row for {name}: {out}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(row("shop")[2], "6", "{out}");
    assert_eq!(row("shop").last(), Some(&"MISSING"));
    assert_eq!(row("nochart")[1..3], [other.as_str(), "1"]);
    assert_eq!(
        row("nochart")[row("nochart").len() - 2..],
        ["MISSING", "MISSING"]
    );
    assert_eq!(
        row("noinfo")[row("noinfo").len() - 3..],
        ["unknown", "c-1.0.0", "2.0"]
    );
    assert_eq!(
        row("wrongtypes")[row("wrongtypes").len() - 2..],
        ["MISSING", "MISSING"]
    );
    assert!(
        err.contains(&format!("Secret {own}/sh.helm.release.v1.shop.v5:")),
        "{err}"
    );

    let (code, out, err) = env.chartseq(&["list"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.lines().any(|l| l.starts_with("shop\t")), "{out}");
    assert!(err.contains("sh.helm.release.v1.shop.v5"), "{err}");
    assert!(!err.contains(other.as_str()), "{err}");

    let (code, out, err) = env.chartseq(&["history", "shop"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let revisions: Vec<&str> = out
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(revisions, ["1", "6"], "{out}");
    assert!(err.contains("sh.helm.release.v1.shop.v5"), "{err}");

    let (code, out, err) = env.chartseq(&["status", "shop"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("REVISION: 6") && out.contains("CHART: MISSING"),
        "{out}"
    );
    for args in [&["history", "shop"][..], &["status", "shop"]] {
        let mut args = args.to_vec();
        args.extend(["-o", "json"]);
        let (code, _, err) = env.chartseq(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
    }
}

/// A gzip stream that expands to `mib` MiB of spaces, built in a moment whatever its size:
/// after a full flush the compressor starts afresh, so every further MiB compresses to the
/// same bytes, which are repeated. The trailer's checksum is not computed (a reader that
/// stops at its bound never reaches it; one that does not has already spent the memory).
fn quick_bomb(mib: usize) -> String {
    use base64::Engine as _;
    let chunk = vec![b' '; 1 << 20];
    let mut deflate = flate2::Compress::new(flate2::Compression::best(), false);
    let mut block = |input: &[u8], flush| {
        let mut out = Vec::with_capacity(64 << 10);
        deflate
            .compress_vec(input, &mut out, flush)
            .expect("compresses");
        out
    };
    let first = block(&chunk, flate2::FlushCompress::Full);
    let next = block(&chunk, flate2::FlushCompress::Full);
    let end = block(&[], flate2::FlushCompress::Finish);
    let mut gz = vec![0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff];
    gz.extend_from_slice(&first);
    for _ in 1..mib {
        gz.extend_from_slice(&next);
    }
    gz.extend_from_slice(&end);
    gz.extend_from_slice(&[0; 4]);
    gz.extend_from_slice(
        &u32::try_from((mib << 20) & 0xffff_ffff)
            .unwrap_or(0)
            .to_le_bytes(),
    );
    base64::engine::general_purpose::STANDARD.encode(gz)
}

/// Three release Secrets that would expand to 512 MiB each (about 0.7 MB stored, as an
/// object may be), in three of the test's namespaces: `list -A` skips each with a warning and
/// lists the rest (other tests' releases too), and (where GNU
/// time can measure it) its peak memory stays under an explicit cap: without the bound it
/// reached about 600 MB, with it about 100 MB.
#[test]
fn release_bombs_are_skipped_within_a_memory_cap() {
    const CAP_KIB: u64 = 256 * 1024;
    let Some(env) = Ns::new("bombs") else {
        return;
    };
    let shop = crate::fixture("apply/shop.yaml");
    ok(env.apply("shop", shop.to_str().expect("UTF-8"), &[]));
    let text = quick_bomb(512);
    assert!(text.len() < 1 << 20, "{} bytes", text.len());
    let spots = [
        env.cluster_name("namespace", "bomb-a"),
        env.cluster_name("namespace", "bomb-b"),
        env.name.clone(),
    ];
    for ns in &spots[..2] {
        ok(env.kubectl(&["create", "namespace", ns]));
    }
    for (i, ns) in spots.iter().enumerate() {
        release_secret_in(&env, ns, &format!("bomb{i}"), 1, Some(&text));
    }
    let gnu_time = std::path::Path::new("/usr/bin/time");
    let mut cmd = if gnu_time.exists() {
        let mut cmd = chartseq();
        let program = cmd.get_program().to_owned();
        let mut timed = std::process::Command::new(gnu_time);
        timed
            .current_dir(crate::root())
            .arg("-f")
            .arg("peak-kib %M")
            .arg(program);
        for (key, value) in cmd.get_envs() {
            match value {
                Some(v) => timed.env(key, v),
                None => timed.env_remove(key),
            };
        }
        cmd = timed;
        cmd
    } else {
        chartseq()
    };
    cmd.args(["list", "-A", "--kubeconfig"])
        .arg(&env.cluster.kubeconfig);
    let (code, out, err) = run(&mut cmd);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.lines().any(|l| {
            let mut fields = l.split_whitespace();
            fields.next() == Some("shop") && fields.next() == Some(env.name.as_str())
        }),
        "{out}"
    );
    for (i, ns) in spots.iter().enumerate() {
        assert!(
            err.contains(&format!(
                "Secret {ns}/sh.helm.release.v1.bomb{i}.v1: expands to more than 64 MiB"
            )),
            "{err}"
        );
    }
    if let Some(kib) = err
        .lines()
        .find_map(|l| l.strip_prefix("peak-kib ")?.trim().parse::<u64>().ok())
    {
        assert!(kib < CAP_KIB, "peak resident memory {kib} KiB");
    }
}
