//! Writing an apply, the same on every backend: the app's data version
//! checked against `expect`, each `$name` minted once, then each bundle
//! checked against the app's catalog and written — its entity found by eid
//! or alias (or minted), the `was` check, its alias, its components (every
//! value read under its column's type, refs resolved), its edges, its
//! tombstone, its history entry. Every decision and every sentence is here,
//! and every statement both backends take alike (written with `$n` marks);
//! a backend gives only its own statements ([`Writes`]), run in the
//! transaction the apply keeps all or none of. SQLite's statements answer
//! in place, so its apply is polled once on the writer's thread
//! ([`crate::query::at_once`]); PostgreSQL's are awaited.

use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

use serde_json::{Map, Value, json};

use crate::query::plan::Lookup;
use crate::schema::{AppSchema, Component};
use crate::txn::marks;
use crate::values::{Sql, from_json, render_time, type_sentence};
use crate::wire::{Bundle, Target};
use crate::{Actor, Applied, ColumnType, StoreError, Through};

/// An app's row as an apply finds it.
pub(crate) struct AppRow {
    pub id: i64,
    /// The app data version before this apply.
    pub version: i64,
    /// The last entity number the app gave.
    pub last_num: i64,
    /// Whether this apply made the app.
    pub created: bool,
}

/// One column a bundle sets: its name, its place among the component's
/// columns, and its value as the database keeps it.
pub(crate) struct Cell<'a> {
    pub column: &'a str,
    pub position: usize,
    pub value: Sql,
}

/// The statements of an apply, in a backend's SQL, each run in the apply's
/// transaction. The names a ref gives (`@handle`) are looked up as a
/// query's are ([`Lookup`]).
pub(crate) trait Writes: Lookup {
    /// The app's catalog as the backend keeps it for writing.
    type Catalog;

    /// The app's row, made (with the platform's components) if new; held
    /// against other writers until the transaction ends.
    async fn open(&self, app: &str) -> Result<AppRow, StoreError>;
    /// The app's catalog as this transaction sees it.
    async fn catalog(&self, app: &str, app_id: i64) -> Result<Self::Catalog, StoreError>;
    fn schema(catalog: &Self::Catalog) -> &AppSchema;
    /// Runs a statement that answers nothing (written with `$n` marks), in
    /// order with the others; on PostgreSQL sent and not waited for.
    async fn run(&self, sql: &str, params: Vec<Sql>) -> Result<(), StoreError>;
    /// Ends the apply: the app's row at its new version and last number
    /// ([`Closing::CLOSE`]) and the write's row of activity
    /// ([`Closing::activity`]). PostgreSQL sends them as one statement,
    /// with the notification that tells every server on the database that
    /// `app` is at `version` once the write commits (`postgres/wake.rs`);
    /// SQLite's watchers poll.
    async fn close(&self, closing: Closing<'_>) -> Result<(), StoreError> {
        static ACTIVITY: LazyLock<String> = LazyLock::new(|| Closing::activity(1));
        self.run(Closing::CLOSE, closing.close).await?;
        self.run(&ACTIVITY, closing.activity).await
    }
    /// The entity an eid or alias names, live or (`tombstoned`) not:
    /// (row id, eid, version).
    async fn find(
        &self,
        app_id: i64,
        target: &Target,
        tombstoned: bool,
    ) -> Result<Option<(i64, String, i64)>, StoreError>;
    /// Whether a person has this eid.
    async fn is_person(&self, eid: &str) -> Result<bool, StoreError>;
    /// Makes an entity at version 1 (numbered `num`); answers its row id.
    async fn mint(
        &self,
        app_id: i64,
        eid: &str,
        num: i64,
        at: i64,
        actor: &Actor,
    ) -> Result<i64, StoreError>;
    /// The row id of the entity (live or not) holding this alias.
    async fn alias_holder(&self, app_id: i64, alias: &str) -> Result<Option<i64>, StoreError>;
    /// Drops a tombstoned entity's full-text entry, where a tombstone
    /// leaves none.
    async fn drop_text(&self, id: i64) -> Result<(), StoreError>;
    /// Gives a revived entity its full-text entry again, where a tombstone
    /// left none.
    async fn restore_text(
        &self,
        catalog: &Self::Catalog,
        app_id: i64,
        id: i64,
    ) -> Result<(), StoreError>;
    /// Removes the entity's row of a component (`fresh`: the entity was
    /// minted by this bundle).
    async fn remove(
        &self,
        catalog: &Self::Catalog,
        app_id: i64,
        id: i64,
        component: &Component,
        fresh: bool,
    ) -> Result<(), StoreError>;
    /// Sets these columns of the entity's row of a component, keeping the
    /// others; a fresh entity has no row yet.
    async fn set(
        &self,
        catalog: &Self::Catalog,
        app_id: i64,
        id: i64,
        component: &Component,
        cells: Vec<Cell<'_>>,
        fresh: bool,
    ) -> Result<(), StoreError>;
}

