//! Spaces and their members, apps and their deploys (a deploy's files kept
//! as rows), the drafts of an app's next deploy, and the tool-list
//! fingerprint a caller last listed under (the shapes: `src/platform.rs`),
//! written once for both backends ([`Records`]). A change of a space's
//! members holds the space's row ([`Txn::LOCK`]), so the check that it
//! keeps an owner holds until the change it allows commits; deploys of one
//! app hold the app's row and take their versions in turn. A deploy and a
//! membership's change are announced as they commit ([`Txn::announce`]).

use std::collections::BTreeMap;

use super::{FromRow, ReadRows, Statement, now, person_at};
use crate::StoreError;
use crate::platform::{APP_COLUMNS, AppRecord, Membership, NewDeploy, Trashed};
use crate::revocable::MemberChange;
use crate::txn::{Announced, Column, Records, Row, Txn, args};
use crate::values::Sql;

/// The answer for a space that is not there.
fn no_space(slug: &str) -> StoreError {
    StoreError::NotFound(format!("no space {slug}"))
}

/// The id of the space of this slug.
pub(crate) async fn space_id(t: &impl Txn, slug: &str) -> Result<Option<i64>, StoreError> {
    t.optional_as("SELECT id FROM spaces WHERE slug = $1", args![slug])
        .await
}

/// The id of the space of this slug, its row held until the transaction
/// ends: changes to its members wait on one another.
pub(crate) async fn locked_space<T: Txn>(t: &T, slug: &str) -> Result<Option<i64>, StoreError> {
    let sql = format!("SELECT id FROM spaces WHERE slug = $1{}", T::LOCK);
    t.optional_as(&sql, args![slug]).await
}

/// Whether the person is the one owner of the space (by id), read in the
/// transaction that is about to change their place in it.
pub(crate) async fn only_owner(t: &impl Txn, space: i64, person: &str) -> Result<bool, StoreError> {
    let (owners, them): (i64, i64) = t
        .one_as(
            "SELECT count(*), count(*) FILTER (WHERE person = $2) FROM members
             WHERE space = $1 AND role = 'owner'",
            args![space, person],
        )
        .await?;
    Ok(owners == 1 && them == 1)
}

/// An app, from a row of [`APP_COLUMNS`].
impl FromRow for AppRecord {
    fn from_row(r: Row) -> Result<AppRecord, StoreError> {
        let trashed_at: Option<String> = r.get(10)?;
        Ok(AppRecord {
            space: r.get(0)?,
            slug: r.get(1)?,
            title: r.get(2)?,
            access: r.get(3)?,
            version: r.get(4)?,
            deploy: r.get(5)?,
            deployed_at: r.get(6)?,
            deployed_by: person_at(&r, 7)?,
            trashed: match trashed_at {
                Some(at) => Some(Trashed {
                    at,
                    by: person_at(&r, 11)?,
                }),
                None => None,
            },
            agent_writes_need_approval: r.get(14)?,
        })
    }
}

async fn app_by_name(
    t: &impl Txn,
    space: &str,
    slug: &str,
) -> Result<Option<AppRecord>, StoreError> {
    let sql = format!("SELECT {APP_COLUMNS} WHERE s.slug = $1 AND a.slug = $2");
    t.optional_as(&sql, args![space, slug]).await
}

/// The spaces a person belongs to, by slug, with their role in each.
pub(crate) async fn memberships<T: Txn>(
    t: &T,
    person: &str,
) -> Result<Vec<Membership>, StoreError> {
    let sql = format!(
        "SELECT s.slug, m.role FROM members m JOIN spaces s ON s.id = m.space
         WHERE m.person = $1 ORDER BY s.slug{}",
        T::BY_BYTES
    );
    let rows: Vec<(String, String)> = t.all_as(&sql, args![person]).await?;
    Ok(rows
        .into_iter()
        .map(|(space, role)| Membership { space, role })
        .collect())
}

/// Every app, by space.
pub(crate) async fn apps<T: Txn>(t: &T) -> Result<Vec<AppRecord>, StoreError> {
    let sql = format!("SELECT {APP_COLUMNS} ORDER BY s.slug{}, a.id", T::BY_BYTES);
    t.all_as(&sql, &[]).await
}

