//! An entity's page: [`Host::entity`] reads one entity of an app under the
//! rule book — its components now (the app's own read of it, a ref shown
//! as `{eid, name}`) and, to those the rule book lets see the app's
//! history (`Act::SeeVersions`, its space's members, as activity), who
//! made and last changed it, its edges both ways, and its history newest
//! first, each version with its write (`jeff/runs@12`), when, who, via
//! which agent, through which door, command and client, and what it
//! changed, field by field (before → after). Anyone else reads its row now
//! and nothing of its history; a tombstoned entity is absent to them. The
//! read itself is the act's (`act.rs`).
//!
//! A value is shown cut to [`SHOWN_VALUE_CHARS`](crate::shown::SHOWN_VALUE_CHARS) ([`cut`]), and whole one
//! at a time ([`EntityView::whole`]); the text lists versions up to
//! [`ENTITY_TEXT_BYTES`] and counts the rest.

use serde::Serialize;
use serde_json::Value;
use shed_store::undo::{Changed, EntityRecord, Version};

use crate::access::{Act, may};
use crate::answer::Answer;
use crate::shown::cut;
use crate::texts::count;
use crate::{Caller, Host, HostError};

use crate::entity_names::entity_named;
pub use crate::entity_names::{SHORT_EID_DIGITS, entity_title, short_eid};

/// The most bytes of version lines an entity's text (`shed entity`) lists:
/// a few hundred versions of short values, a hundred of cut ones; past it
/// the rest are counted and read one at a time by their version.
pub const ENTITY_TEXT_BYTES: usize = 64 * 1024;

/// One entity of an app, as its page shows it.
#[derive(Debug, Clone, Serialize)]
pub struct EntityView {
    /// The app it is in (`jeff/runs`).
    pub app: String,
    /// The space's name, for the sentence saying whose its history is.
    pub space: String,
    /// Its eid.
    pub eid: String,
    /// Its alias, if it has one.
    pub alias: Option<String>,
    /// Its version now: +1 on every write of it.
    pub version: u64,
    /// Its row as the app's read answers it now — `kind`, `entity` (eid,
    /// num, version, alias), each component it wears with its columns (a
    /// ref as `{eid, name}`), and to those who see its history `created`
    /// and `updated` — or `None` once tombstoned.
    pub now: Option<Value>,
    /// To those the rule book lets see the app's history: its tombstone;
    /// `created`/`updated` with the person's handle and the agent; its
    /// edges out and in; its versions newest first, each with its write,
    /// stamp, door/command/client where kept, and `changed` (field,
    /// before, after). `None` to anyone else.
    pub history: Option<EntityRecord>,
    /// Whether the caller may undo a write of this app (the rule book's
    /// `Act::Undo`), for a page's Undo button; not sent.
    #[serde(skip)]
    pub may_undo: bool,
}

/// One value shown whole ([`EntityView::whole`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Whole<'a> {
    /// A field of the entity now (`jog.who`).
    Now(&'a Value),
    /// What a version changed of a field: before and after.
    Changed(&'a Changed),
}

/// A value as its page of it whole shows it: a text as itself, anything
/// else as JSON, laid out.
pub fn whole_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_else(|_| other.to_string()),
    }
}

/// How a value before a version reads when it is older than the history
/// read ([`Changed::before_unread`]): never a guess, never `null`.
pub const UNREAD_BEFORE: &str = "(older than the history read)";

/// What `change` held before, as a version's line shows it.
fn shown_before(change: &Changed) -> String {
    if change.before_unread {
        UNREAD_BEFORE.to_string()
    } else {
        shown_json(&change.before)
    }
}

/// What `change` held before, whole ([`whole_text`]), or
/// [`UNREAD_BEFORE`].
pub fn whole_before(change: &Changed) -> String {
    if change.before_unread {
        UNREAD_BEFORE.to_string()
    } else {
        whole_text(&change.before)
    }
}

/// A value as JSON, cut: `"aaa… (16386 chars)` when long.
fn shown_json(value: &Value) -> String {
    cut(&value.to_string()).to_string()
}

