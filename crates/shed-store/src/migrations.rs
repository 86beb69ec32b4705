//! What both backends' migrations share: the one line they log. A new
//! database says it was made, at which schema version; an older one says
//! from which version to which it was brought; each migration is a line at
//! debug.
//!
//! The two lists (`sqlite/migrations.rs`, `postgres/migrations.rs`) are one
//! schema: entry `i` of each is the same change, and once applied they make
//! the same tables with the same columns (**Invariant:**
//! `migrations::both_backends_migrate_to_the_same_versions_tables_and_columns`,
//! in `tests/it/`). A version once applied is never edited: it stays as it
//! is, in each backend's words. A new one is written once, in SQLite's
//! words, with the few type substitutions PostgreSQL needs made by one
//! small function (written with the first migration that uses it):
//! `INTEGER PRIMARY KEY` (and `AUTOINCREMENT`) → `BIGSERIAL PRIMARY KEY`,
//! `INTEGER` → `BIGINT`, `BLOB` → `BYTEA`, `WITHOUT ROWID` dropped. Text
//! per backend only where the dialects truly differ — as migration 7's
//! hashes, a Rust step on SQLite and `sha256` in SQL on PostgreSQL.

/// Logs, once a database's pending migrations are applied, what they did:
/// `from` the schema version it was at, `to` the one it is at now.
pub(crate) fn log_applied(from: usize, to: usize) {
    match from {
        _ if from == to => {}
        0 => tracing::info!("made the store at schema version {to}"),
        _ => tracing::info!(
            "brought the store from schema version {from} to {to} ({} migrations)",
            to - from
        ),
    }
}
