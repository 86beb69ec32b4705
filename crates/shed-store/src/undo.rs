//! An entity's versions, and undoing a write. Both read an entity's
//! history (`ec_history`) by its key and replay it, entry by entry, into
//! the shape each version had ([`Shape`]: its components and columns,
//! alias, edges, tombstone): an entity's page shows each of its newest
//! [`VERSIONS_SHOWN`] versions as what it changed (field, before → after,
//! [`Store::entity`]); an undo writes, as a new write through the ordinary
//! apply, each entity the write changed back to the shape it had before
//! ([`Store::undo`]) — reviving what the write tombstoned, which only an
//! undo can (the wire has no word for it). Neither reads the whole
//! history: the values the first versions read changed from are found by
//! walking older entries back, at most [`HISTORY_LOOKBACK`] of them,
//! keeping only the [`Part`]s still needed ([`base`]). Read once for both
//! backends, in one snapshot.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::records::{FromRow, ReadRows, person_at};
use crate::txn::{Records, Row, Txn, args};
use crate::values::render_time;
use crate::wire::{Bundle, Columns, EdgeChange, Target};
use crate::{Actor, Applied, Backend, Person, Store, StoreError, Through};

/// The most versions of an entity its read answers, newest first: an
/// entity written a million times still answers a page's worth.
pub const VERSIONS_SHOWN: usize = 50;

/// The most edges an entity's read answers each way (out, in).
pub const EDGES_SHOWN: usize = 200;

/// The most older entries of an entity's history read, newest first, to
/// find the values its oldest shown versions (or an undo) changed from.
pub const HISTORY_LOOKBACK: usize = 100;

/// The most versions of an entity after a write that an undo of the write
/// reads to see whether they left it as the write did; more are a change
/// since.
pub const UNDO_LATER_VERSIONS: usize = 20;

/// How many times an undo is planned and written again when another write
/// changed one of its entities between its read and its write; past it the
/// undo answers the conflict.
pub const UNDO_ATTEMPTS: usize = 3;

/// How deep an undo follows the chain of undos of a write (an undo, its
/// undo, that one's undo…) to tell whether the write stands undone; past
/// it, whether its entities are as it left them decides, as for any write.
pub const UNDO_CHAIN: usize = 16;

/// One field a version changed: `jog.miles` (a column), `jog` (a component
/// added or removed whole), `alias`, `edges.<rel>` (an edge added: before
/// null; dropped: after null), `tombstoned`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Changed {
    /// The field, as above.
    pub field: String,
    /// Its value before the version (null where it had none).
    pub before: Value,
    /// Its value after.
    pub after: Value,
    /// Whether its value before is older than the history read
    /// ([`HISTORY_LOOKBACK`]): `before` is then null, not its value.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub before_unread: bool,
}

/// Who wrote an entity first or last, and when.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Stamp {
    /// When (RFC 3339, UTC).
    pub at: String,
    /// The person, or the person an agent wrote for.
    pub by: Person,
    /// The agent, or what the write was (`undo of jeff/runs@12`).
    pub via: Option<String>,
}

/// One version of an entity: the write that made it, and what it changed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Version {
    /// The entity's version after this write.
    pub version: u64,
    /// The write's name: `<space>/<app>@<app data version>`.
    pub write: String,
    /// The app data version the write committed as.
    pub app_version: u64,
    /// When, who and via what.
    pub stamp: Stamp,
    /// The door, command and client the write came through; `None` for a
    /// write made before shed kept them (migration 14).
    pub through: Option<Through>,
    /// What it changed, field by field.
    pub changed: Vec<Changed>,
}

/// An edge of an entity: its relation and the entity at its other end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Edge {
    /// The relation (`parent`).
    pub rel: String,
    /// The eid at the other end: where an edge out points, where an edge
    /// in comes from.
    pub eid: String,
}

/// An entity of an app as its page shows it (its components now are the
/// app's own read, `eid=<eid>`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EntityRecord {
    /// Its eid.
    pub eid: String,
    /// Its alias, if it has one.
    pub alias: Option<String>,
    /// Its version now: +1 on every write of it.
    pub version: u64,
    /// Whether it is tombstoned (deleted, its history kept).
    pub tombstoned: bool,
    /// Who wrote it first.
    pub created: Stamp,
    /// Who wrote it last.
    pub updated: Stamp,
    /// Its edges out, by relation then eid, at most [`EDGES_SHOWN`].
    pub edges_out: Vec<Edge>,
    /// The live entities' edges that point at it, by relation then
    /// entity, at most [`EDGES_SHOWN`].
    pub edges_in: Vec<Edge>,
    /// Its versions, newest first, at most [`VERSIONS_SHOWN`].
    pub versions: Vec<Version>,
    /// How many older versions there are past those.
    pub older_versions: usize,
}

/// What an undo wrote.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Undone {
    /// The write undone (`jeff/runs@12`).
    pub write: String,
    /// The undo's own write: its entities, and the app data version it
    /// committed as (its name is `<app>@<version>`).
    pub applied: Applied,
}

/// An entity as its history makes it at one version.
#[derive(Clone, Debug, Default, PartialEq)]
struct Shape {
    /// Whether a write has made it yet.
    exists: bool,
    tombstoned: bool,
    alias: Option<String>,
    /// Each component it wears, with the columns written (an absent
    /// column is null).
    components: BTreeMap<String, Map<String, Value>>,
    /// (rel, eid) of each edge out.
    edges: BTreeSet<(String, String)>,
}

impl Shape {
    /// The shape after one history entry's `change` (as `apply.rs` writes
    /// it: each component's columns or null, `alias`, `edges`, and
    /// `tombstone` — `{}` deletes, clearing the alias; `false` revives).
    fn replay(&mut self, change: &Value) {
        self.exists = true;
        let Value::Object(change) = change else {
            return;
        };
        for (key, value) in change {
            match key.as_str() {
                "entity" | "tombstone" => {}
                // A component may be named `alias` (no wire word): its
                // columns are an object, an alias a string or null.
                "alias" if !value.is_object() => self.alias = value.as_str().map(str::to_string),
                "edges" => {
                    for edge in value.as_array().into_iter().flatten() {
                        let (Some(rel), Some(to)) = (edge["rel"].as_str(), edge["to"].as_str())
                        else {
                            continue;
                        };
                        let pair = (rel.to_string(), to.to_string());
                        if edge["drop"] == json!(true) {
                            self.edges.remove(&pair);
                        } else {
                            self.edges.insert(pair);
                        }
                    }
                }
                component => match value {
                    Value::Object(columns) => {
                        let kept = self.components.entry(component.to_string()).or_default();
                        kept.extend(columns.iter().map(|(c, v)| (c.clone(), v.clone())));
                    }
                    _ => {
                        self.components.remove(component);
                    }
                },
            }
        }
        match change.get("tombstone") {
            Some(Value::Bool(false)) => self.tombstoned = false,
            Some(_) => {
                self.tombstoned = true;
                self.alias = None;
            }
            None => {}
        }
    }
}

