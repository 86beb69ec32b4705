//! The columns and table of what can be taken back on SQLite (the shapes:
//! `src/revocable.rs`; the statements, written once:
//! `src/records/revocable.rs`).

/// The columns and table, appended to the store's migrations.
pub(crate) const MIGRATION: &str = r#"
    ALTER TABLE tokens ADD COLUMN name TEXT;
    ALTER TABLE tokens ADD COLUMN expires_at INTEGER;
    ALTER TABLE tokens ADD COLUMN last_used_at INTEGER;
    ALTER TABLE tokens ADD COLUMN revoked_at INTEGER;
    CREATE INDEX tokens_person ON tokens(person);
    CREATE TABLE removed_people(
        eid TEXT PRIMARY KEY REFERENCES people(eid),
        at INTEGER NOT NULL
    ) WITHOUT ROWID;
"#;
