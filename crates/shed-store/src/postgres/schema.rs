//! Each app's catalog on PostgreSQL (`ec_components`, `ec_columns`) and the
//! per-app tables it describes: `ec_<app id>_<component>` with one typed
//! column per declared column (text, double precision, boolean,
//! timestamptz), each indexed, and on `doc` a generated `tsvector` over
//! title and body with a GIN index for `q=`.

use std::sync::Arc;

use deadpool_postgres::GenericClient;

use crate::schema::{
    ADD_COLUMN, ADD_COMPONENT, AppSchema, COLUMNS_OF_APP, COMPONENTS_OF_APP, Declared,
    RETYPE_COLUMN, Schemas, check_app_name, check_vocabulary, declared, holds_any, holds_values,
    indexed, platform_components,
};
use crate::{ColumnType, StoreError, Vocabulary};

/// The app's catalog from the readers' cache, or read and kept.
pub(crate) async fn cached(
    schemas: &Schemas,
    client: &impl GenericClient,
    app: &str,
) -> Result<Arc<AppSchema>, StoreError> {
    match schemas.cached(app) {
        Ok(schema) => Ok(schema),
        Err(generation) => {
            let schema = Arc::new(load(client, app).await?);
            schemas.keep(generation, schema.clone());
            Ok(schema)
        }
    }
}

/// Reads an app's catalog; an unknown app has the platform's components only.
pub(crate) async fn load(client: &impl GenericClient, app: &str) -> Result<AppSchema, StoreError> {
    let id = client
        .query_opt("SELECT id FROM ec_apps WHERE name = $1", &[&app])
        .await?
        .map(|r| r.try_get(0))
        .transpose()?;
    let Some(id) = id else {
        return Ok(AppSchema::unknown(app));
    };
    load_known(client, app, id).await
}

/// Reads the catalog of an app whose row id is known (an apply's, which
/// has just locked the row), in two prepared statements.
pub(crate) async fn load_known(
    client: &impl GenericClient,
    app: &str,
    id: i64,
) -> Result<AppSchema, StoreError> {
    let components_stmt = client.prepare_cached(COMPONENTS_OF_APP).await?;
    let columns_stmt = client.prepare_cached(COLUMNS_OF_APP).await?;
    let components = client
        .query(&components_stmt, &[&id])
        .await?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, _>>()?;
    let columns = client
        .query(&columns_stmt, &[&id])
        .await?
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?)))
        .collect::<Result<_, tokio_postgres::Error>>()?;
    AppSchema::from_catalog(app, id, components, columns)
}

/// The app's row, locked until the transaction ends — the one lock every
/// write to an app takes, so writers on every server queue for it: (id,
/// version, last num, whether this write made the app).
pub(crate) async fn lock_app(
    txn: &impl GenericClient,
    app: &str,
) -> Result<(i64, i64, i64, bool), StoreError> {
    check_app_name(app)?;
    let insert = txn
        .prepare_cached(
            "INSERT INTO ec_apps(name) VALUES($1) ON CONFLICT(name) DO NOTHING RETURNING id",
        )
        .await?;
    let made = txn.query_opt(&insert, &[&app]).await?;
    if let Some(r) = &made {
        let id: i64 = r.try_get(0)?;
        for c in platform_components() {
            add_component(txn, id, &c.name, &c.columns).await?;
        }
    }
    let lock = txn
        .prepare_cached("SELECT id, version, last_num FROM ec_apps WHERE name = $1 FOR UPDATE")
        .await?;
    let r = txn.query_one(&lock, &[&app]).await?;
    Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?, made.is_some()))
}

fn sql_type(ty: ColumnType) -> &'static str {
    match ty {
        ColumnType::Text | ColumnType::Url | ColumnType::Ref => "TEXT",
        ColumnType::Number => "DOUBLE PRECISION",
        ColumnType::Bool => "BOOLEAN",
        ColumnType::Time => "TIMESTAMPTZ",
    }
}

async fn add_component(
    txn: &impl GenericClient,
    id: i64,
    name: &str,
    columns: &[(String, ColumnType)],
) -> Result<(), StoreError> {
    txn.execute(ADD_COMPONENT, &[&id, &name]).await?;
    for (column, ty) in columns {
        txn.execute(ADD_COLUMN, &[&id, &name, column, &ty.as_str()])
            .await?;
    }
    create_table(txn, id, name, columns).await
}

/// Creates app `id`'s table of `component` with its columns and their
/// indexes, and on `doc` its full text.
async fn create_table(
    txn: &impl GenericClient,
    id: i64,
    component: &str,
    columns: &[(String, ColumnType)],
) -> Result<(), StoreError> {
    let table = AppSchema::table(id, component);
    txn.batch_execute(&format!(
        "CREATE TABLE {table}(id BIGINT PRIMARY KEY REFERENCES ec_entities(id))"
    ))
    .await?;
    for (column, ty) in columns {
        create_column(txn, id, component, column, *ty).await?;
    }
    if component == "doc" {
        add_full_text(txn, id).await?;
    }
    Ok(())
}

