//! `chartseq lint` over several charts as a user runs it: a chart helm cannot render is a
//! finding of that chart and the others are still linted; a directory of charts (and no
//! target at all) lints every chart under it; the human output names each chart.

use crate::{chartseq, run, tool};

const BROKEN: &str = "fixtures/broken/bad-template";

#[test]
fn a_chart_helm_cannot_render_is_a_finding_and_the_others_are_linted() {
    let Some(helm) = tool("helm") else { return };
    let targets = [
        "fixtures/charts/cycle-two",
        BROKEN,
        "fixtures/charts/unknown-subchart",
    ];
    let (code, out, err) = run(chartseq()
        .arg("lint")
        .args(targets)
        .args(["--format", "concise", "--helm"])
        .arg(&helm));
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("CS001 [error]"), "{out}");
    assert!(out.contains("CS102 [error]"), "{out}");
    assert!(
        out.contains(&format!(
            "{BROKEN}/templates/cm.yaml:4:26: CS900 [error] helm cannot render the chart: execution error at (bad-template/templates/cm.yaml:4:26): name is required"
        )),
        "{out}"
    );
    assert!(!err.contains("helm template failed"), "{err}");

    // One JSON document for the run; the failing chart is named.
    let (code, out, _) = run(chartseq()
        .arg("lint")
        .args(targets)
        .args(["--format", "json", "--helm"])
        .arg(&helm));
    assert_eq!(code, 1);
    let json: serde_json::Value = serde_json::from_str(&out).expect("one JSON document");
    let cs900: Vec<&serde_json::Value> = json["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["code"] == "CS900")
        .collect();
    assert_eq!(cs900.len(), 1, "{out}");
    assert_eq!(cs900[0]["chart"], "bad-template");

    // Alone, the chart's render failure is still a finding (exit 1), not a tool failure.
    let (code, out, err) = run(chartseq()
        .args(["lint", BROKEN, "--color", "never", "--helm"])
        .arg(&helm));
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("error[CS900/render-failed]"), "{out}");
    assert!(out.contains("helm stops here"), "{out}");

    // As the pre-commit hooks run it: files of both charts.
    let (code, out, err) = run(chartseq()
        .args(["lint", "--owning-charts", "--format", "concise", "--helm"])
        .arg(&helm)
        .args([
            "fixtures/broken/bad-template/templates/cm.yaml",
            "fixtures/charts/cycle-two/templates/app.yaml",
        ]));
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("CS900") && out.contains("CS001"), "{out}");

    // Ignored on purpose: said on standard error, and the other charts decide.
    let (code, out, err) = run(chartseq()
        .args([
            "lint", BROKEN, "--ignore", "CS900", "--format", "concise", "--helm",
        ])
        .arg(&helm));
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(err.contains("helm cannot render"), "{err}");

    // The GitHub step summary has no install order for it, and says why.
    let summary = tempfile::NamedTempFile::new().expect("tempfile");
    let (code, _, _) = run(chartseq()
        .args(["lint", BROKEN, "--format", "github", "--helm"])
        .arg(&helm)
        .env("GITHUB_STEP_SUMMARY", summary.path()));
    assert_eq!(code, 1);
    let written = std::fs::read_to_string(summary.path()).expect("summary");
    assert!(
        written.contains("No install order: helm cannot render the chart"),
        "{written}"
    );

    // plan has nothing to show for such a chart: still a tool failure there.
    let (code, _, err) = run(chartseq().args(["plan", BROKEN, "--helm"]).arg(&helm));
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_directory_of_charts_lints_every_chart_but_vendored_subcharts() {
    let Some(helm) = tool("helm") else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let top = dir.path();
    let chart = |path: &str, body: &str| {
        let at = top.join(path);
        std::fs::create_dir_all(at.join("templates")).expect("mkdir");
        std::fs::write(
            at.join("Chart.yaml"),
            format!(
                "apiVersion: v2\nname: {}\nversion: 0.1.0\n",
                at.file_name().expect("name").to_string_lossy()
            ),
        )
        .expect("write");
        std::fs::write(at.join("templates/cm.yaml"), body).expect("write");
    };
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Chart.Name }}\n";
    let cycle = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    helm.sh/resource-group: a\n    helm.sh/depends-on/resource-groups: '[\"a\"]'\n";
    chart("charts/web", cm);
    chart("charts/loop", cycle);
    // Vendored: rendered by its parent, never linted alone.
    chart("charts/web/charts/sub", cm);
    let web = top.join("charts/web/Chart.yaml");
    let declared = std::fs::read_to_string(&web).expect("read")
        + "dependencies:\n  - name: sub\n    version: 0.1.0\n";
    std::fs::write(&web, declared).expect("write");
    std::fs::write(top.join("README.md"), "charts\n").expect("write");

    for args in [&["lint", "."][..], &["lint"][..]] {
        let (code, out, err) = run(chartseq()
            .current_dir(top)
            .args(args)
            .args(["--color", "never", "--helm"])
            .arg(&helm));
        assert_eq!(code, 1, "{args:?}: {out}{err}");
        assert!(out.contains("charts/loop: 1 error"), "{out}");
        assert!(out.contains("charts/web: no findings"), "{out}");
        assert!(!out.contains("charts/web/charts/sub:"), "{out}");
        assert!(
            out.ends_with("2 charts: 1 error, 1 warning, 0 infos\n"),
            "{out}"
        );
    }
    // A directory with no chart at all says so.
    let (code, _, err) = run(chartseq()
        .args(["lint"])
        .arg(top.join("charts/web/templates")));
    assert_eq!(code, 2);
    assert!(
        err.contains("no Chart.yaml in") && err.contains("or below it: no chart to lint"),
        "{err}"
    );
}

