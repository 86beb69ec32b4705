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

/// What a job is made with: whom its agent acts for, its scope, its time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobTerms {
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
}

/// A job as the store keeps it (its secret's hash is never read back).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRecord {
    /// The job's public name, `job-<n>`: what rows, answers and logs call it.
    pub name: String,
    pub terms: JobTerms,
    /// Unix milliseconds; `None` while the job runs.
    pub ended_at: Option<i64>,
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
        terms: JobTerms {
            person: r.get(1)?,
            allow: globs(r.get(2)?)?,
            read_only: globs(r.get(3)?)?,
            created_at: r.get(4)?,
            expires_at: r.get(5)?,
        },
        ended_at: r.get(6)?,
    })
}

fn add(conn: &Connection, secret_hash: &str, job: &JobTerms) -> Result<JobRecord, StoreError> {
    let allow =
        serde_json::to_string(&job.allow).map_err(|e| StoreError::Internal(e.to_string()))?;
    let read_only =
        serde_json::to_string(&job.read_only).map_err(|e| StoreError::Internal(e.to_string()))?;
    conn.execute(
        "INSERT INTO jobs(secret_hash, person, allow, read_only, created_at, expires_at, ended_at)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, NULL)",
        params![
            secret_hash,
            job.person,
            allow,
            read_only,
            job.created_at,
            job.expires_at,
        ],
    )?;
    Ok(JobRecord {
        name: name_of(conn.last_insert_rowid()),
        terms: job.clone(),
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
    /// Keeps a new job (its person must exist) with its secret's hash
    /// ([`crate::secret_hash`]; the secret itself is never kept), and
    /// answers it with its name.
    pub async fn add_job(
        &self,
        secret_hash: String,
        job: JobTerms,
    ) -> Result<JobRecord, StoreError> {
        self.write(move |txn| add(txn, &secret_hash, &job)).await
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

    fn terms(person: &str) -> JobTerms {
        JobTerms {
            person: person.to_string(),
            allow: vec!["demo/runs.*".into()],
            read_only: vec!["demo/runs.leaderboard".into()],
            created_at: 10,
            expires_at: Some(20),
        }
    }

    async fn add(store: &Store, secret: &str, person: &str) -> Result<JobRecord, StoreError> {
        store
            .add_job(crate::secret_hash(secret), terms(person))
            .await
    }

    #[tokio::test]
    async fn a_job_is_named_found_by_its_secret_s_hash_ended_once_and_listed() {
        let (_dir, store, ada) = store().await;
        let job = add(&store, "s1", &ada).await.unwrap();
        assert_eq!(job.name, "job-1");
        let second = add(&store, "s2", &ada).await.unwrap();
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

    #[tokio::test]
    async fn a_secret_is_kept_once() {
        let (_dir, store, ada) = store().await;
        add(&store, "s1", &ada).await.unwrap();
        assert!(add(&store, "s1", &ada).await.is_err());
    }
}
