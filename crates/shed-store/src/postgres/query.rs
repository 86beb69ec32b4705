//! A filter line run on PostgreSQL: the shared plan and SQL
//! ([`crate::query`]) in its dialect, and the rows shaped as SQLite's
//! answers them (`sqlite/query/rows.rs`). A page is one prepared statement,
//! its own snapshot: the names refs and stamps show (`{eid, name}`) and the
//! rows' edges are columns of it. Only a read that must ask more — the
//! names its line gives (`@handle`, an alias), or the app's catalog when
//! not cached — first opens a [`Snapshot`], so everything it asks reads
//! one.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use deadpool_postgres::GenericClient;
use serde_json::{Map, Value, json};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use super::txn::Txn;
use crate::filter::FilterLine;
use crate::query::cursor;
use crate::query::plan::{self, Lookup, Plan};
use crate::query::sql::{
    self, ALIAS, AUTHORS, Dialect, EID, ID, NUM, ORDER_VALUE, Statement, VERSION,
};
use crate::schema::{AppSchema, Schemas};
use crate::values::{Sql, render_time, to_json};
use crate::{Actor, Authorship, ColumnType, Listing, StoreError};

/// One read's snapshot on its connection: none while the read is one
/// statement, else a `REPEATABLE READ READ ONLY` transaction begun before
/// its first statement — so the lookups of a plan, and the page after
/// them, read one snapshot. It answers the plan's lookups.
pub(super) struct Snapshot<'c> {
    pub(super) client: &'c deadpool_postgres::Client,
    begun: AtomicBool,
}

impl<'c> Snapshot<'c> {
    pub(super) fn new(client: &'c deadpool_postgres::Client) -> Self {
        Self {
            client,
            begun: AtomicBool::new(false),
        }
    }

    /// Begins the transaction, once.
    async fn begin(&self) -> Result<(), StoreError> {
        if !self.begun.swap(true, Ordering::Relaxed) {
            self.client
                .batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                .await?;
        }
        Ok(())
    }

    /// Ends the transaction if one was begun: committed after a read that
    /// answered, rolled back after one refused.
    pub(super) async fn end(&self, answered: bool) -> Result<(), StoreError> {
        if self.begun.load(Ordering::Relaxed) {
            let end = if answered { "COMMIT" } else { "ROLLBACK" };
            self.client.batch_execute(end).await?;
        }
        Ok(())
    }

    /// The app's catalog: the readers' cache's, or else read in the snapshot.
    pub(super) async fn schema(
        &self,
        schemas: &Schemas,
        app: &str,
    ) -> Result<Arc<AppSchema>, StoreError> {
        if schemas.cached(app).is_err() {
            self.begin().await?;
        }
        schemas.read(&Txn::Connection(self.client), app).await
    }
}

impl Lookup for Snapshot<'_> {
    async fn person_by_handle(&self, handle: &str) -> Result<Option<String>, StoreError> {
        self.begin().await?;
        Txn::Connection(self.client).person_by_handle(handle).await
    }

    async fn entity_by_alias(
        &self,
        app_id: i64,
        alias: &str,
    ) -> Result<Option<String>, StoreError> {
        self.begin().await?;
        Txn::Connection(self.client)
            .entity_by_alias(app_id, alias)
            .await
    }
}

/// The statements a read session keeps prepared, at most: a read's
/// statement is its app's and line's ([`sql`]'s `key`), so the server
/// keeps its plan for the next read of that line. Past this many the
/// session forgets them all (each is closed on the server) and prepares
/// again what it reads next, so the server's memory for them stays bounded
/// however many apps are read: a kept plan of a 50-row page of the run
/// club is ≈ 80 KiB of the server's memory, ≈ 140 KiB with the names its
/// leaderboard shows — at most ≈ 9 MiB a read session.
const KEPT_STATEMENTS: usize = 64;

