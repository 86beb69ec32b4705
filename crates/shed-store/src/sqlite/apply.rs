//! An apply's statements on SQLite ([`crate::apply`] decides and says
//! everything else), run in the writer's open transaction; a refusal
//! anywhere rolls the whole transaction back (the engine then runs the
//! writes kept before it again), so a refused apply writes nothing. Its
//! statements answer in place, so the shared apply is polled once here.
//! Also an entity's history, which every write appends to.

use std::sync::Arc;

use rusqlite::{Connection, OptionalExtension, Transaction};

use super::query::Names;
use super::schema::{self, WriterCatalog, WriterSchemas};
use super::txn::Txn;
use crate::apply::{AppRow, Cell, Writes, find_sql, removals, upserts};
use crate::query::at_once;
use crate::query::plan::Lookup;
use crate::query::sql::app_words;
use crate::schema::{AppSchema, Component};
use crate::txn::Txn as _;
use crate::values::Sql;
use crate::wire::{Bundle, Target};
use crate::{Actor, Applied, HistoryEntry, StoreError};

/// Writes an apply's bundles (read by [`crate::wire::read`]) in `txn`; the
/// writer keeps all of it or none. Answers also whether the app was created
/// by it.
pub(crate) fn apply(
    txn: &Transaction<'_>,
    catalogs: &WriterSchemas,
    app: &str,
    actor: &Actor,
    bundles: &[Bundle],
    expect: Option<u64>,
) -> Result<(Applied, bool), StoreError> {
    at_once(crate::apply::apply(
        &Statements { txn, catalogs },
        app,
        actor,
        bundles,
        expect,
    ))
}

/// The writer's transaction, and its catalogs.
struct Statements<'a> {
    txn: &'a Transaction<'a>,
    catalogs: &'a WriterSchemas,
}

impl Lookup for Statements<'_> {
    async fn person_by_handle(&self, handle: &str) -> Result<Option<String>, StoreError> {
        Names(self.txn).person_by_handle(handle).await
    }

    async fn entity_by_alias(
        &self,
        app_id: i64,
        alias: &str,
    ) -> Result<Option<String>, StoreError> {
        Names(self.txn).entity_by_alias(app_id, alias).await
    }
}

