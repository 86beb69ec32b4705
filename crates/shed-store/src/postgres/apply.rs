//! Writing an apply on PostgreSQL, with the meaning of SQLite's
//! (`sqlite/apply.rs`): the bundles checked against the app's catalog and
//! written in one transaction, all or nothing, each write appended to its
//! entity's history. The app's row is locked first ([`lock_app`]), so the
//! `was` checks, the entity versions and the app data version hold against
//! writers on every server sharing the database. Also an entity's history.

use std::collections::{BTreeMap, HashMap};

use deadpool_postgres::GenericClient;
use serde_json::{Map, Value, json};
use tokio_postgres::types::ToSql;

use super::schema::{load, lock_app};
use crate::names::is_eid;
use crate::schema::AppSchema;
use crate::values::{Sql, from_json, render_time, type_sentence};
use crate::wire::{Bundle, Target};
use crate::{Actor, Applied, ColumnType, HistoryEntry, StoreError};

/// An entity this apply has written: its row id and version before the apply.
#[derive(Clone, Copy)]
struct Touched {
    id: i64,
    before: i64,
}

/// The state of one apply while its bundles are written.
struct Writing<'a, C> {
    txn: &'a C,
    schema: AppSchema,
    app_id: i64,
    actor: &'a Actor,
    now: i64,
    minted: HashMap<String, String>,
    touched: HashMap<String, Touched>,
    last_num: i64,
    app_version: i64,
}

/// Writes an apply's bundles in `txn`; answers also whether it made the app.
pub(crate) async fn apply(
    txn: &impl GenericClient,
    app: &str,
    actor: &Actor,
    bundles: &[Bundle],
    expect: Option<u64>,
) -> Result<(Applied, bool), StoreError> {
    let (app_id, version, last_num, created) = lock_app(txn, app).await?;
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
        schema: load(txn, app).await?,
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
        let eid = w.write_bundle(bundle, step as i64).await?;
        if !entities.contains(&eid) {
            entities.push(eid);
        }
    }
    let version = version + 1;
    txn.execute(
        "UPDATE ec_apps SET version = $2, last_num = $3 WHERE id = $1",
        &[&app_id, &version, &w.last_num],
    )
    .await?;
    Ok((
        Applied {
            entities,
            aliases,
            version: version as u64,
        },
        created,
    ))
}

