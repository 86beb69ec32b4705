//! shed-store's integration tests, one binary: a module per subject (`cargo test -p shed-store --test it <module>::`).

mod apply;
mod common;
mod concurrency;
mod crash;
mod declare;
mod deploys;
mod lifecycle;
mod query;
mod slow_queries;
mod wal;
