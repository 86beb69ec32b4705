//! The CLI's side of the queue: connect, send one request, read the one
//! answer. Plain std (no async runtime), so `shed command run` starts, asks
//! and exits in a few milliseconds.

use std::io::{Read, Write};
use std::net::Shutdown;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use crate::protocol::Request;

/// How long the client waits for an answer before counting it lost.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(300);
/// The most bytes of answer the client reads.
const MAX_ANSWER_BYTES: u64 = 256 * 1024 * 1024;

/// Why there is no answer.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Nothing was sent: the queue could not be reached.
    #[error("{0}")]
    Unreachable(String),
    /// The request was (or may have been) sent and the answer was lost.
    #[error("{0}")]
    Lost(String),
}

/// Sends `request` to the broker at `queue` and answers its JSON answer.
pub fn ask(queue: &Path, request: &Request) -> Result<serde_json::Value, ClientError> {
    let body = serde_json::to_vec(request).map_err(|e| {
        ClientError::Unreachable(format!("the request could not be written as JSON ({e})"))
    })?;
    let mut stream = UnixStream::connect(queue).map_err(|e| {
        ClientError::Unreachable(format!(
            "the broker's queue at {} cannot be reached ({e}) — is `shed serve` running on that data folder?",
            queue.display()
        ))
    })?;
    let lost = |what: &str, e: std::io::Error| {
        ClientError::Lost(format!(
            "the answer from the broker at {} was lost: {what} ({e})",
            queue.display()
        ))
    };
    stream
        .set_read_timeout(Some(ANSWER_TIMEOUT))
        .map_err(|e| lost("could not set a timeout", e))?;
    stream
        .write_all(&body)
        .map_err(|e| lost("the request could not be sent whole", e))?;
    stream
        .shutdown(Shutdown::Write)
        .map_err(|e| lost("the request could not be ended", e))?;
    let mut answer = Vec::new();
    stream
        .take(MAX_ANSWER_BYTES)
        .read_to_end(&mut answer)
        .map_err(|e| lost("reading it failed", e))?;
    if answer.iter().all(u8::is_ascii_whitespace) {
        return Err(ClientError::Lost(format!(
            "the broker at {} closed the connection without answering — the command may or may not have run",
            queue.display()
        )));
    }
    serde_json::from_slice(&answer).map_err(|e| {
        ClientError::Lost(format!(
            "the broker at {} answered something that is not JSON ({e})",
            queue.display()
        ))
    })
}
