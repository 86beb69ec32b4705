//! An apply's statements on PostgreSQL ([`crate::apply`] decides and says
//! everything else, as on SQLite), all in one transaction, all or nothing.
//! The app's row is locked first ([`lock_app`]), so the `was` checks, the
//! entity versions and the app data version hold against writers on every
//! server sharing the database. Also an entity's history.

use deadpool_postgres::GenericClient;
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

/// Writes an apply's bundles in `txn`; answers also whether it made the app.
pub(crate) async fn apply(
    txn: &impl GenericClient,
    app: &str,
    actor: &Actor,
    bundles: &[Bundle],
    expect: Option<u64>,
) -> Result<(Applied, bool), StoreError> {
    crate::apply::apply(&Statements(txn), app, actor, bundles, expect).await
}

/// The apply's transaction.
struct Statements<'a, C>(&'a C);

impl<C: GenericClient> Statements<'_, C> {
    /// Runs one statement, prepared once per connection.
    async fn run(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<(), StoreError> {
        let stmt = self.0.prepare_cached(sql).await?;
        self.0.execute(&stmt, params).await?;
        Ok(())
    }
}

impl<C: GenericClient> Lookup for Statements<'_, C> {
    async fn person_by_handle(&self, handle: &str) -> Result<Option<String>, StoreError> {
        Names(self.0).person_by_handle(handle).await
    }

    async fn entity_by_alias(
        &self,
        app_id: i64,
        alias: &str,
    ) -> Result<Option<String>, StoreError> {
        Names(self.0).entity_by_alias(app_id, alias).await
    }
}

impl<C: GenericClient> Writes for Statements<'_, C> {
    type Catalog = AppSchema;

    async fn open(&self, app: &str) -> Result<AppRow, StoreError> {
        let (id, version, last_num, created) = lock_app(self.0, app).await?;
        Ok(AppRow {
            id,
            version,
            last_num,
            created,
        })
    }

    async fn catalog(&self, app: &str, app_id: i64) -> Result<AppSchema, StoreError> {
        load_known(self.0, app, app_id).await
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
        let stmt = self.0.prepare_cached(sql).await?;
        Ok(self
            .0
            .query_opt(&stmt, &[&app_id, &target.given()])
            .await?
            .map(|r| (r.get(0), r.get(1), r.get(2))))
    }

    async fn is_person(&self, eid: &str) -> Result<bool, StoreError> {
        let stmt = self
            .0
            .prepare_cached("SELECT eid FROM people WHERE eid = $1")
            .await?;
        Ok(self.0.query_opt(&stmt, &[&eid]).await?.is_some())
    }

    async fn mint(
        &self,
        app_id: i64,
        eid: &str,
        num: i64,
        at: i64,
        actor: &Actor,
    ) -> Result<i64, StoreError> {
        let stmt = self
            .0
            .prepare_cached(
                "INSERT INTO ec_entities(app, eid, num, version, created_at, created_by, created_via, updated_at, updated_by, updated_via)
                 VALUES($1, $2, $3, 1, $4, $5, $6, $4, $5, $6) RETURNING id",
            )
            .await?;
        Ok(self
            .0
            .query_one(
                &stmt,
                &[&app_id, &eid, &num, &at, &actor.person, &actor.via],
            )
            .await?
            .get(0))
    }

    async fn touch(&self, id: i64, at: i64, actor: &Actor) -> Result<(), StoreError> {
        self.run(
            "UPDATE ec_entities SET version = version + 1, updated_at = $2, updated_by = $3, updated_via = $4 WHERE id = $1",
            &[&id, &at, &actor.person, &actor.via],
        )
        .await
    }

    async fn alias_holder(&self, app_id: i64, alias: &str) -> Result<Option<i64>, StoreError> {
        let stmt = self
            .0
            .prepare_cached("SELECT id FROM ec_entities WHERE app = $1 AND alias = $2")
            .await?;
        Ok(self
            .0
            .query_opt(&stmt, &[&app_id, &alias])
            .await?
            .map(|r| r.get(0)))
    }

    async fn set_alias(&self, id: i64, alias: Option<&str>) -> Result<(), StoreError> {
        self.run(
            "UPDATE ec_entities SET alias = $2 WHERE id = $1",
            &[&id, &alias],
        )
        .await
    }

    async fn edge(&self, src: i64, rel: &str, dst: &str, drop: bool) -> Result<(), StoreError> {
        let sql = if drop {
            "DELETE FROM ec_edges WHERE src = $1 AND rel = $2 AND dst = $3"
        } else {
            "INSERT INTO ec_edges(src, rel, dst) VALUES($1, $2, $3) ON CONFLICT DO NOTHING"
        };
        self.run(sql, &[&src, &rel, &dst]).await
    }

    /// The doc's `tsvector` stays with its row; a query answers live entities only.
    async fn tombstone(&self, _app_id: i64, id: i64) -> Result<(), StoreError> {
        self.run(
            "UPDATE ec_entities SET tombstoned = 1, alias = NULL WHERE id = $1",
            &[&id],
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
        self.run(&format!("DELETE FROM {table} WHERE id = $1"), &[&id])
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
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&id];
        params.extend(cells.iter().map(|c| &c.value as &(dyn ToSql + Sync)));
        self.run(&sql, &params).await
    }

    async fn append_history(&self, e: Entry<'_>) -> Result<(), StoreError> {
        self.run(
            "INSERT INTO ec_history(entity, app_version, step, version, at, by, via, change) VALUES($1, $2, $3, $4, $5, $6, $7, $8)",
            &[
                &e.entity,
                &e.app_version,
                &e.step,
                &e.version,
                &e.at,
                &e.actor.person,
                &e.actor.via,
                &e.change,
            ],
        )
        .await
    }

    async fn close(&self, app_id: i64, version: i64, last_num: i64) -> Result<(), StoreError> {
        self.run(
            "UPDATE ec_apps SET version = $2, last_num = $3 WHERE id = $1",
            &[&app_id, &version, &last_num],
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
        .get(0);
    let rows = client
        .query(
            "SELECT version, at, by, via, change FROM ec_history WHERE entity = $1 ORDER BY app_version, step",
            &[&id],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| HistoryEntry {
            version: r.get::<_, i64>(0) as u64,
            at: render_time(r.get(1)),
            by: r.get(2),
            via: r.get(3),
            change: serde_json::from_str(r.get(4)).unwrap_or(Value::Null),
        })
        .collect())
}
