//! Jobs: an agent's run for a person, as the broker of the host-command
//! protocol holds it — the person, the scope's globs (allowed and read-only),
//! when it was made, when it expires and when it was ended. Plain storage:
//! what a job may do is decided in shed-host and shed-broker.
//!
//! Times are Unix milliseconds, written by the caller, so the store holds no
//! clock of its own for jobs.

use rusqlite::{Connection, OptionalExtension, params};

use super::Sqlite;
use crate::{JobRecord, StoreError};

/// The table, appended to the store's migrations.
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

const COLUMNS: &str = "id, person, allow, read_only, created_at, expires_at, ended_at FROM jobs";

fn globs(text: String) -> rusqlite::Result<Vec<String>> {
    serde_json::from_str(&text).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

fn record(r: &rusqlite::Row<'_>) -> rusqlite::Result<JobRecord> {
    Ok(JobRecord {
        id: r.get(0)?,
        person: r.get(1)?,
        allow: globs(r.get(2)?)?,
        read_only: globs(r.get(3)?)?,
        created_at: r.get(4)?,
        expires_at: r.get(5)?,
        ended_at: r.get(6)?,
    })
}

fn add(conn: &Connection, job: &JobRecord) -> Result<(), StoreError> {
    let allow =
        serde_json::to_string(&job.allow).map_err(|e| StoreError::Internal(e.to_string()))?;
    let read_only =
        serde_json::to_string(&job.read_only).map_err(|e| StoreError::Internal(e.to_string()))?;
    conn.execute(
        "INSERT INTO jobs(id, person, allow, read_only, created_at, expires_at, ended_at)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            job.id,
            job.person,
            allow,
            read_only,
            job.created_at,
            job.expires_at,
            job.ended_at
        ],
    )?;
    Ok(())
}

fn by_id(conn: &Connection, id: &str) -> Result<Option<JobRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!("SELECT {COLUMNS} WHERE id = ?1"))?;
    Ok(stmt.query_row([id], record).optional()?)
}

fn end(conn: &Connection, id: &str, at: i64) -> Result<Option<JobRecord>, StoreError> {
    conn.execute(
        "UPDATE jobs SET ended_at = ?2 WHERE id = ?1 AND ended_at IS NULL",
        params![id, at],
    )?;
    by_id(conn, id)
}

fn all(conn: &Connection) -> Result<Vec<JobRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!("SELECT {COLUMNS} ORDER BY created_at, id"))?;
    let rows = stmt.query_map([], record)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

impl crate::records::Jobs for Sqlite {
    async fn add_job(&self, job: JobRecord) -> Result<(), StoreError> {
        self.write(move |txn| add(txn, &job)).await
    }

    async fn job(&self, id: &str) -> Result<Option<JobRecord>, StoreError> {
        self.read(|conn| by_id(conn, id)).await
    }

    async fn end_job(&self, id: &str, at: i64) -> Result<Option<JobRecord>, StoreError> {
        let id = id.to_string();
        self.write(move |txn| end(txn, &id, at)).await
    }

    async fn jobs(&self) -> Result<Vec<JobRecord>, StoreError> {
        self.read(all).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;

    async fn store() -> (tempfile::TempDir, Store, String) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("shed.db")).await.unwrap();
        let ada = store.add_person("ada", "Ada").await.unwrap();
        (dir, store, ada.eid)
    }

    #[tokio::test]
    async fn a_job_is_kept_ended_once_and_listed() {
        let (_dir, store, ada) = store().await;
        let job = JobRecord {
            id: "j1".into(),
            person: ada,
            allow: vec!["demo/runs.*".into()],
            read_only: vec!["demo/runs.leaderboard".into()],
            created_at: 10,
            expires_at: Some(20),
            ended_at: None,
        };
        store.add_job(job.clone()).await.unwrap();
        assert_eq!(store.job("j1").await.unwrap(), Some(job.clone()));
        assert_eq!(store.job("j2").await.unwrap(), None);
        let ended = store.end_job("j1", 15).await.unwrap().unwrap();
        assert_eq!(ended.ended_at, Some(15));
        let again = store.end_job("j1", 99).await.unwrap().unwrap();
        assert_eq!(again.ended_at, Some(15), "the first end stands");
        assert_eq!(store.end_job("nope", 1).await.unwrap(), None);
        assert_eq!(store.jobs().await.unwrap().len(), 1);
    }
}
