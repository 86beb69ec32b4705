//! The tables of passkeys and their ceremonies' states on PostgreSQL (the
//! statements, written once: `src/records/passkeys.rs`).

/// The tables, appended to the store's migrations.
pub(super) const MIGRATION: &str = r#"
    CREATE TABLE passkeys(
        id BIGSERIAL PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        credential TEXT NOT NULL UNIQUE,
        passkey TEXT NOT NULL,
        name TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        last_used_at BIGINT
    );
    CREATE INDEX passkeys_person ON passkeys(person);
    CREATE TABLE passkey_ceremonies(
        hash TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK(kind IN ('register', 'sign-in')),
        person TEXT REFERENCES people(eid),
        name TEXT,
        state TEXT NOT NULL,
        expires_at BIGINT NOT NULL
    );
    CREATE INDEX passkey_ceremonies_expiry ON passkey_ceremonies(expires_at);
"#;

/// Where a ceremony was started from, appended to the store's migrations.
pub(super) const ADDRESS_MIGRATION: &str =
    "ALTER TABLE passkey_ceremonies ADD COLUMN address TEXT;";
