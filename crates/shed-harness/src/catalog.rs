//! The run's catalog: the host's listing read into rows the model may see,
//! with the rows an agent may not run hidden and the unreadable ones
//! omitted. A row whose label the run's observation ceiling would withhold is
//! hidden too — left out of the listing and of suggestions, as its answers
//! are withheld — though a call naming it still runs and is measured. A
//! row's title and description reach the model without control characters.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use serde_json::Value;

use crate::labels::{Ceiling, Label};
use crate::signature::{self, SignatureSource};

/// The most rows a catalog holds; rows past it are counted as omitted.
pub const CATALOG_MAX_ROWS: usize = 10_000;
/// The longest title kept, in characters.
const TITLE_MAX_CHARS: usize = 200;

/// One command the run may see.
#[derive(Clone, Debug)]
pub struct CatalogRow {
    /// The command's name as the host lists it, unique in the catalog: what
    /// a call's `command` names.
    pub name: String,
    /// The row's title, without control characters, cut to 200 characters;
    /// empty where the host gives none.
    pub title: String,
    /// The row's description, without control characters; empty where the
    /// host gives none.
    pub description: String,
    /// The JSON schema of the command's `args` as the host lists it; `true`
    /// (anything) where the row gives none.
    pub input_schema: Value,
    /// The command's declared effect (shed's are `read` and `write`); `None`
    /// where the row declares none. `run_read_command` runs only `read`.
    pub effect: Option<String>,
    /// What the command acts on as declared (`app` for one app); `None`
    /// where the row declares none, which the signature shows as `global`.
    pub scope: Option<String>,
    /// The broker's literal `readOnlyGranted: true`.
    pub read_only_granted: bool,
    /// The host's literal `confirm: true`: a call waits for the person's
    /// approval before it runs.
    pub confirm: bool,
    /// The one-line signature `list_commands` shows for it, at most
    /// [`signature::SIGNATURE_MAX_CHARS`] characters.
    pub signature: String,
    /// The row's own label (`ifc`): who may read its text and whether its
    /// author is trusted. `None` where the host gives none.
    pub label: Option<Label>,
    /// The run's observation ceiling would withhold its label: the model is
    /// not shown the row.
    pub withheld: bool,
}

/// The listing as held for a run.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    rows: Vec<CatalogRow>,
    by_name: HashMap<String, usize>,
    /// Rows whose own declarations say an agent may not run them, and rows
    /// whose label the run's observation ceiling would withhold.
    pub hidden: usize,
    /// Rows that could not be read or fell past [`CATALOG_MAX_ROWS`].
    pub omitted: usize,
}

/// Why a listing could not be read at all.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "the host's listing is not an object with a \"commands\" list — the host CLI answered something else"
)]
pub struct MalformedListing;

impl Catalog {
    /// Reads `{ "commands": [row, …] }`.
    pub fn from_listing(listing: &Value) -> Result<Catalog, MalformedListing> {
        Catalog::from_listing_owned(listing.clone())
    }

    /// Reads `{ "commands": [row, …] }`, taking the listing's rows over.
    pub fn from_listing_owned(listing: Value) -> Result<Catalog, MalformedListing> {
        Catalog::from_listing_within(listing, None)
    }

    /// Reads `{ "commands": [row, …] }`, taking the listing's rows over,
    /// and hides each row whose label `ceiling` would withhold.
    pub fn from_listing_within(
        listing: Value,
        ceiling: Option<&Ceiling>,
    ) -> Result<Catalog, MalformedListing> {
        let Value::Object(mut listing) = listing else {
            return Err(MalformedListing);
        };
        let Some(Value::Array(rows)) = listing.remove("commands") else {
            return Err(MalformedListing);
        };
        // Sized once up front: growing the table re-hashes every name, and
        // its large allocations come after many small frees.
        let capacity = rows.len().min(CATALOG_MAX_ROWS);
        let mut catalog = Catalog {
            rows: Vec::with_capacity(capacity),
            by_name: HashMap::with_capacity(capacity),
            ..Catalog::default()
        };
        for row in rows {
            let Value::Object(object) = row else {
                catalog.omitted += 1;
                continue;
            };
            let hidden = hidden_row(&object);
            let fields = RowFields::take(object);
            let Some(name) = fields.name.filter(|n| !n.is_empty()) else {
                catalog.omitted += 1;
                continue;
            };
            let label = match fields.label.as_ref().map(Label::from_json).transpose() {
                Ok(label) => label,
                Err(_) => {
                    catalog.omitted += 1;
                    continue;
                }
            };
            if hidden {
                catalog.hidden += 1;
                continue;
            }
            let withheld = match (ceiling, &label) {
                (Some(ceiling), Some(label)) => ceiling.admits(label).is_err(),
                _ => false,
            };
            let index = catalog.rows.len();
            let slot = match catalog.by_name.entry(name) {
                Entry::Vacant(slot) if index < CATALOG_MAX_ROWS => slot,
                _ => {
                    catalog.omitted += 1;
                    continue;
                }
            };
            let name = slot.key().clone();
            slot.insert(index);
            let input_schema = fields.input_schema.unwrap_or(Value::Bool(true));
            let signature = signature::render(&SignatureSource {
                name: &name,
                input_schema: &input_schema,
                outputs: fields.outputs.as_ref(),
                effect: fields.effect.as_deref(),
                scope: fields.scope.as_deref(),
            });
            catalog.rows.push(CatalogRow {
                name,
                title: fields
                    .title
                    .map(|t| truncate_title(plain(t)))
                    .unwrap_or_default(),
                description: fields.description.map(plain).unwrap_or_default(),
                input_schema,
                effect: fields.effect,
                scope: fields.scope,
                read_only_granted: fields.read_only_granted,
                confirm: fields.confirm,
                signature,
                label,
                withheld,
            });
            catalog.hidden += usize::from(withheld);
        }
        Ok(catalog)
    }

