//! The platform's changes on PostgreSQL as notifications: every write a
//! watcher cares about — a deploy, a membership added, changed or removed —
//! calls [`announce`] inside its transaction, which PostgreSQL delivers on
//! the [`CHANNEL`] when the transaction commits (never for one rolled
//! back), to every shed server on the database. One connection per process,
//! outside the pool, LISTENs on it ([`Listener`]) and moves a count each
//! watcher's [`crate::Wake`] waits on. A write to an app's data announces
//! itself on the same channel ([`announce_write`]: `write <version>
//! <app>`), which the listener hands to the watchers of app writes
//! ([`crate::AppWrite`]) instead of moving the count — the platform's
//! watchers do not read for a row written. When that connection is lost it
//! connects again, backing off up to [`LONGEST_RETRY`]; once listening
//! again it wakes every watcher, since a notification sent while it was
//! away is gone.

use std::future::poll_fn;
use std::sync::Mutex;
use std::time::Duration;

use deadpool_postgres::GenericClient;
use tokio::sync::{broadcast, watch};
use tokio_postgres::{AsyncMessage, Client, Config, Connection, Socket};

use super::tls::{Tls, TlsStream};
use crate::txn::Announced;
use crate::wake::APP_WRITES_HELD;
use crate::{AppWrite, StoreError};

/// The channel the platform's changes are announced on.
pub(crate) const CHANNEL: &str = "shed_changes";

/// The first pause before connecting again after the listening connection
/// was lost; each failed attempt doubles it, up to [`LONGEST_RETRY`].
const FIRST_RETRY: Duration = Duration::from_millis(100);
const LONGEST_RETRY: Duration = Duration::from_secs(5);

/// How long the listening connection may be silent before TCP asks the
/// server whether it is still there, how often it asks again, and how
/// many unanswered probes end it: a server gone without closing the
/// connection is noticed in about 40 s (the safety tick keeps the watchers
/// reading meanwhile).
const KEEPALIVE: Duration = Duration::from_secs(10);
const KEEPALIVE_PROBES: u32 = 3;

impl Announced {
    fn payload(self) -> &'static str {
        match self {
            Announced::Deploy => "deploy",
            Announced::Membership => "membership",
            Announced::Lifecycle => "lifecycle",
        }
    }
}

/// Announces `change` on [`CHANNEL`], delivered when `txn` commits: the one
/// way a write tells the listeners of every server.
pub(crate) async fn announce(
    txn: &impl GenericClient,
    change: Announced,
) -> Result<(), StoreError> {
    let stmt = txn.prepare_cached("SELECT pg_notify($1, $2)").await?;
    txn.execute(&stmt, &[&CHANNEL, &change.payload()]).await?;
    Ok(())
}

/// What a write to an app's data notifies: `write <version> <app>`, sent
/// within the apply's transaction (`apply.rs`'s `close`).
pub(crate) fn write_payload(app: &str, version: i64) -> String {
    format!("{WRITE} {version} {app}")
}

/// The first word of an app write's notification.
const WRITE: &str = "write";

/// The app write a notification's payload names, if it names one.
fn app_write(payload: &str) -> Option<AppWrite> {
    let (version, app) = payload.strip_prefix(WRITE)?.trim_start().split_once(' ')?;
    Some(AppWrite {
        app: app.to_string(),
        version: version.parse().ok()?,
    })
}

/// A process's listening connection, started by the first watcher.
pub(crate) struct Listener {
    /// The app writes announced on the database, by any server.
    writes: broadcast::Sender<AppWrite>,
    /// What every watcher's receiver is cloned from; the listening task
    /// ends once it and every clone are dropped.
    notified: watch::Receiver<u64>,
    /// The count's sender and where and how to connect, until the first
    /// watcher starts the task with them.
    unstarted: Mutex<Option<(watch::Sender<u64>, Config, Tls)>>,
}

impl Listener {
    /// A listener of the database `config` reaches through `tls`, not yet
    /// connected.
    pub(crate) fn new(config: &Config, tls: Tls) -> Listener {
        let (sender, notified) = watch::channel(0);
        let mut config = config.clone();
        config
            .keepalives_idle(KEEPALIVE)
            .keepalives_interval(KEEPALIVE)
            .keepalives_retries(KEEPALIVE_PROBES);
        Listener {
            writes: broadcast::channel(APP_WRITES_HELD).0,
            notified,
            unstarted: Mutex::new(Some((sender, config, tls))),
        }
    }

