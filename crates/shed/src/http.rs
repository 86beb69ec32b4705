//! The HTTP server under `shed serve`: hyper's HTTP/1.1 connections driving
//! the axum router, with the limits `axum::serve` lacks — a deadline for each
//! request head (which also closes kept-alive connections left idle), a cap
//! on open connections below the process's limit of open files, and a pause
//! with one log line when accepting fails instead of a line per try.
//!
//! At the cap the server stops accepting: new connections wait in the
//! kernel's backlog until one closes. The cap is the HTTP door's share of
//! one budget of open files ([`ConnectionBudget`]), the broker's queue
//! having the other share, so idle queue connections cannot take the files
//! the HTTP door needs, nor HTTP connections the queue's. Each request sees
//! its client's address as axum's `ConnectInfo<SocketAddr>` — its peer's,
//! or behind a trusted proxy the one the proxy names (`crate::forwarded`) —
//! and runs in a `request` span carrying a request id, its method and its
//! path, so every line logged while it is answered names it. The span never holds the query string
//! (a sign-in link's key, a hop's code) nor a view key's path segment.
//!
//! Stopping: once `shutdown` completes the listener is closed (a new
//! connection is refused, which a client may retry), idle kept-alive
//! connections are closed, and requests in flight are answered, each on a
//! connection then closed — for at most the drain bound, after which the
//! connections still open are left to be dropped.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tower::ServiceExt;
use tracing::Instrument;

use crate::forwarded::TrustedProxies;

/// The longest a connection may take to send a whole request head, timed
/// from when it starts waiting for one — the first, or the next on a
/// kept-alive connection, so this is also the idle keep-alive timeout. A
/// real client sends its head in one round trip; 5 s is Apache's keep-alive.
pub const REQUEST_HEAD_TIMEOUT: Duration = Duration::from_secs(5);

/// The most connections served at once, whatever the file limit: more than
/// a shed's people keep open, and a bound on the memory their buffers hold.
pub const MAX_CONNECTIONS: u64 = 4096;

/// Open files kept for everything but connections: the listener, the
/// runtime, the database's writer, checkpointer and idle readers, the
/// queue's listening socket (its clients are in the [`ConnectionBudget`]),
/// the lock file, the logs, the metrics listener and its few scrapes.
pub const RESERVED_FILES: u64 = 64;

/// Open files each connection may need: its socket, and a read connection's
/// database and WAL files while its request reads.
pub const FILES_PER_CONNECTION: u64 = 3;

/// The fewest connections worth serving: below this the file limit is a
/// mistake to correct, not a server to run.
pub const MIN_CONNECTIONS: u64 = 16;

/// The broker queue's share of the connections the file limit leaves room
/// for: one in this many. A harness holds one queue connection per command
/// it runs, for as long as the command takes; people hold the rest.
pub const QUEUE_SHARE: u64 = 8;

/// The fewest connections the broker's queue is given, however low the
/// file limit: a job's command and a second one beside it.
pub const MIN_QUEUE_CONNECTIONS: u64 = 2;

/// The most connections the broker's queue serves at once, whatever the
/// file limit: more commands in flight than a machine's harnesses run.
pub const MAX_QUEUE_CONNECTIONS: u64 = 256;

/// The pause after accepting a connection failed (out of open files, most
/// often): long enough not to spin, short enough to use a freed file soon.
pub const ACCEPT_PAUSE: Duration = Duration::from_millis(250);

/// How a stop went: how long the requests in flight took to be answered.
pub struct Drained {
    /// From the listener's close to the last connection's.
    pub took: Duration,
    /// Connections open when the stop began.
    pub open: usize,
    /// Whether every one closed within the bound.
    pub whole: bool,
}

/// Serves `routes` on `listener` until `shutdown` completes, with at most
/// `limit` connections at once (the public listener its share of the
/// [`ConnectionBudget`]; a listener beside it a few of the files left in
/// reserve), then lets the open connections finish their requests and
/// close, for at most `drain`.
pub async fn serve_at_most(
    listener: TcpListener,
    routes: axum::Router,
    proxies: TrustedProxies,
    limit: u64,
    shutdown: impl Future<Output = ()>,
    drain: Duration,
) -> anyhow::Result<Drained> {
    let slots = Arc::new(Semaphore::new(usize::try_from(limit).unwrap_or(usize::MAX)));
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(REQUEST_HEAD_TIMEOUT);
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer, slot) = tokio::select! {
            next = next_connection(&listener, &slots) => next?,
            () = &mut shutdown => break,
        };
        let (routes, proxies) = (routes.clone(), proxies.clone());
        let service = tower::service_fn(move |mut request: hyper::Request<Incoming>| {
            let client = proxies.client(peer, request.headers());
            request.extensions_mut().insert(ConnectInfo(client));
            let span = request_span(&request);
            let started = Instant::now();
            let answer = routes.clone().oneshot(request);
            async move {
                let Ok(response) = answer.await;
                tracing::debug!(status = response.status().as_u16(), took = ?started.elapsed(), "answered");
                Ok::<_, std::convert::Infallible>(response)
            }
            .instrument(span)
        });
        let connection = graceful
            .watch(http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service)));
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%peer, %error, "a connection ended in an error");
            }
            drop(slot);
        });
    }
    drop(listener);
    let open = graceful.count();
    let started = Instant::now();
    let whole = tokio::time::timeout(drain, graceful.shutdown())
        .await
        .is_ok();
    Ok(Drained {
        took: started.elapsed(),
        open,
        whole,
    })
}

/// Request ids, counted from 1 in each process.
static REQUESTS: AtomicU64 = AtomicU64::new(0);