/// The statements that set these columns of the entity's rows of a
/// component (each row made if missing), keeping the others: one for each
/// group a column is set in, and always one for the home group, whose row
/// says the entity wears the component. Each binds the group, the id, then
/// the values.
pub(crate) fn upserts(
    component: &Component,
    id: i64,
    cells: Vec<Cell<'_>>,
) -> Result<Vec<(String, Vec<Sql>)>, StoreError> {
    let mut by_group: Vec<Vec<Cell<'_>>> = component.groups.iter().map(|_| Vec::new()).collect();
    for cell in cells {
        let group = component
            .places
            .get(cell.position)
            .and_then(|p| by_group.get_mut(p.group))
            .ok_or_else(|| component.no_column(cell.column))?;
        group.push(cell);
    }
    let mut statements = Vec::with_capacity(by_group.len());
    for (g, cells) in by_group.into_iter().enumerate() {
        if g > 0 && cells.is_empty() {
            continue;
        }
        let group = &component.groups[g];
        let table = group.table();
        let sql = if cells.is_empty() {
            format!("INSERT INTO {table}(grp, id) VALUES($1, $2) ON CONFLICT DO NOTHING")
        } else {
            let slots: Vec<&str> = cells
                .iter()
                .map(|c| component.places[c.position].slot.as_str())
                .collect();
            let marks: Vec<String> = (3..=cells.len() + 2).map(|i| format!("${i}")).collect();
            let sets: Vec<String> = slots
                .iter()
                .map(|s| format!("{s} = excluded.{s}"))
                .collect();
            format!(
                "INSERT INTO {table}(grp, id, {}) VALUES($1, $2, {}) ON CONFLICT(grp, id) DO UPDATE SET {}",
                slots.join(", "),
                marks.join(", "),
                sets.join(", ")
            )
        };
        let params = [Sql::Integer(group.id), Sql::Integer(id)]
            .into_iter()
            .chain(cells.into_iter().map(|c| c.value));
        statements.push((sql, params.collect()));
    }
    Ok(statements)
}

/// The statements that remove the entity's rows of a component, in each
/// of its groups; each binds the group, then the id.
pub(crate) fn removals(component: &Component, id: i64) -> Vec<(String, Vec<Sql>)> {
    component
        .groups
        .iter()
        .map(|group| {
            (
                format!("DELETE FROM {} WHERE grp = $1 AND id = $2", group.table()),
                vec![Sql::Integer(group.id), Sql::Integer(id)],
            )
        })
        .collect()
}

