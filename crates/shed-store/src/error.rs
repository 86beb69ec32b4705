//! The one error type of the store: a refusal sentence, a missing thing, a
//! conflict, or a failure of the store itself.

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
    /// The store itself failed (disk, database); nothing was acknowledged.
    #[error("the store failed: {0}")]
    Internal(String),
}

impl StoreError {
    pub(crate) fn refused(sentence: impl Into<String>) -> StoreError {
        StoreError::Refused(sentence.into())
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        StoreError::Internal(e.to_string())
    }
}

impl From<tokio_postgres::Error> for StoreError {
    /// The server's own message where it sent one (`db error` says nothing).
    fn from(e: tokio_postgres::Error) -> StoreError {
        match e.as_db_error() {
            Some(db) => StoreError::Internal(db.message().to_string()),
            None => StoreError::Internal(e.to_string()),
        }
    }
}

impl From<deadpool_postgres::PoolError> for StoreError {
    fn from(e: deadpool_postgres::PoolError) -> StoreError {
        StoreError::Internal(format!("no connection to the database: {e}"))
    }
}
