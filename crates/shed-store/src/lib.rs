//! shed-store: the one place shed's data is kept. The entity–component data of
//! every app, the filter-line language that reads it, and the platform's own
//! tables (people, spaces, apps, tokens, jobs).
//!
//! The public API speaks only JSON and this crate's own types — never a
//! database type — so a PostgreSQL backend can sit behind [`Store`] later
//! without callers changing. SQLite (bundled, WAL, `synchronous=FULL`) is the
//! embedded backend: one writer thread commits in groups; reads run in place
//! on read connections, never waiting on the writer, each stopped at
//! [`READ_DEADLINE`].

mod apply;
mod backup;
mod engine;
mod error;
pub mod filter;
mod jobs;
pub mod lifecycle;
mod migrations;
mod model;
mod names;
pub mod oauth;
mod people;
pub mod platform;
mod private;
mod query;
pub mod revocable;
mod schema;
mod secret;
mod sessions;
mod values;
mod view_keys;
pub mod wire;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

pub use backup::{BackupProgress, Copied, backup, restore};
pub use error::{NotReady, StoreError};
pub use jobs::{JobRecord, JobTerms};
pub use model::{Actor, Applied, ColumnType, HistoryEntry, Listing, Person, Vocabulary};
pub use private::{PRIVATE_FILE_MODE, PRIVATE_FOLDER_MODE, warn_if_open};
pub use secret::secret_hash;
pub use view_keys::ViewKey;

use engine::Engine;
use schema::{Schemas, WriterSchemas};

/// The longest a read runs before it is stopped and answered with a
/// sentence: thousands of times a listing's cost (well under a millisecond at
/// 100,000 entities), and short enough for a person to wait for the answer.
pub const READ_DEADLINE: Duration = Duration::from_secs(2);

/// Steps of SQLite's machine between two checks of an in-place read's
/// deadline: a check is a clock read, and at 50 the listings of `cargo bench
/// -p shed-store` take as long as without checks (within 3%, the noise). A
/// read that tests costly rows (`~`) runs apart and is interrupted at its
/// next row instead.
pub const PROGRESS_STEPS: i32 = 50;

/// The store: cheap to clone, shared by every task of the process.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

struct Inner {
    engine: Engine,
    /// The catalogs readers use.
    schemas: Schemas,
    /// The catalogs the writer uses.
    writer_schemas: WriterSchemas,
}

impl Store {
    /// Opens the store kept in the file at `path` (e.g. `<data>/shed.db`),
    /// creating it (mode 0600) and applying every migration it has not had
    /// yet; warns when its files are open to other accounts.
    pub async fn open(path: &Path) -> Result<Store, StoreError> {
        let path = path.to_path_buf();
        let engine = tokio::task::spawn_blocking(move || Engine::open(&path))
            .await
            .map_err(|e| StoreError::Internal(e.to_string()))??;
        Ok(Store {
            inner: Arc::new(Inner {
                engine,
                schemas: Schemas::default(),
                writer_schemas: WriterSchemas::default(),
            }),
        })
    }

    /// Takes an app's vocabulary at deploy: creates the components and columns
    /// it does not have yet, and refuses to change the type of a column that
    /// holds values. `app` is `space/slug`, e.g. `jeff/runs`.
    pub async fn declare(&self, app: &str, vocab: &Vocabulary) -> Result<(), StoreError> {
        let app = app.to_string();
        let vocab = vocab.clone();
        let forget = app.clone();
        let inner = self.inner.clone();
        self.write_then(
            move |txn| schema::declare(txn, &app, &vocab),
            move |_| inner.schemas.forget(&forget),
        )
        .await
    }

    /// Applies one bundle or a list of them, all or nothing (DESIGN's "Apply
    /// (the wire)"). `expect: Some(n)` refuses with [`StoreError::Conflict`]
    /// unless the app data version is `n` before the write.
    #[tracing::instrument(level = "debug", name = "store apply", skip_all, fields(app = app))]
    pub async fn apply(
        &self,
        app: &str,
        actor: &Actor,
        body: serde_json::Value,
        expect: Option<u64>,
    ) -> Result<Applied, StoreError> {
        // What needs no database is read here, off the writer's thread.
        schema::check_app_name(app)?;
        let bundles = wire::read(&body)?;
        drop(body);
        let app = app.to_string();
        let forget = app.clone();
        let actor = actor.clone();
        let inner = self.inner.clone();
        let catalogs = self.inner.clone();
        let (applied, _) = self
            .write_then(
                move |txn| {
                    apply::apply(
                        txn,
                        &catalogs.writer_schemas,
                        &app,
                        &actor,
                        &bundles,
                        expect,
                    )
                },
                // A new app's catalog is no longer the empty one readers may hold.
                move |written| {
                    if let Ok((_, true)) = written {
                        inner.schemas.forget(&forget);
                    }
                },
            )
            .await?;
        Ok(applied)
    }

    /// Reads an app's rows with a filter line (DESIGN's "The filter line").
    /// A line that may scan ([`filter::FilterLine::may_scan`]) runs on a
    /// blocking thread: up to [`READ_DEADLINE`] on a worker would stall
    /// every task queued behind it on a small machine; it is stopped when its
    /// caller goes away (this future dropped). Any other line runs in place.
    pub async fn query(&self, app: &str, filter: &str) -> Result<Listing, StoreError> {
        let line = filter::parse(filter)?;
        let may_scan = line.may_scan();
        let inner = self.inner.clone();
        let app = app.to_string();
        let run = move |conn: &rusqlite::Connection| {
            let schema = inner.schemas.get(conn, &app)?;
            query::run(conn, &schema, &line)
        };
        if may_scan {
            self.inner.engine.read_apart(run).await
        } else {
            self.read(run).await
        }
    }