/// What changed from `before` to `after`, field by field.
fn changes(before: &Shape, after: &Shape) -> Vec<Changed> {
    let mut out = Vec::new();
    let mut field = |field: String, before: Value, after: Value| {
        if before != after {
            out.push(Changed {
                field,
                before,
                after,
                before_unread: false,
            });
        }
    };
    field("alias".into(), json!(before.alias), json!(after.alias));
    let names: BTreeSet<&String> = before
        .components
        .keys()
        .chain(after.components.keys())
        .collect();
    for name in names {
        match (before.components.get(name), after.components.get(name)) {
            (Some(was), None) => field(name.clone(), Value::Object(was.clone()), Value::Null),
            (None, Some(now)) if now.values().all(Value::is_null) => {
                field(name.clone(), Value::Null, Value::Object(now.clone()))
            }
            (was, Some(now)) => {
                let columns: BTreeSet<&String> = was
                    .into_iter()
                    .flat_map(|was| was.keys())
                    .chain(now.keys())
                    .collect();
                for column in columns {
                    let value = |shape: Option<&Map<String, Value>>| {
                        shape
                            .and_then(|s| s.get(column))
                            .cloned()
                            .unwrap_or_default()
                    };
                    field(format!("{name}.{column}"), value(was), value(Some(now)));
                }
            }
            (None, None) => {}
        }
    }
    for (rel, eid) in before.edges.difference(&after.edges) {
        field(format!("edges.{rel}"), json!(eid), Value::Null);
    }
    for (rel, eid) in after.edges.difference(&before.edges) {
        field(format!("edges.{rel}"), Value::Null, json!(eid));
    }
    field(
        "tombstoned".into(),
        json!(before.tombstoned),
        json!(after.tombstoned),
    );
    out
}

/// The bundle that takes entity `eid`, at version `was` and shaped
/// `now`, back to the shape `before`: `None` when they are alike.
fn bundle_back(eid: &str, was: u64, before: &Shape, now: &Shape) -> Option<Bundle> {
    let mut bundle = Bundle {
        target: Target::Eid(eid.to_string()),
        alias: None,
        components: Vec::new(),
        edges: Vec::new(),
        tombstone: false,
        was: Some(was),
        revive: false,
    };
    if !before.exists || before.tombstoned {
        if now.tombstoned {
            return None;
        }
        bundle.tombstone = true;
        if !before.exists {
            return Some(bundle);
        }
    } else if now.tombstoned {
        bundle.revive = true;
    }
    if !bundle.tombstone && before.alias != now.alias {
        bundle.alias = Some(before.alias.clone());
    }
    let names: BTreeSet<&String> = before
        .components
        .keys()
        .chain(now.components.keys())
        .collect();
    for name in names {
        let columns: Option<Columns> = match (before.components.get(name), now.components.get(name))
        {
            (Some(was), None) => Some(was.clone().into_iter().collect()),
            (None, Some(_)) => None,
            (Some(was), Some(is)) => {
                let changed: Columns = was
                    .keys()
                    .chain(is.keys())
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .map(|c| (c.clone(), was.get(c).cloned().unwrap_or_default()))
                    .filter(|(c, v)| is.get(c).unwrap_or(&Value::Null) != v)
                    .collect();
                if changed.is_empty() {
                    continue;
                }
                Some(changed)
            }
            (None, None) => continue,
        };
        bundle.components.push((name.clone(), columns));
    }
    let edge = |(rel, eid): &(String, String), drop| EdgeChange {
        rel: rel.clone(),
        to: Target::Eid(eid.clone()),
        drop,
    };
    bundle
        .edges
        .extend(before.edges.difference(&now.edges).map(|e| edge(e, false)));
    bundle
        .edges
        .extend(now.edges.difference(&before.edges).map(|e| edge(e, true)));
    (!writes_nothing(&bundle)).then_some(bundle)
}

/// Whether a bundle of an undo would change nothing of its entity.
fn writes_nothing(bundle: &Bundle) -> bool {
    !bundle.tombstone
        && !bundle.revive
        && bundle.alias.is_none()
        && bundle.components.is_empty()
        && bundle.edges.is_empty()
}

/// An alias a bundle gives back, taken out into a bundle of its own that
/// the undo writes last, the bundle clearing the entity's alias meanwhile
/// (`has_alias`: it has one now): so an alias the write moved to another
/// entity, swapped, or gave to one it made (which the undo tombstones) is
/// free when it is given back. Answers what is left of the bundle, if
/// anything, and the alias's own.
fn alias_last(mut bundle: Bundle, has_alias: bool) -> (Option<Bundle>, Option<Bundle>) {
    let Some(Some(alias)) = bundle.alias.clone() else {
        return (Some(bundle), None);
    };
    bundle.alias = has_alias.then_some(None);
    let last = Bundle {
        target: bundle.target.clone(),
        alias: Some(Some(alias)),
        components: Vec::new(),
        edges: Vec::new(),
        tombstone: false,
        was: bundle.was,
        revive: false,
    };
    ((!writes_nothing(&bundle)).then_some(bundle), Some(last))
}

/// One part of an entity's shape that a history entry sets whole: what an
/// entry says of it is its value after, whatever came before.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Part {
    Alias,
    Tombstoned,
    /// Whether it wears a component.
    Worn(String),
    /// One column of a component.
    Column(String, String),
    /// Every column of a component: set only by its removal.
    Whole(String),
    /// An edge out: (rel, eid).
    Edge(String, String),
}

