//! An app's data as its data page shows it ([`Host::app_data`]): the kinds
//! its vocabulary declares, and one kind's rows — a cell per declared
//! column (a ref as the name it points at, a long value cut to
//! [`SHOWN_VALUE_CHARS`](crate::shown::SHOWN_VALUE_CHARS)), the title, and, to those the rule book lets see
//! the app's history (`Act::SeeVersions`, as activity), who created and
//! last changed each row and via what — one page at a time by the store's
//! keyset cursor, narrowed by a filter line (the grammar `graph_query`
//! takes). The rows are read through the one act (`Host::act_on_app`), as
//! `graph_query` reads them, so the rule book decides first; a line the
//! store refuses is its sentence, beside the kinds.
//!
//! App data at a terminal: [`plain`] and [`plain_json`] write every control
//! and bidirectional formatting character a value holds as an escape, so
//! what a person reads is what it holds and nothing moves their cursor —
//! the characters a caller's chosen name is kept without
//! (`texts::is_plain`).

use serde_json::Value;
/// An entity's versions, what each changed and its edges, as its page
/// shows them (`Host::entity`) — the store's shapes, named here so a door
/// need not depend on the store.
pub use shed_store::undo::{Changed, Edge, Version};

use crate::access::{Act, may};
use crate::act::AppAct;
use crate::answer::Acted;
use crate::shown::cut;
use crate::texts::{bounded_list, count, is_plain};
use crate::{Answer, Caller, Host, HostError};

/// The most rows one data page shows: a table a person reads at once
/// (the store's own page bound is 1,000).
pub const DATA_PAGE_ROWS: usize = 50;

/// A kind an app declares: a component of its `vocab.json`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataKind {
    /// The component's name (`jog`).
    pub name: String,
    /// Its columns, in declared order, with their type's word (`number`).
    pub columns: Vec<(String, &'static str)>,
}

/// What one column of a row holds, as a page shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cell {
    /// Nothing set.
    Empty,
    /// A value, as text (a number, a time, `true`).
    Value(String),
    /// A value longer than [`SHOWN_VALUE_CHARS`](crate::shown::SHOWN_VALUE_CHARS): its first characters,
    /// and how many it has.
    Cut {
        /// Its first [`SHOWN_VALUE_CHARS`](crate::shown::SHOWN_VALUE_CHARS) characters.
        shown: String,
        /// Its whole length, in characters.
        chars: usize,
    },
    /// A ref: the entity or person it points at, and their name where the
    /// store knows one (a person's name, an entity's title or alias).
    Ref {
        /// The eid pointed at.
        eid: String,
        /// Its name, if it has one.
        name: Option<String>,
    },
}

/// Who wrote a row, and when: its `created` or `updated` stamp.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowStamp {
    /// When (RFC 3339, UTC).
    pub at: String,
    /// The person's name (the person an agent wrote for).
    pub by: String,
    /// The agent that wrote for them (`agent:job-3`), or what the write was.
    pub via: Option<String>,
}

/// One entity of the kind shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataRow {
    /// Its eid: the address of its entity page.
    pub eid: String,
    /// Its place in the app's creation order (1, 2, 3…).
    pub num: u64,
    /// Its version: 1 at creation, +1 on every write to it.
    pub version: u64,
    /// Its `doc.title` (cut to [`SHOWN_VALUE_CHARS`](crate::shown::SHOWN_VALUE_CHARS)), or else its alias,
    /// if it has either.
    pub title: Option<String>,
    /// One cell per column of the kind, in the kind's order.
    pub cells: Vec<Cell>,
    /// Who created it, and who changed it last: to those who see the
    /// app's history only.
    pub stamps: Option<(RowStamp, RowStamp)>,
}

/// One page of a kind's rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataRows {
    /// The rows, in the line's order (newest first unless it says `order=`).
    pub rows: Vec<DataRow>,
    /// The cursor of the next page (the store's `next`), if more are left.
    pub next: Option<String>,
}

