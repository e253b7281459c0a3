//! Language server speed, as an editor sees it: a scripted editing sequence replayed against
//! `chartseq lsp` over its standard input and output, on a copy of `fixtures/lsp/app`.
//!
//! `cargo bench --bench lsp` (needs helm: `$CHARTSEQ_HELM` or `PATH`):
//! 1. save with a misspelt group, until CS101 is published; save the fix, until it is gone
//!    (target: median under 300 ms from the save, helm's render included);
//! 2. hover, definition, references and completion on the group (target: median under 20 ms);
//! 3. with the corpus (`$CHARTSEQ_CORPUS` or `../shared/corpus`), a save of a real chart's
//!    template (ingress-nginx) to its diagnostics (target: median under 300 ms);
//! 4. a generated chart of 2,000 templates: open and save to diagnostics (no target: not a
//!    typical chart), and the requests on it (target: median under 20 ms).
//!
//! Each figure is given as median and worst; `helm template` alone on the same charts shows
//! which part of a save's time is helm's.
//!
//! Exits 1 when a target is missed. `-- --runs N` changes the number of edits and requests;
//! `$CHARTSEQ_LSP_BIN` names another chartseq binary to measure (an earlier build, to compare).

#![expect(clippy::print_stdout, reason = "a benchmark reports on stdout")]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Client {
    stdin: ChildStdin,
    messages: Receiver<Value>,
    id: i64,
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
    fn send(&mut self, message: &Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write");
        self.stdin.flush().expect("flush");
    }

    fn notify(&mut self, method: &str, params: &Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn next(&self) -> Value {
        self.messages
            .recv_timeout(Duration::from_secs(120))
            .expect("the server answers")
    }

    fn request(&mut self, method: &str, params: &Value) -> Value {
        self.id += 1;
        let id = self.id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.next();
            if m["id"] == json!(id) && m.get("method").is_none() {
                return m["result"].clone();
            }
        }
    }

    /// Waits for the next diagnostics of `uri`.
    fn wait_any(&mut self) -> String {
        loop {
            let m = self.next();
            if m["method"] == "textDocument/publishDiagnostics" {
                return m["params"]["uri"].as_str().unwrap_or_default().to_owned();
            }
        }
    }

    /// Waits for diagnostics of `uri` where CS101 is present (`want`) or absent.
    fn wait_cs101(&mut self, uri: &str, want: bool) {
        loop {
            let m = self.next();
            if m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri {
                let has = m["params"]["diagnostics"]
                    .as_array()
                    .is_some_and(|l| l.iter().any(|d| d["code"] == "CS101"));
                if has == want {
                    return;
                }
            }
        }
    }
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

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Median and worst, in milliseconds.
fn spread(times: &[Duration]) -> String {
    let worst = times.iter().max().copied().unwrap_or_default();
    format!(
        "median {:.1} ms, worst {:.1} ms",
        ms(median(times.to_vec())),
        ms(worst)
    )
}

/// Saves `typo` then `good` to `path` `runs` times: the time from each save to the
/// diagnostics that show (or clear) CS101.
fn save_cycle(
    client: &mut Client,
    path: &Path,
    good: &str,
    typo: &str,
    runs: usize,
) -> Vec<Duration> {
    let uri = format!("file://{}", path.display());
    let mut saves = Vec::with_capacity(runs * 2);
    let mut version = 1;
    for _ in 0..runs {
        for (text, want) in [(typo, true), (good, false)] {
            version += 1;
            std::fs::write(path, text).expect("save");
            client.notify(
                "textDocument/didChange",
                &json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
            );
            let started = Instant::now();
            client.notify(
                "textDocument/didSave",
                &json!({"textDocument": {"uri": uri}, "text": text}),
            );
            client.wait_cs101(&uri, want);
            saves.push(started.elapsed());
        }
    }
    saves
}

/// Hover, definition, references and completion at one position, `n` times each.
fn requests(
    client: &mut Client,
    uri: &str,
    line: u32,
    character: u32,
    n: usize,
) -> Vec<(&'static str, Vec<Duration>)> {
    let at = json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}, "context": {"includeDeclaration": true}});
    let mut figures = Vec::new();
    for method in [
        "textDocument/hover",
        "textDocument/definition",
        "textDocument/references",
        "textDocument/completion",
    ] {
        let times: Vec<Duration> = (0..n)
            .map(|_| {
                let started = Instant::now();
                let result = client.request(method, &at);
                assert!(!result.is_null(), "{method} answered nothing");
                started.elapsed()
            })
            .collect();
        figures.push((method, times));
    }
    figures
}

/// A chart of `n` templates, one `ConfigMap` each, in 20 resource groups that depend on one
/// another in a chain.
fn big_chart(dir: &Path, n: usize) -> std::path::PathBuf {
    let chart = dir.join("big");
    std::fs::create_dir_all(chart.join("templates")).expect("mkdir");
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: big\nversion: 0.1.0\n",
    )
    .expect("write");
    for i in 0..n {
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
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{i}\n  annotations:\n    helm.sh/resource-group: g{}{depends}\ndata:\n  key: value\n",
                i % 20
            ),
        )
        .expect("write");
    }
    chart.canonicalize().expect("canonical")
}

