//! OAuth's clients, codes and grants on PostgreSQL (the shapes:
//! `src/oauth.rs`) — SQLite's statements (`sqlite/oauth.rs`) in
//! PostgreSQL's words. Each call that reads and then writes runs in one
//! transaction and locks the row it read (`FOR UPDATE`), so a code or a
//! refresh token presented twice at once, to two servers, is spent once.

use deadpool_postgres::GenericClient;

use super::Postgres;
use super::records::person_at;
use super::revocable::insert_token;
use crate::StoreError;
use crate::oauth::{ClientRecord, CodeRecord, NewCode, Redeemed, Refreshed};
use crate::records::OAuth;
use crate::revocable::{NewToken, TokenRecord};

async fn revoke_grant(c: &impl GenericClient, grant: i64, now: i64) -> Result<(), StoreError> {
    c.execute(
        "UPDATE oauth_grants SET revoked_at = $2, refresh_hash = NULL WHERE id = $1 AND revoked_at IS NULL",
        &[&grant, &now],
    )
    .await?;
    c.execute(
        "UPDATE tokens SET revoked_at = $2 WHERE grant_id = $1 AND revoked_at IS NULL",
        &[&grant, &now],
    )
    .await?;
    Ok(())
}

impl OAuth for Postgres {
    async fn register_client(&self, client: ClientRecord, now: i64) -> Result<(), StoreError> {
        self.write(async |txn| {
            let uris = serde_json::to_string(&client.redirect_uris)
                .map_err(|e| StoreError::Internal(e.to_string()))?;
            txn
                .execute(
                    "INSERT INTO oauth_clients(id, name, redirect_uris, registered_at) VALUES($1, $2, $3, $4)
                     ON CONFLICT(id) DO UPDATE SET name = excluded.name, redirect_uris = excluded.redirect_uris",
                    &[&client.id, &client.name, &uris, &now],
                )
                .await?;
            Ok(())
        })
        .await
    }

    async fn forget_unused_clients(
        &self,
        registered_before: i64,
        now: i64,
    ) -> Result<u64, StoreError> {
        self.write(async |txn| {
            Ok(txn
                .execute(
                    "DELETE FROM oauth_clients c WHERE c.registered_at < $1
                     AND NOT EXISTS (SELECT 1 FROM oauth_grants g
                                     WHERE g.client = c.id AND g.revoked_at IS NULL)
                     AND NOT EXISTS (SELECT 1 FROM oauth_codes k
                                     WHERE k.client = c.id AND k.expires_at > $2)",
                    &[&registered_before, &now],
                )
                .await?)
        })
        .await
    }

    async fn oauth_client(&self, id: &str) -> Result<Option<ClientRecord>, StoreError> {
        let c = self.client().await?;
        let stmt = c
            .prepare_cached("SELECT id, name, redirect_uris FROM oauth_clients WHERE id = $1")
            .await?;
        c.query_opt(&stmt, &[&id])
            .await?
            .map(|r| {
                let redirect_uris = serde_json::from_str(r.get(2))
                    .map_err(|e| StoreError::Internal(format!("a client's redirect URIs: {e}")))?;
                Ok(ClientRecord {
                    id: r.get(0),
                    name: r.get(1),
                    redirect_uris,
                })
            })
            .transpose()
    }

    async fn add_code(&self, code: NewCode) -> Result<(), StoreError> {
        self.write(async |txn| {
            txn
                .execute(
                    "INSERT INTO oauth_codes(hash, client, person, redirect_uri, challenge, resource, expires_at)
                     VALUES($1, $2, $3, $4, $5, $6, $7)",
                    &[
                        &code.hash,
                        &code.client,
                        &code.person,
                        &code.redirect_uri,
                        &code.challenge,
                        &code.resource,
                        &code.expires_at,
                    ],
                )
                .await?;
            Ok(())
        })
        .await
    }

    async fn redeem_code(&self, hash: &str, now: i64) -> Result<Redeemed, StoreError> {
        self.write(async |txn| {
            let found = txn
                .query_opt(
                    "SELECT client, person, redirect_uri, challenge, resource, expires_at, used_at, grant_id
                     FROM oauth_codes WHERE hash = $1 FOR UPDATE",
                    &[&hash],
                )
                .await?;
            let Some(r) = found else {
                return Ok(Redeemed::Unknown);
            };
            let code = CodeRecord {
                client: r.get(0),
                person: r.get(1),
                redirect_uri: r.get(2),
                challenge: r.get(3),
                resource: r.get(4),
            };
            let (expires_at, used_at, grant): (i64, Option<i64>, Option<i64>) =
                (r.get(5), r.get(6), r.get(7));
            let redeemed = if used_at.is_some() {
                if let Some(grant) = grant {
                    revoke_grant(txn, grant, now).await?;
                }
                Redeemed::Reused
            } else {
                txn.execute(
                    "UPDATE oauth_codes SET used_at = $2 WHERE hash = $1",
                    &[&hash, &now],
                )
                .await?;
                if expires_at <= now {
                    Redeemed::Expired
                } else {
                    Redeemed::Fresh(code)
                }
            };
            Ok(redeemed)
        })
        .await
    }

