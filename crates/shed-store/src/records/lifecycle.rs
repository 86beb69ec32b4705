//! An app's versions, trash and purge, the generation, and the served
//! address (the shapes and what each means: `src/lifecycle.rs`), written
//! once for both backends ([`Records`]). Each write first locks the app's
//! row ([`Txn::LOCK`]), so a trash, a restore, a purge and a deploy of one
//! app take their turns across servers; what reads several tables reads
//! them in one snapshot.

use super::{FromRow, ReadRows, Statement, now, person_at, platform};
use crate::StoreError;
use crate::lifecycle::{Change, Changes, Generation, PURGE_BATCH_ROWS, Purged, VersionRecord};
use crate::platform::{AppRecord, Membership};
use crate::schema::Shape;
use crate::txn::{Announced, Records, Row, Txn, args};

/// The generation's two ids, as one row's columns.
/// The columns [`memberships_and_generation_at`] reads, from `g` (a
/// [`GENERATION`] row), `s` (spaces) and `m` (members), as a join that
/// keeps the generation's row for a person in no space writes them.
pub(super) const MEMBERSHIPS_AND_GENERATION: &str = "g.deploy, g.change, s.slug, m.role";

/// A person's spaces and roles and the registry's generation, from the
/// rows of a join with [`MEMBERSHIPS_AND_GENERATION`]'s columns from
/// column `at` on: one row per membership, or one with no space.
pub(super) fn memberships_and_generation_at(
    rows: &[Row],
    at: usize,
) -> Result<(Vec<Membership>, Generation), StoreError> {
    let generation = match rows.first() {
        Some(r) => Generation {
            deploy: r.get(at)?,
            change: r.get(at + 1)?,
        },
        None => Generation::default(),
    };
    let mut memberships = Vec::new();
    for r in rows {
        if let Some(space) = r.get(at + 2)? {
            memberships.push(Membership {
                space,
                role: r.get(at + 3)?,
            });
        }
    }
    Ok((memberships, generation))
}

pub(super) const GENERATION: &str = "(SELECT COALESCE(MAX(id), 0) FROM deploys) AS deploy,
    (SELECT COALESCE(MAX(id), 0) FROM app_changes) AS change";

async fn generation(t: &impl Txn) -> Result<Generation, StoreError> {
    let (deploy, change) = t.one_as(&format!("SELECT {GENERATION}"), args![]).await?;
    Ok(Generation { deploy, change })
}

async fn changes_since(t: &impl Txn, after: Generation) -> Result<Changes, StoreError> {
    let mut now = after;
    let mut apps = Vec::new();
    let deploys = t
        .all(
            "SELECT d.id, s.slug || '/' || a.slug FROM deploys d
             JOIN apps a ON a.id = d.app JOIN spaces s ON s.id = a.space
             WHERE d.id > $1 ORDER BY d.id",
            args![after.deploy],
        )
        .await?;
    for r in deploys {
        now.deploy = r.get(0)?;
        apps.push(r.get(1)?);
    }
    let changes = t
        .all(
            "SELECT id, app FROM app_changes WHERE id > $1 ORDER BY id",
            args![after.change],
        )
        .await?;
    for r in changes {
        now.change = r.get(0)?;
        apps.push(r.get(1)?);
    }
    let members = t.one_as("SELECT COUNT(*) FROM members", args![]).await?;
    Ok(Changes { now, apps, members })
}

