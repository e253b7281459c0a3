//! Secret values never appear in any report: every lint format, every plan format and the
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
    for format in ["human", "concise", "json"] {
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
    for format in ["text", "json", "dot", "mermaid"] {
        let (_, out, err) = run(chartseq().arg("plan").arg(&path).args(["--format", format]));
        assert_clean(&format!("plan --format {format}"), &out);
        assert_clean(&format!("plan --format {format} (stderr)"), &err);
        outputs += 1;
    }
    for format in ["text", "json"] {
        let (_, out, err) = run(chartseq()
            .arg("readiness")
            .arg(&path)
            .args(["--format", format]));
        assert_clean(&format!("readiness --format {format}"), &out);
        assert_clean(&format!("readiness --format {format} (stderr)"), &err);
        outputs += 1;
    }
    assert_eq!(outputs, 9);
}
