//! Running a filter line on SQLite: the clauses become one SELECT over the
//! app's component tables (values always bound as parameters), then the rows
//! are shaped as DESIGN says, with `ref` columns and `created.by` answered as
//! `{eid, name}`. Every statement is filtered on the app.

use std::collections::HashMap;

use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OptionalExtension};
use serde_json::{Map, Value, json};

use crate::filter::{Clause, FilterLine, Op, OrderKey, Stamp, StampField, Wear};
use crate::names::is_eid;
use crate::schema::{AppSchema, Component};
use crate::values::{from_text, render_time, to_json, type_sentence};
use crate::{ColumnType, Listing, StoreError};

const DEFAULT_LIMIT: u32 = 50;

/// A component table joined into the query.
struct Joined<'s> {
    component: &'s Component,
    alias: String,
    required: bool,
    carried: bool,
}

/// The query being built: joins, conditions and their parameters.
struct Plan<'s> {
    schema: &'s AppSchema,
    joins: Vec<Joined<'s>>,
    conditions: Vec<String>,
    params: Vec<Sql>,
}

impl<'s> Plan<'s> {
    fn component(&self, name: &str) -> Result<&'s Component, StoreError> {
        self.schema.component(name).ok_or_else(|| {
            StoreError::refused(format!("no component {name} in {}", self.schema.name))
        })
    }

    /// The alias of a component's table, joining it if new.
    fn join(&mut self, name: &str, required: bool, carried: bool) -> Result<String, StoreError> {
        let component = self.component(name)?;
        if let Some(j) = self.joins.iter_mut().find(|j| j.component.name == name) {
            j.required |= required;
            j.carried |= carried;
            return Ok(j.alias.clone());
        }
        let alias = format!("t{}", self.joins.len());
        self.joins.push(Joined {
            component,
            alias: alias.clone(),
            required,
            carried,
        });
        Ok(alias)
    }
}

fn sql_op(op: Op) -> &'static str {
    match op {
        Op::Eq => "=",
        Op::Ne => "IS NOT",
        Op::Gt => ">",
        Op::Ge => ">=",
        Op::Lt => "<",
        Op::Le => "<=",
        Op::Contains => "LIKE",
    }
}

/// `%value%` for LIKE, with the pattern characters escaped.
fn contains_pattern(value: &str) -> String {
    let mut p = String::with_capacity(value.len() + 2);
    p.push('%');
    for c in value.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

/// An FTS5 expression: every word as a quoted string, the last as a prefix.
/// `None` when no word has a letter or digit to match.
fn fts_expression(words: &str) -> Option<String> {
    let words: Vec<&str> = words
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .collect();
    let last = words.len().checked_sub(1)?;
    let terms: Vec<String> = words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let quoted = format!("\"{}\"", w.replace('"', "\"\""));
            if i == last {
                format!("{quoted}*")
            } else {
                quoted
            }
        })
        .collect();
    Some(terms.join(" "))
}

/// The eid a person is named by: an eid, `@handle` or a handle.
fn person_eid(conn: &Connection, value: &str) -> Result<String, StoreError> {
    if is_eid(value) {
        return Ok(value.to_string());
    }
    Ok(crate::people::by_handle(conn, value)?
        .map(|p| p.eid)
        .unwrap_or_else(|| value.to_string()))
}

/// The eid an eid or alias of this app names (the value itself when none:
/// it then matches nothing).
fn entity_eid(conn: &Connection, app_id: i64, value: &str) -> Result<String, StoreError> {
    if is_eid(value) {
        return Ok(value.to_string());
    }
    Ok(conn
        .prepare_cached("SELECT eid FROM ec_entities WHERE app = ?1 AND alias = ?2")?
        .query_row(rusqlite::params![app_id, value], |r| r.get(0))
        .optional()?
        .unwrap_or_else(|| value.to_string()))
}

/// A ref column's value in a line: a person (`@handle` or eid) or an entity (eid or alias).
fn ref_value(conn: &Connection, app_id: i64, value: &str) -> Result<String, StoreError> {
    match value.strip_prefix('@') {
        Some(handle) => person_eid(conn, handle),
        None => entity_eid(conn, app_id, value),
    }
}

