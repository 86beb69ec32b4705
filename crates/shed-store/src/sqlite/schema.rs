//! Each app's catalog on SQLite (`ec_components`, `ec_groups`,
//! `ec_columns`): the shape tables in SQLite's words (`WITHOUT ROWID`
//! tables keyed by `(grp, id)`, each slot with a B-tree index led by the
//! group), the writer's cache of catalogs, and the app's row made.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, Transaction};

use super::txn::Txn;
use crate::query::at_once;
use crate::schema::{self, APP_ID, AppSchema, Tables, check_app_name, check_vocabulary};
use crate::txn::{Txn as _, args};
use crate::{ColumnType, StoreError, Vocabulary};

impl Tables for Txn<'_> {
    const KEY: &'static str = "INTEGER";
    const LOCK_SHAPES: Option<&'static str> = None;
    const SHAPE_TABLE: &'static str = " WITHOUT ROWID";

    fn column_type(ty: ColumnType) -> &'static str {
        match ty {
            ColumnType::Text | ColumnType::Url | ColumnType::Ref => "TEXT",
            ColumnType::Number => "REAL",
            ColumnType::Bool | ColumnType::Time => "INTEGER",
        }
    }

    /// A B-tree `(grp, slot)`, and the id after it for the slots that sort
    /// (SQLite keeps the key in every index entry anyway; nulls sort first).
    fn slot_index(slot: &str, ty: ColumnType) -> String {
        match ty {
            ColumnType::Text | ColumnType::Url => format!("(grp, {slot})"),
            ColumnType::Number | ColumnType::Bool | ColumnType::Time | ColumnType::Ref => {
                format!("(grp, {slot}, id)")
            }
        }
    }

    /// `sqlite_stat1` rows saying what holds in every shape table however
    /// full: a group holds many rows ([`HINTED_GROUP_ROWS`]) and a slot's
    /// value few of them ([`HINTED_VALUE_ROWS`]). Without them SQLite's
    /// planner guesses a group as narrow as a value, and walks a whole
    /// app's rows by their key for `.jog.who=Ada` rather than the slot's
    /// index. (Read when a connection loads the schema, which the table
    /// just made changes.)
    fn planner_hints(table: &str, indexes: &[String]) -> String {
        let (rows, group, value) = (HINTED_ROWS, HINTED_GROUP_ROWS, HINTED_VALUE_ROWS);
        let mut sql = format!(
            "INSERT INTO sqlite_stat1(tbl, idx, stat) VALUES('{table}', 'sqlite_autoindex_{table}_1', '{rows} {group} 1');\n"
        );
        for index in indexes {
            sql.push_str(&format!(
                "INSERT INTO sqlite_stat1(tbl, idx, stat) VALUES('{table}', '{index}', '{rows} {group} {value} 1');\n"
            ));
        }
        sql
    }
}

/// The rows a shape table is said to hold, for SQLite's planner
/// ([`Tables::planner_hints`]): a hint, not a bound.
pub const HINTED_ROWS: u64 = 1_000_000;
/// The rows one group (an app's component) is said to hold in it.
pub const HINTED_GROUP_ROWS: u64 = 10_000;
/// The rows of one group a slot's value is said to match.
pub const HINTED_VALUE_ROWS: u64 = 10;

/// The writer's copy of the catalogs it has read. An entry holds while
/// the app's catalog is unchanged — every change to it moves the app's
/// `catalog` count (`schema::declare`), and a purged app's name made again
/// has another id — and no write transaction has been rolled back since
/// (which could bring back a count with another catalog behind it).
#[derive(Default)]
pub(crate) struct WriterSchemas {
    cache: Mutex<HashMap<String, (Stamp, Arc<WriterCatalog>)>>,
}

/// When a catalog was read: the app's id and catalog count, and the
/// writer's rollbacks so far.
type Stamp = (i64, i64, u64);

/// An app's catalog as the writer holds it, with the SQL its writes repeat.
pub(crate) struct WriterCatalog {
    pub schema: AppSchema,
    /// Per component, per group in order: the INSERT of a new row of the
    /// group (binding its group, the id, then its columns), and the
    /// positions of its columns among the component's.
    fresh_rows: HashMap<String, Vec<FreshRow>>,
}

/// The INSERT of a new row of one group, and which columns it binds.
pub(crate) struct FreshRow {
    pub sql: String,
    pub group: i64,
    pub columns: Vec<usize>,
}

