//! A filter line run on SQLite: the shared plan and SQL
//! ([`crate::query`]), its names looked up on the read connection, and the
//! rows read and shaped here ([`rows`]).

mod rows;

use rusqlite::{Connection, OptionalExtension};

use crate::filter::FilterLine;
use crate::query::at_once;
use crate::query::plan::{self, Lookup};
use crate::query::sql::{self, Dialect};
use crate::schema::AppSchema;
use crate::{Listing, StoreError};

/// A read connection answers a plan's lookups in place.
pub(super) struct Names<'c>(pub(super) &'c Connection);

impl Lookup for Names<'_> {
    async fn person_by_handle(&self, handle: &str) -> Result<Option<String>, StoreError> {
        Ok(super::people::by_handle(self.0, handle)?.map(|p| p.eid))
    }

    async fn entity_by_alias(
        &self,
        app_id: i64,
        alias: &str,
    ) -> Result<Option<String>, StoreError> {
        Ok(self
            .0
            .prepare_cached("SELECT eid FROM ec_entities WHERE app = ?1 AND alias = ?2")?
            .query_row(rusqlite::params![app_id, alias], |r| r.get(0))
            .optional()?)
    }
}

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
