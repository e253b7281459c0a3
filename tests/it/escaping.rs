//! Output that keeps its meaning: a name from the input (a resource-group name, a resource
//! name, a readiness expression, a directory name, helm's error text) holding any character,
//! line breaks and markup included, goes through every output format without adding a line, a
//! document, a workflow command, a heading, HTML or an XML error.
//!
//! Exhaustive over a set of characters that end lines or open markup in one format or another:
//! each is put in every name of one stream, which runs through `plan` (every format),
//! `template`, `lint` (every format, with the GitHub step summary), `diff` (every format) and
//! `readiness`.

use std::fmt::Write as _;
use std::path::Path;

use crate::{chartseq, run, tool};

/// Characters that end a line, a comment, a cell, a fence or a document somewhere.
const CHARACTERS: &[char] = &[
    '\n', '\r', '\t', '\0', ':', '#', '-', '|', '`', '<', '>', '&', '"', '\'', '\u{2028}',
    '\u{fffe}', '\u{ffff}',
];

/// A name around `c` that, if written raw, would forge lines in every format: a workflow
/// command, a document separator with an object, a heading, an image, raw HTML, a fence.
fn payload(c: char) -> String {
    format!(
        "g{c}::error::forged{c}---{c}kind: ConfigMap{c}## END resource-group: x{c}# heading{c}![i](http://t/p.png){c}<b>html</b>{c}```{c}|cell|{c}\u{fffe}\u{ffff}"
    )
}

/// `text` as a JSON string with every character outside a plain set as `\uXXXX`, so that it
/// can stand inside a YAML scalar of either quote style.
fn json_escaped(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || " .,/=_!()[]{}".contains(c) {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        }
    }
    out.push('"');
    out
}

/// A rendered stream whose group names, resource names and readiness expression all hold
/// `c`: a group, a group depending on it and on a missing group, and a malformed readiness
/// expression (so that lint reports findings naming them).
fn stream(c: char) -> String {
    let p = payload(c);
    let group = json_escaped(&p);
    let app = json_escaped(&format!("app{p}"));
    let missing = json_escaped(&format!("missing{p}"));
    let expr = json_escaped(&format!("{{.x}}=={p}"));
    format!(
        "---\n# Source: c/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name_a}\n  annotations:\n    helm.sh/resource-group: {group}\n---\n# Source: c/templates/b.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name_b}\n  annotations:\n    helm.sh/resource-group: {app}\n    helm.sh/depends-on/resource-groups: '[{group}, {missing}]'\n    helm.sh/readiness-success: '[{expr}]'\n    helm.sh/readiness-failure: '[\"{{.failed}} == true\"]'\n",
        name_a = json_escaped(&format!("a{p}")),
        name_b = json_escaped(&format!("b{p}")),
    )
}

/// Lines of `text` that GitHub's runner would obey (`::` after blanks; it reads lines as .NET
/// does, ended by `\n`, `\r` or both).
fn commands(text: &str) -> Vec<&str> {
    text.split(['\n', '\r'])
        .filter(|l| l.trim_start().starts_with("::"))
        .collect()
}

/// No forged workflow command; and, outside JSON (where they are plain characters of a
/// string), none of the other characters some reader ends a line at (NEL, U+2028, U+2029).
fn no_commands(what: &str, text: &str) {
    let forged = commands(text);
    assert!(forged.is_empty(), "{what}: forged {forged:?} in\n{text}");
    if !what.contains("json") && !what.contains("sarif") {
        assert!(
            !text.contains(['\u{85}', '\u{2028}', '\u{2029}']),
            "{what}: a raw line separator in\n{text}"
        );
    }
}

/// Lines that a YAML or Helm reader would take for a document separator.
fn no_separators(what: &str, text: &str) {
    for line in text.lines() {
        assert!(!line.starts_with("---"), "{what}: separator {line:?}");
    }
}

fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let (code, out, err) = run(chartseq().args(args).current_dir(dir));
    assert!((0..=1).contains(&code), "{args:?}: exit {code}\n{err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    no_commands(&format!("{args:?} stderr"), &err);
    (code, out, err)
}

/// The documents of a stream by Helm's rule, with marker lines dropped and blanks trimmed.
fn documents(stream: &str) -> Vec<String> {
    let mut docs = vec![String::new()];
    for line in stream.split_inclusive('\n') {
        if line.starts_with("---") {
            docs.push(String::new());
        } else if !line.starts_with("## START resource-group:")
            && !line.starts_with("## END resource-group:")
        {
            docs.last_mut().expect("one").push_str(line);
        }
    }
    let mut docs: Vec<String> = docs
        .into_iter()
        .map(|d| d.trim().to_owned())
        .filter(|d| !d.is_empty())
        .collect();
    docs.sort();
    docs
}

/// A strict XML 1.0 well-formedness check of what the `JUnit` report writes: only XML
/// characters, only the five entities and character references, balanced tags, quoted
/// attributes without `<`.
fn assert_well_formed_xml(xml: &str) {
    for c in xml.chars() {
        let ok = matches!(c, '\t' | '\n' | '\r')
            || ('\u{20}'..='\u{d7ff}').contains(&c)
            || ('\u{e000}'..='\u{fffd}').contains(&c)
            || c >= '\u{10000}';
        assert!(ok, "character {c:?} is not allowed in XML:\n{xml}");
    }
    let body = xml
        .strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        .expect("declaration");
    let mut stack: Vec<String> = Vec::new();
    let mut rest = body;
    while let Some(at) = rest.find(['<', '&']) {
        check_text(&rest[..at]);
        rest = &rest[at..];
        if rest.starts_with('&') {
            let end = rest.find(';').expect("entity ends");
            let entity = &rest[1..end];
            assert!(
                matches!(entity, "amp" | "lt" | "gt" | "quot" | "apos")
                    || entity
                        .strip_prefix('#')
                        .is_some_and(|n| n.parse::<u32>().is_ok()),
                "bad entity {entity:?}"
            );
            rest = &rest[end + 1..];
            continue;
        }
        let end = tag_end(rest);
        let tag = &rest[1..end];
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop().as_deref(), Some(name), "unbalanced </{name}>");
        } else {
            let self_closing = tag.ends_with('/');
            let name: String = tag
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != '/')
                .collect();
            assert!(!name.is_empty(), "empty tag name in {tag:?}");
            if !self_closing {
                stack.push(name);
            }
        }
        rest = &rest[end + 1..];
    }
    check_text(rest);
    assert!(stack.is_empty(), "unclosed {stack:?}");
}

/// The end of a tag starting at `<`: the first `>` outside a quoted attribute value, which
/// holds no `<` and no raw `&` other than an entity.
fn tag_end(tag: &str) -> usize {
    let mut quoted = false;
    for (i, c) in tag.char_indices().skip(1) {
        match c {
            '"' => quoted = !quoted,
            '<' => panic!("`<` inside a tag: {tag}"),
            '>' if !quoted => return i,
            _ => {}
        }
    }
    panic!("tag does not end: {tag}")
}

fn check_text(text: &str) {
    assert!(
        !text.contains('>') || !text.contains("]]>"),
        "`]]>` in text"
    );
}

/// Whether python3 parses the document as XML (a second, independent parser), when python3
/// is there.
fn python_parses_xml(xml: &str) -> Option<bool> {
    let dir = tempfile::tempdir().ok()?;
    let path = dir.path().join("report.xml");
    std::fs::write(&path, xml).ok()?;
    let status = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])",
        ])
        .arg(&path)
        .stderr(std::process::Stdio::null())
        .status()
        .ok()?;
    Some(status.success())
}

