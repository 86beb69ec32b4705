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

#[cfg(test)]
mod tests {
    use super::Names;
    use crate::query::plans::{APP, fill};
    use crate::query::sql::{self, Dialect};
    use crate::query::{at_once, plan};

    // Every read the web door relies on walks an index of the shared shape
    // tables inside one app's group (SQLite's plan SEARCHes, never SCANs,
    // them): a filter or an order by a slot its slot's index, led by the
    // group; a line's order comes from the walk, not a sort.
    #[tokio::test]
    async fn the_reads_walk_an_index_inside_one_app() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("shed.db");
        let store = crate::Store::open(&file).await.unwrap();
        let lines = fill(&store).await;
        let conn = rusqlite::Connection::open(&file).unwrap();
        let schema = crate::sqlite::schema::load(&conn, APP).unwrap();
        for line in lines {
            let parsed = crate::filter::parse(&line.text).unwrap();
            let plan = at_once(plan::plan(&Names(&conn), &schema, &parsed))
                .unwrap()
                .unwrap();
            let statement = sql::write(&plan, Dialect::Sqlite);
            let details: Vec<String> = conn
                .prepare(&format!("EXPLAIN QUERY PLAN {}", statement.sql))
                .unwrap()
                .query_map(rusqlite::params_from_iter(&statement.params), |r| r.get(3))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let shown = format!("{}: {details:?}", line.text);
            assert!(
                !details
                    .iter()
                    .any(|d| d.starts_with("SCAN t") || d == "SCAN e" || d.starts_with("SCAN e ")),
                "a scan: {shown}"
            );
            assert!(
                details.iter().any(|d| d.starts_with("SEARCH t0")),
                "{shown}"
            );
            if line.ordered {
                assert!(
                    !details.iter().any(|d| d.contains("TEMP B-TREE")),
                    "a sort: {shown}"
                );
            }
            if let Some(slot) = line.slot {
                let by = format!(".{slot} (grp=?");
                assert!(
                    details
                        .iter()
                        .any(|d| d.starts_with("SEARCH t0 USING INDEX") && d.contains(&by)),
                    "not the index of {slot}: {shown}"
                );
            }
        }
        store.close().await.unwrap();
    }
}
