//! Reaching a PostgreSQL server named by a URL, with a sentence for each way
//! it can fail before shed writes anything: a URL that does not parse, a
//! server that cannot be reached (naming host and port), a refused user or
//! password, a database that is not there, a server refused over TLS
//! (`tls.rs` reads the URL's `sslmode` and `sslrootcert`).

use std::time::Duration;

use tokio_postgres::config::Host;
use tokio_postgres::error::SqlState;

use super::tls::{self, Tls};
use crate::StoreError;

/// How long connecting may take before the server counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A parsed database URL, and where it points, for sentences.
pub(crate) struct Target {
    pub config: tokio_postgres::Config,
    /// The connector every connection to the server goes through.
    pub tls: Tls,
    /// `host:port`, as sentences name the server.
    pub address: String,
    pub database: String,
}

/// Whether `url` names a PostgreSQL database (`postgres://` or `postgresql://`).
pub(crate) fn is_postgres_url(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// Reads `postgres://user[:password]@host[:port]/database[?parameters]`,
/// `sslmode` and `sslrootcert` among them as libpq reads them.
pub(crate) fn parse(url: &str) -> Result<Target, StoreError> {
    let shown = redacted(url);
    let bad = |why: String| {
        StoreError::refused(format!(
            "{shown} is not a database URL ({why}) — give postgres://user[:password]@host[:port]/database"
        ))
    };
    if !is_postgres_url(url) {
        return Err(bad("it does not start with postgres://".into()));
    }
    let (url, settings) = tls::split(url).map_err(bad)?;
    let mut config: tokio_postgres::Config = url.parse().map_err(|e| bad(format!("{e}")))?;
    config.ssl_mode(settings.mode.for_tokio_postgres());
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(p)) => p.display().to_string(),
        None => return Err(bad("it names no host".into())),
    };
    if config.get_user().is_none() {
        return Err(bad("it names no user".into()));
    }
    let Some(database) = config.get_dbname().map(str::to_string) else {
        return Err(bad("it names no database".into()));
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    config.connect_timeout(CONNECT_TIMEOUT);
    config.application_name("shed");
    // An acknowledged write is durable whatever the server's default; the
    // server's NOTICEs (a migration's `IF NOT EXISTS` skipping, every start)
    // are not shed's to print — a warning still is.
    config.options("-c synchronous_commit=on -c client_min_messages=warning");
    let tls = Tls::new(&settings).map_err(|why| {
        StoreError::refused(format!(
            "TLS to the database server at {host}:{port} cannot be set up: {why}"
        ))
    })?;
    Ok(Target {
        config,
        tls,
        address: format!("{host}:{port}"),
        database,
    })
}

/// A connection to the server `url` names, made as every connection of
/// shed is (its `sslmode` and `sslrootcert` read as libpq reads them),
/// running on a task of the current runtime: for tools and tests that
/// speak SQL to the server themselves.
pub async fn connect_to_server(url: &str) -> Result<tokio_postgres::Client, StoreError> {
    let target = parse(url)?;
    let (client, connection) = target
        .config
        .connect(target.tls.clone())
        .await
        .map_err(|e| failure(&target, &e))?;
    tokio::spawn(connection);
    Ok(client)
}

/// The URL with its password hidden, for sentences and logs.
pub(crate) fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let Some((credentials, place)) = rest.split_once('@') else {
        return url.to_string();
    };
    match credentials.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{place}"),
        None => url.to_string(),
    }
}

/// The sentence for a failed connection or first statement.
pub(crate) fn failure(target: &Target, e: &tokio_postgres::Error) -> StoreError {
    let address = &target.address;
    if let Some(sentence) = tls::refusal(e, address, target.tls.mode()) {
        return StoreError::refused(sentence);
    }
    let user = target.config.get_user().unwrap_or("");
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        if *code == SqlState::INVALID_PASSWORD
            || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
        {
            return StoreError::refused(format!(
                "PostgreSQL at {address} refused user {user}: wrong password or no such user — check the URL's user and password"
            ));
        }
        if *code == SqlState::INVALID_CATALOG_NAME {
            return StoreError::refused(format!(
                "PostgreSQL at {address} has no database {} — create it (createdb {}) or name another",
                target.database, target.database
            ));
        }
        return StoreError::refused(format!(
            "PostgreSQL at {address} refused shed: {}",
            db.message()
        ));
    }
    StoreError::refused(format!(
        "could not reach PostgreSQL at {address} ({}) — is the server running, and are host and port right?",
        source_sentence(e)
    ))
}

/// A connection of `pool`, which connects to `target`; a pool that could
/// not hand one out is said as the server's refusal or absence as
/// [`failure`] says it, else as the pool's own sentence.
pub(crate) async fn borrow(
    pool: &deadpool_postgres::Pool,
    target: &Target,
) -> Result<deadpool_postgres::Client, StoreError> {
    pool.get().await.map_err(|e| match e {
        deadpool_postgres::PoolError::Backend(e) => failure(target, &e),
        other => StoreError::from(other),
    })
}

/// The innermost cause of an error, which names what happened (`Connection
/// refused`, `timed out`).
fn source_sentence(e: &tokio_postgres::Error) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    let said = cause.to_string();
    if said.is_empty() { e.to_string() } else { said }
}
