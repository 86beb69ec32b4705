//! Each app's catalog on SQLite (`ec_components`, `ec_columns`): the
//! per-app tables it describes in SQLite's words (`ec_<app id>_<component>`
//! with one indexed column per declared column, and `ec_<app id>__fts`
//! over `doc`), the writer's cache of catalogs, and the app's row made.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, Transaction};

use super::txn::Txn;
use crate::query::at_once;
use crate::schema::{self, APP_ID, AppSchema, Tables, check_app_name, check_vocabulary};
use crate::txn::{Txn as _, args};
use crate::{ColumnType, StoreError, Vocabulary};

impl Tables for Txn<'_> {
    const KEY: &'static str = "INTEGER";

    fn column_type(ty: ColumnType) -> &'static str {
        match ty {
            ColumnType::Text | ColumnType::Url | ColumnType::Ref => "TEXT",
            ColumnType::Number => "REAL",
            ColumnType::Bool | ColumnType::Time => "INTEGER",
        }
    }

    fn index_on(column: &str, _ty: ColumnType) -> String {
        format!("(\"{column}\")")
    }

    /// A table of its own (FTS5 makes its own tables beside it).
    fn full_text(id: i64) -> String {
        let fts = AppSchema::fts(id);
        format!(
            "CREATE VIRTUAL TABLE {fts} USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 2')"
        )
    }
}

/// The writer's copy of the catalogs it has read. An entry holds while the
/// database schema is unchanged — every change to a catalog creates or alters
/// a table, which moves SQLite's schema version — and no write transaction
/// has been rolled back since (which could bring back a version number with
/// another catalog behind it).
#[derive(Default)]
pub(crate) struct WriterSchemas {
    cache: Mutex<HashMap<String, (Stamp, Arc<WriterCatalog>)>>,
}

/// When a catalog was read: SQLite's schema version, and the writer's
/// rollbacks so far.
type Stamp = (i64, u64);

/// An app's catalog as the writer holds it, with the SQL its writes repeat.
pub(crate) struct WriterCatalog {
    pub schema: AppSchema,
    /// Per component: `INSERT INTO <table>(id, <every column>) VALUES(…)`.
    fresh_rows: HashMap<String, String>,
    /// `INSERT INTO <the app's FTS table>(rowid, title, body) VALUES(…)`.
    pub fts_insert: String,
}

impl WriterCatalog {
    fn new(schema: AppSchema) -> WriterCatalog {
        let id = schema.id.unwrap_or(-1);
        let fresh_rows = schema
            .components
            .iter()
            .map(|c| {
                let mut columns = String::from("id");
                let mut marks = String::from("?1");
                for (i, (column, _)) in c.columns.iter().enumerate() {
                    columns.push_str(&format!(", \"{column}\""));
                    marks.push_str(&format!(", ?{}", i + 2));
                }
                let table = AppSchema::table(id, &c.name);
                (
                    c.name.clone(),
                    format!("INSERT INTO {table}({columns}) VALUES({marks})"),
                )
            })
            .collect();
        WriterCatalog {
            fts_insert: format!(
                "INSERT INTO {}(rowid, title, body) VALUES(?1, ?2, ?3)",
                AppSchema::fts(id)
            ),
            fresh_rows,
            schema,
        }
    }

    /// The INSERT of a new row of `component`, binding its id and then every
    /// column in declared order.
    pub(crate) fn fresh_row(&self, component: &str) -> Option<&str> {
        self.fresh_rows.get(component).map(String::as_str)
    }
}

impl WriterSchemas {
    /// The app's catalog as `txn` sees it.
    pub(crate) fn get(
        &self,
        txn: &Transaction<'_>,
        app: &str,
    ) -> Result<Arc<WriterCatalog>, StoreError> {
        let schema_version: i64 = txn
            .prepare_cached("PRAGMA schema_version")?
            .query_row([], |r| r.get(0))?;
        let stamp = (schema_version, super::engine::rollbacks());
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
        cache.insert(app.to_string(), (stamp, catalog.clone()));
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
    check_vocabulary(vocab)?;
    let id = ensure_app(txn, app)?;
    at_once(schema::declare(&Txn(txn), app, id, vocab))
}
