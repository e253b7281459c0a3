//! Secret values never appear in any report: every lint format (`SARIF`, GitHub and `JUnit` too), every plan format and the
//! readiness command are grepped for values planted in Secret `data` and `stringData`.
//! (`chartseq template` reproduces the manifests themselves, as `helm template` does.)

use crate::{chartseq, run};

const PLANTED: [&str; 4] = [
    "hunter2-planted",
    "aHVudGVyMi1wbGFudGVk",
    "s3cr3t-in-broken-doc",
    "multi-line-planted",
];

fn stream() -> String {
    format!(
        "---\n# Source: c/templates/secret.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  annotations:\n    \
         helm.sh/resource-group: db\n    helm.sh/depends-on/resource-groups: '[\"ghost\"]'\n    helm.sh/readiness-success: '[\"{{.x}} == 1\"]'\n\
         data:\n  password: {b64}\nstringData:\n  token: {plain}\n  pem: |\n    {multi}\n    second line\n\
         ---\n# Source: c/templates/broken.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: broken\nstringData:\n  key: {broken}\n  bad: [unclosed\n\
         ---\n# Source: c/templates/app.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n  annotations:\n    \
         helm.sh/resource-group: app\n    helm.sh/depends-on/resource-groups: db\nspec:\n  template:\n    spec:\n      containers:\n        \
         - name: app\n          envFrom:\n            - secretRef:\n                name: db\n",
        b64 = PLANTED[1],
        plain = PLANTED[0],
        broken = PLANTED[2],
        multi = PLANTED[3],
    )
}

fn assert_clean(what: &str, text: &str) {
    for secret in PLANTED {
        assert!(!text.contains(secret), "{what} leaks `{secret}`:\n{text}");
    }
}

#[test]
fn no_output_format_shows_secret_values() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("secrets.yaml");
    std::fs::write(&path, stream()).expect("write");
    let mut outputs = 0;
    for format in ["human", "concise", "json", "sarif", "github", "junit"] {
        let (code, out, err) = run(chartseq()
            .arg("lint")
            .arg(&path)
            .args(["--format", format, "--color", "always", "--select", "ALL"]));
        assert_eq!(code, 1, "{format}: findings expected\n{err}");
        assert!(!out.is_empty(), "{format}: a report is written");
        assert_clean(&format!("lint --format {format}"), &out);
        assert_clean(&format!("lint --format {format} (stderr)"), &err);
        outputs += 1;
    }
    let summary = dir.path().join("summary.md");
    let (_, _, _) = run(chartseq()
        .arg("lint")
        .arg(&path)
        .args(["--format", "github", "--select", "ALL"])
        .env("GITHUB_STEP_SUMMARY", &summary));
    let summary = std::fs::read_to_string(&summary).expect("the step summary is written");
    assert!(summary.contains("CS"), "{summary}");
    assert_clean("the GitHub step summary", &summary);
    for format in ["text", "json", "dot", "mermaid"] {
        let (_, out, err) = run(chartseq().arg("plan").arg(&path).args(["--format", format]));
        assert_clean(&format!("plan --format {format}"), &out);
        assert_clean(&format!("plan --format {format} (stderr)"), &err);
        outputs += 1;
    }
    // readiness stops at the first document that does not parse, so it reads the Secrets of
    // a stream without the broken one: every Secret is judged (and ready, by kstatus).
    let text = stream();
    let mut readable = String::new();
    for doc in text.split("---\n") {
        if !doc.is_empty() && !doc.contains("broken") {
            readable.push_str("---\n");
            readable.push_str(doc);
        }
    }
    let readable_path = dir.path().join("readable.yaml");
    std::fs::write(&readable_path, readable).expect("write");
    for format in ["text", "json"] {
        let (code, out, err) = run(chartseq()
            .arg("readiness")
            .arg(&readable_path)
            .args(["--format", format]));
        assert_eq!(
            code, 1,
            "readiness --format {format}: the Deployment is not ready\n{out}{err}"
        );
        assert!(
            out.contains("Secret") && out.contains("Deployment") && out.contains("ready"),
            "readiness --format {format} judges every object:\n{out}{err}"
        );
        assert_clean(&format!("readiness --format {format}"), &out);
        assert_clean(&format!("readiness --format {format} (stderr)"), &err);
        outputs += 1;
    }
    assert_eq!(outputs, 12);
}

