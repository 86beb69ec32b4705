//! Migrations 10 and 20: an app's life after its first deploy — its versions
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

/// Migration 20 on SQLite: `app_changes` also keeps a change of an app's
/// settings (`settings`), so a server hears of it as of a trash. SQLite
/// cannot change a table's check, so the table is made again under its
/// name, its rows and its last id kept.
pub(super) const SETTINGS_CHANGES_SQLITE: &str = r#"
    ALTER TABLE app_changes RENAME TO app_changes_before_settings;
    CREATE TABLE app_changes(
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        app TEXT NOT NULL,
        change TEXT NOT NULL CHECK(change IN ('trash', 'restore', 'purge', 'settings')),
        at TEXT NOT NULL,
        by TEXT NOT NULL REFERENCES people(eid)
    );
    INSERT INTO app_changes(id, app, change, at, by)
        SELECT id, app, change, at, by FROM app_changes_before_settings;
    DELETE FROM sqlite_sequence WHERE name = 'app_changes';
    UPDATE sqlite_sequence SET name = 'app_changes'
        WHERE name = 'app_changes_before_settings';
    DROP TABLE app_changes_before_settings;
"#;

/// Migration 20 on PostgreSQL: the same, by changing the check.
pub(super) const SETTINGS_CHANGES_POSTGRES: &str = r#"
    ALTER TABLE app_changes DROP CONSTRAINT app_changes_change_check,
        ADD CONSTRAINT app_changes_change_check
        CHECK(change IN ('trash', 'restore', 'purge', 'settings'));
"#;
