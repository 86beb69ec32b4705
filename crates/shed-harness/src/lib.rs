//! shed-harness: puts a host's declared commands in front of a model as
//! `list_commands`, `run_command` and `run_read_command`.
//!
//! The harness knows the host only through its command CLI (`command list
//! --json`, `command run …`), run over a cleared environment as the host
//! configuration says; it links no host crate. Modules, from the host inward:
//! [`config`] and [`host`] reach the host; [`catalog`], [`signature`],
//! [`schema`] and [`listing`] make `list_commands`; [`calls`] and
//! [`outcome`] make `run_command`; [`labels`] and [`journal`] measure
//! answers; [`policy`] judges tool calls; [`harness`] ties a run together;
//! [`cli`], [`model`] and [`mcp`] are the three ways to drive it
//! ([`model`] asks a model server through [`endpoint`] and shows its
//! [`progress`] on a terminal), [`ending`] says how a run ends besides with
//! an answer and its exit codes, and [`transcript`] writes a run's record.

pub mod calls;
pub mod catalog;
pub mod cli;
pub mod config;
pub mod ending;
pub mod endpoint;
pub mod harness;
pub mod host;
pub mod journal;
pub mod labels;
pub mod listing;
pub mod mcp;
pub mod model;
pub mod outcome;
pub mod policy;
pub mod progress;
pub mod schema;
pub mod signature;
pub mod tools;
pub mod transcript;

#[cfg(test)]
mod proptests;

pub use cli::{RunCliDependencies, run_cli};
pub use harness::{Harness, RunSettings};
