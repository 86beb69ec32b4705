//! The first stage of a query: a parsed filter line checked against the
//! app's schema and made a typed [`Plan`] — which component tables are
//! joined, which are carried, what rows must satisfy, the order, the page.
//! Every refusal of a line that parsed is raised here (no such component or
//! column, a value its column's type cannot hold, a cursor of another line),
//! and every value is read under its type, so the later stages only write and
//! run. Names a value gives — a person's `@handle`, an entity's alias — are
//! looked up here too, so the plan holds only values to bind.

use crate::values::Sql;

use super::cursor;
use crate::filter::{Clause, FilterLine, Op, OrderKey, Stamp, StampField, Wear};
use crate::names::is_eid;
use crate::schema::{AppSchema, Component};
use crate::txn::{Txn, args};
use crate::values::{from_text, type_sentence};
use crate::{ColumnType, StoreError};

/// Rows a line answers when it gives no `limit`.
const DEFAULT_LIMIT: u32 = 50;

/// What a plan looks up: the names a line gives. A backend answers from the
/// snapshot the query then reads.
pub(crate) trait Lookup {
    /// The eid of the person with this handle (without `@`), if any.
    async fn person_by_handle(&self, handle: &str) -> Result<Option<String>, StoreError>;
    /// The eid of the app's entity with this alias, if any.
    async fn entity_by_alias(&self, app_id: i64, alias: &str)
    -> Result<Option<String>, StoreError>;
}

/// The lookups written once: every backend's connection or transaction
/// answers them with the same two statements.
impl<T: Txn> Lookup for T {
    async fn person_by_handle(&self, handle: &str) -> Result<Option<String>, StoreError> {
        let sql = "SELECT eid FROM people WHERE handle = $1";
        let found = self.optional(sql, args![handle]).await?;
        found.map(|r| r.get(0)).transpose()
    }

    async fn entity_by_alias(
        &self,
        app_id: i64,
        alias: &str,
    ) -> Result<Option<String>, StoreError> {
        let sql = "SELECT eid FROM ec_entities WHERE app = $1 AND alias = $2";
        let found = self.optional(sql, args![app_id, alias]).await?;
        found.map(|r| r.get(0)).transpose()
    }
}

/// What a line asks of one written app, checked and typed.
pub(crate) struct Plan<'s> {
    /// The app's row id: every row read is its entities'.
    pub app_id: i64,
    /// The app's `doc`, whose title names an entity a ref points at.
    pub doc: Option<&'s Component>,
    /// The kind each row is answered as: the first component the line requires.
    pub kind: Option<String>,
    /// The component tables joined, in the order the line first names them.
    pub joins: Vec<Join<'s>>,
    /// What every row must satisfy, in the order written (`q=` last).
    pub filters: Vec<Filter>,
    /// The stamps carried, `created` before `updated`.
    pub stamps: Vec<Stamp>,
    /// Whether each row carries its edges.
    pub edges: bool,
    pub order: Order,
    /// The row a page starts after: its sort value (read under the order's
    /// type) and row id.
    pub after: Option<(Sql, i64)>,
    /// The most rows answered.
    pub limit: u32,
}

/// A component table joined into the query.
pub(crate) struct Join<'s> {
    pub component: &'s Component,
    /// Only entities that wear it are answered.
    pub required: bool,
    /// Its values are answered, where worn.
    pub carried: bool,
}

/// A value a row is compared or sorted by.
pub(crate) enum Field {
    /// A column of the component table joined at this index of [`Plan::joins`].
    Column { join: usize, column: String },
    /// A field of one of the store's own stamps.
    Stamp { stamp: Stamp, field: StampField },
}

/// One condition on the rows.
pub(crate) enum Filter {
    /// `field op value`; `~` compares with a LIKE pattern.
    Compare { field: Field, op: Op, value: Sql },
    /// An edge `rel` to the entity of this eid.
    EdgeTo { rel: String, to: String },
    /// The entity of this eid.
    Eid(String),
    /// The entity of this alias.
    Alias(String),
    /// Words of the app's full-text index, each with a letter or digit:
    /// every one must match, the last as a prefix.
    Words(Vec<String>),
    /// Nothing matches (`q=` with no word that could).
    Nothing,
}

/// The order of the rows, the row id breaking ties.
pub(crate) struct Order {
    /// What rows are sorted by; `None`: the row id, newest first.
    pub key: Option<Field>,
    pub descending: bool,
    /// The line's `order=` as written (empty when none), which a cursor names.
    pub signature: String,
}

