//! An app's versions, trash and purge, the generation, and the served
//! address, on SQLite (the shapes and what each means: `src/lifecycle.rs`).

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::Sqlite;
use super::people::person_at;
use super::platform::{apps, memberships};
use crate::StoreError;
use crate::lifecycle::{Change, Changes, Generation, Lifecycle, Purged, VersionRecord};
use crate::platform::{AppRecord, Membership};
use crate::records::now;
use crate::schema::AppSchema;

/// The columns and tables, appended to the store's migrations.
pub(crate) const MIGRATION: &str = r#"
    ALTER TABLE apps ADD COLUMN trashed_at TEXT;
    ALTER TABLE apps ADD COLUMN trashed_by TEXT REFERENCES people(eid);
    ALTER TABLE deploys ADD COLUMN rolls_back_to INTEGER;
    CREATE TABLE app_changes(
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        app TEXT NOT NULL,
        change TEXT NOT NULL CHECK(change IN ('trash', 'restore', 'purge')),
        at TEXT NOT NULL,
        by TEXT NOT NULL REFERENCES people(eid)
    );
    CREATE TABLE served_at(
        id INTEGER PRIMARY KEY CHECK(id = 1),
        public_url TEXT NOT NULL,
        at TEXT NOT NULL
    );
"#;

fn generation(conn: &Connection) -> Result<Generation, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT (SELECT COALESCE(MAX(id), 0) FROM deploys),
                (SELECT COALESCE(MAX(id), 0) FROM app_changes)",
    )?;
    Ok(stmt.query_row([], |r| {
        Ok(Generation {
            deploy: r.get(0)?,
            change: r.get(1)?,
        })
    })?)
}

fn changes_since(conn: &Connection, after: Generation) -> Result<Changes, StoreError> {
    let mut now = after;
    let mut apps = Vec::new();
    let mut deploys = conn.prepare_cached(
        "SELECT d.id, s.slug || '/' || a.slug FROM deploys d
         JOIN apps a ON a.id = d.app JOIN spaces s ON s.id = a.space
         WHERE d.id > ?1 ORDER BY d.id",
    )?;
    let mut rows = deploys.query([after.deploy])?;
    while let Some(r) = rows.next()? {
        now.deploy = r.get(0)?;
        apps.push(r.get(1)?);
    }
    let mut changes =
        conn.prepare_cached("SELECT id, app FROM app_changes WHERE id > ?1 ORDER BY id")?;
    let mut rows = changes.query([after.change])?;
    while let Some(r) = rows.next()? {
        now.change = r.get(0)?;
        apps.push(r.get(1)?);
    }
    let members = conn
        .prepare_cached("SELECT COUNT(*) FROM members")?
        .query_row([], |r| r.get(0))?;
    Ok(Changes { now, apps, members })
}