/// The opaque `after` cursor: the order it belongs to, the last row's sort value and id.
fn encode_cursor(order: &str, value: &Sql, id: i64) -> String {
    let v = match value {
        Sql::Integer(i) => json!(["i", i]),
        Sql::Real(f) => json!(["r", f]),
        Sql::Text(s) => json!(["t", s]),
        _ => json!(["n"]),
    };
    hex::encode(json!({ "o": order, "v": v, "i": id }).to_string())
}

fn decode_cursor(cursor: &str, order: &str) -> Result<(Sql, i64), StoreError> {
    let bad = || {
        StoreError::refused(format!(
            "after takes the next of an earlier answer to the same line — {cursor} is not one"
        ))
    };
    let bytes = hex::decode(cursor).map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    if v.get("o").and_then(Value::as_str) != Some(order) {
        return Err(bad());
    }
    let id = v.get("i").and_then(Value::as_i64).ok_or_else(bad)?;
    let key = v.get("v").and_then(Value::as_array).ok_or_else(bad)?;
    let value = match (key.first().and_then(Value::as_str), key.get(1)) {
        (Some("i"), Some(n)) => Sql::Integer(n.as_i64().ok_or_else(bad)?),
        (Some("r"), Some(n)) => Sql::Real(n.as_f64().ok_or_else(bad)?),
        (Some("t"), Some(Value::String(s))) => Sql::Text(s.clone()),
        (Some("n"), None) => Sql::Null,
        _ => return Err(bad()),
    };
    Ok((value, id))
}

