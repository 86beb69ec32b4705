//! Each app's catalog on PostgreSQL (`ec_components`, `ec_columns`): the
//! per-app tables it describes in PostgreSQL's words — `ec_<app id>_<component>`
//! with one typed column per declared column (text, double precision,
//! boolean, timestamptz), each indexed, and on `doc` a generated `tsvector`
//! over title and body with a GIN index for `q=` — and the app's row, made
//! and locked.

use deadpool_postgres::Transaction;

use super::txn::Txn;
use crate::schema::{self, AppSchema, Tables, check_app_name, check_vocabulary};
use crate::txn::{Txn as _, args};
use crate::{ColumnType, StoreError, Vocabulary};

impl Tables for Txn<'_> {
    const KEY: &'static str = "BIGINT";

    fn column_type(ty: ColumnType) -> &'static str {
        match ty {
            ColumnType::Text | ColumnType::Url | ColumnType::Ref => "TEXT",
            ColumnType::Number => "DOUBLE PRECISION",
            ColumnType::Bool => "BOOLEAN",
            ColumnType::Time => "TIMESTAMPTZ",
        }
    }

    /// A B-tree index for the columns that compare and sort (number, bool,
    /// time, ref — an eid); a hash index for text and urls, whose values may
    /// be longer than a B-tree entry holds (about 2.7 kB) and are compared
    /// with `=`. The B-tree keeps nulls first, the order the store sorts in
    /// (nulls smallest, as SQLite has them): `ASC NULLS FIRST` forward and
    /// `DESC NULLS LAST` backward, so `order=-.jog.miles&limit=50` reads 50
    /// entries of the index rather than sorting the whole kind (0.2 s at
    /// 100,000 entities).
    fn index_on(column: &str, ty: ColumnType) -> String {
        match ty {
            ColumnType::Text | ColumnType::Url => format!(" USING hash (\"{column}\")"),
            ColumnType::Number | ColumnType::Bool | ColumnType::Time | ColumnType::Ref => {
                format!(" USING btree (\"{column}\" NULLS FIRST)")
            }
        }
    }

    /// `doc`'s generated `tsvector` over title and body, and its GIN index.
    fn full_text(id: i64) -> String {
        let table = AppSchema::table(id, "doc");
        format!(
            "ALTER TABLE {table} ADD COLUMN fts tsvector GENERATED ALWAYS AS
                 (to_tsvector('simple', coalesce(title, '') || ' ' || coalesce(body, ''))) STORED;
             CREATE INDEX \"ec_{id}_doc.fts\" ON {table} USING GIN (fts);"
        )
    }
}

/// Reads the catalog of an app whose row id is known (an apply's, which
/// has just locked the row).
pub(crate) async fn load_known(t: &Txn<'_>, app: &str, id: i64) -> Result<AppSchema, StoreError> {
    schema::load_known(t, app, id).await
}

/// The app's row, locked until the transaction ends — the one lock every
/// write to an app takes, so writers on every server queue for it: (id,
/// version, last num, whether this write made the app).
pub(crate) async fn lock_app(t: &Txn<'_>, app: &str) -> Result<(i64, i64, i64, bool), StoreError> {
    check_app_name(app)?;
    let insert = "INSERT INTO ec_apps(name) VALUES($1) ON CONFLICT(name) DO NOTHING RETURNING id";
    let made = t.optional(insert, args![app]).await?;
    if let Some(r) = &made {
        schema::make_app(t, r.get(0)?).await?;
    }
    let lock = "SELECT id, version, last_num FROM ec_apps WHERE name = $1 FOR UPDATE";
    let r = t.one(lock, args![app]).await?;
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, made.is_some()))
}

/// Creates or extends what an app's vocabulary needs ([`schema::declare`]).
pub(crate) async fn declare(
    txn: &Transaction<'_>,
    app: &str,
    vocab: &Vocabulary,
) -> Result<(), StoreError> {
    check_app_name(app)?;
    check_vocabulary(vocab)?;
    let (id, ..) = lock_app(&Txn::Transaction(txn), app).await?;
    schema::declare(&Txn::Transaction(txn), app, id, vocab).await
}
