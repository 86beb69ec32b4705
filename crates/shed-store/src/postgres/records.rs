//! The platform's own records on PostgreSQL: people, spaces and members,
//! apps and their deploys (files as `bytea` rows), drafts and listed tools
//! — the statements of SQLite's (`sqlite/platform.rs`, `people.rs`) in
//! PostgreSQL's words, each write one transaction. A deploy and a
//! membership's change are announced to every server as they commit
//! (`wake::announce`).

use std::collections::BTreeMap;

use deadpool_postgres::GenericClient;
use tokio_postgres::Row;

use super::Postgres;
use super::wake::{Change, announce};
use crate::platform::{
    APP_COLUMNS, AppRecord, Membership, NewDeploy, Trashed, deploy_vanished, no_space, space_taken,
};
use crate::records::{Platform, now};
use crate::revocable::MemberChange;
use crate::{Person, StoreError};

pub(super) async fn space_id(
    c: &impl GenericClient,
    slug: &str,
) -> Result<Option<i64>, StoreError> {
    let stmt = c
        .prepare_cached("SELECT id FROM spaces WHERE slug = $1")
        .await?;
    Ok(c.query_opt(&stmt, &[&slug]).await?.map(|r| r.get(0)))
}

/// The id of the space of this slug, its row locked until the transaction
/// ends: changes to its members wait on one another, so the check that it
/// keeps an owner holds until the change it allows is committed.
pub(super) async fn locked_space(
    c: &impl GenericClient,
    slug: &str,
) -> Result<Option<i64>, StoreError> {
    Ok(
        c.query_opt("SELECT id FROM spaces WHERE slug = $1 FOR UPDATE", &[&slug])
            .await?
            .map(|r| r.get(0)),
    )
}

/// Whether the person is the one owner of the space (by id).
pub(super) async fn only_owner(
    c: &impl GenericClient,
    space: i64,
    person: &str,
) -> Result<bool, StoreError> {
    let row = c
        .query_one(
            "SELECT count(*), count(*) FILTER (WHERE person = $2) FROM members
             WHERE space = $1 AND role = 'owner'",
            &[&space, &person],
        )
        .await?;
    Ok(row.get::<_, i64>(0) == 1 && row.get::<_, i64>(1) == 1)
}

/// An app, from a row of [`APP_COLUMNS`].
pub(super) fn app_record(r: &Row) -> AppRecord {
    let trashed_at: Option<String> = r.get(10);
    AppRecord {
        space: r.get(0),
        slug: r.get(1),
        title: r.get(2),
        access: r.get(3),
        version: r.get(4),
        deploy: r.get(5),
        deployed_at: r.get(6),
        deployed_by: person_at(r, 7),
        trashed: trashed_at.map(|at| Trashed {
            at,
            by: person_at(r, 11),
        }),
    }
}

async fn app_by_name(
    c: &impl GenericClient,
    space: &str,
    slug: &str,
) -> Result<Option<AppRecord>, StoreError> {
    let stmt = c
        .prepare_cached(&format!(
            "SELECT {APP_COLUMNS} WHERE s.slug = $1 AND a.slug = $2"
        ))
        .await?;
    Ok(c.query_opt(&stmt, &[&space, &slug])
        .await?
        .as_ref()
        .map(app_record))
}

async fn memberships(c: &impl GenericClient, person: &str) -> Result<Vec<Membership>, StoreError> {
    let stmt = c
        .prepare_cached(
            "SELECT s.slug, m.role FROM members m JOIN spaces s ON s.id = m.space
             WHERE m.person = $1 ORDER BY s.slug",
        )
        .await?;
    Ok(c.query(&stmt, &[&person])
        .await?
        .iter()
        .map(|r| Membership {
            space: r.get(0),
            role: r.get(1),
        })
        .collect())
}

/// The person whose eid, handle and name are a row's columns `first`,
/// `first + 1` and `first + 2`.
pub(super) fn person_at(r: &Row, first: usize) -> Person {
    Person {
        eid: r.get(first),
        handle: r.get(first + 1),
        name: r.get(first + 2),
    }
}