/// The parts a history entry's `change` sets.
fn parts(change: &Value) -> Vec<Part> {
    let Value::Object(change) = change else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, value) in change {
        match key.as_str() {
            "entity" => {}
            "tombstone" => {
                out.push(Part::Tombstoned);
                if value.is_object() {
                    out.push(Part::Alias);
                }
            }
            "alias" if !value.is_object() => out.push(Part::Alias),
            "edges" => out.extend(value.as_array().into_iter().flatten().filter_map(|edge| {
                Some(Part::Edge(
                    edge["rel"].as_str()?.to_string(),
                    edge["to"].as_str()?.to_string(),
                ))
            })),
            component => {
                out.push(Part::Worn(component.to_string()));
                match value {
                    Value::Object(columns) => out.extend(
                        columns
                            .keys()
                            .map(|c| Part::Column(component.to_string(), c.clone())),
                    ),
                    _ => out.push(Part::Whole(component.to_string())),
                }
            }
        }
    }
    out
}

/// Parts whose value is not known yet at some point of the history.
#[derive(Default)]
struct Open(BTreeSet<Part>);

impl Open {
    /// What an entry tells of them: each part it sets is known after it (a
    /// component removed tells every column of it).
    fn close(&mut self, change: &Value) {
        for part in parts(change) {
            if let Part::Whole(c) = &part {
                self.0
                    .retain(|p| !matches!(p, Part::Worn(x) | Part::Column(x, _) if x == c));
            }
            self.0.remove(&part);
        }
    }

    /// Whether a field a version shows depends on a part still open.
    fn hides(&self, changed: &Changed) -> bool {
        let field = changed.field.as_str();
        if let Some(rel) = field.strip_prefix("edges.") {
            let eid = changed.before.as_str().or(changed.after.as_str());
            return eid.is_some_and(|eid| {
                self.0
                    .contains(&Part::Edge(rel.to_string(), eid.to_string()))
            });
        }
        self.0
            .iter()
            .any(|part| match (part, field.split_once('.')) {
                (Part::Alias, None) => field == "alias",
                (Part::Tombstoned, None) => field == "tombstoned",
                (Part::Worn(c) | Part::Whole(c) | Part::Column(c, _), None) => c == field,
                (Part::Column(c, col), Some((name, column))) => c == name && col == column,
                _ => false,
            })
    }

    /// The field an open part shows as, with its value in `shape` after
    /// and its value before unread — unless `changed` shows it already.
    fn unshown(part: &Part, shape: &Shape, changed: &[Changed]) -> Option<Changed> {
        let shows = |c: &Changed| match part {
            Part::Alias => c.field == "alias",
            Part::Tombstoned => c.field == "tombstoned",
            Part::Worn(name) | Part::Whole(name) | Part::Column(name, _) => {
                c.field == *name
                    || c.field.split_once('.').is_some_and(|(n, column)| {
                        n == name && !matches!(part, Part::Column(_, col) if col != column)
                    })
            }
            Part::Edge(rel, eid) => {
                c.field.strip_prefix("edges.") == Some(rel.as_str())
                    && (c.before == json!(eid) || c.after == json!(eid))
            }
        };
        if changed.iter().any(shows) {
            return None;
        }
        let (field, after) = match part {
            Part::Alias => ("alias".to_string(), json!(shape.alias)),
            Part::Tombstoned => ("tombstoned".to_string(), json!(shape.tombstoned)),
            Part::Worn(c) | Part::Whole(c) => (
                c.clone(),
                shape
                    .components
                    .get(c)
                    .map_or(Value::Null, |m| Value::Object(m.clone())),
            ),
            Part::Column(c, col) => (
                format!("{c}.{col}"),
                shape
                    .components
                    .get(c)
                    .and_then(|m| m.get(col))
                    .cloned()
                    .unwrap_or_default(),
            ),
            Part::Edge(rel, eid) => (
                format!("edges.{rel}"),
                if shape.edges.contains(&(rel.clone(), eid.clone())) {
                    json!(eid)
                } else {
                    Value::Null
                },
            ),
        };
        Some(Changed {
            field,
            before: Value::Null,
            after,
            before_unread: true,
        })
    }
}

/// The part of an older entry's `change` that tells something of the
/// parts `open` still needs (`seen`: columns of a component whose every
/// column is needed, already kept from a newer entry).
fn needed_of(change: &Value, open: &Open, seen: &BTreeSet<(String, String)>) -> Map<String, Value> {
    let needs = |part: &Part| open.0.contains(part);
    let mut kept = Map::new();
    let Value::Object(change) = change else {
        return kept;
    };
    for (key, value) in change {
        let keep = match key.as_str() {
            "entity" => None,
            "tombstone" => (needs(&Part::Tombstoned) || (value.is_object() && needs(&Part::Alias)))
                .then(|| value.clone()),
            "alias" if !value.is_object() => needs(&Part::Alias).then(|| value.clone()),
            "edges" => {
                let edges: Vec<Value> = value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|e| match (e["rel"].as_str(), e["to"].as_str()) {
                        (Some(rel), Some(to)) => {
                            needs(&Part::Edge(rel.to_string(), to.to_string()))
                        }
                        _ => false,
                    })
                    .cloned()
                    .collect();
                (!edges.is_empty()).then_some(Value::Array(edges))
            }
            component => {
                let c = component.to_string();
                let whole = needs(&Part::Whole(c.clone()));
                let any = whole
                    || needs(&Part::Worn(c.clone()))
                    || open
                        .0
                        .iter()
                        .any(|p| matches!(p, Part::Column(x, _) if *x == c));
                match value {
                    Value::Object(columns) => {
                        let columns: Map<String, Value> = columns
                            .iter()
                            .filter(|(col, _)| {
                                needs(&Part::Column(c.clone(), (*col).clone()))
                                    || (whole && !seen.contains(&(c.clone(), (*col).clone())))
                            })
                            .map(|(col, v)| (col.clone(), v.clone()))
                            .collect();
                        (any || !columns.is_empty()).then_some(Value::Object(columns))
                    }
                    _ => any.then_some(Value::Null),
                }
            }
        };
        if let Some(keep) = keep {
            kept.insert(key.clone(), keep);
        }
    }
    kept
}

/// An entity's shape just before a point of its history, as far as the
/// parts needed go: the parts never needed are as the entity is now (its
/// row's alias and tombstone) or absent — alike before and after, so no
/// version shows them and no undo writes them.
struct Base {
    shape: Shape,
    /// The needed parts older than [`HISTORY_LOOKBACK`] entries: unread.
    unread: Open,
}

