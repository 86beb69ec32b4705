//! Jobs: an agent's run for a person, as the broker of the host-command
//! protocol holds it — the person, the scope's globs (allowed and read-only),
//! when it was made, when it expires and when it was ended. Plain storage:
//! what a job may do is decided in shed-host and shed-broker. Each backend
//! keeps them in its own table (migrations 3 and 7: `migrations/jobs.rs`).
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
    /// What the job was made with: the person its agent acts for, its
    /// scope and its times.
    pub terms: JobTerms,

    /// Unix milliseconds; `None` while the job runs.
    pub ended_at: Option<i64>,
}

/// The public name of job number `num`.
pub(crate) fn name_of(num: i64) -> String {
    format!("job-{num}")
}

/// The number a public name stands for, if it is one (`job-3`, never
/// `job-03`).
pub(crate) fn num_of(name: &str) -> Option<i64> {
    let num: i64 = name.strip_prefix("job-")?.parse().ok()?;
    (num > 0 && name_of(num) == name).then_some(num)
}

/// A job's globs as a database keeps them: a JSON list in a text column.
pub(crate) fn globs_text(globs: &[String]) -> Result<String, crate::StoreError> {
    serde_json::to_string(globs).map_err(|e| crate::StoreError::Internal(e.to_string()))
}

/// What the tests of migration 7 start from on either backend — a database
/// of schema version 6 holding two jobs keyed by their secrets, an entity
/// and its history written by one agent and updated by the other, and a
/// listed-tools key — and what the migration makes of it.
#[cfg(test)]
pub(crate) mod version_6 {
    use super::{JobRecord, JobTerms};

    /// The secrets of the older and the newer job.
    pub(crate) const OLDER: &str = "0a1b2c3d4e5f60718293a4b5c6d7e8f9";
    pub(crate) const NEWER: &str = "f9e8d7c6b5a4938271605f4e3d2c1b0a";

    /// The rows, as SQL both backends take.
    pub(crate) fn rows() -> String {
        format!(
            "INSERT INTO people(eid, handle, name, created_at) VALUES('p1', 'ada', 'Ada', 'then');
             INSERT INTO jobs(id, person, allow, read_only, created_at, expires_at, ended_at)
                 VALUES('{NEWER}', 'p1', '[\"*\"]', '[]', 20, NULL, 25),
                       ('{OLDER}', 'p1', '[\"demo/*\"]', '[\"demo/runs.board\"]', 10, 99, NULL);
             INSERT INTO ec_apps(id, name) VALUES(1, 'demo/runs');
             INSERT INTO ec_entities(id, app, eid, num, version, created_at, created_by, created_via,
                                     updated_at, updated_by, updated_via)
                 VALUES(1, 1, 'e1', 1, 2, 0, 'p1', 'agent:{NEWER}', 1, 'p1', 'agent:{OLDER}'),
                       (2, 1, 'e2', 2, 1, 0, 'p1', NULL, 0, 'p1', NULL);
             INSERT INTO ec_history(entity, app_version, step, version, at, by, via, change)
                 VALUES(1, 1, 0, 1, 0, 'p1', 'agent:{NEWER}', '{{}}'),
                       (1, 2, 0, 2, 1, 'p1', 'agent:{OLDER}', '{{}}'),
                       (2, 3, 0, 1, 2, 'p1', NULL, '{{}}');
             INSERT INTO listed_tools(caller, fingerprint) VALUES('agent:{OLDER}', 'f'), ('token:1', 'g');"
        )
    }

    /// The jobs after the migration: named in the order they were made.
    pub(crate) fn jobs() -> Vec<JobRecord> {
        vec![
            JobRecord {
                name: "job-1".into(),
                terms: JobTerms {
                    person: "p1".into(),
                    allow: vec!["demo/*".into()],
                    read_only: vec!["demo/runs.board".into()],
                    created_at: 10,
                    expires_at: Some(99),
                },
                ended_at: None,
            },
            JobRecord {
                name: "job-2".into(),
                terms: JobTerms {
                    person: "p1".into(),
                    allow: vec!["*".into()],
                    read_only: vec![],
                    created_at: 20,
                    expires_at: None,
                },
                ended_at: Some(25),
            },
        ]
    }

    /// e1's `created_via` and `updated_via` after the migration.
    pub(crate) const STAMPS: (&str, &str) = ("agent:job-2", "agent:job-1");

    /// The history's `via`s after the migration, oldest first.
    pub(crate) fn vias() -> Vec<Option<String>> {
        vec![Some("agent:job-2".into()), Some("agent:job-1".into()), None]
    }

    /// The listed-tools callers after the migration, in order.
    pub(crate) const CALLERS: [&str; 2] = ["agent:job-1", "token:1"];
}
