//! Applies the store's migrations (written once for both backends:
//! `src/migrations.rs`) to a SQLite database, in order at open inside one
//! transaction, and records them in `schema_migrations`.

use rusqlite::{Connection, Transaction};

use super::txn::Txn;
pub(crate) use crate::migrations::MIGRATIONS;
use crate::migrations::{Part, RECORD_TABLE, convert_some, on_sqlite, pending};
use crate::query::at_once;
use crate::{NotReady, StoreError};

/// Whether every migration this program knows is applied to the database
/// `conn` is open on: a sentence saying how far it is when not.
pub(crate) fn applied(conn: &Connection) -> Result<(), NotReady> {
    let done = version(conn).map_err(|e| NotReady(format!("the database does not answer: {e}")))?;
    crate::migrations::all_applied(done)
}

/// The schema version the database is at: the last migration recorded.
fn version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.prepare_cached("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")?
        .query_row([], |r| r.get(0))
}

/// Brings the database up to the last migration, all in one transaction.
/// While it runs, `secure_delete` is on, so what a migration deletes or
/// overwrites (a job's secret, say) is zeroed rather than left in free
/// space; once it has applied any, the WAL is checkpointed into the
/// database and emptied, so the old pages are gone from both files.
///
/// Then the apps a store made before migration 17 keeps in tables of their
/// own are converted, a transaction at a time (`migrations/convert.rs`).
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    conn.execute_batch("PRAGMA secure_delete = ON;")?;
    let applied = apply_pending(conn);
    conn.execute_batch("PRAGMA secure_delete = OFF;")?;
    let changed = applied? + convert_per_app_tables(conn)?;
    if changed > 0 {
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")?;
    }
    Ok(())
}

/// Converts every app still in tables of its own, each batch in a
/// transaction of its own ([`convert_some`]): how many it converted.
fn convert_per_app_tables(conn: &mut Connection) -> Result<usize, StoreError> {
    let mut converted = 0;
    loop {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let tables: Vec<String> = tx
            .prepare(
                "SELECT name FROM sqlite_schema WHERE type = 'table' AND name GLOB 'ec_[0-9]*'",
            )?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let done = at_once(convert_some(&Txn(&tx), &tables))?;
        tx.commit()?;
        if done == 0 {
            return Ok(converted);
        }
        converted += done;
    }
}

/// Runs the migration `parts` in `tx` and records it as schema version
/// `version`.
fn apply(tx: &Transaction<'_>, parts: &[Part], version: usize) -> Result<(), StoreError> {
    on_sqlite(tx, parts)?;
    tx.execute(
        "INSERT INTO schema_migrations(version, applied_at) VALUES(?1, ?2)",
        rusqlite::params![version as i64, crate::records::now()],
    )?;
    Ok(())
}

/// A new database in memory holding what migrations 1 to `version` make,
/// and nothing else: what a database of that schema version is made of
/// before any app declares its tables.
pub(crate) fn schema_at(version: usize) -> Result<Connection, StoreError> {
    let mut conn = Connection::open_in_memory()?;
    let tx = conn.transaction()?;
    on_sqlite(&tx, RECORD_TABLE)?;
    for (i, parts) in MIGRATIONS.iter().enumerate().take(version) {
        apply(&tx, parts, i + 1)?;
    }
    tx.commit()?;
    Ok(conn)
}

/// Makes a new database file at `path` holding what migrations 1 to
/// `version` make, each recorded, and nothing else; in WAL mode, as a
/// store's file is. For the tests of upgrading a store made by an older
/// shed ([`crate::at_schema_version`]).
pub fn make_file_at(path: &std::path::Path, version: usize) -> Result<(), StoreError> {
    schema_at(version)?.backup(
        rusqlite::MAIN_DB,
        path,
        None::<fn(rusqlite::backup::Progress)>,
    )?;
    Connection::open(path)?.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))?;
    Ok(())
}