    async fn open_grant(
        &self,
        code_hash: &str,
        code: CodeRecord,
        access: NewToken,
        refresh_hash: &str,
        now: i64,
    ) -> Result<i64, StoreError> {
        self.write(async |txn| {
            let grant: i64 = txn
                .query_one(
                    "INSERT INTO oauth_grants(client, person, resource, refresh_hash, created_at)
                     VALUES($1, $2, $3, $4, $5) RETURNING id",
                    &[
                        &code.client,
                        &code.person,
                        &code.resource,
                        &refresh_hash,
                        &now,
                    ],
                )
                .await?
                .get(0);
            txn.execute(
                "UPDATE oauth_codes SET grant_id = $2 WHERE hash = $1",
                &[&code_hash, &grant],
            )
            .await?;
            insert_token(txn, &access, Some((grant, &code.resource))).await?;
            Ok(grant)
        })
        .await
    }

    async fn refresh_grant(
        &self,
        hash: &str,
        client: &str,
        access: NewToken,
        new_refresh: &str,
        now: i64,
    ) -> Result<Refreshed, StoreError> {
        self.write(async |txn| {
            let spent: Option<i64> = txn
                .query_opt(
                    "SELECT grant_id FROM oauth_spent_refresh WHERE hash = $1",
                    &[&hash],
                )
                .await?
                .map(|r| r.get(0));
            if let Some(grant) = spent {
                revoke_grant(txn, grant, now).await?;
                return Ok(Refreshed::Reused);
            }
            let live: Option<(i64, String, String)> = txn
                .query_opt(
                    "SELECT id, client, resource FROM oauth_grants
                     WHERE refresh_hash = $1 AND revoked_at IS NULL AND person = $2 FOR UPDATE",
                    &[&hash, &access.person],
                )
                .await?
                .map(|r| (r.get(0), r.get(1), r.get(2)));
            let Some((grant, client, resource)) = live.filter(|(_, kept, _)| kept == client) else {
                return Ok(Refreshed::Unknown);
            };
            txn.execute(
                "INSERT INTO oauth_spent_refresh(hash, grant_id) VALUES($1, $2)",
                &[&hash, &grant],
            )
            .await?;
            txn.execute(
                "UPDATE oauth_grants SET refresh_hash = $2 WHERE id = $1",
                &[&grant, &new_refresh],
            )
            .await?;
            insert_token(txn, &access, Some((grant, &resource))).await?;
            Ok(Refreshed::Rotated { client, resource })
        })
        .await
    }

    async fn refresh_person(&self, hash: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .client()
            .await?
            .query_opt(
                "SELECT person FROM oauth_grants WHERE refresh_hash = $1 AND revoked_at IS NULL
                 UNION ALL
                 SELECT g.person FROM oauth_spent_refresh s JOIN oauth_grants g ON g.id = s.grant_id
                 WHERE s.hash = $1
                 LIMIT 1",
                &[&hash],
            )
            .await?
            .map(|r| r.get(0)))
    }

    async fn revoke_grant_of(&self, hash: &str, now: i64) -> Result<bool, StoreError> {
        self.write(async |txn| {
            let grant: Option<i64> = txn
                .query_opt(
                    "SELECT id FROM oauth_grants WHERE refresh_hash = $1
                     UNION ALL SELECT grant_id FROM tokens WHERE hash = $1 AND grant_id IS NOT NULL
                     LIMIT 1",
                    &[&hash],
                )
                .await?
                .map(|r| r.get(0));
            let Some(grant) = grant else {
                return Ok(false);
            };
            revoke_grant(txn, grant, now).await?;
            Ok(true)
        })
        .await
    }

    async fn grants(&self, person: Option<&str>) -> Result<Vec<TokenRecord>, StoreError> {
        Ok(self
            .client()
            .await?
            .query(
                "SELECT g.id, COALESCE(c.name, g.client), p.eid, p.handle, p.name, g.created_at,
                (SELECT MAX(t.last_used_at) FROM tokens t WHERE t.grant_id = g.id)
         FROM oauth_grants g JOIN people p ON p.eid = g.person
              LEFT JOIN oauth_clients c ON c.id = g.client
         WHERE g.revoked_at IS NULL AND ($1::TEXT IS NULL OR g.person = $1)
         ORDER BY g.id",
                &[&person],
            )
            .await?
            .iter()
            .map(|r| {
                crate::oauth::grant_record(r.get(0), r.get(1), person_at(r, 2), r.get(5), r.get(6))
            })
            .collect())
    }

    async fn revoke_grant(&self, id: i64, now: i64) -> Result<bool, StoreError> {
        self.write(async |txn| {
            let live = txn
                .query_opt(
                    "SELECT 1 FROM oauth_grants WHERE id = $1 AND revoked_at IS NULL FOR UPDATE",
                    &[&id],
                )
                .await?
                .is_some();
            revoke_grant(txn, id, now).await?;
            Ok(live)
        })
        .await
    }
}
