//! An apply's statements on PostgreSQL ([`crate::apply`] decides and says
//! everything else, as on SQLite), run in the group commit's transaction
//! (`group.rs`) — in a savepoint of their own when the group holds other
//! applies — all or nothing. The app's row is locked first
//! ([`Writes::open`]), so the `was` checks, the entity versions and the
//! app data version hold against writers on every server sharing the
//! database.
//!
//! Statements are pipelined on the group's connection ([`Pipeline`]): one
//! whose answer is only its success (an update, an insert, the savepoint
//! itself) is sent and not waited for; the next statement that answers
//! something, and the end of the apply, wait for every one sent before —
//! the server runs them in the order sent, so a read sees them, and the
//! first failure refuses the apply. The lock, the app's catalog and the row
//! ids of the entities the apply mints are sent together, the catalog and
//! the ids read after the lock is held (each statement its own snapshot),
//! so a catalog a deploy changed on another server is the one written
//! with; an entity is then inserted with its id, not waited for. A run
//! logged is so 3 waits for the server: the lock with what follows it, the
//! rows, the commit. Also an entity's history.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{LazyLock, Mutex, PoisonError};
use std::task::Poll;

use deadpool_postgres::Client;
use tokio_postgres::types::ToSql;

use super::schema::{doc_words, load_known, lock_app};
use super::txn::Txn;
use crate::apply::{AppRow, Cell, Closing, Writes, find_sql, removals, upserts};
use crate::query::plan::Lookup;
use crate::schema::{AppSchema, Component};
use crate::values::Sql;
use crate::wire::{Bundle, Target};
use crate::{Actor, Applied, HistoryEntry, StoreError};

/// The app's row, locked until the transaction ends: the one lock every
/// write to an app takes, so writers on every server queue for it. No row
/// for an app not yet written to ([`lock_app`] makes it).
const LOCK: &str = "SELECT id, version, last_num FROM ec_apps WHERE name = $1 FOR UPDATE";

/// The app's catalog, read by the app's name so it can be sent beside
/// [`LOCK`] and run once the lock is held: its components in order, each
/// with its columns in order (`part` 0; a row with no column for a
/// component without columns), then its components' groups, each
/// component's in order (`part` 1) — one statement, not two.
const CATALOG: &str = "SELECT 0 AS part, c.position AS place, l.position AS at,
        c.name, l.name, l.type, l.grp, l.slot
    FROM ec_components c LEFT JOIN ec_columns l ON l.app = c.app AND l.component = c.name
    WHERE c.app = (SELECT id FROM ec_apps WHERE name = $1)
    UNION ALL
    SELECT 1, 0, position, component, NULL, shape, id, NULL FROM ec_groups
    WHERE app = (SELECT id FROM ec_apps WHERE name = $1)
    ORDER BY part, place, at";

/// `$1` new row ids of `ec_entities`, for the entities an apply mints.
const NEW_IDS: &str = "SELECT nextval('ec_entities_id_seq') FROM generate_series(1, $1::int)";

/// One new row id, for an apply that mints one entity (most do): a
/// statement with no parameter, planned once, where [`NEW_IDS`]' plan
/// depends on its count and is made again at every call.
const NEW_ID: &str = "SELECT nextval('ec_entities_id_seq')";

/// Writes an apply's bundles on the group's connection; answers also
/// whether it made the app. With `savepoint` (the group holds other
/// applies) it runs in a savepoint of its own, and a written apply leaves
/// its last statements unanswered ([`Pipeline::left_answer`]): the next
/// apply's first wait, or the group's, answers them with its own. Alone,
/// it waits for every statement it sent. A refused apply waits for them
/// all, and is rolled back to its savepoint ([`roll_back`]), or with no
/// savepoint with the whole transaction.
pub(crate) async fn apply(
    pipeline: &Pipeline<'_>,
    app: &str,
    actor: &Actor,
    bundles: &[Bundle],
    expect: Option<u64>,
    savepoint: bool,
) -> Result<(Applied, bool), StoreError> {
    let minted: HashSet<&str> = bundles
        .iter()
        .filter_map(|b| match &b.target {
            Target::Mint(name) => Some(name.as_str()),
            _ => None,
        })
        .collect();
    let statements = Statements {
        pipeline,
        mints: minted.len(),
        opened: Mutex::default(),
    };
    let applied = async {
        if savepoint {
            pipeline
                .send(Box::pin(pipeline.client.batch_execute("SAVEPOINT apply")))
                .await?;
        }
        crate::apply::apply(&statements, app, actor, bundles, expect).await
    }
    .await;
    if savepoint && applied.is_ok() {
        pipeline.leave();
        return applied;
    }
    let settled = pipeline.settle().await;
    let applied = applied?;
    settled?;
    Ok(applied)
}

