//! Migration 8: what can be taken back — tokens named, expiring and
//! revoked; removed people (the shapes: `src/revocable.rs`; the statements,
//! written once: `src/records/revocable.rs`).

/// The columns and table, on both backends.
pub(super) const COLUMNS: &str = r#"
    ALTER TABLE tokens ADD COLUMN name TEXT;
    ALTER TABLE tokens ADD COLUMN expires_at BIGINT;
    ALTER TABLE tokens ADD COLUMN last_used_at BIGINT;
    ALTER TABLE tokens ADD COLUMN revoked_at BIGINT;
    CREATE INDEX tokens_person ON tokens(person);
    CREATE TABLE removed_people(
        eid TEXT PRIMARY KEY REFERENCES people(eid),
        at BIGINT NOT NULL
    ) WITHOUT ROWID;
"#;
