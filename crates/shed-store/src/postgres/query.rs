//! A filter line run on PostgreSQL: the shared plan and SQL
//! ([`crate::query`]) in its dialect, run in one read-only transaction (one
//! snapshot for the rows and the names), and the rows shaped as SQLite's
//! answers them (`sqlite/query/rows.rs`). The names refs and stamps show
//! (`{eid, name}`) are read in two statements for the whole page.

use std::collections::HashMap;

use deadpool_postgres::GenericClient;
use serde_json::{Map, Value, json};
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

use crate::filter::FilterLine;
use crate::query::cursor;
use crate::query::plan::{self, Lookup, Plan};
use crate::query::sql::{
    self, ALIAS, AUTHORS, Dialect, EID, ID, NUM, ORDER_VALUE, Statement, VERSION,
};
use crate::schema::AppSchema;
use crate::values::{Sql, render_time, to_json};
use crate::{Actor, Authorship, ColumnType, Listing, StoreError};

/// A connection answers a plan's lookups.
pub(super) struct Names<'c, C>(pub(super) &'c C);

impl<C: GenericClient> Lookup for Names<'_, C> {
    async fn person_by_handle(&self, handle: &str) -> Result<Option<String>, StoreError> {
        let stmt = self
            .0
            .prepare_cached("SELECT eid FROM people WHERE handle = $1")
            .await?;
        Ok(self.0.query_opt(&stmt, &[&handle]).await?.map(|r| r.get(0)))
    }

    async fn entity_by_alias(
        &self,
        app_id: i64,
        alias: &str,
    ) -> Result<Option<String>, StoreError> {
        let stmt = self
            .0
            .prepare_cached("SELECT eid FROM ec_entities WHERE app = $1 AND alias = $2")
            .await?;
        Ok(self
            .0
            .query_opt(&stmt, &[&app_id, &alias])
            .await?
            .map(|r| r.get(0)))
    }
}

/// Runs a parsed line over one app's rows.
pub(crate) async fn run(
    client: &impl GenericClient,
    schema: &AppSchema,
    line: &FilterLine,
) -> Result<Listing, StoreError> {
    let Some(plan) = plan::plan(&Names(client), schema, line).await? else {
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
    let stmt = client.prepare_cached(&statement.sql).await?;
    let mut found = client.query(&stmt, &params).await?;
    let more = found.len() > plan.limit as usize;
    found.truncate(plan.limit as usize);
    let names = shown_names(client, &plan, &statement, &found).await?;
    let mut rows = Vec::with_capacity(found.len());
    let mut authors = Vec::with_capacity(found.len());
    for r in &found {
        rows.push(shape(client, &plan, &statement, &names, r).await?);
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
        },
        updated: Actor {
            person: r.try_get(AUTHORS + 2)?,
            via: r.try_get(AUTHORS + 3)?,
        },
    })
}

/// The names of the people and entities a page shows: eid → name.
async fn shown_names(
    client: &impl GenericClient,
    plan: &Plan<'_>,
    statement: &Statement,
    rows: &[Row],
) -> Result<HashMap<String, String>, StoreError> {
    let mut eids: Vec<String> = Vec::new();
    for r in rows {
        for (_, base) in &statement.stamps {
            eids.push(r.try_get(base + 1)?);
        }
        let mut at = statement.first_carried;
        for j in plan.joins.iter().filter(|j| j.carried) {
            at += 1;
            for (_, ty) in &j.component.columns {
                if *ty == ColumnType::Ref
                    && let Sql::Text(eid) = r.try_get::<_, Sql>(at)?
                {
                    eids.push(eid);
                }
                at += 1;
            }
        }
    }
    let mut names = HashMap::new();
    if eids.is_empty() {
        return Ok(names);
    }
    eids.sort();
    eids.dedup();
    let entities = format!(
        "SELECT e.eid, COALESCE(d.title, e.alias) FROM ec_entities e LEFT JOIN {} d ON d.id = e.id
         WHERE e.app = $1 AND e.eid = ANY($2) AND COALESCE(d.title, e.alias) IS NOT NULL",
        AppSchema::table(plan.app_id, "doc")
    );
    for r in client.query(&entities, &[&plan.app_id, &eids]).await? {
        names.insert(r.get(0), r.get(1));
    }
    // A person's name comes before an entity's, as SQLite's answers have it.
    for r in client
        .query("SELECT eid, name FROM people WHERE eid = ANY($1)", &[&eids])
        .await?
    {
        names.insert(r.get(0), r.get(1));
    }
    Ok(names)
}

fn shown(eid: String, names: &HashMap<String, String>) -> Value {
    match names.get(&eid) {
        Some(n) => json!({ "eid": eid, "name": n }),
        None => json!({ "eid": eid }),
    }
}

/// One row as JSON: kind, entity, carried components, stamps, edges.
async fn shape(
    client: &impl GenericClient,
    plan: &Plan<'_>,
    statement: &Statement,
    names: &HashMap<String, String>,
    r: &Row,
) -> Result<Value, StoreError> {
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
            let shown_value = match (*ty, v) {
                (_, Sql::Null) => continue,
                (ColumnType::Ref, Sql::Text(eid)) => shown(eid, names),
                (ty, v) => to_json(v, ty),
            };
            comp.insert(column.clone(), shown_value);
        }
        if worn.is_some() {
            row.insert(j.component.name.clone(), Value::Object(comp));
        }
    }
    for (stamp, base) in &statement.stamps {
        let mut s = Map::new();
        s.insert("at".into(), json!(render_time(r.try_get(*base)?)));
        s.insert("by".into(), shown(r.try_get(base + 1)?, names));
        if let Some(via) = r.try_get::<_, Option<String>>(base + 2)? {
            s.insert("via".into(), json!(via));
        }
        row.insert(stamp.word().into(), Value::Object(s));
    }
    if plan.edges {
        let id: i64 = r.try_get(ID)?;
        let stmt = client
            .prepare_cached("SELECT rel, dst FROM ec_edges WHERE src = $1 ORDER BY rel, dst")
            .await?;
        let list: Vec<Value> = client
            .query(&stmt, &[&id])
            .await?
            .iter()
            .map(|g| json!({ "rel": g.get::<_, String>(0), "to": g.get::<_, String>(1) }))
            .collect();
        row.insert("edges".into(), Value::Array(list));
    }
    Ok(Value::Object(row))
}
