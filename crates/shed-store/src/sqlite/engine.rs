//! The SQLite engine under the store: one writer thread that owns the write
//! connection and commits in groups, a checkpointer thread that copies the
//! WAL into the database file off the write path, and a pool of read
//! connections used in place by whoever reads; readers never wait on the
//! writer (WAL).
//!
//! Group commit: the writer takes every pending write and runs them one after
//! another in one transaction, commits once, and only then acknowledges every
//! waiter with its own result. No write runs in a savepoint (a savepoint makes
//! SQLite copy every page it touches, and FTS5 write out its pending terms):
//! when a write is refused, the transaction is rolled back whole, the refusal
//! answered, and the writes kept before it are run again and committed on
//! their own — so a refused write costs its group one more commit, and every
//! write runs at most twice. Writers answered together come back together:
//! when the last group held several writes, the next keeps its transaction
//! open up to [`GATHER`] for as many, running each as it arrives, so
//! concurrent writers share one fsync rather than drifting into groups of one
//! or two. A lone writer never waits.
//!
//! Checkpoints: the writer's automatic checkpoint is off, so a commit never
//! waits for database pages to be copied and fsynced. Once the WAL holds
//! [`CHECKPOINT_PAGES`] pages not yet copied, the writer wakes the
//! checkpointer, which runs a PASSIVE checkpoint on a connection of its own.
//! Under a steady stream of writes the WAL cannot restart from its beginning
//! (that needs every page copied when a write begins), so once it reaches
//! [`WAL_BOUND_PAGES`] the writer checkpoints what is left itself, and the
//! next write restarts it: the WAL stays bounded.
//!
//! The full text: FTS5 keeps `ec_fts` as segments, one more each write
//! transaction that writes a document, and merges them a little at each
//! write; a search reads every segment. Once the writer has had no write
//! for [`MERGE_IDLE`] it merges what FTS5 left, [`MERGE_STEP_PAGES`] pages a
//! step, each step its own transaction, any [`MERGE_SEGMENTS`] segments of
//! one level together, until nothing is left to merge or a write arrives —
//! so a run of single writes leaves a segment or two, not one a write's
//! worth, and a write waits at most one step.
//!
//! Reads: every read has [`READ_DEADLINE`](crate::deadline::READ_DEADLINE), past which
//! it is stopped and answered with a sentence. A read in place is watched by
//! a progress handler, called every [`PROGRESS_STEPS`](super::PROGRESS_STEPS)
//! steps of SQLite's machine. A read run apart ([`Engine::read_apart`]) is
//! also interrupted — SQLite then stops at its next row — by its caller's
//! task at the deadline, or when that task is dropped (its caller is gone):
//! a row of a scan can cost far more than a listing's every step.

use std::collections::VecDeque;
use std::os::unix::fs::MetadataExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, LazyLock, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::{
    Connection, OpenFlags, Transaction, TransactionBehavior, config::DbConfig, wal::CheckpointMode,
};

use super::PROGRESS_STEPS;
use crate::deadline::{READ_DEADLINE, too_long};
use crate::error::closed;
use crate::write_metrics::{COMMIT_SECONDS, WRITE_GROUP_SIZE};
use crate::{NotReady, StoreError};

/// The most writes one group commit takes.
const MAX_GROUP: usize = 512;
/// The longest a group waits for the writers of the last group to come back.
const GATHER: Duration = Duration::from_micros(250);
/// Read connections kept open between reads.
const IDLE_READERS: usize = 8;
/// WAL pages at which the checkpointer is woken (SQLite's own default).
const CHECKPOINT_PAGES: i32 = 1000;
/// WAL pages at which the writer checkpoints itself.
const WAL_BOUND_PAGES: i32 = 8 * CHECKPOINT_PAGES;

/// How long the writer has had no write before it merges the full text.
pub const MERGE_IDLE: Duration = Duration::from_millis(100);
/// Segments of one level of the full text's index that a merge step
/// merges (FTS5's `usermerge`, set on the index at the first merge of a
/// process; FTS5's own default is 4): the fewest, so a merged index is
/// about one segment a level.
pub const MERGE_SEGMENTS: i64 = 2;
/// Pages of full text one merge step writes (FTS5's `'merge'` command, as
/// its own transaction): the most a write arriving during one waits for.
pub const MERGE_STEP_PAGES: i64 = 64;

