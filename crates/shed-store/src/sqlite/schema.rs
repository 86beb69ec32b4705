//! Each app's catalog on SQLite (`ec_components`, `ec_columns`), the
//! per-app tables it describes (`ec_<app id>_<component>` with one indexed
//! column per declared column, and `ec_<app id>__fts` over `doc`), declaring
//! them, and the writer's cache of catalogs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, Transaction};

use crate::schema::{
    ADD_COLUMN, ADD_COMPONENT, AppSchema, COLUMNS_OF_APP, COMPONENTS_OF_APP, Declared,
    RETYPE_COLUMN, Schemas, check_app_name, check_vocabulary, declared, holds_any, holds_values,
    indexed, platform_components,
};
use crate::{ColumnType, StoreError, Vocabulary};

/// The app's catalog from the readers' cache, or read from `conn` and kept.
pub(crate) fn cached(
    schemas: &Schemas,
    conn: &Connection,
    app: &str,
) -> Result<Arc<AppSchema>, StoreError> {
    match schemas.cached(app) {
        Ok(schema) => Ok(schema),
        Err(generation) => {
            let schema = Arc::new(load(conn, app)?);
            schemas.keep(generation, schema.clone());
            Ok(schema)
        }
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
    let id: Option<i64> = conn
        .prepare_cached("SELECT id FROM ec_apps WHERE name = ?1")?
        .query_row([app], |r| r.get(0))
        .optional()?;
    let Some(id) = id else {
        return Ok(AppSchema::unknown(app));
    };
    let components = conn
        .prepare_cached(COMPONENTS_OF_APP)?
        .query_map([id], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let columns = conn
        .prepare_cached(COLUMNS_OF_APP)?
        .query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<Result<_, _>>()?;
    AppSchema::from_catalog(app, id, components, columns)
}

/// The app's id, creating the app (with the platform's components) if new.
pub(crate) fn ensure_app(txn: &Transaction<'_>, app: &str) -> Result<i64, StoreError> {
    check_app_name(app)?;
    let id: Option<i64> = txn
        .prepare_cached("SELECT id FROM ec_apps WHERE name = ?1")?
        .query_row([app], |r| r.get(0))
        .optional()?;
    if let Some(id) = id {
        return Ok(id);
    }
    txn.execute("INSERT INTO ec_apps(name) VALUES(?1)", [app])?;
    let id = txn.last_insert_rowid();
    for c in platform_components() {
        add_component(txn, id, &c.name, &c.columns)?;
    }
    create_fts_table(txn, id)?;
    Ok(id)
}

/// Creates app `id`'s full-text table over `doc` (FTS5 makes its own
/// tables beside it).
pub(crate) fn create_fts_table(conn: &Connection, id: i64) -> Result<(), StoreError> {
    let fts = AppSchema::fts(id);
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE {fts} USING fts5(title, body, tokenize = 'unicode61 remove_diacritics 2')"
    ))?;
    Ok(())
}

/// Creates app `id`'s table of `component`, with no column but its key.
/// `component` must be a checked word.
pub(crate) fn create_component_table(
    conn: &Connection,
    id: i64,
    component: &str,
) -> Result<(), StoreError> {
    let table = AppSchema::table(id, component);
    conn.execute_batch(&format!(
        "CREATE TABLE {table}(id INTEGER PRIMARY KEY REFERENCES ec_entities(id))"
    ))?;
    Ok(())
}

/// Adds `column` to app `id`'s table of `component`, with its index where
/// the component's columns have one. Both names must be checked words.
pub(crate) fn create_column(
    conn: &Connection,
    id: i64,
    component: &str,
    column: &str,
    ty: ColumnType,
) -> Result<(), StoreError> {
    let table = AppSchema::table(id, component);
    conn.execute_batch(&format!(
        "ALTER TABLE {table} ADD COLUMN \"{column}\" {}",
        affinity(ty)
    ))?;
    create_index(conn, id, component, column)
}

fn affinity(ty: ColumnType) -> &'static str {
    match ty {
        ColumnType::Text | ColumnType::Url | ColumnType::Ref => "TEXT",
        ColumnType::Number => "REAL",
        ColumnType::Bool | ColumnType::Time => "INTEGER",
    }
}

fn add_component(
    txn: &Transaction<'_>,
    id: i64,
    name: &str,
    columns: &[(String, ColumnType)],
) -> Result<(), StoreError> {
    txn.execute(ADD_COMPONENT, rusqlite::params![id, name])?;
    create_component_table(txn, id, name)?;
    for (column, ty) in columns {
        add_column(txn, id, name, column, *ty)?;
    }
    Ok(())
}

fn create_index(
    conn: &Connection,
    id: i64,
    component: &str,
    column: &str,
) -> Result<(), StoreError> {
    if indexed(component) {
        let table = AppSchema::table(id, component);
        let index = AppSchema::index(id, component, column);
        conn.execute_batch(&format!("CREATE INDEX {index} ON {table}(\"{column}\")"))?;
    }
    Ok(())
}

fn add_column(
    txn: &Transaction<'_>,
    id: i64,
    component: &str,
    column: &str,
    ty: ColumnType,
) -> Result<(), StoreError> {
    txn.execute(
        ADD_COLUMN,
        rusqlite::params![id, component, column, ty.as_str()],
    )?;
    create_column(txn, id, component, column, ty)
}

/// Re-types a column that holds no value: drop it and add it anew.
fn retype_column(
    txn: &Transaction<'_>,
    id: i64,
    component: &str,
    column: &str,
    ty: ColumnType,
) -> Result<(), StoreError> {
    let table = AppSchema::table(id, component);
    let index = AppSchema::index(id, component, column);
    txn.execute_batch(&format!(
        "DROP INDEX IF EXISTS {index};
         ALTER TABLE {table} DROP COLUMN \"{column}\";"
    ))?;
    create_column(txn, id, component, column, ty)?;
    txn.execute(
        RETYPE_COLUMN,
        rusqlite::params![ty.as_str(), id, component, column],
    )?;
    Ok(())
}

/// Creates or extends what an app's vocabulary needs ([`declared`]).
pub(crate) fn declare(
    txn: &Transaction<'_>,
    app: &str,
    vocab: &Vocabulary,
) -> Result<(), StoreError> {
    check_app_name(app)?;
    check_vocabulary(vocab)?;
    let id = ensure_app(txn, app)?;
    let current = load(txn, app)?;
    for change in declared(&current, vocab) {
        match change {
            Declared::Component(name, columns) => add_component(txn, id, name, columns)?,
            Declared::Column(name, column, ty) => add_column(txn, id, name, column, ty)?,
            Declared::Retype(name, column, old, ty) => {
                let holds: bool = txn.query_row(&holds_any(id, name, column), [], |r| r.get(0))?;
                if holds {
                    return Err(holds_values(name, column, old));
                }
                retype_column(txn, id, name, column, ty)?;
            }
        }
    }
    Ok(())
}

/// The app data version; 0 for an app never written.
pub(crate) fn data_version(conn: &Connection, app: &str) -> Result<u64, StoreError> {
    let v: Option<i64> = conn
        .prepare_cached("SELECT version FROM ec_apps WHERE name = ?1")?
        .query_row([app], |r| r.get(0))
        .optional()?;
    Ok(v.unwrap_or(0) as u64)
}