#[test]
fn several_charts_are_each_named_and_summed_up() {
    let (code, out, _) = run(chartseq().args([
        "lint",
        "fixtures/rules/CS001/valid.yaml",
        "fixtures/charts/two-groups.rendered.yaml",
        "fixtures/rules/CS003/valid.yaml",
        "--color",
        "never",
        "--fail-on",
        "never",
    ]));
    assert_eq!(code, 0);
    assert!(
        out.starts_with("fixtures/rules/CS001/valid.yaml: no findings\n"),
        "{out}"
    );
    assert!(
        out.contains("\nfixtures/charts/two-groups.rendered.yaml: 1 error, 0 warnings, 0 infos\n"),
        "{out}"
    );
    assert!(
        out.ends_with("\nfixtures/rules/CS003/valid.yaml: no findings\n3 charts: 1 error, 0 warnings, 0 infos\n"),
        "{out}"
    );
    assert_eq!(out.matches("no findings").count(), 2, "{out}");
    // One chart: the output is as it always was.
    let (_, out, _) = run(chartseq().args(["lint", "fixtures/rules/CS001/valid.yaml"]));
    assert_eq!(out, "no findings\n");
}

#[test]
fn ci_values_runs_name_their_values_files() {
    let Some(helm) = tool("helm") else { return };
    let (code, out, err) = run(chartseq()
        .args([
            "lint",
            "fixtures/lint/values-matrix/shop",
            "fixtures/lint/values-matrix/tags",
            "--ci-values",
            "--helm",
        ])
        .arg(&helm));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "fixtures/lint/values-matrix/shop with values fixtures/lint/values-matrix/shop/ci/prod-values.yaml: no findings\n\
         fixtures/lint/values-matrix/tags: no findings\n\
         2 charts, 1 values file: no findings\n"
    );
}

