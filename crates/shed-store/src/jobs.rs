//! Jobs: an agent's run for a person, as the broker of the host-command
//! protocol holds it — the person, the scope's globs (allowed and read-only),
//! when it was made, when it expires and when it was ended. Plain storage:
//! what a job may do is decided in shed-host and shed-broker.
//!
//! A job has two handles. Its **secret** (what `shed job create` prints and
//! an agent's requests carry) is kept only as its sha256
//! ([`crate::secret_hash`]); its **name**, `job-<n>` with `n` counting the
//! host's jobs from 1, is public: rows (`created.via = agent:job-3`),
//! answers, history and logs use it. The name is derived from nothing
//! secret, so reading a row tells nothing of the secret.
//!
//! Times are Unix milliseconds, written by the caller, so the store holds no
//! clock of its own for jobs.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::{Store, StoreError};

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

/// A job as the store keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRecord {
    /// The job's public name, `job-<n>`: what rows, answers and logs call it.
    pub name: String,
    /// The person the agent acts for (eid).
    pub person: String,
    /// Globs of the command names the job may list and run.
    pub allow: Vec<String>,
    /// Globs of the read commands the job may run read-only.
    pub read_only: Vec<String>,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Unix milliseconds; `None` never expires.
    pub expires_at: Option<i64>,
    /// Unix milliseconds; `None` while the job runs.
    pub ended_at: Option<i64>,
}

/// A job to keep: everything but its name, which the store gives it, and
/// its secret's hash in place of the secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewJob {
    /// The secret's hash ([`crate::secret_hash`]); the secret is never kept.
    pub secret_hash: String,
    pub person: String,
    pub allow: Vec<String>,
    pub read_only: Vec<String>,
    pub created_at: i64,
    pub expires_at: Option<i64>,
}

/// The public name of job number `num`.
fn name_of(num: i64) -> String {
    format!("job-{num}")
}

/// The number a public name stands for, if it is one (`job-3`, never
/// `job-03`).
fn num_of(name: &str) -> Option<i64> {
    let num: i64 = name.strip_prefix("job-")?.parse().ok()?;
    (num > 0 && name_of(num) == name).then_some(num)
}

const COLUMNS: &str = "num, person, allow, read_only, created_at, expires_at, ended_at FROM jobs";

fn globs(text: String) -> rusqlite::Result<Vec<String>> {
    serde_json::from_str(&text).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

fn record(r: &rusqlite::Row<'_>) -> rusqlite::Result<JobRecord> {
    Ok(JobRecord {
        name: name_of(r.get(0)?),
        person: r.get(1)?,
        allow: globs(r.get(2)?)?,
        read_only: globs(r.get(3)?)?,
        created_at: r.get(4)?,
        expires_at: r.get(5)?,
        ended_at: r.get(6)?,
    })
}

fn add(conn: &Connection, job: &NewJob) -> Result<JobRecord, StoreError> {
    let allow =
        serde_json::to_string(&job.allow).map_err(|e| StoreError::Internal(e.to_string()))?;
    let read_only =
        serde_json::to_string(&job.read_only).map_err(|e| StoreError::Internal(e.to_string()))?;
    conn.execute(
        "INSERT INTO jobs(secret_hash, person, allow, read_only, created_at, expires_at, ended_at)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, NULL)",
        params![
            job.secret_hash,
            job.person,
            allow,
            read_only,
            job.created_at,
            job.expires_at,
        ],
    )?;
    Ok(JobRecord {
        name: name_of(conn.last_insert_rowid()),
        person: job.person.clone(),
        allow: job.allow.clone(),
        read_only: job.read_only.clone(),
        created_at: job.created_at,
        expires_at: job.expires_at,
        ended_at: None,
    })
}

fn by_num(conn: &Connection, num: i64) -> Result<Option<JobRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!("SELECT {COLUMNS} WHERE num = ?1"))?;
    Ok(stmt.query_row([num], record).optional()?)
}

fn by_secret_hash(conn: &Connection, hash: &str) -> Result<Option<JobRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!("SELECT {COLUMNS} WHERE secret_hash = ?1"))?;
    Ok(stmt.query_row([hash], record).optional()?)
}

