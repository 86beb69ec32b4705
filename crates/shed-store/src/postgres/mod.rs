//! The PostgreSQL backend: the store on a database server, shared by as many
//! shed servers as point at it. `tokio-postgres` speaks the protocol
//! (binary values, statements prepared once per connection and cached) and
//! `deadpool-postgres` keeps the pool of connections; every write is
//! committed with `synchronous_commit` on: the applies of a process in
//! groups sharing one transaction and its flush (`group.rs`), every other
//! write in a transaction of its own ([`Postgres::write`]). Writers of one
//! app queue on the app's row (`SELECT … FOR UPDATE`), so the `was` checks
//! and versions hold across servers. The writes a watcher cares about notify
//! every server as they commit (`wake.rs`). It implements every interface
//! of `entities.rs`, `records.rs` and `lifecycle.rs`.

mod apply;
pub(crate) mod connect;
mod group;
pub(crate) mod migrations;
mod query;
pub(crate) mod schema;
pub(crate) mod statistics;
mod tls;
mod txn;
mod values;
mod wake;

use std::sync::Arc;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};

use crate::deadline::READ_DEADLINE;
use crate::entities::Entities;
use crate::schema::{Schemas, check_app_name};
use crate::txn::Records;
use crate::write_metrics::{COMMIT_SECONDS, WRITE_GROUP_SIZE};
use crate::{
    Actor, Applied, HistoryEntry, Listing, NotReady, StoreError, Vocabulary, filter, wire,
};

pub(crate) use connect::is_postgres_url;
pub(crate) use txn::Txn;

/// What `shed backup` and `shed restore` answer for data kept on a
/// database server: they copy a data folder's database file, and the
/// server's own tools back up and restore its databases. The sentence
/// names the database by its URL with the password hidden.
pub fn backup_on_server(url: &str) -> StoreError {
    let shown = connect::redacted(url);
    StoreError::refused(format!(
        "the data is kept in the PostgreSQL database {shown}, not in a file of the data folder — back it up with `pg_dump --format=custom --file=FILE {shown}` and restore it into an empty database with `pg_restore --dbname=URL FILE`"
    ))
}

/// Connections a process keeps to the server at most for writes and the
/// platform's records.
const POOL_SIZE: usize = 16;

/// Connections a process keeps at most for the apps' reads
/// ([`Entities::query`]), beside [`POOL_SIZE`]: sessions that are read-only
/// and stop a statement at [`READ_DEADLINE`] from their start, so a read
/// that is one statement is one round trip.
const READ_POOL_SIZE: usize = 16;

/// The `application_name` of the reads' sessions, as `pg_stat_activity`
/// shows them.
pub const READS_APPLICATION: &str = "shed reads";

/// The database on a server, and the catalogs this process has read of it.
pub(crate) struct Postgres {
    pool: Pool,
    /// The read-only sessions of the apps' reads.
    reads: Pool,
    /// Where the pool connects, for the sentences of a failed connection.
    target: Box<connect::Target>,
    /// The catalogs readers use.
    schemas: Arc<Schemas>,
    /// The connection that listens for the platform's changes.
    listener: Box<wake::Listener>,
    /// The group commit of the applies.
    writer: group::Writer,
    /// The entities written to each app since its tables were analyzed.
    growth: statistics::Growth,
}

impl Postgres {
    /// Connects to the database `url` names, refuses one holding another
    /// program's tables, and applies every migration it has not had yet.
    pub(crate) async fn open(url: &str) -> Result<Postgres, StoreError> {
        let target = connect::parse(url)?;
        let pool = new_pool(&target, target.config.clone(), POOL_SIZE)?;
        let mut read_config = target.config.clone();
        let read_options = format!(
            "{} -c default_transaction_read_only=on -c statement_timeout={}",
            read_config.get_options().unwrap_or_default(),
            READ_DEADLINE.as_millis()
        );
        read_config
            .options(read_options.trim_start())
            .application_name(READS_APPLICATION);
        let reads = new_pool(&target, read_config, READ_POOL_SIZE)?;
        let mut client = connect::borrow(&pool, &target).await?;
        migrations::migrate(&mut client, &target).await?;
        drop(client);
        // One read session made now: a server that refuses its settings
        // says so at the start, and the first read finds it ready.
        drop(connect::borrow(&reads, &target).await?);
        Ok(Postgres {
            writer: group::Writer::new(pool.clone()),
            pool,
            reads,
            listener: Box::new(wake::Listener::new(&target.config, target.tls.clone())),
            target: Box::new(target),
            schemas: Arc::default(),
            growth: statistics::Growth::default(),
        })
    }