/// An app's data page.
#[derive(Debug)]
pub struct AppData {
    /// The app, `space/slug`.
    pub app: String,
    /// Its title.
    pub title: String,
    /// The kinds it declares, in `vocab.json` order.
    pub kinds: Vec<DataKind>,
    /// The kind shown: the one asked for, or the first declared; `None`
    /// when the app declares none.
    pub kind: Option<String>,
    /// The kind's rows, or the sentence refusing the filter line.
    pub rows: Result<DataRows, HostError>,
}

impl Host {
    /// The data page of `app` (`space/slug`) as the caller may read it: its
    /// kinds, and the rows of `kind` (the first declared when `None`) that
    /// `filter` matches, after the cursor `after` — at most
    /// [`DATA_PAGE_ROWS`]. An app the caller may not read answers as the
    /// rule book says (a made-up app's sentence to an outsider); a kind it
    /// does not declare is refused with its kinds named.
    pub async fn app_data(
        &self,
        caller: &Caller,
        app: &str,
        kind: Option<&str>,
        filter: &str,
        after: Option<&str>,
    ) -> Result<Answer<AppData>, HostError> {
        let (live, standing) = self.named_app(caller, app).await?;
        // The kinds are the app's to show only to those who may read it:
        // to anyone else it is a made-up app, vocabulary and title too.
        may(live.subject(), standing, Act::Read)?;
        let parts = self.parts(&live).await?;
        let kinds: Vec<DataKind> = parts
            .manifest
            .vocab
            .components
            .iter()
            .map(|(name, columns)| DataKind {
                name: name.clone(),
                columns: columns
                    .iter()
                    .map(|(column, ty)| (column.clone(), ty.as_str()))
                    .collect(),
            })
            .collect();
        let shown = match kind.map(str::trim).filter(|k| !k.is_empty()) {
            Some(wanted) => match kinds.iter().find(|k| k.name == wanted) {
                Some(found) => Some(found),
                None => {
                    let names: Vec<String> = kinds.iter().map(|k| k.name.clone()).collect();
                    return Err(HostError::BadInput(match names.is_empty() {
                        true => format!("no kind {wanted} in {} — it declares no kinds", live.name),
                        false => format!(
                            "no kind {wanted} in {} — its kinds are {}",
                            live.name,
                            bounded_list(&names)
                        ),
                    }));
                }
            },
            None => kinds.first(),
        };
        let rows = match shown {
            None => Ok(DataRows {
                rows: Vec::new(),
                next: None,
            }),
            Some(shown) => {
                let stamped = may(live.subject(), standing, Act::SeeVersions).is_ok();
                let line = kind_line(&shown.name, stamped, filter, after);
                let act = AppAct::Read { filter: &line };
                match self
                    .act_on_app(caller, None, &live, standing, act, None)
                    .await
                {
                    Ok(Acted::Read(listing)) => Ok(DataRows {
                        rows: listing
                            .rows
                            .iter()
                            .map(|row| data_row(row, shown))
                            .collect(),
                        next: listing.next,
                    }),
                    Ok(Acted::Wrote(_)) => Err(HostError::Internal(
                        "a read of an app's data answered as a write".to_string(),
                    )),
                    // The app was read before: a refusal now is the line's.
                    Err(refused) => Err(refused),
                }
            }
        };
        let text = match (&shown, &rows) {
            (None, _) => format!("{}: no kinds", live.name),
            (Some(shown), Ok(page)) => format!(
                "{}: {} of {}",
                live.name,
                count(page.rows.len(), "row", "rows"),
                shown.name
            ),
            (Some(_), Err(refused)) => refused.to_string(),
        };
        Ok(Answer {
            text,
            data: AppData {
                app: live.name.clone(),
                title: live.title.clone(),
                kind: shown.map(|k| k.name.clone()),
                kinds,
                rows,
            },
        })
    }
}

