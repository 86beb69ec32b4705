//! The table of view keys on SQLite (the shape: `src/view_keys.rs`; the
//! statements, written once: `src/records/view_keys.rs`).

/// The table, appended to the store's migrations.
pub(crate) const MIGRATION: &str = r#"
    CREATE TABLE view_keys(
        hash TEXT PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        space TEXT NOT NULL,
        slug TEXT NOT NULL,
        expires_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX view_keys_expiry ON view_keys(expires_at);
"#;