    /// Runs `f` in one transaction and commits it (every write but an
    /// apply, which goes through the group commit): one write, traced and
    /// measured as SQLite's writes are (a "store write" span, the commit's
    /// time). A refusal of `f` rolls the transaction back.
    #[tracing::instrument(level = "debug", name = "store write", skip_all)]
    pub(crate) async fn write<T>(
        &self,
        f: impl AsyncFnOnce(&deadpool_postgres::Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut c = self.client().await?;
        let txn = c.transaction().await?;
        let written = f(&txn).await?;
        let started = std::time::Instant::now();
        txn.commit().await?;
        metrics::histogram!(COMMIT_SECONDS).record(started.elapsed());
        metrics::histogram!(WRITE_GROUP_SIZE).record(1.0);
        Ok(written)
    }

    /// A connection of the pool.
    pub(crate) async fn client(&self) -> Result<deadpool_postgres::Client, StoreError> {
        Ok(self.pool.get().await?)
    }

    /// The count a [`crate::Wake`] waits on: it moves at each change
    /// announced on the database and each time the listener connects.
    pub(crate) fn notified(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        self.listener.subscribe()
    }

    /// A receiver of the app writes announced on the database.
    pub(crate) fn app_writes(&self) -> Option<tokio::sync::broadcast::Receiver<crate::AppWrite>> {
        self.listener.app_writes()
    }

    /// Forgets the readers' catalog of an app.
    pub(crate) fn forget_schema(&self, app: &str) {
        self.schemas.forget(app);
    }

    /// Whether the server answers and every migration is applied.
    pub(crate) async fn ready(&self) -> Result<(), NotReady> {
        let version = async {
            let c = connect::borrow(&self.pool, &self.target).await?;
            Ok::<_, StoreError>(migrations::version(&c).await?)
        }
        .await
        .map_err(|said| NotReady(format!("the database does not answer: {said}")))?;
        crate::migrations::all_applied(version)
    }

    /// Takes no more connections from the pool and closes the idle ones:
    /// a write already running finishes on its own connection, and a
    /// write after this is refused with a sentence.
    pub(crate) fn close(&self) {
        self.pool.close();
        self.reads.close();
    }

    /// PostgreSQL keeps its own pages whole (WAL, checksums where enabled):
    /// the check is that the server answers and shed's tables are there.
    pub(crate) async fn integrity_check(&self) -> Result<String, StoreError> {
        self.client()
            .await?
            .query_one("SELECT COUNT(*) FROM schema_migrations", &[])
            .await?;
        Ok("ok".into())
    }
}

impl Entities for Postgres {
    async fn declare(&self, app: &str, vocab: &Vocabulary) -> Result<(), StoreError> {
        let answer = self
            .write(async |txn| schema::declare(txn, app, vocab).await)
            .await;
        self.schemas.forget(app);
        answer
    }

    async fn apply(
        &self,
        app: &str,
        actor: &Actor,
        body: serde_json::Value,
        expect: Option<u64>,
    ) -> Result<Applied, StoreError> {
        check_app_name(app)?;
        let bundles = wire::read(&body)?;
        drop(body);
        self.apply_bundles(app, actor, bundles, expect).await
    }

    /// Runs on a read-only session of its own pool, stopped by the server
    /// at [`READ_DEADLINE`] (`statement_timeout`): one statement, or a
    /// [`query::Snapshot`] when the line names something to look up.
    async fn query(&self, app: &str, filter: &str) -> Result<Listing, StoreError> {
        let line = filter::parse(filter)?;
        let mut read = Read::new(self.reads.get().await?, self.target.tls.clone());
        let snapshot = query::Snapshot::new(&*read.client()?);
        let listing = async {
            let schema = snapshot.schema(&self.schemas, app).await?;
            query::run(snapshot.client, &snapshot, &schema, &line).await
        }
        .await
        .map_err(too_long);
        let ended = snapshot.end(listing.is_ok()).await;
        // A connection whose transaction did not end is closed, never pooled.
        if ended.is_ok() {
            read.finished();
        }
        listing
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
        apply::history(&self.client().await?, app, eid_or_alias).await
    }
}

impl Postgres {
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
        let (applied, created) = self.writer.apply(app, actor, bundles, expect).await?;
        if created {
            self.schemas.forget(app);
        }
        if self.growth.wrote(app, applied.entities.len() as u64) {
            statistics::analyze(self.pool.clone(), self.schemas.clone(), app.to_string());
        }
        Ok(applied)
    }
}

/// The connection of a read. A caller gone before the answer (the read's
/// future dropped) leaves a statement running on the server, which would
/// otherwise run on to its deadline: dropped before [`Read::finished`], the
/// read cancels it and closes the connection rather than return it to the
/// pool.
///
/// Invariant: a cancel is only ever sent to a connection that is closed
/// after it. A cancel reaches the server at a time of its own; sent to a
/// pooled connection, it could stop the next borrower's statement.
struct Read {
    client: Option<deadpool_postgres::Client>,
    /// What the cancel connects through, as the connection did.
    tls: tls::Tls,
}

impl Read {
    fn new(client: deadpool_postgres::Client, tls: tls::Tls) -> Self {
        Self {
            client: Some(client),
            tls,
        }
    }

    /// The read's connection; held from [`Read::new`] until the read ends,
    /// so never missing while the read runs.
    fn client(&mut self) -> Result<&mut deadpool_postgres::Client, StoreError> {
        self.client.as_mut().ok_or_else(|| {
            StoreError::Internal("a read's connection was let go before the read ended".into())
        })
    }

    /// The read ran to its end, answered or refused: its connection goes
    /// back to the pool.
    fn finished(mut self) {
        self.client = None;
    }
}

impl Drop for Read {
    fn drop(&mut self) {
        let Some(client) = self.client.take() else {
            return;
        };
        let token = client.cancel_token();
        let connection = deadpool_postgres::Object::take(client);
        let tls = self.tls.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = token.cancel_query(tls).await;
                drop(connection);
            });
        }
    }
}

/// A pool of at most `size` connections made with `config`.
pub(crate) fn new_pool(
    target: &connect::Target,
    config: tokio_postgres::Config,
    size: usize,
) -> Result<Pool, StoreError> {
    let manager = Manager::from_config(
        config,
        target.tls.clone(),
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(manager)
        .max_size(size)
        .build()
        .map_err(|e| StoreError::Internal(e.to_string()))
}

/// A read the server stopped at its deadline, as SQLite's is answered.
fn too_long(e: StoreError) -> StoreError {
    match &e {
        StoreError::Database(said) if said.contains("statement timeout") => {
            crate::deadline::too_long()
        }
        _ => e,
    }
}