fn end(conn: &Connection, num: i64, at: i64) -> Result<Option<JobRecord>, StoreError> {
    conn.execute(
        "UPDATE jobs SET ended_at = ?2 WHERE num = ?1 AND ended_at IS NULL",
        params![num, at],
    )?;
    by_num(conn, num)
}

fn all(conn: &Connection) -> Result<Vec<JobRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!("SELECT {COLUMNS} ORDER BY num"))?;
    let rows = stmt.query_map([], record)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

impl Store {
    /// Keeps a new job (its person must exist) and answers it with its name.
    pub async fn add_job(&self, job: NewJob) -> Result<JobRecord, StoreError> {
        self.write(move |txn| add(txn, &job)).await
    }

    /// The job whose secret has this hash, if there is one.
    pub async fn job_by_secret_hash(&self, hash: &str) -> Result<Option<JobRecord>, StoreError> {
        self.read(|conn| by_secret_hash(conn, hash)).await
    }

    /// The job with this public name, if there is one.
    pub async fn job_named(&self, name: &str) -> Result<Option<JobRecord>, StoreError> {
        let Some(num) = num_of(name) else {
            return Ok(None);
        };
        self.read(|conn| by_num(conn, num)).await
    }

    /// Ends the job named `name` at `at` (Unix milliseconds) unless it has
    /// ended already; answers the job as it now stands, or `None` when there
    /// is no such job.
    pub async fn end_job(&self, name: &str, at: i64) -> Result<Option<JobRecord>, StoreError> {
        let Some(num) = num_of(name) else {
            return Ok(None);
        };
        self.write(move |txn| end(txn, num, at)).await
    }