/// Markdown that chart text must not turn into markup: only the tool's own headings, no raw
/// HTML or image from the input, fences only the tool's (a Mermaid block holds no line that
/// closes it early).
fn assert_markdown_inert(what: &str, md: &str, headings: &[&str]) {
    let mut in_fence = false;
    for line in md.lines() {
        if line.starts_with("```") {
            in_fence = !in_fence;
        }
        if in_fence {
            // A Mermaid label: text, not Markdown; its fence is checked below.
            continue;
        }
        if line.starts_with('#') {
            assert!(
                headings.iter().any(|h| line.starts_with(h)),
                "{what}: heading {line:?}"
            );
        }
        if line.starts_with("```") {
            assert!(
                line == "```" || line == "```mermaid",
                "{what}: fence {line:?}"
            );
        }
        let prose = outside_code_spans(line);
        assert!(!prose.contains("<b>"), "{what}: HTML in {line:?}");
        assert!(!prose.contains("![i]"), "{what}: image in {line:?}");
    }
    let fences = md.lines().filter(|l| l.starts_with("```")).count();
    assert_eq!(fences % 2, 0, "{what}: unbalanced fences");
    for row in md.lines().filter(|l| l.starts_with('|')) {
        // Every row of one table has the header's cell count: no cell was split.
        let cells = row.replace("\\|", "").matches('|').count();
        assert!(cells >= 2, "{what}: row {row:?}");
    }
    tables_keep_their_columns(what, md);
}

/// A Markdown line without its code spans (a backtick not escaped opens or closes one).
fn outside_code_spans(line: &str) -> String {
    let mut out = String::new();
    let mut code = false;
    let mut escaped = false;
    for c in line.chars() {
        if c == '`' && !escaped {
            code = !code;
        } else if !code {
            out.push(c);
        }
        escaped = c == '\\' && !escaped;
    }
    out
}

fn tables_keep_their_columns(what: &str, md: &str) {
    let mut columns: Option<usize> = None;
    for line in md.lines() {
        if line.starts_with('|') {
            let n = line.replace("\\|", "").matches('|').count();
            match columns {
                None => columns = Some(n),
                Some(c) => assert_eq!(c, n, "{what}: row {line:?} has another cell count"),
            }
        } else {
            columns = None;
        }
    }
}

