//! The jobs table on SQLite and its migrations (the shapes and names:
//! `src/jobs.rs`; the statements, written once: `src/records/jobs.rs`).

use rusqlite::{Transaction, params};

use crate::StoreError;
use crate::jobs::name_of;

/// The table as migration 3 made it: the secret itself as the key.
pub(crate) const MIGRATION: &str = r#"
    CREATE TABLE jobs(
        id TEXT PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        allow TEXT NOT NULL,
        read_only TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        ended_at INTEGER
    ) WITHOUT ROWID;
    CREATE INDEX jobs_created ON jobs(created_at);
"#;

/// Migration 7's table: a number (the name's `n`, never reused) and the
/// secret's hash.
const NAMED_JOBS: &str = r#"
    ALTER TABLE jobs RENAME TO jobs_keyed_by_secret;
    DROP INDEX jobs_created;
    CREATE TABLE jobs(
        num INTEGER PRIMARY KEY AUTOINCREMENT,
        secret_hash TEXT NOT NULL UNIQUE,
        person TEXT NOT NULL REFERENCES people(eid),
        allow TEXT NOT NULL,
        read_only TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        ended_at INTEGER
    );
"#;

/// Migration 7: every job gets its public name and keeps only its secret's
/// hash. Jobs kept before are named in the order they were made (`job-1`
/// the oldest) and their secrets keep working, since their hash is kept;
/// every row, history entry and listed-tools key that named one by its
/// secret (`agent:<secret>`) is rewritten to its name. Run with
/// `secure_delete` on (see `migrations::migrate`), so the secrets' old bytes
/// are zeroed, not left in free pages.
pub(crate) fn name_jobs(tx: &Transaction<'_>) -> Result<(), StoreError> {
    tx.execute_batch(NAMED_JOBS)?;
    // The secrets, oldest job first: each job's number is its place.
    let secrets: Vec<String> = {
        let mut stmt = tx.prepare("SELECT id FROM jobs_keyed_by_secret ORDER BY created_at, id")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        rows.collect::<Result<_, _>>()?
    };
    // Old names to new, in memory only (the connection keeps temporary
    // tables in memory), so no secret is written anywhere on the way.
    tx.execute_batch("CREATE TEMP TABLE renamed_agents(old TEXT PRIMARY KEY, new TEXT NOT NULL);")?;
    for secret in secrets {
        tx.execute(
            "INSERT INTO jobs(secret_hash, person, allow, read_only, created_at, expires_at, ended_at)
             SELECT ?1, person, allow, read_only, created_at, expires_at, ended_at
             FROM jobs_keyed_by_secret WHERE id = ?2",
            params![crate::secret_hash(&secret), secret],
        )?;
        tx.execute(
            "INSERT INTO renamed_agents(old, new) VALUES(?1, ?2)",
            params![
                format!("agent:{secret}"),
                format!("agent:{}", name_of(tx.last_insert_rowid()))
            ],
        )?;
    }
    // One pass over each column that can name an agent.
    tx.execute_batch(
        "UPDATE ec_entities SET created_via = r.new FROM renamed_agents r
             WHERE ec_entities.created_via = r.old;
         UPDATE ec_entities SET updated_via = r.new FROM renamed_agents r
             WHERE ec_entities.updated_via = r.old;
         UPDATE ec_history SET via = r.new FROM renamed_agents r
             WHERE ec_history.via = r.old;
         UPDATE listed_tools SET caller = r.new FROM renamed_agents r
             WHERE listed_tools.caller = r.old;
         DROP TABLE renamed_agents;
         DROP TABLE jobs_keyed_by_secret;
         CREATE INDEX jobs_created ON jobs(created_at);",
    )?;
    Ok(())
}
