//! Live pages: the writes to an app's data as they commit, for the page
//! api's `./api/watch` stream. One reader per watched app per process
//! ([`Hub`]): it reads the app's rows of `ec_writes` past the last one it
//! sent (`Store::writes_since`, by the key `(app, version)`) when a write
//! may have happened — at once for a write through this process's host, on
//! PostgreSQL at another server's notification (`Store::app_writes`), and
//! at the store's wake besides (SQLite's half-second poll, PostgreSQL's
//! safety tick) — and fans each out to the app's streams. It ends once the
//! app's last stream is gone.
//!
//! What a write shows a stream is shaped by the stream's filter line: the
//! written entities' rows as that line reads them (`<line>&eid=<eid>`, one
//! read per entity written), read once per write and distinct line however
//! many streams share it ([`Hub::shaped`]). A line that reads none of them
//! shows nothing. Who wrote it and how (person, agent job, door, command)
//! is shown as activity shows it: to those the rule book lets see the
//! app's history ([`Act::SeeVersions`]), never to anybody else.
//!
//! The rule book decides per app, not per row: [`Host::watch_check`] when
//! a stream opens and again whenever the web door asks (`shed-web`'s
//! `watch.rs` says when).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use serde_json::{Value, json};
use shed_store::activity::WriteRecord;
use tokio::sync::{Notify, OnceCell, broadcast};

use crate::access::{Act, may};
use crate::activity::job_of;
use crate::{Caller, Host, HostError};

/// The most writes a stream reconnecting with `Last-Event-ID` is replayed
/// from the store: one further behind is told to reload (a page that
/// missed more than this reads the app afresh faster than it replays).
pub const REPLAY_MOST_WRITES: u64 = 1_000;

/// The writes a hub holds for a stream that has not taken them yet: one
/// further behind reads what it missed from the store.
pub const HUB_WRITES_HELD: usize = 256;

/// How many of an app's newest writes a hub keeps shaped for the streams
/// that have not read them yet.
const SHAPED_WRITES_KEPT: u64 = 64;

/// The watched apps of this process, each by its hub while a stream holds it.
#[derive(Default)]
pub(crate) struct Hubs {
    hubs: Mutex<HashMap<String, Weak<Hub>>>,
}

impl Hubs {
    /// Wakes the hub of `app`, if one runs: this process wrote to it.
    pub(crate) fn wrote(&self, app: &str) {
        let hubs = self.hubs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(hub) = hubs.get(app).and_then(Weak::upgrade) {
            hub.poke.notify_one();
        }
    }
}

/// One watched app's reader and the writes it read, shared by the app's
/// streams in this process.
pub struct Hub {
    app: String,
    sent: broadcast::Sender<Arc<WriteRecord>>,
    poke: Notify,
    /// Each recent write as each distinct line shapes it.
    shaped: Mutex<HashMap<(u64, String), ShapedOnce>>,
}

/// A write as one line reads it, read by the first stream that asks.
type ShapedOnce = Arc<OnceCell<Shaped>>;

/// A write as one line reads it: the rows, or the store's refusal.
type Shaped = Result<Vec<Value>, String>;

/// A stream's hold on its app: what the hub sends, and the app's version
/// when the stream opened.
pub struct Watching {
    /// The app's hub, which shapes each write once per line.
    pub hub: Arc<Hub>,
    /// The writes the hub reads from now on.
    pub writes: broadcast::Receiver<Arc<WriteRecord>>,
    /// The app's data version when the stream opened.
    pub version: u64,
}

/// What a stream's caller may see of the app now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watcher {
    /// Who wrote and how: the rule book lets them see the app's history.
    pub sees_who: bool,
}

impl Host {
    /// Whether `caller` may watch `app` now: the rule book's read, refused
    /// as a read of the app is (an app out of reach answers as one nobody
    /// made).
    pub async fn watch_check(&self, caller: &Caller, app: &str) -> Result<Watcher, HostError> {
        let (app, standing) = self.named_app(caller, app).await?;
        may(app.subject(), standing, Act::Read)?;
        Ok(Watcher {
            sees_who: may(app.subject(), standing, Act::SeeVersions).is_ok(),
        })
    }

    /// Starts watching `app` (checked with [`Host::watch_check`] first):
    /// the hub's writes from now on, and the version they follow.
    pub async fn watch_writes(&self, app: &str) -> Result<Watching, HostError> {
        let version = self.inner.store.data_version(app).await?;
        let hub = self.hub(app, version);
        let writes = hub.sent.subscribe();
        Ok(Watching {
            hub,
            writes,
            version,
        })
    }

    /// The app's writes after version `after`, oldest first, at most
    /// [`REPLAY_MOST_WRITES`] — or `None` when they cannot all be read:
    /// `after` is further behind than that, past the app's version, or a
    /// write is not kept.
    pub async fn writes_since(
        &self,
        app: &str,
        after: u64,
        now: u64,
    ) -> Result<Option<Vec<Arc<WriteRecord>>>, HostError> {
        if after > now || now - after > REPLAY_MOST_WRITES {
            return Ok(None);
        }
        let writes = self
            .inner
            .store
            .writes_since(app, after, REPLAY_MOST_WRITES as usize)
            .await?;
        let whole = writes
            .iter()
            .enumerate()
            .all(|(i, w)| w.version == after + 1 + i as u64);
        Ok(whole.then(|| writes.into_iter().map(Arc::new).collect()))
    }

