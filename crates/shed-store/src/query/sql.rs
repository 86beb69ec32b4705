//! The second stage of a query: a [`Plan`] written as one SELECT and its
//! bound parameters, in the [`Dialect`] of the backend that runs it (the
//! two differ only in a few words: the full-text search, `IS NOT`, the
//! placeholders). Identifiers in it are only checked names (the plan's
//! components and columns) and integer ids; every value is a parameter. The
//! FROM drives from the first required component's table — its rowid is the
//! entity id, so newest first is a backward scan of it — else from the
//! entities; a CROSS JOIN keeps SQLite from driving from the entities table.
//! Every statement is filtered on the app and leaves tombstones out.
//!
//! On PostgreSQL, where each statement is a round trip to the server, the
//! statement also reads what SQLite's reader looks up in place per row: the
//! name each stamp's `by` and each carried `ref` shows, and each row's
//! edges — so a page is one statement, read in one snapshot.

use crate::values::Sql;

use super::plan::{Field, Filter, Plan};
use crate::ColumnType;
use crate::filter::{Op, Stamp};
use crate::schema::AppSchema;

/// The column of a row's id.
pub(crate) const ID: usize = 0;
/// The column of its entity's eid; `num`, `version` and `alias` follow.
pub(crate) const EID: usize = 1;
pub(crate) const NUM: usize = 2;
pub(crate) const VERSION: usize = 3;
pub(crate) const ALIAS: usize = 4;
/// The column of its sort value, which a cursor holds.
pub(crate) const ORDER_VALUE: usize = 5;
/// The first of the four columns of who wrote it, always read: who created
/// it and by which agent, then who changed it last and by which agent.
pub(crate) const AUTHORS: usize = 6;

/// A plan as SQL, and where its rows hold what the plan carries.
pub(crate) struct Statement {
    pub sql: String,
    pub params: Vec<Sql>,
    /// Each stamp carried and its first column: its `at`, then `by`, `via`.
    pub stamps: Vec<(Stamp, usize)>,
    /// The first column of the carried components: for each, in the plan's
    /// order, its table's id (null where not worn), then its columns.
    pub first_carried: usize,
    /// PostgreSQL's: the first column of the names shown — one for each
    /// carried stamp's `by`, in [`Statement::stamps`]' order, then one for
    /// each `ref` column of the carried components, in their order (null
    /// where nothing of that eid has a name).
    pub names_at: Option<usize>,
    /// PostgreSQL's, when the plan carries edges: the column of each row's
    /// edges' `rel`s, then the column of their `dst`s, in the same order.
    pub edges_at: Option<usize>,
}

/// The SQL a backend speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// `?` placeholders, FTS5 over `ec_<app>__fts`.
    Sqlite,
    /// `$n` placeholders, a `tsvector` column of the app's `doc` table.
    Postgres,
}