impl WriterCatalog {
    fn new(schema: AppSchema) -> WriterCatalog {
        let fresh_rows = schema
            .components
            .iter()
            .map(|c| {
                let rows = c
                    .groups
                    .iter()
                    .enumerate()
                    .map(|(g, group)| {
                        let columns: Vec<usize> = (0..c.places.len())
                            .filter(|i| c.places[*i].group == g)
                            .collect();
                        let mut slots = String::from("grp, id");
                        let mut marks = String::from("?1, ?2");
                        for (n, i) in columns.iter().enumerate() {
                            slots.push_str(&format!(", {}", c.places[*i].slot));
                            marks.push_str(&format!(", ?{}", n + 3));
                        }
                        FreshRow {
                            sql: format!("INSERT INTO {}({slots}) VALUES({marks})", group.table()),
                            group: group.id,
                            columns,
                        }
                    })
                    .collect();
                (c.name.clone(), rows)
            })
            .collect();
        WriterCatalog { fresh_rows, schema }
    }

    /// The INSERTs of a new row of each of `component`'s groups.
    pub(crate) fn fresh_rows(&self, component: &str) -> &[FreshRow] {
        self.fresh_rows.get(component).map_or(&[], Vec::as_slice)
    }
}

impl WriterSchemas {
    /// The app's catalog as `txn` sees it.
    pub(crate) fn get(
        &self,
        txn: &Transaction<'_>,
        app: &str,
    ) -> Result<Arc<WriterCatalog>, StoreError> {
        let (id, count): (i64, i64) = txn
            .prepare_cached("SELECT id, catalog FROM ec_apps WHERE name = ?1")?
            .query_row([app], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?
            .unwrap_or((-1, 0));
        let stamp = (id, count, super::engine::rollbacks());
        let mut cache = self
            .cache
            .lock()
            .map_err(|_| StoreError::Internal("the writer's catalog cache is poisoned".into()))?;
        if let Some((seen, catalog)) = cache.get(app)
            && *seen == stamp
        {
            return Ok(catalog.clone());
        }
        let catalog = Arc::new(WriterCatalog::new(load(txn, app)?));
        schema::keep_bounded(&mut cache, app.to_string(), (stamp, catalog.clone()));
        Ok(catalog)
    }
}

/// Reads an app's catalog; an unknown app has the platform's components only.
pub(crate) fn load(conn: &Connection, app: &str) -> Result<AppSchema, StoreError> {
    at_once(schema::load(&Txn(conn), app))
}

/// The app's id, creating the app (with the platform's components) if new.
pub(crate) fn ensure_app(txn: &Connection, app: &str) -> Result<i64, StoreError> {
    check_app_name(app)?;
    let t = Txn(txn);
    if let Some(row) = at_once(t.optional(APP_ID, args![app]))? {
        return row.get(0);
    }
    at_once(t.execute("INSERT INTO ec_apps(name) VALUES($1)", args![app]))?;
    let id = txn.last_insert_rowid();
    at_once(schema::make_app(&t, id))?;
    Ok(id)
}

/// Creates or extends what an app's vocabulary needs ([`schema::declare`]).
pub(crate) fn declare(txn: &Connection, app: &str, vocab: &Vocabulary) -> Result<(), StoreError> {
    check_app_name(app)?;
    check_vocabulary(app, vocab)?;
    let id = ensure_app(txn, app)?;
    at_once(schema::check_growth(&Txn(txn), app, id, vocab))?;
    at_once(schema::declare(&Txn(txn), app, id, vocab))
}

#[cfg(test)]
mod tests {
    use super::super::migrations::{MIGRATIONS, schema_at};
    use super::super::txn::Txn;
    use crate::query::at_once;
    use crate::schema::{MAX_CACHED_CATALOGS, Schemas};

    // A server that reaches every app of a hosted store keeps a bounded
    // number of their catalogs, not one an app.
    #[test]
    fn the_catalog_cache_holds_at_most_its_bound() {
        let conn = schema_at(MIGRATIONS.len()).unwrap();
        let schemas = Schemas::default();
        for i in 0..MAX_CACHED_CATALOGS + 10 {
            at_once(schemas.read(&Txn(&conn), &format!("jeff/a{i}"))).unwrap();
        }
        assert_eq!(schemas.kept(), MAX_CACHED_CATALOGS);
        let again = at_once(schemas.read(&Txn(&conn), "jeff/a0")).unwrap();
        assert_eq!(again.name, "jeff/a0");
        assert_eq!(schemas.kept(), MAX_CACHED_CATALOGS);
    }
}
