//! The platform records' statements, written once for both backends. A
//! record's body (`records/*.rs`) is an `async fn` over a [`Txn`]: its SQL
//! written once with `$n` placeholders in the words both databases take,
//! its parameters as the store's values ([`Sql`]), its rows read through
//! [`Row::get`], which answers a typed [`StoreError`] for a column of
//! another type rather than panic. A backend gives an adapter: its [`Txn`]
//! (SQLite's answering in place, so a body is polled once on the caller's
//! or the writer's thread with `query::at_once`; PostgreSQL's
//! awaited), and [`Records`], which runs a body as a read or as one write
//! — on SQLite in the writer's group commit, on PostgreSQL in a
//! transaction of its own — as the engine's apply runs its `Writes` (`apply.rs`).

use crate::StoreError;
use crate::values::Sql;

/// What a write changed that every server's watchers read again for:
/// PostgreSQL's notification names it (`postgres/wake.rs`); SQLite's
/// watchers poll.
#[derive(Clone, Copy)]
pub(crate) enum Announced {
    /// An app's deploy.
    Deploy,
    /// A membership added, changed or removed.
    Membership,
    /// An app trashed, restored or purged.
    Lifecycle,
}

/// A transaction (or, for a read, a connection) the records' statements
/// run in.
pub(crate) trait Txn {
    /// What a `SELECT` ends with to hold the rows it reads against other
    /// writers until the transaction ends: nothing on SQLite, whose one
    /// writer already holds the database; ` FOR UPDATE` on PostgreSQL.
    const LOCK: &'static str;
    /// What follows a text column in an `ORDER BY` to sort it by its
    /// bytes, as SQLite sorts text: nothing on SQLite; ` COLLATE "C"` on
    /// PostgreSQL, whose default collation may follow a locale's rules
    /// (which, for one, pass over hyphens).
    const BY_BYTES: &'static str;
    /// Whether the shared full-text table `ec_fts` is SQLite's FTS5, its
    /// rowid the entity's id and no column of the app (on PostgreSQL a
    /// table with one).
    const FTS_TABLE: bool;

    /// Runs a statement that answers no rows: how many rows it changed.
    async fn execute(&self, sql: &str, params: &[Sql]) -> Result<u64, StoreError>;
    /// Runs statements made at run time (a table's `DROP`), without
    /// parameters and not kept prepared.
    async fn batch(&self, sql: &str) -> Result<(), StoreError>;
    /// The rows a statement answers.
    async fn all(&self, sql: &str, params: &[Sql]) -> Result<Vec<Row>, StoreError>;
    /// The row a statement answers, if any (it answers one at most).
    async fn optional(&self, sql: &str, params: &[Sql]) -> Result<Option<Row>, StoreError>;
    /// Holds a table against every other writer of it until the
    /// transaction ends (PostgreSQL's `SHARE ROW EXCLUSIVE` lock; on SQLite
    /// the one writer already does).
    async fn lock_table(&self, table: &str) -> Result<(), StoreError>;
    /// Tells every server's watchers of `change` once the transaction
    /// commits (PostgreSQL's `NOTIFY`); nothing on SQLite, whose watchers
    /// poll.
    async fn announce(&self, change: Announced) -> Result<(), StoreError>;

    /// The one row a statement answers (a count, an `INSERT … RETURNING`).
    async fn one(&self, sql: &str, params: &[Sql]) -> Result<Row, StoreError> {
        self.optional(sql, params).await?.ok_or_else(|| {
            StoreError::Internal(format!("a statement answered no row: {}", first_line(sql)))
        })
    }
}

/// How a backend runs a record's body: as a read (a connection that sees
/// the last committed state) or as one write, all or nothing.
pub(crate) trait Records {
    /// The backend's [`Txn`].
    type Txn<'t>: Txn;