/// The WAL's pages after each commit, a metric beside the writer's
/// (`WRITE_GROUP_SIZE`, `COMMIT_SECONDS`).
const WAL_PAGES: &str = "shed_store_wal_pages";

/// A write queued for the writer.
pub(crate) trait Write: Send {
    /// Runs the write in the group's transaction (again, when the group was
    /// rolled back for another's refusal); answers whether it was refused.
    fn run(&mut self, txn: &Transaction<'_>) -> bool;
    /// Answers the caller once the group is committed, or is known not to be.
    fn answer(self: Box<Self>, committed: Result<(), StoreError>);
}

/// A boxed [`Write`], as the writer's queue holds it.
pub(crate) type Job = Box<dyn Write>;

/// A write as a function of the transaction, and how to answer its caller.
pub(crate) struct Pending<T, F, A> {
    write: F,
    result: Option<Result<T, StoreError>>,
    answer: A,
}

impl<T, F, A> Pending<T, F, A> {
    pub(crate) fn new(write: F, answer: A) -> Pending<T, F, A> {
        Pending {
            write,
            result: None,
            answer,
        }
    }
}

impl<T, F, A> Write for Pending<T, F, A>
where
    T: Send,
    F: Fn(&Transaction<'_>) -> Result<T, StoreError> + Send,
    A: FnOnce(Result<T, StoreError>) + Send,
{
    fn run(&mut self, txn: &Transaction<'_>) -> bool {
        let result = catch_unwind(AssertUnwindSafe(|| (self.write)(txn)))
            .unwrap_or_else(|_| Err(StoreError::Internal("a write panicked".into())));
        let refused = result.is_err();
        self.result = Some(result);
        refused
    }

    fn answer(self: Box<Self>, committed: Result<(), StoreError>) {
        let result = self
            .result
            .unwrap_or_else(|| Err(StoreError::Internal("the write was not run".into())));
        (self.answer)(committed.and(result));
    }
}

/// The open database: the writer's queue and the idle read connections.
pub(crate) struct Engine {
    path: PathBuf,
    /// (device, inode) of the database file opened: the file at `path` is
    /// still the one written while they match.
    file: (u64, u64),
    /// The writer's queue; `None` once the store is closed.
    writer: RwLock<Option<mpsc::Sender<Job>>>,
    /// The writer's thread, joined when the store is closed; it joins the
    /// checkpointer's before it closes its own connection, the last, so
    /// that when the store is closed every connection is, and the WAL is
    /// gone.
    writer_thread: Mutex<Option<JoinHandle<Result<(), StoreError>>>>,
    /// Idle read connections; `None` once the store is closed, so that no
    /// read opens a connection after the close and keeps the WAL alive.
    readers: Mutex<Option<Vec<Reader>>>,
}

/// (device, inode) of the file at `path`.
fn file_identity(path: &Path) -> std::io::Result<(u64, u64)> {
    let meta = std::fs::metadata(path)?;
    Ok((meta.dev(), meta.ino()))
}

/// The moment deadlines are counted from, as microseconds in an atomic.
static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);

fn micros_now() -> u64 {
    u64::try_from(EPOCH.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// The deadline of the read running on a connection; its progress handler
/// reads it.
#[derive(Default)]
struct Watch {
    /// Microseconds after [`EPOCH`] past which the read is stopped.
    deadline: AtomicU64,
    /// Set when the read was stopped for its deadline.
    late: AtomicBool,
}

/// A read connection and what stops the read running on it.
pub(crate) struct Reader {
    conn: Connection,
    watch: Arc<Watch>,
}

/// Interrupts a read run apart when dropped before [`Stopper::disarm`]: its
/// caller is gone.
struct Stopper {
    watch: Arc<Watch>,
    interrupt: rusqlite::InterruptHandle,
    armed: bool,
}

impl Stopper {
    /// Stops the read at its next row; `late` says it is for its deadline.
    fn stop(&self, late: bool) {
        if late {
            self.watch.late.store(true, Ordering::Relaxed);
        }
        self.interrupt.interrupt();
    }

    /// The read answered: nothing to stop.
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for Stopper {
    fn drop(&mut self) {
        if self.armed {
            self.stop(false);
        }
    }
}

impl Reader {
    fn open(path: &Path) -> Result<Reader, StoreError> {
        let mut conn = open_connection(path, false)?;
        let watch = Arc::new(Watch::default());
        let seen = watch.clone();
        conn.progress_handler(
            PROGRESS_STEPS,
            Some(move || {
                let late = micros_now() >= seen.deadline.load(Ordering::Relaxed);
                if late {
                    seen.late.store(true, Ordering::Relaxed);
                }
                late
            }),
        )?;
        Ok(Reader { conn, watch })
    }

    /// Runs `f` on the connection, within [`READ_DEADLINE`].
    fn run<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let deadline = micros_now()
            .saturating_add(u64::try_from(READ_DEADLINE.as_micros()).unwrap_or(u64::MAX));
        self.watch.deadline.store(deadline, Ordering::Relaxed);
        self.watch.late.store(false, Ordering::Relaxed);
        let result = catch_unwind(AssertUnwindSafe(|| f(&self.conn)))
            .unwrap_or_else(|_| Err(StoreError::Internal("a read panicked".into())));
        match result {
            Err(_) if self.watch.late.load(Ordering::Relaxed) => Err(too_long()),
            other => other,
        }
    }
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
    /// Opens (creating, mode 0600) the database at `path`, migrates it and
    /// starts the writer and the checkpointer.
    pub(crate) fn open(path: &Path) -> Result<Engine, StoreError> {
        crate::private::make_database_file(path)?;
        let mut conn = open_connection(path, true)?;
        super::migrations::migrate(&mut conn)?;
        for file in crate::private::database_files(path) {
            crate::private::warn_if_open("the database file", &file, crate::PRIVATE_FILE_MODE);
        }
        let checkpointer = open_connection(path, true)?;
        // One pending wake-up is enough: a checkpoint copies all there is.
        let (wake, woken) = mpsc::sync_channel::<()>(1);
        // WAL pages the checkpointer has copied (of the WAL as it stood then).
        let copied = Arc::new(AtomicI32::new(0));
        let seen = copied.clone();
        conn.wal_hook(Some(move |wal: &mut rusqlite::hooks::Wal, pages: i32| {
            metrics::gauge!(WAL_PAGES).set(pages);
            let mut done = seen.load(Ordering::Relaxed);
            if pages < done {
                // The WAL was restarted from its beginning.
                seen.store(0, Ordering::Relaxed);
                done = 0;
            }
            if pages >= WAL_BOUND_PAGES {
                // The checkpointer has fallen behind (or a reader holds old
                // pages): copy in line, as SQLite's own auto-checkpoint would.
                match wal.checkpoint_v2(CheckpointMode::PASSIVE) {
                    // The checkpointer is at it: the next commit tries again.
                    Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy) => {}
                    Err(e) => tracing::warn!(error = %e, pages, "the writer's checkpoint failed"),
                    Ok(_) => {}
                }
            } else if pages - done >= CHECKPOINT_PAGES {
                let _ = wake.try_send(());
            }
            Ok(())
        }))?;
        let checkpointed = copied;
        let (tx, rx) = mpsc::channel::<Job>();
        let checkpointer_thread = std::thread::Builder::new()
            .name("shed-store-checkpointer".into())
            .spawn(move || checkpointer_loop(checkpointer, woken, &checkpointed))
            .map_err(|e| StoreError::Internal(format!("could not start the checkpointer: {e}")))?;
        let file = file_identity(path).map_err(|e| {
            StoreError::Internal(format!(
                "could not read the database {}: {e}",
                path.display()
            ))
        })?;
        let writer_thread = std::thread::Builder::new()
            .name("shed-store-writer".into())
            .spawn(move || writer_loop(conn, rx, checkpointer_thread))
            .map_err(|e| StoreError::Internal(format!("could not start the writer: {e}")))?;
        Ok(Engine {
            path: path.to_path_buf(),
            file,
            writer: RwLock::new(Some(tx)),
            writer_thread: Mutex::new(Some(writer_thread)),
            readers: Mutex::new(Some(Vec::new())),
        })
    }

    /// Queues a write; the caller waits on its own acknowledgement.
    pub(crate) fn submit(&self, job: Job) -> Result<(), StoreError> {
        let writer = self.writer.read().map_err(|_| closed())?;
        writer
            .as_ref()
            .ok_or_else(closed)?
            .send(job)
            .map_err(|_| StoreError::Internal("the writer has stopped".into()))
    }

    /// Whether the database file at the store's path is still the one the
    /// writer has open (not moved, removed or replaced).
    pub(crate) fn file_is_in_place(&self) -> Result<(), NotReady> {
        let moved = || {
            NotReady(format!(
                "the database {} was moved, removed or replaced while shed was running — put it back; until then writes go to a file that is no longer in the data folder",
                self.path.display()
            ))
        };
        match file_identity(&self.path) {
            Ok(file) if file == self.file => Ok(()),
            _ => Err(moved()),
        }
    }

    /// Takes no more writes, lets the writer commit every write queued
    /// before, copies the WAL into the database file and closes the write
    /// connection. A write submitted after is answered [`closed`]. Blocks
    /// until the writer has stopped; a second call finds nothing to do.
    pub(crate) fn close(&self) -> Result<(), StoreError> {
        // Dropping the queue's only sender ends the writer's loop once it
        // has taken every write already queued.
        drop(self.writer.write().map_err(|_| closed())?.take());
        if let Ok(mut idle) = self.readers.lock() {
            *idle = None;
        }
        let thread = self.writer_thread.lock().map_err(|_| closed())?.take();
        match thread.map(JoinHandle::join) {
            None => Ok(()),
            Some(Ok(stopped)) => stopped,
            Some(Err(_)) => Err(StoreError::Internal("the writer panicked".into())),
        }
    }

    /// Runs `f` on a read connection, on the calling thread.
    pub(crate) fn with_reader<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let reader = self.take_reader()?;
        let result = reader.run(f);
        self.give_back(reader);
        result
    }

    /// Runs `f` on a read connection on a blocking thread, stopped at its
    /// deadline or when this future is dropped (the connection is then
    /// closed, never kept for another read).
    pub(crate) async fn read_apart<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let reader = self.take_reader()?;
        let stopper = Stopper {
            watch: reader.watch.clone(),
            interrupt: reader.conn.get_interrupt_handle(),
            armed: true,
        };
        let mut job = tokio::task::spawn_blocking(move || {
            let result = reader.run(f);
            (reader, result)
        });
        let done = match tokio::time::timeout(READ_DEADLINE, &mut job).await {
            Ok(done) => done,
            Err(_) => {
                stopper.stop(true);
                job.await
            }
        };
        let (reader, result) =
            done.map_err(|e| StoreError::Internal(format!("a read failed: {e}")))?;
        stopper.disarm();
        self.give_back(reader);
        result
    }

