//! A PostgreSQL server for the store's benches that run on one: a
//! connection of the bench's own, and the databases a run makes on it and
//! drops after. Shared by `store.rs` and `many_apps.rs` (each includes it
//! by path; `backup.rs` has no server).

use tokio_postgres::{Client, NoTls};

/// A connection to the database at `url`.
pub async fn connect(url: &str) -> Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await.unwrap();
    tokio::spawn(connection);
    client
}

/// `url` with its database replaced by `name`.
pub fn database_url(url: &str, name: &str) -> String {
    let (server, _) = url.rsplit_once('/').expect("a URL ending in /database");
    format!("{server}/{name}")
}

/// Makes the database `name` on `server`, empty (dropping one left by an
/// earlier run).
pub async fn new_database(server: &Client, name: &str) {
    drop_database(server, name).await;
    server
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
}

/// Drops the database `name` on `server`, cutting its connections.
pub async fn drop_database(server: &Client, name: &str) {
    server
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await
        .unwrap();
}