/// The filter line that reads a page of `kind`: the kind carried, its
/// title and (when `stamped`) stamps carried, the person's `filter`, the
/// page's bound and cursor.
fn kind_line(kind: &str, stamped: bool, filter: &str, after: Option<&str>) -> String {
    let mut line = format!(".{kind}!&.doc?");
    if stamped {
        line.push_str("&.created!&.updated!");
    }
    let filter = filter.trim().trim_matches('&');
    if !filter.is_empty() {
        line.push('&');
        line.push_str(filter);
    }
    line.push_str(&format!("&limit={DATA_PAGE_ROWS}"));
    if let Some(after) = after.map(str::trim).filter(|a| !a.is_empty()) {
        line.push_str("&after=");
        line.push_str(after);
    }
    line
}

/// A value as a page shows it: nothing, a ref (`{eid, name}`, as the
/// store answers one), or the value as text — [`Cell::Cut`] past
/// [`SHOWN_VALUE_CHARS`](crate::shown::SHOWN_VALUE_CHARS).
pub fn cell(value: &Value) -> Cell {
    let text = match value {
        Value::Null => return Cell::Empty,
        Value::Object(named) if named.contains_key("eid") => {
            return Cell::Ref {
                eid: text(named.get("eid")).unwrap_or_default(),
                name: text(named.get("name")),
            };
        }
        Value::String(s) => std::borrow::Cow::Borrowed(s.as_str()),
        other => std::borrow::Cow::Owned(other.to_string()),
    };
    let shown = cut(&text);
    match shown.chars {
        None => Cell::Value(text.into_owned()),
        Some(chars) => Cell::Cut {
            shown: shown.shown.to_string(),
            chars,
        },
    }
}

/// The components an entity wears in a row the store answered (`{kind,
/// entity, <component>: {…}, created, updated, edges}`), each with its
/// columns, in the row's order.
pub fn columns_of(row: &Value) -> Vec<(&str, &serde_json::Map<String, Value>)> {
    const NOT_COMPONENTS: [&str; 5] = ["kind", "entity", "created", "updated", "edges"];
    let Value::Object(row) = row else {
        return Vec::new();
    };
    row.iter()
        .filter(|(key, _)| !NOT_COMPONENTS.contains(&key.as_str()))
        .filter_map(|(name, columns)| Some((name.as_str(), columns.as_object()?)))
        .collect()
}

/// [`columns_of`] a row, each column's value as a cell.
pub fn components_of(row: &Value) -> Vec<(String, Vec<(String, Cell)>)> {
    columns_of(row)
        .into_iter()
        .map(|(name, columns)| {
            let cells = columns
                .iter()
                .map(|(column, value)| (column.clone(), cell(value)))
                .collect();
            (name.to_string(), cells)
        })
        .collect()
}

/// `text` as a terminal may show it: every control character (C0, DEL,
/// C1) and bidirectional formatting character written as its escape
/// (`\u{9b}`), but newlines and tabs when `lines` (a text of several
/// lines).
pub fn plain(text: &str, lines: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_plain(c) || (lines && matches!(c, '\n' | '\t')) {
            out.push(c);
        } else {
            out.extend(c.escape_unicode());
        }
    }
    out
}

/// JSON text as a terminal may show it: every control and bidirectional
/// formatting character inside a string written as JSON's escape
/// (`\u009b`) — the same JSON to a program, and nothing a terminal acts
/// on. (Outside strings JSON holds only spaces, tabs and newlines, which
/// are kept; `serde_json` escapes C0 in strings itself, not DEL, C1 or the
/// bidirectional characters.)
pub fn plain_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if is_plain(c) || matches!(c, '\n' | '\t' | '\r') {
            out.push(c);
        } else {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        }
    }
    out
}

/// A JSON string's text.
fn text(value: Option<&Value>) -> Option<String> {
    value.and_then(Value::as_str).map(str::to_string)
}