impl<C: GenericClient> Writing<'_, C> {
    fn no_entity(&self, given: &str) -> StoreError {
        StoreError::NotFound(format!("no entity {given} in {}", self.schema.name))
    }

    /// The live entity an eid or alias names: (row id, eid, version).
    async fn find(&self, target: &Target) -> Result<Option<(i64, String, i64)>, StoreError> {
        let sql = match target {
            Target::Eid(_) => {
                "SELECT id, eid, version FROM ec_entities WHERE app = $1 AND eid = $2 AND tombstoned = 0"
            }
            Target::Alias(_) => {
                "SELECT id, eid, version FROM ec_entities WHERE app = $1 AND alias = $2 AND tombstoned = 0"
            }
            Target::Mint(_) => return Ok(None),
        };
        let stmt = self.txn.prepare_cached(sql).await?;
        Ok(self
            .txn
            .query_opt(&stmt, &[&self.app_id, &target.given()])
            .await?
            .map(|r| (r.get(0), r.get(1), r.get(2))))
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

    async fn person_eid(&self, column: &str, value: &str) -> Result<Option<String>, StoreError> {
        let stmt = self
            .txn
            .prepare_cached(&format!("SELECT eid FROM people WHERE {column} = $1"))
            .await?;
        Ok(self
            .txn
            .query_opt(&stmt, &[&value])
            .await?
            .map(|r| r.get(0)))
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
            return match self.person_eid("handle", handle).await? {
                Some(eid) => Ok(Sql::Text(eid)),
                None => Err(StoreError::NotFound(format!("no person @{handle}"))),
            };
        }
        let target = Target::read(s)
            .map_err(|_| StoreError::refused(type_sentence(component, column, ColumnType::Ref)))?;
        if let Target::Eid(eid) = &target
            && (self.touched.contains_key(eid) || self.person_eid("eid", eid).await?.is_some())
        {
            return Ok(Sql::Text(eid.clone()));
        }
        Ok(Sql::Text(self.resolve(&target).await?))
    }

    /// Marks the entity written by this apply: +1 version and `updated` the first time.
    async fn touch(&mut self, eid: &str, id: i64, version: i64) -> Result<(), StoreError> {
        if self.touched.contains_key(eid) {
            return Ok(());
        }
        let stmt = self
            .txn
            .prepare_cached(
                "UPDATE ec_entities SET version = version + 1, updated_at = $2, updated_by = $3, updated_via = $4 WHERE id = $1",
            )
            .await?;
        self.txn
            .execute(
                &stmt,
                &[&id, &self.now, &self.actor.person, &self.actor.via],
            )
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
        let stmt = self
            .txn
            .prepare_cached(
                "INSERT INTO ec_entities(app, eid, num, version, created_at, created_by, created_via, updated_at, updated_by, updated_via)
                 VALUES($1, $2, $3, 1, $4, $5, $6, $4, $5, $6) RETURNING id",
            )
            .await?;
        let id: i64 = self
            .txn
            .query_one(
                &stmt,
                &[
                    &self.app_id,
                    &eid,
                    &self.last_num,
                    &self.now,
                    &self.actor.person,
                    &self.actor.via,
                ],
            )
            .await?
            .get(0);
        self.touched
            .insert(eid.to_string(), Touched { id, before: 0 });
        Ok(id)
    }

    /// Writes one bundle (the `step`th of its apply); answers the eid it wrote.
    async fn write_bundle(&mut self, b: &Bundle, step: i64) -> Result<String, StoreError> {
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
                    None => (self.mint(&eid).await?, eid),
                }
            }
            target => {
                let (id, eid, version) = self
                    .find(target)
                    .await?
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
                self.touch(&eid, id, version).await?;
                (id, eid)
            }
        };
        let mut change = Map::new();
        change.insert("entity".into(), json!({ "eid": eid }));
        if let Some(alias) = &b.alias {
            self.set_alias(id, alias.as_deref()).await?;
            change.insert("alias".into(), json!(alias));
        }
        for (component, columns) in &b.components {
            let written = self
                .write_component(id, component, columns.as_deref())
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
                let stmt = self.txn.prepare_cached(sql).await?;
                self.txn.execute(&stmt, &[&id, &e.rel, &to]).await?;
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
                .execute(
                    "UPDATE ec_entities SET tombstoned = 1, alias = NULL WHERE id = $1",
                    &[&id],
                )
                .await?;
            change.insert("tombstone".into(), json!({}));
        }
        let version = match self.touched.get(&eid) {
            Some(t) => t.before + 1,
            None => 1,
        };
        let stmt = self
            .txn
            .prepare_cached(
                "INSERT INTO ec_history(entity, app_version, step, version, at, by, via, change) VALUES($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .await?;
        self.txn
            .execute(
                &stmt,
                &[
                    &id,
                    &self.app_version,
                    &step,
                    &version,
                    &self.now,
                    &self.actor.person,
                    &self.actor.via,
                    &Value::Object(change).to_string(),
                ],
            )
            .await?;
        Ok(eid)
    }

    async fn set_alias(&self, id: i64, alias: Option<&str>) -> Result<(), StoreError> {
        if let Some(a) = alias {
            let holder: Option<i64> = self
                .txn
                .query_opt(
                    "SELECT id FROM ec_entities WHERE app = $1 AND alias = $2",
                    &[&self.app_id, &a],
                )
                .await?
                .map(|r| r.get(0));
            if holder.is_some_and(|h| h != id) {
                return Err(StoreError::refused(format!(
                    "alias {a} is taken in {}",
                    self.schema.name
                )));
            }
        }
        self.txn
            .execute(
                "UPDATE ec_entities SET alias = $2 WHERE id = $1",
                &[&id, &alias],
            )
            .await?;
        Ok(())
    }

    /// Sets (merging column by column) or removes one component; answers what was written.
    async fn write_component(
        &self,
        id: i64,
        name: &str,
        columns: Option<&[(String, Value)]>,
    ) -> Result<Value, StoreError> {
        let component = self.schema.component(name).ok_or_else(|| {
            StoreError::refused(format!("{name} is not a component of {}", self.schema.name))
        })?;
        let table = AppSchema::table(self.app_id, name);
        let Some(columns) = columns else {
            let stmt = self
                .txn
                .prepare_cached(&format!("DELETE FROM {table} WHERE id = $1"))
                .await?;
            self.txn.execute(&stmt, &[&id]).await?;
            return Ok(Value::Null);
        };
        let mut names: Vec<&str> = Vec::new();
        let mut values: Vec<Sql> = Vec::new();
        let mut written = Map::new();
        for (column, value) in columns {
            let ty = component
                .column(column)
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
            names.push(column);
            values.push(sql);
        }
        let sql = if names.is_empty() {
            format!("INSERT INTO {table}(id) VALUES($1) ON CONFLICT(id) DO NOTHING")
        } else {
            let cols: Vec<String> = names.iter().map(|c| format!("\"{c}\"")).collect();
            let marks: Vec<String> = (2..=names.len() + 1).map(|i| format!("${i}")).collect();
            let sets: Vec<String> = cols.iter().map(|c| format!("{c} = excluded.{c}")).collect();
            format!(
                "INSERT INTO {table}(id, {}) VALUES($1, {}) ON CONFLICT(id) DO UPDATE SET {}",
                cols.join(", "),
                marks.join(", "),
                sets.join(", ")
            )
        };
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&id];
        params.extend(values.iter().map(|v| v as &(dyn ToSql + Sync)));
        let stmt = self.txn.prepare_cached(&sql).await?;
        self.txn.execute(&stmt, &params).await?;
        Ok(Value::Object(written))
    }
}

/// Every write to one entity of an app, oldest first.
pub(crate) async fn history(
    client: &impl GenericClient,
    app: &str,
    name: &str,
) -> Result<Vec<HistoryEntry>, StoreError> {
    let column = if is_eid(name) { "eid" } else { "alias" };
    let id: i64 = client
        .query_opt(
            &format!(
                "SELECT e.id FROM ec_entities e JOIN ec_apps a ON a.id = e.app WHERE a.name = $1 AND e.{column} = $2"
            ),
            &[&app, &name],
        )
        .await?
        .ok_or_else(|| StoreError::NotFound(format!("no entity {name} in {app}")))?
        .get(0);
    let rows = client
        .query(
            "SELECT version, at, by, via, change FROM ec_history WHERE entity = $1 ORDER BY app_version, step",
            &[&id],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| HistoryEntry {
            version: r.get::<_, i64>(0) as u64,
            at: render_time(r.get(1)),
            by: r.get(2),
            via: r.get(3),
            change: serde_json::from_str(r.get(4)).unwrap_or(Value::Null),
        })
        .collect())
}
