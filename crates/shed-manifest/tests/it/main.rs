//! shed-manifest's integration tests, one binary: a module per subject (`cargo test -p shed-manifest --test it <module>::`).

mod arguments;
mod common;
mod properties;
mod refusals;
mod spec_examples;