    /// Every row kept, in the listing's order, those the model may not be
    /// shown (`withheld`) included.
    pub fn rows(&self) -> &[CatalogRow] {
        &self.rows
    }

    /// The row of this name, withheld or not; a call to it still runs.
    pub(crate) fn get(&self, name: &str) -> Option<&CatalogRow> {
        self.by_name.get(name).and_then(|&i| self.rows.get(i))
    }

    /// The row of this name, where the model may be shown it.
    pub fn shown(&self, name: &str) -> Option<&CatalogRow> {
        self.get(name).filter(|row| !row.withheld)
    }

    /// Up to three listed names nearest `called`: names containing it first,
    /// then the rest by edit distance.
    pub fn suggestions(&self, called: &str) -> Vec<String> {
        let lowered = called.to_lowercase();
        let mut ranked: Vec<(bool, usize, &str)> = self
            .rows
            .iter()
            .filter(|row| !row.withheld)
            .map(|row| {
                let contains = !lowered.is_empty() && row.name.to_lowercase().contains(&lowered);
                (
                    !contains,
                    strsim::levenshtein(called, &row.name),
                    row.name.as_str(),
                )
            })
            .collect();
        ranked.sort();
        ranked
            .into_iter()
            .take(3)
            .map(|(_, _, n)| n.to_string())
            .collect()
    }
}

/// The fields of a listing row the catalog keeps, taken over in one pass
/// rather than looked up one by one.
#[derive(Default)]
struct RowFields {
    name: Option<String>,
    title: Option<String>,
    description: Option<String>,
    input_schema: Option<Value>,
    outputs: Option<Value>,
    effect: Option<String>,
    scope: Option<String>,
    read_only_granted: bool,
    confirm: bool,
    label: Option<Value>,
}

impl RowFields {
    fn take(row: serde_json::Map<String, Value>) -> RowFields {
        let mut fields = RowFields::default();
        for (key, value) in row {
            match (key.as_str(), value) {
                ("name", Value::String(text)) => fields.name = Some(text),
                ("title", Value::String(text)) => fields.title = Some(text),
                ("description", Value::String(text)) => fields.description = Some(text),
                ("effect", Value::String(text)) => fields.effect = Some(text),
                ("scope", Value::String(text)) => fields.scope = Some(text),
                ("inputSchema", schema) => fields.input_schema = Some(schema),
                ("outputs", outputs) => fields.outputs = Some(outputs),
                ("readOnlyGranted", flag) => fields.read_only_granted = flag == Value::Bool(true),
                ("confirm", flag) => fields.confirm = flag == Value::Bool(true),
                ("ifc", label) => fields.label = Some(label),
                _ => {}
            }
        }
        fields
    }
}

