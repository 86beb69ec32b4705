//! Jobs: made by the operator (`shed job create`), ended by them or by time.
//! A job has a secret — 128 random bits, shown once when it is made, kept
//! only as its sha256 — which an agent's requests carry, and a public name,
//! `job-<n>`, which names the agent in every write it makes
//! (`agent:job-3`), every answer and every log line.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use shed_store::{JobRecord, JobTerms};

use super::command::Effect;
use super::scope::{JobScope, first_admitting_nothing};
use crate::access::JobState;
use crate::names::shown;
use crate::secrets::{hash, secret};
use crate::{Caller, Host, HostError, Person};

/// An agent's run for a person, with the scope it is held to.
#[derive(Clone, Debug)]
pub struct Job {
    /// The public name, `job-<n>`: never the secret.
    pub name: String,
    /// The person the job was made for: its agent acts as them, with
    /// their spaces and roles, held to the job's scope.
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

/// A job just made, with its secret: the one time the secret is seen.
#[derive(Clone, Debug)]
pub struct MadeJob {
    /// The job as it was made: running, with its name and scope.
    pub job: Job,
    /// 32 lowercase hex digits; only its sha256 is kept.
    pub secret: String,
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

    /// The caller its requests act as: the agent, by the job's name, for its
    /// person.
    pub fn caller(&self) -> Caller {
        Caller::Agent {
            person: self.person.clone(),
            job: self.name.clone(),
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

/// The refusal for a job that is not there, `listed` saying where the jobs
/// are listed, as the caller's door does it. What was given is repeated only
/// when it reads as a name: a mistyped secret is not echoed.
pub(crate) fn no_job(given: &str, listed: &str) -> HostError {
    HostError::NotFound(if given.starts_with("job-") {
        format!("no job {} — {listed}", shown(given))
    } else {
        format!("no job has that name or secret — {listed} by name (job-1, job-2, …)")
    })
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
    ) -> Result<MadeJob, HostError> {
        JobScope::new(&allow, &read_only).map_err(|e| HostError::BadInput(e.0))?;
        let caller = self.caller_for_handle(handle).await?;
        let person = caller
            .person()
            .cloned()
            .ok_or_else(crate::access::sign_in_first)?;
        self.refuse_a_scope_admitting_nothing(&person, &allow, &read_only)
            .await?;
        let created_at = now_millis();
        let expires_at = ttl.map(|ttl| {
            created_at.saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX))
        });
        let secret = secret();
        let record = self
            .inner
            .store
            .add_job(
                hash(&secret),
                JobTerms {
                    person: person.eid.clone(),
                    allow,
                    read_only,
                    created_at,
                    expires_at,
                },
            )
            .await?;
        tracing::info!(job = %record.name, person = %person.handle, "job created");
        Ok(MadeJob {
            job: job(record, person),
            secret,
        })
    }

    /// Refuses a glob that admits no command `person` reaches (a typo, an
    /// app name without `.*`, an app not made yet): its job could never run
    /// what it names. The sentence names the apps they reach and the
    /// built-ins, as globs that would admit them.
    async fn refuse_a_scope_admitting_nothing(
        &self,
        person: &Person,
        allow: &[String],
        read_only: &[String],
    ) -> Result<(), HostError> {
        let caller = Caller::signed_in(person.clone(), None, crate::Door::Agent);
        let rows = self.agent_commands(&caller).await?;
        let commands: Vec<(&str, Effect)> = rows
            .iter()
            .map(|row| (row.name.as_str(), row.effect))
            .collect();
        let Some((flag, glob)) = first_admitting_nothing(allow, read_only, &commands)
            .map_err(|e| HostError::BadInput(e.0))?
        else {
            return Ok(());
        };
        let mut apps: Vec<String> = Vec::new();
        let mut builtins: Vec<String> = Vec::new();
        for (name, _) in &commands {
            match name.split_once('.') {
                Some((app, _)) if app.contains('/') => {
                    let app = format!("'{app}.*'");
                    if !apps.contains(&app) {
                        apps.push(app);
                    }
                }
                _ => builtins.push(name.to_string()),
            }
        }
        let what = if flag == "--read-only" {
            "read command"
        } else {
            "command"
        };
        let apps = if apps.is_empty() {
            format!("@{} reaches no app yet", person.handle)
        } else {
            format!(
                "the apps @{} reaches are {}",
                person.handle,
                crate::texts::bounded_list(&apps)
            )
        };
        Err(HostError::BadInput(format!(
            "{flag} '{}' admits no {what} @{} reaches, so the job could run nothing by it — \
             {apps}, and the built-ins are {}; nothing was made",
            shown(glob),
            person.handle,
            crate::texts::bounded_list(&builtins)
        )))
    }

    /// The job whose secret this is, whatever its state.
    pub async fn job_by_secret(&self, secret: &str) -> Result<Option<Job>, HostError> {
        let record = self.inner.store.job_by_secret_hash(&hash(secret)).await?;
        self.with_person_if_any(record).await
    }

    /// The job with this public name (`job-3`), whatever its state.
    pub async fn job_named(&self, name: &str) -> Result<Option<Job>, HostError> {
        let record = self.inner.store.job_named(name).await?;
        self.with_person_if_any(record).await
    }

    /// Ends the job now (a job already ended keeps the time it ended). It is
    /// named by its public name, as `shed job list` shows it, or by its
    /// secret, as `shed job create` printed it.
    pub async fn end_job(&self, name_or_secret: &str) -> Result<Job, HostError> {
        let no_job = |given: &str| {
            no_job(
                given,
                &format!("{} shows the jobs", self.shed_command("job list")),
            )
        };
        let name = match self.job_named(name_or_secret).await? {
            Some(job) => job.name,
            None => {
                self.job_by_secret(name_or_secret)
                    .await?
                    .ok_or_else(|| no_job(name_or_secret))?
                    .name
            }
        };
        let record = self
            .inner
            .store
            .end_job(&name, now_millis())
            .await?
            .ok_or_else(|| no_job(&name))?;
        tracing::info!(job = %record.name, "job ended");
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

    /// The jobs of `person`, oldest first: no person read per job.
    pub(crate) async fn jobs_of(&self, person: &Person) -> Result<Vec<Job>, HostError> {
        Ok(self
            .inner
            .store
            .jobs()
            .await?
            .into_iter()
            .filter(|record| record.terms.person == person.eid)
            .map(|record| job(record, person.clone()))
            .collect())
    }

    async fn with_person_if_any(
        &self,
        record: Option<JobRecord>,
    ) -> Result<Option<Job>, HostError> {
        match record {
            Some(record) => Ok(Some(self.with_person(record).await?)),
            None => Ok(None),
        }
    }

    async fn with_person(&self, record: JobRecord) -> Result<Job, HostError> {
        let person = self
            .inner
            .store
            .person_by_eid(&record.terms.person)
            .await?
            .ok_or_else(|| {
                HostError::Internal(format!(
                    "job {} names a person this host no longer has",
                    record.name
                ))
            })?;
        Ok(job(record, person))
    }
}

fn job(record: JobRecord, person: Person) -> Job {
    Job {
        name: record.name,
        person,
        allow: record.terms.allow,
        read_only: record.terms.read_only,
        created_at: record.terms.created_at,
        expires_at: record.terms.expires_at,
        ended_at: record.ended_at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job_at(ended: Option<i64>, expires: Option<i64>) -> Job {
        Job {
            name: "job-1".into(),
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