/// The statement that finds the entity an eid or alias names, live or
/// (`tombstoned`) not (its row id, eid and version; `$1` the app, `$2` the
/// eid or alias), none for a `$name`. A tombstoned entity has no alias.
pub(crate) fn find_sql(target: &Target, tombstoned: bool) -> Option<&'static str> {
    match (target, tombstoned) {
        (Target::Eid(_), false) => Some(
            "SELECT id, eid, version FROM ec_entities WHERE app = $1 AND eid = $2 AND tombstoned = 0",
        ),
        (Target::Eid(_), true) => Some(
            "SELECT id, eid, version FROM ec_entities WHERE app = $1 AND eid = $2 AND tombstoned = 1",
        ),
        (Target::Alias(_), false) => Some(
            "SELECT id, eid, version FROM ec_entities WHERE app = $1 AND alias = $2 AND tombstoned = 0",
        ),
        (Target::Alias(_), true) | (Target::Mint(_), _) => None,
    }
}

/// `no entity <eid or alias> in <app>`
pub(crate) fn no_entity(given: &str, app: &str) -> StoreError {
    StoreError::NotFound(format!("no entity {given} in {app}"))
}

/// An entity this apply has written: its row id and version before the apply.
#[derive(Clone, Copy)]
struct Touched {
    id: i64,
    /// Version before this apply (0 for one minted by it).
    before: i64,
}

/// The state of one apply while its bundles are written.
struct Writing<'a, W: Writes> {
    w: &'a W,
    catalog: W::Catalog,
    app_id: i64,
    actor: &'a Actor,
    now: i64,
    /// `$name` → the eid it mints.
    minted: HashMap<String, String>,
    /// eid → what this apply did to it.
    touched: HashMap<String, Touched>,
    last_num: i64,
    /// The app data version this apply will commit as.
    app_version: i64,
    /// The bytes of history its bundles kept so far
    /// ([`crate::wire::MAX_WRITE_BYTES`] at most).
    kept: usize,
}

/// Writes an apply's bundles (read by [`crate::wire::read`]) through `w`,
/// in the transaction the caller keeps all of or none. Answers also whether
/// the app was created by it.
pub(crate) async fn apply<W: Writes>(
    w: &W,
    app: &str,
    actor: &Actor,
    bundles: &[Bundle],
    expect: Option<u64>,
) -> Result<(Applied, bool), StoreError> {
    crate::wire::check_values(bundles)?;
    let row = w.open(app).await?;
    let version = row.version;
    if let Some(n) = expect
        && n != version as u64
    {
        return Err(StoreError::Conflict(format!(
            "{app} is at version {version}, you expected {n}"
        )));
    }
    let mut minted = HashMap::new();
    let mut aliases = BTreeMap::new();
    for b in bundles {
        if let Target::Mint(name) = &b.target
            && !minted.contains_key(name)
        {
            let eid = crate::names::new_eid();
            minted.insert(name.clone(), eid.clone());
            aliases.insert(name.clone(), eid);
        }
    }
    let mut writing = Writing {
        w,
        catalog: w.catalog(app, row.id).await?,
        app_id: row.id,
        actor,
        now: jiff::Timestamp::now().as_microsecond(),
        minted,
        touched: HashMap::new(),
        last_num: row.last_num,
        app_version: version + 1,
        kept: 0,
    };
    let mut entities: Vec<String> = Vec::new();
    for (step, bundle) in bundles.iter().enumerate() {
        let eid = writing.write_bundle(bundle, step as i64).await?;
        if !entities.contains(&eid) {
            entities.push(eid);
        }
    }
    let version = version + 1;
    let close = vec![row.id.into(), version.into(), writing.last_num.into()];
    let activity = activity_row(app, version, writing.now, actor, &entities);
    w.close(Closing {
        app,
        version,
        close,
        activity,
    })
    .await?;
    Ok((
        Applied {
            entities,
            aliases,
            version: version as u64,
        },
        row.created,
    ))
}

/// The end of an apply ([`Writes::close`]): the values of its two
/// statements, and the app and version they make it.
pub(crate) struct Closing<'a> {
    pub app: &'a str,
    pub version: i64,
    /// [`Closing::CLOSE`]'s values.
    pub close: Vec<Sql>,
    /// The activity row's values ([`Closing::activity`]).
    pub activity: Vec<Sql>,
}