/// Writes a plan as one statement. It asks for one row past the plan's
/// limit, so a reader knows whether there is a next page.
pub(crate) fn write(plan: &Plan<'_>, dialect: Dialect) -> Statement {
    let driver = plan.joins.iter().position(|j| j.required);
    let id_expr = match driver {
        Some(i) => format!("{}.id", alias(i)),
        None => "e.id".to_string(),
    };
    let mut from = match driver {
        Some(i) => format!(
            "{} {a} {} ec_entities e ON e.id = {a}.id",
            AppSchema::table(plan.app_id, &plan.joins[i].component.name),
            match dialect {
                Dialect::Sqlite => "CROSS JOIN",
                Dialect::Postgres => "JOIN",
            },
            a = alias(i)
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
            AppSchema::table(plan.app_id, &j.component.name),
            a = alias(i)
        ));
    }
    let order_expr = match &plan.order.key {
        Some(key) => expr(key),
        None => id_expr.clone(),
    };

    let mut select = vec![
        id_expr.clone(),
        "e.eid".into(),
        "e.num".into(),
        "e.version".into(),
        "e.alias".into(),
        order_expr.clone(),
        "e.created_by".into(),
        "e.created_via".into(),
        "e.updated_by".into(),
        "e.updated_via".into(),
    ];
    let mut stamps = Vec::with_capacity(plan.stamps.len());
    for &stamp in &plan.stamps {
        stamps.push((stamp, select.len()));
        for field in ["at", "by", "via"] {
            select.push(format!("e.{}_{field}", stamp.word()));
        }
    }
    let first_carried = select.len();
    for (i, j) in plan.joins.iter().enumerate().filter(|(_, j)| j.carried) {
        select.push(format!("{}.id", alias(i)));
        for (column, _) in &j.component.columns {
            select.push(format!("{}.\"{column}\"", alias(i)));
        }
    }
    let (mut names_at, mut edges_at) = (None, None);
    if dialect == Dialect::Postgres {
        names_at = Some(select.len());
        for &stamp in &plan.stamps {
            select.push(name_sql(plan.app_id, &format!("e.{}_by", stamp.word())));
        }
        for (i, j) in plan.joins.iter().enumerate().filter(|(_, j)| j.carried) {
            for (column, ty) in &j.component.columns {
                if *ty == ColumnType::Ref {
                    let value = format!("{}.\"{column}\"", alias(i));
                    select.push(name_sql(plan.app_id, &value));
                }
            }
        }
        if plan.edges {
            edges_at = Some(select.len());
            for part in ["rel", "dst"] {
                select.push(format!(
                    "ARRAY(SELECT g.{part} FROM ec_edges g WHERE g.src = {id_expr} ORDER BY g.rel, g.dst)"
                ));
            }
        }
    }

    let mut sql = format!(
        "SELECT {} FROM {from} WHERE e.app = ? AND e.tombstoned = 0",
        select.join(", ")
    );
    let mut params = vec![Sql::Integer(plan.app_id)];
    let after = plan
        .after
        .as_ref()
        .map(|(value, id)| after_sql(plan, &order_expr, &id_expr, value, *id));
    let conditions = plan
        .filters
        .iter()
        .map(|filter| filter_sql(filter, &id_expr, plan.app_id, dialect))
        .chain(after);
    for (condition, values) in conditions {
        sql.push_str(" AND ");
        sql.push_str(&condition);
        params.extend(values);
    }
    let dir = if plan.order.descending { "DESC" } else { "ASC" };
    // Nulls sort first, as SQLite sorts them and the cursor's keyset reads them.
    let nulls = match (dialect, plan.order.descending) {
        (Dialect::Sqlite, _) => "",
        (Dialect::Postgres, false) => " NULLS FIRST",
        (Dialect::Postgres, true) => " NULLS LAST",
    };
    let order_by = match plan.order.key {
        Some(_) => format!("{order_expr} {dir}{nulls}, {id_expr} {dir}"),
        None => format!("{id_expr} {dir}"),
    };
    sql.push_str(&format!(" ORDER BY {order_by} LIMIT ?"));
    params.push(Sql::Integer(i64::from(plan.limit) + 1));
    if dialect == Dialect::Postgres {
        sql = numbered(&sql);
    }
    Statement {
        sql,
        params,
        stamps,
        first_carried,
        names_at,
        edges_at,
    }
}

/// The name the eid `value` (an expression) shows, as PostgreSQL reads it
/// in the row's statement: a person's name, else the app's entity's `doc`
/// title or alias; null when none.
fn name_sql(app_id: i64, value: &str) -> String {
    format!(
        "COALESCE((SELECT p.name FROM people p WHERE p.eid = {value}), \
         (SELECT COALESCE(d.title, n.alias) FROM ec_entities n LEFT JOIN {doc} d ON d.id = n.id \
         WHERE n.app = {app_id} AND n.eid = {value}))",
        doc = AppSchema::table(app_id, "doc")
    )
}

/// The alias of the table joined at this index of the plan's joins.
fn alias(join: usize) -> String {
    format!("t{join}")
}

/// A field as an expression over the joined tables.
fn expr(field: &Field) -> String {
    match field {
        Field::Column { join, column } => format!("{}.\"{column}\"", alias(*join)),
        Field::Stamp { stamp, field } => format!("e.{}_{}", stamp.word(), field.word()),
    }
}

/// The operator in SQL (`~` is a case-insensitive `LIKE`, on SQLite its
/// plain one).
fn sql_op(op: Op, dialect: Dialect) -> &'static str {
    match (op, dialect) {
        (Op::Eq, _) => "=",
        (Op::Ne, Dialect::Sqlite) => "IS NOT",
        (Op::Ne, Dialect::Postgres) => "IS DISTINCT FROM",
        (Op::Gt, _) => ">",
        (Op::Ge, _) => ">=",
        (Op::Lt, _) => "<",
        (Op::Le, _) => "<=",
        (Op::Contains, Dialect::Sqlite) => "LIKE",
        (Op::Contains, Dialect::Postgres) => "ILIKE",
    }
}

