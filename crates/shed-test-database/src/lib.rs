//! shed-test-database: the one switch that runs shed's test suites on
//! PostgreSQL. Without `SHED_TEST_DATABASE` every test keeps its data in
//! SQLite in its temporary data folder, as shed does by default; with it
//! set to a server's URL (`postgres://user:password@host:port/postgres`,
//! which `scripts/postgres-cluster` exports), each data folder gets a
//! database of its own on that server, made on first use, so tests stay
//! independent and run in parallel. Only the test suites depend on it.

// Tests only use this crate: a test database that cannot be made stops the
// test there, saying why, as a test's own `expect` would.
#![allow(clippy::expect_used)]

use std::path::Path;

use sha2::{Digest, Sha256};
use tokio_postgres::error::SqlState;

/// The environment variable naming the server the tests run on.
pub const SWITCH: &str = "SHED_TEST_DATABASE";

/// The URL of the PostgreSQL server the tests run on, if they do.
pub fn server() -> Option<String> {
    std::env::var(SWITCH).ok().filter(|url| !url.is_empty())
}

/// Whether a test of SQLite's own files (the database file, its WAL, a
/// backup of it) runs: not when the tests run on PostgreSQL, which says
/// so on stderr, naming the test.
pub fn on_sqlite(test: &str) -> bool {
    let sqlite = server().is_none();
    if !sqlite {
        eprintln!("{test}: a test of SQLite's files, skipped on PostgreSQL");
    }
    sqlite
}

/// The database of the data folder `data` on the test server (`None` when
/// the tests run on SQLite): the same for every call with the same folder
/// — so a second host or process on one folder shares its data, as it
/// would share the SQLite file — made empty by the first.
pub fn for_folder(data: &Path) -> Option<String> {
    let folder = std::path::absolute(data).unwrap_or_else(|_| data.to_path_buf());
    let digest = Sha256::digest(folder.as_os_str().as_encoded_bytes());
    named(&hex::encode(digest)[..24])
}

/// A new, empty database on the test server for a test that has no data
/// folder of its own (`None` on SQLite).
pub fn fresh() -> Option<String> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let count = COUNT.fetch_add(1, Ordering::Relaxed);
    named(&format!("{}_{nanos}_{count}", std::process::id()))
}

/// The URL of the database `shed_test_<suffix>` on the test server, made
/// unless it is there already: the server's URL with the database's name
/// in place of its own, its parameters (`sslmode`, `sslrootcert`) kept.
fn named(suffix: &str) -> Option<String> {
    let server = server()?;
    let name = format!("shed_test_{suffix}");
    create(&server, &name);
    let (place, parameters) = match server.split_once('?') {
        Some((place, parameters)) => (place, format!("?{parameters}")),
        None => (server.as_str(), String::new()),
    };
    let (base, _) = place
        .rsplit_once('/')
        .expect("SHED_TEST_DATABASE names a database: postgres://…/postgres");
    Some(format!("{base}/{name}{parameters}"))
}

/// Makes the database `name` on `server` unless it is there already. It
/// runs on a thread of its own with its own runtime, so a test may call it
/// from synchronous code and from inside any async runtime alike.
fn create(server: &str, name: &str) {
    let (server, name) = (server.to_string(), name.to_string());
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for making the test database");
        runtime.block_on(async {
            // Connected as shed connects, so the server may ask for TLS.
            let client = shed_store::connect_to_server(&server)
                .await
                .unwrap_or_else(|e| panic!("the test database server {SWITCH} names answers: {e}"));
            match client
                .batch_execute(&format!("CREATE DATABASE {name}"))
                .await
            {
                Ok(()) => {}
                Err(e) if e.code() == Some(&SqlState::DUPLICATE_DATABASE) => {}
                Err(e) => panic!("could not make the test database {name}: {e}"),
            }
        });
    })
    .join()
    .expect("the test database is made");
}
