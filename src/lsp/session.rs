//! The session: open buffers, each chart's render state and last analysis, and the
//! scheduling of renders (a pause after typing, at once on open and save, one render per
//! chart at a time, a result that a newer edit made stale thrown away).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use lsp_server::{Message, Notification, Request, RequestId, Response};
use lsp_types::{PublishDiagnosticsParams, Url};

use super::LspOptions;
use super::analysis::{self, Analysis, Job};
use super::index::{self, FileIndex};
use crate::source::read::Cancel;

/// An open buffer.
pub struct Doc {
    pub text: String,
    pub version: i32,
    pub index: FileIndex,
}

/// A finished render.
pub struct Finished {
    root: PathBuf,
    generation: u64,
    analysis: Analysis,
}

/// One chart's render state.
#[derive(Default)]
pub struct ChartState {
    generation: u64,
    running: Option<Instant>,
    /// Stops the running render (its helm is killed) once a newer edit makes it stale.
    cancel: Option<Cancel>,
    /// A render is wanted at this time (a change waits for a pause in typing).
    due: Option<Instant>,
    /// The newest analysis (it may be a render failure).
    pub last: Option<Arc<Analysis>>,
    /// The newest analysis that rendered: the plan hover shows.
    pub good: Option<Arc<Analysis>>,
    published: BTreeSet<PathBuf>,
    progress: Option<String>,
}

pub struct Session {
    sender: Sender<Message>,
    options: LspOptions,
    progress_supported: bool,
    pub docs: BTreeMap<PathBuf, Doc>,
    pub charts: BTreeMap<PathBuf, ChartState>,
    results_tx: Sender<Finished>,
    results_rx: Receiver<Finished>,
    next_request: i32,
}

/// The file path of a `file:` URI.
pub fn path_of(uri: &Url) -> Option<PathBuf> {
    uri.to_file_path().ok()
}

impl Session {
    pub fn new(sender: Sender<Message>, options: LspOptions, progress_supported: bool) -> Self {
        let (results_tx, results_rx) = crossbeam_channel::unbounded();
        Self {
            sender,
            options,
            progress_supported,
            docs: BTreeMap::new(),
            charts: BTreeMap::new(),
            results_tx,
            results_rx,
            next_request: 0,
        }
    }

    pub fn results(&self) -> &Receiver<Finished> {
        &self.results_rx
    }

    pub fn respond(&self, response: Response) {
        // A client that went away reads no answer; the loop ends when its input closes.
        let _ = self.sender.send(response.into());
    }

    fn notify(&self, method: &str, params: impl serde::Serialize) {
        if let Ok(params) = serde_json::to_value(params) {
            let _ = self.sender.send(
                Notification {
                    method: method.to_owned(),
                    params,
                }
                .into(),
            );
        }
    }

    /// How long the loop may sleep before [`Session::tick`] has work.
    pub fn next_timer(&self) -> Duration {
        let now = Instant::now();
        let mut next = Duration::from_secs(3600);
        for chart in self.charts.values() {
            if let Some(due) = chart.due {
                next = next.min(due.saturating_duration_since(now));
            }
            if let (Some(started), None) = (chart.running, &chart.progress) {
                if self.progress_supported {
                    next =
                        next.min((started + super::PROGRESS_AFTER).saturating_duration_since(now));
                }
            }
        }
        next
    }

    /// Starts the renders that are due, and shows progress for the slow ones.
    pub fn tick(&mut self) {
        let now = Instant::now();
        let due: Vec<PathBuf> = self
            .charts
            .iter()
            .filter(|(_, c)| c.running.is_none() && c.due.is_some_and(|d| d <= now))
            .map(|(r, _)| r.clone())
            .collect();
        for root in due {
            self.start(&root);
        }
        if !self.progress_supported {
            return;
        }
        let slow: Vec<PathBuf> = self
            .charts
            .iter()
            .filter(|(_, c)| {
                c.progress.is_none()
                    && c.running
                        .is_some_and(|s| now.duration_since(s) >= super::PROGRESS_AFTER)
            })
            .map(|(r, _)| r.clone())
            .collect();
        for root in slow {
            self.next_request += 1;
            let token = format!("chartseq-render-{}", self.next_request);
            let _ = self.sender.send(
                Request::new(
                    RequestId::from(format!("chartseq-{}", self.next_request)),
                    "window/workDoneProgress/create".to_owned(),
                    serde_json::json!({ "token": token }),
                )
                .into(),
            );
            self.notify(
                "$/progress",
                serde_json::json!({
                    "token": token,
                    "value": {
                        "kind": "begin",
                        "title": "chartseq",
                        "message": format!("helm template {}", crate::source::display_path(&root)),
                    }
                }),
            );
            if let Some(c) = self.charts.get_mut(&root) {
                c.progress = Some(token);
            }
        }
    }