fn app_versions(
    conn: &Connection,
    space: &str,
    slug: &str,
) -> Result<Vec<VersionRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT d.version, d.id, d.at, p.eid, p.handle, p.name, d.rolls_back_to
         FROM deploys d JOIN apps a ON a.id = d.app JOIN spaces s ON s.id = a.space
         JOIN people p ON p.eid = d.by
         WHERE s.slug = ?1 AND a.slug = ?2 ORDER BY d.version",
    )?;
    let rows = stmt.query_map([space, slug], |r| {
        Ok(VersionRecord {
            version: r.get(0)?,
            deploy: r.get(1)?,
            at: r.get(2)?,
            by: person_at(r, 3)?,
            rolls_back_to: r.get(6)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The app's id, whether it is in the trash, and its space's id.
fn app_row(
    conn: &Connection,
    space: &str,
    slug: &str,
) -> Result<Option<(i64, bool, i64)>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT a.id, a.trashed_at IS NOT NULL, s.id FROM apps a JOIN spaces s ON s.id = a.space
         WHERE s.slug = ?1 AND a.slug = ?2",
    )?;
    Ok(stmt
        .query_row([space, slug], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?)
}

/// Records that `change` happened to the app `space/slug`, by `by`: the
/// row that moves the generation.
fn record_change(
    txn: &Transaction<'_>,
    app: &str,
    change: Change,
    by: &str,
) -> Result<(), StoreError> {
    txn.execute(
        "INSERT INTO app_changes(app, change, at, by) VALUES(?1, ?2, ?3, ?4)",
        params![app, change.as_str(), now(), by],
    )?;
    Ok(())
}

/// Marks the app trashed (`trash`) or not (`!trash`); false when it was so
/// already, or is no app.
fn set_trashed(
    txn: &Transaction<'_>,
    space: &str,
    slug: &str,
    by: &str,
    trash: bool,
) -> Result<bool, StoreError> {
    let Some((app, trashed, _)) = app_row(txn, space, slug)? else {
        return Ok(false);
    };
    if trashed == trash {
        return Ok(false);
    }
    let (at, who, change) = if trash {
        (Some(now()), Some(by), Change::Trash)
    } else {
        (None, None, Change::Restore)
    };
    txn.execute(
        "UPDATE apps SET trashed_at = ?2, trashed_by = ?3 WHERE id = ?1",
        params![app, at, who],
    )?;
    record_change(txn, &format!("{space}/{slug}"), change, by)?;
    Ok(true)
}

/// Deletes a trashed app whole; `None` when it is not in the trash.
fn purge(
    txn: &Transaction<'_>,
    space: &str,
    slug: &str,
    by: &str,
) -> Result<Option<Purged>, StoreError> {
    let Some((app, true, space_id)) = app_row(txn, space, slug)? else {
        return Ok(None);
    };
    let name = format!("{space}/{slug}");
    let versions = txn.query_row("SELECT COUNT(*) FROM deploys WHERE app = ?1", [app], |r| {
        r.get(0)
    })?;
    txn.execute(
        "DELETE FROM deploy_files WHERE deploy IN (SELECT id FROM deploys WHERE app = ?1)",
        [app],
    )?;
    txn.execute("DELETE FROM deploys WHERE app = ?1", [app])?;
    txn.execute(
        "DELETE FROM drafts WHERE space = ?1 AND app = ?2",
        params![space_id, slug],
    )?;
    txn.execute(
        "DELETE FROM view_keys WHERE space = ?1 AND slug = ?2",
        params![space, slug],
    )?;
    txn.execute("DELETE FROM apps WHERE id = ?1", [app])?;
    let entities = purge_data(txn, &name)?;
    record_change(txn, &name, Change::Purge, by)?;
    Ok(Some(Purged { versions, entities }))
}

/// Deletes an app's data — entities, edges, history, its catalog and every
/// table of its own — and answers how many entities it held.
fn purge_data(txn: &Transaction<'_>, name: &str) -> Result<i64, StoreError> {
    let id: Option<i64> = txn
        .query_row("SELECT id FROM ec_apps WHERE name = ?1", [name], |r| {
            r.get(0)
        })
        .optional()?;
    let Some(id) = id else { return Ok(0) };
    let components: Vec<String> = txn
        .prepare("SELECT name FROM ec_components WHERE app = ?1")?
        .query_map([id], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for component in components {
        // A component's name is a checked word: its table's name is safe.
        txn.execute_batch(&format!(
            "DROP TABLE IF EXISTS {}",
            AppSchema::table(id, &component)
        ))?;
    }
    txn.execute_batch(&format!("DROP TABLE IF EXISTS {}", AppSchema::fts(id)))?;
    let entities = txn.query_row(
        "SELECT COUNT(*) FROM ec_entities WHERE app = ?1",
        [id],
        |r| r.get(0),
    )?;
    txn.execute(
        "DELETE FROM ec_history WHERE entity IN (SELECT id FROM ec_entities WHERE app = ?1)",
        [id],
    )?;
    txn.execute(
        "DELETE FROM ec_edges WHERE src IN (SELECT id FROM ec_entities WHERE app = ?1)",
        [id],
    )?;
    txn.execute("DELETE FROM ec_entities WHERE app = ?1", [id])?;
    txn.execute("DELETE FROM ec_columns WHERE app = ?1", [id])?;
    txn.execute("DELETE FROM ec_components WHERE app = ?1", [id])?;
    txn.execute("DELETE FROM ec_apps WHERE id = ?1", [id])?;
    Ok(entities)
}

impl Lifecycle for Sqlite {
    async fn generation(&self) -> Result<Generation, StoreError> {
        self.read(generation).await
    }

    async fn memberships_and_generation(
        &self,
        person_eid: &str,
    ) -> Result<(Vec<Membership>, Generation), StoreError> {
        self.read(|conn| Ok((memberships(conn, person_eid)?, generation(conn)?)))
            .await
    }

    async fn changes_since(&self, after: Generation) -> Result<Changes, StoreError> {
        self.read(|conn| changes_since(conn, after)).await
    }

    async fn platform_apps(&self) -> Result<(Generation, Vec<AppRecord>), StoreError> {
        self.read(|conn| Ok((generation(conn)?, apps(conn)?))).await
    }

    async fn app_versions(
        &self,
        space: &str,
        slug: &str,
    ) -> Result<Vec<VersionRecord>, StoreError> {
        self.read(|conn| app_versions(conn, space, slug)).await
    }

    async fn trash_app(&self, space: &str, slug: &str, by: &str) -> Result<bool, StoreError> {
        let (space, slug, by) = (space.to_string(), slug.to_string(), by.to_string());
        self.write(move |txn| set_trashed(txn, &space, &slug, &by, true))
            .await
    }

    async fn restore_app(&self, space: &str, slug: &str, by: &str) -> Result<bool, StoreError> {
        let (space, slug, by) = (space.to_string(), slug.to_string(), by.to_string());
        self.write(move |txn| set_trashed(txn, &space, &slug, &by, false))
            .await
    }

    async fn purge_app(
        &self,
        space: &str,
        slug: &str,
        by: &str,
    ) -> Result<Option<Purged>, StoreError> {
        let name = format!("{space}/{slug}");
        let (space, slug, by) = (space.to_string(), slug.to_string(), by.to_string());
        let schemas = self.schemas.clone();
        self.write_then(
            move |txn| purge(txn, &space, &slug, &by),
            move |_| schemas.forget(&name),
        )
        .await
    }

    async fn record_public_url(&self, url: &str) -> Result<(), StoreError> {
        let url = url.to_string();
        self.write(move |txn| {
            txn.execute(
                "INSERT INTO served_at(id, public_url, at) VALUES(1, ?1, ?2)
                 ON CONFLICT(id) DO UPDATE SET public_url = excluded.public_url, at = excluded.at",
                params![url, now()],
            )?;
            Ok(())
        })
        .await
    }

    async fn recorded_public_url(&self) -> Result<Option<String>, StoreError> {
        self.read(|conn| {
            Ok(conn
                .query_row("SELECT public_url FROM served_at WHERE id = 1", [], |r| {
                    r.get(0)
                })
                .optional()?)
        })
        .await
    }
}