/// The app's row, locked until the transaction ends: its id, whether it
/// is in the trash, and its space's id.
async fn lock_app_row<T: Txn>(
    t: &T,
    space: &str,
    slug: &str,
) -> Result<Option<(i64, bool, i64)>, StoreError> {
    // The space's row is read in a subquery, so only the app's is locked.
    t.optional(
        &format!(
            "SELECT id, trashed_at IS NOT NULL, space FROM apps
             WHERE space = (SELECT id FROM spaces WHERE slug = $1) AND slug = $2{}",
            T::LOCK
        ),
        args![space, slug],
    )
    .await?
    .map(|r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
    .transpose()
}

/// Records that `change` happened to the app `space/slug`, by `by`: the
/// row that moves the generation — the one place a trash, a restore, a
/// purge or a change of the app's settings is announced, so whatever else should hear of it goes here. The
/// table is locked first (until the commit), so the rows' ids are taken in
/// the order their writes commit and a reader of "the changes after id n"
/// never misses one committed late.
pub(super) async fn record_change(
    t: &impl Txn,
    app: &str,
    change: Change,
    by: &str,
) -> Result<(), StoreError> {
    t.lock_table("app_changes").await?;
    t.execute(
        "INSERT INTO app_changes(app, change, at, by) VALUES($1, $2, $3, $4)",
        args![app, change.as_str(), now(), by],
    )
    .await?;
    t.announce(Announced::Lifecycle).await
}

/// Marks the app trashed (`trash`) or not (`!trash`); false when it was so
/// already, or is no app.
async fn set_trashed(
    t: &impl Txn,
    space: &str,
    slug: &str,
    by: &str,
    trash: bool,
) -> Result<bool, StoreError> {
    let Some((app, trashed, _)) = lock_app_row(t, space, slug).await? else {
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
    t.execute(
        "UPDATE apps SET trashed_at = $2, trashed_by = $3 WHERE id = $1",
        args![app, at, who],
    )
    .await?;
    record_change(t, &format!("{space}/{slug}"), change, by).await?;
    Ok(true)
}

/// Deletes a trashed app whole; `None` when it is not in the trash.
async fn purge(
    t: &impl Txn,
    space: &str,
    slug: &str,
    by: &str,
) -> Result<Option<Purged>, StoreError> {
    let Some((app, true, space_id)) = lock_app_row(t, space, slug).await? else {
        return Ok(None);
    };
    let name = format!("{space}/{slug}");
    let versions = t
        .one_as("SELECT COUNT(*) FROM deploys WHERE app = $1", args![app])
        .await?;
    t.execute(
        "DELETE FROM drafts WHERE space = $1 AND app = $2",
        args![space_id, slug],
    )
    .await?;
    t.execute(
        "DELETE FROM view_keys WHERE space = $1 AND slug = $2",
        args![space, slug],
    )
    .await?;
    for sql in [
        "DELETE FROM deploy_files WHERE deploy IN (SELECT id FROM deploys WHERE app = $1)",
        "DELETE FROM deploys WHERE app = $1",
        "DELETE FROM apps WHERE id = $1",
    ] {
        t.execute(sql, args![app]).await?;
    }
    let entities = detach_data(t, &name).await?;
    record_change(t, &name, Change::Purge, by).await?;
    Ok(Some(Purged { versions, entities }))
}

/// What a purge ends in the transaction that purges the app: its data's
/// catalog row (`ec_apps`) locked — as every write to the app locks it,
/// so a write of the app running on another server finishes before, or
/// waits — and renamed `purging <id>`, a name no app can have, so the
/// app's name is free at once; its activity, approvals and approval
/// setting deleted (kept by the app's name). Its rows are deleted after, in batches ([`purge_detached`]).
/// Answers how many entities it held.
async fn detach_data<T: Txn>(t: &T, name: &str) -> Result<i64, StoreError> {
    let Some(id) = t
        .optional_as::<i64>(
            &format!("SELECT id FROM ec_apps WHERE name = $1{}", T::LOCK),
            args![name],
        )
        .await?
    else {
        return Ok(0);
    };
    let entities = t
        .one_as("SELECT COUNT(*) FROM ec_entities WHERE app = $1", args![id])
        .await?;
    // Its approvals go with it — one waiting must never run against a new
    // app of the same name — and so does its owner's "writes by agents
    // need approval".
    for sql in [
        "DELETE FROM ec_writes WHERE app = $1",
        "DELETE FROM refusals WHERE app = $1",
        "DELETE FROM approvals WHERE app = $1",
        "DELETE FROM agent_writes_need_approval WHERE app = $1",
    ] {
        t.execute(sql, args![name]).await?;
    }
    let detached = format!("{DETACHED}{id}");
    t.execute(
        "UPDATE ec_apps SET name = $2 WHERE id = $1",
        args![id, detached],
    )
    .await?;
    Ok(entities)
}

/// What the name of a purged app's data begins with until its rows are
/// all deleted: a space, which no app name holds.
const DETACHED: &str = "purging ";

/// Deletes the rows of every purged app's data ([`detach_data`]), one
/// after another — a purge interrupted (the process stopped) is finished
/// by the next purge.
async fn finish_purges<B: Records>(b: &B) -> Result<(), StoreError> {
    let detached: Vec<i64> = b
        .read_records(async |t| {
            t.all(
                "SELECT id FROM ec_apps WHERE name LIKE $1",
                args![format!("{DETACHED}%")],
            )
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect()
        })
        .await?;
    for app in detached {
        purge_detached(b, app).await?;
    }
    Ok(())
}

/// Deletes a purged app's rows — in its groups' shape tables, the full
/// text, its entities' history and edges, its entities — each batch of at
/// most [`PURGE_BATCH_ROWS`] rows a transaction of its own, so a large
/// app's purge never holds up another app's writes; then its catalog.
async fn purge_detached<B: Records>(b: &B, app: i64) -> Result<(), StoreError> {
    let groups: Vec<(i64, String)> = b
        .read_records(async |t| {
            t.all("SELECT id, shape FROM ec_groups WHERE app = $1", args![app])
                .await?
                .iter()
                .map(|r| Ok((r.get(0)?, r.get(1)?)))
                .collect()
        })
        .await?;
    let mut steps: Vec<(Step, i64)> = Vec::new();
    for (group, shape) in groups {
        let table = Shape::parse(&shape)?.table();
        let sql = format!(
            "DELETE FROM {table} WHERE grp = $1 AND id IN (SELECT id FROM {table} WHERE grp = $1 LIMIT $2)"
        );
        steps.push((Step::Rows(sql), group));
    }
    steps.push((Step::Rows(HISTORY_BATCH.into()), app));
    steps.push((Step::Rows(EDGES_BATCH.into()), app));
    steps.push((Step::Entities, app));
    for (step, key) in steps {
        loop {
            let step = step.clone();
            let deleted = b
                .write_records(async move |t| match &step {
                    Step::Rows(sql) => t.execute(sql, args![key, PURGE_BATCH_ROWS]).await,
                    Step::Entities => entities_batch(t, key).await,
                })
                .await?;
            if deleted == 0 {
                break;
            }
        }
    }
    b.write_records(async move |t| {
        for sql in [
            "DELETE FROM ec_columns WHERE app = $1",
            "DELETE FROM ec_groups WHERE app = $1",
            "DELETE FROM ec_components WHERE app = $1",
            "DELETE FROM ec_apps WHERE id = $1",
        ] {
            t.execute(sql, args![app]).await?;
        }
        Ok(())
    })
    .await
}

/// A batch of an app's entities' history (`$1` the app, `$2` the rows).
const HISTORY_BATCH: &str = "DELETE FROM ec_history WHERE (entity, app_version, step) IN
    (SELECT h.entity, h.app_version, h.step FROM ec_history h
     JOIN ec_entities e ON e.id = h.entity WHERE e.app = $1 LIMIT $2)";

/// A batch of an app's entities' edges.
const EDGES_BATCH: &str = "DELETE FROM ec_edges WHERE (src, rel, dst) IN
    (SELECT g.src, g.rel, g.dst FROM ec_edges g
     JOIN ec_entities e ON e.id = g.src WHERE e.app = $1 LIMIT $2)";

/// One kind of batch of a purge: a statement (`$1` the key, `$2` the
/// rows), or the entities with their full text.
#[derive(Clone)]
enum Step {
    Rows(String),
    Entities,
}

/// A batch of app `app`'s entities, oldest first, with their full text
/// (SQLite's found by the entities' ids; PostgreSQL's by the app): how
/// many entities it deleted.
async fn entities_batch<T: Txn>(t: &T, app: i64) -> Result<u64, StoreError> {
    let words = if T::FTS_TABLE {
        "DELETE FROM ec_fts WHERE rowid IN (SELECT id FROM ec_entities WHERE app = $1 ORDER BY id LIMIT $2)"
    } else {
        "DELETE FROM ec_fts WHERE app = $1 AND id IN (SELECT id FROM ec_entities WHERE app = $1 ORDER BY id LIMIT $2)"
    };
    t.execute(words, args![app, PURGE_BATCH_ROWS]).await?;
    let entities = "DELETE FROM ec_entities WHERE id IN (SELECT id FROM ec_entities WHERE app = $1 ORDER BY id LIMIT $2)";
    t.execute(entities, args![app, PURGE_BATCH_ROWS]).await
}

impl FromRow for VersionRecord {
    fn from_row(r: Row) -> Result<VersionRecord, StoreError> {
        Ok(VersionRecord {
            version: r.get(0)?,
            deploy: r.get(1)?,
            at: r.get(2)?,
            by: person_at(&r, 3)?,
            rolls_back_to: r.get(6)?,
        })
    }
}

impl<B: Records> crate::lifecycle::Lifecycle for B {
    async fn generation(&self) -> Result<Generation, StoreError> {
        self.read_records(async |t| generation(t).await).await
    }

    /// One statement (one snapshot, one trip to the server): read on every
    /// call a signed-in caller makes. The generation rides on each
    /// membership's row, or on a row of its own for a person in no space.
    async fn memberships_and_generation(
        &self,
        person_eid: &str,
    ) -> Result<(Vec<Membership>, Generation), StoreError> {
        self.read_records(async |t| {
            let rows = t
                .all(
                    &format!(
                        "SELECT {MEMBERSHIPS_AND_GENERATION} FROM (SELECT {GENERATION}) g
                         LEFT JOIN (members m JOIN spaces s ON s.id = m.space) ON m.person = $1
                         ORDER BY s.slug{}",
                        <B::Txn<'_> as Txn>::BY_BYTES
                    ),
                    args![person_eid],
                )
                .await?;
            memberships_and_generation_at(&rows, 0)
        })
        .await
    }

    async fn changes_since(&self, after: Generation) -> Result<Changes, StoreError> {
        self.read_snapshot(async |t| changes_since(t, after).await)
            .await
    }

    async fn platform_apps(&self) -> Result<(Generation, Vec<AppRecord>), StoreError> {
        self.read_snapshot(async |t| Ok((generation(t).await?, platform::apps(t).await?)))
            .await
    }

    async fn app_versions(
        &self,
        space: &str,
        slug: &str,
    ) -> Result<Vec<VersionRecord>, StoreError> {
        self.read_all(
            "SELECT d.version, d.id, d.at, p.eid, p.handle, p.name, d.rolls_back_to
             FROM deploys d JOIN apps a ON a.id = d.app JOIN spaces s ON s.id = a.space
             JOIN people p ON p.eid = d.by
             WHERE s.slug = $1 AND a.slug = $2 ORDER BY d.version",
            args![space, slug],
        )
        .await
    }

    async fn trash_app(&self, space: &str, slug: &str, by: &str) -> Result<bool, StoreError> {
        let [space, slug, by] = [space, slug, by].map(str::to_string);
        self.write_records(async move |t| set_trashed(t, &space, &slug, &by, true).await)
            .await
    }

    async fn restore_app(&self, space: &str, slug: &str, by: &str) -> Result<bool, StoreError> {
        let [space, slug, by] = [space, slug, by].map(str::to_string);
        self.write_records(async move |t| set_trashed(t, &space, &slug, &by, false).await)
            .await
    }

    async fn purge_app(
        &self,
        space: &str,
        slug: &str,
        by: &str,
    ) -> Result<Option<Purged>, StoreError> {
        finish_purges(self).await?;
        let [space, slug, by] = [space, slug, by].map(str::to_string);
        let purged = self
            .write_records_forgetting(format!("{space}/{slug}"), async move |t| {
                purge(t, &space, &slug, &by).await
            })
            .await?;
        finish_purges(self).await?;
        Ok(purged)
    }

    async fn record_public_url(&self, url: &str) -> Result<(), StoreError> {
        super::write_statement(
            self,
            "INSERT INTO served_at(id, public_url, at) VALUES(1, $1, $2)
             ON CONFLICT(id) DO UPDATE SET public_url = excluded.public_url, at = excluded.at",
            args![url, now()],
        )
        .await?;
        Ok(())
    }

    async fn recorded_public_url(&self) -> Result<Option<String>, StoreError> {
        self.read_optional("SELECT public_url FROM served_at WHERE id = 1", args![])
            .await
    }
}
