//! Migration 2: the platform's own tables — spaces and their members, apps
//! and their deploys (a deploy's files kept as rows), the drafts of an
//! app's next deploy, bearer tokens (stored as sha256 hex only), and the
//! tool-list fingerprint a caller last listed under (the statements,
//! written once: `src/records/platform.rs`).

/// The tables, on both backends.
pub(super) const TABLES: &str = r#"
    CREATE TABLE spaces(
        id BIGSERIAL PRIMARY KEY,
        slug TEXT UNIQUE NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE members(
        space BIGINT NOT NULL REFERENCES spaces(id),
        person TEXT NOT NULL REFERENCES people(eid),
        role TEXT NOT NULL CHECK(role IN ('owner', 'editor', 'viewer')),
        PRIMARY KEY(space, person)
    ) WITHOUT ROWID;
    CREATE INDEX members_person ON members(person);
    CREATE TABLE apps(
        id BIGSERIAL PRIMARY KEY,
        space BIGINT NOT NULL REFERENCES spaces(id),
        slug TEXT NOT NULL,
        title TEXT NOT NULL,
        access TEXT NOT NULL CHECK(access IN ('private', 'public', 'open')),
        version BIGINT NOT NULL,
        deploy BIGINT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE(space, slug)
    );
    CREATE TABLE deploys(
        id BIGSERIAL PRIMARY KEY AUTOINCREMENT,
        app BIGINT NOT NULL REFERENCES apps(id),
        version BIGINT NOT NULL,
        at TEXT NOT NULL,
        by TEXT NOT NULL,
        UNIQUE(app, version)
    );
    CREATE TABLE deploy_files(
        deploy BIGINT NOT NULL REFERENCES deploys(id),
        path TEXT NOT NULL,
        content BYTEA NOT NULL,
        PRIMARY KEY(deploy, path)
    ) WITHOUT ROWID;
    CREATE TABLE drafts(
        space BIGINT NOT NULL REFERENCES spaces(id),
        app TEXT NOT NULL,
        path TEXT NOT NULL,
        content BYTEA,
        PRIMARY KEY(space, app, path)
    ) WITHOUT ROWID;
    CREATE TABLE tokens(
        id BIGSERIAL PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        hash TEXT UNIQUE NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE listed_tools(
        caller TEXT PRIMARY KEY,
        fingerprint TEXT NOT NULL
    ) WITHOUT ROWID;
"#;