impl Writes for Statements<'_> {
    type Catalog = Arc<WriterCatalog>;

    async fn open(&self, app: &str) -> Result<AppRow, StoreError> {
        let known: Option<(i64, i64, i64)> = self
            .txn
            .prepare_cached("SELECT id, version, last_num FROM ec_apps WHERE name = ?1")?
            .query_row([app], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()?;
        Ok(match known {
            Some((id, version, last_num)) => AppRow {
                id,
                version,
                last_num,
                created: false,
            },
            None => AppRow {
                id: schema::ensure_app(self.txn, app)?,
                version: 0,
                last_num: 0,
                created: true,
            },
        })
    }

    async fn catalog(&self, app: &str, _app_id: i64) -> Result<Arc<WriterCatalog>, StoreError> {
        self.catalogs.get(self.txn, app)
    }

    fn schema(catalog: &Arc<WriterCatalog>) -> &AppSchema {
        &catalog.schema
    }

    async fn run(&self, sql: &str, params: Vec<Sql>) -> Result<(), StoreError> {
        Txn(self.txn).execute(sql, &params).await.map(drop)
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
        let by = [app_id.into(), target.given().into()];
        let row = Txn(self.txn).optional(sql, &by).await?;
        row.map(|r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .transpose()
    }

    async fn is_person(&self, eid: &str) -> Result<bool, StoreError> {
        Ok(super::people::by_eid(self.txn, eid)?.is_some())
    }

    async fn mint(
        &self,
        app_id: i64,
        eid: &str,
        num: i64,
        at: i64,
        actor: &Actor,
    ) -> Result<i64, StoreError> {
        self.txn
            .prepare_cached(
                "INSERT INTO ec_entities(app, eid, num, version, created_at, created_by, created_via, updated_at, updated_by, updated_via)
                 VALUES(?1, ?2, ?3, 1, ?4, ?5, ?6, ?4, ?5, ?6)",
            )?
            .execute(rusqlite::params![
                app_id,
                eid,
                num,
                at,
                actor.person,
                actor.via
            ])?;
        Ok(self.txn.last_insert_rowid())
    }

    async fn alias_holder(&self, app_id: i64, alias: &str) -> Result<Option<i64>, StoreError> {
        Ok(self
            .txn
            .prepare_cached("SELECT id FROM ec_entities WHERE app = ?1 AND alias = ?2")?
            .query_row(rusqlite::params![app_id, alias], |r| r.get(0))
            .optional()?)
    }

    async fn drop_text(&self, id: i64) -> Result<(), StoreError> {
        self.txn
            .prepare_cached("DELETE FROM ec_fts WHERE rowid = ?1")?
            .execute([id])?;
        Ok(())
    }

    async fn restore_text(
        &self,
        catalog: &Arc<WriterCatalog>,
        app_id: i64,
        id: i64,
    ) -> Result<(), StoreError> {
        self.refresh_fts(&catalog.schema, app_id, id, true)
    }

    async fn remove(
        &self,
        catalog: &Arc<WriterCatalog>,
        app_id: i64,
        id: i64,
        component: &Component,
        fresh: bool,
    ) -> Result<(), StoreError> {
        for (sql, params) in removals(component, id) {
            self.run(&sql, params).await?;
        }
        if component.name == "doc" {
            self.refresh_fts(&catalog.schema, app_id, id, fresh)?;
        }
        Ok(())
    }

    async fn set(
        &self,
        catalog: &Arc<WriterCatalog>,
        app_id: i64,
        id: i64,
        component: &Component,
        cells: Vec<Cell<'_>>,
        fresh: bool,
    ) -> Result<(), StoreError> {
        let name = component.name.as_str();
        if fresh {
            // A fresh entity has no row yet: a plain INSERT of every column
            // of each group set, and of the home group (SQL written once per
            // catalog), which unlike an upsert needs no statement journal. A
            // new doc's text is what this bundle says: index it as given.
            let mut values: Vec<Option<Sql>> = vec![None; component.columns.len()];
            for cell in cells {
                if let Some(v) = values.get_mut(cell.position) {
                    *v = Some(cell.value);
                }
            }
            if name == "doc" {
                let text = |column: &str| {
                    let value = component
                        .position(column)
                        .and_then(|(p, _)| values.get(p).cloned().flatten());
                    match value {
                        Some(Sql::Text(text)) => Some(app_words(app_id, &text)),
                        _ => None,
                    }
                };
                self.txn
                    .prepare_cached("INSERT INTO ec_fts(rowid, title, body) VALUES(?1, ?2, ?3)")?
                    .execute(rusqlite::params![id, text("title"), text("body")])?;
            }
            for (g, row) in catalog.fresh_rows(name).iter().enumerate() {
                if g > 0 && row.columns.iter().all(|c| values[*c].is_none()) {
                    continue;
                }
                let bound = [Sql::Integer(row.group), Sql::Integer(id)]
                    .into_iter()
                    .chain(
                        row.columns
                            .iter()
                            .map(|c| values[*c].clone().unwrap_or(Sql::Null)),
                    );
                self.txn
                    .prepare_cached(&row.sql)?
                    .execute(rusqlite::params_from_iter(bound))?;
            }
            return Ok(());
        }
        for (sql, params) in upserts(component, id, cells)? {
            self.run(&sql, params).await?;
        }
        if name == "doc" {
            self.refresh_fts(&catalog.schema, app_id, id, false)?;
        }
        Ok(())
    }
}

impl Statements<'_> {
    /// Makes the shared full-text table agree with the entity's doc
    /// (`fresh`: the entity was minted by this bundle and has no entry yet),
    /// each word written with the app's id before it ([`app_words`]).
    /// Values are read first and bound, so no statement needs a statement
    /// journal (FTS5 flushes its pending terms at every statement savepoint).
    fn refresh_fts(
        &self,
        schema: &AppSchema,
        app_id: i64,
        id: i64,
        fresh: bool,
    ) -> Result<(), StoreError> {
        if !fresh {
            self.txn
                .prepare_cached("DELETE FROM ec_fts WHERE rowid = ?1")?
                .execute([id])?;
        }
        let sql = doc_text_sql(schema)?;
        let text: Option<(Option<String>, Option<String>)> = self
            .txn
            .prepare_cached(&sql.0)?
            .query_row([sql.1, id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        if let Some((title, body)) = text {
            let words = |t: Option<String>| t.map(|t| app_words(app_id, &t));
            self.txn
                .prepare_cached("INSERT INTO ec_fts(rowid, title, body) VALUES(?1, ?2, ?3)")?
                .execute(rusqlite::params![id, words(title), words(body)])?;
        }
        Ok(())
    }
}

/// The statement reading an entity's doc title and body (binding the
/// doc's home group, then the id), and that group.
fn doc_text_sql(schema: &AppSchema) -> Result<(String, i64), StoreError> {
    let doc = schema
        .component("doc")
        .ok_or_else(|| StoreError::Internal(format!("{} has no doc", schema.name)))?;
    let (title, body) = crate::schema::doc_slots(doc)?;
    let home = doc.home()?;
    Ok((
        format!(
            "SELECT {title}, {body} FROM {} WHERE grp = ?1 AND id = ?2",
            home.table()
        ),
        home.id,
    ))
}

/// The newest writes to one entity of an app, oldest first ([`crate::entities::history`]).
pub(crate) fn history(
    conn: &Connection,
    app: &str,
    name: &str,
) -> Result<Vec<HistoryEntry>, StoreError> {
    at_once(crate::entities::history(&Txn(conn), app, name))
}
