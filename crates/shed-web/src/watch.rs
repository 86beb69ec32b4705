//! `GET <app>/api/watch?filter=<filter line>`: the app's writes as they
//! commit, as Server-Sent Events — a `write` event for each write whose
//! entities the line reads (`id:` the app's version after it; data the
//! version, the rows as `./api/query` would read them with the line, and
//! who and how as activity shows it), a comment every [`HEARTBEAT`] so
//! proxies keep the stream open and a dead one is noticed, a `reload`
//! event when a reconnect's `Last-Event-ID` is further behind than the
//! store replays ([`shed_host::live::REPLAY_MOST_WRITES`]), and a `closed`
//! event (then the end) once the caller may no longer read the app.
//!
//! The rule book decides when the stream opens (the line is read once, as
//! `./api/query` reads it: a caller who may not read the app gets the same
//! answer as for an app nobody made), and again — the caller read afresh
//! from the request's credentials, so a revoked token or ended session
//! counts — at once when a membership or the app (deployed, trashed,
//! restored, purged) changed on any server, and every [`WATCH_RECHECK`]
//! regardless (a revocation announces itself nowhere).
//!
//! Streams are bounded per person, per signed-out address and in all
//! (`streams.rs`); past one the request is refused with a 429 and a
//! sentence. A stream holds no call: a stopping server ends it at once
//! (`shed`'s `http.rs` ends every event stream when it drains).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use shed_host::activity::WriteRecord;
use shed_host::credentials::Credentials;
use shed_host::live::{Hub, Watcher, Watching, write_event};
use shed_host::{Host, HostError};
use tokio::sync::{broadcast, mpsc};

use crate::caller::WebCaller;
use crate::client_address::ClientAddress;
use crate::door::Door;
use crate::reply::{Refusal, json_sentence};
use crate::streams::{Held, Holder};

/// How often a quiet stream sends a comment: well under the minute a proxy
/// closes an idle connection after, and how soon a dead one is noticed.
pub const HEARTBEAT: Duration = Duration::from_secs(15);

/// How often a stream asks the rule book again whether its caller may
/// still read the app, besides at each change of a membership or of the
/// app: the longest a revoked token or ended session keeps watching.
pub const WATCH_RECHECK: Duration = Duration::from_secs(10);

/// The events a stream's task has made that the connection has not sent.
const EVENTS_HELD: usize = 16;

/// Answers `GET <space>/<slug>/api/watch?filter=<line>`.
pub(crate) async fn answer(
    door: &Arc<Door>,
    request: &mut Parts,
    space: &str,
    slug: &str,
) -> Response {
    let app = format!("{space}/{slug}");
    let asking = match WebCaller::from_request_parts(request, door).await {
        Ok(asking) => asking,
        Err(refusal) => return refusal.into_json().into_response(),
    };
    let line = filter_of(request.uri.query().unwrap_or_default());
    let ClientAddress(from) = ClientAddress::of(request);
    let host = &door.host;
    // The line read once as the page reads it: the rule book's answer, and
    // the store's about the line, are the page api's own.
    if let Err(error) = host.graph_query(&asking.caller, from, &app, &line).await {
        return Refusal::json(error).into_response();
    }
    let watcher = match host.watch_check(&asking.caller, &app).await {
        Ok(watcher) => watcher,
        Err(error) => return Refusal::json(error).into_response(),
    };
    let holder = match asking.caller.person() {
        Some(person) => Holder::Person(person.eid.clone()),
        None => Holder::Address(shed_host::client_address::counted(from)),
    };
    let held = match door.streams.hold(holder) {
        Ok(held) => held,
        Err(sentence) => return json_sentence(StatusCode::TOO_MANY_REQUESTS, &sentence),
    };
    let watching = match host.watch_writes(&app).await {
        Ok(watching) => watching,
        Err(error) => return Refusal::json(error).into_response(),
    };
    let last_seen = request
        .headers
        .get("last-event-id")
        .and_then(|id| id.to_str().ok())
        .map(|id| id.trim().parse::<u64>().ok());
    let (events, mut sent) = mpsc::channel(EVENTS_HELD);
    let stream = Stream {
        door: door.clone(),
        app,
        space: space.to_string(),
        credentials: credentials_of(&request.headers),
        line,
        watcher,
        events,
        _held: held,
    };
    tokio::spawn(stream.run(watching, last_seen));
    let body =
        futures::stream::poll_fn(move |cx| sent.poll_recv(cx).map(|e| e.map(Ok::<_, Infallible>)));
    Sse::new(body)
        .keep_alive(KeepAlive::new().interval(HEARTBEAT))
        .into_response()
}

/// The filter line a watch's query names (`filter=<line>`, decoded once:
/// the line itself, as `./api/query` takes it after its `?`).
fn filter_of(query: &str) -> String {
    query
        .split('&')
        .find_map(|pair| pair.strip_prefix("filter="))
        .map(|line| {
            percent_encoding::percent_decode_str(line)
                .decode_utf8_lossy()
                .into_owned()
        })
        .unwrap_or_default()
}

