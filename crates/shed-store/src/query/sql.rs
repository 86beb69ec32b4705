//! The second stage of a query: a [`Plan`] written as one SELECT and its
//! bound parameters, in the [`Dialect`] of the backend that runs it (the
//! two differ only in a few words: the full-text search, `IS NOT`, the
//! placeholders). Identifiers in it are only shape tables and their slots
//! (the catalog's places of the plan's columns); every value a caller
//! gives is a parameter. The app's and its groups' ids and the limit are
//! parameters on SQLite, so one statement serves every app of the same
//! shapes and line, and written in on PostgreSQL, so the server keeps a
//! plan an app's line ([`key`]). Each component is read from its home group's
//! row (`grp`, `id`) — a required component's joined, another's left
//! joined — and its other groups' rows left joined where the line reads
//! their columns. The FROM drives from the first required component's
//! home group — its key leads with the group, then the entity id, so
//! newest first is a backward walk of it inside one app — else from the
//! entities; a CROSS JOIN keeps SQLite from driving from the entities
//! table. Every statement is filtered on the app and leaves tombstones out.
//!
//! On PostgreSQL, where each statement is a round trip to the server, the
//! statement also reads what SQLite's reader looks up in place per row: the
//! name each stamp's `by` and each carried `ref` shows, and each row's
//! edges — so a page is one statement, read in one snapshot.

use crate::values::Sql;

use super::plan::{Field, Filter, Plan};
use crate::ColumnType;
use crate::filter::{Op, Stamp};

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
    /// `?` placeholders, FTS5 over the shared `ec_fts`.
    Sqlite,
    /// `$n` placeholders, the `tsvector`s of the shared `ec_fts`.
    Postgres,
}

