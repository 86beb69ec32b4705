//! One MCP session's two log lines, at info: when it opens (its
//! `initialize`: the client it names and who is calling) and when it
//! closes (its handler dropped — closed by the client, idle, or its
//! server stopping). Sessionless (2026-07-28) requests open no session and
//! log neither. rmcp logs a session's life too, as Rust `Debug`
//! structures, at its info level — which shed shows only at debug.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use shed_host::Caller;

/// The most characters of a client's name logged: the name is the client's
/// to choose, and a line is for reading.
pub const MAX_LOGGED_CLIENT_NAME: usize = 64;

/// The session a handler serves, once it opened; its close is logged when
/// the last clone of the handler goes. Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct SessionLog(Arc<Lines>);

#[derive(Default)]
struct Lines(OnceLock<Opened>);

/// What the lines say of a session.
struct Opened {
    client: String,
    who: String,
    at: Instant,
}

impl SessionLog {
    /// Logs the session's opening by `client` (its `clientInfo.name`) as
    /// `caller`. Only the first `initialize` of a handler opens a session.
    pub(crate) fn opened(&self, client: &str, caller: &Caller) {
        let client: String = client.chars().take(MAX_LOGGED_CLIENT_NAME).collect();
        let opened = Opened {
            client,
            who: who(caller),
            at: Instant::now(),
        };
        let (client, who) = (opened.client.clone(), opened.who.clone());
        if self.0.0.set(opened).is_ok() {
            // Debug-quoted: a client's name never writes a control character.
            tracing::info!("MCP session opened by client {client:?} for {who}");
        }
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        if let Some(Opened { client, who, at }) = self.0.get() {
            tracing::info!(
                "MCP session closed: client {client:?} for {who}, after {:.0} s",
                at.elapsed().as_secs_f64()
            );
        }
    }
}

/// Who a session serves, in a line: a person by handle, an agent by its
/// job's public name and person, or signed out.
fn who(caller: &Caller) -> String {
    match caller {
        Caller::Nobody => "someone signed out".to_string(),
        Caller::Person { person, .. } => person.handle.clone(),
        Caller::Agent { person, job } => format!("agent:{job} acting for {}", person.handle),
    }
}
