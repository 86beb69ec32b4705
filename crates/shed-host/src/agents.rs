//! Agents: what the host offers a person's agent through the host-command
//! protocol (the broker of `shed-broker` is its door).
//!
//! - [`Job`]s: an agent's run for a person, with the globs the broker scopes
//!   it by; the agent acts as [`Caller::Agent`](crate::Caller), `agent:<job>`.
//! - The protocol's command rows ([`CommandRow`]): every app command the
//!   person reaches, named `<space>/<app>.<command>`, and the platform's
//!   built-in commands with their declarations.
//! - Running one ([`Host::agent_run`]) as the agent: the app's access decides,
//!   as it does at every door, and a built-in's declarations (actors, origins,
//!   a consent grant) are checked here, in the command layer.
//! - The information-flow [`Label`] of every answer.

mod builtins;
mod command;
mod jobs;
mod label;
mod rows;
mod run;

pub use command::{AgentCall, CommandRow, Effect, Origin};
pub use jobs::{Job, JobState, now_millis};
pub use label::{Integrity, Label};
pub use run::AgentAnswer;