/// A statement's rows of two columns, as a map from the first to the second.
async fn map_of<V: Column>(
    t: &impl Txn,
    sql: &str,
    params: &[Sql],
) -> Result<BTreeMap<String, V>, StoreError> {
    Ok(t.all_as(sql, params).await?.into_iter().collect())
}

async fn record_deploy<T: Txn>(t: &T, new: &NewDeploy) -> Result<AppRecord, StoreError> {
    let space = space_id(t, &new.space)
        .await?
        .ok_or_else(|| no_space(&new.space))?;
    let at = now();
    t.execute(
        "INSERT INTO apps(space, slug, title, access, version, deploy, created_at)
         VALUES($1, $2, $3, $4, 0, 0, $5) ON CONFLICT(space, slug) DO NOTHING",
        args![
            space,
            &new.slug,
            new.title.as_deref().unwrap_or(&new.slug),
            new.access.as_deref().unwrap_or("private"),
            &at
        ],
    )
    .await?;
    let (app, last): (i64, i64) = t
        .one_as(
            &format!(
                "SELECT id, version FROM apps WHERE space = $1 AND slug = $2{}",
                T::LOCK
            ),
            args![space, &new.slug],
        )
        .await?;
    let version = last + 1;
    // Deploys' ids taken in the order they commit (the table held to the
    // commit), as `app_changes`' are: a watcher reading "the deploys after
    // id n" never misses one that committed late.
    t.lock_table("deploys").await?;
    let deploy: i64 = t
        .one_as(
            "INSERT INTO deploys(app, version, at, by, rolls_back_to)
             VALUES($1, $2, $3, $4, $5) RETURNING id",
            args![app, version, &at, &new.by, new.rolls_back_to],
        )
        .await?;
    for (path, content) in &new.files {
        t.execute(
            "INSERT INTO deploy_files(deploy, path, content) VALUES($1, $2, $3)",
            args![deploy, path, content.as_slice()],
        )
        .await?;
    }
    t.execute(
        "UPDATE apps SET version = $2, deploy = $3,
             title = COALESCE($4, title), access = COALESCE($5, access)
         WHERE id = $1",
        args![
            app,
            version,
            deploy,
            new.title.as_deref(),
            new.access.as_deref()
        ],
    )
    .await?;
    if new.clear_drafts {
        t.execute(
            "DELETE FROM drafts WHERE space = $1 AND app = $2",
            args![space, &new.slug],
        )
        .await?;
    }
    t.announce(Announced::Deploy).await?;
    app_by_name(t, &new.space, &new.slug).await?.ok_or_else(|| {
        StoreError::Internal(format!("the deploy of {}/{} vanished", new.space, new.slug))
    })
}

impl<B: Records> super::Platform for B {
    async fn add_space(&self, slug: &str, owner_eid: &str) -> Result<(), StoreError> {
        let (slug, owner) = (slug.to_string(), owner_eid.to_string());
        self.write_records(async move |t| {
            let Some(id) = t
                .optional(
                    "INSERT INTO spaces(slug, created_at) VALUES($1, $2)
                     ON CONFLICT(slug) DO NOTHING RETURNING id",
                    args![&slug, now()],
                )
                .await?
            else {
                return Err(StoreError::Conflict(format!(
                    "space {slug} is taken — pick another slug"
                )));
            };
            t.execute(
                "INSERT INTO members(space, person, role) VALUES($1, $2, 'owner')",
                args![id.get::<i64>(0)?, &owner],
            )
            .await?;
            t.announce(Announced::Membership).await
        })
        .await
    }

    async fn set_member(
        &self,
        space: &str,
        person_eid: &str,
        role: &str,
    ) -> Result<MemberChange, StoreError> {
        let (space, person, role) = (space.to_string(), person_eid.to_string(), role.to_string());
        self.write_records(async move |t| {
            let id = locked_space(t, &space)
                .await?
                .ok_or_else(|| no_space(&space))?;
            if role != "owner" && only_owner(t, id, &person).await? {
                return Ok(MemberChange::LastOwner);
            }
            t.execute(
                "INSERT INTO members(space, person, role) VALUES($1, $2, $3)
                 ON CONFLICT(space, person) DO UPDATE SET role = excluded.role",
                args![id, &person, &role],
            )
            .await?;
            t.announce(Announced::Membership).await?;
            Ok(MemberChange::Done)
        })
        .await
    }

