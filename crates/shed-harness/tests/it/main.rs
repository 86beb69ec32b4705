//! shed-harness's integration tests, one binary: a module per subject (`cargo test -p shed-harness --test it <module>::`).

mod batch_bound;
mod cli;
mod cli_hardening;
mod common;
mod model_and_policy;
mod model_server;
mod policy_trace;
