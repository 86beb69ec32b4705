//! The public shapes the store takes and answers: vocabularies, actors,
//! people, apply answers, listings and history entries.

use std::collections::BTreeMap;

use serde::Serialize;

/// An app's declared components, each with its typed columns, in declared order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Vocabulary {
    /// Each component as (name, its columns as (name, type)), both in the
    /// order the app declares them.
    pub components: Vec<(String, Vec<(String, ColumnType)>)>,
}

pub use shed_words::ColumnType;

/// Who writes: a person (by eid), and the agent acting for them if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Actor {
    /// The person's eid.
    pub person: String,
    /// The agent that wrote on the person's behalf, e.g. `agent:<job>`.
    pub via: Option<String>,
    /// How a write came, for its row of activity; `None` on the stamps a
    /// read answers (`created`, `updated`), which keep only who and via.
    pub through: Option<Through>,
}

impl Actor {
    /// The person `person` (eid) writing, through `through`, with no agent.
    pub fn person(person: impl Into<String>, through: Through) -> Actor {
        Actor {
            person: person.into(),
            via: None,
            through: Some(through),
        }
    }
}

/// How a write came: the door, the command or tool it went through, and
/// the client that sent it — what a write's row of activity says beside
/// who wrote it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Through {
    /// `mcp`, `web`, `broker` or `terminal`; `store` for a write made
    /// from Rust with no door (a test, a bench, a migration).
    pub door: String,
    /// The command or tool: an app's command (`log_run`), `graph_apply`,
    /// the page api's `apply`, `undo`.
    pub command: Option<String>,
    /// The client: an OAuth client's registered name, an MCP client's
    /// `clientInfo` name (marked `(claimed)`), a job's name.
    pub client: Option<String>,
}

impl Through {
    /// Through no door: a write made from Rust.
    pub fn store() -> Through {
        Through {
            door: "store".into(),
            command: None,
            client: None,
        }
    }
}

/// A person the platform knows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Person {
    /// The person's eid: 32 lowercase hex digits, fixed when they were added.
    pub eid: String,
    /// The handle they are named by (`@handle` in lines and pages), kept
    /// without the `@` (`[a-z][a-z0-9-]{0,39}`); unique on the platform.
    pub handle: String,
    /// Their display name as they gave it, trimmed (1 to 100 characters).
    pub name: String,
}

/// The answer of an apply: the entities written, the eids `$name`s became,
/// and the app data version after the write.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Applied {
    /// The eids of the entities the apply wrote, each once, in the order
    /// its bundles first named them.
    pub entities: Vec<String>,
    /// Each `$name` the apply minted a new entity for, mapped to that
    /// entity's eid.
    pub aliases: BTreeMap<String, String>,
    /// The app's data version after this apply (one more than before): what
    /// a later apply names as the version it expects.
    pub version: u64,
}

/// The answer of a query: rows, and the cursor of the next page if there is one.
#[derive(Clone, Debug, PartialEq)]
pub struct Listing {
    /// The entities the line matched, at most its limit, in its order: one
    /// JSON object each, with `kind`, `entity`, the carried components, the
    /// carried stamps and `edges` as the line asked.
    pub rows: Vec<serde_json::Value>,
    /// The cursor that continues after the last row (the line's `after=`);
    /// `None` when no rows are left past this page.
    pub next: Option<String>,
    /// Who wrote each row, in the rows' order, whether or not the filter line
    /// shows its stamps: what a row's label is read from. Not part of the
    /// answer's JSON.
    pub authors: Vec<Authorship>,
}

/// Who wrote a row: who created it, and who changed it last.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Authorship {
    /// Who wrote the row first (its `created` stamp).
    pub created: Actor,
    /// Who wrote the row last (its `updated` stamp); the creator when
    /// nobody has changed it since.
    pub updated: Actor,
}

impl Authorship {
    /// Whether the row was written only by `person` (an eid) themself: they
    /// created it and changed it last, and no agent did either.
    pub fn only_by(&self, person: &str) -> bool {
        [&self.created, &self.updated]
            .into_iter()
            .all(|actor| actor.person == person && actor.via.is_none())
    }
}

impl From<Listing> for serde_json::Value {
    /// `{rows, next?}`, the rows moved rather than copied.
    fn from(listing: Listing) -> serde_json::Value {
        let mut data = serde_json::Map::new();
        data.insert("rows".into(), serde_json::Value::Array(listing.rows));
        if let Some(next) = listing.next {
            data.insert("next".into(), serde_json::Value::String(next));
        }
        serde_json::Value::Object(data)
    }
}

/// One write in an entity's history.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HistoryEntry {
    /// The entity's version after this write.
    pub version: u64,
    /// When (RFC 3339, UTC).
    pub at: String,
    /// The person's eid.
    pub by: String,
    /// The agent that wrote for the person, if one did.
    pub via: Option<String>,
    /// What the write changed, as the wire said it (with `$name`s resolved).
    pub change: serde_json::Value,
}