    /// An idle read connection, or a new one.
    fn take_reader(&self) -> Result<Reader, StoreError> {
        let mut idle = self.readers.lock().map_err(|_| stopped_reading())?;
        match idle.as_mut().ok_or_else(stopped_reading)?.pop() {
            Some(reader) => Ok(reader),
            None => {
                drop(idle);
                Reader::open(&self.path)
            }
        }
    }

    /// Keeps a read connection for the next read (one left inside a
    /// transaction is closed instead).
    fn give_back(&self, reader: Reader) {
        if reader.conn.is_autocommit()
            && let Ok(mut idle) = self.readers.lock()
            && let Some(idle) = idle.as_mut()
            && idle.len() < IDLE_READERS
        {
            idle.push(reader);
        }
    }
}

/// A read asked of a closed store.
fn stopped_reading() -> StoreError {
    StoreError::Internal(
        "shed is stopping and answers no more reads — try again once it is back".into(),
    )
}

/// Write transactions rolled back so far, by any writer of the process.
static ROLLBACKS: AtomicU64 = AtomicU64::new(0);

/// How many write transactions have been rolled back: what a writer read
/// before a rollback may no longer be so.
pub(crate) fn rollbacks() -> u64 {
    ROLLBACKS.load(Ordering::Acquire)
}

