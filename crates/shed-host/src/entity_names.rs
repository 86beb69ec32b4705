//! How an entity is named: on its page (its title), in a sentence (quoted
//! title, alias, or short id) and by the short id the pages show — shared by
//! the entity page (`entity.rs`) and the act's refusals (`act.rs`).

use serde_json::Value;

use crate::shown::cut;

pub use shed_store::undo::SHORT_EID_DIGITS;

/// The first [`SHORT_EID_DIGITS`] of an eid: how pages and sentences name
/// an entity with no title or alias, and a start `shed entity` takes.
pub fn short_eid(eid: &str) -> &str {
    eid.get(..SHORT_EID_DIGITS).unwrap_or(eid)
}

/// An entity's name, as its page's title and sentences give it: its
/// `doc.title` (cut) in its row `now`, else its alias, else `Entity` and
/// its [`short_eid`].
pub fn entity_title(now: Option<&Value>, alias: Option<&str>, eid: &str) -> String {
    doc_title(now)
        .map(|title| cut(title).to_string())
        .or_else(|| alias.map(str::to_string))
        .unwrap_or_else(|| format!("Entity {}", short_eid(eid)))
}

/// An entity as a sentence names it, by the rule of [`entity_title`]: its
/// `doc.title` quoted (`"Run by Ada"`), else its alias, else `entity` and
/// its [`short_eid`].
pub(crate) fn entity_named(now: Option<&Value>, alias: Option<&str>, eid: &str) -> String {
    match doc_title(now) {
        Some(title) => format!("\"{}\"", crate::names::shown(title)),
        None => alias.map_or_else(|| format!("entity {}", short_eid(eid)), str::to_string),
    }
}

/// The `doc.title` of an entity's row `now`, when it has one.
fn doc_title(now: Option<&Value>) -> Option<&str> {
    now.and_then(|now| now["doc"]["title"].as_str())
}