    /// Runs `body` as a read.
    async fn read_records<T>(
        &self,
        body: impl AsyncFnOnce(&Self::Txn<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError>;

    /// Runs `body` as a read of one snapshot: every statement sees the
    /// database as the first saw it (a transaction; PostgreSQL's read-only
    /// `REPEATABLE READ`).
    async fn read_snapshot<T>(
        &self,
        body: impl AsyncFnOnce(&Self::Txn<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError>;

    /// As [`Records::read_records`], for a read that can take long (a
    /// deploy's files): on SQLite it runs as `Sqlite::read_long` does.
    async fn read_long_records<T>(
        &self,
        body: impl AsyncFnOnce(&Self::Txn<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.read_records(body).await
    }

    /// Runs `body` in one transaction and commits it. On SQLite it may run
    /// again, should another write of its group be refused, so it changes
    /// nothing but the database.
    async fn write_records<T: Send + 'static>(
        &self,
        body: impl AsyncFn(&Self::Txn<'_>) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError>;

    /// As [`Records::write_records`], then forgets the readers' catalog of
    /// the app `forget`, whatever came of the write, before the caller is
    /// answered — on SQLite on the writer's thread, so even a caller gone
    /// meanwhile leaves no catalog of tables the write dropped.
    async fn write_records_forgetting<T: Send + 'static>(
        &self,
        forget: String,
        body: impl AsyncFn(&Self::Txn<'_>) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError>;
}

/// `$from, $from+1, …` for `n` values, as an `IN (…)` or `VALUES(…)` list.
pub(crate) fn marks(from: usize, n: usize) -> String {
    let marks: Vec<String> = (from..from + n).map(|i| format!("${i}")).collect();
    marks.join(", ")
}

/// The first line of a statement, for a sentence in the server's log.
fn first_line(sql: &str) -> &str {
    sql.trim().lines().next().unwrap_or_default()
}

/// A row a statement answered, its values as the store keeps them.
pub(crate) struct Row(Vec<Sql>);

impl Row {
    pub(crate) fn new(values: Vec<Sql>) -> Row {
        Row(values)
    }

    /// Column `i` read as a `T`: a column it lacks, or a value of another
    /// type, is the database failing the store — a typed error, never a
    /// panic (the value itself is not said: it may be a secret's hash).
    pub(crate) fn get<T: Column>(&self, i: usize) -> Result<T, StoreError> {
        let value = self.0.get(i).ok_or_else(|| no_column(self.0.len(), i))?;
        T::read(value).ok_or_else(|| mismatch::<T>(i, value))
    }

    /// As [`Row::get`], moving the value out (a file's bytes are not
    /// copied again); the column reads null after.
    pub(crate) fn take<T: Column>(&mut self, i: usize) -> Result<T, StoreError> {
        let columns = self.0.len();
        let slot = self.0.get_mut(i).ok_or_else(|| no_column(columns, i))?;
        let value = std::mem::replace(slot, Sql::Null);
        T::take(value).map_err(|value| mismatch::<T>(i, &value))
    }
}

/// A row of `columns` columns has no column `i`.
fn no_column(columns: usize, i: usize) -> StoreError {
    StoreError::Database(format!("a row of {columns} columns has no column {i}"))
}

/// Column `i` holds `value`, which is not a `T`.
fn mismatch<T: Column>(i: usize, value: &Sql) -> StoreError {
    let held = match value {
        Sql::Null => "null",
        Sql::Integer(_) => "an integer",
        Sql::Real(_) => "a real number",
        Sql::Text(_) => "text",
        Sql::Blob(_) => "bytes",
    };
    StoreError::Database(format!(
        "column {i} of a row holds {held}, where the store reads {}",
        T::WHAT
    ))
}

/// A type a record's column is read as.
pub(crate) trait Column: Sized {
    /// The type, as a sentence names it.
    const WHAT: &'static str;
    fn read(value: &Sql) -> Option<Self>;
    /// The value moved out, or given back when it is not a `Self`.
    fn take(value: Sql) -> Result<Self, Sql> {
        Self::read(&value).ok_or(value)
    }
}

impl Column for i64 {
    const WHAT: &'static str = "an integer";
    fn read(value: &Sql) -> Option<i64> {
        match value {
            Sql::Integer(i) => Some(*i),
            _ => None,
        }
    }
}

impl Column for bool {
    const WHAT: &'static str = "a bool";
    fn read(value: &Sql) -> Option<bool> {
        i64::read(value).map(|i| i != 0)
    }
}

impl Column for String {
    const WHAT: &'static str = "text";
    fn read(value: &Sql) -> Option<String> {
        match value {
            Sql::Text(s) => Some(s.clone()),
            _ => None,
        }
    }
}

impl Column for Vec<u8> {
    const WHAT: &'static str = "bytes";
    fn read(value: &Sql) -> Option<Vec<u8>> {
        match value {
            Sql::Blob(b) => Some(b.clone()),
            _ => None,
        }
    }
    fn take(value: Sql) -> Result<Vec<u8>, Sql> {
        match value {
            Sql::Blob(b) => Ok(b),
            other => Err(other),
        }
    }
}

impl<T: Column> Column for Option<T> {
    const WHAT: &'static str = T::WHAT;
    fn read(value: &Sql) -> Option<Option<T>> {
        match value {
            Sql::Null => Some(None),
            value => T::read(value).map(Some),
        }
    }
    fn take(value: Sql) -> Result<Option<T>, Sql> {
        match value {
            Sql::Null => Ok(None),
            value => T::take(value).map(Some),
        }
    }
}

impl From<i64> for Sql {
    fn from(i: i64) -> Sql {
        Sql::Integer(i)
    }
}

impl From<&str> for Sql {
    fn from(s: &str) -> Sql {
        Sql::Text(s.to_string())
    }
}

impl From<String> for Sql {
    fn from(s: String) -> Sql {
        Sql::Text(s)
    }
}

impl From<&String> for Sql {
    fn from(s: &String) -> Sql {
        Sql::Text(s.clone())
    }
}

impl From<&[u8]> for Sql {
    fn from(b: &[u8]) -> Sql {
        Sql::Blob(b.to_vec())
    }
}

impl<T> From<Option<T>> for Sql
where
    Sql: From<T>,
{
    fn from(value: Option<T>) -> Sql {
        value.map_or(Sql::Null, Sql::from)
    }
}

/// A statement's parameters, `$1` first: `args![person, id]`.
macro_rules! args {
    ($($value:expr),* $(,)?) => {
        &[$($crate::values::Sql::from($value)),*]
    };
}
pub(crate) use args;