impl Platform for Postgres {
    async fn add_space(&self, slug: &str, owner_eid: &str) -> Result<(), StoreError> {
        self.write(async |txn| {
            let id: Option<i64> = txn
                .query_opt(
                    "INSERT INTO spaces(slug, created_at) VALUES($1, $2) ON CONFLICT(slug) DO NOTHING RETURNING id",
                    &[&slug, &now()],
                )
                .await?
                .map(|r| r.get(0));
            let Some(id) = id else {
                return Err(space_taken(slug));
            };
            txn.execute(
                "INSERT INTO members(space, person, role) VALUES($1, $2, 'owner')",
                &[&id, &owner_eid],
            )
            .await?;
            announce(txn, Change::Membership).await
        })
        .await
    }

    async fn set_member(
        &self,
        space: &str,
        person_eid: &str,
        role: &str,
    ) -> Result<MemberChange, StoreError> {
        self.write(async |txn| {
            let id = locked_space(txn, space)
                .await?
                .ok_or_else(|| no_space(space))?;
            if role != "owner" && only_owner(txn, id, person_eid).await? {
                return Ok(MemberChange::LastOwner);
            }
            txn.execute(
                "INSERT INTO members(space, person, role) VALUES($1, $2, $3)
                 ON CONFLICT(space, person) DO UPDATE SET role = excluded.role",
                &[&id, &person_eid, &role],
            )
            .await?;
            announce(txn, Change::Membership).await?;
            Ok(MemberChange::Done)
        })
        .await
    }

    async fn memberships(&self, person_eid: &str) -> Result<Vec<Membership>, StoreError> {
        memberships(&self.client().await?, person_eid).await
    }

    async fn space_exists(&self, slug: &str) -> Result<bool, StoreError> {
        Ok(space_id(&self.client().await?, slug).await?.is_some())
    }

    async fn platform_app(&self, space: &str, slug: &str) -> Result<Option<AppRecord>, StoreError> {
        app_by_name(&self.client().await?, space, slug).await
    }

