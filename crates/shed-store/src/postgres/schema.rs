//! Each app's catalog on PostgreSQL (`ec_components`, `ec_columns`) and the
//! per-app tables it describes: `ec_<app id>_<component>` with one typed
//! column per declared column (text, double precision, boolean,
//! timestamptz), each indexed, and on `doc` a generated `tsvector` over
//! title and body with a GIN index for `q=`.

use std::sync::Arc;

use deadpool_postgres::GenericClient;

use crate::schema::{
    AppSchema, Component, Schemas, check_app_name, check_vocabulary, indexed, platform_components,
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
    let id: Option<i64> = client
        .query_opt("SELECT id FROM ec_apps WHERE name = $1", &[&app])
        .await?
        .map(|r| r.get(0));
    let Some(id) = id else {
        return Ok(AppSchema {
            name: app.to_string(),
            id: None,
            components: platform_components(),
        });
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
    let components_stmt = client
        .prepare_cached("SELECT name FROM ec_components WHERE app = $1 ORDER BY position")
        .await?;
    let columns_stmt = client
        .prepare_cached(
            "SELECT component, name, type FROM ec_columns WHERE app = $1 ORDER BY position",
        )
        .await?;
    let mut components: Vec<Component> = client
        .query(&components_stmt, &[&id])
        .await?
        .iter()
        .map(|r| Component {
            name: r.get(0),
            columns: Vec::new(),
        })
        .collect();
    let rows = client.query(&columns_stmt, &[&id]).await?;
    for r in rows {
        let component: String = r.get(0);
        let ty: String = r.get(2);
        let ty = ColumnType::from_word(&ty).ok_or_else(|| {
            StoreError::Internal(format!("unknown column type {ty} in the catalog"))
        })?;
        if let Some(c) = components.iter_mut().find(|c| c.name == component) {
            c.columns.push((r.get(1), ty));
        }
    }
    Ok(AppSchema {
        name: app.to_string(),
        id: Some(id),
        components,
    })
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
        let id: i64 = r.get(0);
        for c in platform_components() {
            add_component(txn, id, &c.name, &c.columns).await?;
        }
    }
    let lock = txn
        .prepare_cached("SELECT id, version, last_num FROM ec_apps WHERE name = $1 FOR UPDATE")
        .await?;
    let r = txn.query_one(&lock, &[&app]).await?;
    Ok((r.get(0), r.get(1), r.get(2), made.is_some()))
}

fn sql_type(ty: ColumnType) -> &'static str {
    match ty {
        ColumnType::Text | ColumnType::Url | ColumnType::Ref => "TEXT",
        ColumnType::Number => "DOUBLE PRECISION",
        ColumnType::Bool => "BOOLEAN",
        ColumnType::Time => "TIMESTAMPTZ",
    }
}

fn index_name(id: i64, component: &str, column: &str) -> String {
    format!("\"ec_{id}_{component}.{column}\"")
}

async fn add_component(
    txn: &impl GenericClient,
    id: i64,
    name: &str,
    columns: &[(String, ColumnType)],
) -> Result<(), StoreError> {
    txn.execute(
        "INSERT INTO ec_components(app, name, position)
         VALUES($1, $2, (SELECT COUNT(*) FROM ec_components WHERE app = $1))",
        &[&id, &name],
    )
    .await?;
    let table = AppSchema::table(id, name);
    txn.batch_execute(&format!(
        "CREATE TABLE {table}(id BIGINT PRIMARY KEY REFERENCES ec_entities(id))"
    ))
    .await?;
    for (column, ty) in columns {
        add_column(txn, id, name, column, *ty).await?;
    }
    if name == "doc" {
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
        let table = AppSchema::table(id, &component.name);
        txn.batch_execute(&format!(
            "CREATE TABLE {table}(id BIGINT PRIMARY KEY REFERENCES ec_entities(id))"
        ))
        .await?;
        for (column, ty) in &component.columns {
            create_column(txn, id, &component.name, column, *ty).await?;
        }
        if component.name == "doc" {
            add_full_text(txn, id).await?;
        }
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
        let index = index_name(id, component, column);
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
    txn.execute(
        "INSERT INTO ec_columns(app, component, name, type, position)
         VALUES($1, $2, $3, $4, (SELECT COUNT(*) FROM ec_columns WHERE app = $1))",
        &[&id, &component, &column, &ty.as_str()],
    )
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

/// Creates or extends what an app's vocabulary needs, as SQLite's declare
/// does: a column keeps its type while it holds values.
pub(crate) async fn declare(
    txn: &impl GenericClient,
    app: &str,
    vocab: &Vocabulary,
) -> Result<(), StoreError> {
    check_app_name(app)?;
    check_vocabulary(vocab)?;
    let (id, ..) = lock_app(txn, app).await?;
    let current = load(txn, app).await?;
    for (name, columns) in &vocab.components {
        let Some(existing) = current.component(name) else {
            add_component(txn, id, name, columns).await?;
            continue;
        };
        for (column, ty) in columns {
            match existing.column(column) {
                None => add_column(txn, id, name, column, *ty).await?,
                Some(old) if old == *ty => {}
                Some(old) => {
                    let table = AppSchema::table(id, name);
                    let holds: bool = txn
                        .query_one(
                            &format!(
                                "SELECT EXISTS(SELECT 1 FROM {table} WHERE \"{column}\" IS NOT NULL)"
                            ),
                            &[],
                        )
                        .await?
                        .get(0);
                    if holds {
                        return Err(StoreError::refused(format!(
                            "{name}.{column} holds {} — add a new column rather than change its type",
                            old.plural()
                        )));
                    }
                    txn.batch_execute(&format!(
                        "DROP INDEX IF EXISTS {index};
                         ALTER TABLE {table} DROP COLUMN \"{column}\";
                         ALTER TABLE {table} ADD COLUMN \"{column}\" {ty};",
                        index = index_name(id, name, column),
                        ty = sql_type(*ty)
                    ))
                    .await?;
                    create_index(txn, id, name, column, *ty).await?;
                    txn.execute(
                        "UPDATE ec_columns SET type = $4 WHERE app = $1 AND component = $2 AND name = $3",
                        &[&id, &name, &column, &ty.as_str()],
                    )
                    .await?;
                }
            }
        }
    }
    Ok(())
}
