//! Helpers shared by the store's integration tests. The store under test is
//! SQLite in a temporary folder, or — when `SHED_TEST_DATABASE` holds the
//! URL of a PostgreSQL server (`postgres://user:password@host:port/db`) —
//! a fresh database made on that server for each folder
//! (`shed-test-database`).

use serde_json::Value;
use shed_store::platform::NewDeploy;
use shed_store::{Actor, ColumnType, Person, Store, Vocabulary};

pub struct Fixture {
    pub store: Store,
    pub ada: Person,
    pub _dir: tempfile::TempDir,
}

impl Fixture {
    pub fn as_ada(&self) -> Actor {
        Actor {
            person: self.ada.eid.clone(),
            via: None,
            through: None,
        }
    }

    pub async fn apply(&self, app: &str, body: Value) -> shed_store::Applied {
        self.store
            .apply(app, &self.as_ada(), body, None)
            .await
            .unwrap()
    }

    pub async fn refusal(&self, app: &str, body: Value) -> String {
        self.store
            .apply(app, &self.as_ada(), body, None)
            .await
            .unwrap_err()
            .to_string()
    }

    pub async fn rows(&self, app: &str, line: &str) -> Vec<Value> {
        self.store.query(app, line).await.unwrap().rows
    }

    pub async fn query_error(&self, app: &str, line: &str) -> String {
        self.store.query(app, line).await.unwrap_err().to_string()
    }

    /// The URL of the fixture's database on the test server, to look at it
    /// behind the store's back (`None` on SQLite).
    pub fn database_url(&self) -> Option<String> {
        shed_test_database::for_folder(self._dir.path())
    }
}

pub fn run_club() -> Vocabulary {
    Vocabulary {
        components: vec![
            (
                "jog".into(),
                vec![
                    ("who".into(), ColumnType::Text),
                    ("miles".into(), ColumnType::Number),
                    ("at".into(), ColumnType::Time),
                ],
            ),
            (
                "gear".into(),
                vec![
                    ("ready".into(), ColumnType::Bool),
                    ("link".into(), ColumnType::Url),
                    ("owner".into(), ColumnType::Ref),
                ],
            ),
        ],
    }
}

pub use shed_test_database::{fresh as fresh_database, on_sqlite};

/// A connection of the test's own to the database at `url` on the test
/// server, to look at or change it behind the store's back.
pub async fn server_client(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
}

/// A fresh, empty store: in `dir` on SQLite, or a new database on the test server.
pub async fn open_store(dir: &std::path::Path) -> Store {
    match shed_test_database::for_folder(dir) {
        Some(url) => Store::connect(&url).await.unwrap(),
        None => Store::open(&dir.join("shed.db")).await.unwrap(),
    }
}

/// A fresh store with Ada and `jeff/runs` declared as the run club.
pub async fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    let ada = store.add_person("ada", "Ada Lovelace").await.unwrap();
    store.declare("jeff/runs", &run_club()).await.unwrap();
    Fixture {
        store,
        ada,
        _dir: dir,
    }
}

/// A fresh store with Ada and `jeff/runs` declaring one kind, `jog`, with
/// these columns.
pub async fn with_jog(columns: &[(&str, ColumnType)]) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(dir.path()).await;
    let ada = store.add_person("ada", "Ada").await.unwrap();
    let vocab = Vocabulary {
        components: vec![(
            "jog".into(),
            columns
                .iter()
                .map(|(name, ty)| (name.to_string(), *ty))
                .collect(),
        )],
    };
    store.declare("jeff/runs", &vocab).await.unwrap();
    Fixture {
        store,
        ada,
        _dir: dir,
    }
}

/// A deploy of `files` to the app `slug` in the space jeff by `by`, saying
/// nothing else (no title, access, drafts cleared or rollback).
pub fn deploy(by: &str, slug: &str, files: &[(&str, &[u8])]) -> NewDeploy {
    NewDeploy {
        space: "jeff".into(),
        slug: slug.into(),
        title: None,
        access: None,
        by: by.into(),
        files: files
            .iter()
            .map(|(path, content)| (path.to_string(), content.to_vec()))
            .collect(),
        clear_drafts: false,
        rolls_back_to: None,
    }
}

/// The eids of rows, in order.
pub fn eids(rows: &[Value]) -> Vec<String> {
    rows.iter()
        .map(|r| r["entity"]["eid"].as_str().unwrap().to_string())
        .collect()
}
