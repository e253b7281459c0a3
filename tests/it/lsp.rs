//! `chartseq lsp` over its standard input and output: a JSON-RPC client drives the real
//! binary through initialize, buffer changes, saves and every request it answers, on copies
//! of `fixtures/lsp/app`, and checks exact ranges and texts. Rendering needs the real helm
//! (`$CHARTSEQ_HELM`); the tests that do not render run without it.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// An upper bound that only catches a hang: the tests never time the server.
const HANG: Duration = Duration::from_secs(120);

pub struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    /// Notifications read while waiting for a response.
    pending: Vec<Value>,
    /// Messages already consumed by [`Client::diagnostics`] (what was shown before).
    seen: Vec<Value>,
    next_id: i64,
}

fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            length = n.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

impl Client {
    /// Starts `chartseq lsp` (with the helm of `$CHARTSEQ_HELM` when set), without
    /// initializing it.
    pub fn spawn() -> Self {
        Self::spawn_helm(std::env::var_os("CHARTSEQ_HELM").map(PathBuf::from))
    }

    /// Starts `chartseq lsp --helm HELM`, without initializing it.
    pub fn spawn_with_helm(helm: &Path) -> Self {
        Self::spawn_helm(Some(helm.to_path_buf()))
    }

    fn spawn_helm(helm: Option<PathBuf>) -> Self {
        Self::spawn_env(helm, &[])
    }

    /// Starts `chartseq lsp` with `--helm HELM` and more environment, without initializing it.
    pub fn spawn_env(helm: Option<PathBuf>, env: &[(&str, &Path)]) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_chartseq"));
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
        cmd.arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if let Some(helm) = helm {
            cmd.arg("--helm").arg(helm);
        }
        let mut child = cmd.spawn().expect("chartseq lsp starts");
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, messages) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_message(&mut reader) {
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            messages,
            pending: Vec::new(),
            seen: Vec::new(),
            next_id: 0,
        }
    }

    /// Starts and initializes the server (with `$/progress` support announced).
    pub fn start() -> Self {
        Self::initialized(Self::spawn())
    }

    /// Initializes a started server (with `$/progress` support announced).
    pub fn initialized(mut client: Self) -> Self {
        let result = client.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": {"window": {"workDoneProgress": true}}}),
        );
        assert!(
            result["capabilities"]["hoverProvider"] == json!(true),
            "{result}"
        );
        client.notify("initialized", json!({}));
        client
    }

    pub fn send(&mut self, message: &Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write");
        self.stdin.flush().expect("flush");
    }

    #[expect(
        clippy::needless_pass_by_value,
        reason = "call sites build the parameters in place with json!"
    )]
    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn next(&mut self, deadline: Instant) -> Value {
        match self
            .messages
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => panic!("the server did not answer in time"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server closed its output"),
        }
    }

    /// The whole response (result or error) to a request.
    #[expect(
        clippy::needless_pass_by_value,
        reason = "call sites build the parameters in place with json!"
    )]
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + HANG;
        loop {
            let m = self.next(deadline);
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return m;
            }
            self.pending.push(m);
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let response = self.call(method, params);
        assert!(response.get("error").is_none(), "{method}: {response}");
        response["result"].clone()
    }

    /// Waits for the diagnostics of `uri` that satisfy `want`; returns them.
    pub fn diagnostics(&mut self, uri: &str, want: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + HANG;
        loop {
            let found = self.pending.iter().position(|m| {
                m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
            });
            if let Some(i) = found {
                let m = self.pending.remove(i);
                self.seen.push(m.clone());
                let list = m["params"]["diagnostics"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                if want(&list) {
                    return list;
                }
                continue;
            }
            // A request the server sends (progress) gets its empty answer.
            let m = self.next(deadline);
            if m.get("id").is_some() && m.get("method").is_some() {
                let id = m["id"].clone();
                self.send(&json!({"jsonrpc": "2.0", "id": id, "result": null}));
            }
            self.seen.push(m.clone());
            if m["method"] == "textDocument/publishDiagnostics" {
                self.pending.push(m);
            }
        }
    }

    pub fn open(&mut self, path: &Path) -> String {
        let uri = uri(path);
        let text = std::fs::read_to_string(path).expect("fixture file");
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "helm", "version": 1, "text": text}}),
        );
        uri
    }

    pub fn change(&mut self, uri: &str, version: i64, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }

    /// Shuts the server down; returns its exit status code.
    pub fn shutdown(mut self) -> Option<i32> {
        let result = self.call("shutdown", Value::Null);
        assert_eq!(result["result"], Value::Null, "{result}");
        self.notify("exit", Value::Null);
        let deadline = Instant::now() + HANG;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// A copy of `fixtures/lsp/app` to edit.
pub fn chart_copy() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let to = dir.path().join("app");
    copy_dir(&crate::fixture("lsp/app"), &to);
    let to = to.canonicalize().expect("canonical");
    (dir, to)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir") {
        let entry = entry.expect("entry");
        let path = entry.path();
        if path.is_dir() {
            copy_dir(&path, &to.join(entry.file_name()));
        } else {
            std::fs::copy(&path, to.join(entry.file_name())).expect("copy");
        }
    }
}

