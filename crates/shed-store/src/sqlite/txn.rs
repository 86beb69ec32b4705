//! SQLite's adapter of the records written once (`src/txn.rs`): a
//! connection (or the writer's transaction) as a [`crate::txn::Txn`] whose
//! statements answer in place — each prepared once per connection and
//! cached — so a record's body is polled once ([`at_once`]): a read on the
//! caller's thread, a write on the writer's, in its group commit.

use rusqlite::{Connection, params_from_iter};

use super::Sqlite;
use crate::StoreError;
use crate::query::at_once;
use crate::txn::{Announced, Records, Row};
use crate::values::Sql;

/// A connection the records' statements run on.
pub(crate) struct Txn<'c>(pub(crate) &'c Connection);

/// A statement written with `$n` placeholders as SQLite numbers them
/// (`?n`): SQLite reads `$1` as a parameter *named* `$1`, numbered by
/// where it first stands.
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        let digit_follows = chars.peek().is_some_and(char::is_ascii_digit);
        out.push(if c == '$' && digit_follows { '?' } else { c });
    }
    out
}

impl Txn<'_> {
    /// The first `limit` rows a statement answers (all with `None`).
    fn rows(
        &self,
        sql: &str,
        params: &[Sql],
        limit: Option<usize>,
    ) -> Result<Vec<Row>, StoreError> {
        let mut stmt = self.0.prepare_cached(&numbered(sql))?;
        let columns = stmt.column_count();
        let mut rows = stmt.query(params_from_iter(params))?;
        let mut read = Vec::new();
        while limit.is_none_or(|limit| read.len() < limit) {
            let Some(row) = rows.next()? else { break };
            let values = (0..columns)
                .map(|i| row.get::<_, Sql>(i))
                .collect::<Result<_, _>>()?;
            read.push(Row::new(values));
        }
        Ok(read)
    }
}

impl crate::txn::Txn for Txn<'_> {
    const LOCK: &'static str = "";
    const BY_BYTES: &'static str = "";
    const FTS_TABLE: bool = true;

    async fn execute(&self, sql: &str, params: &[Sql]) -> Result<u64, StoreError> {
        let changed = self
            .0
            .prepare_cached(&numbered(sql))?
            .execute(params_from_iter(params))?;
        Ok(changed as u64)
    }

    async fn batch(&self, sql: &str) -> Result<(), StoreError> {
        Ok(self.0.execute_batch(sql)?)
    }

    async fn all(&self, sql: &str, params: &[Sql]) -> Result<Vec<Row>, StoreError> {
        self.rows(sql, params, None)
    }

    async fn optional(&self, sql: &str, params: &[Sql]) -> Result<Option<Row>, StoreError> {
        Ok(self.rows(sql, params, Some(1))?.pop())
    }

    async fn lock_table(&self, _table: &str) -> Result<(), StoreError> {
        Ok(())
    }

    async fn announce(&self, _change: Announced) -> Result<(), StoreError> {
        Ok(())
    }
}

impl Records for Sqlite {
    type Txn<'t> = Txn<'t>;

    async fn read_records<T>(
        &self,
        body: impl AsyncFnOnce(&Txn<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.read(|conn| at_once(body(&Txn(conn)))).await
    }

    async fn read_snapshot<T>(
        &self,
        body: impl AsyncFnOnce(&Txn<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.read(|conn| {
            // A read connection's transaction, rolled back when dropped.
            let snapshot = conn.unchecked_transaction()?;
            at_once(body(&Txn(&snapshot)))
        })
        .await
    }

    async fn read_long_records<T>(
        &self,
        body: impl AsyncFnOnce(&Txn<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.read_long(|conn| at_once(body(&Txn(conn)))).await
    }

    async fn write_records<T: Send + 'static>(
        &self,
        body: impl AsyncFn(&Txn<'_>) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.write(move |txn| at_once(body(&Txn(txn)))).await
    }

    async fn write_records_forgetting<T: Send + 'static>(
        &self,
        forget: String,
        body: impl AsyncFn(&Txn<'_>) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let schemas = self.schemas.clone();
        self.write_then(
            move |txn| at_once(body(&Txn(txn))),
            move |_| schemas.forget(&forget),
        )
        .await
    }
}
