//! After migration 17: the apps a store made before it keeps in tables of
//! their own (`ec_<app id>_<component>`, and on SQLite the app's FTS5
//! table `ec_<app id>__fts`) brought into the shared layout, written once
//! for both backends over the store's `Tables`. Each backend runs
//! [`convert_some`] in transactions of its own after its migrations, at
//! every start, until no app is left to convert (`sqlite/migrations.rs`,
//! `postgres/migrations.rs`); a store opens only once none is.
//!
//! An app is converted whole in one transaction — its catalog placed as a
//! declare places a new app's (the layout's own [`schema::make_app`] and
//! [`schema::declare`], so its groups and slots are what a deploy of the
//! same vocabulary makes), each component's rows copied into its shape
//! table, its full text into the shared `ec_fts`, its tables dropped — so
//! an app is either all in its tables or all in the layout, and whether
//! it is still to convert is read from the tables the database holds.
//! A kill at any moment leaves converted apps converted and the rest as
//! they were; the next start converts the rest. Several transactions, not
//! the migration's one: dropping an app's tables locks each table, index
//! and TOAST table of it (about 25 for the run club) until the commit, and
//! PostgreSQL's lock table holds `max_locks_per_transaction` × connections
//! (6,400 by default) — a few hundred apps in one transaction would fail.

use crate::query::sql::app_words;
use crate::schema::{self, Tables};
use crate::txn::{Txn, args};
use crate::{ColumnType, StoreError, Vocabulary};

/// Apps converted in one transaction at most: a batch takes about 25 locks
/// an app on PostgreSQL (see the module's doc), well inside the lock table
/// of a server's defaults, and a kill loses at most this much work.
pub const CONVERT_APPS_PER_TRANSACTION: usize = 50;

/// The id of the app a table of its own belongs to (`ec_<app id>_…`), for
/// a table made before migration 17; `None` for any other table.
pub(crate) fn per_app_table(name: &str) -> Option<i64> {
    let (id, _) = name.strip_prefix("ec_")?.split_once('_')?;
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    id.parse().ok()
}

/// Converts up to [`CONVERT_APPS_PER_TRANSACTION`] of the apps whose
/// tables are among `tables` (every table the database holds, as its
/// catalog names them), in `t`'s transaction: how many it converted (0:
/// none is left).
pub(crate) async fn convert_some<T: Tables>(t: &T, tables: &[String]) -> Result<usize, StoreError> {
    let mut apps: Vec<i64> = tables.iter().filter_map(|t| per_app_table(t)).collect();
    apps.sort_unstable();
    apps.dedup();
    let left = apps.len().saturating_sub(CONVERT_APPS_PER_TRANSACTION);
    apps.truncate(CONVERT_APPS_PER_TRANSACTION);
    for &app in &apps {
        convert_app(t, app, tables).await?;
    }
    if !apps.is_empty() {
        tracing::info!(
            apps = apps.len(),
            left,
            "moving apps from tables of their own into the shared layout"
        );
    }
    Ok(apps.len())
}

