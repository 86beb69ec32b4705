//! Each app's components and columns as the store knows them, whatever the
//! backend: the platform's own components, an app's catalog
//! ([`AppSchema`]), the checks of an app name and of a vocabulary, and the
//! readers' cache of catalogs. What both backends' catalogs share is
//! written here once — the catalog's statements, a catalog read from its
//! rows, what a declare changes ([`declared`]) and its refusal; each keeps
//! the per-app tables in its own DDL (`sqlite/schema.rs`,
//! `postgres/schema.rs`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::names::{RESERVED, is_app_name, is_word};
use crate::txn::{Txn, args};
use crate::{ColumnType, StoreError, Vocabulary};
use shed_words::STORE_COLUMNS;

/// The components every app knows without declaring them.
pub(crate) fn platform_components() -> Vec<Component> {
    vec![
        Component {
            name: "doc".into(),
            columns: vec![
                ("title".into(), ColumnType::Text),
                ("body".into(), ColumnType::Text),
            ],
        },
        Component {
            name: "comment".into(),
            columns: vec![("target".into(), ColumnType::Ref)],
        },
    ]
}

/// A component and its typed columns, in declared order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Component {
    pub name: String,
    pub columns: Vec<(String, ColumnType)>,
}

impl Component {
    pub(crate) fn column(&self, name: &str) -> Option<ColumnType> {
        self.position(name).map(|(_, t)| t)
    }

    /// The column's place among the component's columns, and its type.
    pub(crate) fn position(&self, name: &str) -> Option<(usize, ColumnType)> {
        self.columns
            .iter()
            .enumerate()
            .find(|(_, (c, _))| c == name)
            .map(|(i, (_, t))| (i, *t))
    }

    /// `jog has no column mile — it has who, miles, at`
    pub(crate) fn no_column(&self, column: &str) -> StoreError {
        let has: Vec<&str> = self.columns.iter().map(|(c, _)| c.as_str()).collect();
        let has = if has.is_empty() {
            "none".to_string()
        } else {
            has.join(", ")
        };
        StoreError::refused(format!(
            "{} has no column {column} — it has {has}",
            self.name
        ))
    }
}

/// One app's catalog as the store holds it.
#[derive(Clone, Debug)]
pub(crate) struct AppSchema {
    /// The app's name as given (`jeff/runs`).
    pub name: String,
    /// Its row in `ec_apps`; `None` for an app never declared nor written.
    pub id: Option<i64>,
    pub components: Vec<Component>,
}

impl AppSchema {
    pub(crate) fn component(&self, name: &str) -> Option<&Component> {
        self.components.iter().find(|c| c.name == name)
    }

    /// The SQL name of a component's table in this app.
    pub(crate) fn table(id: i64, component: &str) -> String {
        format!("\"ec_{id}_{component}\"")
    }

    /// The SQL name of this app's full-text table over `doc`.
    pub(crate) fn fts(id: i64) -> String {
        format!("\"ec_{id}__fts\"")
    }

    /// The SQL name of the index of a component's column in this app.
    pub(crate) fn index(id: i64, component: &str, column: &str) -> String {
        format!("\"ec_{id}_{component}.{column}\"")
    }

    /// The catalog of an app never declared nor written: the platform's
    /// components only.
    pub(crate) fn unknown(app: &str) -> AppSchema {
        AppSchema {
            name: app.to_string(),
            id: None,
            components: platform_components(),
        }
    }

    /// App `id`'s catalog from its rows, each in its `position` order: its
    /// components' names, and every column as (component, name, type).
    pub(crate) fn from_catalog(
        app: &str,
        id: i64,
        components: Vec<String>,
        columns: Vec<(String, String, String)>,
    ) -> Result<AppSchema, StoreError> {
        let mut components: Vec<Component> = components
            .into_iter()
            .map(|name| Component {
                name,
                columns: Vec::new(),
            })
            .collect();
        for (component, column, ty) in columns {
            let ty = ColumnType::from_word(&ty).ok_or_else(|| {
                StoreError::Internal(format!("unknown column type {ty} in the catalog"))
            })?;
            if let Some(c) = components.iter_mut().find(|c| c.name == component) {
                c.columns.push((column, ty));
            }
        }
        Ok(AppSchema {
            name: app.to_string(),
            id: Some(id),
            components,
        })
    }
}