    /// The hub of `app`, started (reading after `version`) if none runs.
    fn hub(&self, app: &str, version: u64) -> Arc<Hub> {
        let mut hubs = self
            .inner
            .hubs
            .hubs
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(hub) = hubs.get(app).and_then(Weak::upgrade) {
            return hub;
        }
        hubs.retain(|_, hub| hub.strong_count() > 0);
        let hub = Arc::new(Hub {
            app: app.to_string(),
            sent: broadcast::channel(HUB_WRITES_HELD).0,
            poke: Notify::new(),
            shaped: Mutex::default(),
        });
        hubs.insert(app.to_string(), Arc::downgrade(&hub));
        tokio::spawn(read_writes(
            self.clone(),
            Arc::downgrade(&hub),
            app.to_string(),
            version,
        ));
        hub
    }
}

/// The hub's reader: after each wake, the writes past `last`, sent on.
async fn read_writes(host: Host, hub: Weak<Hub>, app: String, mut last: u64) {
    let store = host.inner.store.clone();
    let mut wake = store.wake();
    let mut others = store.app_writes();
    drop(host);
    // A read that filled its bound reads again at once.
    let mut more = false;
    loop {
        let Some(poked) = hub.upgrade() else { return };
        tokio::select! {
            () = std::future::ready(()), if more => {}
            () = wake.changed() => {}
            () = poked.poke.notified() => {}
            heard = async { others.as_mut()?.recv().await.ok() }, if others.is_some() => {
                match heard {
                    Some(write) if write.app != app || write.version <= last => continue,
                    Some(_) => {}
                    // Lagged or gone: read anyway (a gone listener leaves the wake).
                    None => {
                        if others.as_ref().is_some_and(|o| o.is_closed()) {
                            others = None;
                        }
                    }
                }
            }
        }
        drop(poked);
        let writes = match store.writes_since(&app, last, HUB_WRITES_HELD).await {
            Ok(writes) => writes,
            Err(error) => {
                tracing::warn!(%app, %error, "could not read the app's writes for its live pages");
                continue;
            }
        };
        let Some(hub) = hub.upgrade() else { return };
        more = writes.len() == HUB_WRITES_HELD;
        for write in writes {
            last = write.version;
            // No stream reading right now is fine.
            let _ = hub.sent.send(Arc::new(write));
        }
        hub.forget_shaped(last);
    }
}

impl Hub {
    /// The app it watches (`space/slug`).
    pub fn app(&self) -> &str {
        &self.app
    }

    /// `write` as the filter line `line` reads it — its entities' rows —
    /// read once for every stream of the same line. A line the store
    /// refuses answers its sentence.
    pub async fn shaped(&self, host: &Host, write: &WriteRecord, line: &str) -> Shaped {
        let cell = {
            let mut shaped = self.shaped.lock().unwrap_or_else(|e| e.into_inner());
            shaped
                .entry((write.version, line.to_string()))
                .or_default()
                .clone()
        };
        cell.get_or_init(|| read_rows(host, &self.app, write, line))
            .await
            .clone()
    }

    fn forget_shaped(&self, newest: u64) {
        let mut shaped = self.shaped.lock().unwrap_or_else(|e| e.into_inner());
        shaped.retain(|(version, _), _| version + SHAPED_WRITES_KEPT > newest);
    }
}

/// The rows of `write`'s entities as `line` reads them, without its
/// `after=` (a page's cursor has nothing to do with what changed).
async fn read_rows(host: &Host, app: &str, write: &WriteRecord, line: &str) -> Shaped {
    let kept: Vec<&str> = line
        .split('&')
        .filter(|clause| !clause.is_empty() && !clause.starts_with("after="))
        .collect();
    let mut rows = Vec::new();
    for eid in &write.entities {
        let mut one = kept.clone();
        let clause = format!("eid={eid}");
        one.push(&clause);
        match host.read_for_streams(app, &one.join("&")).await {
            Ok(listing) => rows.extend(listing.rows),
            Err(error) => return Err(error.to_string()),
        }
    }
    Ok(rows)
}

/// The event a stream sends for `write` read as `rows`: the version, what
/// changed, and — to a watcher who may see the app's history — who and how.
pub fn write_event(write: &WriteRecord, rows: Vec<Value>, watcher: Watcher) -> Value {
    let mut event = json!({
        "version": write.version,
        "at": write.at,
        "entities": write.entities,
        "rows": rows,
    });
    if watcher.sees_who {
        event["by"] = json!({
            "eid": write.by.eid,
            "handle": write.by.handle,
            "name": write.by.name,
        });
        event["via"] = json!(write.via);
        event["job"] = json!(job_of(write.via.as_deref()));
        event["door"] = json!(write.through.door);
        event["command"] = json!(write.through.command);
        event["client"] = json!(write.through.client);
    }
    event
}