/// Takes back what a refused [`apply`] wrote in its savepoint, and only
/// that; an error here leaves the transaction unusable.
pub(crate) async fn roll_back(pipeline: &Pipeline<'_>) -> Result<(), StoreError> {
    pipeline
        .answered(async {
            Ok(pipeline
                .client
                .batch_execute("ROLLBACK TO SAVEPOINT apply")
                .await?)
        })
        .await
}

/// Polls `future` once: its answer, if that one poll had it.
async fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut *future).poll(cx))).await
}

/// A statement sent whose answer is only whether it succeeded.
type Sent<'a> = Pin<Box<dyn Future<Output = Result<(), tokio_postgres::Error>> + Send + 'a>>;

/// A group's connection, in its transaction, and the statements sent on
/// it and not yet answered.
pub(crate) struct Pipeline<'c> {
    client: &'c Client,
    /// The running apply's, oldest first.
    sent: Mutex<Vec<Sent<'c>>>,
    /// The apply before's, left unanswered when it was written.
    left: Mutex<Vec<Sent<'c>>>,
    /// Whether every statement left succeeded, once answered.
    left_answer: Mutex<Option<Result<(), StoreError>>>,
}

impl<'c> Pipeline<'c> {
    /// Begins the transaction on `client`, not waiting for the server: the
    /// first statement that answers something waits for it too.
    pub(crate) async fn begin(client: &'c Client) -> Result<Pipeline<'c>, StoreError> {
        let pipeline = Pipeline {
            client,
            sent: Mutex::default(),
            left: Mutex::default(),
            left_answer: Mutex::default(),
        };
        pipeline
            .send(Box::pin(client.batch_execute("BEGIN")))
            .await?;
        Ok(pipeline)
    }

    /// Ends the transaction (`COMMIT`, or `ROLLBACK` when nothing in it is
    /// kept), after every statement sent.
    pub(crate) async fn end(&self, commit: bool) -> Result<(), StoreError> {
        let end = if commit { "COMMIT" } else { "ROLLBACK" };
        self.answered(async { Ok(self.client.batch_execute(end).await?) })
            .await
    }

    /// Sends a statement (polled once, which puts it on the connection)
    /// without waiting for its answer.
    async fn send(&self, mut sent: Sent<'c>) -> Result<(), StoreError> {
        match poll_once(&mut sent).await {
            Poll::Ready(done) => Ok(done?),
            Poll::Pending => {
                lock(&self.sent).push(sent);
                Ok(())
            }
        }
    }

    /// Waits for every statement sent, those left first ([`Pipeline::left_answer`]
    /// answers for them); the first failure of the running apply's is the answer.
    pub(crate) async fn settle(&self) -> Result<(), StoreError> {
        let left = std::mem::take(&mut *lock(&self.left));
        if !left.is_empty() {
            let answer = all_of(left).await;
            *lock(&self.left_answer) = Some(answer);
        }
        let sent = std::mem::take(&mut *lock(&self.sent));
        all_of(sent).await
    }

    /// Leaves the running apply's statements to be answered with the next
    /// wait.
    fn leave(&self) {
        let sent = std::mem::take(&mut *lock(&self.sent));
        lock(&self.left).extend(sent);
    }

    /// Whether the statements an apply left all succeeded, once a wait has
    /// answered them (taken: asked once).
    pub(crate) fn left_answer(&self) -> Option<Result<(), StoreError>> {
        lock(&self.left_answer).take()
    }

    /// Runs a statement that answers something, after (and while waiting
    /// for) every statement sent before it: a connection's answers come in
    /// order, and one not taken holds back the next.
    async fn answered<T>(
        &self,
        statement: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        let mut statement = std::pin::pin!(statement);
        if let Poll::Ready(answer) = poll_once(&mut statement).await {
            return answer;
        }
        let (settled, answer) = tokio::join!(self.settle(), statement);
        settled?;
        answer
    }

    /// Sends one statement that answers nothing, prepared once per
    /// connection, with the values it binds.
    async fn run(&self, sql: &str, params: Vec<Sql>) -> Result<(), StoreError> {
        let stmt = self
            .answered(async { Ok(self.client.prepare_cached(sql).await?) })
            .await?;
        let client: &'c tokio_postgres::Client = self.client;
        self.send(Box::pin(async move {
            client.execute_raw(&stmt, params).await.map(drop)
        }))
        .await
    }

    /// The first row of one prepared statement, after every statement sent.
    async fn row(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<tokio_postgres::Row>, StoreError> {
        self.answered(async { Ok(self.rows(sql, params).await?.into_iter().next()) })
            .await
    }

    /// The rows of one prepared statement.
    async fn rows(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<tokio_postgres::Row>, tokio_postgres::Error> {
        let stmt = self.client.prepare_cached(sql).await?;
        self.client.query(&stmt, params).await
    }
}

/// The value a mutex holds, whoever panicked holding it before.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Waits for every statement of `sent`; the first failure is the answer.
async fn all_of(sent: Vec<Sent<'_>>) -> Result<(), StoreError> {
    let mut failed = None;
    for statement in sent {
        if let Err(e) = statement.await {
            failed.get_or_insert(e);
        }
    }
    failed.map_or(Ok(()), |e| Err(e.into()))
}

/// What [`Writes::open`] read beside the lock, for the apply to take.
#[derive(Default)]
struct Opened {
    catalog: Option<AppSchema>,
    /// Row ids for the entities the apply mints, the last one first.
    ids: Vec<i64>,
}

/// One apply's statements on its group's pipeline.
struct Statements<'p, 'c> {
    pipeline: &'p Pipeline<'c>,
    /// How many entities the apply mints (its distinct `$name`s).
    mints: usize,
    opened: Mutex<Opened>,
}

impl Statements<'_, '_> {
    fn opened(&self) -> std::sync::MutexGuard<'_, Opened> {
        lock(&self.opened)
    }

    /// Row ids for the entities the apply mints (none when it mints none).
    async fn new_ids(&self) -> Result<Vec<tokio_postgres::Row>, tokio_postgres::Error> {
        match i32::try_from(self.mints).unwrap_or(i32::MAX) {
            0 => Ok(Vec::new()),
            1 => self.pipeline.rows(NEW_ID, &[]).await,
            n => self.pipeline.rows(NEW_IDS, &[&n]).await,
        }
    }

    /// Keeps what was read beside the lock for the apply.
    fn keep(&self, catalog: AppSchema, ids: &[tokio_postgres::Row]) -> Result<(), StoreError> {
        let ids = ids.iter().rev().map(|r| r.try_get(0));
        *self.opened() = Opened {
            catalog: Some(catalog),
            ids: ids.collect::<Result<_, _>>()?,
        };
        Ok(())
    }

    /// The lock, the catalog and the new ids, sent together: the app's row
    /// (the catalog and ids kept for the apply), or `None` for an app with
    /// no row yet.
    async fn lock(&self, app: &str) -> Result<Option<AppRow>, StoreError> {
        let p = self.pipeline;
        let by_name: [&(dyn ToSql + Sync); 1] = [&app];
        let (row, catalog, ids) = p
            .answered(async {
                Ok(tokio::try_join!(
                    p.rows(LOCK, &by_name),
                    p.rows(CATALOG, &by_name),
                    self.new_ids(),
                )?)
            })
            .await?;
        let Some(row) = row.into_iter().next() else {
            return Ok(None);
        };
        let id = row.try_get(0)?;
        let mut components: Vec<String> = Vec::new();
        let mut columns = Vec::new();
        let mut groups = Vec::new();
        for r in catalog {
            let component: String = r.try_get(3)?;
            if r.try_get::<_, i32>(0)? == 1 {
                groups.push((component, r.try_get(6)?, r.try_get(5)?));
                continue;
            }
            if components.last() != Some(&component) {
                components.push(component.clone());
            }
            if let Some(column) = r.try_get::<_, Option<String>>(4)? {
                columns.push((
                    component,
                    column,
                    r.try_get(5)?,
                    r.try_get(6)?,
                    r.try_get(7)?,
                ));
            }
        }
        let schema = AppSchema::from_catalog(app, id, components, groups, columns)?;
        self.keep(schema, &ids)?;
        Ok(Some(AppRow {
            id,
            version: row.try_get(1)?,
            last_num: row.try_get(2)?,
            created: false,
        }))
    }

    /// The app's row made (with the platform's components) and locked, its
    /// catalog and the new ids then read, one after another: an app's
    /// first write.
    async fn make(&self, app: &str) -> Result<AppRow, StoreError> {
        let p = self.pipeline;
        let (id, version, last_num, created) = p
            .answered(lock_app(&Txn::Connection(p.client), app))
            .await?;
        self.keep(
            load_known(&Txn::Connection(p.client), app, id).await?,
            &self.new_ids().await?,
        )?;
        Ok(AppRow {
            id,
            version,
            last_num,
            created,
        })
    }
}

impl Lookup for Statements<'_, '_> {
    async fn person_by_handle(&self, handle: &str) -> Result<Option<String>, StoreError> {
        self.pipeline
            .answered(Txn::Connection(self.pipeline.client).person_by_handle(handle))
            .await
    }

    async fn entity_by_alias(
        &self,
        app_id: i64,
        alias: &str,
    ) -> Result<Option<String>, StoreError> {
        self.pipeline
            .answered(Txn::Connection(self.pipeline.client).entity_by_alias(app_id, alias))
            .await
    }
}

impl Writes for Statements<'_, '_> {
    type Catalog = AppSchema;

    async fn open(&self, app: &str) -> Result<AppRow, StoreError> {
        match self.lock(app).await? {
            Some(row) => Ok(row),
            None => self.make(app).await,
        }
    }

    /// The catalog [`Writes::open`] read under the lock.
    async fn catalog(&self, app: &str, _app_id: i64) -> Result<AppSchema, StoreError> {
        self.opened().catalog.take().ok_or_else(|| {
            StoreError::Internal(format!("the catalog of {app} was not read with its lock"))
        })
    }

    fn schema(catalog: &AppSchema) -> &AppSchema {
        catalog
    }

    async fn run(&self, sql: &str, params: Vec<Sql>) -> Result<(), StoreError> {
        self.pipeline.run(sql, params).await
    }

    /// One statement, sent with the apply's others and not waited for:
    /// the activity row's insert a `WITH` of the app's row's update, which
    /// answers the notification of the write ([`super::wake::write_payload`]).
    async fn close(&self, closing: Closing<'_>) -> Result<(), StoreError> {
        static CLOSE_ANNOUNCED: LazyLock<String> = LazyLock::new(|| {
            format!(
                "WITH kept AS ({}) {} RETURNING pg_notify($4, $5)",
                Closing::activity(6),
                Closing::CLOSE
            )
        });
        let payload = super::wake::write_payload(closing.app, closing.version);
        let announced = [super::wake::CHANNEL.into(), payload.into()];
        let params = closing.close.into_iter().chain(announced);
        let params = params.chain(closing.activity).collect();
        self.pipeline.run(&CLOSE_ANNOUNCED, params).await
    }

    async fn find(
        &self,
        app_id: i64,
        target: &Target,
        tombstoned: bool,
    ) -> Result<Option<(i64, String, i64)>, StoreError> {
        let Some(sql) = find_sql(target, tombstoned) else {
            return Ok(None);
        };
        let row = self.pipeline.row(sql, &[&app_id, &target.given()]).await?;
        Ok(row
            .map(|r| Ok::<_, tokio_postgres::Error>((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
            .transpose()?)
    }

    async fn is_person(&self, eid: &str) -> Result<bool, StoreError> {
        let sql = "SELECT eid FROM people WHERE eid = $1";
        Ok(self.pipeline.row(sql, &[&eid]).await?.is_some())
    }

    /// Inserted with a row id [`Writes::open`] read, not waited for.
    async fn mint(
        &self,
        app_id: i64,
        eid: &str,
        num: i64,
        at: i64,
        actor: &Actor,
    ) -> Result<i64, StoreError> {
        let id = self.opened().ids.pop().ok_or_else(|| {
            StoreError::Internal(format!("no row id was read for the entity {eid}"))
        })?;
        self.pipeline
            .run(
                "INSERT INTO ec_entities(id, app, eid, num, version, created_at, created_by, created_via, updated_at, updated_by, updated_via)
                 VALUES($1, $2, $3, $4, 1, $5, $6, $7, $5, $6, $7)",
                vec![
                    id.into(),
                    app_id.into(),
                    eid.into(),
                    num.into(),
                    at.into(),
                    actor.person.as_str().into(),
                    actor.via.clone().into(),
                ],
            )
            .await?;
        Ok(id)
    }

    async fn alias_holder(&self, app_id: i64, alias: &str) -> Result<Option<i64>, StoreError> {
        let sql = "SELECT id FROM ec_entities WHERE app = $1 AND alias = $2";
        let row = self.pipeline.row(sql, &[&app_id, &alias]).await?;
        Ok(row.map(|r| r.try_get(0)).transpose()?)
    }

    /// None: the doc's `tsvector` stays; a query answers live entities only.
    async fn drop_text(&self, _id: i64) -> Result<(), StoreError> {
        Ok(())
    }

    async fn restore_text(
        &self,
        _catalog: &AppSchema,
        _app_id: i64,
        _id: i64,
    ) -> Result<(), StoreError> {
        Ok(())
    }

    async fn remove(
        &self,
        _catalog: &AppSchema,
        app_id: i64,
        id: i64,
        component: &Component,
        _fresh: bool,
    ) -> Result<(), StoreError> {
        for (sql, params) in removals(component, id) {
            self.pipeline.run(&sql, params).await?;
        }
        if component.name == "doc" {
            let sql = "DELETE FROM ec_fts WHERE app = $1 AND id = $2";
            self.pipeline
                .run(sql, vec![app_id.into(), id.into()])
                .await?;
        }
        Ok(())
    }

    /// Upserts whether the entity is fresh or not; a doc's words are
    /// written by its home row's upsert, from the row it answers, into the
    /// shared `ec_fts` (one statement: the upsert a `WITH` of the words'),
    /// and only when that row changed — a row kept as it was keeps its
    /// words.
    async fn set(
        &self,
        _catalog: &AppSchema,
        app_id: i64,
        id: i64,
        component: &Component,
        cells: Vec<Cell<'_>>,
        _fresh: bool,
    ) -> Result<(), StoreError> {
        let mut statements = upserts(component, id, cells)?;
        if component.name == "doc" {
            // The first is the home group's, which holds the title and body.
            if let Some((home, params)) = statements.first_mut() {
                let words = doc_words(component)?;
                params.push(app_id.into());
                *home = format!(
                    "WITH home AS ({home} RETURNING *) \
                     INSERT INTO ec_fts(id, app, fts) SELECT id, ${}, {words} FROM home \
                     ON CONFLICT(app, id) DO UPDATE SET fts = excluded.fts",
                    params.len()
                );
            }
        }
        for (sql, params) in statements {
            self.pipeline.run(&sql, params).await?;
        }
        Ok(())
    }
}

/// The newest writes to one entity of an app, oldest first ([`crate::entities::history`]).
pub(crate) async fn history(
    client: &Client,
    app: &str,
    name: &str,
) -> Result<Vec<HistoryEntry>, StoreError> {
    crate::entities::history(&Txn::Connection(client), app, name).await
}