    /// A receiver of the count of notifications, starting the listening
    /// task on the first call; none without a tokio runtime to run it.
    pub(crate) fn subscribe(&self) -> Option<watch::Receiver<u64>> {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!("no async runtime: changes on the database are polled");
            return None;
        };
        let mut unstarted = self.unstarted.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((sender, config, tls)) = unstarted.take() {
            runtime.spawn(listen(sender, self.writes.clone(), config, tls));
        }
        Some(self.notified.clone())
    }

    /// A receiver of the app writes announced on the database from now on,
    /// starting the listening task as [`Listener::subscribe`] does.
    pub(crate) fn app_writes(&self) -> Option<broadcast::Receiver<AppWrite>> {
        let receiver = self.writes.subscribe();
        self.subscribe().map(|_| receiver)
    }
}

/// Connects, LISTENs and counts notifications until every receiver is
/// gone, connecting again whenever the connection is lost.
async fn listen(
    notified: watch::Sender<u64>,
    writes: broadcast::Sender<AppWrite>,
    config: Config,
    tls: Tls,
) {
    let mut retry = FIRST_RETRY;
    let heard = Heard {
        notified: &notified,
        writes: &writes,
    };
    loop {
        let lost = tokio::select! {
            lost = listen_once(heard, &config, tls.clone()) => lost,
            () = notified.closed() => return,
        };
        if lost.listened {
            retry = FIRST_RETRY;
        }
        tracing::warn!(
            error = %lost.error,
            "not listening for the database's changes; connecting again in {retry:?}"
        );
        tokio::select! {
            () = tokio::time::sleep(retry) => {}
            () = notified.closed() => return,
        }
        retry = (retry * 2).min(LONGEST_RETRY);
    }
}

/// Where a notification goes: an app write to its watchers, anything else
/// moves the platform watchers' count.
#[derive(Clone, Copy)]
struct Heard<'a> {
    notified: &'a watch::Sender<u64>,
    writes: &'a broadcast::Sender<AppWrite>,
}

/// Why a listening connection ended, and whether it had listened.
struct Lost {
    error: String,
    listened: bool,
}

/// One connection's life: connect, LISTEN, wake every watcher once (what
/// was announced before it listened is not lost to them), then count each
/// notification until the connection fails.
async fn listen_once(heard: Heard<'_>, config: &Config, tls: Tls) -> Lost {
    let lost = |error: String, listened| Lost { error, listened };
    let (client, mut connection) = match config.connect(tls).await {
        Ok(connected) => connected,
        Err(e) => return lost(e.to_string(), false),
    };
    if let Err(error) = subscribe(&client, &mut connection, heard).await {
        return lost(error, false);
    }
    tracing::debug!("listening on {CHANNEL}");
    heard.notified.send_modify(|count| *count += 1);
    loop {
        let message = poll_fn(|cx| connection.poll_message(cx)).await;
        if let Err(error) = count(message, heard) {
            return lost(error, true);
        }
    }
}

/// Counts a message of the listening connection if it is a notification
/// (or hands on the app write it names); the connection's failure or end is
/// an error.
fn count(
    message: Option<Result<AsyncMessage, tokio_postgres::Error>>,
    heard: Heard<'_>,
) -> Result<(), String> {
    match message {
        Some(Ok(AsyncMessage::Notification(note))) => {
            match app_write(note.payload()) {
                // Nobody watching app writes is fine.
                Some(write) => drop(heard.writes.send(write)),
                None => heard.notified.send_modify(|count| *count += 1),
            }
            Ok(())
        }
        Some(Ok(_)) => Ok(()),
        Some(Err(e)) => Err(e.to_string()),
        None => Err("the server closed the connection".into()),
    }
}

/// Runs `LISTEN` on `client`, driving its `connection` meanwhile (a
/// notification already arriving counts too).
async fn subscribe(
    client: &Client,
    connection: &mut Connection<Socket, TlsStream>,
    heard: Heard<'_>,
) -> Result<(), String> {
    let statement = format!("LISTEN {CHANNEL}");
    let listening = client.batch_execute(&statement);
    tokio::pin!(listening);
    loop {
        tokio::select! {
            done = &mut listening => return done.map_err(|e| e.to_string()),
            message = poll_fn(|cx| connection.poll_message(cx)) => count(message, heard)?,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_app_write_reads_back_from_its_payload() {
        assert_eq!(
            app_write(&write_payload("demo/runs", 12)),
            Some(AppWrite {
                app: "demo/runs".into(),
                version: 12
            })
        );
        for other in [
            "deploy",
            "membership",
            "lifecycle",
            "write x demo/runs",
            "write 3",
        ] {
            assert_eq!(app_write(other), None, "{other}");
        }
    }
}