#[test]
fn names_with_any_character_keep_every_output_format_meaning_the_same() {
    for &c in CHARACTERS {
        let dir = tempfile::tempdir().expect("tempdir");
        let input = stream(c);
        std::fs::write(dir.path().join("in.yaml"), &input).expect("write");
        std::fs::write(
            dir.path().join("old.yaml"),
            "---\n# Source: c/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n",
        )
        .expect("write");
        let what = |s: &str| format!("{c:?}: {s}");

        for format in ["text", "json", "dot", "mermaid"] {
            for uninstall in [false, true] {
                let mut args = vec!["plan", "in.yaml", "--format", format];
                if uninstall {
                    args.push("--uninstall");
                }
                let (_, out, _) = run_in(dir.path(), &args);
                no_commands(&what(&format!("plan {format}")), &out);
                no_separators(&what(&format!("plan {format}")), &out);
                if format == "json" {
                    serde_json::from_str::<serde_json::Value>(&out).expect("plan JSON");
                }
                if format == "mermaid" {
                    for line in out.lines() {
                        assert!(!line.trim_start().starts_with("```"), "{line:?}");
                    }
                }
            }
        }

        // template as the reference prints it: exactly the input's documents, no marker.
        let (_, out, _) = run_in(dir.path(), &["template", "in.yaml"]);
        no_commands(&what("template"), &out);
        assert_eq!(
            documents(&out),
            documents(&input),
            "{c:?}: template documents"
        );
        assert!(!out.contains("## START"), "{c:?}:\n{out}");

        // With markers: exactly the input's documents, reordered, plus markers; and again the
        // same.
        let (_, out, _) = run_in(
            dir.path(),
            &[
                "template",
                "in.yaml",
                "--markers",
                "--keep-sequencing-annotations",
            ],
        );
        no_commands(&what("template"), &out);
        assert_eq!(
            documents(&out),
            documents(&input),
            "{c:?}: template documents"
        );
        let markers = out
            .lines()
            .filter(|l| l.starts_with("## START") || l.starts_with("## END"))
            .count();
        assert_eq!(
            markers, 2,
            "{c:?}: one group is sequenced, framed once:\n{out}"
        );
        std::fs::write(dir.path().join("again.yaml"), &out).expect("write");
        let (_, again, _) = run_in(
            dir.path(),
            &[
                "template",
                "again.yaml",
                "--markers",
                "--keep-sequencing-annotations",
            ],
        );
        assert_eq!(again, out, "{c:?}: template of template is the same");

        // lint, every format, with the GitHub step summary.
        let summary = dir.path().join("summary.md");
        for format in ["human", "concise", "json", "sarif", "github", "junit"] {
            let mut cmd = chartseq();
            cmd.args(["lint", "in.yaml", "--format", format])
                .current_dir(dir.path());
            if format == "github" {
                cmd.env("GITHUB_STEP_SUMMARY", &summary);
            }
            let (code, out, err) = run(&mut cmd);
            assert_eq!(code, 1, "{c:?} lint {format}: findings expected\n{err}");
            no_commands(&what(&format!("lint {format} stderr")), &err);
            match format {
                "github" => {
                    for line in commands(&out) {
                        assert!(
                            line.starts_with("::error ")
                                || line.starts_with("::warning ")
                                || line.starts_with("::notice "),
                            "{c:?}: {line:?}"
                        );
                    }
                    assert_eq!(
                        out.lines().count(),
                        commands(&out).len(),
                        "{c:?}: one command per line, nothing else:\n{out}"
                    );
                }
                "json" | "sarif" => {
                    serde_json::from_str::<serde_json::Value>(&out).expect("lint JSON");
                }
                "junit" => {
                    assert_well_formed_xml(&out);
                    if let Some(parsed) = python_parses_xml(&out) {
                        assert!(parsed, "{c:?}: python's parser rejects the JUnit report");
                    }
                }
                _ => no_commands(&what(&format!("lint {format}")), &out),
            }
        }
        let md = std::fs::read_to_string(&summary).expect("step summary");
        assert_markdown_inert(
            &what("step summary"),
            &md,
            &["## chartseq lint", "### Install order: "],
        );

        // diff, every format.
        for format in ["text", "json", "markdown", "github"] {
            let (_, out, _) = run_in(
                dir.path(),
                &["diff", "old.yaml", "in.yaml", "--format", format],
            );
            match format {
                "json" => {
                    serde_json::from_str::<serde_json::Value>(&out).expect("diff JSON");
                }
                "github" => {
                    assert_eq!(out.lines().count(), commands(&out).len(), "{c:?}:\n{out}");
                }
                "markdown" => {
                    no_commands(&what("diff markdown"), &out);
                    assert_markdown_inert(
                        &what("diff markdown"),
                        &out,
                        &["## chartseq diff", "### "],
                    );
                }
                _ => no_commands(&what(&format!("diff {format}")), &out),
            }
        }

        // readiness: objects whose names, expressions and observed values hold `c`.
        let p = payload(c);
        std::fs::write(
            dir.path().join("objects.yaml"),
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {}\n  annotations:\n    helm.sh/readiness-success: '[{}]'\n    helm.sh/readiness-failure: '[\"{{.failed}} == true\"]'\nstatus:\n  x: {}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {}\n",
                json_escaped(&format!("a{p}")),
                json_escaped(&format!("{{.x}} == v{p}")),
                json_escaped(&format!("v{p}")),
                json_escaped(&format!("d{p}")),
            ),
        )
        .expect("write");
        for format in ["text", "json"] {
            let (_, out, _) = run_in(
                dir.path(),
                &["readiness", "objects.yaml", "--format", format],
            );
            no_commands(&what(&format!("readiness {format}")), &out);
            if format == "json" {
                serde_json::from_str::<serde_json::Value>(&out).expect("readiness JSON");
            } else {
                assert!(
                    out.lines().filter(|l| !l.starts_with("  ")).count() == 2,
                    "{c:?}: one line per object:\n{out}"
                );
            }
        }
    }
}