/// A suppression comment silences only the line right below it; one two lines too high says
/// where the finding it names is, at the template line the user edits.
#[test]
fn a_misplaced_suppression_says_where_the_finding_is() {
    let Some(helm) = tool("helm") else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let templates = dir.path().join("app/templates");
    std::fs::create_dir_all(&templates).expect("mkdir");
    std::fs::write(
        dir.path().join("app/Chart.yaml"),
        "apiVersion: v2\nname: app\nversion: 0.1.0\n",
    )
    .expect("write");
    std::fs::write(
        templates.join("job.yaml"),
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: setup\n  annotations:\n    # chartseq: ignore[CS403]\n    helm.sh/hook: pre-install\n    helm.sh/hook-weight: \"soon\"\n",
    )
    .expect("write");
    let (code, out, err) = run(chartseq()
        .current_dir(dir.path())
        .args([
            "lint",
            "app",
            "--format",
            "json",
            "--fail-on",
            "never",
            "--helm",
        ])
        .arg(&helm));
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let unused = json["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .find(|d| d["code"] == "CS901")
        .expect("CS901");
    assert_eq!(unused["location"]["line"], 6);
    assert_eq!(
        unused["help"],
        "a comment silences the line right below it only: move it to the line above app/templates/job.yaml:8, where the nearest CS403 finding is"
    );
}

/// `-o` is the output format in helm's commands (`list`, `status`, `history`); `lint` and
/// `diff` write a file with `--output-file`, and their old `-o FILE` still works, except for a
/// format's name, which is refused rather than written as a file.
#[test]
fn output_flags_mean_one_thing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stream = crate::root().join("fixtures/charts/two-groups.rendered.yaml");
    let lint = |args: &[&str]| {
        run(chartseq()
            .current_dir(dir.path())
            .arg("lint")
            .arg(&stream)
            .args(args))
    };
    let (code, out, err) = lint(&["-o", "json"]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains("-o json would write the report to a file named `json`: use --format json for the format, or --output-file ./json for a file of that name"),
        "{err}"
    );
    assert!(!dir.path().join("json").exists());
    let (code, _, err) = run(chartseq().args([
        "diff",
        "fixtures/charts/two-groups.rendered.yaml",
        "fixtures/charts/diamond.rendered.yaml",
        "-o",
        "markdown",
    ]));
    assert_eq!(code, 2);
    assert!(
        err.contains("use --format markdown for the format"),
        "{err}"
    );

    let (code, _, err) = lint(&["--format", "json", "--output-file", "report.json"]);
    assert_eq!(code, 1, "{err}");
    let (code, _, err) = lint(&["--format", "json", "-o", "old.json"]);
    assert_eq!(code, 1, "{err}");
    let new = std::fs::read_to_string(dir.path().join("report.json")).expect("--output-file");
    let old = std::fs::read_to_string(dir.path().join("old.json")).expect("-o FILE");
    assert_eq!(new, old);
    assert!(new.contains("\"CS004\""), "{new}");
}

/// `list`, `status` and `history` take `--format` as the other commands do, beside helm's
/// `-o/--output`.
#[cfg(feature = "apply")]
#[test]
fn helm_commands_take_the_format_flag_too() {
    for args in [
        &["list", "--format", "json"][..],
        &["status", "shop", "--format", "json"][..],
        &["history", "shop", "--format", "json"][..],
        &["list", "-o", "json"][..],
    ] {
        let (code, _, err) = run(chartseq()
            .args(args)
            .args(["--kubeconfig", "/nonexistent/kubeconfig"]));
        assert_eq!(code, 2, "{args:?}");
        assert!(err.contains("kubeconfig"), "{args:?}: {err}");
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
    }
}

