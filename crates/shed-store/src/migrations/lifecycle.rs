//! Migration 10: an app's life after its first deploy — its versions
//! rolled back, its trash and its purges — and the public URL a server
//! serves at (the shapes: `src/lifecycle.rs`; the statements, written once:
//! `src/records/lifecycle.rs`).

/// The columns and tables, on both backends.
pub(super) const TABLES: &str = r#"
    ALTER TABLE apps ADD COLUMN trashed_at TEXT;
    ALTER TABLE apps ADD COLUMN trashed_by TEXT REFERENCES people(eid);
    ALTER TABLE deploys ADD COLUMN rolls_back_to BIGINT;
    CREATE TABLE app_changes(
        id BIGSERIAL PRIMARY KEY AUTOINCREMENT,
        app TEXT NOT NULL,
        change TEXT NOT NULL CHECK(change IN ('trash', 'restore', 'purge')),
        at TEXT NOT NULL,
        by TEXT NOT NULL REFERENCES people(eid)
    );
    CREATE TABLE served_at(
        id INTEGER PRIMARY KEY CHECK(id = 1),
        public_url TEXT NOT NULL,
        at TEXT NOT NULL
    );
"#;
