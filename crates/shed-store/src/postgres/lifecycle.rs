//! An app's versions, trash and purge, the generation, and the served
//! address, on PostgreSQL (the shapes and what each means:
//! `src/lifecycle.rs`) — SQLite's statements (`sqlite/lifecycle.rs`) in
//! PostgreSQL's words, each write one transaction that first locks the
//! app's row, so a trash, a restore, a purge and a deploy of one app take
//! their turns across servers.

use deadpool_postgres::GenericClient;

use super::Postgres;
use super::records::{app_record, person_at};
use crate::StoreError;
use crate::lifecycle::{Change, Changes, Generation, Lifecycle, Purged, VersionRecord};
use crate::platform::{APP_COLUMNS, AppRecord, Membership};
use crate::records::now;
use crate::schema::AppSchema;

async fn generation(c: &impl GenericClient) -> Result<Generation, StoreError> {
    let stmt = c
        .prepare_cached(
            "SELECT (SELECT COALESCE(MAX(id), 0) FROM deploys)::BIGINT,
                    (SELECT COALESCE(MAX(id), 0) FROM app_changes)::BIGINT",
        )
        .await?;
    let r = c.query_one(&stmt, &[]).await?;
    Ok(Generation {
        deploy: r.get(0),
        change: r.get(1),
    })
}

async fn changes_since(c: &impl GenericClient, after: Generation) -> Result<Changes, StoreError> {
    let mut now = after;
    let mut apps = Vec::new();
    let deploys = c
        .prepare_cached(
            "SELECT d.id, s.slug || '/' || a.slug FROM deploys d
             JOIN apps a ON a.id = d.app JOIN spaces s ON s.id = a.space
             WHERE d.id > $1 ORDER BY d.id",
        )
        .await?;
    for r in c.query(&deploys, &[&after.deploy]).await? {
        now.deploy = r.get(0);
        apps.push(r.get(1));
    }
    let changes = c
        .prepare_cached("SELECT id, app FROM app_changes WHERE id > $1 ORDER BY id")
        .await?;
    for r in c.query(&changes, &[&after.change]).await? {
        now.change = r.get(0);
        apps.push(r.get(1));
    }
    let members = c
        .query_one("SELECT COUNT(*) FROM members", &[])
        .await?
        .get(0);
    Ok(Changes { now, apps, members })
}

/// The app's row, locked until the transaction ends: its id, whether it
/// is in the trash, and its space's id.
async fn lock_app_row(
    txn: &impl GenericClient,
    space: &str,
    slug: &str,
) -> Result<Option<(i64, bool, i64)>, StoreError> {
    Ok(txn
        .query_opt(
            "SELECT a.id, a.trashed_at IS NOT NULL, s.id FROM apps a JOIN spaces s ON s.id = a.space
             WHERE s.slug = $1 AND a.slug = $2 FOR UPDATE OF a",
            &[&space, &slug],
        )
        .await?
        .map(|r| (r.get(0), r.get(1), r.get(2))))
}

/// Records that `change` happened to the app `space/slug`, by `by`: the
/// row that moves the generation — the one place a trash, a restore or a
/// purge is announced, so whatever else should hear of it goes here. The
/// table is locked first (until the commit), so the rows' ids are taken in
/// the order their writes commit and a reader of "the changes after id n"
/// never misses one committed late.
async fn record_change(
    txn: &impl GenericClient,
    app: &str,
    change: Change,
    by: &str,
) -> Result<(), StoreError> {
    txn.batch_execute("LOCK TABLE app_changes IN SHARE ROW EXCLUSIVE MODE")
        .await?;
    txn.execute(
        "INSERT INTO app_changes(app, change, at, by) VALUES($1, $2, $3, $4)",
        &[&app, &change.as_str(), &now(), &by],
    )
    .await?;
    super::wake::announce(txn, super::wake::Change::Lifecycle).await
}

/// Marks the app trashed (`trash`) or not (`!trash`); false when it was so
/// already, or is no app.
async fn set_trashed(
    txn: &impl GenericClient,
    space: &str,
    slug: &str,
    by: &str,
    trash: bool,
) -> Result<bool, StoreError> {
    let Some((app, trashed, _)) = lock_app_row(txn, space, slug).await? else {
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
        "UPDATE apps SET trashed_at = $2, trashed_by = $3 WHERE id = $1",
        &[&app, &at, &who],
    )
    .await?;
    record_change(txn, &format!("{space}/{slug}"), change, by).await?;
    Ok(true)
}

