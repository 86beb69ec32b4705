//! Migrations 4, 5 and 11: the web's sign-in links, hops and sessions (the
//! shapes: `src/web_sessions.rs`; the statements, written once:
//! `src/records/sign_ins.rs`).

/// The tables, on both backends (migration 4).
pub(super) const TABLES: &str = r#"
    CREATE TABLE web_links(
        hash TEXT PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        expires_at BIGINT NOT NULL,
        used INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID;
    CREATE TABLE web_hops(
        hash TEXT PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        space TEXT NOT NULL,
        expires_at BIGINT NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE web_sessions(
        hash TEXT PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        space TEXT NOT NULL,
        expires_at BIGINT NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX web_sessions_person ON web_sessions(person);
"#;

/// Hops bound to a browser, on both backends (migration 5): `hash` is the
/// hop's code, then the code the space's host hands back; `handoff` the
/// hash of the platform host's hand-off cookie; `browser` the hash of the
/// space host's own cookie, once it has seen the code; `confirmed` set
/// once the platform's host saw its hand-off cookie with it. Hops live two
/// minutes, so the unbound ones of an older database are let go.
pub(super) const BOUND_HOPS: &str = r#"
    DROP TABLE web_hops;
    CREATE TABLE web_hops(
        hash TEXT PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        space TEXT NOT NULL,
        handoff TEXT NOT NULL,
        browser TEXT,
        confirmed INTEGER NOT NULL DEFAULT 0,
        expires_at BIGINT NOT NULL
    ) WITHOUT ROWID;
"#;

/// Sessions a person can tell apart, on both backends (migration 11): the
/// sign-in each belongs to (shared by the platform host's session and
/// those its hops made on the space hosts; a hop carries it), the
/// browser's `User-Agent` at sign-in, when it was made and when it was
/// last seen. Sessions kept before were made thirty days before they end,
/// and seen then.
pub(super) const SESSIONS_SEEN: &str = r#"
    ALTER TABLE web_sessions ADD COLUMN sign_in TEXT NOT NULL DEFAULT '';
    ALTER TABLE web_sessions ADD COLUMN user_agent TEXT;
    ALTER TABLE web_sessions ADD COLUMN created_at BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE web_sessions ADD COLUMN last_seen BIGINT NOT NULL DEFAULT 0;
    CREATE INDEX web_sessions_sign_in ON web_sessions(person, sign_in);
    ALTER TABLE web_hops ADD COLUMN sign_in TEXT;
    UPDATE web_sessions SET created_at = expires_at - 2592000, last_seen = expires_at - 2592000;
"#;

/// Sessions kept before get a sign-in each, 16 random hex digits — on
/// SQLite (migration 11)…
pub(super) const SIGN_INS_SQLITE: &str =
    "UPDATE web_sessions SET sign_in = lower(hex(randomblob(8)));";

/// …and on PostgreSQL.
pub(super) const SIGN_INS_POSTGRES: &str =
    "UPDATE web_sessions SET sign_in = substr(md5(random()::text || hash), 1, 16);";