/// What declaring a vocabulary changes in an app's catalog, in the order to
/// make it: a component, a column, or a column's type (allowed only while
/// the column holds no value: [`holds_values`]). A column or component the
/// vocabulary no longer names is kept with its data.
pub(crate) enum Declared<'v> {
    Component(&'v str, &'v [(String, ColumnType)]),
    Column(&'v str, &'v str, ColumnType),
    Retype(&'v str, &'v str, ColumnType, ColumnType),
}

/// The changes declaring `vocab` makes to the catalog `current` (checked
/// first: [`check_vocabulary`]).
pub(crate) fn declared<'v>(current: &AppSchema, vocab: &'v Vocabulary) -> Vec<Declared<'v>> {
    let mut changes = Vec::new();
    for (name, columns) in &vocab.components {
        let Some(existing) = current.component(name) else {
            changes.push(Declared::Component(name, columns));
            continue;
        };
        for (column, ty) in columns {
            match existing.column(column) {
                None => changes.push(Declared::Column(name, column, *ty)),
                Some(old) if old == *ty => {}
                Some(old) => changes.push(Declared::Retype(name, column, old, *ty)),
            }
        }
    }
    changes
}

/// The refusal of a new type for a column that holds values of `old`.
pub(crate) fn holds_values(component: &str, column: &str, old: ColumnType) -> StoreError {
    StoreError::refused(format!(
        "{component}.{column} holds {} — add a new column rather than change its type",
        old.plural()
    ))
}

/// What each backend's DDL says its own way about an app's tables; the
/// rest of the DDL, and every change of the catalog, is written once below.
pub(crate) trait Tables: Txn {
    /// The SQL type of a component table's key.
    const KEY: &'static str;
    /// The SQL type of a column of type `ty`.
    fn column_type(ty: ColumnType) -> &'static str;
    /// What follows `CREATE INDEX <index> ON <table>` for the index of
    /// `column`, of type `ty`.
    fn index_on(column: &str, ty: ColumnType) -> String;
    /// The statements that make app `id`'s full text over `doc` (its
    /// table made).
    fn full_text(id: i64) -> String;
}

/// The statement that answers the id of the app `$1` names.
pub(crate) const APP_ID: &str = "SELECT id FROM ec_apps WHERE name = $1";

/// Reads an app's catalog; an unknown app has the platform's components only.
pub(crate) async fn load(t: &impl Txn, app: &str) -> Result<AppSchema, StoreError> {
    match t.optional(APP_ID, args![app]).await? {
        Some(row) => load_known(t, app, row.get(0)?).await,
        None => Ok(AppSchema::unknown(app)),
    }
}

