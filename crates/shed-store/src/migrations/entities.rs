//! Migration 1: people, and the entity–component catalog shared by every
//! app. Until migration 17 (`layout.rs`) each app's component tables
//! (`ec_<app id>_<component>`) and its doc full-text table were made at
//! declare or first use, not here.

/// The tables, on both backends.
pub(super) const TABLES: &str = r#"
    CREATE TABLE people(
        eid TEXT PRIMARY KEY,
        handle TEXT UNIQUE NOT NULL,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE ec_apps(
        id BIGSERIAL PRIMARY KEY,
        name TEXT UNIQUE NOT NULL,
        version BIGINT NOT NULL DEFAULT 0,
        last_num BIGINT NOT NULL DEFAULT 0
    );
    CREATE TABLE ec_columns(
        app BIGINT NOT NULL REFERENCES ec_apps(id),
        component TEXT NOT NULL,
        name TEXT NOT NULL,
        type TEXT NOT NULL,
        position BIGINT NOT NULL,
        PRIMARY KEY(app, component, name)
    );
    CREATE TABLE ec_components(
        app BIGINT NOT NULL REFERENCES ec_apps(id),
        name TEXT NOT NULL,
        position BIGINT NOT NULL,
        PRIMARY KEY(app, name)
    );
    CREATE TABLE ec_entities(
        id BIGSERIAL PRIMARY KEY,
        app BIGINT NOT NULL REFERENCES ec_apps(id),
        eid TEXT NOT NULL,
        num BIGINT NOT NULL,
        version BIGINT NOT NULL,
        alias TEXT,
        created_at BIGINT NOT NULL,
        created_by TEXT NOT NULL,
        created_via TEXT,
        updated_at BIGINT NOT NULL,
        updated_by TEXT NOT NULL,
        updated_via TEXT,
        tombstoned INTEGER NOT NULL DEFAULT 0,
        UNIQUE(app, eid)
    );
    CREATE UNIQUE INDEX ec_entities_alias ON ec_entities(app, alias) WHERE alias IS NOT NULL;
    CREATE TABLE ec_edges(
        src BIGINT NOT NULL REFERENCES ec_entities(id),
        rel TEXT NOT NULL,
        dst TEXT NOT NULL,
        PRIMARY KEY(src, rel, dst)
    ) WITHOUT ROWID;
    CREATE INDEX ec_edges_to ON ec_edges(rel, dst);
    CREATE TABLE ec_history(
        entity BIGINT NOT NULL REFERENCES ec_entities(id),
        app_version BIGINT NOT NULL,
        step BIGINT NOT NULL,
        version BIGINT NOT NULL,
        at BIGINT NOT NULL,
        by TEXT NOT NULL,
        via TEXT,
        change TEXT NOT NULL,
        PRIMARY KEY(entity, app_version, step)
    ) WITHOUT ROWID;
"#;

/// An app's entities in id order, on PostgreSQL alone: SQLite's table is
/// its rowid's tree, already in that order.
pub(super) const BY_APP_POSTGRES: &str = "CREATE INDEX ec_entities_app ON ec_entities(app, id);";

/// Migration 15: the edges pointing at an entity, found by their `dst`
/// (the entity's page lists them; `ec_edges_to` leads with `rel`), in the
/// order the page lists them.
pub(super) const EDGES_IN: &str = "CREATE INDEX ec_edges_in ON ec_edges(dst, rel, src);";
