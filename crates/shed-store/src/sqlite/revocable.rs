//! What can be taken back, on SQLite: tokens, memberships, people (the
//! shapes: `src/revocable.rs`).

use rusqlite::{Connection, OptionalExtension, params};

use super::Sqlite;
use super::people::person_at;
use super::platform::{only_owner, space_id};
use crate::revocable::{
    LiveToken, MemberChange, MemberRecord, NewToken, PersonRemoval, Removed, SpaceRecord, TokenId,
    TokenRecord,
};
use crate::{Person, StoreError};

/// The columns and table, appended to the store's migrations.
pub(crate) const MIGRATION: &str = r#"
    ALTER TABLE tokens ADD COLUMN name TEXT;
    ALTER TABLE tokens ADD COLUMN expires_at INTEGER;
    ALTER TABLE tokens ADD COLUMN last_used_at INTEGER;
    ALTER TABLE tokens ADD COLUMN revoked_at INTEGER;
    CREATE INDEX tokens_person ON tokens(person);
    CREATE TABLE removed_people(
        eid TEXT PRIMARY KEY REFERENCES people(eid),
        at INTEGER NOT NULL
    ) WITHOUT ROWID;
"#;

fn live_token(conn: &Connection, hash: &str, now: i64) -> Result<Option<LiveToken>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT t.id, t.last_used_at, p.eid, p.handle, p.name, t.resource
         FROM tokens t JOIN people p ON p.eid = t.person
         WHERE t.hash = ?1 AND t.revoked_at IS NULL
           AND (t.expires_at IS NULL OR t.expires_at > ?2)",
    )?;
    Ok(stmt
        .query_row(params![hash, now], |r| {
            Ok(LiveToken {
                id: r.get(0)?,
                last_used_at: r.get(1)?,
                person: person_at(r, 2)?,
                resource: r.get(5)?,
            })
        })
        .optional()?)
}