/// An older entry, as the walk back reads it.
struct Older {
    app_version: i64,
    step: i64,
    change: Value,
}

impl FromRow for Older {
    fn from_row(r: Row) -> Result<Older, StoreError> {
        Ok(Older {
            app_version: r.get(0)?,
            step: r.get(1)?,
            change: serde_json::from_str(&r.get::<String>(2)?).unwrap_or(Value::Null),
        })
    }
}

/// Older entries read at once while walking back.
const LOOKBACK_PAGE: usize = 10;

/// The shape of entity `found` before app data version `from`, for the
/// parts `needed`: its older entries walked newest first, [`LOOKBACK_PAGE`]
/// at a time, keeping of each only what tells a part still needed, until
/// every one is known, the history's start, or [`HISTORY_LOOKBACK`]
/// entries; then what was kept replayed oldest first. `exists`: whether
/// any entry is older than `from`.
async fn base<T: Txn>(
    t: &T,
    found: &Found,
    from: i64,
    exists: bool,
    needed: BTreeSet<Part>,
) -> Result<Base, StoreError> {
    let never = |part: &Part| !needed.contains(part);
    let (alias_now, tombstoned_now) = (never(&Part::Alias), never(&Part::Tombstoned));
    let mut open = Open(needed);
    let mut seen = BTreeSet::new();
    let mut kept: Vec<Map<String, Value>> = Vec::new();
    let (mut at, mut read) = ((from, 0), 0);
    let sql = format!(
        "SELECT app_version, step, change FROM ec_history
         WHERE entity = $1 AND (app_version, step) < ($2, $3)
         ORDER BY app_version DESC, step DESC LIMIT {LOOKBACK_PAGE}"
    );
    let started = loop {
        if !exists {
            break true;
        }
        if open.0.is_empty() {
            break false;
        }
        let page: Vec<Older> = t.all_as(&sql, args![found.id, at.0, at.1]).await?;
        if page.is_empty() {
            break true;
        }
        if read == HISTORY_LOOKBACK {
            break false;
        }
        let take = page.len().min(HISTORY_LOOKBACK - read);
        for older in &page[..take] {
            let needed = needed_of(&older.change, &open, &seen);
            for (component, value) in &needed {
                if let Value::Object(columns) = value {
                    seen.extend(columns.keys().map(|c| (component.clone(), c.clone())));
                }
            }
            if !needed.is_empty() {
                kept.push(needed);
            }
            open.close(&older.change);
            at = (older.app_version, older.step);
        }
        read += take;
        if take == page.len() && page.len() < LOOKBACK_PAGE {
            break true;
        }
    };
    let mut shape = Shape::default();
    for change in kept.into_iter().rev() {
        shape.replay(&Value::Object(change));
    }
    shape.exists = exists;
    if alias_now {
        shape.alias = found.alias.clone();
    }
    if tombstoned_now {
        shape.tombstoned = found.tombstoned;
    }
    if started {
        open.0.clear();
    }
    Ok(Base {
        shape,
        unread: open,
    })
}

/// One entry of an entity's history, as read.
struct Entry {
    app_version: i64,
    version: i64,
    stamp: Stamp,
    change: Value,
    through: Option<Through>,
}

impl FromRow for Entry {
    fn from_row(r: Row) -> Result<Entry, StoreError> {
        let door: Option<String> = r.get(8)?;
        Ok(Entry {
            app_version: r.get(0)?,
            version: r.get(1)?,
            stamp: Stamp {
                at: render_time(r.get(2)?),
                by: person_at(&r, 3)?,
                via: r.get(6)?,
            },
            change: serde_json::from_str(&r.get::<String>(7)?).unwrap_or(Value::Null),
            through: door
                .map(|door| {
                    Ok::<_, StoreError>(Through {
                        door,
                        command: r.get(9)?,
                        client: r.get(10)?,
                    })
                })
                .transpose()?,
        })
    }
}

/// An entity's row, as read.
struct Found {
    id: i64,
    eid: String,
    alias: Option<String>,
    version: i64,
    tombstoned: bool,
    created: Stamp,
    updated: Stamp,
}

impl FromRow for Found {
    fn from_row(r: Row) -> Result<Found, StoreError> {
        Ok(Found {
            id: r.get(0)?,
            eid: r.get(1)?,
            alias: r.get(2)?,
            version: r.get(3)?,
            tombstoned: r.get(4)?,
            created: Stamp {
                at: render_time(r.get(5)?),
                by: person_at(&r, 6)?,
                via: r.get(9)?,
            },
            updated: Stamp {
                at: render_time(r.get(10)?),
                by: person_at(&r, 11)?,
                via: r.get(14)?,
            },
        })
    }
}

impl FromRow for Edge {
    fn from_row(r: Row) -> Result<Edge, StoreError> {
        Ok(Edge {
            rel: r.get(0)?,
            eid: r.get(1)?,
        })
    }
}

/// How many digits of an eid the pages show for an entity with no title
/// (its links', its page's): the shortest start of an eid that names it.
pub const SHORT_EID_DIGITS: usize = 8;