/// Runs a parsed line over one app's rows: its lookups through `names`,
/// then the page in one statement, whose columns hold the names refs and
/// stamps show and each row's edges too.
pub(crate) async fn run(
    client: &deadpool_postgres::Client,
    names: &impl Lookup,
    schema: &AppSchema,
    line: &FilterLine,
) -> Result<Listing, StoreError> {
    let Some(plan) = plan::plan(names, schema, line).await? else {
        return Ok(Listing {
            rows: Vec::new(),
            next: None,
            authors: Vec::new(),
        });
    };
    let statement = sql::write(&plan, Dialect::Postgres);
    let params: Vec<&(dyn ToSql + Sync)> = statement
        .params
        .iter()
        .map(|p| p as &(dyn ToSql + Sync))
        .collect();
    if client.statement_cache.size() >= KEPT_STATEMENTS {
        client.statement_cache.clear();
    }
    let stmt = client.prepare_cached(&statement.sql).await?;
    let mut found = client.query(&stmt, &params).await?;
    let more = found.len() > plan.limit as usize;
    found.truncate(plan.limit as usize);
    let mut rows = Vec::with_capacity(found.len());
    let mut authors = Vec::with_capacity(found.len());
    for r in &found {
        rows.push(shape(&plan, &statement, r)?);
        authors.push(authorship(r)?);
    }
    let next = match (more, found.last()) {
        (true, Some(r)) => Some(cursor::encode(
            &plan.order.signature,
            &r.try_get::<_, Sql>(ORDER_VALUE)?,
            r.try_get(ID)?,
        )),
        _ => None,
    };
    Ok(Listing {
        rows,
        next,
        authors,
    })
}

/// Who wrote a row, from its [`AUTHORS`] columns.
fn authorship(r: &Row) -> Result<Authorship, StoreError> {
    Ok(Authorship {
        created: Actor {
            person: r.try_get(AUTHORS)?,
            via: r.try_get(AUTHORS + 1)?,
            through: None,
        },
        updated: Actor {
            person: r.try_get(AUTHORS + 2)?,
            via: r.try_get(AUTHORS + 3)?,
            through: None,
        },
    })
}

/// An eid as shown: `{eid, name}`, or `{eid}` when nothing of it has a name.
fn shown(eid: String, name: Option<String>) -> Value {
    match name {
        Some(n) => json!({ "eid": eid, "name": n }),
        None => json!({ "eid": eid }),
    }
}

/// One row as JSON: kind, entity, carried components, stamps, edges.
fn shape(plan: &Plan<'_>, statement: &Statement, r: &Row) -> Result<Value, StoreError> {
    // The names: the stamps' first, then the carried refs', in order.
    let names_at = statement
        .names_at
        .ok_or_else(|| StoreError::Internal("a statement without its names".into()))?;
    let mut ref_name_at = names_at + statement.stamps.len();
    let mut row = Map::new();
    if let Some(k) = &plan.kind {
        row.insert("kind".into(), Value::String(k.clone()));
    }
    let mut entity = Map::with_capacity(4);
    entity.insert("eid".into(), Value::String(r.try_get(EID)?));
    entity.insert("num".into(), Value::from(r.try_get::<_, i64>(NUM)?));
    entity.insert("version".into(), Value::from(r.try_get::<_, i64>(VERSION)?));
    if let Some(alias) = r.try_get::<_, Option<String>>(ALIAS)? {
        entity.insert("alias".into(), Value::String(alias));
    }
    row.insert("entity".into(), Value::Object(entity));
    let mut at = statement.first_carried;
    for j in plan.joins.iter().filter(|j| j.carried) {
        let worn: Option<i64> = r.try_get(at)?;
        at += 1;
        let mut comp = Map::with_capacity(j.component.columns.len());
        for (column, ty) in &j.component.columns {
            let v: Sql = r.try_get(at)?;
            at += 1;
            let name: Option<String> = if *ty == ColumnType::Ref {
                ref_name_at += 1;
                r.try_get(ref_name_at - 1)?
            } else {
                None
            };
            let shown_value = match (*ty, v) {
                (_, Sql::Null) => continue,
                (ColumnType::Ref, Sql::Text(eid)) => shown(eid, name),
                (ty, v) => to_json(v, ty),
            };
            comp.insert(column.clone(), shown_value);
        }
        if worn.is_some() {
            row.insert(j.component.name.clone(), Value::Object(comp));
        }
    }
    for (i, (stamp, base)) in statement.stamps.iter().enumerate() {
        let mut s = Map::new();
        let name = r.try_get(names_at + i)?;
        s.insert("at".into(), json!(render_time(r.try_get(*base)?)));
        s.insert("by".into(), shown(r.try_get(base + 1)?, name));
        if let Some(via) = r.try_get::<_, Option<String>>(base + 2)? {
            s.insert("via".into(), json!(via));
        }
        row.insert(stamp.word().into(), Value::Object(s));
    }
    if let Some(edges_at) = statement.edges_at {
        let rels: Vec<String> = r.try_get(edges_at)?;
        let dsts: Vec<String> = r.try_get(edges_at + 1)?;
        let list: Vec<Value> = rels
            .into_iter()
            .zip(dsts)
            .map(|(rel, to)| json!({ "rel": rel, "to": to }))
            .collect();
        row.insert("edges".into(), Value::Array(list));
    }
    Ok(Value::Object(row))
}