/// The request's credentials, kept to read the caller again.
fn credentials_of(headers: &HeaderMap) -> HeaderMap {
    let mut kept = HeaderMap::new();
    for name in [header::AUTHORIZATION, header::COOKIE] {
        for value in headers.get_all(&name) {
            kept.append(name.clone(), value.clone());
        }
    }
    kept
}

/// One open stream's task.
struct Stream {
    door: Arc<Door>,
    app: String,
    space: String,
    credentials: HeaderMap,
    line: String,
    watcher: Watcher,
    events: mpsc::Sender<Event>,
    _held: Held,
}

/// Why a stream ends.
enum End {
    /// The connection is gone.
    Gone,
    /// The caller may no longer read the app (the sentence), or the line no
    /// longer reads it.
    Closed(String),
}

impl Stream {
    fn host(&self) -> &Host {
        &self.door.host
    }

    async fn run(mut self, mut watching: Watching, last_seen: Option<Option<u64>>) {
        let ended = self.stream(&mut watching, last_seen).await;
        if let Err(End::Closed(sentence)) = ended {
            let event = Event::default()
                .event("closed")
                .data(json!({ "error": sentence }).to_string());
            let _ = self.events.send(event).await;
        }
    }

    async fn stream(
        &mut self,
        watching: &mut Watching,
        last_seen: Option<Option<u64>>,
    ) -> Result<(), End> {
        let mut members = self.host().memberships();
        let mut apps = self.host().app_changes();
        let mut recheck = tokio::time::interval(WATCH_RECHECK);
        recheck.reset();
        let mut cursor = watching.version;
        let hub = watching.hub.clone();
        if let Some(last_seen) = last_seen {
            cursor = self.replay(&hub, last_seen, watching.version).await?;
        }
        loop {
            tokio::select! {
                () = self.events.closed() => return Err(End::Gone),
                write = watching.writes.recv() => match write {
                    Ok(write) if write.version <= cursor => {}
                    Ok(write) => {
                        if write.version > cursor + 1 {
                            self.replay(&hub, Some(cursor), write.version - 1).await?;
                        }
                        self.send(&hub, &write).await?;
                        cursor = write.version;
                    }
                    // Further behind than the hub holds: the next write fills the gap.
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return Err(End::Gone),
                },
                changed = members.recv() => {
                    if !matches!(changed, Err(broadcast::error::RecvError::Closed)) {
                        self.recheck().await?;
                    }
                }
                changed = apps.recv() => match changed {
                    Ok(app) if app != self.app => {}
                    Err(broadcast::error::RecvError::Closed) => {}
                    _ => self.recheck().await?,
                },
                _ = recheck.tick() => self.recheck().await?,
            }
        }
    }

    /// Sends the writes after `last_seen` up to `now` from the store, or a
    /// `reload` event when they cannot all be read (or `last_seen` is not
    /// a version); answers the version the stream is at.
    async fn replay(&mut self, hub: &Hub, last_seen: Option<u64>, now: u64) -> Result<u64, End> {
        let writes = match last_seen {
            Some(after) => self
                .host()
                .writes_since(&self.app, after, now)
                .await
                .map_err(closed)?,
            None => None,
        };
        let Some(writes) = writes else {
            let event = Event::default()
                .id(now.to_string())
                .event("reload")
                .data(json!({ "version": now }).to_string());
            self.events.send(event).await.map_err(|_| End::Gone)?;
            return Ok(now);
        };
        let mut at = last_seen.unwrap_or(now);
        for write in writes.iter().filter(|w| w.version <= now) {
            self.send(hub, write).await?;
            at = write.version;
        }
        Ok(at)
    }

    /// Sends `write` as this stream's line reads it: nothing when the line
    /// reads none of its entities.
    async fn send(&mut self, hub: &Hub, write: &WriteRecord) -> Result<(), End> {
        let rows = hub
            .shaped(self.host(), write, &self.line)
            .await
            .map_err(End::Closed)?;
        if rows.is_empty() {
            return Ok(());
        }
        let event = Event::default()
            .id(write.version.to_string())
            .event("write")
            .data(write_event(write, rows, self.watcher).to_string());
        self.events.send(event).await.map_err(|_| End::Gone)
    }

    /// Asks the rule book again, the caller read afresh.
    async fn recheck(&mut self) -> Result<(), End> {
        let credentials = Credentials::for_web(&self.credentials, self.door.cookie);
        let (caller, _) = self
            .host()
            .caller_of(credentials, Some(&self.space))
            .await
            .map_err(closed)?;
        self.watcher = self
            .host()
            .watch_check(&caller, &self.app)
            .await
            .map_err(closed)?;
        Ok(())
    }
}

fn closed(error: HostError) -> End {
    End::Closed(error.to_string())
}
