//! Migration 14: what happened in a space — every write to an app's data
//! as one row (who, through which door, command and client, the entities
//! it wrote), and the calls the rule book or a job's scope refused, kept
//! for a while (the shapes: `src/activity.rs`; the statements, written
//! once: `src/records/activity.rs`).

/// The tables, on both backends.
pub(super) const TABLES: &str = r#"
    CREATE TABLE ec_writes(
        id BIGSERIAL PRIMARY KEY,
        space TEXT NOT NULL,
        app TEXT NOT NULL,
        version BIGINT NOT NULL,
        at BIGINT NOT NULL,
        by TEXT NOT NULL,
        via TEXT,
        door TEXT NOT NULL,
        command TEXT,
        client TEXT,
        entities TEXT NOT NULL,
        UNIQUE(app, version)
    );
    CREATE INDEX ec_writes_app ON ec_writes(app, id);
    CREATE TABLE refusals(
        id BIGSERIAL PRIMARY KEY,
        space TEXT NOT NULL,
        app TEXT NOT NULL,
        at BIGINT NOT NULL,
        by TEXT NOT NULL,
        via TEXT,
        door TEXT NOT NULL,
        client TEXT,
        command TEXT NOT NULL,
        sentence TEXT NOT NULL
    );
    CREATE INDEX refusals_space ON refusals(space, id);
"#;
