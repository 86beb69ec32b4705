//! The last stage of a query: the statement run and each row shaped as
//! DESIGN's "The filter line" answers it — `kind`, `entity`, each carried
//! component worn, the carried stamps, `edges` — with `ref` columns and
//! stamps' `by` answered as `{eid, name}`, and the `next` cursor when there
//! are more rows than the limit.

use std::collections::HashMap;

use crate::values::Sql;
use rusqlite::{Connection, OptionalExtension, Row};
use serde_json::{Map, Value, json};

use crate::query::cursor;
use crate::query::plan::Plan;
use crate::query::sql::{ALIAS, AUTHORS, EID, ID, NUM, ORDER_VALUE, Statement, VERSION};
use crate::values::{render_time, to_json};
use crate::{Actor, Authorship, ColumnType, Listing, StoreError};

/// Runs a plan's statement and answers its rows. Every lookup runs while the
/// statement is active, so all of them read the same snapshot.
pub(super) fn read(
    conn: &Connection,
    plan: &Plan<'_>,
    statement: &Statement,
) -> Result<Listing, StoreError> {
    let mut names = Names::new(conn, plan);
    let mut rows: Vec<Value> = Vec::with_capacity(plan.limit.min(64) as usize);
    let mut authors: Vec<Authorship> = Vec::with_capacity(rows.capacity());
    let mut last: Option<(Sql, i64)> = None;
    let mut more = false;
    let mut stmt = conn.prepare_cached(&statement.sql)?;
    let mut result = stmt.query(rusqlite::params_from_iter(&statement.params))?;
    while let Some(r) = result.next()? {
        if rows.len() as u32 == plan.limit {
            more = true;
            break;
        }
        let id: i64 = r.get(ID)?;
        rows.push(shape(conn, plan, statement, &mut names, r, id)?);
        authors.push(authorship(r)?);
        if rows.len() as u32 == plan.limit {
            last = Some((r.get(ORDER_VALUE)?, id));
        }
    }
    let next = match (more, last) {
        (true, Some((value, id))) => Some(cursor::encode(&plan.order.signature, &value, id)),
        _ => None,
    };
    Ok(Listing {
        rows,
        next,
        authors,
    })
}

/// Who wrote a row, from its [`AUTHORS`] columns.
fn authorship(r: &Row<'_>) -> Result<Authorship, StoreError> {
    Ok(Authorship {
        created: Actor {
            person: r.get(AUTHORS)?,
            via: r.get(AUTHORS + 1)?,
            through: None,
        },
        updated: Actor {
            person: r.get(AUTHORS + 2)?,
            via: r.get(AUTHORS + 3)?,
            through: None,
        },
    })
}