/// Text helm prints (a `fail` message) and a directory name reach the log of a GitHub run
/// only escaped.
#[test]
fn helm_messages_and_directory_names_never_become_workflow_commands() {
    let Some(helm) = tool("helm") else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let chart = dir.path().join("bad\n::error::dir");
    std::fs::create_dir_all(chart.join("templates")).expect("mkdir");
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: bad\nversion: 0.1.0\n",
    )
    .expect("write");
    std::fs::write(
        chart.join("templates/cm.yaml"),
        "{{ fail \"boom\\n::error::from helm\\n  ::warning::indented\" }}\n",
    )
    .expect("write");
    let good = dir.path().join("good\n::error::good");
    std::fs::create_dir_all(good.join("templates")).expect("mkdir");
    std::fs::write(
        good.join("Chart.yaml"),
        "apiVersion: v2\nname: good\nversion: 0.1.0\n",
    )
    .expect("write");
    std::fs::write(
        good.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n    helm.sh/resource-group: {{ \"g\\n::error::v\" | toJson }}\n",
    )
    .expect("write");
    for target in [&chart, &good] {
        let summary = dir.path().join("summary.md");
        let (code, out, err) = run(chartseq()
            .args(["lint", "--format", "github", "--helm"])
            .arg(&helm)
            .arg(target)
            .env("GITHUB_STEP_SUMMARY", &summary)
            .current_dir(dir.path()));
        assert!((0..=2).contains(&code), "{err}");
        no_commands("lint github stderr", &err);
        for line in commands(&out) {
            assert!(
                ["::error ", "::warning ", "::notice "]
                    .iter()
                    .any(|p| line.starts_with(p)),
                "{line:?}"
            );
        }
        assert_eq!(out.lines().count(), commands(&out).len(), "{out}");
        if let Ok(md) = std::fs::read_to_string(&summary) {
            assert_markdown_inert("summary", &md, &["## chartseq lint", "### Install order: "]);
        }
    }
    // A subchart condition (a values path helm looks up as it is) names a value set of the
    // matrix: on the log, in annotations and in the summary.
    let matrix = dir.path().join("matrix\n::error::m");
    std::fs::create_dir_all(matrix.join("templates")).expect("mkdir");
    std::fs::create_dir_all(matrix.join("charts/sub/templates")).expect("mkdir");
    std::fs::write(
        matrix.join("Chart.yaml"),
        "apiVersion: v2\nname: matrix\nversion: 0.1.0\ndependencies:\n  - name: sub\n    version: 0.1.0\n    condition: \"sub.on\\n::error::cond\\n# heading <b>x</b>\"\n",
    )
    .expect("write");
    std::fs::write(
        matrix.join("charts/sub/Chart.yaml"),
        "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
    )
    .expect("write");
    std::fs::write(
        matrix.join("charts/sub/templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\n  annotations:\n    helm.sh/resource-group: a\n",
    )
    .expect("write");
    std::fs::write(
        matrix.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: top\n",
    )
    .expect("write");
    let summary = dir.path().join("matrix.md");
    let (code, out, err) = run(chartseq()
        .args(["lint", "--format", "github", "--values-matrix", "--helm"])
        .arg(&helm)
        .arg(&matrix)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .current_dir(dir.path()));
    assert!((0..=1).contains(&code), "{err}");
    assert!(
        err.contains("cond"),
        "the matrix flipped the condition: {err}"
    );
    no_commands("matrix stderr", &err);
    assert_eq!(err.lines().count(), 1, "one line on the matrix: {err}");
    assert_eq!(out.lines().count(), commands(&out).len(), "{out}");
    let md = std::fs::read_to_string(&summary).expect("summary");
    assert_markdown_inert(
        "matrix summary",
        &md,
        &["## chartseq lint", "### Install order: "],
    );
    // Any command run inside GitHub Actions gets the same log.
    let (_, _, err) = run(chartseq()
        .args(["plan", "--helm"])
        .arg(&helm)
        .arg(&chart)
        .env("GITHUB_ACTIONS", "true")
        .current_dir(dir.path()));
    assert!(err.contains("from helm"), "{err}");
    no_commands("plan stderr in GitHub Actions", &err);
}

/// A resource name reaches a marker too: werf names the step of an object with a manual
/// dependency after the object.
#[test]
fn resource_names_in_dialect_steps_cannot_add_documents() {
    for &c in CHARACTERS {
        let dir = tempfile::tempdir().expect("tempdir");
        let input = format!(
            "---\n# Source: c/templates/db.yaml\napiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: postgres\n---\n# Source: c/templates/app.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {}\n  annotations:\n    werf.io/deploy-dependency-db: state=ready,kind=StatefulSet,name=postgres\n",
            json_escaped(&format!("app{}", payload(c)))
        );
        std::fs::write(dir.path().join("in.yaml"), &input).expect("write");
        let (_, out, _) = run_in(
            dir.path(),
            &["template", "--markers", "--dialect", "werf", "in.yaml"],
        );
        no_commands(&format!("{c:?}: werf template"), &out);
        assert_eq!(documents(&out), documents(&input), "{c:?}:\n{out}");
        let (_, plan, _) = run_in(dir.path(), &["plan", "--dialect", "werf", "in.yaml"]);
        no_commands(&format!("{c:?}: werf plan"), &plan);
        no_separators(&format!("{c:?}: werf plan"), &plan);
    }
}

/// A plan a tool refuses (or passes over with a warning) names the input's names and values
/// on standard error: each stays on its line, whatever it holds. Two different objects of one
/// identity (kapp), a dependency that matches nothing (werf), a group cycle (HIP-0025).
#[test]
fn refused_plans_keep_names_from_the_input_on_their_line() {
    for &c in CHARACTERS {
        let dir = tempfile::tempdir().expect("tempdir");
        let name = json_escaped(&format!("a{}", payload(c)));
        let group = json_escaped(&format!("g{}", payload(c)));
        let input = format!(
            "---\n# Source: c/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  annotations:\n    kapp.k14s.io/change-group: x\n    werf.io/deploy-dependency-db: {dependency}\n    helm.sh/resource-group: {group}\n    helm.sh/depends-on/resource-groups: '[{other}]'\ndata: {{x: \"1\"}}\n---\n# Source: c/templates/b.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  annotations:\n    helm.sh/resource-group: {other}\n    helm.sh/depends-on/resource-groups: '[{group}]'\ndata: {{x: \"2\"}}\n",
            dependency = json_escaped(&format!(
                "state=ready,kind=StatefulSet,name=x{}",
                payload(c)
            )),
            other = json_escaped(&format!("h{}", payload(c))),
        );
        std::fs::write(dir.path().join("in.yaml"), &input).expect("write");
        for dialect in ["kapp", "werf", "hip"] {
            let (code, out, err) = run_in(dir.path(), &["plan", "--dialect", dialect, "in.yaml"]);
            let what = format!("{c:?}: plan --dialect {dialect}");
            assert!(code == 0 || code == 1, "{what}: exit {code}\n{err}");
            assert!(
                !err.is_empty(),
                "{what}: says nothing of what it refuses or passes over"
            );
            no_commands(&what, &out);
            no_commands(&what, &err);
            no_separators(&what, &err);
        }
    }
}
