//! Migrations 12 and 13: passkeys and their ceremonies' states (the
//! statements, written once: `src/records/passkeys.rs`).

/// The tables, on both backends (migration 12).
pub(super) const TABLES: &str = r#"
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
    ) WITHOUT ROWID;
    CREATE INDEX passkey_ceremonies_expiry ON passkey_ceremonies(expires_at);
"#;

/// Where a ceremony was started from, so live sign-ins are capped per
/// address (migration 13).
pub(super) const ADDRESS: &str = "ALTER TABLE passkey_ceremonies ADD COLUMN address TEXT;";
