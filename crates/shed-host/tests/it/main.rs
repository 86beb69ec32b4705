//! shed-host's integration tests, one binary: a module per subject (`cargo test -p shed-host --test it <module>::`).

mod access;
mod common;
mod deploys;
mod doors_hold_no_rules;
mod listing;
mod resolve;
mod run_club;
