//! An apply's statements on PostgreSQL ([`crate::apply`] decides and says
//! everything else, as on SQLite), run in a savepoint of the group commit's
//! transaction (`group.rs`), all or nothing. The app's row is locked first
//! ([`lock_app`]), so the `was` checks, the entity versions and the app data
//! version hold against writers on every server sharing the database.
//! Statements are pipelined: one whose answer is only its success (an
//! update, an insert, the savepoint itself) is sent and not waited for; the
//! next statement that answers something, and the end of the apply, wait
//! for every one sent before — the server runs them in the order sent, so
//! a read sees them, and the first failure refuses the apply. Also an
//! entity's history.

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::Poll;

use deadpool_postgres::{GenericClient, Transaction};
use serde_json::Value;
use tokio_postgres::types::ToSql;

use super::query::Names;
use super::schema::{load_known, lock_app};
use crate::apply::{AppRow, Cell, Entry, Writes, no_entity};
use crate::names::is_eid;
use crate::query::plan::Lookup;
use crate::schema::{AppSchema, Component};
use crate::values::render_time;
use crate::wire::{Bundle, Target};
use crate::{Actor, Applied, HistoryEntry, StoreError};

/// Writes an apply's bundles in `txn`, in a savepoint of their own, and
/// waits for every statement it sent; answers also whether it made the
/// app. A refused apply is rolled back to its savepoint ([`roll_back`]).
pub(crate) async fn apply(
    txn: &Transaction<'_>,
    app: &str,
    actor: &Actor,
    bundles: &[Bundle],
    expect: Option<u64>,
) -> Result<(Applied, bool), StoreError> {
    let statements = Statements {
        txn,
        sent: Mutex::default(),
    };
    statements
        .send(Box::pin(txn.batch_execute("SAVEPOINT apply")))
        .await?;
    let applied = crate::apply::apply(&statements, app, actor, bundles, expect).await;
    let settled = statements.settle().await;
    let applied = applied?;
    settled?;
    Ok(applied)
}

/// Takes back what a refused [`apply`] wrote in `txn`, and only that; an
/// error here leaves the transaction unusable.
pub(crate) async fn roll_back(txn: &Transaction<'_>) -> Result<(), StoreError> {
    Ok(txn.batch_execute("ROLLBACK TO SAVEPOINT apply").await?)
}

/// Polls `future` once: its answer, if that one poll had it.
async fn poll_once<F: Future + Unpin>(future: &mut F) -> Poll<F::Output> {
    std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut *future).poll(cx))).await
}

/// A statement sent whose answer is only whether it succeeded.
type Sent<'a> = Pin<Box<dyn Future<Output = Result<(), tokio_postgres::Error>> + Send + 'a>>;

/// A value bound to a statement sent ahead, owned by it.
type Owned = Box<dyn ToSql + Sync + Send>;

fn owned(value: impl ToSql + Sync + Send + 'static) -> Owned {
    Box::new(value)
}

/// The apply's transaction, and the statements sent and not yet answered.
struct Statements<'a> {
    txn: &'a Transaction<'a>,
    /// Oldest first.
    sent: Mutex<Vec<Sent<'a>>>,
}

impl<'a> Statements<'a> {
    /// Sends a statement (polled once, which puts it on the connection)
    /// without waiting for its answer.
    async fn send(&self, mut sent: Sent<'a>) -> Result<(), StoreError> {
        match poll_once(&mut sent).await {
            Poll::Ready(done) => Ok(done?),
            Poll::Pending => {
                self.sent
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(sent);
                Ok(())
            }
        }
    }

    /// Waits for every statement sent; the first failure is the answer.
    async fn settle(&self) -> Result<(), StoreError> {
        let sent = std::mem::take(
            &mut *self
                .sent
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        let mut failed = None;
        for statement in sent {
            if let Err(e) = statement.await {
                failed.get_or_insert(e);
            }
        }
        failed.map_or(Ok(()), |e| Err(e.into()))
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
    async fn run(&self, sql: &str, params: Vec<Owned>) -> Result<(), StoreError> {
        let stmt = self
            .answered(async { Ok(self.txn.prepare_cached(sql).await?) })
            .await?;
        let client: &'a tokio_postgres::Transaction<'a> = self.txn;
        self.send(Box::pin(async move {
            client.execute_raw(&stmt, params).await.map(drop)
        }))
        .await
    }
}

impl Lookup for Statements<'_> {
    async fn person_by_handle(&self, handle: &str) -> Result<Option<String>, StoreError> {
        self.answered(Names(self.txn).person_by_handle(handle))
            .await
    }

    async fn entity_by_alias(
        &self,
        app_id: i64,
        alias: &str,
    ) -> Result<Option<String>, StoreError> {
        self.answered(Names(self.txn).entity_by_alias(app_id, alias))
            .await
    }
}

impl Writes for Statements<'_> {
    type Catalog = AppSchema;