/// One row as JSON: kind, entity, carried components, stamps, edges.
fn shape(
    conn: &Connection,
    plan: &Plan<'_>,
    statement: &Statement,
    names: &mut Names<'_>,
    r: &Row<'_>,
    id: i64,
) -> Result<Value, StoreError> {
    // kind, entity, each carried component, the stamps, the edges
    let width = 2 + plan.joins.len() + statement.stamps.len() + usize::from(plan.edges);
    let mut row = Map::with_capacity(width);
    if let Some(k) = &plan.kind {
        row.insert("kind".into(), Value::String(k.clone()));
    }
    let mut entity = Map::with_capacity(4);
    entity.insert("eid".into(), Value::String(r.get(EID)?));
    entity.insert("num".into(), Value::from(r.get::<_, i64>(NUM)?));
    entity.insert("version".into(), Value::from(r.get::<_, i64>(VERSION)?));
    if let Some(alias) = r.get::<_, Option<String>>(ALIAS)? {
        entity.insert("alias".into(), Value::String(alias));
    }
    row.insert("entity".into(), Value::Object(entity));
    let mut at = statement.first_carried;
    for j in plan.joins.iter().filter(|j| j.carried) {
        let worn: Option<i64> = r.get(at)?;
        at += 1;
        let mut comp = Map::with_capacity(j.component.columns.len());
        for (column, ty) in &j.component.columns {
            let v: Sql = r.get(at)?;
            at += 1;
            if v == Sql::Null {
                continue;
            }
            let shown = match (*ty, v) {
                (ColumnType::Ref, Sql::Text(eid)) => names.reference(&eid)?,
                (ty, v) => to_json(v, ty),
            };
            comp.insert(column.clone(), shown);
        }
        if worn.is_some() {
            row.insert(j.component.name.clone(), Value::Object(comp));
        }
    }
    for (stamp, base) in &statement.stamps {
        let mut s = Map::new();
        s.insert("at".into(), json!(render_time(r.get(*base)?)));
        s.insert("by".into(), names.person(&r.get::<_, String>(base + 1)?)?);
        if let Some(via) = r.get::<_, Option<String>>(base + 2)? {
            s.insert("via".into(), json!(via));
        }
        row.insert(stamp.word().into(), Value::Object(s));
    }
    if plan.edges {
        let list: Vec<Value> = conn
            .prepare_cached("SELECT rel, dst FROM ec_edges WHERE src = ?1 ORDER BY rel, dst")?
            .query_map([id], |g| {
                Ok(json!({ "rel": g.get::<_, String>(0)?, "to": g.get::<_, String>(1)? }))
            })?
            .collect::<Result<_, _>>()?;
        row.insert("edges".into(), Value::Array(list));
    }
    Ok(Value::Object(row))
}

/// Names for `{eid, name}` answers, looked up once per query.
struct Names<'c> {
    conn: &'c Connection,
    app_id: i64,
    /// The statement reading an entity's title or alias (binding the app,
    /// the eid, then the doc's home group), when the app has a `doc`.
    titled: Option<(String, i64)>,
    known: HashMap<String, Option<String>>,
}

impl<'c> Names<'c> {
    fn new(conn: &'c Connection, plan: &Plan<'_>) -> Names<'c> {
        let titled = plan.doc.and_then(|doc| {
            let (title, _) = crate::schema::doc_slots(doc).ok()?;
            let home = doc.groups.first()?;
            Some((
                format!(
                    "SELECT COALESCE(d.{title}, e.alias) FROM ec_entities e LEFT JOIN {} d ON d.grp = ?3 AND d.id = e.id WHERE e.app = ?1 AND e.eid = ?2",
                    home.table()
                ),
                home.id,
            ))
        });
        Names {
            conn,
            app_id: plan.app_id,
            titled,
            known: HashMap::new(),
        }
    }

    /// A person: `{eid, name}`.
    fn person(&mut self, eid: &str) -> Result<Value, StoreError> {
        self.named(eid, false)
    }

    /// A ref: a person's name, else the entity's title or alias in this app.
    fn reference(&mut self, eid: &str) -> Result<Value, StoreError> {
        self.named(eid, true)
    }

    /// `{eid, name}`: the name a person has, else (for a ref, `entity`) the
    /// title or alias of the entity in this app.
    fn named(&mut self, eid: &str, entity: bool) -> Result<Value, StoreError> {
        if !self.known.contains_key(eid) {
            let mut name = crate::sqlite::people::by_eid(self.conn, eid)?.map(|p| p.name);
            if name.is_none()
                && entity
                && let Some((sql, group)) = &self.titled
            {
                name = self
                    .conn
                    .prepare_cached(sql)?
                    .query_row(rusqlite::params![self.app_id, eid, group], |r| r.get(0))
                    .optional()?
                    .flatten();
            }
            self.known.insert(eid.to_string(), name);
        }
        Ok(match self.known.get(eid).and_then(Option::as_ref) {
            Some(n) => json!({ "eid": eid, "name": n }),
            None => json!({ "eid": eid }),
        })
    }
}
