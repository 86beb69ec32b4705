//! The platform's own tables on SQLite: spaces and their members, apps and their deploys
//! (a deploy's files kept as rows), the drafts of an app's next deploy, bearer
//! tokens (stored as sha256 hex only), and the tool-list fingerprint a caller
//! last listed under. Plain storage: who may do what is decided in shed-host.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, params};

use super::Sqlite;
use super::people::person_at;
use crate::StoreError;
use crate::platform::{
    APP_COLUMNS, AppRecord, Membership, NewDeploy, Trashed, deploy_vanished, no_space, space_taken,
};
use crate::records::now;
use crate::revocable::MemberChange;

/// The tables, appended to the store's migrations.
pub(crate) const MIGRATION: &str = r#"
    CREATE TABLE spaces(
        id INTEGER PRIMARY KEY,
        slug TEXT UNIQUE NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE members(
        space INTEGER NOT NULL REFERENCES spaces(id),
        person TEXT NOT NULL REFERENCES people(eid),
        role TEXT NOT NULL CHECK(role IN ('owner', 'editor', 'viewer')),
        PRIMARY KEY(space, person)
    ) WITHOUT ROWID;
    CREATE INDEX members_person ON members(person);
    CREATE TABLE apps(
        id INTEGER PRIMARY KEY,
        space INTEGER NOT NULL REFERENCES spaces(id),
        slug TEXT NOT NULL,
        title TEXT NOT NULL,
        access TEXT NOT NULL CHECK(access IN ('private', 'public', 'open')),
        version INTEGER NOT NULL,
        deploy INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE(space, slug)
    );
    CREATE TABLE deploys(
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        app INTEGER NOT NULL REFERENCES apps(id),
        version INTEGER NOT NULL,
        at TEXT NOT NULL,
        by TEXT NOT NULL,
        UNIQUE(app, version)
    );
    CREATE TABLE deploy_files(
        deploy INTEGER NOT NULL REFERENCES deploys(id),
        path TEXT NOT NULL,
        content BLOB NOT NULL,
        PRIMARY KEY(deploy, path)
    ) WITHOUT ROWID;
    CREATE TABLE drafts(
        space INTEGER NOT NULL REFERENCES spaces(id),
        app TEXT NOT NULL,
        path TEXT NOT NULL,
        content BLOB,
        PRIMARY KEY(space, app, path)
    ) WITHOUT ROWID;
    CREATE TABLE tokens(
        id INTEGER PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        hash TEXT UNIQUE NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE listed_tools(
        caller TEXT PRIMARY KEY,
        fingerprint TEXT NOT NULL
    ) WITHOUT ROWID;
"#;

pub(super) fn space_id(conn: &Connection, slug: &str) -> Result<Option<i64>, StoreError> {
    Ok(conn
        .query_row("SELECT id FROM spaces WHERE slug = ?1", [slug], |r| {
            r.get(0)
        })
        .optional()?)
}

/// An app, from a row of [`APP_COLUMNS`].
fn app_record(r: &rusqlite::Row<'_>) -> rusqlite::Result<AppRecord> {
    let trashed_at: Option<String> = r.get(10)?;
    let trashed = match trashed_at {
        Some(at) => Some(Trashed {
            at,
            by: person_at(r, 11)?,
        }),
        None => None,
    };
    Ok(AppRecord {
        space: r.get(0)?,
        slug: r.get(1)?,
        title: r.get(2)?,
        access: r.get(3)?,
        version: r.get(4)?,
        deploy: r.get(5)?,
        deployed_at: r.get(6)?,
        deployed_by: person_at(r, 7)?,
        trashed,
    })
}

fn add_space(conn: &Connection, slug: &str, owner: &str) -> Result<(), StoreError> {
    if space_id(conn, slug)?.is_some() {
        return Err(space_taken(slug));
    }
    conn.execute(
        "INSERT INTO spaces(slug, created_at) VALUES(?1, ?2)",
        params![slug, now()],
    )?;
    let id = conn.last_insert_rowid();
    conn.execute(
        "INSERT INTO members(space, person, role) VALUES(?1, ?2, 'owner')",
        params![id, owner],
    )?;
    Ok(())
}

fn set_member(
    conn: &Connection,
    space: &str,
    person: &str,
    role: &str,
) -> Result<MemberChange, StoreError> {
    let id = space_id(conn, space)?.ok_or_else(|| no_space(space))?;
    if role != "owner" && only_owner(conn, id, person)? {
        return Ok(MemberChange::LastOwner);
    }
    conn.execute(
        "INSERT INTO members(space, person, role) VALUES(?1, ?2, ?3)
         ON CONFLICT(space, person) DO UPDATE SET role = excluded.role",
        params![id, person, role],
    )?;
    Ok(MemberChange::Done)
}

/// Whether the person is the one owner of the space (by id), read in the
/// transaction that is about to change their place in it.
pub(super) fn only_owner(conn: &Connection, space: i64, person: &str) -> Result<bool, StoreError> {
    let (owners, theirs): (i64, i64) = conn.query_row(
        "SELECT count(*), coalesce(sum(person = ?2), 0) FROM members
         WHERE space = ?1 AND role = 'owner'",
        params![space, person],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(owners == 1 && theirs == 1)
}

pub(super) fn memberships(conn: &Connection, person: &str) -> Result<Vec<Membership>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.slug, m.role FROM members m JOIN spaces s ON s.id = m.space
         WHERE m.person = ?1 ORDER BY s.slug",
    )?;
    let rows = stmt.query_map([person], |r| {
        Ok(Membership {
            space: r.get(0)?,
            role: r.get(1)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn space_exists(conn: &Connection, slug: &str) -> Result<bool, StoreError> {
    Ok(space_id(conn, slug)?.is_some())
}

fn app_by_name(
    conn: &Connection,
    space: &str,
    slug: &str,
) -> Result<Option<AppRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {APP_COLUMNS} WHERE s.slug = ?1 AND a.slug = ?2"
    ))?;
    Ok(stmt.query_row([space, slug], app_record).optional()?)
}

fn deploy_files(conn: &Connection, deploy: i64) -> Result<BTreeMap<String, Vec<u8>>, StoreError> {
    let mut stmt =
        conn.prepare_cached("SELECT path, content FROM deploy_files WHERE deploy = ?1")?;
    let rows = stmt.query_map([deploy], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn deploy_files_with_contents_of(
    conn: &Connection,
    deploy: i64,
    contents_of: &[&str],
) -> Result<BTreeMap<String, Vec<u8>>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT path, CASE WHEN path IN (SELECT value FROM json_each(?2)) THEN content ELSE x'' END
         FROM deploy_files WHERE deploy = ?1",
    )?;
    let wanted =
        serde_json::to_string(contents_of).map_err(|e| StoreError::Internal(e.to_string()))?;
    let rows = stmt.query_map(params![deploy, wanted], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn deploy_file(conn: &Connection, deploy: i64, path: &str) -> Result<Option<Vec<u8>>, StoreError> {
    let mut stmt =
        conn.prepare_cached("SELECT content FROM deploy_files WHERE deploy = ?1 AND path = ?2")?;
    Ok(stmt
        .query_row(params![deploy, path], |r| r.get(0))
        .optional()?)
}

fn record_deploy(conn: &Connection, new: &NewDeploy) -> Result<AppRecord, StoreError> {
    let space = space_id(conn, &new.space)?.ok_or_else(|| no_space(&new.space))?;
    let at = now();
    let existing: Option<(i64, i64)> = conn
        .query_row(
            "SELECT id, version FROM apps WHERE space = ?1 AND slug = ?2",
            params![space, new.slug],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let (app, version) = match existing {
        Some((app, version)) => (app, version + 1),
        None => {
            conn.execute(
                "INSERT INTO apps(space, slug, title, access, version, deploy, created_at)
                 VALUES(?1, ?2, ?3, ?4, 0, 0, ?5)",
                params![
                    space,
                    new.slug,
                    new.title.as_deref().unwrap_or(&new.slug),
                    new.access.as_deref().unwrap_or("private"),
                    at
                ],
            )?;
            (conn.last_insert_rowid(), 1)
        }
    };
    conn.execute(
        "INSERT INTO deploys(app, version, at, by, rolls_back_to) VALUES(?1, ?2, ?3, ?4, ?5)",
        params![app, version, at, new.by, new.rolls_back_to],
    )?;
    let deploy = conn.last_insert_rowid();
    {
        let mut insert = conn
            .prepare_cached("INSERT INTO deploy_files(deploy, path, content) VALUES(?1, ?2, ?3)")?;
        for (path, content) in &new.files {
            insert.execute(params![deploy, path, content])?;
        }
    }
    conn.execute(
        "UPDATE apps SET version = ?2, deploy = ?3,
             title = COALESCE(?4, title), access = COALESCE(?5, access)
         WHERE id = ?1",
        params![app, version, deploy, new.title, new.access],
    )?;
    if new.clear_drafts {
        conn.execute(
            "DELETE FROM drafts WHERE space = ?1 AND app = ?2",
            params![space, new.slug],
        )?;
    }
    app_by_name(conn, &new.space, &new.slug)?.ok_or_else(|| deploy_vanished(new))
}

fn drafts(
    conn: &Connection,
    space: &str,
    app: &str,
) -> Result<BTreeMap<String, Option<Vec<u8>>>, StoreError> {
    let Some(space) = space_id(conn, space)? else {
        return Ok(BTreeMap::new());
    };
    let mut stmt =
        conn.prepare_cached("SELECT path, content FROM drafts WHERE space = ?1 AND app = ?2")?;
    let rows = stmt.query_map(params![space, app], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn write_drafts(
    conn: &Connection,
    space: &str,
    app: &str,
    writes: &BTreeMap<String, Option<Vec<u8>>>,
) -> Result<(), StoreError> {
    let space = space_id(conn, space)?.ok_or_else(|| no_space(space))?;
    let mut stmt = conn.prepare_cached(
        "INSERT INTO drafts(space, app, path, content) VALUES(?1, ?2, ?3, ?4)
         ON CONFLICT(space, app, path) DO UPDATE SET content = excluded.content",
    )?;
    for (path, content) in writes {
        stmt.execute(params![space, app, path, content])?;
    }
    Ok(())
}

fn listed_tools(conn: &Connection, caller: &str) -> Result<Option<String>, StoreError> {
    let mut stmt = conn.prepare_cached("SELECT fingerprint FROM listed_tools WHERE caller = ?1")?;
    Ok(stmt.query_row([caller], |r| r.get(0)).optional()?)
}

fn record_listed_tools(
    conn: &Connection,
    caller: &str,
    fingerprint: &str,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO listed_tools(caller, fingerprint) VALUES(?1, ?2)
         ON CONFLICT(caller) DO UPDATE SET fingerprint = excluded.fingerprint",
        params![caller, fingerprint],
    )?;
    Ok(())
}

impl crate::records::Platform for Sqlite {
    async fn add_space(&self, slug: &str, owner_eid: &str) -> Result<(), StoreError> {
        let (slug, owner) = (slug.to_string(), owner_eid.to_string());
        self.write(move |txn| add_space(txn, &slug, &owner)).await
    }

    async fn set_member(
        &self,
        space: &str,
        person_eid: &str,
        role: &str,
    ) -> Result<MemberChange, StoreError> {
        let (space, person, role) = (space.to_string(), person_eid.to_string(), role.to_string());
        self.write(move |txn| set_member(txn, &space, &person, &role))
            .await
    }

    async fn memberships(&self, person_eid: &str) -> Result<Vec<Membership>, StoreError> {
        self.read(|conn| memberships(conn, person_eid)).await
    }

    async fn space_exists(&self, slug: &str) -> Result<bool, StoreError> {
        self.read(|conn| space_exists(conn, slug)).await
    }

    async fn platform_app(&self, space: &str, slug: &str) -> Result<Option<AppRecord>, StoreError> {
        self.read(|conn| app_by_name(conn, space, slug)).await
    }

    async fn deploy_files(&self, deploy: i64) -> Result<BTreeMap<String, Vec<u8>>, StoreError> {
        self.read_long(|conn| deploy_files(conn, deploy)).await
    }

    async fn deploy_files_with_contents_of(
        &self,
        deploy: i64,
        contents_of: &[&str],
    ) -> Result<BTreeMap<String, Vec<u8>>, StoreError> {
        self.read(|conn| deploy_files_with_contents_of(conn, deploy, contents_of))
            .await
    }

    async fn deploy_file(&self, deploy: i64, path: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.read_long(|conn| deploy_file(conn, deploy, path)).await
    }

    async fn record_deploy(&self, deploy: NewDeploy) -> Result<AppRecord, StoreError> {
        self.write(move |txn| record_deploy(txn, &deploy)).await
    }

    async fn drafts(
        &self,
        space: &str,
        app: &str,
    ) -> Result<BTreeMap<String, Option<Vec<u8>>>, StoreError> {
        self.read_long(|conn| drafts(conn, space, app)).await
    }

    async fn write_drafts(
        &self,
        space: &str,
        app: &str,
        writes: BTreeMap<String, Option<Vec<u8>>>,
    ) -> Result<(), StoreError> {
        let (space, app) = (space.to_string(), app.to_string());
        self.write(move |txn| write_drafts(txn, &space, &app, &writes))
            .await
    }

    async fn listed_tools(&self, caller: &str) -> Result<Option<String>, StoreError> {
        self.read(|conn| listed_tools(conn, caller)).await
    }

    async fn record_listed_tools(&self, caller: &str, fingerprint: &str) -> Result<(), StoreError> {
        let (caller, fingerprint) = (caller.to_string(), fingerprint.to_string());
        self.write(move |txn| record_listed_tools(txn, &caller, &fingerprint))
            .await
    }
}
