//! What can be taken back, on PostgreSQL: tokens, memberships, people (the
//! shapes: `src/revocable.rs`) — SQLite's statements (`sqlite/revocable.rs`)
//! in PostgreSQL's words, each write one transaction.

use deadpool_postgres::GenericClient;
use tokio_postgres::Row;

use super::Postgres;
use super::records::{locked_space, only_owner, person_at};
use super::wake::{Change, announce};
use crate::records::Revocable;
use crate::revocable::{
    LiveToken, MemberChange, MemberRecord, NewToken, PersonRemoval, Removed, SpaceRecord, TokenId,
    TokenRecord,
};
use crate::{Person, StoreError};

fn token_record(r: &Row) -> TokenRecord {
    TokenRecord {
        id: TokenId::Pasted(r.get(0)),
        name: r.get(1),
        person: person_at(r, 2),
        created_at: r.get(5),
        last_used_at: r.get(6),
        expires_at: r.get(7),
    }
}

impl Revocable for Postgres {
    async fn add_token(&self, token: NewToken) -> Result<i64, StoreError> {
        self.write(async |txn| {
            crate::records::oauth::insert_token(&super::txn::Txn::Write(txn), &token, None).await
        })
        .await
    }

    async fn live_token(&self, hash: &str, now: i64) -> Result<Option<LiveToken>, StoreError> {
        let c = self.client().await?;
        let stmt = c
            .prepare_cached(
                "SELECT t.id, t.last_used_at, p.eid, p.handle, p.name, t.resource
                 FROM tokens t JOIN people p ON p.eid = t.person
                 WHERE t.hash = $1 AND t.revoked_at IS NULL
                   AND (t.expires_at IS NULL OR t.expires_at > $2)",
            )
            .await?;
        Ok(c.query_opt(&stmt, &[&hash, &now])
            .await?
            .map(|r| LiveToken {
                id: r.get(0),
                last_used_at: r.get(1),
                person: person_at(&r, 2),
                resource: r.get(5),
            }))
    }

    async fn token_used(&self, id: i64, now: i64) -> Result<(), StoreError> {
        self.write(async |txn| {
            let stmt = txn
                .prepare_cached("UPDATE tokens SET last_used_at = $2 WHERE id = $1")
                .await?;
            txn.execute(&stmt, &[&id, &now]).await?;
            Ok(())
        })
        .await
    }