/// Runs a parsed line over one app's rows.
pub(crate) fn run(
    conn: &Connection,
    schema: &AppSchema,
    line: &FilterLine,
) -> Result<Listing, StoreError> {
    let mut plan = Plan {
        schema,
        joins: Vec::new(),
        conditions: Vec::new(),
        params: Vec::new(),
    };
    // An app never written has no tables: check the names, answer nothing.
    let app_id = schema.id.unwrap_or(-1);
    let mut kind: Option<String> = None;
    let mut stamps = (false, false);
    let mut edges = false;
    let mut limit = DEFAULT_LIMIT;
    let mut order: Option<(String, bool, ColumnType, String)> = None; // (expr, desc, type, signature)
    let mut after: Option<String> = None;
    let mut fts_words: Option<String> = None;
    for clause in &line.clauses {
        match clause {
            Clause::Component { name, wear } => {
                let required = *wear != Wear::Carry;
                plan.join(name, required, *wear != Wear::Require)?;
                if required && kind.is_none() {
                    kind = Some(name.clone());
                }
            }
            Clause::Compare {
                component,
                column,
                op,
                value,
            } => {
                let c = plan.component(component)?;
                let ty = c.column(column).ok_or_else(|| c.no_column(column))?;
                let alias = plan.join(component, true, false)?;
                if kind.is_none() {
                    kind = Some(component.clone());
                }
                let expr = format!("{alias}.\"{column}\"");
                push_compare(
                    conn, &mut plan, app_id, &expr, component, column, ty, *op, value,
                )?;
            }
            Clause::Stamp { stamp, wear } => {
                if *wear != Wear::Require {
                    match stamp {
                        Stamp::Created => stamps.0 = true,
                        Stamp::Updated => stamps.1 = true,
                    }
                }
            }
            Clause::StampCompare {
                stamp,
                field,
                op,
                value,
            } => {
                let w = stamp.word();
                match field {
                    StampField::At => {
                        let expr = format!("e.{w}_at");
                        push_compare(
                            conn,
                            &mut plan,
                            app_id,
                            &expr,
                            w,
                            "at",
                            ColumnType::Time,
                            *op,
                            value,
                        )?;
                    }
                    StampField::By => {
                        plan.conditions.push(format!("e.{w}_by {} ?", sql_op(*op)));
                        plan.params.push(Sql::Text(person_eid(
                            conn,
                            value.strip_prefix('@').unwrap_or(value),
                        )?));
                    }
                    StampField::Via => {
                        let expr = format!("e.{w}_via");
                        push_compare(
                            conn,
                            &mut plan,
                            app_id,
                            &expr,
                            w,
                            "via",
                            ColumnType::Text,
                            *op,
                            value,
                        )?;
                    }
                }
            }
            Clause::EdgeTo { rel, to } => {
                plan.conditions.push(
                    "EXISTS(SELECT 1 FROM ec_edges g WHERE g.src = e.id AND g.rel = ? AND g.dst = ?)".into(),
                );
                plan.params.push(Sql::Text(rel.clone()));
                plan.params.push(Sql::Text(entity_eid(conn, app_id, to)?));
            }
            Clause::Edges => edges = true,
            Clause::Words(words) => fts_words = Some(words.clone()),
            Clause::Eid(value) => {
                let column = if is_eid(value) { "eid" } else { "alias" };
                plan.conditions.push(format!("e.{column} = ?"));
                plan.params.push(Sql::Text(value.clone()));
            }
            Clause::Order { key, descending } => {
                let sign = if *descending { "-" } else { "" };
                order = Some(match key {
                    OrderKey::Column { component, column } => {
                        let c = plan.component(component)?;
                        let ty = c.column(column).ok_or_else(|| c.no_column(column))?;
                        let alias = plan.join(component, false, false)?;
                        (
                            format!("{alias}.\"{column}\""),
                            *descending,
                            ty,
                            format!("{sign}.{component}.{column}"),
                        )
                    }
                    OrderKey::Stamp(s) => (
                        format!("e.{}_at", s.word()),
                        *descending,
                        ColumnType::Time,
                        format!("{sign}.{}.at", s.word()),
                    ),
                });
            }
            Clause::Limit(n) => limit = *n,
            Clause::After(cursor) => after = Some(cursor.clone()),
        }
    }
    if let Some(words) = &fts_words {
        match fts_expression(words) {
            Some(expr) => {
                plan.conditions.push(format!(
                    "{{id}} IN (SELECT rowid FROM {fts} WHERE {fts} MATCH ?)",
                    fts = AppSchema::fts(app_id)
                ));
                plan.params.push(Sql::Text(expr));
            }
            None if !words.trim().is_empty() => plan.conditions.push("0".into()),
            None => {}
        }
    }
    if schema.id.is_none() {
        return Ok(Listing {
            rows: Vec::new(),
            next: None,
        });
    }

    // FROM: drive from the first required component's table (its rowid is the
    // entity id, so newest-first is a backwards scan of it), else the
    // entities. CROSS JOIN keeps SQLite from driving from the entities table.
    let driver = plan.joins.iter().position(|j| j.required);
    let id_expr = match driver {
        Some(i) => format!("{}.id", plan.joins[i].alias),
        None => "e.id".to_string(),
    };
    let mut from = match driver {
        Some(i) => format!(
            "{} {a} CROSS JOIN ec_entities e ON e.id = {a}.id",
            AppSchema::table(app_id, &plan.joins[i].component.name),
            a = plan.joins[i].alias
        ),
        None => "ec_entities e".to_string(),
    };
    for (i, j) in plan.joins.iter().enumerate() {
        if Some(i) == driver {
            continue;
        }
        from.push_str(&format!(
            " {} {} {a} ON {a}.id = {id_expr}",
            if j.required { "JOIN" } else { "LEFT JOIN" },
            AppSchema::table(app_id, &j.component.name),
            a = j.alias
        ));
    }

    let (order_expr, descending, order_type, signature) = order
        .clone()
        .unwrap_or_else(|| (id_expr.clone(), true, ColumnType::Number, String::new()));
    let custom_order = order.is_some();
    if let Some(cursor) = &after {
        let (value, id) = decode_cursor(cursor, &signature)?;
        let value = match (value, order_type) {
            (Sql::Real(f), ColumnType::Bool | ColumnType::Time) => Sql::Integer(f as i64),
            (v, _) => v,
        };
        if !custom_order {
            plan.conditions.push(format!("{id_expr} < ?"));
            plan.params.push(Sql::Integer(id));
        } else {
            let x = &order_expr;
            let k = &id_expr;
            let null = value == Sql::Null;
            let condition = match (descending, null) {
                (false, true) => format!("(({x} IS NULL AND {k} > ?) OR {x} IS NOT NULL)"),
                (false, false) => format!("({x} > ? OR ({x} = ? AND {k} > ?))"),
                (true, false) => format!("({x} < ? OR ({x} = ? AND {k} < ?) OR {x} IS NULL)"),
                (true, true) => format!("({x} IS NULL AND {k} < ?)"),
            };
            if !null {
                plan.params.push(value.clone());
                plan.params.push(value);
            }
            plan.params.push(Sql::Integer(id));
            plan.conditions.push(condition);
        }
    }

    let mut select = vec![
        id_expr.clone(),
        "e.eid".into(),
        "e.num".into(),
        "e.version".into(),
        "e.alias".into(),
        order_expr.clone(),
    ];
    const ORDER_VALUE: usize = 5;
    // The stamps asked for: (name, first column of its at, by, via).
    let mut stamp_columns: Vec<(&str, usize)> = Vec::new();
    for (wanted, stamp) in [(stamps.0, "created"), (stamps.1, "updated")] {
        if wanted {
            stamp_columns.push((stamp, select.len()));
            for field in ["at", "by", "via"] {
                select.push(format!("e.{stamp}_{field}"));
            }
        }
    }
    let first_carried = select.len();
    for j in plan.joins.iter().filter(|j| j.carried) {
        select.push(format!("{}.id", j.alias));
        for (column, _) in &j.component.columns {
            select.push(format!("{}.\"{column}\"", j.alias));
        }
    }
    let dir = if descending { "DESC" } else { "ASC" };
    let order_by = if custom_order {
        format!("{order_expr} {dir}, {id_expr} {dir}")
    } else {
        format!("{id_expr} {dir}")
    };
    let mut sql = format!(
        "SELECT {} FROM {from} WHERE e.app = ? AND e.tombstoned = 0",
        select.join(", ")
    );
    let mut params = vec![Sql::Integer(app_id)];
    for c in &plan.conditions {
        sql.push_str(" AND ");
        sql.push_str(&c.replace("{id}", &id_expr));
    }
    params.append(&mut plan.params);
    sql.push_str(&format!(" ORDER BY {order_by} LIMIT ?"));
    params.push(Sql::Integer(i64::from(limit) + 1));

    // Every lookup below runs while the main statement is active, so all of
    // them read the same snapshot.
    let read = conn;
    let mut names = Names::new(read, app_id);
    let mut rows: Vec<Value> = Vec::with_capacity(limit.min(64) as usize);
    // kind, entity, each carried component, the stamps, the edges
    let row_width = 2 + plan.joins.len() + stamp_columns.len() + usize::from(edges);
    let mut last: Option<(Sql, i64)> = None;
    let mut more = false;
    {
        let mut stmt = read.prepare_cached(&sql)?;
        let mut result = stmt.query(rusqlite::params_from_iter(params))?;
        while let Some(r) = result.next()? {
            if rows.len() as u32 == limit {
                more = true;
                break;
            }
            let id: i64 = r.get(0)?;
            let mut row = Map::with_capacity(row_width);
            if let Some(k) = &kind {
                row.insert("kind".into(), Value::String(k.clone()));
            }
            let mut entity = Map::with_capacity(4);
            entity.insert("eid".into(), Value::String(r.get(1)?));
            entity.insert("num".into(), Value::from(r.get::<_, i64>(2)?));
            entity.insert("version".into(), Value::from(r.get::<_, i64>(3)?));
            if let Some(alias) = r.get::<_, Option<String>>(4)? {
                entity.insert("alias".into(), Value::String(alias));
            }
            row.insert("entity".into(), Value::Object(entity));
            let mut at = first_carried;
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
            for (stamp, base) in &stamp_columns {
                let mut s = Map::new();
                s.insert("at".into(), json!(render_time(r.get(*base)?)));
                s.insert("by".into(), names.person(&r.get::<_, String>(base + 1)?)?);
                if let Some(via) = r.get::<_, Option<String>>(base + 2)? {
                    s.insert("via".into(), json!(via));
                }
                row.insert((*stamp).into(), Value::Object(s));
            }
            if edges {
                let list: Vec<Value> = read
                    .prepare_cached(
                        "SELECT rel, dst FROM ec_edges WHERE src = ?1 ORDER BY rel, dst",
                    )?
                    .query_map([id], |g| {
                        Ok(json!({ "rel": g.get::<_, String>(0)?, "to": g.get::<_, String>(1)? }))
                    })?
                    .collect::<Result<_, _>>()?;
                row.insert("edges".into(), Value::Array(list));
            }
            if rows.len() as u32 + 1 == limit {
                last = Some((r.get(ORDER_VALUE)?, id));
            }
            rows.push(Value::Object(row));
        }
    }
    let next = match (more, last) {
        (true, Some((value, id))) => Some(encode_cursor(&signature, &value, id)),
        _ => None,
    };
    Ok(Listing { rows, next })
}

