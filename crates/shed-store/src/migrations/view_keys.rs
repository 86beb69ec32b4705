//! Migration 6: the keys that let a view load its private app's files (the
//! shape: `src/view_keys.rs`; the statements, written once:
//! `src/records/view_keys.rs`).

/// The table, on both backends.
pub(super) const TABLE: &str = r#"
    CREATE TABLE view_keys(
        hash TEXT PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        space TEXT NOT NULL,
        slug TEXT NOT NULL,
        expires_at BIGINT NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX view_keys_expiry ON view_keys(expires_at);
"#;
