//! The SQLite backend: the store in one file (bundled SQLite, WAL,
//! `synchronous=FULL`). One writer thread commits in groups
//! ([`engine`]); reads run in place on read connections, never waiting on
//! the writer, each stopped at [`READ_DEADLINE`](crate::deadline::READ_DEADLINE). It
//! implements every interface of `entities.rs`, `records.rs` and `lifecycle.rs`.

mod apply;
pub(crate) mod backup;
mod engine;
pub(crate) mod migrations;
pub(crate) mod people;
mod query;
pub(crate) mod schema;
mod txn;

pub use engine::{MERGE_IDLE, MERGE_SEGMENTS, MERGE_STEP_PAGES};

use std::path::Path;
use std::sync::Arc;

use crate::entities::Entities;
use crate::query::at_once;
use crate::schema::{Schemas, check_app_name};
use crate::txn::Records;
use crate::{
    Actor, Applied, HistoryEntry, Listing, NotReady, StoreError, Vocabulary, filter, wire,
};
use engine::Engine;
use schema::WriterSchemas;

/// Steps of SQLite's machine between two checks of an in-place read's
/// deadline: a check is a clock read, and at 50 the listings of `cargo bench
/// -p shed-store` take as long as without checks (within 3%, the noise). A
/// read that tests costly rows (`~`) runs apart and is interrupted at its
/// next row instead.
pub(crate) const PROGRESS_STEPS: i32 = 50;

/// The open SQLite database and the catalogs this process has read of it.
pub(crate) struct Sqlite {
    /// Shared with the blocking task that closes it.
    engine: Arc<Engine>,
    /// The catalogs readers use.
    schemas: Arc<Schemas>,
    /// The catalogs the writer uses.
    writer_schemas: Arc<WriterSchemas>,
}

impl Sqlite {
    /// Opens the database in the file at `path`, creating it (mode 0600)
    /// and applying every migration it has not had yet.
    pub(crate) async fn open(path: &Path) -> Result<Sqlite, StoreError> {
        let path = path.to_path_buf();
        let engine = tokio::task::spawn_blocking(move || Engine::open(&path))
            .await
            .map_err(|e| StoreError::Internal(e.to_string()))??;
        Ok(Sqlite {
            engine: Arc::new(engine),
            schemas: Arc::default(),
            writer_schemas: Arc::default(),
        })
    }

    /// Forgets the readers' catalog of an app.
    pub(crate) fn forget_schema(&self, app: &str) {
        self.schemas.forget(app);
    }

    /// Whether the file in its place is the one open, a read answers, and
    /// every migration is applied.
    pub(crate) fn ready(&self) -> Result<(), NotReady> {
        self.engine.file_is_in_place()?;
        self.engine
            .with_reader(|conn| Ok(migrations::applied(conn)))
            .map_err(|e| NotReady(format!("the database does not answer: {e}")))?
    }

    /// Takes no more writes, commits every write already queued, copies the
    /// WAL into the database file and closes the writer's connection.
    /// Reads go on answering.
    pub(crate) async fn close(&self) -> Result<(), StoreError> {
        let engine = self.engine.clone();
        tokio::task::spawn_blocking(move || engine.close())
            .await
            .map_err(|e| StoreError::Internal(format!("closing the store failed: {e}")))?
    }

    /// SQLite's own check of the database file: `ok` when it is sound.
    pub(crate) async fn integrity_check(&self) -> Result<String, StoreError> {
        self.read_long(|conn| {
            let lines: Vec<String> = conn
                .prepare("PRAGMA integrity_check")?
                .query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<_, _>>()?;
            Ok(lines.join("\n"))
        })
        .await
    }

    /// Runs `f` in the writer's transaction and answers once the group it was
    /// committed with is on disk. `f` must leave nothing but the database
    /// changed: should another write of its group be refused, it runs again.
    pub(crate) async fn write<T: Send + 'static>(
        &self,
        f: impl Fn(&rusqlite::Transaction<'_>) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.write_then(f, |_| {}).await
    }