    /// The app data version: +1 on every committed write; 0 for an app never written.
    pub async fn data_version(&self, app: &str) -> Result<u64, StoreError> {
        self.read(|conn| schema::data_version(conn, app)).await
    }

    /// Every write to one entity (named by eid or alias), oldest first.
    pub async fn history(
        &self,
        app: &str,
        eid_or_alias: &str,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        self.read(|conn| apply::history(conn, app, eid_or_alias))
            .await
    }

    /// Adds a person; refuses a handle that is taken or not a handle.
    pub async fn add_person(&self, handle: &str, name: &str) -> Result<Person, StoreError> {
        let handle = handle.to_string();
        let name = name.to_string();
        self.write(move |txn| people::add(txn, &handle, &name))
            .await
    }

    /// The person with this handle (`ada` or `@ada`), if there is one.
    pub async fn person(&self, handle: &str) -> Result<Option<Person>, StoreError> {
        self.read(|conn| people::by_handle(conn, handle)).await
    }

    /// The person with this eid, if there is one.
    pub async fn person_by_eid(&self, eid: &str) -> Result<Option<Person>, StoreError> {
        self.read(|conn| people::by_eid(conn, eid)).await
    }

    /// SQLite's own check of the database file: `ok` when it is sound.
    pub async fn integrity_check(&self) -> Result<String, StoreError> {
        self.read_long(|conn| {
            let lines: Vec<String> = conn
                .prepare("PRAGMA integrity_check")?
                .query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<_, _>>()?;
            Ok(lines.join("\n"))
        })
        .await
    }

    /// Whether the store can serve: the database file in its place is the
    /// one open, a read answers, and every migration is applied; else the
    /// sentence saying what is wrong.
    pub async fn ready(&self) -> Result<(), NotReady> {
        self.inner.engine.file_is_in_place()?;
        self.inner
            .engine
            .with_reader(|conn| Ok(migrations::applied(conn)))
            .map_err(|e| NotReady(format!("the database does not answer: {e}")))?
    }

    /// Takes no more writes, commits every write already queued, copies the
    /// WAL into the database file and closes the writer's connection; a
    /// write after this is refused with a sentence. Reads go on answering.
    pub async fn close(&self) -> Result<(), StoreError> {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || inner.engine.close())
            .await
            .map_err(|e| StoreError::Internal(format!("closing the store failed: {e}")))?
    }

    /// Runs `f` in the writer's transaction and answers once the group it was
    /// committed with is on disk. `f` must leave nothing but the database
    /// changed: should another write of its group be refused, it runs again.
    #[allow(dead_code)] // the platform's tables (src/platform.rs) write through this
    pub(crate) async fn write<T: Send + 'static>(
        &self,
        f: impl Fn(&rusqlite::Transaction<'_>) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.write_then(f, |_| {}).await
    }

    /// As [`Store::write`], running `after` on the answer once the group is
    /// committed or rolled back, before the caller is answered.
    #[tracing::instrument(level = "debug", name = "store write", skip_all)]
    async fn write_then<T: Send + 'static>(
        &self,
        f: impl Fn(&rusqlite::Transaction<'_>) -> Result<T, StoreError> + Send + 'static,
        after: impl FnOnce(&Result<T, StoreError>) + Send + 'static,
    ) -> Result<T, StoreError> {
        let (tx, rx) = tokio::sync::oneshot::channel::<Result<T, StoreError>>();
        self.inner
            .engine
            .submit(Box::new(engine::Pending::new(f, move |answer| {
                after(&answer);
                let _ = tx.send(answer);
            })))?;
        rx.await
            .map_err(|_| StoreError::Internal("the writer stopped before answering".into()))?
    }

    /// Runs `f` on a read connection; it sees the last committed state and
    /// never waits on the writer. It runs in place, on the caller's thread:
    /// for an indexed lookup or a listing bounded by its limit
    /// (well under a millisecond at 100,000 entities, `cargo bench -p
    /// shed-store`), shorter than any hand-off. Handing it to another thread
    /// (`block_in_place`, `spawn_blocking`) cost more than the read itself —
    /// a thread woken per read, and every row allocated on one thread and
    /// freed on another: the MCP door answered half as many 50-row reads a
    /// second that way (`cargo bench -p shed --bench mcp_door`).
    pub(crate) async fn read<T>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.inner.engine.with_reader(f)
    }

    /// As [`Store::read`], for the few reads that can take long — file
    /// contents (up to a deploy's bound), a check of the whole database. On
    /// a multi-threaded runtime they run through `block_in_place`, which
    /// first moves this worker's other tasks to another thread, so a big
    /// file never holds up other callers; on a single-threaded runtime there
    /// is no other thread to spare, and they run in place.
    pub(crate) async fn read_long<T>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        use tokio::runtime::{Handle, RuntimeFlavor};
        let multi =
            Handle::try_current().is_ok_and(|h| h.runtime_flavor() == RuntimeFlavor::MultiThread);
        if multi {
            tokio::task::block_in_place(|| self.inner.engine.with_reader(f))
        } else {
            self.inner.engine.with_reader(f)
        }
    }
}
