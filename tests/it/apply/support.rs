//! What the apply tests share: a test API server per test, the `chartseq` binary pointed at
//! it, and views of what the server saw.

use std::process::Command;
use std::time::{Duration, Instant};

use super::apiserver::{self, Handle, LogEntry, RequestEntry, Scenario};
use crate::{chartseq, run};

pub struct Env {
    pub dir: tempfile::TempDir,
    pub server: Handle,
}

pub fn start(scenario: &str) -> Env {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let scenario = Scenario::parse(scenario).expect("the scenario parses");
    let server = apiserver::spawn(scenario, dir.path());
    Env { dir, server }
}

impl Env {
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = chartseq();
        cmd.args(args)
            .arg("--kubeconfig")
            .arg(&self.server.kubeconfig);
        cmd
    }

    pub fn run(&self, args: &[&str]) -> (i32, String, String) {
        run(&mut self.cmd(args))
    }

    pub fn log(&self) -> Vec<LogEntry> {
        self.server.server.log()
    }

    /// When `verb` first happened to `kind/name` (not dry runs).
    pub fn at(&self, verb: &str, kind: &str, name: &str) -> Option<u64> {
        self.log()
            .iter()
            .find(|e| e.verb == verb && e.kind == kind && e.name == name && !e.dry_run)
            .map(|e| e.at_ms)
    }

    pub fn exists(&self, kind: &str, name: &str) -> bool {
        self.server
            .server
            .object(kind, Some("default"), name)
            .is_some()
    }

    /// Where `verb` first happened to `kind/name` in the server's log (dry runs excluded):
    /// for ordering without ties.
    pub fn position(&self, verb: &str, kind: &str, name: &str) -> usize {
        let log = self.log();
        log.iter()
            .position(|e| e.verb == verb && e.kind == kind && e.name == name && !e.dry_run)
            .unwrap_or_else(|| panic!("no {verb} of {kind}/{name} in {log:#?}"))
    }

    /// When `verb` last happened to `kind/name`.
    pub fn last_at(&self, verb: &str, kind: &str, name: &str) -> Option<u64> {
        self.log()
            .iter()
            .rev()
            .find(|e| e.verb == verb && e.kind == kind && e.name == name && !e.dry_run)
            .map(|e| e.at_ms)
    }

    /// Every object but the namespaces the server starts with, once pending deletions (the
    /// release Secrets are not waited for) have run.
    pub fn leftovers(&self) -> Vec<String> {
        let started = Instant::now();
        loop {
            let left: Vec<String> = self
                .server
                .server
                .object_names()
                .into_iter()
                .filter(|n| !n.starts_with("Namespace/"))
                .collect();
            if left.is_empty() || started.elapsed() > Duration::from_secs(2) {
                return left;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn release_secret(&self, revision: u32) -> Option<serde_json::Value> {
        self.server.server.object(
            "Secret",
            Some("default"),
            &format!("sh.helm.release.v1.shop.v{revision}"),
        )
    }
}

pub fn t(env: &Env, verb: &str, kind: &str, name: &str) -> u64 {
    env.at(verb, kind, name)
        .unwrap_or_else(|| panic!("no {verb} of {kind}/{name} in {:#?}", env.log()))
}

/// A forced server-side apply by another field manager, over plain HTTP; the status code.
pub fn force_apply_as(env: &Env, manager: &str, path: &str, body: &str) -> u16 {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(env.server.addr).expect("the server accepts");
    let request = format!(
        "PATCH {path}?fieldManager={manager}&force=true HTTP/1.1\r\nHost: {}\r\nContent-Type: application/apply-patch+yaml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        env.server.addr,
        body.len()
    );
    stream
        .write_all(request.as_bytes())
        .expect("the request is sent");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .expect("the response is read");
    response
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

impl Env {
    /// Writes a rendered stream into the test's directory; its path.
    pub fn stream(&self, name: &str, text: &str) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).expect("the stream is written");
        path.to_str().expect("a UTF-8 path").to_owned()
    }

    /// A stored object in `default`.
    pub fn get(&self, kind: &str, name: &str) -> Option<serde_json::Value> {
        self.server.server.object(kind, Some("default"), name)
    }

    /// How often `verb` happened to `kind/name` (dry runs excluded).
    pub fn count(&self, verb: &str, kind: &str, name: &str) -> usize {
        self.log()
            .iter()
            .filter(|e| e.verb == verb && e.kind == kind && e.name == name && !e.dry_run)
            .count()
    }

    /// Creates an object as another client would (`kubectl apply --server-side` by default).
    pub fn create_as(&self, manager: &str, path: &str, body: &str) {
        assert!(
            matches!(force_apply_as(self, manager, path, body), 200 | 201),
            "{manager} could not write {path}"
        );
    }
}

impl Env {
    /// A release revision as stored: the storage object and the release JSON it holds,
    /// decoded as Helm decodes it (base64, gzip; a Secret's data is base64 once more).
    pub fn stored_release(
        &self,
        kind: &str,
        name: &str,
        revision: u32,
    ) -> Option<(serde_json::Value, serde_json::Value)> {
        let object = self.get(kind, &format!("sh.helm.release.v1.{name}.v{revision}"))?;
        let release = crate::decode_release(kind, &object)?;
        Some((object, release))
    }
}

impl Env {
    /// Every request the server saw, in the order they arrived.
    pub fn requests(&self) -> Vec<RequestEntry> {
        self.server.server.requests()
    }
}
