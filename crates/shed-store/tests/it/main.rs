//! shed-store's integration tests, one binary: a module per subject (`cargo test -p shed-store --test it <module>::`).

// A test stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod activity;
mod apply;
mod approvals;
mod bad_database;
mod common;
mod concurrency;
mod crash;
mod declare;
mod deploys;
mod jobs;
mod layout;
mod lifecycle;
mod migrations;
mod passkeys;
mod query;
mod restore;
mod sign_ins;
mod slow_queries;
mod taking_back;
mod undo;
mod upgrade;
mod view_keys;
mod wake;
mod wal;
mod write_bounds;