/// The span a request is answered in: its id, method and path — the path
/// of a view key's address cut at the key.
fn request_span(request: &hyper::Request<Incoming>) -> tracing::Span {
    let id = REQUESTS.fetch_add(1, Ordering::Relaxed) + 1;
    let path = request.uri().path();
    let path = match path.strip_prefix(shed_host::view_keys::VIEW_KEY_PATH) {
        Some(_) => shed_host::view_keys::VIEW_KEY_PATH,
        None => path,
    };
    tracing::info_span!("request", id, method = %request.method(), path = %path)
}

/// How many connections each door that holds them may serve at once: one
/// budget of open files, shared by the HTTP door and the broker's queue, so
/// neither can take the files the other needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionBudget {
    /// The public HTTP listener's connections.
    pub http: u64,
    /// The broker queue's connections.
    pub queue: u64,
}

impl ConnectionBudget {
    /// The budget of this process: as many connections as the open-file
    /// limit leaves room for, raised first as far as [`MAX_CONNECTIONS`]
    /// and [`MAX_QUEUE_CONNECTIONS`] need when the hard limit allows.
    pub fn of_this_process() -> anyhow::Result<ConnectionBudget> {
        let wanted =
            RESERVED_FILES + (MAX_CONNECTIONS + MAX_QUEUE_CONNECTIONS) * FILES_PER_CONNECTION;
        let files = raise_file_limit(wanted)
            .context("could not read this process's limit of open files")?;
        ConnectionBudget::for_files(files)
    }

    /// The budget `files` open files make room for: the queue's share
    /// ([`QUEUE_SHARE`], within its floor and ceiling), the HTTP door the
    /// rest up to [`MAX_CONNECTIONS`]; too few files is the sentence saying
    /// which limit to raise.
    fn for_files(files: u64) -> anyhow::Result<ConnectionBudget> {
        let room = files.saturating_sub(RESERVED_FILES) / FILES_PER_CONNECTION;
        let fewest = MIN_CONNECTIONS + MIN_QUEUE_CONNECTIONS;
        if room < fewest {
            anyhow::bail!(
                "shed may open only {files} files, too few to serve: raise the limit to at least {} (ulimit -n) and start again",
                RESERVED_FILES + fewest * FILES_PER_CONNECTION
            );
        }
        let queue = (room / QUEUE_SHARE).clamp(MIN_QUEUE_CONNECTIONS, MAX_QUEUE_CONNECTIONS);
        Ok(ConnectionBudget {
            http: (room - queue).min(MAX_CONNECTIONS),
            queue,
        })
    }
}

/// Raises the soft limit of open files toward `wanted`, never past the hard
/// limit; answers the soft limit now in force.
fn raise_file_limit(wanted: u64) -> io::Result<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes only into the rlimit it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let raised = wanted.min(limit.rlim_max);
    if raised <= limit.rlim_cur {
        return Ok(limit.rlim_cur);
    }
    let new = libc::rlimit {
        rlim_cur: raised,
        rlim_max: limit.rlim_max,
    };
    // SAFETY: setrlimit reads only the rlimit it is given.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &new) } != 0 {
        return Ok(limit.rlim_cur);
    }
    Ok(raised)
}

/// Waits for a free slot, then accepts the next connection. When accepting
/// fails, pauses [`ACCEPT_PAUSE`] and tries again, logging once when the
/// failures begin and once when they end.
async fn next_connection(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
) -> anyhow::Result<(TcpStream, SocketAddr, OwnedSemaphorePermit)> {
    let slot = slots
        .clone()
        .acquire_owned()
        .await
        .context("the server's connection slots were closed")?;
    let mut failing: Option<(Instant, u64)> = None;
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                if let Some((since, failures)) = failing {
                    tracing::info!(
                        "shed accepts connections again, after {failures} failed tries over {:.1?}",
                        since.elapsed()
                    );
                }
                return Ok((stream, peer, slot));
            }
            Err(error) if is_connection_error(&error) => {}
            Err(error) => {
                match &mut failing {
                    Some((_, failures)) => *failures += 1,
                    None => {
                        tracing::error!(
                            "shed could not accept a connection ({error}); it pauses and tries again, and says when it accepts again"
                        );
                        failing = Some((Instant::now(), 1));
                    }
                }
                tokio::time::sleep(ACCEPT_PAUSE).await;
            }
        }
    }
}

/// An error of the one connection being accepted, not of the listener.
fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_and_the_http_door_share_one_budget_of_files() {
        let low = ConnectionBudget::for_files(300).unwrap();
        assert_eq!(low, ConnectionBudget { http: 69, queue: 9 });
        assert!(RESERVED_FILES + (low.http + low.queue) * FILES_PER_CONNECTION <= 300);
        let high = ConnectionBudget::for_files(1 << 20).unwrap();
        assert_eq!(
            high,
            ConnectionBudget {
                http: MAX_CONNECTIONS,
                queue: MAX_QUEUE_CONNECTIONS
            }
        );
        let fewest =
            ConnectionBudget::for_files(RESERVED_FILES + 18 * FILES_PER_CONNECTION).unwrap();
        assert_eq!(
            fewest,
            ConnectionBudget {
                http: MIN_CONNECTIONS,
                queue: MIN_QUEUE_CONNECTIONS
            }
        );
        let refused = ConnectionBudget::for_files(100).unwrap_err().to_string();
        assert_eq!(
            refused,
            "shed may open only 100 files, too few to serve: raise the limit to at least 118 (ulimit -n) and start again"
        );
    }
}
