//! Release records read defensively against the test API server: a corrupt or oversized one
//! is skipped with a warning, never the end of a listing, and decompressed within a bound.
//! These store records in the shared namespaces (`kube-system`, `kube-public`) and list every
//! namespace, which on the shared test cluster every other test would see; the other limits
//! run there (`tests/it/cluster/limits.rs`).

use super::support::{Env, start};
use crate::{chartseq, run};

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
fn release_secret(env: &Env, namespace: &str, release: &str, revision: u32, text: Option<&str>) {
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
    env.create_as(
        "kubectl",
        &format!("/api/v1/namespaces/{namespace}/secrets/{name}"),
        &body.to_string(),
    );
}

fn release_json(value: &serde_json::Value) -> String {
    gzipped(value.to_string().as_bytes())
}

/// Every kind of unreadable record, each among readable ones: the listing names each one it
/// skipped and shows every other; records missing fields are shown as helm shows them.
#[test]
fn a_corrupt_release_record_is_a_warning_never_the_end_of_a_listing() {
    use serde_json::json;
    let env = start("");
    let (code, _, err) = env.apply("shop.yaml", &[]);
    assert_eq!(code, 0, "{err}");
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
        release_secret(&env, "kube-system", name, 1, text.as_deref());
    }
    // Readable, with fields missing or of the wrong type.
    release_secret(
        &env,
        "kube-system",
        "nochart",
        1,
        Some(&release_json(
            &json!({"name": "nochart", "namespace": "kube-system", "version": 1,
            "info": {"status": "deployed", "last_deployed": "2024-01-02T03:04:05Z"}, "manifest": ""}),
        )),
    );
    release_secret(
        &env,
        "kube-system",
        "noinfo",
        1,
        Some(&release_json(
            &json!({"name": "noinfo", "namespace": "kube-system", "version": 1,
            "chart": {"metadata": {"name": "c", "version": "1.0.0", "appVersion": "2.0"}}}),
        )),
    );
    release_secret(
        &env,
        "kube-system",
        "wrongtypes",
        1,
        Some(&release_json(
            &json!({"name": "wrongtypes", "namespace": "kube-system", "version": 1,
            "info": "deployed", "chart": "c", "manifest": 5, "hooks": "h", "chartseq": 7}),
        )),
    );
    // The release's own history: an unreadable revision and a readable one without a chart.
    release_secret(&env, "default", "shop", 5, Some(&gzipped(b"[")));
    release_secret(
        &env,
        "default",
        "shop",
        6,
        Some(&release_json(
            &json!({"name": "shop", "namespace": "default", "version": 6}),
        )),
    );

    let (code, out, err) = env.run(&["list", "-A"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    for (name, _, reason) in &unreadable {
        let line = err
            .lines()
            .find(|l| l.contains(&format!("Secret kube-system/sh.helm.release.v1.{name}.v1:")))
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
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row for {name}: {out}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(row("shop")[2], "6", "{out}");
    assert_eq!(row("shop").last(), Some(&"MISSING"));
    assert_eq!(row("nochart")[1..3], ["kube-system", "1"]);
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
        err.contains("Secret default/sh.helm.release.v1.shop.v5:"),
        "{err}"
    );

    let (code, out, err) = env.run(&["list", "-n", "default"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.lines().any(|l| l.starts_with("shop\t")), "{out}");
    assert!(err.contains("sh.helm.release.v1.shop.v5"), "{err}");
    assert!(!err.contains("kube-system"), "{err}");

    let (code, out, err) = env.run(&["history", "shop", "-n", "default"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let revisions: Vec<&str> = out
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(revisions, ["1", "6"], "{out}");
    assert!(err.contains("sh.helm.release.v1.shop.v5"), "{err}");

    let (code, out, err) = env.run(&["status", "shop", "-n", "default"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("REVISION: 6") && out.contains("CHART: MISSING"),
        "{out}"
    );
    for args in [&["history", "shop"][..], &["status", "shop"]] {
        let mut args = args.to_vec();
        args.extend(["-n", "default", "-o", "json"]);
        let (code, _, err) = env.run(&args);
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
/// object may be): `list -A` skips each with a warning and lists the rest, and (where GNU
/// time can measure it) its peak memory stays under an explicit cap: without the bound it
/// reached about 600 MB, with it about 100 MB.
#[test]
fn release_bombs_are_skipped_within_a_memory_cap() {
    const CAP_KIB: u64 = 256 * 1024;
    let env = start("");
    let (code, _, err) = env.apply("shop.yaml", &[]);
    assert_eq!(code, 0, "{err}");
    let text = quick_bomb(512);
    assert!(text.len() < 1 << 20, "{} bytes", text.len());
    let spots = ["kube-system", "kube-public", "default"];
    for (i, ns) in spots.iter().enumerate() {
        release_secret(&env, ns, &format!("bomb{i}"), 1, Some(&text));
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
        .arg(&env.server.kubeconfig);
    let (code, out, err) = run(&mut cmd);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.lines().any(|l| l.starts_with("shop\t")), "{out}");
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