/// `doc`'s generated `tsvector` over title and body, and its GIN index.
async fn add_full_text(txn: &impl GenericClient, id: i64) -> Result<(), StoreError> {
    let table = AppSchema::table(id, "doc");
    txn.batch_execute(&format!(
        "ALTER TABLE {table} ADD COLUMN fts tsvector GENERATED ALWAYS AS
             (to_tsvector('simple', coalesce(title, '') || ' ' || coalesce(body, ''))) STORED;
         CREATE INDEX \"ec_{id}_doc.fts\" ON {table} USING GIN (fts);"
    ))
    .await?;
    Ok(())
}

/// Creates the tables, columns and indexes of an app whose catalog rows are
/// already written (`shed migrate` copies them from SQLite): what declaring
/// it component by component would have made.
pub(crate) async fn create_tables(
    txn: &impl GenericClient,
    schema: &AppSchema,
) -> Result<(), StoreError> {
    let id = schema
        .id
        .ok_or_else(|| StoreError::Internal(format!("the app {} has no id", schema.name)))?;
    for component in &schema.components {
        create_table(txn, id, &component.name, &component.columns).await?;
    }
    Ok(())
}

/// A B-tree index for the columns that compare and sort (number, bool,
/// time, ref — an eid); a hash index for text and urls, whose values may be
/// longer than a B-tree entry holds (about 2.7 kB) and are compared with `=`.
/// The B-tree keeps nulls first, the order the store sorts in (nulls
/// smallest, as SQLite has them): `ASC NULLS FIRST` forward and `DESC NULLS
/// LAST` backward, so `order=-.jog.miles&limit=50` reads 50 entries of the
/// index rather than sorting the whole kind (0.2 s at 100,000 entities).
async fn create_index(
    txn: &impl GenericClient,
    id: i64,
    component: &str,
    column: &str,
    ty: ColumnType,
) -> Result<(), StoreError> {
    if indexed(component) {
        let table = AppSchema::table(id, component);
        let index = AppSchema::index(id, component, column);
        let key = match ty {
            ColumnType::Text | ColumnType::Url => format!("hash (\"{column}\")"),
            ColumnType::Number | ColumnType::Bool | ColumnType::Time | ColumnType::Ref => {
                format!("btree (\"{column}\" NULLS FIRST)")
            }
        };
        txn.batch_execute(&format!("CREATE INDEX {index} ON {table} USING {key}"))
            .await?;
    }
    Ok(())
}

async fn add_column(
    txn: &impl GenericClient,
    id: i64,
    component: &str,
    column: &str,
    ty: ColumnType,
) -> Result<(), StoreError> {
    txn.execute(ADD_COLUMN, &[&id, &component, &column, &ty.as_str()])
        .await?;
    create_column(txn, id, component, column, ty).await
}

/// Adds a column of the type `ty` keeps to a component's table, and its index.
async fn create_column(
    txn: &impl GenericClient,
    id: i64,
    component: &str,
    column: &str,
    ty: ColumnType,
) -> Result<(), StoreError> {
    let table = AppSchema::table(id, component);
    txn.batch_execute(&format!(
        "ALTER TABLE {table} ADD COLUMN \"{column}\" {}",
        sql_type(ty)
    ))
    .await?;
    create_index(txn, id, component, column, ty).await
}

/// Creates or extends what an app's vocabulary needs ([`declared`]), as
/// SQLite's declare does.
pub(crate) async fn declare(
    txn: &impl GenericClient,
    app: &str,
    vocab: &Vocabulary,
) -> Result<(), StoreError> {
    check_app_name(app)?;
    check_vocabulary(vocab)?;
    let (id, ..) = lock_app(txn, app).await?;
    let current = load(txn, app).await?;
    for change in declared(&current, vocab) {
        match change {
            Declared::Component(name, columns) => add_component(txn, id, name, columns).await?,
            Declared::Column(name, column, ty) => add_column(txn, id, name, column, ty).await?,
            Declared::Retype(name, column, old, ty) => {
                let holds: bool = txn
                    .query_one(&holds_any(id, name, column), &[])
                    .await?
                    .try_get(0)?;
                if holds {
                    return Err(holds_values(name, column, old));
                }
                txn.batch_execute(&format!(
                    "DROP INDEX IF EXISTS {index};
                     ALTER TABLE {table} DROP COLUMN \"{column}\";",
                    index = AppSchema::index(id, name, column),
                    table = AppSchema::table(id, name),
                ))
                .await?;
                create_column(txn, id, name, column, ty).await?;
                txn.execute(RETYPE_COLUMN, &[&ty.as_str(), &id, &name, &column])
                    .await?;
            }
        }
    }
    Ok(())
}