/// `--argo-health` is read before anything is sent: it needs `--dialect argo`, a script that
/// does not parse is named, and a file that is no `ConfigMap` is located.
#[cfg(feature = "apply")]
#[test]
fn argo_health_scripts_are_checked_before_anything_is_sent() {
    let apply = |extra: &[&str]| {
        run(chartseq()
            .args([
                "apply",
                "fixtures/charts/diamond.rendered.yaml",
                "--release",
                "shop",
            ])
            .args(extra)
            .args(["--kubeconfig", "/nonexistent/kubeconfig"]))
    };
    let (code, _, err) = apply(&["--argo-health", "fixtures/argo-health/customizations"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--argo-health gives Argo CD health scripts; it needs --dialect argo (this run deploys with --dialect hip)"),
        "{err}"
    );
    let (code, _, err) = apply(&[
        "--dialect",
        "argo",
        "--argo-health",
        "fixtures/argo-health/broken",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--argo-health: health script fixtures/argo-health/broken/errors.chartseq.example/Syntax/health.lua: syntax error: health.lua:3:"),
        "{err}"
    );
    let (code, _, err) = apply(&["--dialect", "argo", "--argo-health", "README.md"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("README.md:"), "{err}");
    assert!(err.contains(": not an argocd-cm ConfigMap"), "{err}");
}

/// The release name: `--release-name` in every command (apply too, with `--release` kept for
/// old scripts), and helm's `template NAME CHART`.
#[test]
fn the_release_name_is_spelled_alike_everywhere() {
    #[cfg(feature = "apply")]
    for flag in ["--release-name", "--release"] {
        let (code, _, err) = run(chartseq().args([
            "apply",
            "fixtures/charts/diamond.rendered.yaml",
            flag,
            "shop",
            "--kubeconfig",
            "/nonexistent/kubeconfig",
        ]));
        assert_eq!(code, 2, "{flag}");
        assert!(err.contains("kubeconfig"), "{flag}: {err}");
        assert!(!err.contains("release"), "{flag}: {err}");
    }
    let Some(helm) = tool("helm") else { return };
    let chart = "fixtures/charts/platform";
    let template = |args: &[&str]| {
        run(chartseq()
            .arg("template")
            .args(args)
            .arg("--helm")
            .arg(&helm))
    };
    let (code, out, err) = template(&["shop", chart]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("name: shop-widget"), "{out}");
    let (_, flagged, _) = template(&[chart, "--release-name", "shop"]);
    assert_eq!(out, flagged);
    let (_, default, _) = template(&[chart]);
    assert!(default.contains("name: release-name-widget"), "{default}");
    let (code, _, err) = template(&["shop", chart, "--release-name", "other"]);
    assert_eq!(code, 2);
    assert!(err.contains("two release names"), "{err}");
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let output = std::process::Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}");
}

/// Errors say what is wrong in chartseq's words, one way for every command: no raw `fatal:`
/// line of git, no temporary directory, no second style for lint.
#[test]
fn errors_name_the_real_cause_in_one_style() {
    let stream = crate::root().join("fixtures/charts/diamond.rendered.yaml");
    let (code, _, err) = run(chartseq().args(["migrate", "nonexistent", "--from", "auto"]));
    assert_eq!(code, 2);
    assert_eq!(err, "chartseq: error: nonexistent: no such path\n");

    // Outside any repository.
    let outside = tempfile::tempdir().expect("tempdir");
    let (code, _, err) = run(chartseq()
        .current_dir(outside.path())
        .args(["diff", "HEAD:nope"])
        .arg(&stream));
    assert_eq!(code, 2);
    assert!(
        err.starts_with(
            "chartseq: error: HEAD:nope: the current directory is not in a git repository"
        ),
        "{err}"
    );

    // In a repository: no such path in that revision; a directory that is no chart is named
    // by its revision, not by the temporary copy.
    let repo = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(repo.path().join("docs")).expect("mkdir");
    std::fs::write(repo.path().join("docs/README.md"), "docs\n").expect("write");
    git(repo.path(), &["init", "-q"]);
    git(repo.path(), &["add", "."]);
    git(repo.path(), &["commit", "-q", "-m", "docs"]);
    let diff = |old: &str| {
        run(chartseq()
            .current_dir(repo.path())
            .args(["diff", old])
            .arg(&stream))
    };
    let (code, _, err) = diff("HEAD:nope");
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "chartseq: error: HEAD:nope: no `nope` at revision HEAD\n"
    );
    let (code, _, err) = diff("HEAD:docs");
    assert_eq!(code, 2);
    assert!(
        err.starts_with("chartseq: error: no Chart.yaml in HEAD:docs: not a chart\n"),
        "{err}"
    );
    assert!(
        !err.contains("chartseq-diff") && !err.contains("fatal:"),
        "{err}"
    );

    // lint's own failures look like every other command's, a configuration error with its line.
    let (code, _, err) = run(chartseq().args([
        "lint",
        "fixtures/rules/CS003/isolated.yaml",
        "--config",
        "fixtures/lint/bad-config.toml",
    ]));
    assert_eq!(code, 2);
    assert!(
        err.starts_with(
            "chartseq: error: fixtures/lint/bad-config.toml:2:19: `CS9x` selects no rule"
        ),
        "{err}"
    );
    assert!(
        err.contains("2 | select = [\"CS1\", \"CS9x\"]\n  |                   ^^^^ here\n"),
        "{err}"
    );
    let (code, _, err) = run(chartseq().args(["lint", "nope.yaml"]));
    assert_eq!(code, 2);
    assert!(
        err.starts_with("chartseq: error: nope.yaml: no such path\n"),
        "{err}"
    );
}

/// A chart whose own `Chart.yaml` is not YAML is a finding of that chart (CS902) at the place
/// loading stopped, and the other charts are still linted; the run still exits 1. `plan` has
/// nothing to show for it: a tool failure there.
#[test]
fn a_chart_that_cannot_be_loaded_is_a_finding_and_the_others_are_linted() {
    let Some(helm) = tool("helm") else { return };
    let targets = ["fixtures/broken/not-yaml", "fixtures/charts/cycle-two"];
    let (code, out, err) = run(chartseq()
        .arg("lint")
        .args(targets)
        .args(["--format", "concise", "--helm"])
        .arg(&helm));
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("fixtures/broken/not-yaml/Chart.yaml:3:1: CS902 [error] the chart cannot be loaded: invalid YAML"),
        "{out}"
    );
    assert!(out.contains("CS001 [error]"), "{out}");
    assert!(!err.contains("error:"), "{err}");

    // Ignored on purpose: said on standard error, and the other charts decide.
    let (code, out, err) = run(chartseq()
        .args([
            "lint",
            "fixtures/broken/not-yaml",
            "fixtures/rules/CS001/valid.yaml",
        ])
        .args(["--ignore", "CS902", "--format", "concise"]));
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(
        err.contains("cannot load chart fixtures/broken/not-yaml"),
        "{err}"
    );

    let (code, _, err) = run(chartseq().args(["plan", "fixtures/broken/not-yaml"]));
    assert_eq!(code, 2, "{err}");
}