/// Deletes a trashed app whole; `None` when it is not in the trash.
async fn purge(
    txn: &impl GenericClient,
    space: &str,
    slug: &str,
    by: &str,
) -> Result<Option<Purged>, StoreError> {
    let Some((app, true, space_id)) = lock_app_row(txn, space, slug).await? else {
        return Ok(None);
    };
    let name = format!("{space}/{slug}");
    let versions: i64 = txn
        .query_one("SELECT COUNT(*) FROM deploys WHERE app = $1", &[&app])
        .await?
        .get(0);
    txn.execute(
        "DELETE FROM deploy_files WHERE deploy IN (SELECT id FROM deploys WHERE app = $1)",
        &[&app],
    )
    .await?;
    txn.execute("DELETE FROM deploys WHERE app = $1", &[&app])
        .await?;
    txn.execute(
        "DELETE FROM drafts WHERE space = $1 AND app = $2",
        &[&space_id, &slug],
    )
    .await?;
    txn.execute(
        "DELETE FROM view_keys WHERE space = $1 AND slug = $2",
        &[&space, &slug],
    )
    .await?;
    txn.execute("DELETE FROM apps WHERE id = $1", &[&app])
        .await?;
    let entities = purge_data(txn, &name).await?;
    record_change(txn, &name, Change::Purge, by).await?;
    Ok(Some(Purged { versions, entities }))
}

/// Deletes an app's data — its tables (`ec_<id>_<component>`, the `doc`
/// table's full-text column and every index going with them), entities,
/// edges, history and catalog — and answers how many entities it held. The
/// catalog's row is locked first, as every write to the app locks it, so a
/// write of the app running on another server finishes before, or waits.
async fn purge_data(txn: &impl GenericClient, name: &str) -> Result<i64, StoreError> {
    let id: Option<i64> = txn
        .query_opt(
            "SELECT id FROM ec_apps WHERE name = $1 FOR UPDATE",
            &[&name],
        )
        .await?
        .map(|r| r.get(0));
    let Some(id) = id else { return Ok(0) };
    let components: Vec<String> = txn
        .query("SELECT name FROM ec_components WHERE app = $1", &[&id])
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect();
    for component in components {
        // A component's name is a checked word: its table's name is safe.
        txn.batch_execute(&format!(
            "DROP TABLE IF EXISTS {}",
            AppSchema::table(id, &component)
        ))
        .await?;
    }
    let entities: i64 = txn
        .query_one("SELECT COUNT(*) FROM ec_entities WHERE app = $1", &[&id])
        .await?
        .get(0);
    txn.execute(
        "DELETE FROM ec_history WHERE entity IN (SELECT id FROM ec_entities WHERE app = $1)",
        &[&id],
    )
    .await?;
    txn.execute(
        "DELETE FROM ec_edges WHERE src IN (SELECT id FROM ec_entities WHERE app = $1)",
        &[&id],
    )
    .await?;
    for table in ["ec_entities", "ec_columns", "ec_components"] {
        txn.execute(&format!("DELETE FROM {table} WHERE app = $1"), &[&id])
            .await?;
    }
    txn.execute("DELETE FROM ec_apps WHERE id = $1", &[&id])
        .await?;
    Ok(entities)
}

impl Lifecycle for Postgres {
    async fn generation(&self) -> Result<Generation, StoreError> {
        generation(&self.client().await?).await
    }