fn rollback(txn: Transaction<'_>) {
    if let Err(e) = txn.rollback() {
        tracing::error!(error = %e, "could not roll back a write transaction");
    }
    ROLLBACKS.fetch_add(1, Ordering::AcqRel);
}

fn begin(conn: &Connection) -> Result<Transaction<'_>, StoreError> {
    Ok(Transaction::new_unchecked(
        conn,
        TransactionBehavior::Immediate,
    )?)
}

/// Runs the writes queued until the queue is closed, then stops the
/// checkpointer, copies the WAL into the database file and closes the
/// connection — the last one, so SQLite removes the WAL.
fn writer_loop(
    mut conn: Connection,
    rx: mpsc::Receiver<Job>,
    checkpointer: JoinHandle<()>,
) -> Result<(), StoreError> {
    // How many writes the last group took: writers answered together come
    // back together, so the next group waits a moment for as many.
    let mut gathered = 1;
    // Whether a write was committed since the full text was last merged,
    // and a write that arrived during a merge, to run next.
    let mut unmerged = false;
    let mut arrived = None;
    // Whether the full text's index was told, in this process, how many
    // segments a merge step merges.
    let mut configured = false;
    loop {
        let first = match arrived.take() {
            Some(job) => job,
            None if unmerged => match rx.recv_timeout(MERGE_IDLE) {
                Ok(job) => job,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    arrived = merge_while_idle(&conn, &rx, &mut configured);
                    unmerged = arrived.is_some();
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            },
            None => match rx.recv() {
                Ok(job) => job,
                Err(_) => break,
            },
        };
        unmerged = true;
        let mut group = Group {
            rx: &rx,
            queue: VecDeque::from([first]),
            taken: 1,
            want: gathered,
            deadline: Instant::now() + GATHER,
        };
        run_group(&conn, &mut group);
        gathered = group.taken;
    }
    // The hook holds the checkpointer's wake-up: without it the
    // checkpointer ends (finishing a checkpoint it is in, which would
    // answer the last one below "busy" at once) and closes its connection.
    // Closed together, two connections can each see the other still open,
    // and neither removes the WAL.
    conn.wal_hook(None::<fn(&mut rusqlite::hooks::Wal, i32) -> rusqlite::Result<()>>)?;
    if checkpointer.join().is_err() {
        return Err(StoreError::Internal("the checkpointer panicked".into()));
    }
    conn.wal_checkpoint_v2(None::<&str>, CheckpointMode::TRUNCATE)?;
    conn.close().map_err(|(_, e)| StoreError::from(e))
}

