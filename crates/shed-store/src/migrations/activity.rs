//! Migration 14: what happened in a space — every write to an app's data
//! as one row (who, through which door, command and client, the entities
//! it wrote), and the calls the rule book or a job's scope refused, kept
//! for a while (the shapes: `src/activity.rs`; the statements, written
//! once: `src/records/activity.rs`).
//!
//! A write's `id` orders every write (one sequence), but no index has it
//! alone on PostgreSQL: its key is `(app, version)`, and an app's writes
//! are read newest first through `(app, id)` or, narrowed,
//! `(app, via|by|command, id)`. An index on `id` alone would be the
//! planner's choice for "the 51 newest" whenever its statistics guess the
//! narrowing common, and then it walks every write of an app looking for
//! an agent's that are not there (6 ms at 20,000 writes, growing with
//! them). SQLite's `id` is its rowid, which its planner passes over for
//! an index its equalities pin.

/// `ec_writes` on SQLite: the rowid hands out the ids.
pub(super) const WRITES_SQLITE: &str = r#"
    CREATE TABLE ec_writes(
        id INTEGER PRIMARY KEY,
        space TEXT NOT NULL,
        app TEXT NOT NULL,
        version INTEGER NOT NULL,
        at INTEGER NOT NULL,
        by TEXT NOT NULL,
        via TEXT,
        door TEXT NOT NULL,
        command TEXT,
        client TEXT,
        entities TEXT NOT NULL,
        UNIQUE(app, version)
    );
"#;

/// `ec_writes` on PostgreSQL: a sequence hands out the ids, the key is
/// the write's name.
pub(super) const WRITES_POSTGRES: &str = r#"
    CREATE TABLE ec_writes(
        id BIGSERIAL NOT NULL,
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
        PRIMARY KEY(app, version)
    );
"#;

/// The writes' indexes and the refusals, on both backends.
pub(super) const TABLES: &str = r#"
    CREATE INDEX ec_writes_app ON ec_writes(app, id);
    CREATE INDEX ec_writes_app_via ON ec_writes(app, via, id) WHERE via IS NOT NULL;
    CREATE INDEX ec_writes_app_by ON ec_writes(app, by, id);
    CREATE INDEX ec_writes_app_command ON ec_writes(app, command, id);
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

/// Migration 16: a caller's recent refusals in a space, counted by index
/// before one more is kept (`REFUSALS_KEPT_PER_CALLER`): at most that many
/// entries read, however many the space keeps.
pub(super) const BY_CALLER: &str = r#"
    CREATE INDEX refusals_caller ON refusals(space, by, via, at);
"#;