fn range(l1: u64, c1: u64, l2: u64, c2: u64) -> Value {
    json!({"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}})
}

fn codes(list: &[Value]) -> Vec<String> {
    list.iter()
        .map(|d| d["code"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn at(uri: &str, line: u64, character: u64) -> Value {
    json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}})
}

fn has(list: &[Value], code: &str) -> bool {
    codes(list).iter().any(|c| c == code)
}

#[test]
fn lsp_diagnostics_on_open_sit_on_the_template_line_with_code_and_rule_page() {
    if crate::tool("helm").is_none() {
        return;
    }
    let (_dir, chart) = chart_copy();
    let mut client = Client::start();
    let job = client.open(&chart.join("templates/job.yaml"));
    let list = client.diagnostics(&job, |l| has(l, "CS301"));
    let d = list
        .iter()
        .find(|d| d["code"] == "CS301")
        .expect("CS301 is published");
    assert_eq!(d["range"], range(7, 31, 7, 54));
    assert_eq!(d["severity"], 1);
    assert_eq!(d["source"], "chartseq");
    assert!(
        d["codeDescription"]["href"]
            .as_str()
            .is_some_and(|h| h.ends_with("/rules/CS301-one-sided-readiness.md")),
        "{d}"
    );
    assert!(
        d["message"].as_str().is_some_and(|m| m.starts_with(
            "`helm.sh/readiness-success` without a non-empty `helm.sh/readiness-failure` is ignored\nhelp: add `helm.sh/readiness-failure`"
        )),
        "{d}"
    );

    // Hover on the expression: what it reads, and the fallback while its pair is missing.
    let hover = client.request("textDocument/hover", at(&job, 7, 40));
    assert_eq!(
        hover["contents"]["value"],
        "**`helm.sh/readiness-success`**: ready when any expression holds\n\n- `{.succeeded} >= 1`: reads `{.status.succeeded}` and compares it `>=` `1` (a number)\n\n`helm.sh/readiness-failure` is not set: Helm ignores this half and judges the resource by its default status checks (kstatus) (CS301)"
    );
    // The quick fix adds the missing half with the kind's failure expression.
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": job}, "range": d["range"], "context": {"diagnostics": [d]}}),
    );
    let edit = &actions[0]["edit"]["changes"][&job][0];
    assert_eq!(edit["range"], range(8, 0, 8, 0));
    assert_eq!(
        edit["newText"],
        "    helm.sh/readiness-failure: '[\"{.failed} >= 1\"]'\n"
    );
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn lsp_misspelt_group_is_reported_fixed_and_cleared_and_the_group_is_navigable() {
    if crate::tool("helm").is_none() {
        return;
    }
    let (_dir, chart) = chart_copy();
    let mut client = Client::start();
    let app_path = chart.join("templates/app.yaml");
    let app = client.open(&app_path);
    client.diagnostics(&app, |l| !has(l, "CS101"));
    // Typed, not saved: the unsaved buffer is what is linted.
    let original = std::fs::read_to_string(&app_path).expect("app.yaml");
    let typo = original.replace("'[\"database\"]'", "'[\"databse\"]'");
    client.change(&app, 2, &typo);
    let list = client.diagnostics(&app, |l| has(l, "CS101"));
    let d = list
        .iter()
        .find(|d| d["code"] == "CS101")
        .expect("CS101")
        .clone();
    assert_eq!(d["range"]["start"]["line"], 6);
    assert!(
        d["message"].as_str().is_some_and(
            |m| m.contains("depends on `databse`") && m.contains("did you mean `database`?")
        ),
        "{d}"
    );
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": app}, "range": d["range"], "context": {"diagnostics": [d]}}),
    );
    assert_eq!(actions[0]["title"], "Replace `databse` with `database`");
    let edit = &actions[0]["edit"]["changes"][&app][0];
    assert_eq!(edit["range"], range(6, 43, 6, 50));
    assert_eq!(edit["newText"], "database");
    // The fixed buffer, saved: the finding is gone.
    client.change(&app, 3, &original);
    client.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": app}, "text": original}),
    );
    client.diagnostics(&app, |l| !has(l, "CS101"));

    // Hover: the group's batch, what it waits for and what waits for it.
    let hover = client.request("textDocument/hover", at(&app, 6, 45));
    let text = hover["contents"]["value"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("**resource group `database`** of chart app: batch 1\n\n- waits for: `subchart app/cache`, `subchart app/queue`\n- waited for by: `app`, `migrate`\n- resources:\n  - ConfigMap/database (app/templates/database.yaml)"),
        "{text}"
    );
    // Definition: the resource that declares it.
    let database = uri(&chart.join("templates/database.yaml"));
    let definition = client.request("textDocument/definition", at(&app, 6, 45));
    assert_eq!(
        definition,
        json!([{"uri": database, "range": range(5, 28, 5, 36)}])
    );
    // References from the declaration: every depends-on naming it.
    let references = client.request(
        "textDocument/references",
        json!({"textDocument": {"uri": database}, "position": {"line": 5, "character": 30}, "context": {"includeDeclaration": false}}),
    );
    assert_eq!(
        references,
        json!([
            {"uri": app, "range": range(6, 43, 6, 51)},
            {"uri": uri(&chart.join("templates/job.yaml")), "range": range(6, 43, 6, 51)},
        ])
    );
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn lsp_subcharts_navigate_and_complete_and_groups_complete_per_level() {
    if crate::tool("helm").is_none() {
        return;
    }
    let (_dir, chart) = chart_copy();
    let mut client = Client::start();
    let chart_yaml = client.open(&chart.join("Chart.yaml"));
    client.diagnostics(&chart_yaml, |_| true);
    // `depends-on: [cache]` to the dependency, and back.
    let definition = client.request("textDocument/definition", at(&chart_yaml, 8, 18));
    assert_eq!(
        definition,
        json!([{"uri": chart_yaml, "range": range(4, 10, 4, 15)}])
    );
    let references = client.request(
        "textDocument/references",
        json!({"textDocument": {"uri": chart_yaml}, "position": {"line": 4, "character": 12}, "context": {"includeDeclaration": false}}),
    );
    assert_eq!(
        references,
        json!([{"uri": chart_yaml, "range": range(8, 17, 8, 22)}])
    );
    let hover = client.request("textDocument/hover", at(&chart_yaml, 4, 12));
    assert_eq!(
        hover["contents"]["value"],
        "**subchart `cache`** of chart app: batch 1 of its subcharts\n\n- installed with: nothing"
    );
    let completion = client.request("textDocument/completion", at(&chart_yaml, 8, 17));
    let labels: Vec<&str> = completion
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["label"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(labels, ["cache", "queue"]);

    // Groups: those of the template's own chart level.
    let app = client.open(&chart.join("templates/app.yaml"));
    let completion = client.request("textDocument/completion", at(&app, 6, 43));
    let labels: Vec<&str> = completion
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["label"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(labels, ["app", "database", "migrate"]);
    // Keys, from what is typed at the start of an annotation line.
    let text = std::fs::read_to_string(chart.join("templates/app.yaml"))
        .expect("app.yaml")
        .replace("  annotations:\n", "  annotations:\n    helm.sh/re\n");
    client.change(&app, 2, &text);
    let completion = client.request("textDocument/completion", at(&app, 5, 14));
    let labels: Vec<&str> = completion
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["label"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        labels,
        [
            "helm.sh/resource-group",
            "helm.sh/readiness-success",
            "helm.sh/readiness-failure"
        ]
    );
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn lsp_render_failure_is_one_diagnostic_and_clears_the_last_findings() {
    if crate::tool("helm").is_none() {
        return;
    }
    let (_dir, chart) = chart_copy();
    let mut client = Client::start();
    let job = client.open(&chart.join("templates/job.yaml"));
    client.diagnostics(&job, |l| has(l, "CS301"));
    let database = client.open(&chart.join("templates/database.yaml"));
    let broken = std::fs::read_to_string(chart.join("templates/database.yaml"))
        .expect("database.yaml")
        .replace(
            "  key: value",
            "  key: {{ fail \"the database needs a password\" }}",
        );
    client.change(&database, 2, &broken);
    let list = client.diagnostics(&database, |l| has(l, "CS900"));
    assert_eq!(codes(&list), ["CS900"]);
    assert_eq!(list[0]["range"]["start"]["line"], 7);
    assert!(
        list[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("the database needs a password")),
        "{}",
        list[0]
    );
    // The job's finding is not shown as if it were current.
    let list = client.diagnostics(&job, |_| true);
    assert!(list.is_empty(), "{list:?}");
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn lsp_bad_input_is_answered_and_never_ends_the_server() {
    let mut client = Client::spawn();
    // Before initialize: refused, not fatal.
    let early = client.call("textDocument/hover", at("file:///nowhere/x.yaml", 0, 0));
    assert_eq!(early["error"]["code"], -32002, "{early}");
    let result = client.request("initialize", json!({"processId": null, "capabilities": {}}));
    assert!(result["capabilities"]["completionProvider"].is_object());
    client.notify("initialized", json!({}));
    // A file outside any chart, a half-typed annotation, a request cancelled, an unknown one.
    let dir = tempfile::tempdir().expect("tempdir");
    let loose = dir.path().join("loose.yaml");
    std::fs::write(&loose, "helm.sh/depends-on/resource-groups: '[\"\n").expect("write");
    let loose = client.open(&loose);
    assert_eq!(
        client.request("textDocument/hover", at(&loose, 0, 40)),
        Value::Null
    );
    assert_eq!(
        client.request("textDocument/definition", at(&loose, 0, 40)),
        json!([])
    );
    assert_eq!(
        client.request("textDocument/completion", at(&loose, 0, 39)),
        json!([])
    );
    client.notify("$/cancelRequest", json!({"id": 99}));
    let unknown = client.call("workspace/symbol", json!({"query": ""}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let nonsense = client.call("textDocument/hover", json!({"textDocument": 7}));
    assert_eq!(nonsense["error"]["code"], -32602, "{nonsense}");
    client.change("not a uri", 2, "x");
    client.notify("textDocument/didChange", json!(["garbage"]));
    // Still there.
    assert_eq!(
        client.request("textDocument/hover", at(&loose, 0, 0)),
        Value::Null
    );
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn lsp_requests_after_shutdown_are_refused_until_exit() {
    let mut client = Client::spawn();
    client.request("initialize", json!({"processId": null, "capabilities": {}}));
    client.notify("initialized", json!({}));
    assert_eq!(client.request("shutdown", Value::Null), Value::Null);
    let late = client.call("textDocument/hover", at("file:///x/y.yaml", 0, 0));
    assert_eq!(late["error"]["code"], -32600, "{late}");
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn lsp_a_chart_of_2000_templates_is_linted() {
    if crate::tool("helm").is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let chart = dir.path().join("big");
    std::fs::create_dir_all(chart.join("templates")).expect("mkdir");
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: big\nversion: 0.1.0\n",
    )
    .expect("write");
    for i in 0..2000 {
        let group = format!("g{}", i % 20);
        let depends = if i % 20 == 0 {
            String::new()
        } else {
            format!(
                "\n    helm.sh/depends-on/resource-groups: '[\"g{}\"]'",
                i % 20 - 1
            )
        };
        std::fs::write(
            chart.join(format!("templates/cm{i}.yaml")),
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{i}\n  annotations:\n    helm.sh/resource-group: {group}{depends}\ndata:\n  key: value\n"),
        )
        .expect("write");
    }
    let chart = chart.canonicalize().expect("canonical");
    let mut client = Client::start();
    let first = client.open(&chart.join("templates/cm1.yaml"));
    client.diagnostics(&first, |_| true);
    let hover = client.request("textDocument/hover", at(&first, 6, 44));
    assert!(
        hover["contents"]["value"]
            .as_str()
            .is_some_and(|t| t.starts_with("**resource group `g0`** of chart big: batch 1")),
        "{hover}"
    );
    assert_eq!(client.shutdown(), Some(0));
}

/// Neovim: `$CHARTSEQ_NVIM`, else `nvim` on `PATH`; missing, the test is skipped, unless
/// `CHARTSEQ_REQUIRE_TOOLS=1` (as `scripts/test.sh` sets, which installs it), where it fails.
fn nvim() -> Option<PathBuf> {
    let found = std::env::var_os("CHARTSEQ_NVIM")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|p| p.join("nvim"))
                    .find(|p| p.is_file())
            })
        })
        .filter(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var("CHARTSEQ_REQUIRE_TOOLS").as_deref() != Ok("1"),
            "nvim is not installed: $CHARTSEQ_NVIM or PATH must name it (scripts/test.sh installs it)"
        );
        #[expect(
            clippy::print_stderr,
            reason = "a skipped test says why on the test's own stderr"
        )]
        {
            eprintln!("skipped: nvim is not installed (scripts/test.sh installs it)");
        }
    }
    found
}

