//! Writing an apply: the bundles the wire reader gave, checked against the
//! app's catalog and written in the writer's open transaction; a refusal
//! anywhere rolls the whole transaction back (the engine then runs the
//! writes kept before it again), so a refused apply writes nothing. Also an
//! entity's history, which every write appends to.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::values::Sql;
use rusqlite::{Connection, OptionalExtension, Transaction};
use serde_json::{Map, Value, json};

use super::schema::{self, WriterCatalog, WriterSchemas};
use crate::names::is_eid;
use crate::schema::AppSchema;
use crate::values::{from_json, render_time, type_sentence};
use crate::wire::{Bundle, Target};
use crate::{Actor, Applied, ColumnType, HistoryEntry, StoreError};

/// An entity this apply has written: its row id and version before the apply.
#[derive(Clone, Copy)]
struct Touched {
    id: i64,
    /// Version before this apply (0 for one minted by it).
    before: i64,
}

/// The state of one apply while its bundles are written.
struct Writing<'a> {
    txn: &'a Transaction<'a>,
    catalog: Arc<WriterCatalog>,
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
}

/// Writes an apply's bundles (read by [`wire::read`]) in `txn`; the writer
/// keeps all of it or none. Answers also whether the app was created by it.
pub(crate) fn apply(
    txn: &Transaction<'_>,
    catalogs: &WriterSchemas,
    app: &str,
    actor: &Actor,
    bundles: &[Bundle],
    expect: Option<u64>,
) -> Result<(Applied, bool), StoreError> {
    let known: Option<(i64, i64, i64)> = txn
        .prepare_cached("SELECT id, version, last_num FROM ec_apps WHERE name = ?1")?
        .query_row([app], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    let (app_id, version, last_num, created) = match known {
        Some((id, version, last_num)) => (id, version, last_num, false),
        None => (schema::ensure_app(txn, app)?, 0, 0, true),
    };
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
    let mut w = Writing {
        txn,
        catalog: catalogs.get(txn, app)?,
        app_id,
        actor,
        now: jiff::Timestamp::now().as_microsecond(),
        minted,
        touched: HashMap::new(),
        last_num,
        app_version: version + 1,
    };
    let mut entities: Vec<String> = Vec::new();
    for (step, bundle) in bundles.iter().enumerate() {
        let eid = w.write_bundle(bundle, step as i64)?;
        if !entities.contains(&eid) {
            entities.push(eid);
        }
    }
    let version = version + 1;
    txn.prepare_cached("UPDATE ec_apps SET version = ?2, last_num = ?3 WHERE id = ?1")?
        .execute(rusqlite::params![app_id, version, w.last_num])?;
    Ok((
        Applied {
            entities,
            aliases,
            version: version as u64,
        },
        created,
    ))
}

impl Writing<'_> {
    fn app(&self) -> &str {
        &self.catalog.schema.name
    }

    fn no_entity(&self, given: &str) -> StoreError {
        StoreError::NotFound(format!("no entity {given} in {}", self.app()))
    }

    /// The live entity an eid or alias names: (row id, eid, version).
    fn find(&self, target: &Target) -> Result<Option<(i64, String, i64)>, StoreError> {
        let sql = match target {
            Target::Eid(_) => {
                "SELECT id, eid, version FROM ec_entities WHERE app = ?1 AND eid = ?2 AND tombstoned = 0"
            }
            Target::Alias(_) => {
                "SELECT id, eid, version FROM ec_entities WHERE app = ?1 AND alias = ?2 AND tombstoned = 0"
            }
            Target::Mint(_) => return Ok(None),
        };
        Ok(self
            .txn
            .prepare_cached(sql)?
            .query_row(rusqlite::params![self.app_id, target.given()], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .optional()?)
    }

    /// The eid an edge's `to` or a ref names, checking it is there.
    fn resolve(&self, target: &Target) -> Result<String, StoreError> {
        match target {
            Target::Mint(name) => self.minted.get(name).cloned().ok_or_else(|| {
                StoreError::refused(format!(
                    r#"{name} names no entity in this apply — give it a bundle with {{"entity": {{"eid": "{name}"}}}}"#
                ))
            }),
            _ => Ok(self.find(target)?.ok_or_else(|| self.no_entity(target.given()))?.1),
        }
    }

    /// A ref column's value: a `$name`, an eid or alias of this app, a person's eid, or `@handle`.
    fn resolve_ref(&self, component: &str, column: &str, value: &Value) -> Result<Sql, StoreError> {
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
            return match super::people::by_handle(self.txn, handle)? {
                Some(p) => Ok(Sql::Text(p.eid)),
                None => Err(StoreError::NotFound(format!("no person @{handle}"))),
            };
        }
        let target = Target::read(s)
            .map_err(|_| StoreError::refused(type_sentence(component, column, ColumnType::Ref)))?;
        if let Target::Eid(eid) = &target
            && (self.touched.contains_key(eid) || super::people::by_eid(self.txn, eid)?.is_some())
        {
            return Ok(Sql::Text(eid.clone()));
        }
        Ok(Sql::Text(self.resolve(&target)?))
    }

    /// Marks the entity written by this apply: +1 version and `updated` the first time.
    fn touch(&mut self, eid: &str, id: i64, version: i64) -> Result<(), StoreError> {
        if self.touched.contains_key(eid) {
            return Ok(());
        }
        self.txn
            .prepare_cached(
                "UPDATE ec_entities SET version = version + 1, updated_at = ?2, updated_by = ?3, updated_via = ?4 WHERE id = ?1",
            )?
            .execute(rusqlite::params![id, self.now, self.actor.person, self.actor.via])?;
        self.touched.insert(
            eid.to_string(),
            Touched {
                id,
                before: version,
            },
        );
        Ok(())
    }

    fn mint(&mut self, eid: &str) -> Result<i64, StoreError> {
        self.last_num += 1;
        self.txn
            .prepare_cached(
                "INSERT INTO ec_entities(app, eid, num, version, created_at, created_by, created_via, updated_at, updated_by, updated_via)
                 VALUES(?1, ?2, ?3, 1, ?4, ?5, ?6, ?4, ?5, ?6)",
            )?
            .execute(rusqlite::params![
                self.app_id,
                eid,
                self.last_num,
                self.now,
                self.actor.person,
                self.actor.via
            ])?;
        let id = self.txn.last_insert_rowid();
        self.touched
            .insert(eid.to_string(), Touched { id, before: 0 });
        Ok(id)
    }

    /// Writes one bundle (the `step`th of its apply); answers the eid it wrote.
    fn write_bundle(&mut self, b: &Bundle, step: i64) -> Result<String, StoreError> {
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
                        (self.mint(&eid)?, eid)
                    }
                }
            }
            target => {
                let (id, eid, version) = self
                    .find(target)?
                    .ok_or_else(|| self.no_entity(target.given()))?;
                let before = self.touched.get(&eid).map(|t| t.before).unwrap_or(version);
                if let Some(was) = b.was
                    && was as i64 != before
                {
                    return Err(StoreError::Conflict(format!(
                        "{} changed since you read it (version {before}, you had {was})",
                        target.given()
                    )));
                }
                self.touch(&eid, id, version)?;
                (id, eid)
            }
        };
        let mut change = Map::new();
        change.insert("entity".into(), json!({ "eid": eid }));
        if let Some(alias) = &b.alias {
            self.set_alias(id, alias.as_deref())?;
            change.insert("alias".into(), json!(alias));
        }
        for (component, columns) in &b.components {
            let written = self.write_component(id, component, columns.as_deref(), fresh)?;
            change.insert(component.clone(), written);
        }
        if !b.edges.is_empty() {
            let mut edges = Vec::new();
            for e in &b.edges {
                let to = self.resolve(&e.to)?;
                let sql = if e.drop {
                    "DELETE FROM ec_edges WHERE src = ?1 AND rel = ?2 AND dst = ?3"
                } else {
                    "INSERT OR IGNORE INTO ec_edges(src, rel, dst) VALUES(?1, ?2, ?3)"
                };
                self.txn
                    .prepare_cached(sql)?
                    .execute(rusqlite::params![id, e.rel, to])?;
                edges.push(if e.drop {
                    json!({ "rel": e.rel, "to": to, "drop": true })
                } else {
                    json!({ "rel": e.rel, "to": to })
                });
            }
            change.insert("edges".into(), Value::Array(edges));
        }
        if b.tombstone {
            self.txn
                .prepare_cached(
                    "UPDATE ec_entities SET tombstoned = 1, alias = NULL WHERE id = ?1",
                )?
                .execute([id])?;
            self.txn
                .prepare_cached(&format!(
                    "DELETE FROM {} WHERE rowid = ?1",
                    AppSchema::fts(self.app_id)
                ))?
                .execute([id])?;
            change.insert("tombstone".into(), json!({}));
        }
        let version = match self.touched.get(&eid) {
            Some(t) => t.before + 1,
            None => 1,
        };
        self.txn
            .prepare_cached(
                "INSERT INTO ec_history(entity, app_version, step, version, at, by, via, change) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(rusqlite::params![
                id,
                self.app_version,
                step,
                version,
                self.now,
                self.actor.person,
                self.actor.via,
                Value::Object(change).to_string()
            ])?;
        Ok(eid)
    }

    fn set_alias(&self, id: i64, alias: Option<&str>) -> Result<(), StoreError> {
        if let Some(a) = alias {
            let holder: Option<i64> = self
                .txn
                .prepare_cached("SELECT id FROM ec_entities WHERE app = ?1 AND alias = ?2")?
                .query_row(rusqlite::params![self.app_id, a], |r| r.get(0))
                .optional()?;
            if holder.is_some_and(|h| h != id) {
                return Err(StoreError::refused(format!(
                    "alias {a} is taken in {}",
                    self.app()
                )));
            }
        }
        self.txn
            .prepare_cached("UPDATE ec_entities SET alias = ?2 WHERE id = ?1")?
            .execute(rusqlite::params![id, alias])?;
        Ok(())
    }

    /// Sets (merging column by column) or removes one component; answers what was written.
    fn write_component(
        &self,
        id: i64,
        name: &str,
        columns: Option<&[(String, Value)]>,
        fresh: bool,
    ) -> Result<Value, StoreError> {
        let component = self.catalog.schema.component(name).ok_or_else(|| {
            StoreError::refused(format!("{name} is not a component of {}", self.app()))
        })?;
        let table = AppSchema::table(self.app_id, name);
        let Some(columns) = columns else {
            self.txn
                .prepare_cached(&format!("DELETE FROM {table} WHERE id = ?1"))?
                .execute([id])?;
            if name == "doc" {
                self.refresh_fts(id, fresh)?;
            }
            return Ok(Value::Null);
        };
        let mut params: Vec<Sql> = vec![Sql::Integer(id)];
        let mut names: Vec<&str> = Vec::new();
        // For a fresh row: every column of the component, in declared order.
        let mut row: Vec<Sql> = Vec::new();
        if fresh {
            row = vec![Sql::Null; component.columns.len() + 1];
            row[0] = Sql::Integer(id);
        }
        let mut written = Map::new();
        for (column, value) in columns {
            let (position, ty) = component
                .position(column)
                .ok_or_else(|| component.no_column(column))?;
            let sql = if ty == ColumnType::Ref {
                self.resolve_ref(name, column, value)?
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
            if fresh {
                row[position + 1] = sql;
            } else {
                names.push(column);
                params.push(sql);
            }
        }
        if fresh {
            // A fresh entity has no row yet: a plain INSERT of every column
            // (SQL written once per catalog), which unlike an upsert needs no
            // statement journal. A new doc's text is what this bundle says:
            // index it as given.
            if name == "doc" {
                let text = |column: &str| {
                    component
                        .position(column)
                        .and_then(|(p, _)| row.get(p + 1).cloned())
                        .unwrap_or(Sql::Null)
                };
                self.txn
                    .prepare_cached(&self.catalog.fts_insert)?
                    .execute(rusqlite::params![id, text("title"), text("body")])?;
            }
            let sql = self
                .catalog
                .fresh_row(name)
                .ok_or_else(|| StoreError::Internal(format!("no insert for component {name}")))?;
            self.txn
                .prepare_cached(sql)?
                .execute(rusqlite::params_from_iter(row))?;
            return Ok(Value::Object(written));
        }
        let sql = if names.is_empty() {
            format!("INSERT OR IGNORE INTO {table}(id) VALUES(?1)")
        } else {
            let cols: Vec<String> = names.iter().map(|c| format!("\"{c}\"")).collect();
            let marks: Vec<String> = (2..=names.len() + 1).map(|i| format!("?{i}")).collect();
            let sets: Vec<String> = cols.iter().map(|c| format!("{c} = excluded.{c}")).collect();
            format!(
                "INSERT INTO {table}(id, {}) VALUES(?1, {}) ON CONFLICT(id) DO UPDATE SET {}",
                cols.join(", "),
                marks.join(", "),
                sets.join(", ")
            )
        };
        self.txn
            .prepare_cached(&sql)?
            .execute(rusqlite::params_from_iter(params))?;
        if name == "doc" {
            self.refresh_fts(id, false)?;
        }
        Ok(Value::Object(written))
    }

    /// Makes the app's full-text table agree with the entity's doc
    /// (`fresh`: the entity was minted by this bundle and has no entry yet).
    /// Values are read first and bound, so no statement needs a statement
    /// journal (FTS5 flushes its pending terms at every statement savepoint).
    fn refresh_fts(&self, id: i64, fresh: bool) -> Result<(), StoreError> {
        let fts = AppSchema::fts(self.app_id);
        let doc = AppSchema::table(self.app_id, "doc");
        if !fresh {
            self.txn
                .prepare_cached(&format!("DELETE FROM {fts} WHERE rowid = ?1"))?
                .execute([id])?;
        }
        let text: Option<(Option<String>, Option<String>)> = self
            .txn
            .prepare_cached(&format!("SELECT title, body FROM {doc} WHERE id = ?1"))?
            .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        if let Some((title, body)) = text {
            self.txn
                .prepare_cached(&format!(
                    "INSERT INTO {fts}(rowid, title, body) VALUES(?1, ?2, ?3)"
                ))?
                .execute(rusqlite::params![id, title, body])?;
        }
        Ok(())
    }
}

/// Every write to one entity of an app, oldest first.
pub(crate) fn history(
    conn: &Connection,
    app: &str,
    name: &str,
) -> Result<Vec<HistoryEntry>, StoreError> {
    let not_found = || StoreError::NotFound(format!("no entity {name} in {app}"));
    let column = if is_eid(name) { "eid" } else { "alias" };
    let id: Option<i64> = conn
        .prepare_cached(&format!(
            "SELECT e.id FROM ec_entities e JOIN ec_apps a ON a.id = e.app WHERE a.name = ?1 AND e.{column} = ?2"
        ))?
        .query_row(rusqlite::params![app, name], |r| r.get(0))
        .optional()?;
    let id = id.ok_or_else(not_found)?;
    let mut stmt = conn.prepare_cached(
        "SELECT version, at, by, via, change FROM ec_history WHERE entity = ?1 ORDER BY app_version, step",
    )?;
    let rows = stmt.query_map([id], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, Option<String>>(3)?,
            r.get::<_, String>(4)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (version, at, by, via, change) = row?;
        out.push(HistoryEntry {
            version: version as u64,
            at: render_time(at),
            by,
            via,
            change: serde_json::from_str(&change).unwrap_or(Value::Null),
        });
    }
    Ok(out)
}