    fn start(&mut self, root: &Path) {
        let overlay = self
            .docs
            .iter()
            .filter(|(p, _)| p.starts_with(root))
            .filter(|(p, d)| std::fs::read(p).ok().as_deref() != Some(d.text.as_bytes()))
            .map(|(p, d)| (p.clone(), d.text.clone()))
            .collect();
        let ci_values = self
            .docs
            .keys()
            .filter(|p| analysis::is_ci_values(root, p))
            .cloned()
            .collect();
        let Some(chart) = self.charts.get_mut(root) else {
            return;
        };
        chart.generation += 1;
        chart.running = Some(Instant::now());
        chart.due = None;
        let cancel = Cancel::default();
        chart.cancel = Some(cancel.clone());
        let job = Job {
            root: root.to_path_buf(),
            overlay,
            helm: self.options.helm.clone(),
            ci_values,
            cancel,
        };
        let generation = chart.generation;
        let tx = self.results_tx.clone();
        let spawned = std::thread::Builder::new()
            .name("chartseq-render".to_owned())
            .spawn(move || {
                let analysis = analysis::analyze(&job);
                let _ = tx.send(Finished {
                    root: job.root,
                    generation,
                    analysis,
                });
            });
        if spawned.is_err() {
            chart.running = None;
            chart.cancel = None;
        }
    }

    /// A render finished: publish it unless a newer edit made it stale.
    pub fn finished(&mut self, finished: Finished) {
        let Some(chart) = self.charts.get_mut(&finished.root) else {
            return;
        };
        if finished.generation != chart.generation {
            return;
        }
        chart.running = None;
        chart.cancel = None;
        if let Some(token) = chart.progress.take() {
            self.notify(
                "$/progress",
                serde_json::json!({"token": token, "value": {"kind": "end"}}),
            );
        }
        let Some(chart) = self.charts.get_mut(&finished.root) else {
            return;
        };
        // A newer edit is waiting: these findings describe text that is gone.
        if chart.due.is_some() {
            return;
        }
        let analysis = Arc::new(finished.analysis);
        let mut files: BTreeSet<PathBuf> = analysis.diagnostics.keys().cloned().collect();
        let stale: Vec<PathBuf> = chart.published.difference(&files).cloned().collect();
        files.extend(stale);
        files.extend(
            self.docs
                .keys()
                .filter(|p| p.starts_with(&finished.root))
                .cloned(),
        );
        chart.published = analysis.diagnostics.keys().cloned().collect();
        chart.last = Some(Arc::clone(&analysis));
        if !analysis.render_failed {
            chart.good = Some(Arc::clone(&analysis));
        }
        for file in files {
            let Ok(uri) = Url::from_file_path(&file) else {
                continue;
            };
            let diagnostics = analysis.diagnostics.get(&file).cloned().unwrap_or_default();
            let version = self.docs.get(&file).map(|d| d.version);
            self.notify(
                "textDocument/publishDiagnostics",
                PublishDiagnosticsParams {
                    uri,
                    diagnostics,
                    version,
                },
            );
        }
    }

    /// Wants a render of the chart a file belongs to, after `delay`.
    fn schedule(&mut self, path: &Path, delay: Duration) {
        let Some(root) = index::chart_root(path) else {
            return;
        };
        let chart = self.charts.entry(root).or_default();
        chart.due = Some(Instant::now() + delay);
        // The running render describes text that is gone: stop its helm now rather than let
        // it run to the end (its result would be dropped).
        if let Some(cancel) = &chart.cancel {
            cancel.cancel();
        }
    }

    /// Stops every running render and waits (at most `within`) for their helm to be gone:
    /// the server exits without leaving one running.
    pub fn stop_renders(&mut self, within: Duration) {
        let deadline = Instant::now() + within;
        for chart in self.charts.values() {
            if let Some(cancel) = &chart.cancel {
                cancel.cancel();
            }
        }
        while self.charts.values().any(|c| c.running.is_some()) {
            let Ok(finished) = self
                .results_rx
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            else {
                return;
            };
            if let Some(chart) = self.charts.get_mut(&finished.root) {
                if chart.generation == finished.generation {
                    chart.running = None;
                    chart.cancel = None;
                }
            }
        }
    }

