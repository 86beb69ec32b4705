//! OAuth's tables on SQLite (the shapes: `src/oauth.rs`; the statements,
//! written once: `src/records/oauth.rs`).

/// The tables, appended to the store's migrations.
pub(crate) const MIGRATION: &str = r#"
    CREATE TABLE oauth_clients(
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        redirect_uris TEXT NOT NULL,
        registered_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE oauth_grants(
        id INTEGER PRIMARY KEY,
        client TEXT NOT NULL,
        person TEXT NOT NULL REFERENCES people(eid),
        resource TEXT NOT NULL,
        refresh_hash TEXT UNIQUE,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
    );
    CREATE INDEX oauth_grants_person ON oauth_grants(person);
    CREATE TABLE oauth_codes(
        hash TEXT PRIMARY KEY,
        client TEXT NOT NULL,
        person TEXT NOT NULL REFERENCES people(eid),
        redirect_uri TEXT NOT NULL,
        challenge TEXT NOT NULL,
        resource TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER,
        grant_id INTEGER REFERENCES oauth_grants(id)
    ) WITHOUT ROWID;
    CREATE TABLE oauth_spent_refresh(
        hash TEXT PRIMARY KEY,
        grant_id INTEGER NOT NULL REFERENCES oauth_grants(id)
    ) WITHOUT ROWID;
    ALTER TABLE tokens ADD COLUMN grant_id INTEGER REFERENCES oauth_grants(id);
    ALTER TABLE tokens ADD COLUMN resource TEXT;
"#;