/// A filter as a condition and its parameters; `id_expr` is the row's id.
fn filter_sql(filter: &Filter, id_expr: &str, app_id: i64, dialect: Dialect) -> (String, Vec<Sql>) {
    match filter {
        Filter::Compare { field, op, value } => {
            // A `~` pattern's `%` and `_` are escaped with `\\`.
            let escape = if *op == Op::Contains {
                " ESCAPE '\\'"
            } else {
                ""
            };
            let (expr, op) = (expr(field), sql_op(*op, dialect));
            (format!("{expr} {op} ?{escape}"), vec![value.clone()])
        }
        Filter::EdgeTo { rel, to } => (
            "EXISTS(SELECT 1 FROM ec_edges g WHERE g.src = e.id AND g.rel = ? AND g.dst = ?)"
                .into(),
            vec![Sql::Text(rel.clone()), Sql::Text(to.clone())],
        ),
        Filter::Eid(eid) => ("e.eid = ?".into(), vec![Sql::Text(eid.clone())]),
        Filter::Alias(alias) => ("e.alias = ?".into(), vec![Sql::Text(alias.clone())]),
        Filter::Words(words) => match dialect {
            Dialect::Sqlite => (
                format!(
                    "{id_expr} IN (SELECT rowid FROM {fts} WHERE {fts} MATCH ?)",
                    fts = AppSchema::fts(app_id)
                ),
                vec![Sql::Text(fts_expression(words))],
            ),
            Dialect::Postgres => (
                format!(
                    "{id_expr} IN (SELECT id FROM {doc} WHERE fts @@ to_tsquery('simple', ?))",
                    doc = AppSchema::table(app_id, "doc")
                ),
                vec![Sql::Text(tsquery(words))],
            ),
        },
        Filter::Nothing => ("1 = 0".into(), Vec::new()),
    }
}

/// The keyset condition of a page after the row (`value`, `id`): past it in
/// the plan's order, nulls sorting first.
fn after_sql(
    plan: &Plan<'_>,
    order_expr: &str,
    id_expr: &str,
    value: &Sql,
    id: i64,
) -> (String, Vec<Sql>) {
    if plan.order.key.is_none() {
        return (format!("{id_expr} < ?"), vec![Sql::Integer(id)]);
    }
    let (x, k) = (order_expr, id_expr);
    let null = *value == Sql::Null;
    let condition = match (plan.order.descending, null) {
        (false, true) => format!("(({x} IS NULL AND {k} > ?) OR {x} IS NOT NULL)"),
        (false, false) => format!("({x} > ? OR ({x} = ? AND {k} > ?))"),
        (true, false) => format!("({x} < ? OR ({x} = ? AND {k} < ?) OR {x} IS NULL)"),
        (true, true) => format!("({x} IS NULL AND {k} < ?)"),
    };
    let mut values = Vec::with_capacity(3);
    if !null {
        values.push(value.clone());
        values.push(value.clone());
    }
    values.push(Sql::Integer(id));
    (condition, values)
}

/// An FTS5 expression: every word as a quoted string, the last as a prefix.
fn fts_expression(words: &[String]) -> String {
    let last = words.len().saturating_sub(1);
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
    terms.join(" ")
}

/// A PostgreSQL `tsquery` of the same meaning: every word must match (the
/// pieces of a word such as `e-mail` next to one another), the last piece of
/// the last word as a prefix. Each piece is a quoted lexeme, lower-cased as
/// the `simple` configuration indexes it.
fn tsquery(words: &[String]) -> String {
    let pieces = |w: &String| -> Vec<String> {
        w.split(|c: char| !c.is_alphanumeric())
            .filter(|p| !p.is_empty())
            .map(|p| format!("'{}'", p.to_lowercase()))
            .collect()
    };
    let mut terms: Vec<String> = words.iter().map(|w| pieces(w).join(" <-> ")).collect();
    if let Some(last) = terms.last_mut() {
        last.push_str(":*");
    }
    terms.join(" & ")
}

/// The statement with its `?` placeholders numbered `$1`, `$2`, … as
/// PostgreSQL takes them (no identifier or literal of a statement holds `?`).
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 16);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push_str(&format!("${n}"));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn fts_words() {
        assert_eq!(fts_expression(&words("hello wor")), "\"hello\" \"wor\"*");
        assert_eq!(
            fts_expression(&words("say \"hi\"")),
            "\"say\" \"\"\"hi\"\"\"*"
        );
        assert_eq!(
            tsquery(&words("Hello e-mail wor")),
            "'hello' & 'e' <-> 'mail' & 'wor':*"
        );
        assert_eq!(numbered("a = ? AND b = ?"), "a = $1 AND b = $2");
    }
}