/// Adds `expr <op> value` with the value read under the column's type.
#[allow(clippy::too_many_arguments)]
fn push_compare(
    conn: &Connection,
    plan: &mut Plan<'_>,
    app_id: i64,
    expr: &str,
    component: &str,
    column: &str,
    ty: ColumnType,
    op: Op,
    value: &str,
) -> Result<(), StoreError> {
    if op == Op::Contains {
        if !matches!(ty, ColumnType::Text | ColumnType::Url) {
            return Err(StoreError::refused(format!(
                "{} — ~ (contains) is for text",
                type_sentence(component, column, ty)
            )));
        }
        plan.conditions.push(format!("{expr} LIKE ? ESCAPE '\\'"));
        plan.params.push(Sql::Text(contains_pattern(value)));
        return Ok(());
    }
    let bound = if ty == ColumnType::Ref {
        Sql::Text(ref_value(conn, app_id, value)?)
    } else {
        from_text(value, ty)
            .ok_or_else(|| StoreError::refused(type_sentence(component, column, ty)))?
    };
    plan.conditions.push(format!("{expr} {} ?", sql_op(op)));
    plan.params.push(bound);
    Ok(())
}

/// Names for `{eid, name}` answers, looked up once per query.
struct Names<'c> {
    conn: &'c Connection,
    app_id: i64,
    known: HashMap<String, Option<String>>,
}

