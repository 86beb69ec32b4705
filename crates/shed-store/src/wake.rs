//! The wake of the platform's watcher: when to look again whether something
//! it watches — the deploys, the memberships — changed, made by this
//! process or any other on the same database. [`Store::wake`] hands one to
//! each watcher; [`Wake::changed`] returns when it is worth reading.
//!
//! On SQLite it is the poll: every [`POLL`] (one file on one machine; the
//! CLI beside a server writes to it without telling anybody, and a read
//! every half second costs microseconds). On PostgreSQL it is the
//! database's own word: the writes a watcher cares about notify a channel
//! as they commit, one connection per process LISTENs on it
//! (`postgres/wake.rs`), and every wake returns at once — with a slow
//! [`SAFETY_TICK`] besides, in case a notification was lost with a
//! connection.
//!
//! A watcher of an app's data writes asks [`Store::app_writes`] besides:
//! on PostgreSQL each committed write, by any server, as the app and the
//! version it committed ([`AppWrite`]); on SQLite nothing (the poll finds
//! them: `ec_writes` read by its key).

use std::time::Duration;

use tokio::sync::watch;
use tokio::time::{Interval, MissedTickBehavior};

use crate::{Backend, Store};

/// How often a watcher reads on SQLite, where nothing tells it of a write
/// another process made.
pub const POLL: Duration = Duration::from_millis(500);

/// How often a watcher reads on PostgreSQL when no notification came: a
/// notification is lost only while the listening connection is down, and
/// the listener wakes every watcher once it is back; this tick is for
/// what even that cannot see (a connection silently cut).
pub const SAFETY_TICK: Duration = Duration::from_secs(10);

/// The most app writes the listener holds for a watcher that has not read
/// them yet: one that falls further behind is told it lagged, and reads
/// what it missed from the store.
pub const APP_WRITES_HELD: usize = 1_024;

/// A write to an app's data, as announced on the database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppWrite {
    /// The app written (`space/slug`).
    pub app: String,
    /// The app data version the write committed as.
    pub version: u64,
}

/// When a watcher should read again: its first [`Wake::changed`] returns at
/// once, each later one after a change (PostgreSQL) or a tick.
pub struct Wake {
    tick: Interval,
    /// The listener's count of notifications and reconnections, on
    /// PostgreSQL while it listens; none on SQLite.
    notified: Option<watch::Receiver<u64>>,
}

impl Wake {
    fn every(period: Duration, notified: Option<watch::Receiver<u64>>) -> Wake {
        let mut tick = tokio::time::interval(period);
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        Wake { tick, notified }
    }

    /// Returns when something the platform watches may have changed: the
    /// first time at once, then on SQLite at the next [`POLL`], on
    /// PostgreSQL at the next notification — or [`SAFETY_TICK`] after the
    /// last wake when none comes.
    pub async fn changed(&mut self) {
        match &mut self.notified {
            None => {
                self.tick.tick().await;
            }
            Some(notified) => {
                tokio::select! {
                    listening = notified.changed() => {
                        if listening.is_err() {
                            // The listener is gone: the tick alone wakes.
                            self.notified = None;
                        }
                        self.tick.reset();
                    }
                    _ = self.tick.tick() => {}
                }
            }
        }
    }
}

impl Store {
    /// A wake for one watcher of the platform's records. On PostgreSQL the
    /// first one starts the process's listening connection (needs a tokio
    /// runtime; without one it polls at [`SAFETY_TICK`]).
    pub fn wake(&self) -> Wake {
        match &*self.backend {
            Backend::Sqlite(_) => Wake::every(POLL, None),
            Backend::Postgres(db) => Wake::every(SAFETY_TICK, db.notified()),
        }
    }

    /// The writes to apps' data every server on the database commits from
    /// now on, on PostgreSQL (needs a tokio runtime); `None` on SQLite,
    /// whose watchers poll.
    pub fn app_writes(&self) -> Option<tokio::sync::broadcast::Receiver<AppWrite>> {
        match &*self.backend {
            Backend::Sqlite(_) => None,
            Backend::Postgres(db) => db.app_writes(),
        }
    }
}