/// Whether `name` may be the start of an eid: [`SHORT_EID_DIGITS`] to 31
/// lowercase hex digits.
fn is_short_eid(name: &str) -> bool {
    (SHORT_EID_DIGITS..32).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The row of an entity, its creator and its last writer, as [`Found`]
/// reads it; the caller adds `AND` and which.
const FOUND: &str = "SELECT e.id, e.eid, e.alias, e.version, e.tombstoned,
                e.created_at, c.eid, c.handle, c.name, e.created_via,
                e.updated_at, u.eid, u.handle, u.name, e.updated_via
         FROM ec_entities e JOIN ec_apps a ON a.id = e.app
         JOIN people c ON c.eid = e.created_by JOIN people u ON u.eid = e.updated_by
         WHERE a.name = $1";

/// The entity of `app` an eid or alias names (live or not, by eid), or the
/// start of an eid the pages show ([`SHORT_EID_DIGITS`] or more) when no
/// alias is that: refused when it starts none, or more than one.
async fn found<T: Txn>(t: &T, app: &str, name: &str) -> Result<Found, StoreError> {
    let column = if crate::names::is_eid(name) {
        "eid"
    } else {
        "alias"
    };
    let sql = format!("{FOUND} AND e.{column} = $2");
    if let Some(found) = t.optional_as(&sql, args![app, name]).await? {
        return Ok(found);
    }
    if !is_short_eid(name) {
        return Err(crate::apply::no_entity(name, app));
    }
    // Hex digits only: nothing in the pattern but its closing `%`.
    let sql = format!("{FOUND} AND e.eid LIKE $2 ORDER BY e.eid LIMIT 2");
    let started: Vec<Found> = t.all_as(&sql, args![app, format!("{name}%")]).await?;
    one_started(started, app, name)
}

/// The one entity whose eid starts with `short`, of those read (at most
/// two); else the sentence saying what to give instead.
fn one_started(mut started: Vec<Found>, app: &str, short: &str) -> Result<Found, StoreError> {
    match started.len() {
        1 => Ok(started.remove(0)),
        0 => Err(StoreError::NotFound(format!(
            "no entity {short} in {app} — name one by its eid, its alias, or the first \
             {SHORT_EID_DIGITS} digits of its eid its page shows"
        ))),
        _ => Err(StoreError::refused(format!(
            "{short} starts the eid of more than one entity of {app} — give more of its \
             digits, up to all 32 its page shows"
        ))),
    }
}

/// Entries of an entity's history (row id `$1` of app `$2`), each with
/// its write's door, command and client where kept; the caller adds which
/// (by the primary key, `$3` an app data version) and in what order.
const ENTRIES: &str = "SELECT h.app_version, h.version, h.at, p.eid, p.handle, p.name, h.via,
                              h.change, w.door, w.command, w.client
                       FROM ec_history h JOIN people p ON p.eid = h.by
                       LEFT JOIN ec_writes w ON w.app = $2 AND w.version = h.app_version
                       WHERE h.entity = $1";

/// The entries of entity `id` of `app` from app data version `from` on,
/// oldest first.
async fn entries_from<T: Txn>(
    t: &T,
    app: &str,
    id: i64,
    from: i64,
) -> Result<Vec<Entry>, StoreError> {
    let sql = format!("{ENTRIES} AND h.app_version >= $3 ORDER BY h.app_version, h.step");
    t.all_as(&sql, args![id, app, from]).await
}

/// The parts `entries` set.
fn parts_of(entries: &[Entry]) -> BTreeSet<Part> {
    entries.iter().flat_map(|e| parts(&e.change)).collect()
}

/// The versions `entries` make from `base`, oldest first (a write's
/// several entries for one entity are one version); a field whose value
/// before is unread is said so.
fn versions(app: &str, mut base: Base, entries: &[Entry]) -> Vec<Version> {
    let mut out: Vec<Version> = Vec::new();
    for write in entries.chunk_by(|a, b| a.app_version == b.app_version) {
        let before = base.shape.clone();
        for entry in write {
            base.shape.replay(&entry.change);
        }
        let mut changed = changes(&before, &base.shape);
        for c in &mut changed {
            if base.unread.hides(c) {
                c.before = Value::Null;
                c.before_unread = true;
            }
        }
        let set = parts_of(write);
        let unshown: Vec<Changed> = set
            .iter()
            .filter(|part| base.unread.0.contains(part))
            .filter_map(|part| Open::unshown(part, &base.shape, &changed))
            .collect();
        changed.extend(unshown);
        for entry in write {
            base.unread.close(&entry.change);
        }
        let (first, last) = (&write[0], &write[write.len() - 1]);
        out.push(Version {
            version: last.version as u64,
            write: format!("{app}@{}", first.app_version),
            app_version: first.app_version as u64,
            stamp: last.stamp.clone(),
            through: last.through.clone(),
            changed,
        });
    }
    out
}

/// The read of an entity's page: its row, edges both ways, and its newest
/// [`VERSIONS_SHOWN`] versions — only their entries read, by the history's
/// key, and what older entries tell of the fields they changed.
async fn entity_record<T: Txn>(t: &T, app: &str, name: &str) -> Result<EntityRecord, StoreError> {
    let found = found(t, app, name).await?;
    let out = format!(
        "SELECT rel, dst FROM ec_edges WHERE src = $1 ORDER BY rel, dst LIMIT {EDGES_SHOWN}"
    );
    let edges_out = t.all_as(&out, args![found.id]).await?;
    let into = format!(
        "SELECT g.rel, e.eid FROM ec_edges g JOIN ec_entities e ON e.id = g.src
         WHERE g.dst = $1 AND e.tombstoned = 0 ORDER BY g.rel, g.src LIMIT {EDGES_SHOWN}"
    );
    let edges_in = t.all_as(&into, args![found.eid.as_str()]).await?;
    // The oldest shown version's write: the newest VERSIONS_SHOWN distinct
    // app data versions, by the key (entity, app_version, step).
    let oldest = format!(
        "SELECT DISTINCT app_version FROM ec_history WHERE entity = $1
         ORDER BY app_version DESC LIMIT 1 OFFSET {}",
        VERSIONS_SHOWN - 1
    );
    let from: Option<i64> = t.optional_as(&oldest, args![found.id]).await?;
    let entries = entries_from(t, app, found.id, from.unwrap_or(0)).await?;
    // Each write of an entity adds one to its version: the versions before
    // the oldest shown are its number less one.
    let older_versions = entries.first().map_or(0, |e| e.version - 1);
    let base = base(
        t,
        &found,
        from.unwrap_or(0),
        older_versions > 0,
        parts_of(&entries),
    )
    .await?;
    let mut versions = versions(app, base, &entries);
    versions.reverse();
    Ok(EntityRecord {
        eid: found.eid,
        alias: found.alias,
        version: found.version as u64,
        tombstoned: found.tombstoned,
        created: found.created,
        updated: found.updated,
        edges_out,
        edges_in,
        versions,
        older_versions: older_versions as usize,
    })
}

/// `cannot undo jeff/runs@12: ` — how every refusal of an undo starts.
fn cannot(write: &str) -> String {
    format!("cannot undo {write}:")
}

/// An undo's refusal because a later write changed an entity it would
/// write back ([`StoreError::ChangedSince`]): said `cannot undo
/// jeff/runs@12: <eid> changed since — @bob (agent:job-3) wrote it at
/// <time> (jeff/runs@14); undo that first`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangedSince {
    /// The write whose undo was refused: `jeff/runs@12`.
    pub write: String,
    /// Its app: `jeff/runs`.
    pub app: String,
    /// The entity changed since.
    pub eid: String,
    /// The latest write of it: who, when (RFC 3339) and via what.
    pub by: Stamp,
    /// That write's app data version.
    pub later: u64,
}

