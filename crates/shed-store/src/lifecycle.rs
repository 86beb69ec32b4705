//! An app's life after its first deploy, and where the platform is served —
//! what migration 10 made (its SQL is in `migrations.rs`: this module reads
//! the catalog to purge an app, and the catalog's module reaches the
//! migrations):
//!
//! - **Versions**: every deploy of an app, with who made it and when, and
//!   the version a roll back brought back (`deploys.rolls_back_to`); a deploy
//!   keeps its files, so any version can be deployed again.
//! - **Trash**: an app in the trash (`apps.trashed_at`, `trashed_by`; read as
//!   `platform::Trashed` on its `AppRecord`) keeps
//!   its deploys and data; restoring it clears the mark; purging it deletes
//!   its deploys, drafts, view keys and every row and table of its data, and
//!   frees its name. Each of the three is a row of `app_changes`, whose id
//!   only grows.
//! - **The generation**: the last deploy's id and the last app change's id,
//!   read on every call, so any process notices a deploy, a trash, a restore
//!   or a purge made by another process on the same database.
//! - **The served address**: the public URL the last `shed serve` or `shed
//!   up` served at (`served_at`), which the CLI's links use when it is not
//!   given one.
//!
//! Plain storage: who may do which is decided in shed-host.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::people::person_at;
use crate::platform::{AppRecord, Membership};
use crate::schema::AppSchema;
use crate::{Person, Store, StoreError};

/// Where the platform's apps stand: the last deploy, and the last trash,
/// restore or purge. Any of them makes it another generation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Generation {
    /// The id of the last deploy (0 before the first).
    pub deploy: i64,
    /// The id of the last app change (0 before the first).
    pub change: i64,
}

/// What changed after a generation: the apps deployed, trashed, restored or
/// purged (`space/slug`, deploys first, each in order), the generation
/// they bring, and how many memberships there are now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Changes {
    pub now: Generation,
    pub apps: Vec<String>,
    pub members: i64,
}

/// One deploy of an app, as its versions list it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionRecord {
    pub version: i64,
    /// The deploy's id, whose files [`Store::deploy_files`] reads.
    pub deploy: i64,
    /// RFC 3339.
    pub at: String,
    pub by: Person,
    /// The version whose files this deploy brought back, for a roll back.
    pub rolls_back_to: Option<i64>,
}

/// What a purge deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Purged {
    pub versions: i64,
    pub entities: i64,
}

fn now() -> String {
    jiff::Timestamp::now().to_string()
}

pub(crate) fn generation(conn: &Connection) -> Result<Generation, StoreError> {
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

fn record_change(
    txn: &Transaction<'_>,
    app: &str,
    change: &str,
    by: &str,
) -> Result<(), StoreError> {
    txn.execute(
        "INSERT INTO app_changes(app, change, at, by) VALUES(?1, ?2, ?3, ?4)",
        params![app, change, now(), by],
    )?;
    Ok(())
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
    let (at, who) = if trash {
        (Some(now()), Some(by))
    } else {
        (None, None)
    };
    txn.execute(
        "UPDATE apps SET trashed_at = ?2, trashed_by = ?3 WHERE id = ?1",
        params![app, at, who],
    )?;
    let change = if trash { "trash" } else { "restore" };
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
    record_change(txn, &name, "purge", by)?;
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

impl Store {
    /// The platform's generation now: it moves with every deploy, trash,
    /// restore and purge, by any process.
    pub async fn generation(&self) -> Result<Generation, StoreError> {
        self.read(generation).await
    }

    /// A person's memberships and the generation, read together: what a
    /// call needs to know who reaches what, for one trip to the database.
    pub async fn memberships_and_generation(
        &self,
        person_eid: &str,
    ) -> Result<(Vec<Membership>, Generation), StoreError> {
        self.read(|conn| {
            Ok((
                crate::platform::memberships(conn, person_eid)?,
                generation(conn)?,
            ))
        })
        .await
    }

    /// What changed after `after`: the apps deployed, trashed, restored or
    /// purged, and the count of memberships (a change of the count is a
    /// change of somebody's reach), in one read.
    pub async fn changes_since(&self, after: Generation) -> Result<Changes, StoreError> {
        self.read(|conn| changes_since(conn, after)).await
    }

    /// Every app, trashed ones too (by space slug, then in the order they
    /// were made), and the generation they stand for, read together.
    pub async fn platform_apps(&self) -> Result<(Generation, Vec<AppRecord>), StoreError> {
        self.read(|conn| Ok((generation(conn)?, crate::platform::apps(conn)?)))
            .await
    }

    /// Every deploy of an app, oldest first; none for an app never deployed.
    pub async fn app_versions(
        &self,
        space: &str,
        slug: &str,
    ) -> Result<Vec<VersionRecord>, StoreError> {
        self.read(|conn| app_versions(conn, space, slug)).await
    }

    /// Puts an app in the trash, as the person `by` (eid); false when it
    /// was there already or is no app.
    pub async fn trash_app(&self, space: &str, slug: &str, by: &str) -> Result<bool, StoreError> {
        let (space, slug, by) = (space.to_string(), slug.to_string(), by.to_string());
        self.write(move |txn| set_trashed(txn, &space, &slug, &by, true))
            .await
    }

    /// Takes an app out of the trash, as the person `by` (eid); false when
    /// it was not in it.
    pub async fn restore_app(&self, space: &str, slug: &str, by: &str) -> Result<bool, StoreError> {
        let (space, slug, by) = (space.to_string(), slug.to_string(), by.to_string());
        self.write(move |txn| set_trashed(txn, &space, &slug, &by, false))
            .await
    }

    /// Deletes an app in the trash — its deploys with their files, drafts,
    /// view keys, and all its data with its tables — in one write, as the
    /// person `by` (eid); its name is free after. `None` when the app is not
    /// in the trash (nothing is deleted).
    pub async fn purge_app(
        &self,
        space: &str,
        slug: &str,
        by: &str,
    ) -> Result<Option<Purged>, StoreError> {
        let (space, slug, by) = (space.to_string(), slug.to_string(), by.to_string());
        let name = format!("{space}/{slug}");
        let inner = self.inner.clone();
        self.write_then(
            move |txn| purge(txn, &space, &slug, &by),
            move |_| inner.schemas.forget(&name),
        )
        .await
    }

    /// Records the public URL a server serves at, for the CLI's links.
    pub async fn record_public_url(&self, url: &str) -> Result<(), StoreError> {
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

    /// The public URL the last server recorded, if one did.
    pub async fn recorded_public_url(&self) -> Result<Option<String>, StoreError> {
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
