//! The versioned schema of a PostgreSQL database of shed's, applied in order
//! at start inside one transaction under an advisory lock (two servers
//! starting together do not both migrate), and recorded in
//! `schema_migrations`. Entries are only ever appended. The tables are
//! SQLite's (`sqlite/migrations.rs`) in PostgreSQL's types; each app's
//! component tables are created at declare or first use.
//!
//! A database holding tables shed did not make is refused, and nothing is
//! written to it.

use deadpool_postgres::GenericClient;

use super::connect::{Target, failure};
use crate::{NotReady, StoreError};

/// The key of the advisory lock migrations are applied under ("shed").
const MIGRATION_LOCK: i64 = 0x7368_6564;

/// Every migration, in order; entry `i` is schema version `i + 1`, the same
/// change as SQLite's entry `i` (`sqlite/migrations.rs`).
const MIGRATIONS: &[&str] = &[
    // 1: people, and the entity–component catalog shared by every app.
    r#"
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
    CREATE INDEX ec_entities_app ON ec_entities(app, id);
    CREATE TABLE ec_edges(
        src BIGINT NOT NULL REFERENCES ec_entities(id),
        rel TEXT NOT NULL,
        dst TEXT NOT NULL,
        PRIMARY KEY(src, rel, dst)
    );
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
    );
    "#,
    // 2: the platform's own tables: spaces, members, apps, deploys and their
    // files, drafts, tokens, listed tool fingerprints.
    r#"
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
    );
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
        id BIGSERIAL PRIMARY KEY,
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
    );
    CREATE TABLE drafts(
        space BIGINT NOT NULL REFERENCES spaces(id),
        app TEXT NOT NULL,
        path TEXT NOT NULL,
        content BYTEA,
        PRIMARY KEY(space, app, path)
    );
    CREATE TABLE tokens(
        id BIGSERIAL PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        hash TEXT UNIQUE NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE listed_tools(
        caller TEXT PRIMARY KEY,
        fingerprint TEXT NOT NULL
    );
    "#,
    // 3: jobs, the agents' runs the broker holds.
    r#"
    CREATE TABLE jobs(
        id TEXT PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        allow TEXT NOT NULL,
        read_only TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT,
        ended_at BIGINT
    );
    CREATE INDEX jobs_created ON jobs(created_at);
    "#,
    // 4: the web's sign-in links, hops and sessions.
    r#"
    CREATE TABLE web_links(
        hash TEXT PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        expires_at BIGINT NOT NULL,
        used INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE web_hops(
        hash TEXT PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        space TEXT NOT NULL,
        expires_at BIGINT NOT NULL
    );
    CREATE TABLE web_sessions(
        hash TEXT PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        space TEXT NOT NULL,
        expires_at BIGINT NOT NULL
    );
    CREATE INDEX web_sessions_person ON web_sessions(person);
    "#,
    // 5: hops bound to the browser that pressed the sign-in button.
    r#"
    DROP TABLE web_hops;
    CREATE TABLE web_hops(
        hash TEXT PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        space TEXT NOT NULL,
        handoff TEXT NOT NULL,
        browser TEXT,
        confirmed INTEGER NOT NULL DEFAULT 0,
        expires_at BIGINT NOT NULL
    );
    "#,
    // 6: the keys that let a view load its private app's files.
    r#"
    CREATE TABLE view_keys(
        hash TEXT PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        space TEXT NOT NULL,
        slug TEXT NOT NULL,
        expires_at BIGINT NOT NULL
    );
    CREATE INDEX view_keys_expiry ON view_keys(expires_at);
    "#,
    // 7: a job's public name, and only its secret's hash kept; rows that
    // named an agent by the secret name it by the name (`src/jobs.rs`).
    // PostgreSQL hashes in SQL (`sha256`), where SQLite needs a Rust step.
    // Jobs kept before are numbered in the order they were made. The old
    // table's file is removed with it; the old versions of the rewritten
    // rows are the server's to reclaim (autovacuum), as any update's are.
    r#"
    ALTER TABLE jobs RENAME TO jobs_keyed_by_secret;
    DROP INDEX jobs_created;
    CREATE TABLE jobs(
        num BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        secret_hash TEXT NOT NULL UNIQUE,
        person TEXT NOT NULL REFERENCES people(eid),
        allow TEXT NOT NULL,
        read_only TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT,
        ended_at BIGINT
    );
    INSERT INTO jobs(num, secret_hash, person, allow, read_only, created_at, expires_at, ended_at)
        SELECT row_number() OVER (ORDER BY created_at, id COLLATE "C"),
               encode(sha256(convert_to(id, 'UTF8')), 'hex'),
               person, allow, read_only, created_at, expires_at, ended_at
        FROM jobs_keyed_by_secret;
    SELECT setval(pg_get_serial_sequence('jobs', 'num'), COALESCE(MAX(num), 0) + 1, false) FROM jobs;
    CREATE TEMPORARY TABLE renamed_agents ON COMMIT DROP AS
        SELECT 'agent:' || o.id AS old, 'agent:job-' || j.num AS new
        FROM jobs_keyed_by_secret o
        JOIN jobs j ON j.secret_hash = encode(sha256(convert_to(o.id, 'UTF8')), 'hex');
    UPDATE ec_entities SET created_via = r.new FROM renamed_agents r
        WHERE ec_entities.created_via = r.old;
    UPDATE ec_entities SET updated_via = r.new FROM renamed_agents r
        WHERE ec_entities.updated_via = r.old;
    UPDATE ec_history SET via = r.new FROM renamed_agents r
        WHERE ec_history.via = r.old;
    UPDATE listed_tools SET caller = r.new FROM renamed_agents r
        WHERE listed_tools.caller = r.old;
    DROP TABLE jobs_keyed_by_secret;
    CREATE INDEX jobs_created ON jobs(created_at);
    "#,
    // 8: tokens named, expiring and revoked; removed people (`src/revocable.rs`).
    r#"
    ALTER TABLE tokens ADD COLUMN name TEXT;
    ALTER TABLE tokens ADD COLUMN expires_at BIGINT;
    ALTER TABLE tokens ADD COLUMN last_used_at BIGINT;
    ALTER TABLE tokens ADD COLUMN revoked_at BIGINT;
    CREATE INDEX tokens_person ON tokens(person);
    CREATE TABLE removed_people(
        eid TEXT PRIMARY KEY REFERENCES people(eid),
        at BIGINT NOT NULL
    );
    "#,
    // 9: OAuth clients, codes and grants; a token's grant and resource
    // (`src/oauth.rs`).
    r#"
    CREATE TABLE oauth_clients(
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        redirect_uris TEXT NOT NULL,
        registered_at BIGINT NOT NULL
    );
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
    );
    CREATE TABLE oauth_spent_refresh(
        hash TEXT PRIMARY KEY,
        grant_id BIGINT NOT NULL REFERENCES oauth_grants(id)
    );
    ALTER TABLE tokens ADD COLUMN grant_id BIGINT REFERENCES oauth_grants(id);
    ALTER TABLE tokens ADD COLUMN resource TEXT;
    "#,
    // 10: an app's versions rolled back, its trash and its purges; the
    // public URL a server serves at (`src/lifecycle.rs`).
    r#"
    ALTER TABLE apps ADD COLUMN trashed_at TEXT;
    ALTER TABLE apps ADD COLUMN trashed_by TEXT REFERENCES people(eid);
    ALTER TABLE deploys ADD COLUMN rolls_back_to BIGINT;
    CREATE TABLE app_changes(
        id BIGSERIAL PRIMARY KEY,
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
    "#,
    // 11: sessions a person can tell apart: the sign-in each belongs to,
    // the browser, when made and last seen (`postgres/records.rs`).
    r#"
    ALTER TABLE web_sessions ADD COLUMN sign_in TEXT NOT NULL DEFAULT '';
    ALTER TABLE web_sessions ADD COLUMN user_agent TEXT;
    ALTER TABLE web_sessions ADD COLUMN created_at BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE web_sessions ADD COLUMN last_seen BIGINT NOT NULL DEFAULT 0;
    UPDATE web_sessions SET sign_in = substr(md5(random()::text || hash), 1, 16),
        created_at = expires_at - 2592000, last_seen = expires_at - 2592000;
    CREATE INDEX web_sessions_sign_in ON web_sessions(person, sign_in);
    ALTER TABLE web_hops ADD COLUMN sign_in TEXT;
    "#,
    // 12: passkeys and their ceremonies' states (`postgres/passkeys.rs`).
    super::passkeys::MIGRATION,
    // 13: where a ceremony was started from, so live sign-ins are capped
    // per address (`postgres/passkeys.rs`).
    super::passkeys::ADDRESS_MIGRATION,
];

/// Whether every migration this program knows is applied: a sentence
/// saying how far the database is when not.
pub(crate) async fn applied(c: &impl GenericClient) -> Result<(), NotReady> {
    let not_ready = |e: tokio_postgres::Error| {
        NotReady(format!(
            "the database does not answer: {}",
            StoreError::from(e)
        ))
    };
    let done: i64 = c
        .query_one(
            "SELECT COALESCE(MAX(version), 0)::BIGINT FROM schema_migrations",
            &[],
        )
        .await
        .and_then(|r| r.try_get(0))
        .map_err(not_ready)?;
    if done as usize == MIGRATIONS.len() {
        return Ok(());
    }
    Err(NotReady::behind(done, MIGRATIONS.len()))
}

/// Brings the database up to the last migration, all in one transaction
/// under the migration lock; refuses a database holding another program's
/// tables.
pub(crate) async fn migrate(
    client: &mut deadpool_postgres::Client,
    target: &Target,
) -> Result<(), StoreError> {
    let failed = |e: tokio_postgres::Error| failure(target, &e);
    let txn = client.transaction().await.map_err(failed)?;
    let was_at = migrate_in(&txn, target).await?;
    txn.commit().await.map_err(failed)?;
    crate::migrations::log_applied(was_at, MIGRATIONS.len());
    Ok(())
}

/// [`migrate`] inside a transaction the caller commits (`shed migrate`
/// copies its rows in the same one); answers the schema version the
/// database was at.
pub(crate) async fn migrate_in(
    txn: &impl GenericClient,
    target: &Target,
) -> Result<usize, StoreError> {
    let failed = |e: tokio_postgres::Error| failure(target, &e);
    txn.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(failed)?;
    let tables: Vec<String> = txn
        .query(
            "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename",
            &[],
        )
        .await
        .map_err(failed)?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<Result<_, _>>()
        .map_err(failed)?;
    if !tables.is_empty() && !tables.iter().any(|t| t == "schema_migrations") {
        let shown: Vec<&str> = tables.iter().take(3).map(String::as_str).collect();
        return Err(StoreError::refused(format!(
            "the database {} at {} holds tables shed did not make ({}) — give shed an empty database of its own",
            target.database,
            target.address,
            shown.join(", ")
        )));
    }
    txn.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations(
            version BIGINT PRIMARY KEY,
            applied_at TEXT NOT NULL
        )",
    )
    .await
    .map_err(failed)?;
    let done: i64 = txn
        .query_one(
            "SELECT COALESCE(MAX(version), 0)::BIGINT FROM schema_migrations",
            &[],
        )
        .await
        .and_then(|r| r.try_get(0))
        .map_err(failed)?;
    if done as usize > MIGRATIONS.len() {
        return Err(StoreError::refused(format!(
            "the database {} is at schema version {done}, newer than this program knows ({}) — run a newer shed",
            target.database,
            MIGRATIONS.len()
        )));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(done as usize) {
        txn.batch_execute(sql).await.map_err(failed)?;
        txn.execute(
            "INSERT INTO schema_migrations(version, applied_at) VALUES($1, $2)",
            &[&(i as i64 + 1), &crate::records::now()],
        )
        .await
        .map_err(failed)?;
        tracing::debug!(version = i + 1, "applied store migration");
    }
    Ok(done as usize)
}

#[cfg(test)]
mod tests {
    use tokio_postgres::Client;

    use super::MIGRATIONS;
    use crate::jobs::version_6;
    use crate::migrations::history::{self, Objects};
    use crate::records::Jobs;

    /// What the catalog of `db`'s schema holds: each column's place, type,
    /// nullability, default and identity; each index's and constraint's
    /// definition.
    async fn objects(db: &Client) -> Objects {
        let catalog = [
            "SELECT 'column ' || table_name || '.' || column_name,
                 '#' || ordinal_position || ' ' || data_type || ' nullable ' || is_nullable
                 || ' default ' || COALESCE(column_default, '-')
                 || ' identity ' || is_identity || ' ' || COALESCE(identity_generation, '-')
             FROM information_schema.columns WHERE table_schema = current_schema()",
            "SELECT 'index ' || indexname || ' on ' || tablename, indexdef
             FROM pg_indexes WHERE schemaname = current_schema()",
            "SELECT 'constraint ' || conname || ' on ' || conrelid::regclass::text,
                 pg_get_constraintdef(oid)
             FROM pg_constraint WHERE connamespace = current_schema()::regnamespace",
        ];
        let mut objects = Objects::new();
        for sql in catalog {
            for row in db.query(sql, &[]).await.unwrap() {
                objects.insert(row.get(0), row.get(1));
            }
        }
        objects
    }

    // Every schema version makes what the code that made the databases out
    // there made (`tests/schema/postgres.txt`). Runs on the server
    // `SHED_TEST_DATABASE` names.
    #[tokio::test]
    async fn each_version_makes_the_schema_checked_in() {
        let Some(url) = shed_test_database::fresh() else {
            eprintln!("a test of PostgreSQL's migrations, skipped without SHED_TEST_DATABASE");
            return;
        };
        let db = connect(&url).await;
        db.batch_execute(
            "CREATE TABLE schema_migrations(version BIGINT PRIMARY KEY, applied_at TEXT NOT NULL)",
        )
        .await
        .unwrap();
        let mut versions = vec![objects(&db).await];
        for sql in MIGRATIONS {
            db.batch_execute(sql).await.unwrap();
            versions.push(objects(&db).await);
        }
        history::check("postgres.txt", &versions);
    }

    async fn connect(url: &str) -> Client {
        crate::connect_to_server(url).await.unwrap()
    }

    /// A new database on the test server (`SHED_TEST_DATABASE`), as shed
    /// left one before jobs had names (schema version 6, holding
    /// [`version_6::rows`]): its URL.
    async fn a_database_of_version_6() -> Option<String> {
        let url = shed_test_database::fresh()?;
        let db = connect(&url).await;
        db.batch_execute(
            "CREATE TABLE schema_migrations(version BIGINT PRIMARY KEY, applied_at TEXT NOT NULL)",
        )
        .await
        .unwrap();
        for (i, sql) in MIGRATIONS[..6].iter().enumerate() {
            db.batch_execute(sql).await.unwrap();
            db.execute(
                "INSERT INTO schema_migrations(version, applied_at) VALUES($1, 'then')",
                &[&(i as i64 + 1)],
            )
            .await
            .unwrap();
        }
        db.batch_execute(&version_6::rows()).await.unwrap();
        Some(url)
    }

    // Migration 7 on PostgreSQL, as SQLite's: jobs kept before are named in
    // the order they were made, their secrets keep working (their hash is
    // kept), and every row that named an agent by its secret names it by
    // its name. Runs on the server `SHED_TEST_DATABASE` names.
    #[tokio::test]
    async fn jobs_kept_before_get_names_and_no_row_names_their_secrets() {
        let (older, newer) = (version_6::OLDER, version_6::NEWER);
        let Some(url) = a_database_of_version_6().await else {
            eprintln!("a test of PostgreSQL's migrations, skipped without SHED_TEST_DATABASE");
            return;
        };

        let store = super::super::Postgres::open(&url).await.unwrap();
        let jobs = store.jobs().await.unwrap();
        assert_eq!(jobs, version_6::jobs());
        for (secret, name) in [(older, "job-1"), (newer, "job-2")] {
            let found = store
                .job_by_secret_hash(&crate::secret_hash(secret))
                .await
                .unwrap();
            assert_eq!(found.map(|j| j.name).as_deref(), Some(name));
        }
        // A new job counts on from the old ones.
        let next = store
            .add_job(crate::secret_hash("s3"), jobs[0].terms.clone())
            .await
            .unwrap();
        assert_eq!(next.name, "job-3");

        let db = connect(&url).await;
        let stamps = db
            .query_one(
                "SELECT created_via, updated_via FROM ec_entities WHERE eid = 'e1'",
                &[],
            )
            .await
            .unwrap();
        assert_eq!(
            (stamps.get::<_, &str>(0), stamps.get::<_, &str>(1)),
            version_6::STAMPS
        );
        let vias: Vec<Option<String>> = db
            .query("SELECT via FROM ec_history ORDER BY app_version", &[])
            .await
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert_eq!(vias, version_6::vias());
        let callers: Vec<String> = db
            .query("SELECT caller FROM listed_tools ORDER BY caller", &[])
            .await
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert_eq!(callers, version_6::CALLERS);
        let tables: i64 = db
            .query_one(
                "SELECT COUNT(*) FROM pg_tables WHERE tablename = 'jobs_keyed_by_secret'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(tables, 0, "the table that held the secrets is gone");
    }
}