impl ChangedSince {
    /// Who wrote it: `@bob`, `@bob (agent:job-3)`.
    fn who(&self) -> String {
        match &self.by.via {
            Some(via) => format!("@{} ({via})", self.by.by.handle),
            None => format!("@{}", self.by.by.handle),
        }
    }

    /// Its sentence, the entity named `entity` and the later write's time
    /// said `when`: the host names them by title and "2 minutes ago"; the
    /// store alone ([`Display`](std::fmt::Display)) by eid and `at <time>`.
    pub fn sentence(&self, entity: &str, when: &str) -> String {
        format!(
            "{} {entity} changed since — {} wrote it {when} ({}@{}); undo that first",
            cannot(&self.write),
            self.who(),
            self.app,
            self.later
        )
    }
}

impl std::fmt::Display for ChangedSince {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.sentence(&self.eid, &format!("at {}", self.by.at)))
    }
}

/// The refusal of undoing `write` because `later`, a write of `eid` since,
/// changed it: who, when, which.
fn changed_since(write: &str, app: &str, eid: &str, later: &Entry) -> StoreError {
    StoreError::ChangedSince(Box::new(ChangedSince {
        write: write.to_string(),
        app: app.to_string(),
        eid: eid.to_string(),
        by: later.stamp.clone(),
        later: later.app_version as u64,
    }))
}

/// The bundle that takes entity `eid` of `app` back to its shape before
/// write `version`, and whether it has an alias now (`None`: it is so
/// already): read are its entries at the write, at most
/// [`UNDO_LATER_VERSIONS`] later versions (more are a change since), and
/// what older entries tell of the parts those set.
async fn bundle_undoing<T: Txn>(
    t: &T,
    app: &str,
    version: u64,
    eid: &str,
) -> Result<Option<(Bundle, bool)>, StoreError> {
    let write = format!("{app}@{version}");
    let found = found(t, app, eid).await?;
    let at = version as i64;
    let own = format!("{ENTRIES} AND h.app_version = $3 ORDER BY h.step");
    let own: Vec<Entry> = t.all_as(&own, args![found.id, app, at]).await?;
    let Some(made) = own.last() else {
        return Ok(None);
    };
    let later_versions = found.version - made.version;
    if later_versions > UNDO_LATER_VERSIONS as i64 {
        let newest = format!("{ENTRIES} ORDER BY h.app_version DESC, h.step DESC LIMIT 1");
        let newest: Entry = t.one_as(&newest, args![found.id, app]).await?;
        return Err(changed_since(&write, app, eid, &newest));
    }
    let later = if later_versions > 0 {
        entries_from(t, app, found.id, at + 1).await?
    } else {
        Vec::new()
    };
    let needed = parts_of(&own).into_iter().chain(parts_of(&later)).collect();
    let base = base(t, &found, at, made.version > 1, needed).await?;
    if !base.unread.0.is_empty() {
        return Err(StoreError::refused(format!(
            "{} what {eid} was before it is older than the {HISTORY_LOOKBACK} entries of its \
             history an undo reads back — write its fields back by hand instead",
            cannot(&write)
        )));
    }
    // The shape before the write, the one it left, and the one now: an
    // entity changed since when now is not what the write left (a later
    // write undone since leaves it as it was).
    let before = base.shape;
    let mut left = before.clone();
    for entry in &own {
        left.replay(&entry.change);
    }
    let mut now = left.clone();
    for entry in &later {
        now.replay(&entry.change);
    }
    if now != left {
        let Some(latest) = later.last() else {
            return Err(StoreError::Internal(format!(
                "{eid} differs from what {write} left, and no later write made it so"
            )));
        };
        return Err(changed_since(&write, app, eid, latest));
    }
    Ok(bundle_back(eid, found.version as u64, &before, &now).map(|b| (b, found.alias.is_some())))
}

/// The undo that stands over write `version` of `app`, if it is undone:
/// the chain of undos (its undo, that undo's undo, …) followed to its end,
/// an odd number of them leaving it undone — by the last. `None` when it
/// stands, or the chain is longer than [`UNDO_CHAIN`].
async fn undone_by<T: Txn>(t: &T, app: &str, version: u64) -> Result<Option<u64>, StoreError> {
    let mut of = version;
    for undos in 0..=UNDO_CHAIN {
        let undo: Option<i64> = t
            .optional_as(
                "SELECT version FROM ec_writes WHERE app = $1 AND via = $2 ORDER BY id DESC LIMIT 1",
                args![app, format!("undo of {app}@{of}")],
            )
            .await?;
        let Some(undo) = undo else {
            return Ok((undos % 2 == 1).then_some(of));
        };
        of = undo as u64;
    }
    Ok(None)
}

/// The bundles that undo write `version` of `app`, read in one snapshot:
/// revivals first (a ref or an edge may point at what they revive), then
/// changes, then tombstones (an edge dropped first may point at one), then
/// the aliases given back ([`alias_last`]).
async fn plan<T: Txn>(t: &T, app: &str, version: u64) -> Result<Vec<Bundle>, StoreError> {
    let write = format!("{app}@{version}");
    let listed: Option<String> = t
        .optional_as(
            "SELECT entities FROM ec_writes WHERE app = $1 AND version = $2",
            args![app, version as i64],
        )
        .await?;
    let listed = listed.ok_or_else(|| {
        StoreError::NotFound(format!(
            "no write {write} — name one its activity lists (writes made before shed kept \
             activity cannot be undone)"
        ))
    })?;
    if let Some(by) = undone_by(t, app, version).await? {
        return Err(StoreError::Conflict(format!(
            "{} already undone by {app}@{by} — undo {app}@{by} to bring it back",
            cannot(&write)
        )));
    }
    let eids: Vec<String> = serde_json::from_str(&listed)
        .map_err(|e| StoreError::Internal(format!("a write's entities: {e}")))?;
    let (mut revive, mut change, mut tombstone, mut aliases) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for eid in &eids {
        let Some((bundle, has_alias)) = bundle_undoing(t, app, version, eid).await? else {
            continue;
        };
        let (bundle, alias) = alias_last(bundle, has_alias);
        aliases.extend(alias);
        match bundle {
            Some(b) if b.revive => revive.push(b),
            Some(b) if b.tombstone => tombstone.push(b),
            Some(b) => change.push(b),
            None => {}
        }
    }
    let bundles: Vec<Bundle> = revive
        .into_iter()
        .chain(change)
        .chain(tombstone)
        .chain(aliases)
        .collect();
    if bundles.is_empty() {
        return Err(StoreError::refused(format!(
            "{} it left every entity it wrote as it found it — there is nothing to undo",
            cannot(&write)
        )));
    }
    Ok(bundles)
}

