//! `chartseq lsp`: a language server over standard input and output that shows, where the
//! chart author types, what `chartseq lint` and `chartseq plan` know.
//!
//! A loop, a session and small handlers: the loop ([`run`]) reads the client's messages and
//! the background renders' results; the session ([`session`]) owns the open buffers and each
//! chart's last analysis; the handlers ([`handlers`]) answer hover, definition, references,
//! completion and code actions from that analysis without waiting for anything. Rendering is
//! helm's work and runs on a background thread per chart ([`analysis`]), from the buffers as
//! typed (an overlay copy of the chart) when they differ from disk. Nothing below this module
//! knows about editors.

mod analysis;
mod handlers;
pub mod index;
mod session;

use std::path::PathBuf;
use std::time::Duration;

use lsp_server::{Connection, Message};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, CompletionOptions,
    HoverProviderCapability, OneOf, SaveOptions, ServerCapabilities, TextDocumentSyncCapability,
    TextDocumentSyncKind, TextDocumentSyncOptions, TextDocumentSyncSaveOptions,
};

use crate::error::Error;

/// Settings of the server.
#[derive(Clone, Debug)]
pub struct LspOptions {
    /// `--helm`: the helm binary (else `$CHARTSEQ_HELM`, else `PATH`).
    pub helm: Option<PathBuf>,
    /// How long typing must pause before a changed buffer is rendered.
    pub debounce: Duration,
}

impl Default for LspOptions {
    fn default() -> Self {
        Self {
            helm: None,
            debounce: Duration::from_millis(DEBOUNCE_MS),
        }
    }
}

/// The pause after a change before its render starts.
pub const DEBOUNCE_MS: u64 = 250;

/// A render that takes longer than this shows `$/progress`.
pub const PROGRESS_AFTER: Duration = Duration::from_millis(200);

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::FULL),
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                    include_text: Some(true),
                })),
                ..TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec!["\"".into(), "/".into(), " ".into(), "[".into()]),
            ..CompletionOptions::default()
        }),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            ..CodeActionOptions::default()
        })),
        ..ServerCapabilities::default()
    }
}

/// Serves one client on standard input and output until it says `exit`.
pub fn run(options: &LspOptions) -> Result<(), Error> {
    let (connection, io_threads) = Connection::stdio();
    serve(&connection, options)?;
    drop(connection);
    io_threads
        .join()
        .map_err(|e| Error::new(format!("the language server's input or output failed: {e}")))
}

/// Serves one client on a connection until it says `exit` (or goes away).
pub fn serve(connection: &Connection, options: &LspOptions) -> Result<(), Error> {
    let caps = serde_json::to_value(capabilities())
        .map_err(|e| Error::new(format!("cannot encode the server capabilities: {e}")))?;
    // The handshake by hand: requests before `initialize` are answered ServerNotInitialized;
    // anything the client sends before `initialized` is served rather than refused.
    // The client went away (or said `exit`) before it initialized: nothing to serve.
    let Ok((id, init)) = connection.initialize_start() else {
        return Ok(());
    };
    let result = serde_json::json!({
        "capabilities": caps,
        "serverInfo": {"name": "chartseq", "version": env!("CARGO_PKG_VERSION")},
    });
    if connection
        .sender
        .send(lsp_server::Response::new_ok(id, result).into())
        .is_err()
    {
        return Ok(());
    }
    let progress = init
        .pointer("/capabilities/window/workDoneProgress")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let mut session = session::Session::new(connection.sender.clone(), options.clone(), progress);
    let mut shut_down = false;
    loop {
        let timeout = session.next_timer();
        crossbeam_channel::select! {
            recv(connection.receiver) -> message => {
                let Ok(message) = message else {
                    session.stop_renders(Duration::from_secs(2));
                    return Ok(());
                };
                match message {
                    Message::Request(request) => {
                        if request.method == "shutdown" {
                            shut_down = true;
                            session.respond(lsp_server::Response::new_ok(request.id, ()));
                        } else if shut_down {
                            session.respond(lsp_server::Response::new_err(
                                request.id,
                                lsp_server::ErrorCode::InvalidRequest as i32,
                                "the server is shutting down".to_owned(),
                            ));
                        } else {
                            session.request(&request);
                        }
                    }
                    Message::Notification(n) => {
                        if n.method == "exit" {
                            session.stop_renders(Duration::from_secs(2));
                            return Ok(());
                        }
                        session.notification(n);
                    }
                    Message::Response(_) => {}
                }
            }
            recv(session.results()) -> result => {
                if let Ok(result) = result {
                    session.finished(result);
                }
            }
            default(timeout) => {}
        }
        session.tick();
    }
}
