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
//! or behind a trusted proxy the one the proxy names in the header it keeps
//! (`crate::forwarded`) —
//! and runs in a `request` span carrying a request id, its method and its
//! path, so every line logged while it is answered names it. The span never holds the query string
//! (a sign-in link's key, a hop's code) nor a view key's path segment.
//!
//! Stopping ([`Stop`]): once a stop begins the listener is closed (a new
//! connection is refused, which a client may retry), idle kept-alive
//! connections are closed, an event stream that waits on no call (an MCP
//! session's GET stream, a `subscriptions/listen`) ends at once, and the
//! calls in flight are answered, each on a connection then closed — for at
//! most the drain bound, or until the stop is asked again, when the
//! connections still open are closed at once.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context as TaskContext, Poll};
use std::time::{Duration, Instant};

use anyhow::Context;
use axum::body::{Body, Bytes};
use axum::extract::ConnectInfo;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
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

/// How far a stop has gone. A first SIGTERM or SIGINT drains the server, a
/// second stops it at once; ordered, so a later phase includes the earlier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stop {
    /// Accepting and answering.
    Serving,
    /// Accepting nothing new; the streams no call waits on ended, the calls
    /// in flight answered.
    Draining,
    /// Every connection still open closed at once.
    Now,
}

impl Stop {
    /// The phases of a server nothing stops (its sender is gone at once).
    pub fn never() -> watch::Receiver<Stop> {
        watch::channel(Stop::Serving).1
    }
}

/// Waits until `stop` reaches `phase`; forever when nothing can move it.
async fn reached(stop: &mut watch::Receiver<Stop>, phase: Stop) {
    if stop.wait_for(|now| *now >= phase).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// How a stop went.
pub struct Drained {
    /// From the listener's close to the last connection's.
    pub took: Duration,
    /// The calls in flight when the stop began.
    pub calls: usize,
    /// The calls still in flight when it ended, cut: none when every call
    /// was answered.
    pub cut: usize,
    /// Why it ended.
    pub ended: Ended,
}

/// Why a drain ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// Every connection closed: every call was answered.
    Answered,
    /// At the drain bound.
    Bound,
    /// The stop was asked again.
    AskedAgain,
}

/// Serves `routes` on `listener` until `stop` reaches [`Stop::Draining`],
/// with at most `limit` connections at once (the public listener its share
/// of the [`ConnectionBudget`]; a listener beside it a few of the files left
/// in reserve), then lets the calls in flight finish and their connections
/// close, for at most `drain` or until `stop` reaches [`Stop::Now`].
pub async fn serve_at_most(
    listener: TcpListener,
    routes: axum::Router,
    proxies: TrustedProxies,
    limit: u64,
    mut stop: watch::Receiver<Stop>,
    drain: Duration,
) -> anyhow::Result<Drained> {
    let limit = u32::try_from(limit).unwrap_or(u32::MAX);
    let slots = Arc::new(Semaphore::new(limit as usize));
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(REQUEST_HEAD_TIMEOUT);
    // The phase every connection and stream follows: the one `stop` asks,
    // or `Now` at the drain bound.
    let (phase, phases) = watch::channel(Stop::Serving);
    let calls = Arc::new(AtomicUsize::new(0));
    loop {
        let (stream, peer, slot) = tokio::select! {
            next = next_connection(&listener, &slots) => next?,
            () = reached(&mut stop, Stop::Draining) => break,
        };
        let (routes, proxies, calls, streams) = (
            routes.clone(),
            proxies.clone(),
            calls.clone(),
            phases.clone(),
        );
        let service = tower::service_fn(move |mut request: hyper::Request<Incoming>| {
            let client = proxies.client(peer, request.headers());
            request.extensions_mut().insert(ConnectInfo(client));
            let span = request_span(&request);
            let started = Instant::now();
            let call = InFlight::begin(&calls);
            let streams = waits_on_no_call(&request).then(|| streams.clone());
            let answer = routes.clone().oneshot(request);
            async move {
                let Ok(response) = answer.await;
                tracing::debug!(status = response.status().as_u16(), took = ?started.elapsed(), "answered");
                let response = match streams {
                    Some(stop) if is_event_stream(&response) => {
                        drop(call);
                        response.map(|body| Answer::of_stream(body, stop))
                    }
                    _ => response.map(|body| Answer::of_call(body, call)),
                };
                Ok::<_, std::convert::Infallible>(response)
            }
            .instrument(span)
        });
        let connection =
            http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let mut phase = phases.clone();
        tokio::spawn(async move {
            let mut connection = std::pin::pin!(connection);
            let ended = tokio::select! {
                ended = connection.as_mut() => Some(ended),
                () = reached(&mut phase, Stop::Draining) => None,
            };
            let ended = match ended {
                Some(ended) => ended,
                None => {
                    connection.as_mut().graceful_shutdown();
                    tokio::select! {
                        ended = connection.as_mut() => ended,
                        // Dropped: closed at once.
                        () = reached(&mut phase, Stop::Now) => Ok(()),
                    }
                }
            };
            if let Err(error) = ended {
                tracing::debug!(%peer, %error, "a connection ended in an error");
            }
            drop(slot);
        });
    }
    drop(listener);
    let in_flight = calls.load(Ordering::Relaxed);
    let started = Instant::now();
    phase.send_replace(Stop::Draining);
    // Every connection has given its slot back.
    let all_closed = || slots.acquire_many(limit);
    let ended = tokio::select! {
        closed = tokio::time::timeout(drain, all_closed()) => match closed {
            Ok(_) => Ended::Answered,
            Err(_) => Ended::Bound,
        },
        () = reached(&mut stop, Stop::Now) => Ended::AskedAgain,
    };
    let took = started.elapsed();
    let cut = calls.load(Ordering::Relaxed);
    if ended != Ended::Answered {
        phase.send_replace(Stop::Now);
        let _ = all_closed().await;
    }
    Ok(Drained {
        took,
        calls: in_flight,
        cut,
        ended,
    })
}