/// Credentials in a kubeconfig never reach the output, whatever fails.
#[cfg(feature = "apply")]
#[test]
fn kubeconfig_credentials_are_never_printed() {
    const TOKEN: &str = "planted-bearer-token-9f8e7d";
    const KEY: &str = "cGxhbnRlZC1rZXktZGF0YQ=="; // base64 of "planted-key-data"
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n    \
             insecure-skip-tls-verify: true\nusers:\n- name: token\n  user:\n    token: {TOKEN}\n- name: key\n  user:\n    \
             client-certificate-data: cGxhbnRlZC1jZXJ0LWRhdGE=\n    client-key-data: {KEY}\ncontexts:\n\
             - name: token\n  context: {{cluster: c, user: token}}\n- name: key\n  context: {{cluster: c, user: key}}\n\
             current-context: token\n"
        ),
    )
    .expect("write");
    let stream = crate::fixture("charts/diamond.rendered.yaml");
    for context in ["token", "key"] {
        let runs = [
            run(chartseq()
                .args(["status", "shop", "--context", context])
                .arg("--kubeconfig")
                .arg(&kubeconfig)),
            run(chartseq()
                .arg("apply")
                .arg(&stream)
                .args([
                    "--release",
                    "shop",
                    "--no-lint",
                    "--timeout",
                    "3s",
                    "--readiness-timeout",
                    "1s",
                ])
                .args(["--context", context])
                .arg("--kubeconfig")
                .arg(&kubeconfig)),
        ];
        for (code, out, err) in runs {
            assert_ne!(code, 0, "nothing listens on the server: {err}");
            for secret in [TOKEN, KEY, "planted-key-data"] {
                assert!(
                    !out.contains(secret) && !err.contains(secret),
                    "context {context} leaks {secret}:\n{out}{err}"
                );
            }
        }
    }
}

/// chartseq writes nothing but its `--output` file: run every offline command from a fresh
/// directory with a fresh HOME and compare the trees before and after.
#[test]
fn commands_write_only_their_output_paths() {
    let Some(helm) = crate::tool("helm") else {
        return;
    };
    let root = tempfile::tempdir().expect("tempdir");
    let home = root.path().join("home");
    let work = root.path().join("work");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::create_dir_all(&work).expect("work");
    let chart = crate::fixture("charts/platform");
    let stream = crate::fixture("charts/platform.rendered.yaml");
    let listing = || {
        let mut files = Vec::new();
        let mut stack = vec![root.path().to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("readable").flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path.clone());
                }
                files.push(path);
            }
        }
        files.sort();
        files
    };
    let before = listing();
    let command = || {
        let mut cmd = chartseq();
        cmd.current_dir(&work)
            .env("HOME", &home)
            .env("CHARTSEQ_HELM", &helm);
        cmd
    };
    for args in [
        vec!["plan"],
        vec!["template"],
        vec!["lint", "--fail-on", "never"],
    ] {
        let (code, _, err) = run(command().args(&args).arg(&chart));
        assert_eq!(code, 0, "{args:?}: {err}");
        let (code, _, err) = run(command()
            .args(&args)
            .arg(&stream)
            .arg("--chart")
            .arg(&chart));
        assert_eq!(code, 0, "{args:?}: {err}");
    }
    let (_, _, _) = run(command().arg("readiness").arg(&stream));
    assert_eq!(listing(), before, "no command wrote a file");
    let report = work.join("report.json");
    let (code, _, err) = run(command()
        .args(["lint", "--fail-on", "never", "--format", "json", "--output"])
        .arg(&report)
        .arg(&stream));
    assert_eq!(code, 0, "{err}");
    let mut expected = before.clone();
    expected.push(report);
    expected.sort();
    assert_eq!(listing(), expected, "lint --output wrote exactly its file");
}
