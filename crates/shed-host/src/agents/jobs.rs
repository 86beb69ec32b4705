//! Jobs: made by the operator (`shed job create`), ended by them or by time.
//! A job's id is its secret — 128 random bits — and names the agent in every
//! write it makes (`agent:<job>`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use shed_store::JobRecord;

use super::scope::JobScope;
use crate::access::JobState;
use crate::names::shown;
use crate::{Caller, Host, HostError, Person};

/// An agent's run for a person, with the scope it is held to.
#[derive(Clone, Debug)]
pub struct Job {
    /// 32 lowercase hex digits.
    pub id: String,
    pub person: Person,
    /// Globs of the command names the job may list and run.
    pub allow: Vec<String>,
    /// Globs of the read commands it may run read-only.
    pub read_only: Vec<String>,
    /// Unix milliseconds.
    pub created_at: i64,
    /// Unix milliseconds; `None` never expires.
    pub expires_at: Option<i64>,
    /// Unix milliseconds; `None` while it runs.
    pub ended_at: Option<i64>,
}

impl Job {
    /// Where the job stands at `now` (Unix milliseconds).
    pub fn state(&self, now: i64) -> JobState {
        match (self.ended_at, self.expires_at) {
            (Some(_), _) => JobState::Ended,
            (None, Some(at)) if now >= at => JobState::Expired,
            _ => JobState::Running,
        }
    }

    /// The caller its requests act as: the agent, for its person.
    pub fn caller(&self) -> Caller {
        Caller::Agent {
            person: self.person.clone(),
            job: self.id.clone(),
        }
    }
}

/// Now, in Unix milliseconds.
pub fn now_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn no_job(id: &str) -> HostError {
    HostError::NotFound(format!(
        "no job {} — `shed job list` shows the jobs",
        shown(id)
    ))
}

impl Host {
    /// Makes a job for the person `handle`, scoped by the globs (a glob that
    /// is not one is refused before anything else), ending after `ttl` when
    /// one is given.
    pub async fn create_job(
        &self,
        handle: &str,
        allow: Vec<String>,
        read_only: Vec<String>,
        ttl: Option<Duration>,
    ) -> Result<Job, HostError> {
        JobScope::new(&allow, &read_only).map_err(|e| HostError::BadInput(e.0))?;
        let caller = self.caller_for_handle(handle).await?;
        let person = caller
            .person()
            .cloned()
            .ok_or_else(crate::access::sign_in_first)?;
        let created_at = now_millis();
        let expires_at = ttl.map(|ttl| {
            created_at.saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX))
        });
        let record = JobRecord {
            id: format!("{:032x}", rand::random::<u128>()),
            person: person.eid.clone(),
            allow,
            read_only,
            created_at,
            expires_at,
            ended_at: None,
        };
        self.inner.store.add_job(record.clone()).await?;
        tracing::info!(person = %person.handle, "job created");
        Ok(job(record, person))
    }

    /// The job with this id, whatever its state.
    pub async fn job(&self, id: &str) -> Result<Option<Job>, HostError> {
        match self.inner.store.job(id).await? {
            Some(record) => Ok(Some(self.with_person(record).await?)),
            None => Ok(None),
        }
    }

    /// Ends the job now (a job already ended keeps the time it ended).
    pub async fn end_job(&self, id: &str) -> Result<Job, HostError> {
        let record = self
            .inner
            .store
            .end_job(id, now_millis())
            .await?
            .ok_or_else(|| no_job(id))?;
        self.with_person(record).await
    }

    /// Every job, oldest first.
    pub async fn jobs(&self) -> Result<Vec<Job>, HostError> {
        let mut jobs = Vec::new();
        for record in self.inner.store.jobs().await? {
            jobs.push(self.with_person(record).await?);
        }
        Ok(jobs)
    }

    async fn with_person(&self, record: JobRecord) -> Result<Job, HostError> {
        let person = self
            .inner
            .store
            .person_by_eid(&record.person)
            .await?
            .ok_or_else(|| {
                HostError::Internal(format!(
                    "job {} names a person this host no longer has",
                    record.id
                ))
            })?;
        Ok(job(record, person))
    }
}

fn job(record: JobRecord, person: Person) -> Job {
    Job {
        id: record.id,
        person,
        allow: record.allow,
        read_only: record.read_only,
        created_at: record.created_at,
        expires_at: record.expires_at,
        ended_at: record.ended_at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job_at(ended: Option<i64>, expires: Option<i64>) -> Job {
        Job {
            id: "j".into(),
            person: Person {
                eid: "e".into(),
                handle: "ada".into(),
                name: "Ada".into(),
            },
            allow: vec![],
            read_only: vec![],
            created_at: 0,
            expires_at: expires,
            ended_at: ended,
        }
    }

    #[test]
    fn a_job_runs_until_it_is_ended_or_expires() {
        assert_eq!(job_at(None, None).state(i64::MAX), JobState::Running);
        assert_eq!(job_at(None, Some(10)).state(9), JobState::Running);
        assert_eq!(job_at(None, Some(10)).state(10), JobState::Expired);
        assert_eq!(job_at(Some(5), Some(10)).state(11), JobState::Ended);
    }
}
