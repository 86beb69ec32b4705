//! shed-web's own tests, one binary: the whole router in process, each
//! request sent with `tower::ServiceExt::oneshot` — no socket, no binary —
//! for the door's extractors and refusals (`cargo test -p shed-web --test
//! it <module>::`). The black-box tests against the real binary are
//! `crates/shed/tests/it/web_door.rs` and `platform_pages.rs`.

// A test stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod activity_pages;
mod after_a_post;
mod common;
mod forms;
mod mcp_address;
mod not_found;
mod space_host;
