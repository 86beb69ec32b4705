//! The versioned schema of the store's database, applied in order at open
//! inside one transaction and recorded in `schema_migrations`. Entries are
//! only ever appended: the platform's own tables (spaces, members, apps,
//! deploys, tokens, jobs) come after the store's. Most are SQL; one that
//! must compute what SQL cannot (a secret's hash) is a Rust step.

use rusqlite::{Connection, Transaction};

use crate::{NotReady, StoreError};

/// One migration: SQL, or a step over the migration's transaction.
pub(crate) enum Migration {
    Sql(&'static str),
    Step(fn(&Transaction<'_>) -> Result<(), StoreError>),
}

use Migration::{Sql, Step};

/// Every migration, in order; entry `i` is schema version `i + 1`.
pub(crate) const MIGRATIONS: &[Migration] = &[
    // 1: people, and the entity–component catalog shared by every app.
    // Each app's component tables (`ec_<app id>_<component>`) and its doc
    // full-text table are created at declare or first use, not here.
    Sql(r#"
    CREATE TABLE people(
        eid TEXT PRIMARY KEY,
        handle TEXT UNIQUE NOT NULL,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE ec_apps(
        id INTEGER PRIMARY KEY,
        name TEXT UNIQUE NOT NULL,
        version INTEGER NOT NULL DEFAULT 0,
        last_num INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE ec_columns(
        app INTEGER NOT NULL REFERENCES ec_apps(id),
        component TEXT NOT NULL,
        name TEXT NOT NULL,
        type TEXT NOT NULL,
        position INTEGER NOT NULL,
        PRIMARY KEY(app, component, name)
    );
    CREATE TABLE ec_components(
        app INTEGER NOT NULL REFERENCES ec_apps(id),
        name TEXT NOT NULL,
        position INTEGER NOT NULL,
        PRIMARY KEY(app, name)
    );
    CREATE TABLE ec_entities(
        id INTEGER PRIMARY KEY,
        app INTEGER NOT NULL REFERENCES ec_apps(id),
        eid TEXT NOT NULL,
        num INTEGER NOT NULL,
        version INTEGER NOT NULL,
        alias TEXT,
        created_at INTEGER NOT NULL,
        created_by TEXT NOT NULL,
        created_via TEXT,
        updated_at INTEGER NOT NULL,
        updated_by TEXT NOT NULL,
        updated_via TEXT,
        tombstoned INTEGER NOT NULL DEFAULT 0,
        UNIQUE(app, eid)
    );
    CREATE UNIQUE INDEX ec_entities_alias ON ec_entities(app, alias) WHERE alias IS NOT NULL;
    CREATE TABLE ec_edges(
        src INTEGER NOT NULL REFERENCES ec_entities(id),
        rel TEXT NOT NULL,
        dst TEXT NOT NULL,
        PRIMARY KEY(src, rel, dst)
    ) WITHOUT ROWID;
    CREATE INDEX ec_edges_to ON ec_edges(rel, dst);
    CREATE TABLE ec_history(
        entity INTEGER NOT NULL REFERENCES ec_entities(id),
        app_version INTEGER NOT NULL,
        step INTEGER NOT NULL,
        version INTEGER NOT NULL,
        at INTEGER NOT NULL,
        by TEXT NOT NULL,
        via TEXT,
        change TEXT NOT NULL,
        PRIMARY KEY(entity, app_version, step)
    ) WITHOUT ROWID;
    "#),
    // 2: the platform's own tables: spaces, members, apps, deploys and their
    // files, drafts, tokens, listed tool fingerprints (sqlite/platform.rs).
    Sql(super::platform::MIGRATION),
    // 3: jobs, the agents' runs the broker holds (sqlite/jobs.rs).
    Sql(super::jobs::MIGRATION),
    // 4: the web's sign-in links, hops and sessions (sqlite/sessions.rs).
    Sql(super::sessions::MIGRATION),
    // 5: hops bound to the browser that pressed the sign-in button (sqlite/sessions.rs).
    Sql(super::sessions::BOUND_HOPS_MIGRATION),
    // 6: the keys that let a view load its private app's files (sqlite/view_keys.rs).
    Sql(super::view_keys::MIGRATION),
    // 7: a job's public name, and only its secret's hash kept; rows that
    // named an agent by the secret name it by the name (sqlite/jobs.rs).
    Step(super::jobs::name_jobs),
    // 8: tokens named, expiring and revoked; removed people (sqlite/revocable.rs).
    Sql(super::revocable::MIGRATION),
    // 9: OAuth clients, codes and grants; a token's grant and resource (sqlite/oauth.rs).
    Sql(super::oauth::MIGRATION),
    // 10: an app's versions rolled back, its trash and its purges; the
    // public URL a server serves at (sqlite/lifecycle.rs).
    Sql(super::lifecycle::MIGRATION),
    // 11: sessions a person can tell apart: the sign-in each belongs to,
    // the browser, when made and last seen (sqlite/sessions.rs).
    Sql(super::sessions::SESSIONS_SEEN_MIGRATION),
    // 12: passkeys and their ceremonies' states (sqlite/passkeys.rs).
    Sql(super::passkeys::MIGRATION),
    // 13: where a ceremony was started from, so live sign-ins are capped
    // per address (sqlite/passkeys.rs).
    Sql(super::passkeys::ADDRESS_MIGRATION),
];

/// Whether every migration this program knows is applied to the database
/// `conn` is open on: a sentence saying how far it is when not.
pub(crate) fn applied(conn: &Connection) -> Result<(), NotReady> {
    let done: i64 = conn
        .prepare_cached("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")
        .and_then(|mut stmt| stmt.query_row([], |r| r.get(0)))
        .map_err(|e| NotReady(format!("the database does not answer: {e}")))?;
    if done as usize == MIGRATIONS.len() {
        return Ok(());
    }
    Err(NotReady::behind(done, MIGRATIONS.len()))
}

/// Brings the database up to the last migration, all in one transaction.
/// While it runs, `secure_delete` is on, so what a migration deletes or
/// overwrites (a job's secret, say) is zeroed rather than left in free
/// space; once it has applied any, the WAL is checkpointed into the
/// database and emptied, so the old pages are gone from both files.
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    conn.execute_batch("PRAGMA secure_delete = ON;")?;
    let applied = apply_pending(conn);
    conn.execute_batch("PRAGMA secure_delete = OFF;")?;
    if applied? > 0 {
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")?;
    }
    Ok(())
}

/// The table the migrations applied are recorded in.
const RECORD_TABLE: &str = "CREATE TABLE IF NOT EXISTS schema_migrations(
            version INTEGER PRIMARY KEY,
            applied_at TEXT NOT NULL
        )";

impl Migration {
    /// Runs this migration in `tx` and records it as schema version `version`.
    fn apply(&self, tx: &Transaction<'_>, version: usize) -> Result<(), StoreError> {
        match self {
            Sql(sql) => tx.execute_batch(sql)?,
            Step(step) => step(tx)?,
        }
        tx.execute(
            "INSERT INTO schema_migrations(version, applied_at) VALUES(?1, ?2)",
            rusqlite::params![version as i64, crate::records::now()],
        )?;
        Ok(())
    }
}

/// A new database in memory holding what migrations 1 to `version` make,
/// and nothing else: what a database of that schema version is made of
/// before any app declares its tables.
pub(crate) fn schema_at(version: usize) -> Result<Connection, StoreError> {
    let mut conn = Connection::open_in_memory()?;
    let tx = conn.transaction()?;
    tx.execute_batch(RECORD_TABLE)?;
    for (i, migration) in MIGRATIONS.iter().enumerate().take(version) {
        migration.apply(&tx, i + 1)?;
    }
    tx.commit()?;
    Ok(conn)
}

/// Applies every migration not yet applied; answers how many it applied.
fn apply_pending(conn: &mut Connection) -> Result<usize, StoreError> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    tx.execute_batch(RECORD_TABLE)?;
    let done: i64 = tx.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
        [],
        |r| r.get(0),
    )?;
    if done as usize > MIGRATIONS.len() {
        return Err(StoreError::Internal(format!(
            "the database is at schema version {done}, newer than this program knows ({}) — run a newer shed",
            MIGRATIONS.len()
        )));
    }
    for (i, migration) in MIGRATIONS.iter().enumerate().skip(done as usize) {
        migration.apply(&tx, i + 1)?;
        tracing::debug!(version = i + 1, "applied store migration");
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
    use super::{MIGRATIONS, Migration, schema_at};
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
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode=WAL;
             CREATE TABLE schema_migrations(version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL);",
        )
        .unwrap();
        for (i, migration) in MIGRATIONS[..6].iter().enumerate() {
            let Migration::Sql(sql) = migration else {
                panic!("migrations 1 to 6 are SQL");
            };
            conn.execute_batch(sql).unwrap();
            conn.execute(
                "INSERT INTO schema_migrations(version, applied_at) VALUES(?1, 'then')",
                [i as i64 + 1],
            )
            .unwrap();
        }
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
