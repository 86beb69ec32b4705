//! shed-harness's integration tests, one binary: a module per subject (`cargo test -p shed-harness --test it <module>::`).

// A test stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod batch_bound;
mod cli;
mod cli_hardening;
mod common;
mod model_and_policy;
mod model_server;
mod policy_trace;
mod run_endings;
mod tool_schema;
