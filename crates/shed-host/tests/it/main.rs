//! shed-host's integration tests, one binary: a module per subject (`cargo test -p shed-host --test it <module>::`).

// A test stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod access;
mod approvals;
mod common;
mod deploys;
mod doors_hold_no_rules;
mod entity_history;
mod kept_refusals;
mod listing;
mod resolve;
mod run_club;
mod undo;