/// Converts app `id`: its catalog placed anew, its rows and full text
/// copied into the shared tables, its tables dropped.
async fn convert_app<T: Tables>(t: &T, id: i64, tables: &[String]) -> Result<(), StoreError> {
    let stray = |table: &str| {
        StoreError::refused(format!(
            "the database holds {table}, a table shed did not make — remove it, then start shed again"
        ))
    };
    let own: Vec<&String> = tables
        .iter()
        .filter(|table| per_app_table(table) == Some(id))
        .collect();
    let Some(row) = t
        .optional("SELECT name FROM ec_apps WHERE id = $1", args![id])
        .await?
    else {
        return Err(stray(own[0]));
    };
    let name: String = row.get(0)?;
    let placed = "SELECT 1 FROM ec_groups WHERE app = $1";
    if t.optional(placed, args![id]).await?.is_some() {
        return Err(stray(own[0]));
    }
    let vocabulary = old_vocabulary(t, id).await?;
    for (component, _) in &vocabulary.components {
        let table = format!("ec_{id}_{component}");
        if !own.contains(&&table) {
            return Err(StoreError::Internal(format!(
                "the catalog of {name} names the component {component}, whose table {table} is not there"
            )));
        }
    }
    // Placed as a new app is: the platform's components, then the rest.
    t.execute("DELETE FROM ec_columns WHERE app = $1", args![id])
        .await?;
    t.execute("DELETE FROM ec_components WHERE app = $1", args![id])
        .await?;
    schema::make_app(t, id).await?;
    schema::declare(t, &name, id, &vocabulary).await?;
    let placed = schema::load_known(t, &name, id).await?;
    for (name, _) in &vocabulary.components {
        let component = placed
            .component(name)
            .ok_or_else(|| StoreError::Internal(format!("the component {name} was not placed")))?;
        let old = format!("\"ec_{id}_{name}\"");
        for (g, group) in component.groups.iter().enumerate() {
            let columns: Vec<(&str, &str)> = component
                .columns
                .iter()
                .zip(&component.places)
                .filter(|(_, place)| place.group == g)
                .map(|((column, _), place)| (column.as_str(), place.slot.as_str()))
                .collect();
            // The home group's row says the entity wears the component; a
            // later group's is there where one of its columns holds a value.
            let worn = match g {
                0 => String::new(),
                _ if columns.is_empty() => continue,
                _ => {
                    let held: Vec<String> = columns
                        .iter()
                        .map(|(c, _)| format!("\"{c}\" IS NOT NULL"))
                        .collect();
                    format!(" WHERE {}", held.join(" OR "))
                }
            };
            let slots: String = columns.iter().map(|(_, s)| format!(", {s}")).collect();
            let values: String = columns.iter().map(|(c, _)| format!(", \"{c}\"")).collect();
            // Run unprepared, its ids written in: a statement of one app's
            // table runs once, and a pool connection would keep for good
            // what it prepares.
            t.batch(&format!(
                "INSERT INTO {}(grp, id{slots}) SELECT {}, id{values} FROM {old}{worn}",
                group.table(),
                group.id
            ))
            .await?;
        }
    }
    copy_full_text(t, id).await?;
    for (component, _) in &vocabulary.components {
        t.batch(&format!("DROP TABLE \"ec_{id}_{component}\""))
            .await?;
    }
    if T::FTS_TABLE {
        t.batch(&format!("DROP TABLE \"ec_{id}__fts\"")).await?;
    }
    Ok(())
}

/// App `id`'s components and columns as its catalog of before migration 17
/// holds them, each in its position's order (a column re-typed keeps its
/// place and has its new type).
async fn old_vocabulary(t: &impl Txn, id: i64) -> Result<Vocabulary, StoreError> {
    let sql = "SELECT name FROM ec_components WHERE app = $1 ORDER BY position";
    let mut components: Vec<(String, Vec<(String, ColumnType)>)> = t
        .all(sql, args![id])
        .await?
        .iter()
        .map(|r| Ok((r.get(0)?, Vec::new())))
        .collect::<Result<_, StoreError>>()?;
    let sql = "SELECT component, name, type FROM ec_columns WHERE app = $1 ORDER BY position";
    for r in t.all(sql, args![id]).await? {
        let (component, column, ty): (String, String, String) = (r.get(0)?, r.get(1)?, r.get(2)?);
        let ty = ColumnType::from_word(&ty).ok_or_else(|| {
            StoreError::Internal(format!("unknown column type {ty} in the catalog"))
        })?;
        if let Some((_, columns)) = components.iter_mut().find(|(c, _)| *c == component) {
            columns.push((column, ty));
        }
    }
    Ok(Vocabulary { components })
}

/// Copies app `id`'s full text into the shared `ec_fts` as its table of
/// before held it: on SQLite its FTS5 table's entries (live entities with
/// a doc), each word marked as the app's ([`app_words`]); on PostgreSQL its
/// doc table's generated `tsvector`s.
async fn copy_full_text<T: Tables>(t: &T, id: i64) -> Result<(), StoreError> {
    if !T::FTS_TABLE {
        return t
            .batch(&format!(
                "INSERT INTO ec_fts(app, id, fts) SELECT {id}, id, fts FROM \"ec_{id}_doc\""
            ))
            .await;
    }
    // SQLite keeps a few prepared statements (rusqlite's cache is bounded).
    let sql = format!("SELECT rowid, title, body FROM \"ec_{id}__fts\"");
    for r in t.all(&sql, &[]).await? {
        let words = |text: Option<String>| text.map(|text| app_words(id, &text));
        let (entity, title, body): (i64, Option<String>, Option<String>) =
            (r.get(0)?, r.get(1)?, r.get(2)?);
        t.execute(
            "INSERT INTO ec_fts(rowid, title, body) VALUES($1, $2, $3)",
            args![entity, words(title), words(body)],
        )
        .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::per_app_table;

    #[test]
    fn per_app_tables_are_told_apart() {
        assert_eq!(per_app_table("ec_12_jog"), Some(12));
        assert_eq!(per_app_table("ec_3__fts"), Some(3));
        assert_eq!(per_app_table("ec_3__fts_data"), Some(3));
        assert_eq!(per_app_table("ec_rows_t1r0n0b0d0"), None);
        assert_eq!(per_app_table("ec_entities"), None);
        assert_eq!(per_app_table("ec_fts"), None);
        assert_eq!(per_app_table("ec__x"), None);
    }
}