#[test]
fn lsp_in_neovim_a_misspelt_group_is_shown_fixed_hovered_and_followed() {
    let Some(nvim) = nvim() else { return };
    let Some(helm) = crate::tool("helm") else {
        return;
    };
    let (dir, chart) = chart_copy();
    let result = dir.path().join("result");
    // `chartseq` on PATH, as the README's configuration finds it.
    let bin = Path::new(env!("CARGO_BIN_EXE_chartseq"))
        .parent()
        .expect("the binary's directory");
    let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .expect("PATH");
    let output = Command::new(nvim)
        .args(["--headless", "--clean", "-n", "-c"])
        .arg(format!(
            "luafile {}",
            crate::root().join("tests/nvim/done_when.lua").display()
        ))
        .env("CHARTSEQ_INIT", crate::root().join("tests/nvim/init.lua"))
        .env("PATH", path)
        .env("CHARTSEQ_CHART", &chart)
        .env("CHARTSEQ_RESULT", &result)
        .env("CHARTSEQ_HELM", helm)
        .env("HOME", dir.path())
        .env("XDG_STATE_HOME", dir.path())
        .env("XDG_DATA_HOME", dir.path())
        .env("XDG_CACHE_HOME", dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("nvim runs");
    let outcome = std::fs::read_to_string(&result).unwrap_or_default();
    assert!(
        outcome.starts_with("ok ") && output.status.success(),
        "{outcome}\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    // The saved file carries the fix.
    let saved = std::fs::read_to_string(chart.join("templates/app.yaml")).expect("app.yaml");
    assert!(saved.contains("'[\"database\"]'"), "{saved}");
}

#[test]
fn lsp_readme_neovim_configuration_is_the_one_the_editor_test_runs() {
    let readme = std::fs::read_to_string(crate::root().join("README.md")).expect("README");
    let init = std::fs::read_to_string(crate::root().join("tests/nvim/init.lua")).expect("init");
    assert!(
        readme.contains(&format!("```lua\n{init}```")),
        "README's Neovim block differs from tests/nvim/init.lua"
    );
}

#[test]
fn lsp_hover_on_a_werf_resource_shows_its_step_in_werfs_order() {
    if crate::tool("helm").is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let chart = dir.path().join("auto");
    copy_dir(&crate::fixture("migrate/werf/auto"), &chart);
    let chart = chart.canonicalize().expect("canonical");
    let mut client = Client::start();
    let app = client.open(&chart.join("templates/app.yaml"));
    client.diagnostics(&app, |_| true);
    let hover = client.request("textDocument/hover", at(&app, 7, 2));
    assert_eq!(
        hover["contents"]["value"],
        "**werf** installs `ConfigMap/app-config` in step 2 of 2: `install:weight=0`"
    );
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn lsp_misspelt_sequencing_key_is_renamed_by_its_quick_fix() {
    if crate::tool("helm").is_none() {
        return;
    }
    let (_dir, chart) = chart_copy();
    let mut client = Client::start();
    let path = chart.join("templates/app.yaml");
    let app = client.open(&path);
    client.diagnostics(&app, |_| true);
    let typo = std::fs::read_to_string(&path)
        .expect("app.yaml")
        .replace("helm.sh/resource-group: app", "helm.sh/resource-gruop: app");
    client.change(&app, 2, &typo);
    let list = client.diagnostics(&app, |l| has(l, "CS202"));
    let d = list
        .iter()
        .find(|d| d["code"] == "CS202")
        .expect("CS202")
        .clone();
    assert_eq!(d["range"], range(5, 4, 5, 26));
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": app}, "range": d["range"], "context": {"diagnostics": [d]}}),
    );
    assert_eq!(
        actions[0]["title"],
        "Rename `helm.sh/resource-gruop` to `helm.sh/resource-group`"
    );
    assert_eq!(
        actions[0]["edit"]["changes"][&app],
        json!([{"range": range(5, 4, 5, 26), "newText": "helm.sh/resource-group"}])
    );
    assert_eq!(client.shutdown(), Some(0));
}

/// A helm that takes half a second to start: renders slow enough to show progress and to be
/// overtaken by an edit.
fn slow_helm(dir: &Path, helm: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join("slow-helm");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nsleep 0.5\nexec '{}' \"$@\"\n", helm.display()),
    )
    .expect("write");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    script
}