impl Closing<'_> {
    /// The app's row (`$1`) at its new version (`$2`) and last entity
    /// number (`$3`).
    pub(crate) const CLOSE: &'static str =
        "UPDATE ec_apps SET version = $2, last_num = $3 WHERE id = $1";
    /// The write as one row of activity (`ec_writes`), but for its ten
    /// values' marks ([`Closing::activity`]).
    pub(crate) const ACTIVITY_INTO: &'static str =
        "INSERT INTO ec_writes(space, app, version, at, by, via, door, command, client, entities)";

    /// [`Closing::ACTIVITY_INTO`] with its values from `$from` on.
    pub(crate) fn activity(from: usize) -> String {
        format!("{} VALUES({})", Self::ACTIVITY_INTO, marks(from, 10))
    }
}

/// The values of the write's row of activity ([`Closing::activity`]): the
/// app and the version it committed as, when, who and via whom, through
/// which door, command and client, and the entities it wrote.
fn activity_row(app: &str, version: i64, at: i64, actor: &Actor, entities: &[String]) -> Vec<Sql> {
    let space = app.split_once('/').map_or(app, |(space, _)| space);
    let through = actor.through.clone().unwrap_or_else(Through::store);
    vec![
        space.into(),
        app.into(),
        version.into(),
        at.into(),
        actor.person.as_str().into(),
        actor.via.clone().into(),
        through.door.into(),
        through.command.into(),
        through.client.into(),
        json!(entities).to_string().into(),
    ]
}