/// Reads the catalog of an app whose row id is known.
pub(crate) async fn load_known(t: &impl Txn, app: &str, id: i64) -> Result<AppSchema, StoreError> {
    let sql = "SELECT name FROM ec_components WHERE app = $1 ORDER BY position";
    let components = t
        .all(sql, args![id])
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect::<Result<_, _>>()?;
    let sql = "SELECT component, name, type FROM ec_columns WHERE app = $1 ORDER BY position";
    let columns = t
        .all(sql, args![id])
        .await?
        .iter()
        .map(|r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .collect::<Result<_, StoreError>>()?;
    AppSchema::from_catalog(app, id, components, columns)
}

/// The app data version; 0 for an app never written.
pub(crate) async fn data_version(t: &impl Txn, app: &str) -> Result<u64, StoreError> {
    let sql = "SELECT version FROM ec_apps WHERE name = $1";
    let version: Option<i64> = t
        .optional(sql, args![app])
        .await?
        .map(|r| r.get(0))
        .transpose()?;
    Ok(version.unwrap_or(0) as u64)
}

/// Makes what a new app `id` has before any declare: the platform's
/// components.
pub(crate) async fn make_app(t: &impl Tables, id: i64) -> Result<(), StoreError> {
    for c in platform_components() {
        add_component(t, id, &c.name, &c.columns).await?;
    }
    Ok(())
}

/// Creates or extends what the vocabulary of the app `app`, of row id
/// `id`, needs ([`declared`]).
pub(crate) async fn declare(
    t: &impl Tables,
    app: &str,
    id: i64,
    vocab: &Vocabulary,
) -> Result<(), StoreError> {
    let current = load_known(t, app, id).await?;
    for change in declared(&current, vocab) {
        match change {
            Declared::Component(name, columns) => add_component(t, id, name, columns).await?,
            Declared::Column(name, column, ty) => {
                add_to_catalog(t, id, name, column, ty).await?;
                create_column(t, id, name, column, ty).await?;
            }
            Declared::Retype(name, column, old, ty) => {
                let table = AppSchema::table(id, name);
                let holds =
                    format!("SELECT EXISTS(SELECT 1 FROM {table} WHERE \"{column}\" IS NOT NULL)");
                if t.one(&holds, &[]).await?.get::<bool>(0)? {
                    return Err(holds_values(name, column, old));
                }
                let index = AppSchema::index(id, name, column);
                t.batch(&format!(
                    "DROP INDEX IF EXISTS {index};
                     ALTER TABLE {table} DROP COLUMN \"{column}\";"
                ))
                .await?;
                create_column(t, id, name, column, ty).await?;
                let sql = "UPDATE ec_columns SET type = $1 WHERE app = $2 AND component = $3 AND name = $4";
                t.execute(sql, args![ty.as_str(), id, name, column]).await?;
            }
        }
    }
    Ok(())
}

/// Adds a component to app `id`'s catalog, at the next position, and makes
/// its tables. (`$n` stand in the order of their first use, so SQLite,
/// which reads `$1` as a name, binds them by position too.)
async fn add_component(
    t: &impl Tables,
    id: i64,
    name: &str,
    columns: &[(String, ColumnType)],
) -> Result<(), StoreError> {
    let sql = "INSERT INTO ec_components(app, name, position)
        VALUES($1, $2, (SELECT COUNT(*) FROM ec_components WHERE app = $1))";
    t.execute(sql, args![id, name]).await?;
    for (column, ty) in columns {
        add_to_catalog(t, id, name, column, *ty).await?;
    }
    create_tables_of(t, id, name, columns).await
}

/// Adds a column to app `id`'s catalog, at the next position.
async fn add_to_catalog(
    t: &impl Txn,
    id: i64,
    component: &str,
    column: &str,
    ty: ColumnType,
) -> Result<(), StoreError> {
    let sql = "INSERT INTO ec_columns(app, component, name, type, position)
        VALUES($1, $2, $3, $4, (SELECT COUNT(*) FROM ec_columns WHERE app = $1))";
    t.execute(sql, args![id, component, column, ty.as_str()])
        .await?;
    Ok(())
}

/// Creates the tables, columns and indexes of an app whose catalog rows are
/// already written (`shed migrate` copies them from SQLite): what declaring
/// it component by component would have made.
pub(crate) async fn create_tables(t: &impl Tables, schema: &AppSchema) -> Result<(), StoreError> {
    let id = schema
        .id
        .ok_or_else(|| StoreError::Internal(format!("the app {} has no id", schema.name)))?;
    for component in &schema.components {
        create_tables_of(t, id, &component.name, &component.columns).await?;
    }
    Ok(())
}

/// Makes app `id`'s table of `component` with its columns, and with
/// `doc`'s the app's full text.
async fn create_tables_of<T: Tables>(
    t: &T,
    id: i64,
    component: &str,
    columns: &[(String, ColumnType)],
) -> Result<(), StoreError> {
    create_table(t, id, component).await?;
    for (column, ty) in columns {
        create_column(t, id, component, column, *ty).await?;
    }
    if component == "doc" {
        t.batch(&T::full_text(id)).await?;
    }
    Ok(())
}

/// Creates app `id`'s table of `component`, with no column but its key.
/// `component` must be a checked word.
pub(crate) async fn create_table<T: Tables>(
    t: &T,
    id: i64,
    component: &str,
) -> Result<(), StoreError> {
    let table = AppSchema::table(id, component);
    let key = T::KEY;
    t.batch(&format!(
        "CREATE TABLE {table}(id {key} PRIMARY KEY REFERENCES ec_entities(id))"
    ))
    .await
}

/// Adds `column` to app `id`'s table of `component`, with its index where
/// the component's columns have one ([`indexed`]). Both names must be
/// checked words.
pub(crate) async fn create_column<T: Tables>(
    t: &T,
    id: i64,
    component: &str,
    column: &str,
    ty: ColumnType,
) -> Result<(), StoreError> {
    let table = AppSchema::table(id, component);
    let sql_type = T::column_type(ty);
    t.batch(&format!(
        "ALTER TABLE {table} ADD COLUMN \"{column}\" {sql_type}"
    ))
    .await?;
    if indexed(component) {
        let index = AppSchema::index(id, component, column);
        let on = T::index_on(column, ty);
        t.batch(&format!("CREATE INDEX {index} ON {table}{on}"))
            .await?;
    }
    Ok(())
}

/// The catalog cache readers use; the writer always reads its own transaction.
#[derive(Default)]
pub(crate) struct Schemas {
    /// (generation, cache): a load that raced a change is not kept.
    cache: Mutex<(u64, HashMap<String, Arc<AppSchema>>)>,
}

impl Schemas {
    /// The app's catalog from the cache, or else the generation the cache
    /// is at (`None` when it cannot be read).
    pub(crate) fn cached(&self, app: &str) -> Result<Arc<AppSchema>, Option<u64>> {
        match self.cache.lock() {
            Ok(cache) => match cache.1.get(app) {
                Some(s) => Ok(s.clone()),
                None => Err(Some(cache.0)),
            },
            Err(_) => Err(None),
        }
    }

    /// The app's catalog from the cache, or else read with `t` and kept —
    /// unless a change came meanwhile (the generation moved).
    pub(crate) async fn read(&self, t: &impl Txn, app: &str) -> Result<Arc<AppSchema>, StoreError> {
        let generation = match self.cached(app) {
            Ok(schema) => return Ok(schema),
            Err(generation) => generation,
        };
        let schema = Arc::new(load(t, app).await?);
        if let Ok(mut cache) = self.cache.lock()
            && Some(cache.0) == generation
        {
            cache.1.insert(schema.name.clone(), schema.clone());
        }
        Ok(schema)
    }

    /// Drops what the cache holds for an app whose catalog may have changed.
    pub(crate) fn forget(&self, app: &str) {
        if let Ok(mut cache) = self.cache.lock() {
            cache.0 += 1;
            cache.1.remove(app);
        }
    }
}

/// `jeff/Runs is not an app name — …`
pub(crate) fn check_app_name(app: &str) -> Result<(), StoreError> {
    if is_app_name(app) {
        Ok(())
    } else {
        Err(StoreError::refused(format!(
            "{app} is not an app name — an app is <space>/<slug>, like jeff/runs"
        )))
    }
}

/// `doc`'s title and body are searched through the app's full-text table;
/// every other column has an index of its own.
pub(crate) fn indexed(component: &str) -> bool {
    component != "doc"
}

/// Checks a vocabulary's names before anything is created.
pub(crate) fn check_vocabulary(vocab: &Vocabulary) -> Result<(), StoreError> {
    let platform = platform_components();
    for (i, (name, columns)) in vocab.components.iter().enumerate() {
        if !is_word(name) {
            return Err(StoreError::refused(format!(
                "{name} is not a component name — use a-z, 0-9 and _, starting with a letter, up to 40 characters"
            )));
        }
        if RESERVED.contains(&name.as_str()) {
            return Err(StoreError::refused(format!(
                "{name} is a word the store uses itself — name the component otherwise"
            )));
        }
        if vocab.components[..i].iter().any(|(n, _)| n == name) {
            return Err(StoreError::refused(format!(
                "{name} is declared twice — declare each component once"
            )));
        }
        if let Some(p) = platform.iter().find(|p| &p.name == name)
            && !columns.iter().all(|(c, t)| p.column(c) == Some(*t))
        {
            let has: Vec<String> = p
                .columns
                .iter()
                .map(|(c, t)| format!("{c}: {}", t.as_str()))
                .collect();
            return Err(StoreError::refused(format!(
                "{name} is the platform's own component ({}) — name yours otherwise",
                has.join(", ")
            )));
        }
        for (j, (column, _)) in columns.iter().enumerate() {
            if !is_word(column) {
                return Err(StoreError::refused(format!(
                    "{name}.{column} is not a column name — use a-z, 0-9 and _, starting with a letter, up to 40 characters"
                )));
            }
            if STORE_COLUMNS.contains(&column.as_str()) {
                return Err(StoreError::refused(format!(
                    "{name}.{column} is kept by the store on every row — name the column otherwise"
                )));
            }
            if columns[..j].iter().any(|(c, _)| c == column) {
                return Err(StoreError::refused(format!(
                    "{name}.{column} is declared twice — declare each column once"
                )));
            }
        }
    }
    Ok(())
}