#[test]
fn lsp_a_slow_render_shows_progress_and_an_edit_during_it_drops_its_result() {
    let Some(helm) = crate::tool("helm") else {
        return;
    };
    let (dir, chart) = chart_copy();
    let slow = slow_helm(dir.path(), &helm);
    let mut client = {
        let mut cmd_client = Client::spawn_with_helm(&slow);
        let result = cmd_client.request(
            "initialize",
            json!({"processId": null, "capabilities": {"window": {"workDoneProgress": true}}}),
        );
        assert!(result["capabilities"].is_object());
        cmd_client.notify("initialized", json!({}));
        cmd_client
    };
    let path = chart.join("templates/app.yaml");
    let app = client.open(&path);
    // Typed while the first render runs: that render's findings describe text that is gone.
    let typo = std::fs::read_to_string(&path)
        .expect("app.yaml")
        .replace("'[\"database\"]'", "'[\"databse\"]'");
    client.change(&app, 2, &typo);
    let first = client.diagnostics(&app, |_| true);
    assert!(has(&first, "CS101"), "{first:?}");
    // Progress was shown for the slow render, begun and ended.
    let kinds: Vec<String> = client
        .seen
        .iter()
        .filter(|m| m["method"] == "$/progress")
        .map(|m| {
            m["params"]["value"]["kind"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert!(kinds.windows(2).any(|w| w == ["begin", "end"]), "{kinds:?}");
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn lsp_a_group_depending_on_itself_loses_that_name_by_its_quick_fix() {
    if crate::tool("helm").is_none() {
        return;
    }
    let (_dir, chart) = chart_copy();
    let mut client = Client::start();
    let path = chart.join("templates/app.yaml");
    let app = client.open(&path);
    client.diagnostics(&app, |_| true);
    let looped = std::fs::read_to_string(&path)
        .expect("app.yaml")
        .replace("'[\"database\"]'", "'[\"app\", \"database\"]'");
    client.change(&app, 2, &looped);
    let list = client.diagnostics(&app, |l| has(l, "CS001"));
    let d = list
        .iter()
        .find(|d| d["code"] == "CS001")
        .expect("CS001")
        .clone();
    assert_eq!(d["range"]["start"]["line"], 6);
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": app}, "range": d["range"], "context": {"diagnostics": [d]}}),
    );
    assert_eq!(
        actions[0]["title"],
        "Remove `app`: a group cannot wait for itself"
    );
    assert_eq!(
        actions[0]["edit"]["changes"][&app],
        json!([{"range": range(6, 42, 6, 49), "newText": ""}])
    );
    // A value a helper writes gets no edit.
    let templated = looped.replace(
        "'[\"app\", \"database\"]'",
        "'[\"app\", \"database\"{{ if false }}, \"x\"{{ end }}]'",
    );
    client.change(&app, 3, &templated);
    let list = client.diagnostics(&app, |l| has(l, "CS001"));
    let d = list
        .iter()
        .find(|d| d["code"] == "CS001")
        .expect("CS001")
        .clone();
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": app}, "range": d["range"], "context": {"diagnostics": [d]}}),
    );
    assert_eq!(actions, json!([]));
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn lsp_a_half_typed_depends_on_is_diagnosed_and_still_completes() {
    if crate::tool("helm").is_none() {
        return;
    }
    let (_dir, chart) = chart_copy();
    let mut client = Client::start();
    let path = chart.join("templates/app.yaml");
    let app = client.open(&path);
    client.diagnostics(&app, |_| true);
    let half = std::fs::read_to_string(&path)
        .expect("app.yaml")
        .replace("'[\"database\"]'", "'[\"");
    client.change(&app, 2, &half);
    let list = client.diagnostics(&app, |l| !l.is_empty());
    assert!(!list.is_empty(), "the half-typed value is reported");
    let completion = client.request("textDocument/completion", at(&app, 6, 43));
    let labels: Vec<&str> = completion
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["label"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(labels, ["app", "database", "migrate"]);
    assert_eq!(
        client.request("textDocument/hover", at(&app, 6, 42)),
        Value::Null
    );
    assert_eq!(client.shutdown(), Some(0));
}

/// Hover on the resources of the chart at `fixtures/<fixture>`: `(template, line, text)`.
fn dialect_hovers(fixture: &str, hovers: &[(&str, u64, &str)]) {
    if crate::tool("helm").is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let chart = dir.path().join("chart");
    copy_dir(&crate::fixture(fixture), &chart);
    let chart = chart.canonicalize().expect("canonical");
    let mut client = Client::start();
    for (template, line, want) in hovers {
        let file = client.open(&chart.join(template));
        client.diagnostics(&file, |_| true);
        let hover = client.request("textDocument/hover", at(&file, *line, 2));
        assert_eq!(hover["contents"]["value"], *want, "{template}:{line}");
    }
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn lsp_hover_on_an_argo_cd_resource_shows_its_sync_phase_and_wave() {
    dialect_hovers(
        "migrate/argo/sync-waves",
        &[
            // A hook named by generateName: Argo CD creates it under a new name each sync.
            (
                "templates/manifests.yaml",
                2,
                "**Argo CD** installs `Job/upgrade-sql-schema*` in step 1 of 5: `PreSync:wave=0`",
            ),
            // On the document's first line, above its `kind:`: that document's resource.
            (
                "templates/manifests.yaml",
                16,
                "**Argo CD** installs `ReplicaSet/backend` in step 2 of 5: `Sync:wave=0`",
            ),
            (
                "templates/manifests.yaml",
                47,
                "**Argo CD** installs `Job/maint-page-up` in step 3 of 5: `Sync:wave=1`",
            ),
        ],
    );
}

#[test]
fn lsp_hover_on_a_kapp_resource_shows_its_change_group_and_what_it_waits_for() {
    dialect_hovers(
        "migrate/kapp/kontinuous",
        &[
            (
                "templates/configmap.yaml",
                1,
                "**kapp** installs `ConfigMap/app-env` in step 1 of 5: `change-groups.kapp.k14s.io/pod-related`",
            ),
            (
                "templates/namespace.yaml",
                1,
                "**kapp** installs `Namespace/demo` in step 2 of 5: `ungrouped` (waits for nothing)",
            ),
            (
                "templates/app.yaml",
                1,
                "**kapp** installs `Deployment/app` in step 5 of 5: `ungrouped#2` (after steps 1, 4)",
            ),
        ],
    );
}

#[test]
fn lsp_hover_on_a_kots_resource_shows_its_phase() {
    dialect_hovers(
        "migrate/kots/phases",
        &[
            (
                "templates/crd.yaml",
                1,
                "**KOTS** installs `CustomResourceDefinition/tasks.example.com` in step 1 of 5: `phase=-1`",
            ),
            (
                "templates/migrate.yaml",
                1,
                "**KOTS** installs `Job/migrate` in step 3 of 5: `phase=0 after StatefulSet/database`",
            ),
        ],
    );
}

#[test]
fn lsp_readiness_hover_reads_each_expression_as_apply_evaluates_it() {
    if crate::tool("helm").is_none() {
        return;
    }
    let (_dir, chart) = chart_copy();
    let path = chart.join("templates/job.yaml");
    let text = std::fs::read_to_string(&path).expect("job.yaml").replace(
        "    helm.sh/readiness-success: '[\"{.succeeded} >= 1\"]'\n",
        "    helm.sh/readiness-success: '[\"{.succeeded} >= 1\", \"{.conditions[?(@.type==''Complete'')].status} == \\\"True\\\"\"]'\n    helm.sh/readiness-failure: '[\"{.failed} => 1\", \"{.phase} < Done\", \"{.spec.x} == 1\"]'\n",
    );
    std::fs::write(&path, &text).expect("write");
    let mut client = Client::start();
    let job = client.open(&path);
    client.diagnostics(&job, |l| has(l, "CS302"));
    assert_eq!(
        client.request("textDocument/hover", at(&job, 7, 40))["contents"]["value"],
        "**`helm.sh/readiness-success`**: ready when any expression holds\n\n- `{.succeeded} >= 1`: reads `{.status.succeeded}` and compares it `>=` `1` (a number)\n- `{.conditions[?(@.type=='Complete')].status} == \"True\"`: reads `{.status.conditions[?(@.type=='Complete')].status}` and compares it `==` `True` (a string)"
    );
    assert_eq!(
        client.request("textDocument/hover", at(&job, 8, 40))["contents"]["value"],
        "**`helm.sh/readiness-failure`**: failed when any expression holds\n\n- `{.failed} => 1`: does not parse (CS302) at column 11: unsupported operator `=>`: use one of == != < <= > >= (did you mean `>=`?); never evaluated\n- `{.phase} < Done`: reads `{.status.phase}` and compares it `<` `Done` (a string); never holds: `<` compares numbers only (CS303)\n- `{.spec.x} == 1`: reads `{.status.spec.x}` and compares it `==` `1` (a number); never holds: `spec` is read under `.status` (CS304)"
    );
    // A list that is not JSON: said as such, nothing evaluated.
    let broken = text.replace("'[\"{.failed} => 1\"", "'[{.failed} => 1\"");
    client.change(&job, 2, &broken);
    assert_eq!(
        client.request("textDocument/hover", at(&job, 8, 40))["contents"]["value"],
        "**`helm.sh/readiness-failure`**: failed when any expression holds\n\nnot a readiness list: the value is not valid JSON (key must be a string at line 1 column 3); write a JSON array of expressions: `'[\"{.phase} == Running\"]'`"
    );
    assert_eq!(client.shutdown(), Some(0));
}

/// A helm whose first render writes its PID and sleeps (`exec`: the PID is the sleeping
/// process); every later render is the real helm's.
#[cfg(target_os = "linux")]
fn stuck_helm(dir: &Path, helm: &Path) -> (PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let script = dir.join("stuck-helm");
    let pid = dir.join("pid");
    let first = dir.join("first");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nif mkdir '{first}' 2>/dev/null; then\n  echo $$ > '{pid}.tmp' && mv '{pid}.tmp' '{pid}'\n  exec sleep 300\nfi\nexec '{helm}' \"$@\"\n",
            first = first.display(),
            pid = pid.display(),
            helm = helm.display()
        ),
    )
    .expect("write");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    (script, pid)
}

#[cfg(target_os = "linux")]
#[test]
fn lsp_a_newer_edit_kills_the_stale_render_and_shows_its_own() {
    let Some(helm) = crate::tool("helm") else {
        return;
    };
    let (dir, chart) = chart_copy();
    let (script, pid_file) = stuck_helm(dir.path(), &helm);
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).expect("mkdir");
    let mut client = Client::initialized(Client::spawn_env(Some(script), &[("TMPDIR", &tmp)]));
    let path = chart.join("templates/app.yaml");
    let app = uri(&path);
    let typo = std::fs::read_to_string(&path)
        .expect("app.yaml")
        .replace("'[\"database\"]'", "'[\"databse\"]'");
    // Opened unsaved: the first render works on a copy in a temporary directory.
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": app, "languageId": "helm", "version": 1, "text": typo}}),
    );
    let deadline = Instant::now() + HANG;
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
        {
            break pid;
        }
        assert!(Instant::now() < deadline, "the first render never ran helm");
        std::thread::sleep(Duration::from_millis(10));
    };
    let proc = PathBuf::from(format!("/proc/{pid}"));
    assert!(proc.exists(), "the first render's helm runs");
    // A newer edit while that helm sleeps: it is stopped, and the edit's render is shown.
    client.change(&app, 2, &typo);
    let list = client.diagnostics(&app, |l| has(l, "CS101"));
    assert!(has(&list, "CS101"), "{list:?}");
    // Killed and reaped (a zombie keeps its /proc entry), its copy of the chart removed.
    assert!(
        !proc.exists(),
        "the stale render's helm ({pid}) still runs or was never reaped"
    );
    let left: Vec<String> = std::fs::read_dir(&tmp)
        .expect("tmp")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
    assert_eq!(client.shutdown(), Some(0));
}