/// Merges the full text's segments ([`MERGE_STEP_PAGES`] a step) until
/// FTS5 has nothing left to merge or a write arrives: the write, to run
/// next. FTS5 says a step did nothing by changing fewer than two rows.
fn merge_while_idle(
    conn: &Connection,
    rx: &mpsc::Receiver<Job>,
    configured: &mut bool,
) -> Option<Job> {
    let statement = (!*configured)
        .then(|| {
            conn.execute(
                "INSERT INTO ec_fts(ec_fts, rank) VALUES('usermerge', ?1)",
                [MERGE_SEGMENTS],
            )
        })
        .transpose()
        .and_then(|_| conn.prepare_cached("INSERT INTO ec_fts(ec_fts, rank) VALUES('merge', ?1)"));
    let mut merge = match statement {
        Ok(statement) => statement,
        Err(e) => {
            tracing::warn!(error = %e, "could not merge the full text; the next pause tries again");
            return None;
        }
    };
    *configured = true;
    loop {
        let before = conn.total_changes();
        if let Err(e) = merge.execute([MERGE_STEP_PAGES]) {
            tracing::warn!(error = %e, "could not merge the full text; the next pause tries again");
            return None;
        }
        if conn.total_changes() - before < 2 {
            return None;
        }
        if let Ok(job) = rx.try_recv() {
            return Some(job);
        }
    }
}

