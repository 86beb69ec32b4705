//! Jobs (the shapes and names: `src/jobs.rs`), written once for both
//! backends ([`Records`]): kept by the hash of their secret, named by
//! their number (`job-<n>`, never reused), their globs kept as JSON text.

use super::{FromRow, ReadRows, Statement};
use crate::jobs::{globs_text, name_of, num_of};
use crate::txn::{Records, Row, Txn, args};
use crate::{JobRecord, JobTerms, StoreError};

const COLUMNS: &str = "num, person, allow, read_only, created_at, expires_at, ended_at FROM jobs";

impl FromRow for JobRecord {
    fn from_row(r: Row) -> Result<JobRecord, StoreError> {
        let globs = |i: usize| -> Result<Vec<String>, StoreError> {
            serde_json::from_str(&r.get::<String>(i)?)
                .map_err(|e| StoreError::Internal(e.to_string()))
        };
        Ok(JobRecord {
            name: name_of(r.get(0)?),
            terms: JobTerms {
                person: r.get(1)?,
                allow: globs(2)?,
                read_only: globs(3)?,
                created_at: r.get(4)?,
                expires_at: r.get(5)?,
            },
            ended_at: r.get(6)?,
        })
    }
}

/// The job numbered `num`, if there is one.
async fn by_num(t: &impl Txn, num: i64) -> Result<Option<JobRecord>, StoreError> {
    t.optional_as(&format!("SELECT {COLUMNS} WHERE num = $1"), args![num])
        .await
}

impl<B: Records> super::Jobs for B {
    async fn add_job(&self, secret_hash: String, job: JobTerms) -> Result<JobRecord, StoreError> {
        let allow = globs_text(&job.allow)?;
        let read_only = globs_text(&job.read_only)?;
        self.write_records(async move |t| {
            let num = t
                .one_as(
                    "INSERT INTO jobs(secret_hash, person, allow, read_only, created_at,
                                      expires_at, ended_at)
                     VALUES($1, $2, $3, $4, $5, $6, NULL) RETURNING num",
                    args![
                        &secret_hash,
                        &job.person,
                        &allow,
                        &read_only,
                        job.created_at,
                        job.expires_at
                    ],
                )
                .await?;
            Ok(JobRecord {
                name: name_of(num),
                terms: job.clone(),
                ended_at: None,
            })
        })
        .await
    }

    async fn job_by_secret_hash(&self, hash: &str) -> Result<Option<JobRecord>, StoreError> {
        let sql = format!("SELECT {COLUMNS} WHERE secret_hash = $1");
        self.read_optional(&sql, args![hash]).await
    }

    async fn job_named(&self, name: &str) -> Result<Option<JobRecord>, StoreError> {
        let Some(num) = num_of(name) else {
            return Ok(None);
        };
        self.read_records(async |t| by_num(t, num).await).await
    }

    async fn end_job(&self, name: &str, at: i64) -> Result<Option<JobRecord>, StoreError> {
        let Some(num) = num_of(name) else {
            return Ok(None);
        };
        self.write_records(async move |t| {
            t.execute(
                "UPDATE jobs SET ended_at = $2 WHERE num = $1 AND ended_at IS NULL",
                args![num, at],
            )
            .await?;
            by_num(t, num).await
        })
        .await
    }

    async fn jobs(&self) -> Result<Vec<JobRecord>, StoreError> {
        let sql = format!("SELECT {COLUMNS} ORDER BY num");
        self.read_all(&sql, args![]).await
    }
}