impl EntityView {
    /// The value `field` holds, whole: now (`version` none: `jog.who`, a
    /// component's column), or what version `version` changed of it (any
    /// field its history names: `jog.who`, `alias`, `edges.parent`). A
    /// field it has not, a version not shown, or a version asked by one
    /// who sees no history, is refused with the sentence naming what there
    /// is.
    pub fn whole(&self, field: &str, version: Option<u64>) -> Result<Whole<'_>, HostError> {
        let Some(version) = version else {
            let found = self.now.as_ref().and_then(|now| {
                let (component, column) = field.split_once('.')?;
                now.get(component)?.as_object()?.get(column)
            });
            return found.map(Whole::Now).ok_or_else(|| {
                HostError::NotFound(format!(
                    "{} has no field {field} now — name one as <component>.<column>, as its page \
                     shows them",
                    self.named()
                ))
            });
        };
        let Some(history) = &self.history else {
            return Err(self.history_is_the_spaces());
        };
        let Some(shown) = history.versions.iter().find(|v| v.version == version) else {
            return Err(HostError::NotFound(format!(
                "no version {version} of {} shown — its history shows {}",
                self.named(),
                versions_span(&history.versions)
            )));
        };
        shown
            .changed
            .iter()
            .find(|c| c.field == field)
            .map(Whole::Changed)
            .ok_or_else(|| {
                let fields: Vec<String> = shown.changed.iter().map(|c| c.field.clone()).collect();
                HostError::NotFound(format!(
                    "version {version} of {} changed no field {field} — it changed {}",
                    self.named(),
                    crate::texts::bounded_list(&fields)
                ))
            })
    }

    /// The versions asked one at a time: version `version` alone, or every
    /// one shown when `None`. Refused as [`EntityView::whole`] is.
    pub fn versions(&self, version: Option<u64>) -> Result<&[Version], HostError> {
        let Some(history) = &self.history else {
            return Err(self.history_is_the_spaces());
        };
        let Some(version) = version else {
            return Ok(&history.versions);
        };
        let at = history
            .versions
            .iter()
            .position(|v| v.version == version)
            .ok_or_else(|| {
                HostError::NotFound(format!(
                    "no version {version} of {} shown — its history shows {}",
                    self.named(),
                    versions_span(&history.versions)
                ))
            })?;
        Ok(&history.versions[at..=at])
    }

    /// The entity as a sentence names it ([`entity_named`]).
    fn named(&self) -> String {
        entity_named(self.now.as_ref(), self.alias.as_deref(), &self.eid)
    }

    /// The sentence for a caller who sees no history asking for it.
    fn history_is_the_spaces(&self) -> HostError {
        HostError::NotFound(format!(
            "the history of {} is shown to the members of {} — its value now is what you can read",
            self.named(),
            self.space
        ))
    }
}

/// `versions 3 to 1` (newest first, as shown), `version 1`, or `none`.
fn versions_span(versions: &[Version]) -> String {
    match (versions.first(), versions.last()) {
        (Some(newest), Some(oldest)) if newest.version != oldest.version => {
            format!("versions {} to {}", newest.version, oldest.version)
        }
        (Some(only), _) => format!("version {}", only.version),
        _ => "none".to_string(),
    }
}

impl Host {
    /// One entity of `app` (`space/slug`, or a slug of the caller's
    /// spaces), named by eid or by its alias while it is live, read as
    /// `caller` may read the app: an outsider of a private app is told
    /// `no app <app>`, as for an app nobody made. The text: `jeff/runs:
    /// <eid> at version 3 — 3 versions, 1 edge out, 0 in` (`, tombstoned`
    /// after the version when it is), then a line per version, newest
    /// first ([`version_line`]), up to [`ENTITY_TEXT_BYTES`]. To one who
    /// sees no history: `jeff/runs: <eid> at version 3 — its history is
    /// shown to the members of jeff`, then its fields now.
    pub async fn entity(
        &self,
        caller: &Caller,
        app: &str,
        eid_or_alias: &str,
    ) -> Result<Answer<EntityView>, HostError> {
        let (app, standing) = self.named_app(caller, app).await?;
        let parts = self.parts(&app).await?;
        let declared = parts.manifest.vocab.components.keys().map(String::as_str);
        let components: Vec<&str> = shed_manifest::PLATFORM_COMPONENTS
            .iter()
            .copied()
            .chain(declared)
            .collect();
        let (now, history) = self
            .read_entity(&app, standing, eid_or_alias, &components)
            .await?;
        let entity = now.as_ref().map(|now| &now["entity"]);
        let view = EntityView {
            app: app.name.clone(),
            space: app.space.clone(),
            eid: history.as_ref().map_or_else(
                || text_of(entity.and_then(|e| e.get("eid"))).unwrap_or_default(),
                |h| h.eid.clone(),
            ),
            alias: history.as_ref().map_or_else(
                || text_of(entity.and_then(|e| e.get("alias"))),
                |h| h.alias.clone(),
            ),
            version: history.as_ref().map_or_else(
                || {
                    entity
                        .and_then(|e| e["version"].as_u64())
                        .unwrap_or_default()
                },
                |h| h.version,
            ),
            now,
            history,
            may_undo: may(app.subject(), standing, Act::Undo).is_ok(),
        };
        Ok(Answer {
            text: entity_text(&view),
            data: view,
        })
    }
}