/// Writes a plan as one statement. It asks for one row past the plan's
/// limit, so a reader knows whether there is a next page.
pub(crate) fn write(plan: &Plan<'_>, dialect: Dialect) -> Statement {
    let driver = plan.joins.iter().position(|j| j.required);
    let id_expr = match driver {
        Some(i) => format!("{}.id", alias(i, 0)),
        None => "e.id".to_string(),
    };
    let mut from_params = Vec::new();
    let driving = driver.and_then(|i| Some((i, plan.joins[i].component.groups.first()?)));
    let mut from = match driving {
        Some((i, home)) => {
            let join = match dialect {
                Dialect::Sqlite => "CROSS JOIN",
                Dialect::Postgres => "JOIN",
            };
            format!(
                "{} {a} {join} ec_entities e ON e.id = {a}.id AND {a}.grp = {}",
                home.table(),
                key(dialect, home.id, &mut from_params),
                a = alias(i, 0)
            )
        }
        None => "ec_entities e".to_string(),
    };
    for (i, j) in plan.joins.iter().enumerate() {
        let read = groups_read(plan, i);
        for (g, group) in j.component.groups.iter().enumerate() {
            if Some(i) == driver && g == 0 || g > 0 && !read[g] {
                continue;
            }
            let join = if g == 0 && j.required {
                "JOIN"
            } else {
                "LEFT JOIN"
            };
            from.push_str(&format!(
                " {join} {} {a} ON {a}.grp = {} AND {a}.id = {id_expr}",
                group.table(),
                key(dialect, group.id, &mut from_params),
                a = alias(i, g)
            ));
        }
    }
    let order_expr = match &plan.order.key {
        Some(key) => expr(plan, key),
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
        select.push(format!("{}.id", alias(i, 0)));
        for (column, _) in &j.component.columns {
            select.push(column_expr(plan, i, column));
        }
    }
    let (mut names_at, mut edges_at) = (None, None);
    if dialect == Dialect::Postgres {
        names_at = Some(select.len());
        let mut named = Vec::new();
        for &stamp in &plan.stamps {
            named.push(format!("e.{}_by", stamp.word()));
        }
        for (i, j) in plan.joins.iter().enumerate().filter(|(_, j)| j.carried) {
            for (column, ty) in &j.component.columns {
                if *ty == ColumnType::Ref {
                    named.push(column_expr(plan, i, column));
                }
            }
        }
        for value in named {
            select.push(name_sql(plan, &value));
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

    let mut params = from_params;
    // A driving group is the app's own, so its rows are the app's: on
    // PostgreSQL the entities are then reached by id alone, never by an
    // index of every app's entities (`app`) whose statistics may not know
    // this app yet — a plan that reads all of the app's rows and sorts them.
    let app = match (dialect, driving) {
        (Dialect::Postgres, Some(_)) => String::new(),
        _ => format!("e.app = {} AND ", key(dialect, plan.app_id, &mut params)),
    };
    let mut sql = format!(
        "SELECT {} FROM {from} WHERE {app}e.tombstoned = 0",
        select.join(", "),
    );
    let after = plan
        .after
        .as_ref()
        .map(|(value, id)| after_sql(plan, &order_expr, &id_expr, value, *id));
    let conditions = plan
        .filters
        .iter()
        .map(|filter| filter_sql(plan, filter, &id_expr, dialect))
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
    let limit = key(dialect, i64::from(plan.limit) + 1, &mut params);
    sql.push_str(&format!(" ORDER BY {order_by} LIMIT {limit}"));
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

/// A number of the catalog's (an app's or a group's id) or the limit, as
/// the statement names it: on SQLite a parameter, so one prepared statement
/// serves every app of the same shapes and line; on PostgreSQL written into
/// the statement, so PostgreSQL plans it once for that app, by that app's
/// statistics, and keeps the plan (a parameter there is planned again at
/// every call, its plan chosen for the values given: 0.2 ms of the server's
/// time a read, more than the read itself — docs/decisions/hosted-store-layout.md).
fn key(dialect: Dialect, value: i64, params: &mut Vec<Sql>) -> String {
    match dialect {
        Dialect::Sqlite => {
            params.push(Sql::Integer(value));
            "?".to_string()
        }
        Dialect::Postgres => value.to_string(),
    }
}

/// Which groups of the component joined at `join` the statement reads:
/// all of a carried component's, else those holding a column the line
/// filters or orders by (the home group is always joined).
fn groups_read(plan: &Plan<'_>, join: usize) -> Vec<bool> {
    let j = &plan.joins[join];
    let mut read = vec![j.carried; j.component.groups.len()];
    let fields = plan
        .filters
        .iter()
        .filter_map(|f| match f {
            Filter::Compare { field, .. } => Some(field),
            _ => None,
        })
        .chain(plan.order.key.as_ref());
    for field in fields {
        if let Field::Column { join: at, column } = field
            && *at == join
            && let Some(place) = j.component.place(column)
            && let Some(r) = read.get_mut(place.group)
        {
            *r = true;
        }
    }
    read
}

/// The name the eid `value` (an expression) shows, as PostgreSQL reads it
/// in the row's statement — a person's name, else the app's entity's `doc`
/// title or alias; null when none — its app and group written in ([`key`]).
fn name_sql(plan: &Plan<'_>, value: &str) -> String {
    let person = format!("(SELECT p.name FROM people p WHERE p.eid = {value})");
    let app = plan.app_id;
    let doc = plan.doc.and_then(|doc| {
        let (title, _) = crate::schema::doc_slots(doc).ok()?;
        Some((title, doc.groups.first()?))
    });
    match doc {
        Some((title, home)) => format!(
            "COALESCE({person}, (SELECT COALESCE(d.{title}, n.alias) FROM ec_entities n \
             LEFT JOIN {} d ON d.grp = {} AND d.id = n.id WHERE n.app = {app} AND n.eid = {value}))",
            home.table(),
            home.id
        ),
        // An app's catalog always has `doc`; without it, the alias.
        None => format!(
            "COALESCE({person}, (SELECT n.alias FROM ec_entities n WHERE n.app = {app} AND n.eid = {value}))"
        ),
    }
}

/// The alias of the table of group `group` of the component joined at
/// this index of the plan's joins.
fn alias(join: usize, group: usize) -> String {
    match group {
        0 => format!("t{join}"),
        _ => format!("t{join}_{group}"),
    }
}

/// A column of the component joined at `join`, as an expression: its
/// slot in its group's table.
fn column_expr(plan: &Plan<'_>, join: usize, column: &str) -> String {
    match plan.joins[join].component.place(column) {
        Some(place) => format!("{}.{}", alias(join, place.group), place.slot),
        // A plan names only its components' columns.
        None => "NULL".into(),
    }
}

/// A field as an expression over the joined tables.
fn expr(plan: &Plan<'_>, field: &Field) -> String {
    match field {
        Field::Column { join, column } => column_expr(plan, *join, column),
        Field::Stamp { stamp, field } => format!("e.{}_{}", stamp.word(), field.word()),
    }
}

/// Whether a field holds text or a url (PostgreSQL's index of it holds
/// its hash).
fn is_text(plan: &Plan<'_>, field: &Field) -> bool {
    match field {
        Field::Column { join, column } => matches!(
            plan.joins[*join].component.column(column),
            Some(ColumnType::Text | ColumnType::Url)
        ),
        Field::Stamp { .. } => false,
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
fn filter_sql(
    plan: &Plan<'_>,
    filter: &Filter,
    id_expr: &str,
    dialect: Dialect,
) -> (String, Vec<Sql>) {
    match filter {
        Filter::Compare { field, op, value } => {
            // A `~` pattern's `%` and `_` are escaped with `\\`.
            let escape = if *op == Op::Contains {
                " ESCAPE '\\'"
            } else {
                ""
            };
            let expr = expr(plan, field);
            if dialect == Dialect::Postgres && *op == Op::Eq && is_text(plan, field) {
                // The index holds the hash: name it, then check the value.
                return (
                    format!(
                        "(hashtextextended({expr}, 0) = hashtextextended(?, 0) AND {expr} = ?)"
                    ),
                    vec![value.clone(), value.clone()],
                );
            }
            let op = sql_op(*op, dialect);
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
                format!("{id_expr} IN (SELECT rowid FROM ec_fts WHERE ec_fts MATCH ?)"),
                vec![Sql::Text(fts_expression(plan.app_id, words))],
            ),
            Dialect::Postgres => (
                format!(
                    "{id_expr} IN (SELECT id FROM ec_fts WHERE app = {} AND fts @@ to_tsquery('simple', ?))",
                    plan.app_id
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

/// Text as SQLite's shared full-text table keeps it for app `app_id`:
/// each word written with `<app id>x` before it, so a word's entries in
/// one app are apart from every other app's and a search reads only its
/// app's. A word is what the `unicode61` tokenizer reads as one
/// ([`word_char`]). The ids' digits and the `x` make every app's words
/// apart (`4x2xfoo` is app 4's, `42xfoo` app 42's).
pub(crate) fn app_words(app_id: i64, text: &str) -> String {
    let prefix = format!("{app_id}x");
    let mut out = String::with_capacity(text.len() + 16);
    let mut in_word = false;
    for c in text.chars() {
        let starts = word_char(c);
        // A combining diacritic continues a word (`unicode61` folds it
        // away), never starts one.
        let continues = in_word && ('\u{300}'..='\u{36f}').contains(&c);
        if starts && !in_word {
            out.push_str(&prefix);
        }
        in_word = starts || continues;
        out.push(c);
    }
    out
}

/// Whether `unicode61` (its default categories) reads `c` as part of a
/// word: a letter, a number or a private-use character.
fn word_char(c: char) -> bool {
    use unicode_general_category::GeneralCategory as G;
    matches!(
        unicode_general_category::get_general_category(c),
        G::UppercaseLetter
            | G::LowercaseLetter
            | G::TitlecaseLetter
            | G::ModifierLetter
            | G::OtherLetter
            | G::DecimalNumber
            | G::LetterNumber
            | G::OtherNumber
            | G::PrivateUse
    )
}

/// An FTS5 expression over app `app_id`'s words ([`app_words`]): every
/// word as a quoted string, the last as a prefix.
fn fts_expression(app_id: i64, words: &[String]) -> String {
    let last = words.len().saturating_sub(1);
    let terms: Vec<String> = words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let quoted = format!("\"{}\"", app_words(app_id, w).replace('"', "\"\""));
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
        assert_eq!(
            fts_expression(7, &words("hello wor")),
            "\"7xhello\" \"7xwor\"*"
        );
        assert_eq!(
            fts_expression(7, &words("say \"hi\"")),
            "\"7xsay\" \"\"\"7xhi\"\"\"*"
        );
        assert_eq!(
            app_words(42, "e-mail Élan, 2x"),
            "42xe-42xmail 42xÉlan, 42x2x"
        );
        assert_eq!(
            tsquery(&words("Hello e-mail wor")),
            "'hello' & 'e' <-> 'mail' & 'wor':*"
        );
        assert_eq!(numbered("a = ? AND b = ?"), "a = $1 AND b = $2");
    }
}
