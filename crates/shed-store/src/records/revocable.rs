//! What can be taken back — tokens, memberships, people (the shapes:
//! `src/revocable.rs`) — and the lists an administrator reads them from,
//! written once for both backends ([`Records`]). A member's removal locks
//! their space's row ([`Txn::LOCK`]) and a person's the members table, so
//! the check that a space keeps an owner holds, on every server, until the
//! change it allows is committed; either is announced to every server's
//! watchers as it commits ([`Txn::announce`]).

use super::lifecycle::{GENERATION, MEMBERSHIPS_AND_GENERATION, memberships_and_generation_at};
use super::platform::{locked_space, only_owner, space_id};
use super::{FromRow, ReadRows, Statement, person_at};
use crate::revocable::{
    LiveToken, MemberChange, MemberRecord, NewToken, PersonRemoval, Removed, SpaceRecord, TokenId,
    TokenRecord,
};
use crate::txn::{Announced, Records, Row, Txn, args};
use crate::{Person, StoreError};

impl FromRow for TokenRecord {
    fn from_row(r: Row) -> Result<TokenRecord, StoreError> {
        Ok(TokenRecord {
            id: TokenId::Pasted(r.get(0)?),
            name: r.get(1)?,
            person: person_at(&r, 2)?,
            created_at: r.get(5)?,
            last_used_at: r.get(6)?,
            expires_at: r.get(7)?,
        })
    }
}

impl FromRow for SpaceRecord {
    fn from_row(r: Row) -> Result<SpaceRecord, StoreError> {
        Ok(SpaceRecord {
            slug: r.get(0)?,
            members: r.get(1)?,
            apps: r.get(2)?,
        })
    }
}

impl FromRow for MemberRecord {
    fn from_row(r: Row) -> Result<MemberRecord, StoreError> {
        Ok(MemberRecord {
            person: person_at(&r, 0)?,
            role: r.get(3)?,
        })
    }
}

async fn remove_member(
    t: &impl Txn,
    space: &str,
    person: &str,
) -> Result<MemberChange, StoreError> {
    let Some(id) = locked_space(t, space).await? else {
        return Ok(MemberChange::NotAMember);
    };
    if only_owner(t, id, person).await? {
        return Ok(MemberChange::LastOwner);
    }
    let removed = t
        .execute(
            "DELETE FROM members WHERE person = $2 AND space = $1",
            args![id, person],
        )
        .await?;
    if removed == 0 {
        return Ok(MemberChange::NotAMember);
    }
    t.announce(Announced::Membership).await?;
    Ok(MemberChange::Done)
}

async fn remove_person<T: Txn>(t: &T, person: &str, now: i64) -> Result<PersonRemoval, StoreError> {
    // No membership changes until this commits (a member change locks its
    // space's row, then writes `members`; on SQLite the one writer does),
    // so the owners counted here are the owners the removal leaves.
    t.lock_table("members").await?;
    let last_owner_of: Vec<String> = t
        .all_as(
            &format!(
                "SELECT s.slug FROM members m JOIN spaces s ON s.id = m.space
                 WHERE m.person = $1 AND m.role = 'owner' AND NOT EXISTS (
                     SELECT 1 FROM members o
                     WHERE o.space = m.space AND o.role = 'owner' AND o.person <> $1)
                 ORDER BY s.slug{}",
                T::BY_BYTES
            ),
            args![person],
        )
        .await?;
    if !last_owner_of.is_empty() {
        return Ok(PersonRemoval::LastOwnerOf(last_owner_of));
    }
    t.execute(
        "INSERT INTO removed_people(eid, at) VALUES($1, $2) ON CONFLICT(eid) DO NOTHING",
        args![person, now],
    )
    .await?;
    let tokens = t
        .execute(
            "UPDATE tokens SET revoked_at = $2 WHERE person = $1 AND revoked_at IS NULL",
            args![person, now],
        )
        .await?;
    t.execute(
        "UPDATE oauth_grants SET revoked_at = $2, refresh_hash = NULL
         WHERE person = $1 AND revoked_at IS NULL",
        args![person, now],
    )
    .await?;
    let memberships = t
        .execute("DELETE FROM members WHERE person = $1", args![person])
        .await?;
    if memberships > 0 {
        t.announce(Announced::Membership).await?;
    }
    let sessions = super::sign_ins::end_sessions(t, person).await?;
    super::passkeys::remove_persons_passkeys(t, person).await?;
    let jobs = t
        .execute(
            "UPDATE jobs SET ended_at = $2 WHERE person = $1 AND ended_at IS NULL",
            args![person, now * 1000],
        )
        .await?;
    Ok(PersonRemoval::Done(Removed {
        tokens: tokens as usize,
        memberships: memberships as usize,
        sessions,
        jobs: jobs as usize,
    }))
}

impl<B: Records> super::Revocable for B {
    async fn add_token(&self, token: NewToken) -> Result<i64, StoreError> {
        self.write_records(async move |t| super::oauth::insert_token(t, &token, None).await)
            .await
    }

