//! Both backends' migrations (written once: `src/migrations.rs`; applied by
//! `sqlite/migrations.rs` and `postgres/migrations.rs`) as one schema: the same versions, and once applied the same tables with
//! the same columns in the same order, each read from its own catalog
//! (SQLite's `sqlite_master` and `pragma_table_info`, PostgreSQL's
//! `information_schema`) — but the full text, which each keeps its own
//! way (`ec_fts`: SQLite's FTS5 table and the tables FTS5 makes beside
//! it, PostgreSQL's table of `tsvector`s). Needs a PostgreSQL server: without
//! `SHED_TEST_DATABASE` it says so and passes.

use std::collections::{BTreeMap, BTreeSet};

/// A schema as the catalogs say it: each table's columns, in order; and
/// the versions recorded in `schema_migrations`.
struct Schema {
    versions: Vec<i64>,
    tables: BTreeMap<String, Vec<String>>,
}

/// `(table, column)` pairs, in each table's column order, as a map.
fn tables(pairs: impl IntoIterator<Item = (String, String)>) -> BTreeMap<String, Vec<String>> {
    let mut tables: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (table, column) in pairs {
        tables.entry(table).or_default().push(column);
    }
    tables
}

fn sqlite_schema(file: &std::path::Path) -> Schema {
    let conn = rusqlite::Connection::open(file).unwrap();
    let versions = conn
        .prepare("SELECT version FROM schema_migrations ORDER BY version")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let pairs: Vec<(String, String)> = conn
        .prepare(
            "SELECT m.name, c.name FROM sqlite_master m, pragma_table_info(m.name) c
             WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite!_%' ESCAPE '!'
             ORDER BY m.name, c.cid",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    Schema {
        versions,
        tables: tables(pairs),
    }
}

async fn postgres_schema(url: &str) -> Schema {
    let db = crate::common::server_client(url).await;
    let versions = db
        .query(
            "SELECT version FROM schema_migrations ORDER BY version",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let pairs = db
        .query(
            "SELECT table_name::text, column_name::text FROM information_schema.columns
             WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect::<Vec<_>>();
    Schema {
        versions,
        tables: tables(pairs),
    }
}

#[tokio::test]
async fn both_backends_migrate_to_the_same_versions_tables_and_columns() {
    let Some(url) = crate::common::fresh_database() else {
        eprintln!(
            "both_backends_migrate_to_the_same_versions_tables_and_columns: needs a PostgreSQL server, skipped without SHED_TEST_DATABASE"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("shed.db");
    let sqlite = shed_store::Store::open(&file).await.unwrap();
    sqlite.close().await.unwrap();
    let postgres = shed_store::Store::connect(&url).await.unwrap();
    postgres.close().await.unwrap();

    let (sqlite, postgres) = (sqlite_schema(&file), postgres_schema(&url).await);
    assert!(sqlite.versions.len() > 1 && sqlite.tables.contains_key("apps"));
    assert_eq!(sqlite.versions, postgres.versions, "the versions applied");
    let names: BTreeSet<&String> = sqlite
        .tables
        .keys()
        .chain(postgres.tables.keys())
        .filter(|t| !t.starts_with("ec_fts"))
        .collect();
    assert!(sqlite.tables.contains_key("ec_fts") && postgres.tables.contains_key("ec_fts"));
    for table in names {
        assert_eq!(
            sqlite.tables.get(table),
            postgres.tables.get(table),
            "table {table}: SQLite's columns (left), PostgreSQL's (right)"
        );
    }
}
