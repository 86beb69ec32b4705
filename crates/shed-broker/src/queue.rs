//! The broker's queue: a Unix socket, mode 0600, one request and one answer
//! per connection. `shed serve` starts it under an exclusive lock on
//! `<data>/serve.lock`, so a second server on the same data folder refuses to
//! start rather than take the socket over. The socket is bound under a
//! temporary name, made 0600, then renamed over the queue's path, so there
//! is no moment when the path answers with wider permissions.
//!
//! The queue serves at most the connections it is given at once (its share
//! of the server's open files): at the cap it stops accepting, and new
//! connections wait in the kernel's backlog until one closes. A connection
//! has [`REQUEST_TIMEOUT`] to send its whole request — a harness's client
//! writes it at once — so idle ones give their places back soon.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Semaphore;

use shed_host::agents::Label;

use crate::outcome::{Answered, Code, Outcome};
use crate::protocol::{MAX_REQUEST_BYTES, read_request};
use crate::{Broker, SERVE_LOCK_NAME};

/// How long a connection may take to send its whole request, from when it
/// was accepted: the CLI has its request made before it connects and writes
/// it in one go, so 5 s (the HTTP door's head timeout) is room for a loaded
/// machine, and an idle connection soon gives its place back.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest socket path the system takes (sockaddr_un's 108, less the NUL).
const MAX_SOCKET_PATH: usize = 107;

/// Requests being read or answered now.
const QUEUE_DEPTH: &str = "shed_broker_queue_depth";
/// Answers sent, by their outcome `code` (`ok`, `forbidden`, `refused`, …;
/// `listed` for a `command list` answered with its rows).
const JOB_OUTCOMES: &str = "shed_broker_jobs_total";
/// Requests and their time, as for every door (`door="broker"`).
const REQUESTS: &str = "shed_requests_total";
const REQUEST_SECONDS: &str = "shed_request_duration_seconds";

/// Why the queue could not start; each is the sentence to show.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    /// Another `shed serve` holds the data folder.
    #[error("{0}")]
    Busy(String),
    /// The socket's path cannot be used.
    #[error("{0}")]
    Unusable(String),
}

/// The running queue. Dropping it stops accepting and removes the socket
/// (when the path is still this queue's).
pub struct Queue {
    path: PathBuf,
    /// (device, inode) of the socket this queue made.
    made: (u64, u64),
    _lock: File,
    accepting: tokio::task::JoinHandle<()>,
}

