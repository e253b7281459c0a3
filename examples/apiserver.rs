//! A Kubernetes API server for trying `chartseq apply` by hand and for tests.
//!
//! `cargo run --example apiserver -- --port P [--scenario FILE]` prints the path of a
//! kubeconfig that points at it on its first line, then serves until interrupted. The
//! scenario format (readiness delays, failures, timed statuses, faults) is shown in
//! `fixtures/apply/scenario.yaml`.

#![expect(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a command-line program"
)]

#[path = "apiserver/server.rs"]
#[expect(dead_code, reason = "tests and benches use the inspection helpers")]
mod server;

use std::path::PathBuf;
use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!("usage: apiserver --port P [--scenario FILE] [--kubeconfig-dir DIR]");
    ExitCode::from(2)
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut port = 0u16;
    let mut scenario = server::Scenario::default();
    let mut dir = std::env::temp_dir();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--port", Some(p)) => match p.parse() {
                Ok(p) => port = p,
                Err(_) => return usage(),
            },
            ("--scenario", Some(f)) => match server::Scenario::load(&PathBuf::from(f)) {
                Ok(s) => scenario = s,
                Err(e) => {
                    eprintln!("apiserver: {e}");
                    return ExitCode::from(2);
                }
            },
            ("--kubeconfig-dir", Some(d)) => dir = PathBuf::from(d),
            _ => return usage(),
        }
    }
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("apiserver: binding port {port}: {e}");
            return ExitCode::from(2);
        }
    };
    let Ok(addr) = listener.local_addr() else {
        return ExitCode::from(2);
    };
    match server::write_kubeconfig(&dir, addr) {
        Ok(path) => println!("{}", path.display()),
        Err(e) => {
            eprintln!("apiserver: writing the kubeconfig: {e}");
            return ExitCode::from(2);
        }
    }
    println!("serving the Kubernetes API on http://{addr}");
    let server = server::Server::new(scenario);
    tokio::select! {
        () = server::serve(listener, server) => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    ExitCode::SUCCESS
}
