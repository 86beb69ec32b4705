//! The SQLite engine under the store: one writer thread that owns the write
//! connection and commits in groups, and a pool of read connections used from
//! `spawn_blocking`, so async callers never block the runtime and readers
//! never wait on the writer (WAL).
//!
//! Group commit: the writer takes every pending write, runs each in its own
//! savepoint inside one transaction (a refused write rolls back alone), commits
//! once, and only then acknowledges every waiter with its own result.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::mpsc;

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior, config::DbConfig};

use crate::StoreError;

/// The most writes one group commit takes.
const MAX_GROUP: usize = 512;
/// Read connections kept open between reads.
const IDLE_READERS: usize = 8;

/// Told the outcome of the group's commit; acknowledges the waiter.
pub(crate) type Completion = Box<dyn FnOnce(Result<(), StoreError>) + Send>;
/// A write: runs inside the group's transaction and returns how to
/// acknowledge it once the group is committed (or not). It sets the flag when
/// it left the transaction in a state that must not be committed.
pub(crate) type Job = Box<dyn FnOnce(&Transaction<'_>, &mut bool) -> Completion + Send>;

/// The open database: the writer's queue and the idle read connections.
pub(crate) struct Engine {
    path: PathBuf,
    writer: mpsc::Sender<Job>,
    readers: Mutex<Vec<Connection>>,
}

fn open_connection(path: &Path, write: bool) -> Result<Connection, StoreError> {
    let flags = if write {
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE
    } | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.set_prepared_statement_cache_capacity(256);
    // A cached statement keeps its plan: without the query planner stability
    // guarantee SQLite re-prepares a statement whenever a value that could
    // sway its plan is rebound (every `LIMIT ?`, every `LIKE ?`), which made
    // re-parsing the SQL a third of a read's cost.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    // WAL: readers see the last commit and never wait on the writer.
    // synchronous=FULL: a commit is on disk (WAL fsynced) before it is
    // acknowledged, so it survives kill -9 and power loss.
    conn.execute_batch(
        "PRAGMA journal_mode=WAL;
         PRAGMA synchronous=FULL;
         PRAGMA temp_store=MEMORY;
         PRAGMA cache_size=-32000;",
    )?;
    if !write {
        conn.execute_batch("PRAGMA query_only=ON;")?;
    }
    Ok(conn)
}

impl Engine {
    /// Opens (creating) the database at `path`, migrates it and starts the writer.
    pub(crate) fn open(path: &Path) -> Result<Engine, StoreError> {
        let mut conn = open_connection(path, true)?;
        crate::migrations::migrate(&mut conn)?;
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("shed-store-writer".into())
            .spawn(move || writer_loop(conn, rx))
            .map_err(|e| StoreError::Internal(format!("could not start the writer: {e}")))?;
        Ok(Engine {
            path: path.to_path_buf(),
            writer: tx,
            readers: Mutex::new(Vec::new()),
        })
    }

    /// Queues a write; the caller waits on its own acknowledgement.
    pub(crate) fn submit(&self, job: Job) -> Result<(), StoreError> {
        self.writer
            .send(job)
            .map_err(|_| StoreError::Internal("the writer has stopped".into()))
    }

    /// Runs `f` on a read connection (blocking: call from a blocking thread).
    pub(crate) fn with_reader<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let idle = self.readers.lock().ok().and_then(|mut r| r.pop());
        let conn = match idle {
            Some(c) => c,
            None => open_connection(&self.path, false)?,
        };
        let result = catch_unwind(AssertUnwindSafe(|| f(&conn)))
            .unwrap_or_else(|_| Err(StoreError::Internal("a read panicked".into())));
        if conn.is_autocommit()
            && let Ok(mut idle) = self.readers.lock()
            && idle.len() < IDLE_READERS
        {
            idle.push(conn);
        }
        result
    }
}

/// Runs `f` inside a savepoint of the group's transaction: its changes are
/// released into the group when it succeeds and rolled back alone when not.
pub(crate) fn in_savepoint<T>(
    txn: &Transaction<'_>,
    poisoned: &mut bool,
    f: impl FnOnce(&Transaction<'_>) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    txn.execute_batch("SAVEPOINT write_job")?;
    let result = catch_unwind(AssertUnwindSafe(|| f(txn)))
        .unwrap_or_else(|_| Err(StoreError::Internal("a write panicked".into())));
    let closed = match result {
        Ok(_) => txn.execute_batch("RELEASE write_job"),
        Err(_) => txn.execute_batch("ROLLBACK TO write_job; RELEASE write_job"),
    };
    if let Err(e) = closed {
        *poisoned = true;
        return Err(StoreError::Internal(e.to_string()));
    }
    if txn.is_autocommit() {
        // SQLite rolled the whole transaction back (disk full, I/O error…).
        *poisoned = true;
        return Err(StoreError::Internal(
            "the write's transaction was lost".into(),
        ));
    }
    result
}

fn writer_loop(mut conn: Connection, rx: mpsc::Receiver<Job>) {
    while let Ok(first) = rx.recv() {
        let mut jobs = vec![first];
        while jobs.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(job) => jobs.push(job),
                Err(_) => break,
            }
        }
        let txn = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
            Ok(txn) => txn,
            Err(e) => {
                // Dropping the jobs tells every waiter the write failed.
                tracing::error!(error = %e, "could not begin a write transaction");
                continue;
            }
        };
        let mut poisoned = false;
        let completions: Vec<Completion> = jobs
            .into_iter()
            .map(|job| job(&txn, &mut poisoned))
            .collect();
        let outcome = if poisoned {
            let _ = txn.rollback();
            Err(StoreError::Internal(
                "a write failed inside the database and its group was rolled back".into(),
            ))
        } else {
            txn.commit().map_err(StoreError::from)
        };
        if let Err(e) = &outcome {
            tracing::error!(error = %e, "a group commit failed");
        }
        for complete in completions {
            complete(outcome.clone());
        }
    }
}