fn tokens(
    conn: &Connection,
    person: Option<&str>,
    now: i64,
) -> Result<Vec<TokenRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT t.id, t.name, p.eid, p.handle, p.name, t.created_at, t.last_used_at, t.expires_at
         FROM tokens t JOIN people p ON p.eid = t.person
         WHERE t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?2)
           AND t.grant_id IS NULL
           AND (?1 IS NULL OR t.person = ?1)
         ORDER BY t.id",
    )?;
    let rows = stmt.query_map(params![person, now], |r| {
        Ok(TokenRecord {
            id: TokenId::Pasted(r.get(0)?),
            name: r.get(1)?,
            person: person_at(r, 2)?,
            created_at: r.get(5)?,
            last_used_at: r.get(6)?,
            expires_at: r.get(7)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn present_person(conn: &Connection, handle: &str) -> Result<Option<Person>, StoreError> {
    let handle = handle.strip_prefix('@').unwrap_or(handle);
    let mut stmt = conn.prepare_cached(
        "SELECT eid, handle, name FROM people
         WHERE handle = ?1 AND eid NOT IN (SELECT eid FROM removed_people)",
    )?;
    Ok(stmt.query_row([handle], |r| person_at(r, 0)).optional()?)
}

fn people(conn: &Connection) -> Result<Vec<Person>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT eid, handle, name FROM people
         WHERE eid NOT IN (SELECT eid FROM removed_people) ORDER BY handle",
    )?;
    let rows = stmt.query_map([], |r| person_at(r, 0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn spaces(conn: &Connection) -> Result<Vec<SpaceRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.slug,
                (SELECT COUNT(*) FROM members m WHERE m.space = s.id),
                (SELECT COUNT(*) FROM apps a WHERE a.space = s.id)
         FROM spaces s ORDER BY s.slug",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(SpaceRecord {
            slug: r.get(0)?,
            members: r.get(1)?,
            apps: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn members(conn: &Connection, space: &str) -> Result<Option<Vec<MemberRecord>>, StoreError> {
    let Some(space) = space_id(conn, space)? else {
        return Ok(None);
    };
    let mut stmt = conn.prepare_cached(
        "SELECT p.eid, p.handle, p.name, m.role FROM members m JOIN people p ON p.eid = m.person
         WHERE m.space = ?1
         ORDER BY CASE m.role WHEN 'owner' THEN 0 WHEN 'editor' THEN 1 ELSE 2 END, p.handle",
    )?;
    let rows = stmt.query_map([space], |r| {
        Ok(MemberRecord {
            person: person_at(r, 0)?,
            role: r.get(3)?,
        })
    })?;
    Ok(Some(rows.collect::<Result<_, _>>()?))
}

fn remove_member(conn: &Connection, space: &str, person: &str) -> Result<MemberChange, StoreError> {
    let Some(id) = space_id(conn, space)? else {
        return Ok(MemberChange::NotAMember);
    };
    if only_owner(conn, id, person)? {
        return Ok(MemberChange::LastOwner);
    }
    let removed = conn.execute(
        "DELETE FROM members WHERE person = ?2 AND space = ?1",
        params![id, person],
    )?;
    Ok(if removed > 0 {
        MemberChange::Done
    } else {
        MemberChange::NotAMember
    })
}

fn remove_person(conn: &Connection, person: &str, now: i64) -> Result<PersonRemoval, StoreError> {
    // The writer is the only one, so what this reads holds until the commit.
    let mut stmt = conn.prepare_cached(
        "SELECT s.slug FROM members m JOIN spaces s ON s.id = m.space
         WHERE m.person = ?1 AND m.role = 'owner' AND NOT EXISTS (
             SELECT 1 FROM members o WHERE o.space = m.space AND o.role = 'owner' AND o.person != ?1)
         ORDER BY s.slug",
    )?;
    let last_owner_of: Vec<String> = stmt
        .query_map([person], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    if !last_owner_of.is_empty() {
        return Ok(PersonRemoval::LastOwnerOf(last_owner_of));
    }
    conn.execute(
        "INSERT OR IGNORE INTO removed_people(eid, at) VALUES(?1, ?2)",
        params![person, now],
    )?;
    let tokens = conn.execute(
        "UPDATE tokens SET revoked_at = ?2 WHERE person = ?1 AND revoked_at IS NULL",
        params![person, now],
    )?;
    conn.execute(
        "UPDATE oauth_grants SET revoked_at = ?2, refresh_hash = NULL
         WHERE person = ?1 AND revoked_at IS NULL",
        params![person, now],
    )?;
    let memberships = conn.execute("DELETE FROM members WHERE person = ?1", [person])?;
    let sessions = crate::query::at_once(crate::records::sign_ins::end_sessions(
        &super::txn::Txn(conn),
        person,
    ))?;
    crate::query::at_once(crate::records::passkeys::remove_persons_passkeys(
        &super::txn::Txn(conn),
        person,
    ))?;
    let jobs = conn.execute(
        "UPDATE jobs SET ended_at = ?2 WHERE person = ?1 AND ended_at IS NULL",
        params![person, now * 1000],
    )?;
    Ok(PersonRemoval::Done(Removed {
        tokens,
        memberships,
        sessions,
        jobs,
    }))
}

impl crate::records::Revocable for Sqlite {
    async fn add_token(&self, token: NewToken) -> Result<i64, StoreError> {
        self.write(move |txn| {
            crate::query::at_once(crate::records::oauth::insert_token(
                &super::txn::Txn(txn),
                &token,
                None,
            ))
        })
        .await
    }

    async fn live_token(&self, hash: &str, now: i64) -> Result<Option<LiveToken>, StoreError> {
        self.read(|conn| live_token(conn, hash, now)).await
    }

    async fn token_used(&self, id: i64, now: i64) -> Result<(), StoreError> {
        self.write(move |txn| {
            txn.execute(
                "UPDATE tokens SET last_used_at = ?2 WHERE id = ?1",
                params![id, now],
            )?;
            Ok(())
        })
        .await
    }

    async fn tokens(&self, person: Option<&str>, now: i64) -> Result<Vec<TokenRecord>, StoreError> {
        self.read(|conn| tokens(conn, person, now)).await
    }

    async fn revoke_token(&self, id: i64, now: i64) -> Result<bool, StoreError> {
        self.write(move |txn| {
            Ok(txn.execute(
                "UPDATE tokens SET revoked_at = ?2 WHERE id = ?1 AND grant_id IS NULL AND revoked_at IS NULL",
                params![id, now],
            )? > 0)
        })
        .await
    }

    async fn present_person(&self, handle: &str) -> Result<Option<Person>, StoreError> {
        self.read(|conn| present_person(conn, handle)).await
    }

    async fn people(&self) -> Result<Vec<Person>, StoreError> {
        self.read(people).await
    }

    async fn spaces(&self) -> Result<Vec<SpaceRecord>, StoreError> {
        self.read(spaces).await
    }

    async fn members(&self, space: &str) -> Result<Option<Vec<MemberRecord>>, StoreError> {
        self.read(|conn| members(conn, space)).await
    }

    async fn remove_member(&self, space: &str, person: &str) -> Result<MemberChange, StoreError> {
        let (space, person) = (space.to_string(), person.to_string());
        self.write(move |txn| remove_member(txn, &space, &person))
            .await
    }

    async fn remove_person(&self, person: &str, now: i64) -> Result<PersonRemoval, StoreError> {
        let person = person.to_string();
        self.write(move |txn| remove_person(txn, &person, now))
            .await
    }
}