    async fn open(&self, app: &str) -> Result<AppRow, StoreError> {
        let (id, version, last_num, created) = self.answered(lock_app(self.txn, app)).await?;
        Ok(AppRow {
            id,
            version,
            last_num,
            created,
        })
    }

    async fn catalog(&self, app: &str, app_id: i64) -> Result<AppSchema, StoreError> {
        self.answered(load_known(self.txn, app, app_id)).await
    }

    fn schema(catalog: &AppSchema) -> &AppSchema {
        catalog
    }

    async fn find(
        &self,
        app_id: i64,
        target: &Target,
    ) -> Result<Option<(i64, String, i64)>, StoreError> {
        let sql = match target {
            Target::Eid(_) => {
                "SELECT id, eid, version FROM ec_entities WHERE app = $1 AND eid = $2 AND tombstoned = 0"
            }
            Target::Alias(_) => {
                "SELECT id, eid, version FROM ec_entities WHERE app = $1 AND alias = $2 AND tombstoned = 0"
            }
            Target::Mint(_) => return Ok(None),
        };
        self.answered(async {
            let stmt = self.txn.prepare_cached(sql).await?;
            Ok(self
                .txn
                .query_opt(&stmt, &[&app_id, &target.given()])
                .await?
                .map(|r| {
                    Ok::<_, tokio_postgres::Error>((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?))
                })
                .transpose()?)
        })
        .await
    }

    async fn is_person(&self, eid: &str) -> Result<bool, StoreError> {
        self.answered(async {
            let stmt = self
                .txn
                .prepare_cached("SELECT eid FROM people WHERE eid = $1")
                .await?;
            Ok(self.txn.query_opt(&stmt, &[&eid]).await?.is_some())
        })
        .await
    }

    async fn mint(
        &self,
        app_id: i64,
        eid: &str,
        num: i64,
        at: i64,
        actor: &Actor,
    ) -> Result<i64, StoreError> {
        self.answered(async {
            let stmt = self
                .txn
                .prepare_cached(
                    "INSERT INTO ec_entities(app, eid, num, version, created_at, created_by, created_via, updated_at, updated_by, updated_via)
                     VALUES($1, $2, $3, 1, $4, $5, $6, $4, $5, $6) RETURNING id",
                )
                .await?;
            Ok(self
                .txn
                .query_one(
                    &stmt,
                    &[&app_id, &eid, &num, &at, &actor.person, &actor.via],
                )
                .await?
                .try_get(0)?)
        })
        .await
    }

    async fn touch(&self, id: i64, at: i64, actor: &Actor) -> Result<(), StoreError> {
        self.run(
            "UPDATE ec_entities SET version = version + 1, updated_at = $2, updated_by = $3, updated_via = $4 WHERE id = $1",
            vec![
                owned(id),
                owned(at),
                owned(actor.person.clone()),
                owned(actor.via.clone()),
            ],
        )
        .await
    }

    async fn alias_holder(&self, app_id: i64, alias: &str) -> Result<Option<i64>, StoreError> {
        self.answered(async {
            let stmt = self
                .txn
                .prepare_cached("SELECT id FROM ec_entities WHERE app = $1 AND alias = $2")
                .await?;
            Ok(self
                .txn
                .query_opt(&stmt, &[&app_id, &alias])
                .await?
                .map(|r| r.try_get(0))
                .transpose()?)
        })
        .await
    }

    async fn set_alias(&self, id: i64, alias: Option<&str>) -> Result<(), StoreError> {
        self.run(
            "UPDATE ec_entities SET alias = $2 WHERE id = $1",
            vec![owned(id), owned(alias.map(str::to_string))],
        )
        .await
    }

