//! Fresh planner statistics for the tables an app grows. Every app's rows
//! share the shape tables, and autovacuum analyzes a table once a tenth of
//! all its rows changed: an app that grows fast inside a large shared table
//! is read with statistics that do not know it, and the planner, counting
//! a few rows where there are thousands, sorts every row of the app for a
//! page instead of walking 51 (`docs/decisions/hosted-store-layout.md`,
//! "The doors A/B"). So the store analyzes an app's tables itself, in the
//! background, each time the entities this process wrote to the app since
//! the last analysis reach a threshold: [`ANALYZE_FIRST_ENTITIES`], then
//! twice the last, up to [`ANALYZE_MOST_ENTITIES`] — a handful of analyses
//! while an app grows, one per [`ANALYZE_MOST_ENTITIES`] after. `ANALYZE`
//! samples a fixed number of rows, so each costs the same whatever the
//! table's size.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::txn::Txn;
use crate::schema::{AppSchema, Schemas};

/// The entities written to an app that make its tables' first analysis.
pub const ANALYZE_FIRST_ENTITIES: u64 = 100;
/// The most entities written to an app between two analyses.
pub const ANALYZE_MOST_ENTITIES: u64 = 100_000;
/// The most apps whose writes are counted; past it the counts start again
/// (analyses come later, nothing else changes).
pub const APPS_COUNTED: usize = 4_096;

/// The entities written to each app since its tables were last analyzed,
/// and the count that analyzes them next.
#[derive(Default)]
pub(crate) struct Growth {
    counted: Mutex<HashMap<String, (u64, u64)>>,
}

impl Growth {
    /// Counts `entities` written to `app`; answers whether its tables are
    /// due an analysis (the count then starts again, its threshold doubled).
    pub(crate) fn wrote(&self, app: &str, entities: u64) -> bool {
        let Ok(mut counted) = self.counted.lock() else {
            return false;
        };
        if counted.len() >= APPS_COUNTED && !counted.contains_key(app) {
            counted.clear();
        }
        // Looked up by `&str` first: a write to an app already counted
        // makes no key.
        if !counted.contains_key(app) {
            counted.insert(app.to_string(), (0, ANALYZE_FIRST_ENTITIES));
        }
        let Some((since, next)) = counted.get_mut(app) else {
            return false;
        };
        *since += entities;
        if *since < *next {
            return false;
        }
        *since = 0;
        *next = (*next * 2).min(ANALYZE_MOST_ENTITIES);
        true
    }
}

/// The statement that analyzes the tables `schema`'s rows are in: its
/// groups' shape tables, the entities' and the full text's (a page joins
/// the entities: with theirs stale the planner drives from them and sorts).
pub(crate) fn analyze_statement(schema: &AppSchema) -> String {
    let mut tables: Vec<String> = schema
        .components
        .iter()
        .flat_map(|c| c.groups.iter().map(|g| g.table()))
        .collect();
    tables.extend(["ec_entities".into(), "ec_fts".into()]);
    tables.sort();
    tables.dedup();
    format!("ANALYZE {}", tables.join(", "))
}

/// Analyzes `app`'s tables (its catalog read through `schemas`) on a
/// connection of `pool`, in the background: the write that made them due
/// has been answered already.
pub(crate) fn analyze(pool: deadpool_postgres::Pool, schemas: Arc<Schemas>, app: String) {
    tokio::spawn(async move {
        let analyzed = async {
            let client = pool.get().await.map_err(|e| e.to_string())?;
            let schema = schemas
                .read(&Txn::Connection(&client), &app)
                .await
                .map_err(|e| e.to_string())?;
            client
                .batch_execute(&analyze_statement(&schema))
                .await
                .map_err(|e| e.to_string())
        }
        .await;
        if let Err(error) = analyzed {
            tracing::warn!(%app, %error, "could not analyze the app's tables");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_app_is_due_at_the_first_threshold_then_at_twice_the_last_up_to_the_most() {
        let growth = Growth::default();
        assert!(!growth.wrote("a/b", ANALYZE_FIRST_ENTITIES - 1));
        assert!(growth.wrote("a/b", 1));
        assert!(!growth.wrote("a/b", 2 * ANALYZE_FIRST_ENTITIES - 1));
        assert!(growth.wrote("a/b", 1));
        assert!(!growth.wrote("c/d", 10), "another app counts on its own");
        let mut analyses = 0;
        for _ in 0..1_000 {
            analyses += u64::from(growth.wrote("a/b", 1_000));
        }
        // Due at 400, 800, …, 51,200 (counted in writes of 1,000: 8 with
        // 106k written), then every 100k of the 894k left: 8 + 8.
        assert_eq!(analyses, 16);
    }
}