    /// One statement (one snapshot, one trip to the server, where a
    /// transaction around the two reads took four): read on every call a
    /// signed-in caller makes. The generation rides on each membership's
    /// row, or on a row of its own for a person in no space.
    async fn memberships_and_generation(
        &self,
        person_eid: &str,
    ) -> Result<(Vec<Membership>, Generation), StoreError> {
        let c = self.client().await?;
        let stmt = c
            .prepare_cached(
                "SELECT g.deploy, g.change, s.slug, m.role
                 FROM (SELECT (SELECT COALESCE(MAX(id), 0) FROM deploys)::BIGINT AS deploy,
                              (SELECT COALESCE(MAX(id), 0) FROM app_changes)::BIGINT AS change) g
                 LEFT JOIN (members m JOIN spaces s ON s.id = m.space) ON m.person = $1
                 ORDER BY s.slug",
            )
            .await?;
        let rows = c.query(&stmt, &[&person_eid]).await?;
        let generation = rows
            .first()
            .map_or_else(Generation::default, |r| Generation {
                deploy: r.get(0),
                change: r.get(1),
            });
        let memberships = rows
            .iter()
            .filter_map(|r| {
                Some(Membership {
                    space: r.get::<_, Option<String>>(2)?,
                    role: r.get(3),
                })
            })
            .collect();
        Ok((memberships, generation))
    }

    /// One snapshot (`REPEATABLE READ`): the apps, the generation and the
    /// count are of the same moment.
    async fn changes_since(&self, after: Generation) -> Result<Changes, StoreError> {
        let mut c = self.client().await?;
        let txn = c
            .build_transaction()
            .read_only(true)
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .start()
            .await?;
        let changes = changes_since(&txn, after).await?;
        txn.commit().await?;
        Ok(changes)
    }

    async fn platform_apps(&self) -> Result<(Generation, Vec<AppRecord>), StoreError> {
        let mut c = self.client().await?;
        let txn = c
            .build_transaction()
            .read_only(true)
            .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
            .start()
            .await?;
        let stmt = txn
            .prepare_cached(&format!("SELECT {APP_COLUMNS} ORDER BY s.slug, a.id"))
            .await?;
        let apps = txn
            .query(&stmt, &[])
            .await?
            .iter()
            .map(app_record)
            .collect();
        let answer = (generation(&txn).await?, apps);
        txn.commit().await?;
        Ok(answer)
    }

    async fn app_versions(
        &self,
        space: &str,
        slug: &str,
    ) -> Result<Vec<VersionRecord>, StoreError> {
        let c = self.client().await?;
        let stmt = c
            .prepare_cached(
                "SELECT d.version, d.id, d.at, p.eid, p.handle, p.name, d.rolls_back_to
                 FROM deploys d JOIN apps a ON a.id = d.app JOIN spaces s ON s.id = a.space
                 JOIN people p ON p.eid = d.by
                 WHERE s.slug = $1 AND a.slug = $2 ORDER BY d.version",
            )
            .await?;
        Ok(c.query(&stmt, &[&space, &slug])
            .await?
            .iter()
            .map(|r| VersionRecord {
                version: r.get(0),
                deploy: r.get(1),
                at: r.get(2),
                by: person_at(r, 3),
                rolls_back_to: r.get(6),
            })
            .collect())
    }

    async fn trash_app(&self, space: &str, slug: &str, by: &str) -> Result<bool, StoreError> {
        self.write(async |txn| set_trashed(txn, space, slug, by, true).await)
            .await
    }

    async fn restore_app(&self, space: &str, slug: &str, by: &str) -> Result<bool, StoreError> {
        self.write(async |txn| set_trashed(txn, space, slug, by, false).await)
            .await
    }

    async fn purge_app(
        &self,
        space: &str,
        slug: &str,
        by: &str,
    ) -> Result<Option<Purged>, StoreError> {
        let purged = self
            .write(async |txn| purge(txn, space, slug, by).await)
            .await;
        self.schemas.forget(&format!("{space}/{slug}"));
        purged
    }

    async fn record_public_url(&self, url: &str) -> Result<(), StoreError> {
        self.write(async |txn| {
            txn.execute(
                "INSERT INTO served_at(id, public_url, at) VALUES(1, $1, $2)
                 ON CONFLICT(id) DO UPDATE SET public_url = excluded.public_url, at = excluded.at",
                &[&url, &now()],
            )
            .await?;
            Ok(())
        })
        .await
    }

    async fn recorded_public_url(&self) -> Result<Option<String>, StoreError> {
        Ok(self
            .client()
            .await?
            .query_opt("SELECT public_url FROM served_at WHERE id = 1", &[])
            .await?
            .map(|r| r.get(0)))
    }
}
