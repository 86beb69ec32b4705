//! Agents: what the host offers a person's agent through the host-command
//! protocol (the broker of `shed-broker` is its door).
//!
//! - [`Job`]s: an agent's run for a person, with the globs of its scope
//!   (`scope`, checked when the job is made); the agent acts as
//!   [`Caller::Agent`](crate::Caller), `agent:<job name>`; the job's secret
//!   is kept only as a hash.
//! - A job's two calls, which the broker serves: its listing
//!   ([`crate::Host::job_commands`]) and one run
//!   ([`crate::Host::job_run`], a typed
//!   [`JobOutcome`]). Every job decision is made there: the job runs, its
//!   scope admits the command, its read-only grant covers the run, and the
//!   inputs filled from the job.
//! - The protocol's command rows ([`CommandRow`]): every app command the
//!   person reaches, named `<space>/<app>.<command>`, and the platform's
//!   built-in commands with their declarations.
//! - Running one ([`crate::Host::agent_run`]) as the agent: the app's access decides,
//!   as it does at every door, and a built-in's declarations (actors, origins,
//!   a consent grant) are checked here, in the command layer.
//! - The information-flow [`Label`] of every answer.

mod builtins;
mod command;
mod job_calls;
mod jobs;
mod label;
mod rows;
mod run;
mod scope;

pub use crate::access::JobState;
pub use command::{AgentCall, CommandRow, Effect, Origin};
pub(crate) use job_calls::JobScopes;
pub use job_calls::{JobOutcome, JobRefusal, RunCall};
pub(crate) use jobs::no_job;
pub use jobs::{Job, MadeJob, now_millis};
pub use label::{Integrity, Label};
pub use run::AgentAnswer;
pub use scope::{BadGlob, JobScope};