#[test]
fn lsp_a_ci_values_file_shows_what_only_its_values_find() {
    if crate::tool("helm").is_none() {
        return;
    }
    let (_dir, chart) = chart_copy();
    std::fs::create_dir(chart.join("ci")).expect("mkdir");
    std::fs::write(
        chart.join("values.yaml"),
        "extraAnnotations:\n  helm.sh/resource-group: extra\n  helm.sh/depends-on/resource-groups: '[\"app\"]'\notherDeps: '[\"app\"]'\n",
    )
    .expect("write");
    let ci_text = "# a values set chart-testing installs\nextraAnnotations:\n  helm.sh/resource-group: extra\n  helm.sh/depends-on/resource-groups: '[\"ap\"]'\notherDeps: '[\"extr\"]'\n";
    std::fs::write(chart.join("ci/typo-values.yaml"), ci_text).expect("write");
    // One group's annotations inserted whole from values, one value inserted into a line.
    std::fs::write(
        chart.join("templates/extra.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n  annotations:\n    {{- toYaml .Values.extraAnnotations | nindent 4 }}\n",
    )
    .expect("write");
    std::fs::write(
        chart.join("templates/other.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n  annotations:\n    helm.sh/resource-group: other\n    helm.sh/depends-on/resource-groups: {{ .Values.otherDeps | quote }}\n",
    )
    .expect("write");
    let mut client = Client::start();
    let ci = client.open(&chart.join("ci/typo-values.yaml"));
    let list = client.diagnostics(&ci, |l| !l.is_empty());
    let other = uri(&chart.join("templates/other.yaml"));
    // Only what these values bring: the default values' findings (CS203, CS301) stay where
    // they are, once.
    assert_eq!(codes(&list), ["CS101", "CS101"], "{list:?}");
    assert_eq!(list[0]["range"], range(3, 2, 3, 46));
    assert!(
        list[0]["message"].as_str().is_some_and(|m| m.starts_with(
            "resource group `extra` depends on `ap`, which no resource of chart app declares"
        )),
        "{}",
        list[0]
    );
    assert_eq!(list[1]["range"], range(0, 0, 0, 0));
    assert!(
        list[1]["message"].as_str().is_some_and(|m| m.starts_with(
            "resource group `other` depends on `extr`, which no resource of chart app declares"
        ) && m
            .ends_with("\nnote: found only with these values, at templates/other.yaml:7")),
        "{}",
        list[1]
    );
    assert_eq!(
        list[1]["relatedInformation"],
        json!([{"location": {"uri": other, "range": range(6, 4, 6, 71)}, "message": "found here with these values"}])
    );
    let job = client.open(&chart.join("templates/job.yaml"));
    let list = client.diagnostics(&job, |l| !l.is_empty());
    assert_eq!(codes(&list), ["CS301"]);
    // Nothing of the values file's rendering lands on the templates.
    for m in client.seen.iter().chain(&client.pending) {
        if m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] != ci {
            let list = m["params"]["diagnostics"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            assert!(!has(&list, "CS101"), "{m}");
        }
    }
    // The buffer as typed is the values file rendered.
    client.change(&ci, 2, &ci_text.replace("[\"ap\"]", "[\"app\"]"));
    let says = |d: &Value, what: &str| d["message"].as_str().is_some_and(|m| m.contains(what));
    let list = client.diagnostics(&ci, |l| !l.iter().any(|d| says(d, "depends on `ap`")));
    assert!(
        list.iter().any(|d| says(d, "depends on `extr`")),
        "{list:?}"
    );
    assert_eq!(client.shutdown(), Some(0));
}

#[cfg(target_os = "linux")]
#[test]
fn lsp_exit_stops_a_running_render() {
    let Some(helm) = crate::tool("helm") else {
        return;
    };
    let (dir, chart) = chart_copy();
    let (script, pid_file) = stuck_helm(dir.path(), &helm);
    let mut client = Client::initialized(Client::spawn_env(Some(script), &[]));
    client.open(&chart.join("templates/app.yaml"));
    let deadline = Instant::now() + HANG;
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
        {
            break pid;
        }
        assert!(Instant::now() < deadline, "the render never ran helm");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(client.shutdown(), Some(0));
    // The server is gone, and so is the helm of its last render: not left to run on.
    assert!(
        !PathBuf::from(format!("/proc/{pid}")).exists(),
        "the render's helm ({pid}) outlived the server"
    );
}
