//! Language server speed, as an editor sees it: a scripted editing sequence replayed against
//! `chartseq lsp` over its standard input and output, on a copy of `fixtures/lsp/app`.
//!
//! `cargo bench --bench lsp` (needs helm: `$CHARTSEQ_HELM` or `PATH`):
//! 1. save with a misspelt group, until CS101 is published; save the fix, until it is gone
//!    (target: median under 300 ms from the save, helm's render included);
//! 2. hover, definition, references and completion on the group (target: median under 20 ms);
//! 3. with the corpus (`$CHARTSEQ_CORPUS` or `../shared/corpus`), a save of a real chart's
//!    template (ingress-nginx) to its diagnostics (target: median under 300 ms).
//!
//! Exits 1 when a target is missed. `-- --runs N` changes the number of edits and requests.

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
    let mut child = Command::new(env!("CARGO_BIN_EXE_chartseq"))
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
    let mut saves = Vec::with_capacity(runs * 2);
    let mut version = 1;
    for _ in 0..runs {
        for (text, want) in [(&typo, true), (&good, false)] {
            version += 1;
            std::fs::write(&path, text).expect("save");
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

    // 2. Requests answered from the last analysis.
    let at = json!({"textDocument": {"uri": uri}, "position": {"line": 6, "character": 45}, "context": {"includeDeclaration": true}});
    let mut figures = Vec::new();
    for method in [
        "textDocument/hover",
        "textDocument/definition",
        "textDocument/references",
        "textDocument/completion",
    ] {
        let times: Vec<Duration> = (0..runs * 10)
            .map(|_| {
                let started = Instant::now();
                let result = client.request(method, &at);
                assert!(!result.is_null(), "{method} answered nothing");
                started.elapsed()
            })
            .collect();
        figures.push((method, median(times)));
    }
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
    client.request("shutdown", &Value::Null);
    client.notify("exit", &Value::Null);
    let _ = child.wait();

    let save = median(saves.clone());
    let worst = saves.iter().max().copied().unwrap_or_default();
    let mut missed = false;
    println!(
        "save to diagnostics: median {:.1} ms, worst {:.1} ms over {} saves (target: median under 300 ms)",
        ms(save),
        ms(worst),
        saves.len()
    );
    missed |= save > Duration::from_millis(300);
    if !real_saves.is_empty() {
        let real = median(real_saves.clone());
        println!(
            "save to diagnostics, ingress-nginx from the corpus: median {:.1} ms over {} saves (target: median under 300 ms)",
            ms(real),
            real_saves.len()
        );
        missed |= real > Duration::from_millis(300);
    }
    for (method, time) in figures {
        println!(
            "{method}: median {:.2} ms over {} requests (target: under 20 ms)",
            ms(time),
            runs * 10
        );
        missed |= time > Duration::from_millis(20);
    }
    if missed {
        println!("a target was missed");
        std::process::exit(1);
    }
}
