//! Applies the store's migrations (written once for both backends:
//! `src/migrations.rs`) to a PostgreSQL database, in order at start inside
//! one transaction under an advisory lock (two servers starting together
//! do not both migrate), and records them in `schema_migrations`.
//!
//! A database holding tables shed did not make is refused, and nothing is
//! written to it.

use deadpool_postgres::GenericClient;

use super::connect::{Target, failure};
use crate::StoreError;
use crate::migrations::{MIGRATIONS, Part, RECORD_TABLE, convert_some, on_postgres, pending};

/// The key of the advisory lock migrations are applied under ("shed").
const MIGRATION_LOCK: i64 = 0x7368_6564;

/// The schema version the database is at: the last migration recorded.
pub(crate) async fn version(c: &impl GenericClient) -> Result<i64, tokio_postgres::Error> {
    let sql = "SELECT COALESCE(MAX(version), 0)::BIGINT FROM schema_migrations";
    c.query_one(sql, &[]).await?.try_get(0)
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
    convert_per_app_tables(client, target).await
}

/// Converts every app a store made before migration 17 keeps in tables
/// of its own, each batch in a transaction of its own under the migration
/// lock ([`convert_some`]), until none is left.
async fn convert_per_app_tables(
    client: &mut deadpool_postgres::Client,
    target: &Target,
) -> Result<(), StoreError> {
    let failed = |e: tokio_postgres::Error| failure(target, &e);
    loop {
        let txn = client.transaction().await.map_err(failed)?;
        let tables = locked_tables(&txn, "AND tablename ~ '^ec_[0-9]+_'")
            .await
            .map_err(failed)?;
        let done = convert_some(&super::txn::Txn::Transaction(&txn), &tables).await?;
        txn.commit().await.map_err(failed)?;
        if done == 0 {
            return Ok(());
        }
    }
}

/// Takes the migration lock for the transaction, then answers the names
/// of the schema's tables, in order, `and` (an SQL condition on
/// `tablename` beginning `AND`, or nothing) narrowing them.
async fn locked_tables(
    txn: &impl GenericClient,
    and: &str,
) -> Result<Vec<String>, tokio_postgres::Error> {
    txn.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    let sql = format!(
        "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() {and} ORDER BY tablename"
    );
    txn.query(&sql, &[])
        .await?
        .iter()
        .map(|r| r.try_get(0))
        .collect()
}

/// [`migrate`] inside a transaction the caller commits (`shed migrate`
/// copies its rows in the same one); answers the schema version the
/// database was at.
pub(crate) async fn migrate_in(
    txn: &impl GenericClient,
    target: &Target,
) -> Result<usize, StoreError> {
    let failed = |e: tokio_postgres::Error| failure(target, &e);
    let tables = locked_tables(txn, "").await.map_err(failed)?;
    if !tables.is_empty() && !tables.iter().any(|t| t == "schema_migrations") {
        let shown: Vec<&str> = tables.iter().take(3).map(String::as_str).collect();
        return Err(StoreError::refused(format!(
            "the database {} at {} holds tables shed did not make ({}) — give shed an empty database of its own",
            target.database,
            target.address,
            shown.join(", ")
        )));
    }
    txn.batch_execute(&on_postgres(RECORD_TABLE))
        .await
        .map_err(failed)?;
    let done = version(txn).await.map_err(failed)?;
    let pending = pending(done)
        .map_err(|why| StoreError::refused(format!("the database {} {why}", target.database)))?;
    for (version, parts) in pending {
        apply(txn, parts, version).await.map_err(failed)?;
        tracing::debug!(version, "applied store migration");
    }
    Ok(done as usize)
}

/// Makes the empty database `url` names hold what migrations 1 to
/// `version` make, each recorded, and nothing else. For the tests of
/// upgrading a store made by an older shed ([`crate::at_schema_version`]).
pub async fn make_database_at(url: &str, version: usize) -> Result<(), StoreError> {
    let target = super::connect::parse(url)?;
    let failed = |e: tokio_postgres::Error| failure(&target, &e);
    let pool = super::new_pool(&target, target.config.clone(), 1)?;
    let mut client = super::connect::borrow(&pool, &target).await?;
    let txn = client.transaction().await.map_err(failed)?;
    txn.batch_execute(&on_postgres(RECORD_TABLE))
        .await
        .map_err(failed)?;
    for (i, parts) in MIGRATIONS.iter().enumerate().take(version) {
        apply(&txn, parts, i + 1).await.map_err(failed)?;
    }
    txn.commit().await.map_err(failed)
}

/// Runs the migration `parts` and records it as schema version `version`.
async fn apply(
    txn: &impl GenericClient,
    parts: &[Part],
    version: usize,
) -> Result<(), tokio_postgres::Error> {
    txn.batch_execute(&on_postgres(parts)).await?;
    txn.execute(
        "INSERT INTO schema_migrations(version, applied_at) VALUES($1, $2)",
        &[&(version as i64), &crate::records::now()],
    )
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use tokio_postgres::Client;

    use super::{MIGRATIONS, RECORD_TABLE};
    use crate::jobs::version_6;
    use crate::migrations::history::{self, Objects};
    use crate::migrations::on_postgres;
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
        db.batch_execute(&on_postgres(RECORD_TABLE)).await.unwrap();
        let mut versions = vec![objects(&db).await];
        for parts in MIGRATIONS {
            db.batch_execute(&on_postgres(parts)).await.unwrap();
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
        super::make_database_at(&url, 6).await.unwrap();
        let db = connect(&url).await;
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