#[cfg(test)]
mod tests {
    use tokio_postgres::types::ToSql;

    use super::Txn;
    use crate::query::plan;
    use crate::query::plans::{APP, Line, fill};
    use crate::query::sql::{self, Dialect};

    /// The plans' apps filled on the database at `url` ([`fill`]): the
    /// store that wrote them, the backend to read them through, and the
    /// lines to plan.
    async fn filled(url: &str) -> (crate::Store, crate::postgres::Postgres, Vec<Line>) {
        let store = crate::Store::connect(url).await.unwrap();
        let lines = fill(&store).await;
        let db = crate::postgres::Postgres::open(url).await.unwrap();
        (store, db, lines)
    }

    // Every read the web door relies on walks an index of the shared shape
    // tables inside one app's group — each index condition on a shape table
    // names the group, on the full text the app; a filter or an order by a
    // slot uses the slot's index, and a line's order comes from the walk,
    // not a sort — as PostgreSQL plans it with sequential scans and sorts
    // priced out (so the plan is what the indexes allow, whatever the few
    // rows here). Runs on the server `SHED_TEST_DATABASE` names.
    #[tokio::test]
    async fn the_reads_walk_an_index_inside_one_app() {
        let Some(url) = shed_test_database::fresh() else {
            eprintln!("a test of PostgreSQL's plans, skipped without SHED_TEST_DATABASE");
            return;
        };
        let (store, db, lines) = filled(&url).await;
        let client = db.client().await.unwrap();
        let t = Txn::Connection(&client);
        let schema = crate::schema::load(&t, APP).await.unwrap();
        // 20,000 more runs of the app, each with its words, and 20,000 docs
        // of another app holding the words searched, so neither is a page's
        // worth the planner reads whole whatever the indexes.
        let jog = schema.component("jog").unwrap().home().unwrap();
        let bulk = format!(
            "WITH e AS (INSERT INTO ec_entities(app, eid, num, version, created_at, created_by, updated_at, updated_by)
                SELECT $1, 'bulk' || i, 1000 + i, 1, 0, 'p', 0, 'p' FROM generate_series(1, 20000) i
                RETURNING id, num)
             INSERT INTO {}(grp, id, t0, n0, d0, b0)
                SELECT $2, id, 'bulk ' || num, num, now(), num % 2 = 0 FROM e",
            jog.table()
        );
        client
            .execute(&bulk, &[&schema.id.unwrap(), &jog.id])
            .await
            .unwrap();
        let words = "INSERT INTO ec_fts(app, id, fts)
                SELECT app, id, to_tsvector('simple', 'bulk ' || num) FROM ec_entities WHERE eid LIKE 'bulk%'
            UNION ALL
                SELECT -1, i, to_tsvector('simple', 'a morning loop by the river')
                FROM generate_series(1, 20000) i";
        client.execute(words, &[]).await.unwrap();
        let doc = schema.component("doc").unwrap().home().unwrap();
        let docs = format!(
            "INSERT INTO {}(grp, id, t0) SELECT $1, id, 'bulk ' || num FROM ec_entities WHERE eid LIKE 'bulk%'",
            doc.table()
        );
        client.execute(&docs, &[&doc.id]).await.unwrap();
        client
            .batch_execute("ANALYZE; SET enable_seqscan = off; SET enable_sort = off")
            .await
            .unwrap();
        for line in lines {
            let parsed = crate::filter::parse(&line.text).unwrap();
            let plan = plan::plan(&t, &schema, &parsed).await.unwrap().unwrap();
            let statement = sql::write(&plan, Dialect::Postgres);
            let params: Vec<&(dyn ToSql + Sync)> = statement
                .params
                .iter()
                .map(|p| p as &(dyn ToSql + Sync))
                .collect();
            let explained: Vec<String> = client
                .query(&format!("EXPLAIN {}", statement.sql), &params)
                .await
                .unwrap()
                .iter()
                .map(|r| r.get(0))
                .collect();
            let shown = format!("{}:\n{}", line.text, explained.join("\n"));
            assert!(
                !explained.iter().any(|l| l.contains("Seq Scan")),
                "a scan: {shown}"
            );
            for (i, l) in explained.iter().enumerate() {
                let lead = if l.contains(" on ec_rows_") {
                    "(grp = "
                } else if l.contains(" on ec_fts") {
                    "(app = "
                } else {
                    continue;
                };
                let cond = explained[i + 1..]
                    .iter()
                    .find(|c| c.contains("Index Cond") || c.contains("Recheck Cond"));
                assert!(
                    cond.is_some_and(|c| c.contains(lead)),
                    "a walk not led by {lead}: {shown}"
                );
            }
            if line.ordered {
                assert!(
                    !explained.iter().any(|l| l.contains("Sort")),
                    "a sort: {shown}"
                );
            }
            if let Some(slot) = line.slot {
                let by = format!(".{slot}\" on ec_rows_");
                assert!(
                    explained.iter().any(|l| l.contains(&by)),
                    "not the index of {slot}: {shown}"
                );
            }
        }
        store.close().await.unwrap();
    }

    // A session reading many lines keeps at most KEPT_STATEMENTS of them
    // prepared on the server: each limit here is a statement of its own.
    #[tokio::test]
    async fn a_read_session_keeps_at_most_its_statements() {
        let Some(url) = shed_test_database::fresh() else {
            eprintln!("a test of PostgreSQL's sessions, skipped without SHED_TEST_DATABASE");
            return;
        };
        let (store, db, _) = filled(&url).await;
        let client = db.client().await.unwrap();
        let t = Txn::Connection(&client);
        let schema = crate::schema::load(&t, APP).await.unwrap();
        for limit in 1..=2 * super::KEPT_STATEMENTS {
            let line = crate::filter::parse(&format!(".jog!&limit={limit}")).unwrap();
            let listing = super::run(&client, &t, &schema, &line).await.unwrap();
            assert!(!listing.rows.is_empty());
        }
        let kept: i64 = client
            .query_one("SELECT count(*) FROM pg_prepared_statements", &[])
            .await
            .unwrap()
            .get(0);
        assert!(
            usize::try_from(kept).unwrap() <= super::KEPT_STATEMENTS,
            "{kept} statements kept"
        );
        store.close().await.unwrap();
    }
}