impl<W: Writes> Writing<'_, W> {
    fn schema(&self) -> &AppSchema {
        W::schema(&self.catalog)
    }

    fn no_entity(&self, given: &str) -> StoreError {
        no_entity(given, &self.schema().name)
    }

    async fn find(&self, target: &Target) -> Result<Option<(i64, String, i64)>, StoreError> {
        self.w.find(self.app_id, target, false).await
    }

    /// The eid an edge's `to` or a ref names, checking it is there.
    async fn resolve(&self, target: &Target) -> Result<String, StoreError> {
        match target {
            Target::Mint(name) => self.minted.get(name).cloned().ok_or_else(|| {
                StoreError::refused(format!(
                    r#"{name} names no entity in this apply — give it a bundle with {{"entity": {{"eid": "{name}"}}}}"#
                ))
            }),
            _ => Ok(self
                .find(target)
                .await?
                .ok_or_else(|| self.no_entity(target.given()))?
                .1),
        }
    }

    /// A ref column's value: a `$name`, an eid or alias of this app, a person's eid, or `@handle`.
    async fn resolve_ref(
        &self,
        component: &str,
        column: &str,
        value: &Value,
    ) -> Result<Sql, StoreError> {
        let s = match value {
            Value::Null => return Ok(Sql::Null),
            Value::String(s) => s,
            _ => {
                return Err(StoreError::refused(type_sentence(
                    component,
                    column,
                    ColumnType::Ref,
                )));
            }
        };
        if let Some(handle) = s.strip_prefix('@') {
            return match self.w.person_by_handle(handle).await? {
                Some(eid) => Ok(Sql::Text(eid)),
                None => Err(StoreError::NotFound(format!("no person @{handle}"))),
            };
        }
        let target = Target::read(s)
            .map_err(|_| StoreError::refused(type_sentence(component, column, ColumnType::Ref)))?;
        if let Target::Eid(eid) = &target
            && (self.touched.contains_key(eid) || self.w.is_person(eid).await?)
        {
            return Ok(Sql::Text(eid.clone()));
        }
        Ok(Sql::Text(self.resolve(&target).await?))
    }

    /// Why a bundle's entity is not there to write, live (or, reviving,
    /// tombstoned): a writer who read it (`was`) and finds it tombstoned
    /// (or revived) since conflicts, as for any change since; else there is
    /// no such entity.
    async fn not_as_read(&self, target: &Target, b: &Bundle) -> Result<StoreError, StoreError> {
        if let (Some(was), Target::Eid(_)) = (b.was, target)
            && let Some((_, _, version)) = self.w.find(self.app_id, target, !b.revive).await?
        {
            let now = if b.revive { "revived" } else { "tombstoned" };
            return Ok(StoreError::Conflict(format!(
                "{} changed since you read it — {now} (version {version}, you had {was})",
                target.given()
            )));
        }
        Ok(self.no_entity(target.given()))
    }

    /// Marks the entity written by this apply: +1 version and `updated` the first time.
    async fn touch(&mut self, eid: &str, id: i64, version: i64) -> Result<(), StoreError> {
        if self.touched.contains_key(eid) {
            return Ok(());
        }
        let touch = "UPDATE ec_entities SET version = version + 1, updated_at = $2, updated_by = $3, updated_via = $4 WHERE id = $1";
        let by = self.actor.person.as_str().into();
        let via = self.actor.via.clone().into();
        self.w
            .run(touch, vec![id.into(), self.now.into(), by, via])
            .await?;
        self.touched.insert(
            eid.to_string(),
            Touched {
                id,
                before: version,
            },
        );
        Ok(())
    }

    async fn mint(&mut self, eid: &str) -> Result<i64, StoreError> {
        self.last_num += 1;
        let id = self
            .w
            .mint(self.app_id, eid, self.last_num, self.now, self.actor)
            .await?;
        self.touched
            .insert(eid.to_string(), Touched { id, before: 0 });
        Ok(id)
    }

    /// Writes one bundle (the `step`th of its apply); answers the eid it wrote.
    async fn write_bundle(&mut self, b: &Bundle, step: i64) -> Result<String, StoreError> {
        let mut fresh = false;
        let (id, eid) = match &b.target {
            Target::Mint(name) => {
                if b.was.is_some() {
                    return Err(StoreError::refused(format!(
                        "{name} is new — was is for an entity you read"
                    )));
                }
                let eid = self.minted.get(name).cloned().unwrap_or_default();
                match self.touched.get(&eid) {
                    Some(t) => (t.id, eid),
                    None => {
                        fresh = true;
                        (self.mint(&eid).await?, eid)
                    }
                }
            }
            target => {
                let Some((id, eid, version)) = self.w.find(self.app_id, target, b.revive).await?
                else {
                    return Err(self.not_as_read(target, b).await?);
                };
                let before = self.touched.get(&eid).map(|t| t.before).unwrap_or(version);
                if let Some(was) = b.was
                    && was as i64 != before
                {
                    return Err(StoreError::Conflict(format!(
                        "{} changed since you read it (version {before}, you had {was})",
                        target.given()
                    )));
                }
                self.touch(&eid, id, version).await?;
                (id, eid)
            }
        };
        let mut change = Map::new();
        change.insert("entity".into(), json!({ "eid": eid }));
        if b.revive {
            let sql = "UPDATE ec_entities SET tombstoned = 0 WHERE id = $1";
            self.w.run(sql, vec![id.into()]).await?;
            self.w.restore_text(&self.catalog, self.app_id, id).await?;
            // `tombstone: false` in its history: no component can be named
            // `tombstone` (the wire reads that key as the tombstone).
            change.insert("tombstone".into(), json!(false));
        }
        if let Some(alias) = &b.alias {
            self.set_alias(id, alias.as_deref()).await?;
            change.insert("alias".into(), json!(alias));
        }
        for (component, columns) in &b.components {
            let written = self
                .write_component(id, component, columns.as_deref(), fresh)
                .await?;
            change.insert(component.clone(), written);
        }
        if !b.edges.is_empty() {
            let mut edges = Vec::new();
            for e in &b.edges {
                let to = self.resolve(&e.to).await?;
                let sql = if e.drop {
                    "DELETE FROM ec_edges WHERE src = $1 AND rel = $2 AND dst = $3"
                } else {
                    "INSERT INTO ec_edges(src, rel, dst) VALUES($1, $2, $3) ON CONFLICT DO NOTHING"
                };
                let edge = vec![id.into(), e.rel.as_str().into(), to.as_str().into()];
                self.w.run(sql, edge).await?;
                edges.push(if e.drop {
                    json!({ "rel": e.rel, "to": to, "drop": true })
                } else {
                    json!({ "rel": e.rel, "to": to })
                });
            }
            change.insert("edges".into(), Value::Array(edges));
        }
        if b.tombstone {
            let sql = "UPDATE ec_entities SET tombstoned = 1, alias = NULL WHERE id = $1";
            self.w.run(sql, vec![id.into()]).await?;
            self.w.drop_text(id).await?;
            change.insert("tombstone".into(), json!({}));
        }
        let version = match self.touched.get(&eid) {
            Some(t) => t.before + 1,
            None => 1,
        };
        let change = Value::Object(change).to_string();
        self.kept += change.len();
        crate::wire::check_write(self.kept)?;
        let entry = "INSERT INTO ec_history(entity, app_version, step, version, at, by, via, change) VALUES($1, $2, $3, $4, $5, $6, $7, $8)";
        let values = vec![
            id.into(),
            self.app_version.into(),
            step.into(),
            version.into(),
            self.now.into(),
            self.actor.person.as_str().into(),
            self.actor.via.clone().into(),
            change.into(),
        ];
        self.w.run(entry, values).await?;
        Ok(eid)
    }

    async fn set_alias(&self, id: i64, alias: Option<&str>) -> Result<(), StoreError> {
        if let Some(a) = alias {
            let holder = self.w.alias_holder(self.app_id, a).await?;
            if holder.is_some_and(|h| h != id) {
                return Err(StoreError::refused(format!(
                    "alias {a} is taken in {}",
                    self.schema().name
                )));
            }
        }
        let set = "UPDATE ec_entities SET alias = $2 WHERE id = $1";
        self.w.run(set, vec![id.into(), alias.into()]).await
    }

    /// Sets (merging column by column) or removes one component; answers what was written.
    async fn write_component(
        &self,
        id: i64,
        name: &str,
        columns: Option<&[(String, Value)]>,
        fresh: bool,
    ) -> Result<Value, StoreError> {
        let component = self.schema().component(name).ok_or_else(|| {
            StoreError::refused(format!(
                "{name} is not a component of {}",
                self.schema().name
            ))
        })?;
        let Some(columns) = columns else {
            self.w
                .remove(&self.catalog, self.app_id, id, component, fresh)
                .await?;
            return Ok(Value::Null);
        };
        let mut cells = Vec::with_capacity(columns.len());
        let mut written = Map::new();
        for (column, value) in columns {
            let (position, ty) = component
                .position(column)
                .ok_or_else(|| component.no_column(column))?;
            let sql = if ty == ColumnType::Ref {
                self.resolve_ref(name, column, value).await?
            } else {
                from_json(value, ty)
                    .ok_or_else(|| StoreError::refused(type_sentence(name, column, ty)))?
            };
            written.insert(
                column.clone(),
                match (&sql, ty) {
                    (Sql::Text(s), ColumnType::Ref) => Value::String(s.clone()),
                    (Sql::Integer(t), ColumnType::Time) => Value::String(render_time(*t)),
                    _ => value.clone(),
                },
            );
            cells.push(Cell {
                column,
                position,
                value: sql,
            });
        }
        self.w
            .set(&self.catalog, self.app_id, id, component, cells, fresh)
            .await?;
        Ok(Value::Object(written))
    }
}