/// The reads of this module, once for both backends.
trait Versions {
    async fn entity_record(&self, app: &str, name: &str) -> Result<EntityRecord, StoreError>;
    async fn undo_plan(&self, app: &str, version: u64) -> Result<Vec<Bundle>, StoreError>;
}

impl<B: Records> Versions for B {
    async fn entity_record(&self, app: &str, name: &str) -> Result<EntityRecord, StoreError> {
        self.read_snapshot(async |t| entity_record(t, app, name).await)
            .await
    }

    async fn undo_plan(&self, app: &str, version: u64) -> Result<Vec<Bundle>, StoreError> {
        self.read_snapshot(async |t| plan(t, app, version).await)
            .await
    }
}

impl Store {
    /// An entity of `app` (named by eid, or by alias while it is live) as
    /// its page shows it: its row's stamps, its edges both ways, and its
    /// versions newest first, each with what it changed — read in one
    /// snapshot.
    pub async fn entity(&self, app: &str, eid_or_alias: &str) -> Result<EntityRecord, StoreError> {
        match &*self.backend {
            Backend::Sqlite(db) => db.entity_record(app, eid_or_alias).await,
            Backend::Postgres(db) => db.entity_record(app, eid_or_alias).await,
        }
    }

    /// Undoes write `version` of `app` as a new write by `actor` (its
    /// `via` becomes `undo of <app>@<version>`): each entity the write
    /// changed goes back to its version before it, one it made is
    /// tombstoned, one it tombstoned comes back. Refused, with nothing
    /// written, when one of them changed since — is not now as the write
    /// left it (a later write undone since leaves it so); the sentence names
    /// the latest write of it: who, when, which. Planned in one snapshot and
    /// checked again in the undo's own transaction (each bundle's `was`, the
    /// version read); a write that came between makes it plan again, up to
    /// [`UNDO_ATTEMPTS`] times.
    pub async fn undo(&self, app: &str, version: u64, actor: &Actor) -> Result<Undone, StoreError> {
        let write = format!("{app}@{version}");
        let actor = Actor {
            via: Some(format!("undo of {write}")),
            ..actor.clone()
        };
        let mut attempt = 1;
        loop {
            let bundles = match &*self.backend {
                Backend::Sqlite(db) => db.undo_plan(app, version).await?,
                Backend::Postgres(db) => db.undo_plan(app, version).await?,
            };
            let applied = match &*self.backend {
                Backend::Sqlite(db) => db.apply_bundles(app, &actor, bundles, None).await,
                Backend::Postgres(db) => db.apply_bundles(app, &actor, bundles, None).await,
            };
            // What the apply refuses (an alias taken since, an edge or a
            // ref to an entity deleted since) is said as the undo's.
            let said = |sentence: String| format!("{} {sentence}", cannot(&write));
            return match applied {
                Err(StoreError::Conflict(_)) if attempt < UNDO_ATTEMPTS => {
                    attempt += 1;
                    continue;
                }
                Ok(applied) => Ok(Undone { write, applied }),
                Err(StoreError::Refused(sentence)) => Err(StoreError::Refused(said(sentence))),
                Err(StoreError::NotFound(sentence)) => Err(StoreError::NotFound(said(sentence))),
                Err(StoreError::Conflict(sentence)) => Err(StoreError::Conflict(said(sentence))),
                Err(failed) => Err(failed),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_eid_names_the_one_entity_it_starts_else_says_what_to_give() {
        assert!(is_short_eid("1fd51000") && is_short_eid(&"a".repeat(31)));
        assert!(!is_short_eid("1fd5100") && !is_short_eid("1FD51000") && !is_short_eid("runs-tue"));
        let row = |eid: &str| {
            let stamp = Stamp {
                at: String::new(),
                by: Person {
                    eid: String::new(),
                    handle: "ada".into(),
                    name: "Ada".into(),
                },
                via: None,
            };
            Found {
                id: 1,
                eid: eid.into(),
                alias: None,
                version: 1,
                tombstoned: false,
                created: stamp.clone(),
                updated: stamp,
            }
        };
        let one = one_started(vec![row("1fd51000aa")], "demo/runs", "1fd51000");
        assert_eq!(
            one.map(|found| found.eid).ok().as_deref(),
            Some("1fd51000aa")
        );
        let none = one_started(Vec::new(), "demo/runs", "1fd51000")
            .err()
            .unwrap();
        assert!(
            none.to_string()
                .starts_with("no entity 1fd51000 in demo/runs — name one by its eid"),
            "{none}"
        );
        let two = vec![row("1fd51000aa"), row("1fd51000bb")];
        let two = one_started(two, "demo/runs", "1fd51000").err().unwrap();
        assert!(
            two.to_string().starts_with(
                "1fd51000 starts the eid of more than one entity of demo/runs — give more"
            ),
            "{two}"
        );
    }

    fn shape(changes: &[Value]) -> Shape {
        let mut shape = Shape::default();
        for change in changes {
            shape.replay(change);
        }
        shape
    }

    #[test]
    fn a_version_says_each_field_before_and_after() {
        let before = shape(&[
            json!({"alias": "tue", "jog": {"miles": 5, "who": "Ada"}, "edges": [{"rel": "next", "to": "e1"}]}),
        ]);
        let after = shape(&[
            json!({"alias": "tue", "jog": {"miles": 5, "who": "Ada"}, "edges": [{"rel": "next", "to": "e1"}]}),
            json!({"alias": null, "jog": {"miles": 6}, "gear": {"ready": true}, "edges": [{"rel": "next", "to": "e1", "drop": true}]}),
        ]);
        let said: Vec<(String, Value, Value)> = changes(&before, &after)
            .into_iter()
            .map(|c| (c.field, c.before, c.after))
            .collect();
        assert_eq!(
            said,
            [
                ("alias".into(), json!("tue"), Value::Null),
                ("gear.ready".into(), Value::Null, json!(true)),
                ("jog.miles".into(), json!(5), json!(6)),
                ("edges.next".into(), json!("e1"), Value::Null),
            ]
        );
        let gone = shape(&[
            json!({"jog": {"miles": 5}}),
            json!({"jog": null, "tombstone": {}}),
        ]);
        let said: Vec<String> = changes(&shape(&[json!({"jog": {"miles": 5}})]), &gone)
            .into_iter()
            .map(|c| format!("{} {} → {}", c.field, c.before, c.after))
            .collect();
        assert_eq!(
            said,
            [r#"jog {"miles":5} → null"#, "tombstoned false → true"]
        );
    }

    #[test]
    fn a_revived_entity_is_live_and_keeps_what_it_wore() {
        let revived = shape(&[
            json!({"alias": "tue", "jog": {"miles": 5}}),
            json!({"tombstone": {}}),
            json!({"tombstone": false}),
        ]);
        assert!(!revived.tombstoned);
        assert_eq!(revived.alias, None, "a tombstone clears the alias");
        assert_eq!(revived.components["jog"]["miles"], json!(5));
    }

    #[test]
    fn the_bundle_back_undoes_each_kind_of_change() {
        let before = shape(&[
            json!({"alias": "tue", "jog": {"miles": 5}, "edges": [{"rel": "next", "to": "e1"}]}),
        ]);
        let now = shape(&[
            json!({"alias": "tue", "jog": {"miles": 5}, "edges": [{"rel": "next", "to": "e1"}]}),
            json!({"alias": "wed", "jog": null, "gear": {"ready": true}, "edges": [{"rel": "next", "to": "e1", "drop": true}, {"rel": "next", "to": "e2"}]}),
        ]);
        let b = bundle_back("e0", 2, &before, &now).unwrap();
        assert_eq!(b.was, Some(2));
        assert_eq!(b.alias, Some(Some("tue".into())));
        assert_eq!(
            b.components,
            [
                ("gear".to_string(), None),
                (
                    "jog".to_string(),
                    Some(vec![("miles".to_string(), json!(5))])
                ),
            ]
        );
        let edges: Vec<(&str, bool)> = b.edges.iter().map(|e| (e.to.given(), e.drop)).collect();
        assert_eq!(edges, [("e1", false), ("e2", true)]);
        assert!(!b.tombstone && !b.revive);
        // Made by the write: tombstoned; tombstoned by it: revived.
        let made = bundle_back("e0", 1, &Shape::default(), &before).unwrap();
        assert!(made.tombstone && made.components.is_empty());
        let deleted = shape(&[json!({"jog": {"miles": 5}}), json!({"tombstone": {}})]);
        let back = bundle_back("e0", 2, &shape(&[json!({"jog": {"miles": 5}})]), &deleted).unwrap();
        assert!(back.revive && back.components.is_empty());
        assert_eq!(bundle_back("e0", 1, &before, &before), None);
    }

    fn entry(app_version: i64, change: Value) -> Entry {
        Entry {
            app_version,
            version: app_version,
            stamp: Stamp {
                at: "2026-09-01T00:00:00Z".into(),
                by: Person {
                    eid: "p".into(),
                    handle: "ada".into(),
                    name: "Ada".into(),
                },
                via: None,
            },
            change,
            through: None,
        }
    }

    #[test]
    fn a_field_whose_value_before_is_unread_is_said_so_never_guessed() {
        let unread = [
            Part::Alias,
            Part::Tombstoned,
            Part::Column("jog".into(), "miles".into()),
        ];
        let base = Base {
            shape: Shape {
                exists: true,
                ..Shape::default()
            },
            unread: Open(unread.into_iter().collect()),
        };
        let entries = [
            entry(7, json!({"jog": {"miles": null}, "tombstone": {}})),
            entry(8, json!({"tombstone": false, "jog": {"miles": 3}})),
        ];
        let said: Vec<Vec<(String, Value, Value, bool)>> = versions("jeff/runs", base, &entries)
            .into_iter()
            .map(|v| {
                v.changed
                    .into_iter()
                    .map(|c| (c.field, c.before, c.after, c.before_unread))
                    .collect()
            })
            .collect();
        let unread = |field: &str, after: Value| (field.to_string(), Value::Null, after, true);
        let known =
            |field: &str, before: Value, after: Value| (field.to_string(), before, after, false);
        assert_eq!(
            said,
            [
                // Each set with its value before unread, even where the
                // value after is what an absent one would be.
                vec![
                    unread("jog", json!({"miles": null})),
                    unread("tombstoned", json!(true)),
                    unread("alias", Value::Null),
                ],
                // Known from the version before on.
                vec![
                    known("jog.miles", Value::Null, json!(3)),
                    known("tombstoned", json!(true), json!(false)),
                ],
            ]
        );
    }

    #[test]
    fn walking_back_keeps_only_what_tells_a_part_still_needed() {
        let open = Open(
            [
                Part::Column("jog".into(), "who".into()),
                Part::Edge("next".into(), "e1".into()),
                Part::Whole("gear".into()),
            ]
            .into_iter()
            .collect(),
        );
        let seen = [("gear".to_string(), "ready".to_string())].into();
        let older = json!({
            "entity": {"eid": "e0"}, "alias": "tue",
            "jog": {"who": "Ada", "miles": 5},
            "gear": {"ready": false, "link": "https://runs.example"},
            "edges": [{"rel": "next", "to": "e1"}, {"rel": "next", "to": "e2"}]
        });
        assert_eq!(
            Value::Object(needed_of(&older, &open, &seen)),
            json!({
                "jog": {"who": "Ada"},
                "gear": {"link": "https://runs.example"},
                "edges": [{"rel": "next", "to": "e1"}]
            })
        );
        let mut open = open;
        open.close(&older);
        assert_eq!(
            open.0.into_iter().collect::<Vec<_>>(),
            [Part::Whole("gear".into())],
            "a component's every column is known only from its removal"
        );
    }
}