    async fn memberships(&self, person_eid: &str) -> Result<Vec<Membership>, StoreError> {
        self.read_records(async |t| memberships(t, person_eid).await)
            .await
    }

    async fn space_exists(&self, slug: &str) -> Result<bool, StoreError> {
        self.read_records(async |t| Ok(space_id(t, slug).await?.is_some()))
            .await
    }

    async fn platform_app(&self, space: &str, slug: &str) -> Result<Option<AppRecord>, StoreError> {
        self.read_records(async |t| app_by_name(t, space, slug).await)
            .await
    }

    async fn deploy_files(&self, deploy: i64) -> Result<BTreeMap<String, Vec<u8>>, StoreError> {
        self.read_long_records(async |t| {
            let sql = "SELECT path, content FROM deploy_files WHERE deploy = $1";
            map_of(t, sql, args![deploy]).await
        })
        .await
    }

    async fn deploy_files_with_contents_of(
        &self,
        deploy: i64,
        contents_of: &[&str],
    ) -> Result<BTreeMap<String, Vec<u8>>, StoreError> {
        // `path IN ($2, $3, …)`, one place per path wanted (`IN ()` is
        // SQLite's only): every path answers, the others' contents null.
        let wanted = match contents_of.len() {
            0 => "FALSE".to_string(),
            n => {
                let places: Vec<String> = (2..n + 2).map(|i| format!("${i}")).collect();
                format!("path IN ({})", places.join(", "))
            }
        };
        let sql = format!(
            "SELECT path, CASE WHEN {wanted} THEN content END FROM deploy_files WHERE deploy = $1"
        );
        let mut params = vec![Sql::from(deploy)];
        params.extend(contents_of.iter().copied().map(Sql::from));
        self.read_records(async |t| {
            let files: BTreeMap<String, Option<Vec<u8>>> = map_of(t, &sql, &params).await?;
            Ok(files
                .into_iter()
                .map(|(path, content)| (path, content.unwrap_or_default()))
                .collect())
        })
        .await
    }

    async fn deploy_file(&self, deploy: i64, path: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.read_long_records(async |t| {
            t.optional_as(
                "SELECT content FROM deploy_files WHERE deploy = $1 AND path = $2",
                args![deploy, path],
            )
            .await
        })
        .await
    }

    async fn record_deploy(&self, deploy: NewDeploy) -> Result<AppRecord, StoreError> {
        self.write_records(async move |t| record_deploy(t, &deploy).await)
            .await
    }

    async fn drafts(
        &self,
        space: &str,
        app: &str,
    ) -> Result<BTreeMap<String, Option<Vec<u8>>>, StoreError> {
        self.read_long_records(async |t| {
            let Some(space) = space_id(t, space).await? else {
                return Ok(BTreeMap::new());
            };
            let sql = "SELECT path, content FROM drafts WHERE space = $1 AND app = $2";
            map_of(t, sql, args![space, app]).await
        })
        .await
    }

    async fn write_drafts(
        &self,
        space: &str,
        app: &str,
        writes: BTreeMap<String, Option<Vec<u8>>>,
    ) -> Result<(), StoreError> {
        let (space, app) = (space.to_string(), app.to_string());
        self.write_records(async move |t| {
            let id = space_id(t, &space).await?.ok_or_else(|| no_space(&space))?;
            for (path, content) in &writes {
                t.execute(
                    "INSERT INTO drafts(space, app, path, content) VALUES($1, $2, $3, $4)
                     ON CONFLICT(space, app, path) DO UPDATE SET content = excluded.content",
                    args![id, &app, path, content.as_deref()],
                )
                .await?;
            }
            Ok(())
        })
        .await
    }

    async fn listed_tools(&self, caller: &str) -> Result<Option<String>, StoreError> {
        self.read_optional(
            "SELECT fingerprint FROM listed_tools WHERE caller = $1",
            args![caller],
        )
        .await
    }

    async fn record_listed_tools(&self, caller: &str, fingerprint: &str) -> Result<(), StoreError> {
        super::write_statement(
            self,
            "INSERT INTO listed_tools(caller, fingerprint) VALUES($1, $2)
             ON CONFLICT(caller) DO UPDATE SET fingerprint = excluded.fingerprint",
            args![caller, fingerprint],
        )
        .await?;
        Ok(())
    }
}
