//! Where the sheds a test starts keep their data: the data folder's SQLite
//! file, or — when `SHED_TEST_DATABASE` names a PostgreSQL server — that
//! folder's own database there (`shed-test-database`), given to every
//! `shed` started on the folder as `SHED_DATABASE_URL`, so each test has a
//! database of its own and every process on one folder shares it.

use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use std::process::Command;

use shed_store::Store;

pub use shed_test_database::on_sqlite;

/// Whether the tests run on the PostgreSQL server `SHED_TEST_DATABASE` names.
pub fn on_server() -> bool {
    shed_test_database::server().is_some()
}

/// Starting `shed` on a data folder.
pub trait DataIn {
    /// `SHED_DATA`, and on the test server `SHED_DATABASE_URL`.
    fn data_in(&mut self, data: &Path) -> &mut Self;
    /// `SHED_DATA`, and `SHED_DATABASE_URL` when `database` names one
    /// (else the folder's SQLite file, whatever the tests run on).
    fn data_on(&mut self, data: &Path, database: Option<&str>) -> &mut Self;
}

impl DataIn for Command {
    fn data_in(&mut self, data: &Path) -> &mut Command {
        self.data_on(data, shed_test_database::for_folder(data).as_deref())
    }

    fn data_on(&mut self, data: &Path, database: Option<&str>) -> &mut Command {
        self.env("SHED_DATA", data);
        match database {
            Some(url) => self.env("SHED_DATABASE_URL", url),
            None => self.env_remove("SHED_DATABASE_URL"),
        }
    }
}

/// A new data folder, private as shed makes one (mode 0700), so nothing is
/// warned of.
pub fn private_folder() -> tempfile::TempDir {
    let folder = tempfile::tempdir().unwrap();
    let private = std::os::unix::fs::PermissionsExt::from_mode(0o700);
    std::fs::set_permissions(folder.path(), private).unwrap();
    folder
}

/// Makes the folder `data` private (mode 0700), as `mkdir -m 700` does: a
/// data folder set up by hand, for commands run before any server (only a
/// server makes one).
pub fn make_private(data: &Path) {
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(data)
        .unwrap_or_else(|e| panic!("{}: {e}", data.display()));
}

/// The store the sheds on `data` keep, opened as they open it.
pub async fn store(data: &Path) -> Store {
    match shed_test_database::for_folder(data) {
        Some(url) => Store::connect(&url).await.unwrap(),
        None => Store::open(&data.join("shed.db")).await.unwrap(),
    }
}

/// Every file under `folder`, with its bytes.
fn files(folder: &Path) -> Vec<(String, Vec<u8>)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(folder).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            found.push((path.display().to_string(), bytes));
        }
    }
    found
}

/// What the sheds on `data` keep, as bytes to search: every file of the
/// data folder and, on the test server, every row of the folder's
/// database (a plain `pg_dump` of it).
pub fn kept(data: &Path) -> Vec<(String, Vec<u8>)> {
    let mut kept = files(data);
    if let Some(url) = shed_test_database::for_folder(data) {
        let dump = Command::new("pg_dump")
            .args(["--data-only", "--no-owner", &url])
            .output()
            .unwrap();
        assert!(
            dump.status.success(),
            "pg_dump: {}",
            String::from_utf8_lossy(&dump.stderr)
        );
        kept.push(("the database's pg_dump".to_string(), dump.stdout));
    }
    kept
}

/// How many rows the table `table` holds in what the sheds on `data` keep:
/// read from the SQLite file, or on the test server with `psql`.
pub fn rows(data: &Path, table: &str) -> i64 {
    let count = format!("SELECT COUNT(*) FROM {table}");
    match shed_test_database::for_folder(data) {
        Some(url) => {
            let out = Command::new("psql")
                .args([url.as_str(), "-tAc", &count])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "psql: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout)
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        }
        None => rusqlite::Connection::open(data.join("shed.db"))
            .unwrap()
            .query_row(&count, [], |r| r.get(0))
            .unwrap(),
    }
}
