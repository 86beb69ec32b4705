//! Each app's catalog on PostgreSQL (`ec_components`, `ec_groups`,
//! `ec_columns`): the shape tables in PostgreSQL's words — typed slots
//! (text, double precision, boolean, timestamptz), each with an index led
//! by the group — and the app's row, made and locked.

use deadpool_postgres::Transaction;

use super::txn::Txn;
use crate::schema::{
    self, AppSchema, Component, Tables, check_app_name, check_vocabulary, doc_slots,
};
use crate::txn::{Txn as _, args};
use crate::{ColumnType, StoreError, Vocabulary};

impl Tables for Txn<'_> {
    const KEY: &'static str = "BIGINT";
    const LOCK_SHAPES: Option<&'static str> =
        Some("LOCK TABLE ec_shapes IN SHARE ROW EXCLUSIVE MODE");
    const SHAPE_TABLE: &'static str = "";

    fn column_type(ty: ColumnType) -> &'static str {
        match ty {
            ColumnType::Text | ColumnType::Url | ColumnType::Ref => "TEXT",
            ColumnType::Number => "DOUBLE PRECISION",
            ColumnType::Bool => "BOOLEAN",
            ColumnType::Time => "TIMESTAMPTZ",
        }
    }

    /// A B-tree `(grp, slot NULLS FIRST, id)` for the slots that compare
    /// and sort (number, bool, time, ref — an eid): nulls first, the order
    /// the store sorts in (nulls smallest, as SQLite has them), so
    /// `order=-.jog.miles&limit=50` reads 50 entries of the index forward
    /// or backward rather than sorting the whole kind. Text and urls, whose
    /// values may be longer than a B-tree entry holds (about 2.7 kB) and
    /// are compared with `=`, a B-tree over `(grp, hashtextextended(slot,
    /// 0))`: an equality filter names the hash and rechecks the value
    /// (`query/sql.rs`).
    fn slot_index(slot: &str, ty: ColumnType) -> String {
        match ty {
            ColumnType::Text | ColumnType::Url => {
                format!(" (grp, hashtextextended({slot}, 0))")
            }
            ColumnType::Number | ColumnType::Bool | ColumnType::Time | ColumnType::Ref => {
                format!(" (grp, {slot} NULLS FIRST, id)")
            }
        }
    }

    fn planner_hints(_table: &str, _indexes: &[String]) -> String {
        String::new()
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
    check_vocabulary(app, vocab)?;
    let t = Txn::Transaction(txn);
    let (id, ..) = lock_app(&t, app).await?;
    schema::check_growth(&t, app, id, vocab).await?;
    schema::declare(&t, app, id, vocab).await
}

/// The words of a `doc` row as `ec_fts` keeps them: its title and body as
/// one `tsvector` of the `simple` configuration, read from `doc`'s home
/// group's row — the expression an apply and `shed migrate` both write.
pub(crate) fn doc_words(doc: &Component) -> Result<String, StoreError> {
    let (title, body) = doc_slots(doc)?;
    Ok(format!(
        "to_tsvector('simple', coalesce({title}, '') || ' ' || coalesce({body}, ''))"
    ))
}