/// Text without control characters: a line break or tab becomes a space,
/// any other (ESC, BEL, NUL, …) is dropped, so no text a deployer wrote
/// reaches the model or a terminal as a control.
fn plain(text: String) -> String {
    if !text.chars().any(char::is_control) {
        return text;
    }
    text.chars()
        .filter_map(|c| match c {
            '\n' | '\r' | '\t' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect()
}

/// A title cut to [`TITLE_MAX_CHARS`] characters.
fn truncate_title(mut title: String) -> String {
    if let Some((end, _)) = title.char_indices().nth(TITLE_MAX_CHARS) {
        title.truncate(end);
    }
    title
}

/// Whether a row's own declarations say an agent may not run it.
pub fn hidden_from_agents(row: &Value) -> bool {
    row.as_object().is_some_and(hidden_row)
}

fn hidden_row(row: &serde_json::Map<String, Value>) -> bool {
    let field = |key: &str| row.get(key);
    let holds_session = |v: &Value| {
        v.as_array()
            .is_some_and(|list| list.iter().any(|o| o.as_str() == Some("session")))
    };
    if field("origin").and_then(Value::as_str) == Some("pattern") {
        return true;
    }
    if field("developer") == Some(&Value::Bool(true)) {
        return true;
    }
    if field("actors")
        .and_then(Value::as_array)
        .is_some_and(|actors| !actors.is_empty() && actors.iter().all(names_a_person))
    {
        return true;
    }
    if field("origins_refused").is_some_and(holds_session) {
        return true;
    }
    if field("origins_required").is_some_and(|v| v.is_array() && !holds_session(v)) {
        return true;
    }
    matches!(field("grant"), Some(g) if !g.is_null() && g != &Value::Bool(false))
}

/// An actor entry that names a person (`person`, `people`, `human`, `user`,
/// or `person:<handle>` / `user:<handle>`).
fn names_a_person(actor: &Value) -> bool {
    actor.as_str().is_some_and(|a| {
        matches!(a, "person" | "people" | "human" | "user")
            || a.starts_with("person:")
            || a.starts_with("user:")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_hidden_rule_hides_and_a_plain_row_shows() {
        let hidden = [
            json!({"name": "a", "origin": "pattern"}),
            json!({"name": "a", "developer": true}),
            json!({"name": "a", "actors": ["person"]}),
            json!({"name": "a", "actors": ["person:ada", "user"]}),
            json!({"name": "a", "origins_refused": ["session"]}),
            json!({"name": "a", "origins_required": ["web"]}),
            json!({"name": "a", "grant": {"kind": "consent"}}),
        ];
        for row in hidden {
            assert!(hidden_from_agents(&row), "{row} should hide");
        }
        let shown = [
            json!({"name": "a"}),
            json!({"name": "a", "actors": ["person", "agent"]}),
            json!({"name": "a", "origins_required": ["session", "web"]}),
            json!({"name": "a", "origins_refused": ["web"]}),
            json!({"name": "a", "developer": false, "origin": "app", "grant": null}),
        ];
        for row in shown {
            assert!(!hidden_from_agents(&row), "{row} should show");
        }
    }

    #[test]
    fn unreadable_rows_are_omitted() {
        let catalog = Catalog::from_listing(&json!({"commands": [
            {"name": "ok"}, 3, {"title": "no name"}, {"name": "ok"}, {"name": "dev", "developer": true}
        ]}))
        .unwrap();
        assert_eq!(catalog.rows().len(), 1);
        assert_eq!(catalog.omitted, 3);
        assert_eq!(catalog.hidden, 1);
        assert!(Catalog::from_listing(&json!([1])).is_err());
    }

    #[test]
    fn control_characters_never_reach_a_title_or_description() {
        let catalog = Catalog::from_listing(&json!({"commands": [
            {"name": "a", "title": "t\u{1b}[31mred\u{7}", "description": "one\r\ntwo\u{0}\u{9b}three\tend"}
        ]}))
        .unwrap();
        let row = &catalog.rows()[0];
        assert_eq!(row.title, "t[31mred");
        assert_eq!(row.description, "one  twothree end");
    }

    #[test]
    fn rows_the_ceiling_would_withhold_are_hidden_and_bad_labels_omitted() {
        let listing = json!({"commands": [
            {"name": "demo/a.x", "ifc": {"readers": ["space:demo"], "integrity": "trusted"}},
            {"name": "other/b.y", "ifc": {"readers": ["space:other"], "integrity": "trusted"}},
            {"name": "open/c.z", "ifc": {"readers": ["public"], "integrity": "untrusted"}},
            {"name": "apps.list"},
            {"name": "bad/d.w", "ifc": {"readers": "space:demo"}},
        ]});
        let shown = |catalog: &Catalog| -> Vec<String> {
            catalog
                .rows()
                .iter()
                .filter(|r| catalog.shown(&r.name).is_some())
                .map(|r| r.name.clone())
                .collect()
        };
        let ceiling = Ceiling::parse("space:demo").unwrap();
        let catalog = Catalog::from_listing_within(listing.clone(), Some(&ceiling)).unwrap();
        assert_eq!(shown(&catalog), ["demo/a.x", "open/c.z", "apps.list"]);
        assert_eq!((catalog.hidden, catalog.omitted), (1, 1));
        assert!(
            catalog.get("other/b.y").is_some(),
            "a call naming it still runs"
        );
        assert!(
            !catalog
                .suggestions("other/b.y")
                .contains(&"other/b.y".to_string())
        );

        let trusted =
            Ceiling::parse(r#"{"readers": ["space:demo"], "integrity": "trusted"}"#).unwrap();
        let catalog = Catalog::from_listing_within(listing.clone(), Some(&trusted)).unwrap();
        assert_eq!(shown(&catalog).len(), 2, "an untrusted row is withheld too");
        let everything = Catalog::from_listing_within(listing, None).unwrap();
        assert_eq!(shown(&everything).len(), 4);
    }

    #[test]
    fn suggestions_put_containing_names_first() {
        let catalog = Catalog::from_listing(&json!({"commands": [
            {"name": "apps.list"}, {"name": "graph.query"}, {"name": "jeff/runs.log_run"},
            {"name": "jeff/runs.log_runs_all"}, {"name": "graph.apply"}
        ]}))
        .unwrap();
        assert_eq!(
            catalog.suggestions("log_run"),
            vec!["jeff/runs.log_run", "jeff/runs.log_runs_all", "apps.list"]
        );
        assert_eq!(catalog.suggestions("graph.qery")[0], "graph.query");
    }
}
