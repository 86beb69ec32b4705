//! Running a filter line on SQLite, in three stages: [`plan`] checks the
//! line against the app's schema and types every value (every refusal is
//! raised there), [`sql`] writes the plan as one SELECT with every value a
//! bound parameter, and [`rows`] runs it and shapes the rows as DESIGN says.
//! Every statement is filtered on the app.

mod cursor;
mod plan;
mod rows;
mod sql;

use rusqlite::Connection;

use crate::filter::FilterLine;
use crate::schema::AppSchema;
use crate::{Listing, StoreError};

/// Runs a parsed line over one app's rows.
pub(crate) fn run(
    conn: &Connection,
    schema: &AppSchema,
    line: &FilterLine,
) -> Result<Listing, StoreError> {
    let Some(plan) = plan::plan(conn, schema, line)? else {
        return Ok(Listing {
            rows: Vec::new(),
            next: None,
        });
    };
    let statement = sql::write(&plan);
    rows::read(conn, &plan, &statement)
}
