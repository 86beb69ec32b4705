//! shed-manifest's integration tests, one binary: a module per subject (`cargo test -p shed-manifest --test it <module>::`).

// A test stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod arguments;
mod common;
mod number_range;
mod properties;
mod refusals;
mod spec_examples;
