//! Migration 9: OAuth clients, codes and grants; a token's grant and
//! resource (the shapes: `src/oauth.rs`; the statements, written once:
//! `src/records/oauth.rs`).

/// The tables and columns, on both backends.
pub(super) const TABLES: &str = r#"
    CREATE TABLE oauth_clients(
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        redirect_uris TEXT NOT NULL,
        registered_at BIGINT NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE oauth_grants(
        id BIGSERIAL PRIMARY KEY,
        client TEXT NOT NULL,
        person TEXT NOT NULL REFERENCES people(eid),
        resource TEXT NOT NULL,
        refresh_hash TEXT UNIQUE,
        created_at BIGINT NOT NULL,
        revoked_at BIGINT
    );
    CREATE INDEX oauth_grants_person ON oauth_grants(person);
    CREATE TABLE oauth_codes(
        hash TEXT PRIMARY KEY,
        client TEXT NOT NULL,
        person TEXT NOT NULL REFERENCES people(eid),
        redirect_uri TEXT NOT NULL,
        challenge TEXT NOT NULL,
        resource TEXT NOT NULL,
        expires_at BIGINT NOT NULL,
        used_at BIGINT,
        grant_id BIGINT REFERENCES oauth_grants(id)
    ) WITHOUT ROWID;
    CREATE TABLE oauth_spent_refresh(
        hash TEXT PRIMARY KEY,
        grant_id BIGINT NOT NULL REFERENCES oauth_grants(id)
    ) WITHOUT ROWID;
    ALTER TABLE tokens ADD COLUMN grant_id BIGINT REFERENCES oauth_grants(id);
    ALTER TABLE tokens ADD COLUMN resource TEXT;
"#;