/// Whether SQLite answered busy or locked: another connection holds what
/// was asked for, for now.
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// The writes of one group as the writer takes them: first those taken but
/// not yet run, then the writer's queue, waited on (while the transaction
/// is open and the writes taken so far are run) until the group holds as
/// many as the last one did or its moment has passed.
struct Group<'r> {
    rx: &'r mpsc::Receiver<Job>,
    queue: VecDeque<Job>,
    taken: usize,
    want: usize,
    deadline: Instant,
}

impl Group<'_> {
    fn next(&mut self) -> Option<Job> {
        if let Some(job) = self.queue.pop_front() {
            return Some(job);
        }
        if self.taken >= MAX_GROUP {
            return None;
        }
        let job = match self.rx.try_recv() {
            Ok(job) => job,
            Err(_) if self.taken < self.want => self
                .rx
                .recv_timeout(self.deadline.saturating_duration_since(Instant::now()))
                .ok()?,
            Err(_) => return None,
        };
        self.taken += 1;
        Some(job)
    }
}

/// Runs a group of writes and answers every waiter once its write is
/// committed, or known not to be.
fn run_group(conn: &Connection, group: &mut Group<'_>) {
    // After a refusal, how many writes at the queue's head are ones kept
    // before it, to run again and commit on their own.
    let mut again = 0;
    while let Some(first) = group.next() {
        let txn = match begin(conn) {
            Ok(txn) => txn,
            Err(e) => {
                // Dropping the jobs tells every waiter the write failed.
                tracing::error!(error = %e, "could not begin a write transaction");
                return;
            }
        };
        let mut kept: Vec<Job> = Vec::new();
        let mut refused: Option<Job> = None;
        let mut lost = false;
        let mut next = Some(first);
        while let Some(mut job) = next {
            if job.run(&txn) {
                refused = Some(job);
                break;
            }
            kept.push(job);
            // SQLite may have rolled the transaction back (disk full, I/O error…).
            lost = txn.is_autocommit();
            if lost || kept.len() == again {
                break;
            }
            next = group.next();
        }
        if let Some(job) = refused {
            rollback(txn);
            job.answer(Ok(()));
            again = kept.len();
            for job in kept.into_iter().rev() {
                group.queue.push_front(job);
            }
            continue;
        }
        let outcome = if lost {
            rollback(txn);
            Err(StoreError::Internal(
                "a write failed inside the database and its group was rolled back".into(),
            ))
        } else {
            let started = Instant::now();
            let committed = txn.commit().map_err(StoreError::from);
            metrics::histogram!(COMMIT_SECONDS).record(started.elapsed());
            metrics::histogram!(WRITE_GROUP_SIZE).record(kept.len() as f64);
            committed
        };
        if let Err(e) = &outcome {
            tracing::error!(error = %e, "a group commit failed");
        }
        for job in kept {
            job.answer(outcome.clone());
        }
        return;
    }
}

/// Copies the WAL into the database file whenever the writer asks, until the
/// writer stops; tells the writer how many WAL pages are copied.
fn checkpointer_loop(conn: Connection, woken: mpsc::Receiver<()>, copied: &AtomicI32) {
    while woken.recv().is_ok() {
        match conn.wal_checkpoint_v2(None::<&str>, CheckpointMode::PASSIVE) {
            Ok((_, done)) => copied.store(done, Ordering::Relaxed),
            // Another checkpoint is running (the writer's own, past its
            // bound): it copies these pages.
            Err(e) if is_busy(&e) => {
                tracing::debug!(error = %e, "a checkpoint met another one running")
            }
            Err(e) => {
                tracing::warn!(error = %e, "a checkpoint failed; the next one will copy its pages")
            }
        }
    }
}
