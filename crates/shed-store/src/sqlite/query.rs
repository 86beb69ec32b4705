//! A filter line run on SQLite: the shared plan and SQL
//! ([`crate::query`]), its names looked up on the read connection, and the
//! rows read and shaped here ([`rows`]).

mod rows;

use rusqlite::Connection;

use crate::filter::FilterLine;
use crate::query::at_once;
use crate::query::plan;
use crate::query::sql::{self, Dialect};
use crate::schema::AppSchema;
use crate::{Listing, StoreError};

/// A connection answers a plan's lookups in place, as every
/// [`crate::txn::Txn`] does ([`crate::query::plan::Lookup`]).
pub(super) use super::txn::Txn as Names;

/// Runs a parsed line over one app's rows.
pub(crate) fn run(
    conn: &Connection,
    schema: &AppSchema,
    line: &FilterLine,
) -> Result<Listing, StoreError> {
    let Some(plan) = at_once(plan::plan(&Names(conn), schema, line))? else {
        return Ok(Listing {
            rows: Vec::new(),
            next: None,
            authors: Vec::new(),
        });
    };
    let statement = sql::write(&plan, Dialect::Sqlite);
    rows::read(conn, &plan, &statement)
}