    pub fn notification(&mut self, n: Notification) {
        let params = n.params;
        let uri_at = |pointer: &str| {
            params
                .pointer(pointer)
                .and_then(serde_json::Value::as_str)
                .and_then(|u| Url::parse(u).ok())
                .and_then(|u| path_of(&u))
        };
        match n.method.as_str() {
            "textDocument/didOpen" => {
                let Some(path) = uri_at("/textDocument/uri") else {
                    return;
                };
                let text = params
                    .pointer("/textDocument/text")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let version = params
                    .pointer("/textDocument/version")
                    .and_then(serde_json::Value::as_i64)
                    .unwrap_or(0) as i32;
                self.set_text(&path, text, version);
                self.schedule(&path, Duration::ZERO);
            }
            "textDocument/didChange" => {
                let Some(path) = uri_at("/textDocument/uri") else {
                    return;
                };
                // Full synchronisation: the last change holds the whole text.
                let text = params
                    .pointer("/contentChanges")
                    .and_then(serde_json::Value::as_array)
                    .and_then(|c| c.last())
                    .and_then(|c| c.get("text"))
                    .and_then(serde_json::Value::as_str);
                let Some(text) = text else { return };
                let version = params
                    .pointer("/textDocument/version")
                    .and_then(serde_json::Value::as_i64)
                    .unwrap_or(0) as i32;
                self.set_text(&path, text.to_owned(), version);
                self.schedule(&path, self.options.debounce);
            }
            "textDocument/didSave" => {
                let Some(path) = uri_at("/textDocument/uri") else {
                    return;
                };
                if let Some(text) = params.get("text").and_then(serde_json::Value::as_str) {
                    let version = self.docs.get(&path).map_or(0, |d| d.version);
                    self.set_text(&path, text.to_owned(), version);
                }
                self.schedule(&path, Duration::ZERO);
            }
            "textDocument/didClose" => {
                let Some(path) = uri_at("/textDocument/uri") else {
                    return;
                };
                self.docs.remove(&path);
                self.schedule(&path, Duration::ZERO);
            }
            _ => {}
        }
    }

    fn set_text(&mut self, path: &Path, text: String, version: i32) {
        let index = index::scan(path, &text);
        self.docs.insert(
            path.to_path_buf(),
            Doc {
                text,
                version,
                index,
            },
        );
    }

    pub fn request(&mut self, request: &Request) {
        let response = super::handlers::handle(self, request);
        self.respond(response);
    }

    /// The index of a file: its open buffer's, else the last render's.
    pub fn file_index(&self, path: &Path) -> Option<&FileIndex> {
        if let Some(doc) = self.docs.get(path) {
            return Some(&doc.index);
        }
        let root = index::chart_root(path)?;
        let chart = self.charts.get(&root)?;
        [&chart.last, &chart.good]
            .into_iter()
            .flatten()
            .find_map(|a| a.files.get(path))
    }

    /// Every file of one chart level of a chart with its index (open buffers over the last
    /// render), in path order. Borrowed, and a file's level asked once per directory (it
    /// depends on the directory only): a chart of thousands of templates answers in
    /// microseconds, not thousands of file-system lookups.
    pub fn level_files(&self, root: &Path, level: &Path) -> Vec<(&Path, &FileIndex)> {
        let mut all: BTreeMap<&Path, &FileIndex> = BTreeMap::new();
        // A render that failed read no files: the last one that rendered still knows them.
        if let Some(chart) = self.charts.get(root) {
            for analysis in [&chart.good, &chart.last].into_iter().flatten() {
                for (p, i) in &analysis.files {
                    all.insert(p.as_path(), i);
                }
            }
        }
        for (p, d) in &self.docs {
            if p.starts_with(root) {
                all.insert(p.as_path(), &d.index);
            }
        }
        let mut in_level: std::collections::HashMap<&Path, bool> = std::collections::HashMap::new();
        all.into_iter()
            .filter(|(p, _)| {
                let Some(dir) = p.parent() else {
                    return false;
                };
                *in_level
                    .entry(dir)
                    .or_insert_with(|| index::chart_dir(p).as_deref() == Some(level))
            })
            .collect()
    }
}
