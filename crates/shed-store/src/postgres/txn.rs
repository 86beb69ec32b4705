//! PostgreSQL's adapter of the records written once (`src/txn.rs`): a
//! pooled connection (a read) or a write's transaction as a
//! [`crate::txn::Txn`], each statement prepared once per connection and
//! cached, each row read with `try_get` into the store's values — a column
//! of a type the store does not keep is a typed error, never a panic.

use deadpool_postgres::GenericClient;
use tokio_postgres::types::ToSql;

use super::Postgres;
use super::wake::announce;
use crate::StoreError;
use crate::txn::{Announced, Records, Row};
use crate::values::Sql;

/// Where the records' statements run: a connection of the pool (a read)
/// or a transaction (a write's, or a read's of one snapshot).
pub(crate) enum Txn<'t> {
    Connection(&'t deadpool_postgres::Client),
    Transaction(&'t deadpool_postgres::Transaction<'t>),
}

/// `$body` run with `$c` the connection or the transaction, whichever the
/// [`Txn`] `$txn` holds (both are a `GenericClient`, of two types).
macro_rules! either {
    ($txn:expr, $c:ident => $body:expr) => {
        match $txn {
            Txn::Connection($c) => $body,
            Txn::Transaction($c) => $body,
        }
    };
}

/// The parameters as tokio-postgres binds them.
fn bound(params: &[Sql]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

fn row(r: &tokio_postgres::Row) -> Result<Row, StoreError> {
    let values = (0..r.len())
        .map(|i| r.try_get::<_, Sql>(i))
        .collect::<Result<_, _>>()?;
    Ok(Row::new(values))
}

impl Txn<'_> {
    async fn rows(
        &self,
        sql: &str,
        params: &[Sql],
    ) -> Result<Vec<tokio_postgres::Row>, StoreError> {
        let params = bound(params);
        Ok(either!(self, c => c.query(&c.prepare_cached(sql).await?, &params).await?))
    }
}

impl crate::txn::Txn for Txn<'_> {
    const LOCK: &'static str = " FOR UPDATE";
    const BY_BYTES: &'static str = " COLLATE \"C\"";
    const FTS_TABLE: bool = false;

    async fn execute(&self, sql: &str, params: &[Sql]) -> Result<u64, StoreError> {
        let params = bound(params);
        Ok(either!(self, c => c.execute(&c.prepare_cached(sql).await?, &params).await?))
    }

    async fn batch(&self, sql: &str) -> Result<(), StoreError> {
        either!(self, c => c.batch_execute(sql).await).map_err(StoreError::from)
    }

    async fn all(&self, sql: &str, params: &[Sql]) -> Result<Vec<Row>, StoreError> {
        self.rows(sql, params).await?.iter().map(row).collect()
    }

    async fn optional(&self, sql: &str, params: &[Sql]) -> Result<Option<Row>, StoreError> {
        match self.rows(sql, params).await?.as_slice() {
            [] => Ok(None),
            [one] => row(one).map(Some),
            [..] => Err(StoreError::Database(
                "a statement of one row at most answered more".into(),
            )),
        }
    }

    async fn lock_table(&self, table: &str) -> Result<(), StoreError> {
        self.batch(&format!("LOCK TABLE {table} IN SHARE ROW EXCLUSIVE MODE"))
            .await
    }

    async fn announce(&self, change: Announced) -> Result<(), StoreError> {
        either!(self, c => announce(*c, change).await)
    }
}

impl Records for Postgres {
    type Txn<'t> = Txn<'t>;

    async fn read_records<T>(
        &self,
        body: impl AsyncFnOnce(&Txn<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let client = self.client().await?;
        body(&Txn::Connection(&client)).await
    }

    async fn read_snapshot<T>(
        &self,
        body: impl AsyncFnOnce(&Txn<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut client = self.client().await?;
        let txn = client
            .build_transaction()
            .read_only(true)
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .start()
            .await?;
        let read = body(&Txn::Transaction(&txn)).await?;
        txn.commit().await?;
        Ok(read)
    }

    async fn write_records<T: Send + 'static>(
        &self,
        body: impl AsyncFn(&Txn<'_>) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.write(async |txn| body(&Txn::Transaction(txn)).await)
            .await
    }

    async fn write_records_forgetting<T: Send + 'static>(
        &self,
        forget: String,
        body: impl AsyncFn(&Txn<'_>) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let written = self.write_records(body).await;
        self.forget_schema(&forget);
        written
    }
}