    async fn tokens(&self, person: Option<&str>, now: i64) -> Result<Vec<TokenRecord>, StoreError> {
        let c = self.client().await?;
        let stmt = c
            .prepare_cached(
                "SELECT t.id, t.name, p.eid, p.handle, p.name, t.created_at, t.last_used_at, t.expires_at
                 FROM tokens t JOIN people p ON p.eid = t.person
                 WHERE t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > $2)
                   AND t.grant_id IS NULL
                   AND ($1::TEXT IS NULL OR t.person = $1)
                 ORDER BY t.id",
            )
            .await?;
        Ok(c.query(&stmt, &[&person, &now])
            .await?
            .iter()
            .map(token_record)
            .collect())
    }

    async fn revoke_token(&self, id: i64, now: i64) -> Result<bool, StoreError> {
        self.write(async |txn| {
            Ok(txn
                .execute(
                    "UPDATE tokens SET revoked_at = $2 WHERE id = $1 AND grant_id IS NULL AND revoked_at IS NULL",
                    &[&id, &now],
                )
                .await?
                > 0)
        })
        .await
    }

    async fn present_person(&self, handle: &str) -> Result<Option<Person>, StoreError> {
        let handle = handle.strip_prefix('@').unwrap_or(handle);
        let c = self.client().await?;
        let stmt = c
            .prepare_cached(
                "SELECT eid, handle, name FROM people
                 WHERE handle = $1 AND eid NOT IN (SELECT eid FROM removed_people)",
            )
            .await?;
        Ok(c.query_opt(&stmt, &[&handle])
            .await?
            .map(|r| person_at(&r, 0)))
    }

    async fn people(&self) -> Result<Vec<Person>, StoreError> {
        Ok(self
            .client()
            .await?
            .query(
                "SELECT eid, handle, name FROM people
                 WHERE eid NOT IN (SELECT eid FROM removed_people) ORDER BY handle COLLATE \"C\"",
                &[],
            )
            .await?
            .iter()
            .map(|r| person_at(r, 0))
            .collect())
    }

    async fn spaces(&self) -> Result<Vec<SpaceRecord>, StoreError> {
        Ok(self
            .client()
            .await?
            .query(
                "SELECT s.slug,
                        (SELECT COUNT(*) FROM members m WHERE m.space = s.id),
                        (SELECT COUNT(*) FROM apps a WHERE a.space = s.id)
                 FROM spaces s ORDER BY s.slug COLLATE \"C\"",
                &[],
            )
            .await?
            .iter()
            .map(|r| SpaceRecord {
                slug: r.get(0),
                members: r.get(1),
                apps: r.get(2),
            })
            .collect())
    }

    async fn members(&self, space: &str) -> Result<Option<Vec<MemberRecord>>, StoreError> {
        let mut c = self.client().await?;
        let txn = c.build_transaction().read_only(true).start().await?;
        let Some(space) = super::records::space_id(&txn, space).await? else {
            return Ok(None);
        };
        let members = txn
            .query(
                "SELECT p.eid, p.handle, p.name, m.role FROM members m JOIN people p ON p.eid = m.person
                 WHERE m.space = $1
                 ORDER BY CASE m.role WHEN 'owner' THEN 0 WHEN 'editor' THEN 1 ELSE 2 END,
                          p.handle COLLATE \"C\"",
                &[&space],
            )
            .await?
            .iter()
            .map(|r| MemberRecord {
                person: person_at(r, 0),
                role: r.get(3),
            })
            .collect();
        txn.commit().await?;
        Ok(Some(members))
    }

    async fn remove_member(&self, space: &str, person: &str) -> Result<MemberChange, StoreError> {
        self.write(async |txn| {
            let Some(id) = locked_space(txn, space).await? else {
                return Ok(MemberChange::NotAMember);
            };
            if only_owner(txn, id, person).await? {
                return Ok(MemberChange::LastOwner);
            }
            let removed = txn
                .execute(
                    "DELETE FROM members WHERE person = $2 AND space = $1",
                    &[&id, &person],
                )
                .await?;
            if removed == 0 {
                return Ok(MemberChange::NotAMember);
            }
            announce(txn, Change::Membership).await?;
            Ok(MemberChange::Done)
        })
        .await
    }

    async fn remove_person(&self, person: &str, now: i64) -> Result<PersonRemoval, StoreError> {
        self.write(async |txn| {
            // No membership changes until this commits (a member change
            // locks its space's row, then writes `members`), so the owners
            // counted here are the owners the removal leaves.
            txn.batch_execute("LOCK TABLE members IN SHARE ROW EXCLUSIVE MODE")
                .await?;
            let last_owner_of: Vec<String> = txn
                .query(
                    "SELECT s.slug FROM members m JOIN spaces s ON s.id = m.space
                     WHERE m.person = $1 AND m.role = 'owner' AND NOT EXISTS (
                         SELECT 1 FROM members o
                         WHERE o.space = m.space AND o.role = 'owner' AND o.person <> $1)
                     ORDER BY s.slug COLLATE \"C\"",
                    &[&person],
                )
                .await?
                .iter()
                .map(|r| r.get(0))
                .collect();
            if !last_owner_of.is_empty() {
                return Ok(PersonRemoval::LastOwnerOf(last_owner_of));
            }
            txn.execute(
                "INSERT INTO removed_people(eid, at) VALUES($1, $2) ON CONFLICT(eid) DO NOTHING",
                &[&person, &now],
            )
            .await?;
            let tokens = txn
                .execute(
                    "UPDATE tokens SET revoked_at = $2 WHERE person = $1 AND revoked_at IS NULL",
                    &[&person, &now],
                )
                .await?;
            txn.execute(
                "UPDATE oauth_grants SET revoked_at = $2, refresh_hash = NULL
                 WHERE person = $1 AND revoked_at IS NULL",
                &[&person, &now],
            )
            .await?;
            let memberships = txn
                .execute("DELETE FROM members WHERE person = $1", &[&person])
                .await?;
            if memberships > 0 {
                announce(txn, Change::Membership).await?;
            }
            let sessions =
                crate::records::sign_ins::end_sessions(&super::txn::Txn::Write(txn), person)
                    .await?;
            crate::records::passkeys::remove_persons_passkeys(&super::txn::Txn::Write(txn), person)
                .await?;
            let jobs = txn
                .execute(
                    "UPDATE jobs SET ended_at = $2 WHERE person = $1 AND ended_at IS NULL",
                    &[&person, &(now * 1000)],
                )
                .await?;
            Ok(PersonRemoval::Done(Removed {
                tokens: tokens as usize,
                memberships: memberships as usize,
                sessions,
                jobs: jobs as usize,
            }))
        })
        .await
    }
}
