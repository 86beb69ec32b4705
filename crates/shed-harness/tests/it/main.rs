//! shed-harness's integration tests, one binary: a module per subject (`cargo test -p shed-harness --test it <module>::`).

mod cli;
mod common;
mod model_and_policy;
mod model_server;
mod policy_trace;