/// Applies every migration not yet applied; answers how many it applied.
fn apply_pending(conn: &mut Connection) -> Result<usize, StoreError> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    on_sqlite(&tx, RECORD_TABLE)?;
    let done = version(&tx)?;
    let pending =
        pending(done).map_err(|why| StoreError::Internal(format!("the database {why}")))?;
    for (version, parts) in pending {
        apply(&tx, parts, version)?;
        tracing::debug!(version, "applied store migration");
    }
    tx.commit()?;
    crate::migrations::log_applied(done as usize, MIGRATIONS.len());
    Ok(MIGRATIONS.len() - done as usize)
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use std::sync::Arc;

    use super::super::Sqlite;
    use super::{MIGRATIONS, schema_at};
    use crate::jobs::version_6;
    use crate::migrations::history::{self, Objects};
    use crate::records::Jobs;

    /// What `conn`'s catalog holds: each object's SQL exactly as SQLite
    /// keeps it (a backup's is compared with it byte for byte).
    fn objects(conn: &Connection) -> Objects {
        let sql = "SELECT type, name, tbl_name, sql FROM sqlite_master";
        let mut stmt = conn.prepare(sql).unwrap();
        let rows = stmt.query_map([], |r| {
            let (kind, name, table): (String, String, String) = (r.get(0)?, r.get(1)?, r.get(2)?);
            let sql: Option<String> = r.get(3)?;
            Ok((
                format!("{kind} {name} on {table}"),
                sql.unwrap_or_else(|| "(made by SQLite)".into()),
            ))
        });
        rows.unwrap().collect::<Result<_, _>>().unwrap()
    }

    // Every schema version makes, to the byte, what the code that made the
    // databases out there made (`tests/schema/sqlite.txt`).
    #[test]
    fn each_version_makes_the_schema_checked_in() {
        let versions: Vec<Objects> = (0..=MIGRATIONS.len())
            .map(|version| objects(&schema_at(version).unwrap()))
            .collect();
        history::check("sqlite.txt", &versions);
    }

    /// A database as shed left it before jobs had names (schema version 6,
    /// holding [`version_6::rows`]).
    fn a_database_of_version_6(path: &std::path::Path) {
        super::make_file_at(path, 6).unwrap();
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(&version_6::rows()).unwrap();
    }

    // Migration 7: jobs kept before are named in the order they were made,
    // their secrets keep working (their hash is kept), and no byte of either
    // secret is left in the database's files.
    #[tokio::test]
    async fn jobs_kept_before_get_names_and_the_files_forget_their_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shed.db");
        let (older, newer) = (version_6::OLDER, version_6::NEWER);
        a_database_of_version_6(&path);

        let store = Arc::new(Sqlite::open(&path).await.unwrap());
        let jobs = store.jobs().await.unwrap();
        assert_eq!(jobs, version_6::jobs());
        let found = |secret: &str| {
            let store = store.clone();
            let hash = crate::secret_hash(secret);
            async move {
                store
                    .job_by_secret_hash(&hash)
                    .await
                    .unwrap()
                    .map(|j| j.name)
            }
        };
        assert_eq!(found(older).await.as_deref(), Some("job-1"));
        assert_eq!(found(newer).await.as_deref(), Some("job-2"));
        // A new job counts on from the old ones.
        let next = store
            .add_job(crate::secret_hash("s3"), jobs[0].terms.clone())
            .await
            .unwrap();
        assert_eq!(next.name, "job-3");
        store
            .read(|conn| {
                let stamps: (String, String) = conn.query_row(
                    "SELECT created_via, updated_via FROM ec_entities WHERE eid = 'e1'",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )?;
                assert_eq!((stamps.0.as_str(), stamps.1.as_str()), version_6::STAMPS);
                let vias: Vec<Option<String>> = conn
                    .prepare("SELECT via FROM ec_history ORDER BY app_version")?
                    .query_map([], |r| r.get(0))?
                    .collect::<Result<_, _>>()?;
                assert_eq!(vias, version_6::vias());
                let callers: Vec<String> = conn
                    .prepare("SELECT caller FROM listed_tools ORDER BY caller")?
                    .query_map([], |r| r.get(0))?
                    .collect::<Result<_, _>>()?;
                assert_eq!(callers, version_6::CALLERS);
                Ok(())
            })
            .await
            .unwrap();

        for file in crate::private::database_files(&path) {
            let bytes = std::fs::read(&file).unwrap_or_default();
            for secret in [older, newer] {
                assert!(
                    !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                    "{} still holds the secret {secret}",
                    file.display()
                );
            }
        }
    }
}