    async fn deploy_files(&self, deploy: i64) -> Result<BTreeMap<String, Vec<u8>>, StoreError> {
        let c = self.client().await?;
        let stmt = c
            .prepare_cached("SELECT path, content FROM deploy_files WHERE deploy = $1")
            .await?;
        Ok(c.query(&stmt, &[&deploy])
            .await?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
    }

    async fn deploy_files_with_contents_of(
        &self,
        deploy: i64,
        contents_of: &[&str],
    ) -> Result<BTreeMap<String, Vec<u8>>, StoreError> {
        let c = self.client().await?;
        let stmt = c
            .prepare_cached(
                "SELECT path, CASE WHEN path = ANY($2) THEN content ELSE ''::bytea END
                 FROM deploy_files WHERE deploy = $1",
            )
            .await?;
        Ok(c.query(&stmt, &[&deploy, &contents_of])
            .await?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
    }

    async fn deploy_file(&self, deploy: i64, path: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let c = self.client().await?;
        let stmt = c
            .prepare_cached("SELECT content FROM deploy_files WHERE deploy = $1 AND path = $2")
            .await?;
        Ok(c.query_opt(&stmt, &[&deploy, &path])
            .await?
            .map(|r| r.get(0)))
    }

    async fn record_deploy(&self, new: NewDeploy) -> Result<AppRecord, StoreError> {
        self.write(async |txn| {
            let space = space_id(txn, &new.space)
                .await?
                .ok_or_else(|| no_space(&new.space))?;
            let at = now();
            txn.execute(
                "INSERT INTO apps(space, slug, title, access, version, deploy, created_at)
                 VALUES($1, $2, $3, $4, 0, 0, $5) ON CONFLICT(space, slug) DO NOTHING",
                &[
                    &space,
                    &new.slug,
                    &new.title.as_deref().unwrap_or(&new.slug),
                    &new.access.as_deref().unwrap_or("private"),
                    &at,
                ],
            )
            .await?;
            // The app's row, locked: deploys of one app take their versions in turn.
            let r = txn
                .query_one(
                    "SELECT id, version FROM apps WHERE space = $1 AND slug = $2 FOR UPDATE",
                    &[&space, &new.slug],
                )
                .await?;
            let (app, version): (i64, i64) = (r.get(0), r.get::<_, i64>(1) + 1);
            // Deploys' ids taken in the order they commit (the table locked
            // to the commit), as `app_changes`' are: a watcher reading "the
            // deploys after id n" never misses one that committed late.
            txn.batch_execute("LOCK TABLE deploys IN SHARE ROW EXCLUSIVE MODE")
                .await?;
            let deploy: i64 = txn
                .query_one(
                    "INSERT INTO deploys(app, version, at, by, rolls_back_to)
                     VALUES($1, $2, $3, $4, $5) RETURNING id",
                    &[&app, &version, &at, &new.by, &new.rolls_back_to],
                )
                .await?
                .get(0);
            let insert = txn
                .prepare("INSERT INTO deploy_files(deploy, path, content) VALUES($1, $2, $3)")
                .await?;
            for (path, content) in &new.files {
                txn.execute(&insert, &[&deploy, path, content]).await?;
            }
            txn.execute(
                "UPDATE apps SET version = $2, deploy = $3,
                     title = COALESCE($4, title), access = COALESCE($5, access)
                 WHERE id = $1",
                &[&app, &version, &deploy, &new.title, &new.access],
            )
            .await?;
            if new.clear_drafts {
                txn.execute(
                    "DELETE FROM drafts WHERE space = $1 AND app = $2",
                    &[&space, &new.slug],
                )
                .await?;
            }
            announce(txn, Change::Deploy).await?;
            let record = app_by_name(txn, &new.space, &new.slug).await?;
            record.ok_or_else(|| deploy_vanished(&new))
        })
        .await
    }

    async fn drafts(
        &self,
        space: &str,
        app: &str,
    ) -> Result<BTreeMap<String, Option<Vec<u8>>>, StoreError> {
        let c = self.client().await?;
        let Some(space) = space_id(&c, space).await? else {
            return Ok(BTreeMap::new());
        };
        Ok(c.query(
            "SELECT path, content FROM drafts WHERE space = $1 AND app = $2",
            &[&space, &app],
        )
        .await?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect())
    }

    async fn write_drafts(
        &self,
        space: &str,
        app: &str,
        writes: BTreeMap<String, Option<Vec<u8>>>,
    ) -> Result<(), StoreError> {
        self.write(async |txn| {
            let space = space_id(txn, space).await?.ok_or_else(|| no_space(space))?;
            let stmt = txn
                .prepare(
                    "INSERT INTO drafts(space, app, path, content) VALUES($1, $2, $3, $4)
                     ON CONFLICT(space, app, path) DO UPDATE SET content = excluded.content",
                )
                .await?;
            for (path, content) in &writes {
                txn.execute(&stmt, &[&space, &app, path, content]).await?;
            }
            Ok(())
        })
        .await
    }

    async fn listed_tools(&self, caller: &str) -> Result<Option<String>, StoreError> {
        let c = self.client().await?;
        let stmt = c
            .prepare_cached("SELECT fingerprint FROM listed_tools WHERE caller = $1")
            .await?;
        Ok(c.query_opt(&stmt, &[&caller]).await?.map(|r| r.get(0)))
    }

    async fn record_listed_tools(&self, caller: &str, fingerprint: &str) -> Result<(), StoreError> {
        self.write(async |txn| {
            txn.execute(
                "INSERT INTO listed_tools(caller, fingerprint) VALUES($1, $2)
                     ON CONFLICT(caller) DO UPDATE SET fingerprint = excluded.fingerprint",
                &[&caller, &fingerprint],
            )
            .await?;
            Ok(())
        })
        .await
    }
}