/// `helm template` alone on a chart, `n` times: what of a save's time is helm's.
fn helm_alone(chart: &Path, n: usize) -> Option<Vec<Duration>> {
    let helm =
        std::env::var_os("CHARTSEQ_HELM").map_or_else(|| "helm".into(), std::path::PathBuf::from);
    (0..n)
        .map(|_| {
            let started = Instant::now();
            let status = Command::new(&helm)
                .args(["template", "release-name"])
                .arg(chart)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .ok()?;
            status.success().then(|| started.elapsed())
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let runs: usize = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(10);
    let dir = tempfile::tempdir().expect("tempdir");
    let chart = dir.path().join("app");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/lsp/app"),
        &chart,
    );
    let chart = chart.canonicalize().expect("canonical");
    // `$CHARTSEQ_LSP_BIN` measures another build of chartseq (an earlier commit's) the same way.
    let bin = std::env::var_os("CHARTSEQ_LSP_BIN").map_or_else(
        || env!("CARGO_BIN_EXE_chartseq").into(),
        std::path::PathBuf::from,
    );
    let mut child = Command::new(bin)
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("chartseq lsp starts");
    let stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, messages) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        while let Some(m) = read_message(&mut reader) {
            if tx.send(m).is_err() {
                break;
            }
        }
    });
    let mut client = Client {
        stdin,
        messages,
        id: 0,
    };
    client.request(
        "initialize",
        &json!({"processId": null, "capabilities": {}}),
    );
    client.notify("initialized", &json!({}));
    let path = chart.join("templates/app.yaml");
    let uri = format!("file://{}", path.display());
    let good = std::fs::read_to_string(&path).expect("app.yaml");
    let typo = good.replace("\"database\"", "\"databse\"");
    client.notify(
        "textDocument/didOpen",
        &json!({"textDocument": {"uri": uri, "languageId": "helm", "version": 1, "text": good}}),
    );
    client.wait_cs101(&uri, false);

    // 1. Save a typo, save the fix: the time from each save to the diagnostics.
    let saves = save_cycle(&mut client, &path, &good, &typo, runs);
    // 2. Requests answered from the last analysis.
    let figures = requests(&mut client, &uri, 6, 45, runs * 10);
    // 3. A real chart of the corpus (ingress-nginx, 36 templates), when it is there: save to
    //    diagnostics with nothing changed.
    let corpus = std::env::var_os("CHARTSEQ_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
        std::path::PathBuf::from,
    );
    let real = corpus.join("charts/kubernetes__ingress-nginx/charts/ingress-nginx");
    let mut real_saves = Vec::new();
    if real.join("Chart.yaml").is_file() {
        let copy = dir.path().join("ingress-nginx");
        copy_dir(&real, &copy);
        let copy = copy.canonicalize().expect("canonical");
        let file = copy.join("templates/controller-deployment.yaml");
        let uri = format!("file://{}", file.display());
        let text = std::fs::read_to_string(&file).expect("template");
        client.notify(
            "textDocument/didOpen",
            &json!({"textDocument": {"uri": uri, "languageId": "helm", "version": 1, "text": text}}),
        );
        while client.wait_any() != uri {}
        for _ in 0..runs {
            let started = Instant::now();
            client.notify(
                "textDocument/didSave",
                &json!({"textDocument": {"uri": uri}, "text": text}),
            );
            while client.wait_any() != uri {}
            real_saves.push(started.elapsed());
        }
    }
    // 4. A generated chart of 2,000 templates: a save of one of them to its diagnostics, and
    //    the requests on a group that 100 resources declare.
    let big = big_chart(dir.path(), 2000);
    let big_path = big.join("templates/cm1.yaml");
    let big_uri = format!("file://{}", big_path.display());
    let big_good = std::fs::read_to_string(&big_path).expect("cm1.yaml");
    let big_typo = big_good.replace("[\"g0\"]", "[\"g0x\"]");
    let opened = Instant::now();
    client.notify(
        "textDocument/didOpen",
        &json!({"textDocument": {"uri": big_uri, "languageId": "helm", "version": 1, "text": big_good}}),
    );
    client.wait_cs101(&big_uri, false);
    let big_open = opened.elapsed();
    let big_saves = save_cycle(
        &mut client,
        &big_path,
        &big_good,
        &big_typo,
        runs.div_ceil(2),
    );
    let big_figures = requests(&mut client, &big_uri, 6, 44, runs * 2);
    client.request("shutdown", &Value::Null);
    client.notify("exit", &Value::Null);
    let _ = child.wait();

    let mut missed = false;
    println!(
        "save to diagnostics, fixtures/lsp/app: {} over {} saves (target: median under 300 ms)",
        spread(&saves),
        saves.len()
    );
    missed |= median(saves.clone()) > Duration::from_millis(300);
    if let Some(helm) = helm_alone(&chart, saves.len()) {
        println!(
            "  helm template alone on it: {} over {} runs",
            spread(&helm),
            helm.len()
        );
    }
    if !real_saves.is_empty() {
        println!(
            "save to diagnostics, ingress-nginx from the corpus: {} over {} saves (target: median under 300 ms)",
            spread(&real_saves),
            real_saves.len()
        );
        missed |= median(real_saves.clone()) > Duration::from_millis(300);
    }
    println!(
        "chart of 2000 templates: open to diagnostics {:.1} ms; save to diagnostics {} over {} saves",
        ms(big_open),
        spread(&big_saves),
        big_saves.len()
    );
    if let Some(helm) = helm_alone(&big, 3) {
        println!(
            "  helm template alone on it: {} over {} runs",
            spread(&helm),
            helm.len()
        );
    }
    for (what, figures) in [
        ("fixtures/lsp/app", figures),
        ("chart of 2000 templates", big_figures),
    ] {
        for (method, times) in figures {
            println!(
                "{method}, {what}: {} over {} requests (target: median under 20 ms)",
                spread(&times),
                times.len()
            );
            missed |= median(times) > Duration::from_millis(20);
        }
    }
    if missed {
        println!("a target was missed");
        std::process::exit(1);
    }
}
