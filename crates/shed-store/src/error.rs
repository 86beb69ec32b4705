//! The error type of the store's calls — a refusal sentence, a missing
//! thing, a conflict, or a failure of the store itself — and the answer of
//! its readiness check.

/// What went wrong, as a sentence a person can act on.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// Bad input: the sentence says what and how to fix it; nothing was written.
    #[error("{0}")]
    Refused(String),
    /// The thing named is not there, e.g. `no entity 4f3c… in jeff/runs`.
    #[error("{0}")]
    NotFound(String),
    /// A `was` or `expect` that no longer holds; nothing was written.
    #[error("{0}")]
    Conflict(String),
    /// An undo refused because an entity it would write back changed
    /// since: who, when and which write — for the host to say with the
    /// entity's title and the time relative to now; nothing was written.
    #[error("{0}")]
    ChangedSince(Box<crate::undo::ChangedSince>),
    /// The store itself failed (disk, a thread); nothing was acknowledged.
    #[error("the store failed: {0}")]
    Internal(String),
    /// The database refused or failed a statement: its own words, for the
    /// server's log, never for a caller (a door answers a sentence of its
    /// own); nothing was acknowledged.
    #[error("the database failed: {0}")]
    Database(String),
}

impl StoreError {
    pub(crate) fn refused(sentence: impl Into<String>) -> StoreError {
        StoreError::Refused(sentence.into())
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        StoreError::Database(e.to_string())
    }
}

impl From<tokio_postgres::Error> for StoreError {
    /// The server's own message where it sent one (`db error` says nothing).
    fn from(e: tokio_postgres::Error) -> StoreError {
        match e.as_db_error() {
            Some(db) => StoreError::Database(db.message().to_string()),
            None => StoreError::Database(e.to_string()),
        }
    }
}

impl From<deadpool_postgres::PoolError> for StoreError {
    /// A closed pool is a store that was closed ([`crate::Store::close`]).
    fn from(e: deadpool_postgres::PoolError) -> StoreError {
        match e {
            deadpool_postgres::PoolError::Closed => closed(),
            e => StoreError::Database(format!("no connection to the database: {e}")),
        }
    }
}

/// Why the store cannot serve now (`Store::ready`): the sentence to show.
#[derive(thiserror::Error, Debug, Clone, PartialEq, Eq)]
#[error("{0}")]
pub struct NotReady(pub String);

impl NotReady {
    /// A database not yet at the schema version this program needs, on
    /// every backend.
    pub(crate) fn behind(done: i64, needed: usize) -> NotReady {
        NotReady(format!(
            "the database is at schema version {done}, and this shed needs {needed} — restart shed to apply its migrations"
        ))
    }
}

/// The sentence of a write made after the store was closed, on every backend.
pub(crate) fn closed() -> StoreError {
    StoreError::Internal(
        "shed is stopping and takes no more writes — nothing was written; try again once it is back"
            .into(),
    )
}