    /// As [`Sqlite::write`], running `after` on the answer once the group is
    /// committed or rolled back, before the caller is answered.
    #[tracing::instrument(level = "debug", name = "store write", skip_all)]
    async fn write_then<T: Send + 'static>(
        &self,
        f: impl Fn(&rusqlite::Transaction<'_>) -> Result<T, StoreError> + Send + 'static,
        after: impl FnOnce(&Result<T, StoreError>) + Send + 'static,
    ) -> Result<T, StoreError> {
        let (tx, rx) = tokio::sync::oneshot::channel::<Result<T, StoreError>>();
        self.engine
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
        self.engine.with_reader(f)
    }

    /// As [`Sqlite::read`], for the few reads that can take long — file
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
            tokio::task::block_in_place(|| self.engine.with_reader(f))
        } else {
            self.engine.with_reader(f)
        }
    }
}

impl Entities for Sqlite {
    async fn declare(&self, app: &str, vocab: &Vocabulary) -> Result<(), StoreError> {
        let (app, vocab) = (app.to_string(), vocab.clone());
        self.write_records_forgetting(app.clone(), async move |t: &txn::Txn<'_>| {
            schema::declare(t.0, &app, &vocab)
        })
        .await
    }

    async fn apply(
        &self,
        app: &str,
        actor: &Actor,
        body: serde_json::Value,
        expect: Option<u64>,
    ) -> Result<Applied, StoreError> {
        // What needs no database is read here, off the writer's thread.
        check_app_name(app)?;
        let bundles = wire::read(&body)?;
        drop(body);
        self.apply_bundles(app, actor, bundles, expect).await
    }

    /// A line that may scan ([`filter::FilterLine::may_scan`]) runs on a
    /// blocking thread: up to the deadline on a worker would stall every
    /// task queued behind it on a small machine; it is stopped when its
    /// caller goes away (this future dropped). Any other line runs in place.
    async fn query(&self, app: &str, filter: &str) -> Result<Listing, StoreError> {
        let line = filter::parse(filter)?;
        let may_scan = line.may_scan();
        let schemas = self.schemas.clone();
        let app = app.to_string();
        let run = move |conn: &rusqlite::Connection| {
            let schema = at_once(schemas.read(&txn::Txn(conn), &app))?;
            query::run(conn, &schema, &line)
        };
        if may_scan {
            self.engine.read_apart(run).await
        } else {
            self.read(run).await
        }
    }

    async fn data_version(&self, app: &str) -> Result<u64, StoreError> {
        self.read_records(async |t| crate::schema::data_version(t, app).await)
            .await
    }

    async fn history(
        &self,
        app: &str,
        eid_or_alias: &str,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        self.read(|conn| apply::history(conn, app, eid_or_alias))
            .await
    }
}

impl Sqlite {
    /// Writes bundles already read (from the wire, or made by an undo) in
    /// the writer's group commit, all or nothing.
    pub(crate) async fn apply_bundles(
        &self,
        app: &str,
        actor: &Actor,
        bundles: Vec<wire::Bundle>,
        expect: Option<u64>,
    ) -> Result<Applied, StoreError> {
        check_app_name(app)?;
        let app = app.to_string();
        let forget = app.clone();
        let actor = actor.clone();
        let schemas = self.schemas.clone();
        let catalogs = self.writer_schemas.clone();
        let (applied, _) = self
            .write_then(
                move |txn| apply::apply(txn, &catalogs, &app, &actor, &bundles, expect),
                // A new app's catalog is no longer the empty one readers may hold.
                move |written| {
                    if let Ok((_, true)) = written {
                        schemas.forget(&forget);
                    }
                },
            )
            .await?;
        Ok(applied)
    }
}

impl rusqlite::types::ToSql for crate::values::Sql {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Self::Null => ValueRef::Null,
            Self::Integer(i) => ValueRef::Integer(*i),
            Self::Real(f) => ValueRef::Real(*f),
            Self::Text(s) => ValueRef::Text(s.as_bytes()),
            Self::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

impl rusqlite::types::FromSql for crate::values::Sql {
    fn column_result(value: rusqlite::types::ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        use rusqlite::types::ValueRef;
        Ok(match value {
            ValueRef::Null => Self::Null,
            ValueRef::Blob(b) => Self::Blob(b.to_vec()),
            ValueRef::Integer(i) => Self::Integer(i),
            ValueRef::Real(f) => Self::Real(f),
            ValueRef::Text(t) => Self::Text(String::from_utf8_lossy(t).into_owned()),
        })
    }
}
