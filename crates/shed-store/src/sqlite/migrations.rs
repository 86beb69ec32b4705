//! The versioned schema of the store's database, applied in order at open
//! inside one transaction and recorded in `schema_migrations`. Entries are
//! only ever appended: the platform's own tables (spaces, members, apps,
//! deploys, tokens, jobs) come after the store's.

use rusqlite::Connection;

use crate::StoreError;

/// Every migration, in order; entry `i` is schema version `i + 1`.
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: people, and the entity–component catalog shared by every app.
    // Each app's component tables (`ec_<app id>_<component>`) and its doc
    // full-text table are created at declare or first use, not here.
    r#"
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
    "#,
    // 2: the platform's own tables: spaces, members, apps, deploys and their
    // files, drafts, tokens, listed tool fingerprints (sqlite/platform.rs).
    super::platform::MIGRATION,
    // 3: jobs, the agents' runs the broker holds (sqlite/jobs.rs).
    super::jobs::MIGRATION,
    // 4: the web's sign-in links, hops and sessions (sqlite/sessions.rs).
    super::sessions::MIGRATION,
    // 5: hops bound to the browser that pressed the sign-in button (sqlite/sessions.rs).
    super::sessions::BOUND_HOPS_MIGRATION,
    // 6: the keys that let a view load its private app's files (sqlite/view_keys.rs).
    super::view_keys::MIGRATION,
];

/// Brings the database up to the last migration, all in one transaction.
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    tx.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations(
            version INTEGER PRIMARY KEY,
            applied_at TEXT NOT NULL
        )",
    )?;
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
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(done as usize) {
        tx.execute_batch(sql)?;
        tx.execute(
            "INSERT INTO schema_migrations(version, applied_at) VALUES(?1, ?2)",
            rusqlite::params![i as i64 + 1, jiff::Timestamp::now().to_string()],
        )?;
        tracing::info!(version = i + 1, "applied store migration");
    }
    tx.commit()?;
    Ok(())
}