/// Plans a parsed line over one app. `None` for an app never written: it
/// has no tables, so nothing is answered — once its names are checked.
pub(crate) async fn plan<'s, L: Lookup>(
    names: &L,
    schema: &'s AppSchema,
    line: &FilterLine,
) -> Result<Option<Plan<'s>>, StoreError> {
    let mut planner = Planner {
        names,
        schema,
        // An app never written matches no alias: its names are still checked.
        app_id: schema.id.unwrap_or(-1),
        joins: Vec::new(),
        filters: Vec::new(),
    };
    let mut kind: Option<String> = None;
    let (mut created, mut updated) = (false, false);
    let mut edges = false;
    let mut limit = DEFAULT_LIMIT;
    let mut order: Option<(Order, ColumnType)> = None;
    let mut after: Option<&str> = None;
    let mut words: Option<&str> = None;
    for clause in &line.clauses {
        match clause {
            Clause::Component { name, wear } => {
                let required = *wear != Wear::Carry;
                planner.join(name, required, *wear != Wear::Require)?;
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
                let (join, ty) = planner.column(component, column, true)?;
                if kind.is_none() {
                    kind = Some(component.clone());
                }
                let field = Field::Column {
                    join,
                    column: column.clone(),
                };
                planner
                    .compare(field, component, column, ty, *op, value)
                    .await?;
            }
            Clause::Stamp { stamp, wear } => {
                if *wear != Wear::Require {
                    match stamp {
                        Stamp::Created => created = true,
                        Stamp::Updated => updated = true,
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
                let on = Field::Stamp {
                    stamp: *stamp,
                    field: *field,
                };
                match field {
                    StampField::At => {
                        planner
                            .compare(on, w, "at", ColumnType::Time, *op, value)
                            .await?;
                    }
                    StampField::By => {
                        let person = person_eid(names, value).await?;
                        planner.filters.push(Filter::Compare {
                            field: on,
                            op: *op,
                            value: Sql::Text(person),
                        });
                    }
                    StampField::Via => {
                        planner
                            .compare(on, w, "via", ColumnType::Text, *op, value)
                            .await?;
                    }
                }
            }
            Clause::EdgeTo { rel, to } => {
                let to = entity_eid(names, planner.app_id, to).await?;
                planner.filters.push(Filter::EdgeTo {
                    rel: rel.clone(),
                    to,
                });
            }
            Clause::Edges => edges = true,
            Clause::Words(w) => words = Some(w),
            Clause::Eid(value) => planner.filters.push(if is_eid(value) {
                Filter::Eid(value.clone())
            } else {
                Filter::Alias(value.clone())
            }),
            Clause::Order { key, descending } => {
                let sign = if *descending { "-" } else { "" };
                let (key, ty, signature) = match key {
                    OrderKey::Column { component, column } => {
                        let (join, ty) = planner.column(component, column, false)?;
                        let field = Field::Column {
                            join,
                            column: column.clone(),
                        };
                        (field, ty, format!("{sign}.{component}.{column}"))
                    }
                    OrderKey::Stamp(stamp) => {
                        let field = Field::Stamp {
                            stamp: *stamp,
                            field: StampField::At,
                        };
                        (
                            field,
                            ColumnType::Time,
                            format!("{sign}.{}.at", stamp.word()),
                        )
                    }
                };
                let order_by = Order {
                    key: Some(key),
                    descending: *descending,
                    signature,
                };
                order = Some((order_by, ty));
            }
            Clause::Limit(n) => limit = *n,
            Clause::After(cursor) => after = Some(cursor),
        }
    }
    if let Some(words) = words {
        let searched: Vec<String> = words
            .split_whitespace()
            .filter(|w| w.chars().any(char::is_alphanumeric))
            .map(str::to_string)
            .collect();
        if !searched.is_empty() {
            planner.filters.push(Filter::Words(searched));
        } else if !words.trim().is_empty() {
            planner.filters.push(Filter::Nothing);
        }
    }
    let Some(app_id) = schema.id else {
        return Ok(None);
    };
    let (order, order_type) = order.unwrap_or((
        Order {
            key: None,
            descending: true,
            signature: String::new(),
        },
        ColumnType::Number,
    ));
    let after = match after {
        Some(cursor) => {
            let (value, id) = cursor::decode(cursor, &order.signature)?;
            let value = match (value, order_type) {
                (Sql::Real(f), ColumnType::Bool | ColumnType::Time) => Sql::Integer(f as i64),
                (v, _) => v,
            };
            Some((value, id))
        }
        None => None,
    };
    let stamps = [(created, Stamp::Created), (updated, Stamp::Updated)]
        .into_iter()
        .filter_map(|(carried, stamp)| carried.then_some(stamp))
        .collect();
    Ok(Some(Plan {
        app_id,
        doc: schema.component("doc"),
        kind,
        joins: planner.joins,
        filters: planner.filters,
        stamps,
        edges,
        order,
        after,
        limit,
    }))
}

/// The joins and filters of a plan being made.
struct Planner<'c, 's, L> {
    names: &'c L,
    schema: &'s AppSchema,
    app_id: i64,
    joins: Vec<Join<'s>>,
    filters: Vec<Filter>,
}

impl<'s, L: Lookup> Planner<'_, 's, L> {
    fn component(&self, name: &str) -> Result<&'s Component, StoreError> {
        self.schema.component(name).ok_or_else(|| {
            StoreError::refused(format!("no component {name} in {}", self.schema.name))
        })
    }

    /// The index of a component's join, joining it if new.
    fn join(&mut self, name: &str, required: bool, carried: bool) -> Result<usize, StoreError> {
        let component = self.component(name)?;
        if let Some(i) = self.joins.iter().position(|j| j.component.name == name) {
            let j = &mut self.joins[i];
            j.required |= required;
            j.carried |= carried;
            return Ok(i);
        }
        self.joins.push(Join {
            component,
            required,
            carried,
        });
        Ok(self.joins.len() - 1)
    }

    /// A component's column: the index of its join (joining it, required or
    /// not, if new) and the column's type.
    fn column(
        &mut self,
        component: &str,
        column: &str,
        required: bool,
    ) -> Result<(usize, ColumnType), StoreError> {
        let c = self.component(component)?;
        let ty = c.column(column).ok_or_else(|| c.no_column(column))?;
        Ok((self.join(component, required, false)?, ty))
    }

    /// Adds `field <op> value` with the value read under the column's type
    /// (`component.column`, as sentences name it).
    async fn compare(
        &mut self,
        field: Field,
        component: &str,
        column: &str,
        ty: ColumnType,
        op: Op,
        value: &str,
    ) -> Result<(), StoreError> {
        let value = if op == Op::Contains {
            if !matches!(ty, ColumnType::Text | ColumnType::Url) {
                return Err(StoreError::refused(format!(
                    "{} — ~ (contains) is for text",
                    type_sentence(component, column, ty)
                )));
            }
            Sql::Text(contains_pattern(value))
        } else if ty == ColumnType::Ref {
            Sql::Text(ref_value(self.names, self.app_id, value).await?)
        } else {
            from_text(value, ty)
                .ok_or_else(|| StoreError::refused(type_sentence(component, column, ty)))?
        };
        self.filters.push(Filter::Compare { field, op, value });
        Ok(())
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

/// The eid a person is named by: an eid, `@handle` or a handle (the value
/// itself when none: it then matches nothing).
async fn person_eid(names: &impl Lookup, value: &str) -> Result<String, StoreError> {
    if is_eid(value) {
        return Ok(value.to_string());
    }
    let handle = value.strip_prefix('@').unwrap_or(value);
    Ok(names
        .person_by_handle(handle)
        .await?
        .unwrap_or_else(|| value.to_string()))
}

/// The eid an eid or alias of this app names (the value itself when none:
/// it then matches nothing).
async fn entity_eid(names: &impl Lookup, app_id: i64, value: &str) -> Result<String, StoreError> {
    if is_eid(value) {
        return Ok(value.to_string());
    }
    Ok(names
        .entity_by_alias(app_id, value)
        .await?
        .unwrap_or_else(|| value.to_string()))
}

/// A ref column's value in a line: a person (`@handle` or eid) or an entity (eid or alias).
async fn ref_value(names: &impl Lookup, app_id: i64, value: &str) -> Result<String, StoreError> {
    match value.strip_prefix('@') {
        Some(_) => person_eid(names, value).await,
        None => entity_eid(names, app_id, value).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains_patterns() {
        assert_eq!(contains_pattern("5%_"), "%5\\%\\_%");
    }
}