/// A row as the store answered it, in the shape the page shows.
fn data_row(row: &Value, kind: &DataKind) -> DataRow {
    let entity = &row["entity"];
    let component = &row[kind.name.as_str()];
    let cells = kind
        .columns
        .iter()
        .map(|(column, _)| cell(&component[column.as_str()]))
        .collect();
    let stamp = |which: &str| {
        let stamp = row.get(which)?;
        Some(RowStamp {
            at: text(stamp.get("at")).unwrap_or_default(),
            by: text(stamp["by"].get("name")).unwrap_or_default(),
            via: text(stamp.get("via")),
        })
    };
    DataRow {
        eid: text(entity.get("eid")).unwrap_or_default(),
        num: entity["num"].as_u64().unwrap_or_default(),
        version: entity["version"].as_u64().unwrap_or_default(),
        title: text(row["doc"].get("title"))
            .map(|title| cut(&title).to_string())
            .or_else(|| text(entity.get("alias"))),
        cells,
        stamps: stamp("created").zip(stamp("updated")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shown::SHOWN_VALUE_CHARS;
    use serde_json::json;

    #[test]
    fn a_value_is_shown_as_text_a_ref_by_its_name() {
        assert_eq!(cell(&Value::Null), Cell::Empty);
        assert_eq!(cell(&json!(5.5)), Cell::Value("5.5".into()));
        assert_eq!(cell(&json!("ada")), Cell::Value("ada".into()));
        assert_eq!(
            cell(&json!({ "eid": "e1", "name": "Tuesday run" })),
            Cell::Ref {
                eid: "e1".into(),
                name: Some("Tuesday run".into())
            }
        );
        let row = json!({ "kind": "jog", "entity": { "eid": "e2" }, "jog": { "miles": 3 },
                          "doc": { "title": "Run" }, "created": { "at": "x" } });
        assert_eq!(
            components_of(&row),
            [
                (
                    "jog".to_string(),
                    vec![("miles".to_string(), Cell::Value("3".into()))]
                ),
                (
                    "doc".to_string(),
                    vec![("title".to_string(), Cell::Value("Run".into()))]
                ),
            ]
        );
    }

    #[test]
    fn a_long_value_is_cut_and_a_terminal_gets_no_control() {
        let long = "x".repeat(SHOWN_VALUE_CHARS + 1);
        assert_eq!(
            cell(&json!(long)),
            Cell::Cut {
                shown: "x".repeat(SHOWN_VALUE_CHARS),
                chars: SHOWN_VALUE_CHARS + 1
            }
        );
        assert_eq!(
            plain("a\u{9b}2J\u{202e}b\n\tc\u{7f}", true),
            "a\\u{9b}2J\\u{202e}b\n\tc\\u{7f}"
        );
        assert_eq!(plain("a\nb", false), "a\\u{a}b");
        let value = json!({ "t": "a\u{1b}[2J\u{9b}2J\u{7f}\u{202e}z\n" });
        let shown = plain_json(&value.to_string());
        assert!(shown.chars().all(is_plain), "{shown}");
        assert_eq!(serde_json::from_str::<Value>(&shown).unwrap(), value);
        let pretty = plain_json(&serde_json::to_string_pretty(&value).unwrap());
        assert_eq!(serde_json::from_str::<Value>(&pretty).unwrap(), value);
    }

    #[test]
    fn a_page_line_carries_the_kind_its_title_stamps_bound_and_cursor() {
        assert_eq!(
            kind_line("jog", true, "", None),
            ".jog!&.doc?&.created!&.updated!&limit=50"
        );
        assert_eq!(kind_line("jog", false, "", None), ".jog!&.doc?&limit=50");
        assert_eq!(
            kind_line("jog", true, " .jog.miles>=5& ", Some("abc")),
            ".jog!&.doc?&.created!&.updated!&.jog.miles>=5&limit=50&after=abc"
        );
    }
}