    async fn live_token(&self, hash: &str, now: i64) -> Result<Option<LiveToken>, StoreError> {
        self.read_records(async |t| {
            let rows = t
                .all(
                    &format!(
                        "SELECT t.id, t.last_used_at, p.eid, p.handle, p.name, t.resource,
                                COALESCE(oc.name, og.client), {MEMBERSHIPS_AND_GENERATION}
                         FROM tokens t JOIN people p ON p.eid = t.person
                         LEFT JOIN oauth_grants og ON og.id = t.grant_id
                         LEFT JOIN oauth_clients oc ON oc.id = og.client
                         CROSS JOIN (SELECT {GENERATION}) g
                         LEFT JOIN (members m JOIN spaces s ON s.id = m.space) ON m.person = t.person
                         WHERE t.hash = $1 AND t.revoked_at IS NULL
                           AND (t.expires_at IS NULL OR t.expires_at > $2)
                         ORDER BY s.slug{}",
                        <B::Txn<'_> as Txn>::BY_BYTES
                    ),
                    args![hash, now],
                )
                .await?;
            let Some(r) = rows.first() else {
                return Ok(None);
            };
            let (memberships, generation) = memberships_and_generation_at(&rows, 7)?;
            Ok(Some(LiveToken {
                id: r.get(0)?,
                last_used_at: r.get(1)?,
                person: person_at(r, 2)?,
                resource: r.get(5)?,
                client: r.get(6)?,
                memberships,
                generation,
            }))
        })
        .await
    }

    async fn token_used(&self, id: i64, now: i64) -> Result<(), StoreError> {
        let sql = "UPDATE tokens SET last_used_at = $2 WHERE id = $1";
        super::write_statement(self, sql, args![id, now]).await?;
        Ok(())
    }

    async fn tokens(&self, person: Option<&str>, now: i64) -> Result<Vec<TokenRecord>, StoreError> {
        self.read_all(
            "SELECT t.id, t.name, p.eid, p.handle, p.name, t.created_at, t.last_used_at,
                    t.expires_at
             FROM tokens t JOIN people p ON p.eid = t.person
             WHERE t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > $2)
               AND t.grant_id IS NULL
               AND (CAST($1 AS TEXT) IS NULL OR t.person = $1)
             ORDER BY t.id",
            args![person, now],
        )
        .await
    }

    async fn revoke_token(&self, id: i64, now: i64) -> Result<bool, StoreError> {
        let revoked = super::write_statement(
            self,
            "UPDATE tokens SET revoked_at = $2
                 WHERE id = $1 AND grant_id IS NULL AND revoked_at IS NULL",
            args![id, now],
        )
        .await?;
        Ok(revoked > 0)
    }

    async fn present_person(&self, handle: &str) -> Result<Option<Person>, StoreError> {
        let handle = handle.strip_prefix('@').unwrap_or(handle);
        self.read_optional(
            "SELECT eid, handle, name FROM people
             WHERE handle = $1 AND eid NOT IN (SELECT eid FROM removed_people)",
            args![handle],
        )
        .await
    }

    async fn people(&self) -> Result<Vec<Person>, StoreError> {
        let sql = format!(
            "SELECT eid, handle, name FROM people
             WHERE eid NOT IN (SELECT eid FROM removed_people) ORDER BY handle{}",
            <B::Txn<'_> as Txn>::BY_BYTES
        );
        self.read_all(&sql, args![]).await
    }

    async fn spaces(&self) -> Result<Vec<SpaceRecord>, StoreError> {
        let sql = format!(
            "SELECT s.slug,
                    (SELECT COUNT(*) FROM members m WHERE m.space = s.id),
                    (SELECT COUNT(*) FROM apps a WHERE a.space = s.id)
             FROM spaces s ORDER BY s.slug{}",
            <B::Txn<'_> as Txn>::BY_BYTES
        );
        self.read_all(&sql, args![]).await
    }

    async fn members(&self, space: &str) -> Result<Option<Vec<MemberRecord>>, StoreError> {
        self.read_records(async |t| {
            let Some(space) = space_id(t, space).await? else {
                return Ok(None);
            };
            t.all_as(
                &format!(
                    "SELECT p.eid, p.handle, p.name, m.role
                     FROM members m JOIN people p ON p.eid = m.person
                     WHERE m.space = $1
                     ORDER BY CASE m.role WHEN 'owner' THEN 0 WHEN 'editor' THEN 1 ELSE 2 END,
                              p.handle{}",
                    <B::Txn<'_> as Txn>::BY_BYTES
                ),
                args![space],
            )
            .await
            .map(Some)
        })
        .await
    }

    async fn remove_member(&self, space: &str, person: &str) -> Result<MemberChange, StoreError> {
        let (space, person) = (space.to_string(), person.to_string());
        self.write_records(async move |t| remove_member(t, &space, &person).await)
            .await
    }

    async fn remove_person(&self, person: &str, now: i64) -> Result<PersonRemoval, StoreError> {
        let person = person.to_string();
        self.write_records(async move |t| remove_person(t, &person, now).await)
            .await
    }
}
