//! Jobs: an agent's run for a person, as the broker of the host-command
//! protocol holds it — the person, the scope's globs (allowed and read-only),
//! when it was made, when it expires and when it was ended. Plain storage:
//! what a job may do is decided in shed-host and shed-broker.
//!
//! Times are Unix milliseconds, written by the caller, so the store holds no
//! clock of its own for jobs.

/// A job as the store keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRecord {
    /// The job's id: the secret an agent's requests carry.
    pub id: String,
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
