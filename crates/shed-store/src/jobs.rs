//! Jobs: an agent's run for a person, as the broker of the host-command
//! protocol holds it — the person, the scope's globs (allowed and read-only),
//! when it was made, when it expires and when it was ended. Plain storage:
//! what a job may do is decided in shed-host and shed-broker. Each backend
//! keeps them in its own table (`sqlite/jobs.rs`, `postgres/records.rs`).
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
