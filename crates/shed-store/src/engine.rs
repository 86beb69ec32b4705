//! The SQLite engine under the store: one writer thread that owns the write
//! connection and commits in groups, a checkpointer thread that copies the
//! WAL into the database file off the write path, and a pool of read
//! connections used from blocking threads, so async callers never block the
//! runtime and readers never wait on the writer (WAL).
//!
//! Group commit: the writer takes every pending write and runs them in one
//! transaction, commits once, and only then acknowledges every waiter with its
//! own result. The first write of a group runs bare in the transaction (when
//! it is refused, the transaction holds nothing else and is rolled back whole);
//! every later one runs in a savepoint of its own, so a refused write rolls
//! back alone.
//!
//! Checkpoints: the writer's automatic checkpoint is off, so a commit never
//! waits for database pages to be copied and fsynced. Once the WAL holds
//! [`CHECKPOINT_PAGES`] the writer wakes the checkpointer, which runs a
//! PASSIVE checkpoint on a connection of its own; should the WAL reach
//! [`WAL_BOUND_PAGES`] anyway, the writer checkpoints itself, so the WAL
//! cannot grow without bound.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::mpsc;

use rusqlite::{
    Connection, OpenFlags, Transaction, TransactionBehavior, config::DbConfig, wal::CheckpointMode,
};

use crate::StoreError;

/// The most writes one group commit takes.
const MAX_GROUP: usize = 512;
/// Read connections kept open between reads.
const IDLE_READERS: usize = 8;
/// WAL pages at which the checkpointer is woken (SQLite's own default).
const CHECKPOINT_PAGES: i32 = 1000;
/// WAL pages at which the writer checkpoints itself.
const WAL_BOUND_PAGES: i32 = 8 * CHECKPOINT_PAGES;

/// Told the outcome of the group's commit; acknowledges the waiter.
pub(crate) type Completion = Box<dyn FnOnce(Result<(), StoreError>) + Send>;

/// What a write did inside the group's transaction.
pub(crate) struct Done {
    /// The write was refused (or failed): its changes must not be kept.
    pub refused: bool,
    /// Acknowledges the waiter once the group is committed (or not).
    pub complete: Completion,
}

/// A write: runs inside the group's transaction and says how it went.
pub(crate) type Job = Box<dyn FnOnce(&Transaction<'_>) -> Done + Send>;

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
    /// Opens (creating) the database at `path`, migrates it and starts the
    /// writer and the checkpointer.
    pub(crate) fn open(path: &Path) -> Result<Engine, StoreError> {
        let mut conn = open_connection(path, true)?;
        crate::migrations::migrate(&mut conn)?;
        let checkpointer = open_connection(path, true)?;
        // One pending wake-up is enough: a checkpoint copies all there is.
        let (wake, woken) = mpsc::sync_channel::<()>(1);
        conn.wal_hook(Some(move |wal: &mut rusqlite::hooks::Wal, pages: i32| {
            if pages >= WAL_BOUND_PAGES {
                // The checkpointer has fallen behind (or a reader holds old
                // pages): copy in line, as SQLite's own auto-checkpoint would.
                if let Err(e) = wal.checkpoint_v2(CheckpointMode::PASSIVE) {
                    tracing::warn!(error = %e, pages, "the writer's checkpoint failed");
                }
            } else if pages >= CHECKPOINT_PAGES {
                let _ = wake.try_send(());
            }
            Ok(())
        }))?;
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("shed-store-checkpointer".into())
            .spawn(move || checkpointer_loop(checkpointer, woken))
            .map_err(|e| StoreError::Internal(format!("could not start the checkpointer: {e}")))?;
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

/// Runs `f` as one write of a group: its result, and how to answer its caller
/// once the group is committed or rolled back.
pub(crate) fn job<T: Send + 'static>(
    txn: &Transaction<'_>,
    f: impl FnOnce(&Transaction<'_>) -> Result<T, StoreError>,
    answer: impl FnOnce(Result<T, StoreError>) + Send + 'static,
) -> Done {
    let result = catch_unwind(AssertUnwindSafe(|| f(txn)))
        .unwrap_or_else(|_| Err(StoreError::Internal("a write panicked".into())));
    Done {
        refused: result.is_err(),
        complete: Box::new(move |committed: Result<(), StoreError>| {
            answer(committed.and(result));
        }),
    }
}

fn begin(conn: &Connection) -> Result<Transaction<'_>, StoreError> {
    Ok(Transaction::new_unchecked(
        conn,
        TransactionBehavior::Immediate,
    )?)
}

/// Runs a write after others of the group, in a savepoint of its own: its
/// changes are released into the group when it succeeds and rolled back alone
/// when not. Sets `lost` when the transaction can no longer be committed; a
/// write that could not be run is dropped, which answers its caller.
fn in_savepoint(txn: &Transaction<'_>, job: Job, lost: &mut bool) -> Option<Completion> {
    if txn.execute_batch("SAVEPOINT write_job").is_err() {
        *lost = true;
        return None;
    }
    let done = job(txn);
    let closed = if done.refused {
        txn.execute_batch("ROLLBACK TO write_job; RELEASE write_job")
    } else {
        txn.execute_batch("RELEASE write_job")
    };
    // SQLite may have rolled the whole transaction back (disk full, I/O error…).
    *lost = closed.is_err() || txn.is_autocommit();
    Some(done.complete)
}

fn writer_loop(conn: Connection, rx: mpsc::Receiver<Job>) {
    while let Ok(first) = rx.recv() {
        let mut jobs = vec![first];
        while jobs.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(job) => jobs.push(job),
                Err(_) => break,
            }
        }
        run_group(&conn, jobs);
    }
}

/// Runs a group of writes, committing as few transactions as it can, and
/// answers every waiter once its write is committed or known not to be.
fn run_group(conn: &Connection, jobs: Vec<Job>) {
    let mut jobs = jobs.into_iter();
    while let Some(first) = jobs.next() {
        let txn = match begin(conn) {
            Ok(txn) => txn,
            Err(e) => {
                // Dropping the jobs tells every waiter the write failed.
                tracing::error!(error = %e, "could not begin a write transaction");
                return;
            }
        };
        // The first write runs bare: refused, it is rolled back with the
        // whole transaction, which holds nothing else.
        let done = first(&txn);
        if done.refused {
            if let Err(e) = txn.rollback() {
                tracing::error!(error = %e, "could not roll back a refused write");
            }
            (done.complete)(Ok(()));
            continue;
        }
        let mut lost = txn.is_autocommit();
        let mut completions = vec![done.complete];
        while !lost && let Some(job) = jobs.next() {
            completions.extend(in_savepoint(&txn, job, &mut lost));
        }
        let outcome = if lost {
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

/// Copies the WAL into the database file whenever the writer asks, until the
/// writer stops.
fn checkpointer_loop(conn: Connection, woken: mpsc::Receiver<()>) {
    while woken.recv().is_ok() {
        if let Err(e) = conn.wal_checkpoint_v2(None::<&str>, CheckpointMode::PASSIVE) {
            tracing::warn!(error = %e, "a checkpoint failed; the next one will copy its pages");
        }
    }
}