    async fn edge(&self, src: i64, rel: &str, dst: &str, drop: bool) -> Result<(), StoreError> {
        let sql = if drop {
            "DELETE FROM ec_edges WHERE src = $1 AND rel = $2 AND dst = $3"
        } else {
            "INSERT INTO ec_edges(src, rel, dst) VALUES($1, $2, $3) ON CONFLICT DO NOTHING"
        };
        self.run(
            sql,
            vec![owned(src), owned(rel.to_string()), owned(dst.to_string())],
        )
        .await
    }

    /// The doc's `tsvector` stays with its row; a query answers live entities only.
    async fn tombstone(&self, _app_id: i64, id: i64) -> Result<(), StoreError> {
        self.run(
            "UPDATE ec_entities SET tombstoned = 1, alias = NULL WHERE id = $1",
            vec![owned(id)],
        )
        .await
    }

    async fn remove(
        &self,
        _catalog: &AppSchema,
        app_id: i64,
        id: i64,
        component: &Component,
        _fresh: bool,
    ) -> Result<(), StoreError> {
        let table = AppSchema::table(app_id, &component.name);
        self.run(
            &format!("DELETE FROM {table} WHERE id = $1"),
            vec![owned(id)],
        )
        .await
    }

    /// An upsert whether the entity is fresh or not.
    async fn set(
        &self,
        _catalog: &AppSchema,
        app_id: i64,
        id: i64,
        component: &Component,
        cells: Vec<Cell<'_>>,
        _fresh: bool,
    ) -> Result<(), StoreError> {
        let table = AppSchema::table(app_id, &component.name);
        let sql = if cells.is_empty() {
            format!("INSERT INTO {table}(id) VALUES($1) ON CONFLICT(id) DO NOTHING")
        } else {
            let cols: Vec<String> = cells.iter().map(|c| format!("\"{}\"", c.column)).collect();
            let marks: Vec<String> = (2..=cells.len() + 1).map(|i| format!("${i}")).collect();
            let sets: Vec<String> = cols.iter().map(|c| format!("{c} = excluded.{c}")).collect();
            format!(
                "INSERT INTO {table}(id, {}) VALUES($1, {}) ON CONFLICT(id) DO UPDATE SET {}",
                cols.join(", "),
                marks.join(", "),
                sets.join(", ")
            )
        };
        let mut params = vec![owned(id)];
        params.extend(cells.into_iter().map(|c| owned(c.value)));
        self.run(&sql, params).await
    }

    async fn append_history(&self, e: Entry<'_>) -> Result<(), StoreError> {
        self.run(
            "INSERT INTO ec_history(entity, app_version, step, version, at, by, via, change) VALUES($1, $2, $3, $4, $5, $6, $7, $8)",
            vec![
                owned(e.entity),
                owned(e.app_version),
                owned(e.step),
                owned(e.version),
                owned(e.at),
                owned(e.actor.person.clone()),
                owned(e.actor.via.clone()),
                owned(e.change),
            ],
        )
        .await
    }

    async fn close(&self, app_id: i64, version: i64, last_num: i64) -> Result<(), StoreError> {
        self.run(
            "UPDATE ec_apps SET version = $2, last_num = $3 WHERE id = $1",
            vec![owned(app_id), owned(version), owned(last_num)],
        )
        .await
    }
}

/// Every write to one entity of an app, oldest first.
pub(crate) async fn history(
    client: &impl GenericClient,
    app: &str,
    name: &str,
) -> Result<Vec<HistoryEntry>, StoreError> {
    let column = if is_eid(name) { "eid" } else { "alias" };
    let id: i64 = client
        .query_opt(
            &format!(
                "SELECT e.id FROM ec_entities e JOIN ec_apps a ON a.id = e.app WHERE a.name = $1 AND e.{column} = $2"
            ),
            &[&app, &name],
        )
        .await?
        .ok_or_else(|| no_entity(name, app))?
        .try_get(0)?;
    let rows = client
        .query(
            "SELECT version, at, by, via, change FROM ec_history WHERE entity = $1 ORDER BY app_version, step",
            &[&id],
        )
        .await?;
    rows.iter()
        .map(|r| {
            Ok(HistoryEntry {
                version: r.try_get::<_, i64>(0)? as u64,
                at: render_time(r.try_get(1)?),
                by: r.try_get(2)?,
                via: r.try_get(3)?,
                change: serde_json::from_str(r.try_get(4)?).unwrap_or(Value::Null),
            })
        })
        .collect()
}