/// Every command that renders takes helm's flags with one meaning, and every duration flag goes
/// through the one parser: a bad value is refused naming the flag and the value, whatever the
/// command.
#[test]
fn every_rendering_command_takes_the_same_helm_flags() {
    let stream = "fixtures/charts/two-groups.rendered.yaml";
    let mut commands: Vec<Vec<&str>> = vec![
        vec!["lint", stream],
        vec!["plan", stream],
        vec!["template", stream],
        vec!["migrate", stream, "--from", "auto"],
        vec!["diff", stream, stream],
    ];
    #[cfg(feature = "apply")]
    commands.push(vec!["apply", "shop", stream]);
    for command in &commands {
        for flag in ["--helm-timeout", "--max-depth"] {
            let (code, _, err) = run(chartseq().args(command).args([flag, "soon"]));
            assert_eq!(code, 2, "{command:?} {flag}: {err}");
            assert!(
                err.contains(&format!("invalid value 'soon' for '{flag} <")),
                "{command:?} {flag}: {err}"
            );
        }
    }
    for command in [&["lint", stream][..], &["apply", "shop", stream][..]] {
        if cfg!(not(feature = "apply")) && command[0] == "apply" {
            continue;
        }
        for flag in ["--timeout", "--readiness-timeout"] {
            let (code, _, err) = run(chartseq().args(command).args([flag, "5x"]));
            assert_eq!(code, 2, "{command:?} {flag}: {err}");
            assert!(
                err.contains(&format!("invalid value '5x' for '{flag} <DURATION>': invalid duration \"5x\": unknown unit")),
                "{command:?} {flag}: {err}"
            );
        }
    }
}

/// `diff` takes the limits and `--helm-timeout` as the other rendering commands do (it used to
/// render both sides under fixed defaults).
#[test]
fn diff_takes_the_limit_and_helm_timeout_flags() {
    let dir = tempfile::tempdir().expect("tempdir");
    let deep = dir.path().join("deep.yaml");
    std::fs::write(
        &deep,
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\nspec: {}{}\n",
            "[".repeat(30),
            "]".repeat(30)
        ),
    )
    .expect("write");
    let shallow = "fixtures/charts/two-groups.rendered.yaml";
    let diff = |args: &[&str]| run(chartseq().arg("diff").arg(shallow).arg(&deep).args(args));
    // The deeper document is a CS000 finding of NEW once past the cap, not before.
    let (code, out, err) = diff(&[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        !out.contains("CS000"),
        "the default depth accepts 30 levels: {out}"
    );
    let (code, out, err) = diff(&["--max-depth", "20"]);
    assert_eq!(code, 1, "{err}");
    assert!(out.contains("nesting deeper than 20 levels"), "{out}");

    // A helm that never finishes is stopped at the duration given, in Go's syntax.
    let helm = crate::helm_call::fake_helm(dir.path(), "exec sleep 60\n");
    let chart = crate::helm_call::chart(dir.path());
    let started = std::time::Instant::now();
    let (code, _, err) = run(chartseq()
        .arg("diff")
        .arg(&chart)
        .arg(&chart)
        .arg("--helm")
        .arg(&helm)
        .args(["--helm-timeout", "300ms"]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("helm template did not finish within --helm-timeout 0.3s"),
        "{err}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}