/// A JSON string's text.
fn text_of(value: Option<&Value>) -> Option<String> {
    value.and_then(Value::as_str).map(str::to_string)
}

/// The entity's text, as [`Host::entity`] says.
fn entity_text(view: &EntityView) -> String {
    let Some(record) = &view.history else {
        let mut text = format!(
            "{}: {} at version {} — its history is shown to the members of {}",
            view.app, view.eid, view.version, view.space
        );
        for (field, value) in fields_now(view.now.as_ref()) {
            text.push_str(&format!("\n{field} {}", shown_json(value)));
        }
        return text;
    };
    let tombstoned = if record.tombstoned {
        ", tombstoned"
    } else {
        ""
    };
    let mut text = format!(
        "{}: {} at version {}{tombstoned} — {}, {} out, {} in",
        view.app,
        record.eid,
        record.version,
        count(
            record.versions.len() + record.older_versions,
            "version",
            "versions"
        ),
        count(record.edges_out.len(), "edge", "edges"),
        record.edges_in.len(),
    );
    let listed_from = text.len();
    for (shown, version) in record.versions.iter().enumerate() {
        if text.len() - listed_from > ENTITY_TEXT_BYTES {
            let rest = &record.versions[shown..];
            text.push_str(&format!(
                "\nand {} more, not listed: {} — ask for one by its version",
                count(rest.len(), "version", "versions"),
                versions_span(rest)
            ));
            break;
        }
        text.push('\n');
        text.push_str(&version_line(version));
    }
    text
}

/// The fields of a row now, `component.column` and its value, in the
/// row's order.
fn fields_now(now: Option<&Value>) -> Vec<(String, &Value)> {
    now.map(crate::app_data::columns_of)
        .unwrap_or_default()
        .into_iter()
        .flat_map(|(component, columns)| {
            columns
                .iter()
                .map(move |(column, value)| (format!("{component}.{column}"), value))
        })
        .collect()
}

/// One version as a line: `version 2 — jeff/runs@7 at <time> by @ada
/// (agent:job-3) through broker log_run: jog.miles 5 → 6; alias "tue" →
/// null` (the door, command and client where its write kept them — `from
/// Claude (claimed)` after the command, unless the client is the job `via`
/// names; each value as JSON, [`cut`]).
pub fn version_line(version: &Version) -> String {
    let stamp = &version.stamp;
    let via = stamp
        .via
        .as_ref()
        .map(|via| format!(" ({via})"))
        .unwrap_or_default();
    let through = version
        .through
        .as_ref()
        .map(|t| {
            let command = t
                .command
                .as_ref()
                .map(|c| format!(" {c}"))
                .unwrap_or_default();
            // A job's client is the job its `via` already names.
            let client = t
                .client
                .as_ref()
                .filter(|client| crate::activity::job_of(stamp.via.as_deref()) != Some(client))
                .map(|client| format!(" from {client}"))
                .unwrap_or_default();
            format!(" through {}{command}{client}", t.door)
        })
        .unwrap_or_default();
    let changed: Vec<String> = version
        .changed
        .iter()
        .map(|c| format!("{} {} → {}", c.field, shown_before(c), shown_json(&c.after)))
        .collect();
    format!(
        "version {} — {} at {} by @{}{via}{through}: {}",
        version.version,
        version.write,
        stamp.at,
        stamp.by.handle,
        changed.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_before_older_than_the_history_read_is_said_so_never_null() {
        let version = Version {
            version: 151,
            write: "jeff/runs@151".into(),
            app_version: 151,
            stamp: shed_store::undo::Stamp {
                at: "2026-12-04T20:00:00Z".into(),
                by: shed_store::Person {
                    eid: "0".repeat(32),
                    handle: "jeff".into(),
                    name: "Jeff".into(),
                },
                via: None,
            },
            through: None,
            changed: vec![Changed {
                field: "jog.who".into(),
                before: Value::Null,
                after: Value::from("Ada"),
                before_unread: true,
            }],
        };
        let line = version_line(&version);
        assert!(
            line.ends_with(&format!("jog.who {UNREAD_BEFORE} → \"Ada\"")),
            "{line}"
        );
        assert_eq!(whole_before(&version.changed[0]), UNREAD_BEFORE);
    }
}