impl<'c> Names<'c> {
    fn new(conn: &'c Connection, app_id: i64) -> Names<'c> {
        Names {
            conn,
            app_id,
            known: HashMap::new(),
        }
    }

    fn shown(eid: &str, name: Option<&String>) -> Value {
        match name {
            Some(n) => json!({ "eid": eid, "name": n }),
            None => json!({ "eid": eid }),
        }
    }

    /// A person: `{eid, name}`.
    fn person(&mut self, eid: &str) -> Result<Value, StoreError> {
        if !self.known.contains_key(eid) {
            let name = crate::people::by_eid(self.conn, eid)?.map(|p| p.name);
            self.known.insert(eid.to_string(), name);
        }
        Ok(Self::shown(
            eid,
            self.known.get(eid).and_then(Option::as_ref),
        ))
    }

    /// A ref: a person's name, else the entity's title or alias in this app.
    fn reference(&mut self, eid: &str) -> Result<Value, StoreError> {
        if !self.known.contains_key(eid) {
            let mut name = crate::people::by_eid(self.conn, eid)?.map(|p| p.name);
            if name.is_none() {
                name = self
                    .conn
                    .prepare_cached(&format!(
                        "SELECT COALESCE(d.title, e.alias) FROM ec_entities e LEFT JOIN {} d ON d.id = e.id WHERE e.app = ?1 AND e.eid = ?2",
                        AppSchema::table(self.app_id, "doc")
                    ))?
                    .query_row(rusqlite::params![self.app_id, eid], |r| r.get(0))
                    .optional()?
                    .flatten();
            }
            self.known.insert(eid.to_string(), name);
        }
        Ok(Self::shown(
            eid,
            self.known.get(eid).and_then(Option::as_ref),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fts_words() {
        assert_eq!(
            fts_expression("hello wor").as_deref(),
            Some("\"hello\" \"wor\"*")
        );
        assert_eq!(
            fts_expression("say \"hi\"").as_deref(),
            Some("\"say\" \"\"\"hi\"\"\"*")
        );
        assert_eq!(fts_expression("!!!"), None);
        assert_eq!(contains_pattern("5%_"), "%5\\%\\_%");
    }

    #[test]
    fn cursors_round_trip_and_refuse_others() {
        let c = encode_cursor("-.jog.miles", &Sql::Real(5.5), 42);
        assert_eq!(
            decode_cursor(&c, "-.jog.miles").unwrap(),
            (Sql::Real(5.5), 42)
        );
        assert!(decode_cursor(&c, "").is_err());
        assert!(decode_cursor("zz", "").is_err());
    }
}