/// Whether a request may be answered with a stream that waits on no call,
/// only carrying notifications while it is open: a GET (an MCP session's
/// stream, any event stream a browser opens), or MCP's
/// `subscriptions/listen`. Its answer must be an event stream too
/// ([`is_event_stream`]).
fn waits_on_no_call(request: &hyper::Request<Incoming>) -> bool {
    request.method() == hyper::Method::GET
        || request
            .headers()
            .get(MCP_METHOD)
            .is_some_and(|method| method == MCP_LISTEN)
}

/// The header a 2026-07-28 MCP client names its request's method in (rmcp
/// refuses a request whose body says another), and the method that opens a
/// stream of notifications.
const MCP_METHOD: &str = "mcp-method";
const MCP_LISTEN: &str = "subscriptions/listen";

/// Whether an answer is a `text/event-stream`.
fn is_event_stream(response: &hyper::Response<Body>) -> bool {
    response
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"))
}

/// A call in flight, counted from its request's head to its answer's last
/// byte (or its connection's close).
struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    fn begin(calls: &Arc<AtomicUsize>) -> InFlight {
        calls.fetch_add(1, Ordering::Relaxed);
        InFlight(calls.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// An answer's body as the server sends it.
struct Answer {
    body: Body,
    role: Role,
}

/// What an answer is to a stop.
enum Role {
    /// A call's answer: the call counted in flight until the body is sent
    /// or dropped.
    Call { _in_flight: InFlight },
    /// An event stream that waits on no call: ended (a clean end of the
    /// stream, as when its server closes it) once a stop begins.
    Stream {
        stop: Pin<Box<dyn Future<Output = ()> + Send>>,
    },
}

impl Answer {
    /// A call's answer, `in_flight` until it is sent.
    fn of_call(body: Body, in_flight: InFlight) -> Body {
        Body::new(Answer {
            body,
            role: Role::Call {
                _in_flight: in_flight,
            },
        })
    }

    /// A stream's, ended once `stop` begins draining.
    fn of_stream(body: Body, mut stop: watch::Receiver<Stop>) -> Body {
        Body::new(Answer {
            body,
            role: Role::Stream {
                stop: Box::pin(async move { reached(&mut stop, Stop::Draining).await }),
            },
        })
    }
}

impl hyper::body::Body for Answer {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if let Role::Stream { stop } = &mut self.role
            && stop.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(None);
        }
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        match self.role {
            Role::Call { .. } => self.body.size_hint(),
            Role::Stream { .. } => SizeHint::default(),
        }
    }
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