    /// Every job, oldest first.
    pub async fn jobs(&self) -> Result<Vec<JobRecord>, StoreError> {
        self.read(all).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn store() -> (tempfile::TempDir, Store, String) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("shed.db")).await.unwrap();
        let ada = store.add_person("ada", "Ada").await.unwrap();
        (dir, store, ada.eid)
    }

    fn new_job(secret: &str, person: &str) -> NewJob {
        NewJob {
            secret_hash: crate::secret_hash(secret),
            person: person.to_string(),
            allow: vec!["demo/runs.*".into()],
            read_only: vec!["demo/runs.leaderboard".into()],
            created_at: 10,
            expires_at: Some(20),
        }
    }

    #[tokio::test]
    async fn a_job_is_named_found_by_its_secret_s_hash_ended_once_and_listed() {
        let (_dir, store, ada) = store().await;
        let job = store.add_job(new_job("s1", &ada)).await.unwrap();
        assert_eq!(job.name, "job-1");
        let second = store.add_job(new_job("s2", &ada)).await.unwrap();
        assert_eq!(second.name, "job-2");
        let hash = crate::secret_hash("s1");
        assert_eq!(
            store.job_by_secret_hash(&hash).await.unwrap(),
            Some(job.clone())
        );
        assert_eq!(
            store.job_by_secret_hash("s1").await.unwrap(),
            None,
            "the secret itself is not kept"
        );
        assert_eq!(store.job_named("job-1").await.unwrap(), Some(job.clone()));
        for not_a_name in ["job-01", "job-0", "job-", "job-x", "1", "job--1", "job-+1"] {
            assert_eq!(
                store.job_named(not_a_name).await.unwrap(),
                None,
                "{not_a_name}"
            );
        }
        let ended = store.end_job("job-1", 15).await.unwrap().unwrap();
        assert_eq!(ended.ended_at, Some(15));
        let again = store.end_job("job-1", 99).await.unwrap().unwrap();
        assert_eq!(again.ended_at, Some(15), "the first end stands");
        assert_eq!(store.end_job("job-9", 1).await.unwrap(), None);
        let names: Vec<String> = store
            .jobs()
            .await
            .unwrap()
            .into_iter()
            .map(|j| j.name)
            .collect();
        assert_eq!(names, ["job-1", "job-2"]);
    }

    /// A database as shed left it before jobs had names (schema version 6):
    /// two jobs keyed by their secrets, an entity and its history written by
    /// one agent and updated by the other, and a listed-tools key.
    fn a_database_of_version_6(path: &std::path::Path, older: &str, newer: &str) {
        use crate::migrations::{MIGRATIONS, Migration};
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
        conn.execute_batch(&format!(
            "INSERT INTO people(eid, handle, name, created_at) VALUES('p1', 'ada', 'Ada', 'then');
             INSERT INTO jobs(id, person, allow, read_only, created_at, expires_at, ended_at)
                 VALUES('{newer}', 'p1', '[\"*\"]', '[]', 20, NULL, 25),
                       ('{older}', 'p1', '[\"demo/*\"]', '[\"demo/runs.board\"]', 10, 99, NULL);
             INSERT INTO ec_apps(id, name) VALUES(1, 'demo/runs');
             INSERT INTO ec_entities(id, app, eid, num, version, created_at, created_by, created_via,
                                     updated_at, updated_by, updated_via)
                 VALUES(1, 1, 'e1', 1, 2, 0, 'p1', 'agent:{newer}', 1, 'p1', 'agent:{older}'),
                       (2, 1, 'e2', 2, 1, 0, 'p1', NULL, 0, 'p1', NULL);
             INSERT INTO ec_history(entity, app_version, step, version, at, by, via, change)
                 VALUES(1, 1, 0, 1, 0, 'p1', 'agent:{newer}', '{{}}'),
                       (1, 2, 0, 2, 1, 'p1', 'agent:{older}', '{{}}'),
                       (2, 3, 0, 1, 2, 'p1', NULL, '{{}}');
             INSERT INTO listed_tools(caller, fingerprint) VALUES('agent:{older}', 'f'), ('token:1', 'g');"
        ))
        .unwrap();
    }

    // Migration 7: jobs kept before are named in the order they were made,
    // their secrets keep working (their hash is kept), and no byte of either
    // secret is left in the database's files.
    #[tokio::test]
    async fn jobs_kept_before_get_names_and_the_files_forget_their_secrets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shed.db");
        let older = "0a1b2c3d4e5f60718293a4b5c6d7e8f9";
        let newer = "f9e8d7c6b5a4938271605f4e3d2c1b0a";
        a_database_of_version_6(&path, older, newer);

        let store = Store::open(&path).await.unwrap();
        let jobs = store.jobs().await.unwrap();
        assert_eq!(
            jobs,
            [
                JobRecord {
                    name: "job-1".into(),
                    person: "p1".into(),
                    allow: vec!["demo/*".into()],
                    read_only: vec!["demo/runs.board".into()],
                    created_at: 10,
                    expires_at: Some(99),
                    ended_at: None,
                },
                JobRecord {
                    name: "job-2".into(),
                    person: "p1".into(),
                    allow: vec!["*".into()],
                    read_only: vec![],
                    created_at: 20,
                    expires_at: None,
                    ended_at: Some(25),
                },
            ]
        );
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
        let next = store.add_job(new_job("s3", "p1")).await.unwrap();
        assert_eq!(next.name, "job-3");
        store
            .read(|conn| {
                let stamps: (String, String) = conn.query_row(
                    "SELECT created_via, updated_via FROM ec_entities WHERE eid = 'e1'",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )?;
                assert_eq!(stamps, ("agent:job-2".into(), "agent:job-1".into()));
                let vias: Vec<Option<String>> = conn
                    .prepare("SELECT via FROM ec_history ORDER BY app_version")?
                    .query_map([], |r| r.get(0))?
                    .collect::<Result<_, _>>()?;
                assert_eq!(
                    vias,
                    [Some("agent:job-2".into()), Some("agent:job-1".into()), None]
                );
                let callers: Vec<String> = conn
                    .prepare("SELECT caller FROM listed_tools ORDER BY caller")?
                    .query_map([], |r| r.get(0))?
                    .collect::<Result<_, _>>()?;
                assert_eq!(callers, ["agent:job-1", "token:1"]);
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

    #[tokio::test]
    async fn a_secret_is_kept_once() {
        let (_dir, store, ada) = store().await;
        store.add_job(new_job("s1", &ada)).await.unwrap();
        assert!(store.add_job(new_job("s1", &ada)).await.is_err());
    }
}