impl Queue {
    /// Takes the data folder's lock and opens the queue at `path`, serving
    /// at most `connections` at once. Must be called inside a tokio runtime.
    pub fn start(
        broker: Arc<Broker>,
        data: &Path,
        path: &Path,
        connections: usize,
    ) -> Result<Queue, QueueError> {
        let lock = lock(data)?;
        let (listener, made) = bind(path)?;
        tracing::info!(queue = %path.display(), "the command broker is listening");
        let slots = Arc::new(Semaphore::new(connections));
        let accepting = tokio::spawn(accept(listener, broker, slots));
        Ok(Queue {
            path: path.to_path_buf(),
            made,
            _lock: lock,
            accepting,
        })
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        self.accepting.abort();
        if let Ok(meta) = std::fs::symlink_metadata(&self.path)
            && (meta.dev(), meta.ino()) == self.made
        {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The exclusive lock on `<data>/serve.lock` (made 0600), with this
/// process's id in it.
fn lock(data: &Path) -> Result<File, QueueError> {
    let path = data.join(SERVE_LOCK_NAME);
    let unusable = |e: std::io::Error| {
        QueueError::Unusable(format!(
            "could not open the lock file {} ({e})",
            path.display()
        ))
    };
    let mut file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .mode(0o600)
        .open(&path)
        .map_err(unusable)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let pid = holder.trim();
            let who = if pid.is_empty() {
                String::new()
            } else {
                format!(" (process {pid})")
            };
            return Err(QueueError::Busy(format!(
                "another shed serve{who} is running on the data folder {} — stop it first, or give this one another --data",
                data.display()
            )));
        }
        Err(TryLockError::Error(e)) => return Err(unusable(e)),
    }
    file.set_len(0).map_err(unusable)?;
    write!(file, "{}", std::process::id()).map_err(unusable)?;
    Ok(file)
}

/// Binds the socket under a temporary name, makes it 0600, and renames it
/// over `path` (replacing a socket left by a server that stopped).
fn bind(path: &Path) -> Result<(UnixListener, (u64, u64)), QueueError> {
    let unusable = |why: String| QueueError::Unusable(why);
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && !meta.file_type().is_socket()
    {
        return Err(unusable(format!(
            "{} is there and is not a socket — move it away, or pass another --queue",
            path.display()
        )));
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let temporary = dir.join(format!(".queue-{:016x}.tmp", rand::random::<u64>()));
    for candidate in [path, temporary.as_path()] {
        if candidate.as_os_str().len() > MAX_SOCKET_PATH {
            return Err(unusable(format!(
                "the queue's path {} is longer than the {MAX_SOCKET_PATH} bytes a socket's path may be — pass a shorter --queue",
                candidate.display()
            )));
        }
    }
    let listener = UnixListener::bind(&temporary).map_err(|e| {
        unusable(format!(
            "could not make the queue's socket in {} ({e})",
            dir.display()
        ))
    })?;
    let made = std::fs::set_permissions(&temporary, std::fs::Permissions::from_mode(0o600))
        .and_then(|()| std::fs::rename(&temporary, path))
        .and_then(|()| std::fs::symlink_metadata(path));
    match made {
        Ok(meta) => Ok((listener, (meta.dev(), meta.ino()))),
        Err(e) => {
            let _ = std::fs::remove_file(&temporary);
            Err(unusable(format!(
                "could not put the queue's socket at {} ({e})",
                path.display()
            )))
        }
    }
}

/// Accepts connections while a slot is free, each served on a task of its
/// own that gives its slot back when it ends.
async fn accept(listener: UnixListener, broker: Arc<Broker>, slots: Arc<Semaphore>) {
    while let Ok(slot) = slots.clone().acquire_owned().await {
        let stream = loop {
            match listener.accept().await {
                Ok((stream, _)) => break stream,
                Err(error) => {
                    tracing::warn!(%error, "the queue could not accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        };
        let broker = broker.clone();
        tokio::spawn(async move {
            serve_one(broker, stream).await;
            drop(slot);
        });
    }
}

/// Reads one request, answers it, closes; counted while it runs.
async fn serve_one(broker: Arc<Broker>, stream: UnixStream) {
    let depth = metrics::gauge!(QUEUE_DEPTH);
    depth.increment(1.0);
    let started = std::time::Instant::now();
    let code = answer_one(broker, stream).await;
    depth.decrement(1.0);
    if let Some(code) = code {
        metrics::counter!(JOB_OUTCOMES, "code" => code).increment(1);
        metrics::counter!(REQUESTS, "door" => "broker").increment(1);
        metrics::histogram!(REQUEST_SECONDS, "door" => "broker").record(started.elapsed());
    }
}

/// Reads one request and answers it: what the answer came to (its code, or
/// `listed`), or None when the connection failed before its request was whole.
async fn answer_one(broker: Arc<Broker>, mut stream: UnixStream) -> Option<&'static str> {
    let mut request = Vec::new();
    let limit = u64::try_from(MAX_REQUEST_BYTES)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    let read = tokio::time::timeout(
        REQUEST_TIMEOUT,
        (&mut stream).take(limit).read_to_end(&mut request),
    )
    .await;
    let answer = match read {
        Ok(Ok(_)) => match read_request(&request) {
            Ok(request) => broker.answer(request).await,
            Err(why) => Answered::Outcome(Outcome::refusal(Code::BadArgs, why, Label::public())),
        },
        Ok(Err(error)) => {
            tracing::debug!(%error, "a connection to the queue failed before its request was whole");
            return None;
        }
        Err(_) => Answered::Outcome(Outcome::refusal(
            Code::BadArgs,
            format!(
                "the request took longer than {}s to arrive — send it whole, then close the sending side",
                REQUEST_TIMEOUT.as_secs()
            ),
            Label::public(),
        )),
    };
    let mut bytes = serde_json::to_vec(&answer).unwrap_or_default();
    bytes.push(b'\n');
    if let Err(error) = stream.write_all(&bytes).await {
        tracing::warn!(%error, "an answer could not be sent back: its client went away");
    }
    let _ = stream.shutdown().await;
    Some(answer.label())
}
