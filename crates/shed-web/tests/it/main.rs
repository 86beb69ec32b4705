//! shed-web's own tests, one binary: the whole router in process, each
//! request sent with `tower::ServiceExt::oneshot` — no socket, no binary —
//! for the door's extractors and refusals (`cargo test -p shed-web --test
//! it <module>::`). The black-box tests against the real binary are
//! `crates/shed/tests/it/web_door.rs` and `platform_pages.rs`.

mod common;
mod forms;
mod space_host;
