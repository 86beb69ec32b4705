//! OAuth's clients, codes and grants (the shapes: `src/oauth.rs`), written
//! once for both backends ([`Records`]). Each call that reads and then
//! writes runs in one transaction and holds the row it read
//! ([`Txn::LOCK`]), so a code or a refresh token presented twice at once,
//! to two servers, is spent once.

use super::{FromRow, ReadRows, Statement, person_at};
use crate::StoreError;
use crate::oauth::{ClientRecord, CodeRecord, NewCode, Redeemed, Refreshed};
use crate::revocable::{NewToken, TokenRecord};
use crate::txn::{Records, Row, Txn, args};

impl FromRow for ClientRecord {
    fn from_row(r: Row) -> Result<ClientRecord, StoreError> {
        let redirect_uris = serde_json::from_str(&r.get::<String>(2)?)
            .map_err(|e| StoreError::Internal(format!("a client's redirect URIs: {e}")))?;
        Ok(ClientRecord {
            id: r.get(0)?,
            name: r.get(1)?,
            redirect_uris,
        })
    }
}

/// Keeps a token (a grant's access token with its grant and resource):
/// its id.
pub(crate) async fn insert_token(
    t: &impl Txn,
    token: &NewToken,
    grant: Option<(i64, &str)>,
) -> Result<i64, StoreError> {
    let (grant, resource) = grant.unzip();
    t.one_as(
        "INSERT INTO tokens(person, hash, created_at, name, expires_at, grant_id, resource)
         VALUES($1, $2, $3, $4, $5, $6, $7) RETURNING id",
        args![
            &token.person,
            &token.hash,
            crate::records::now(),
            token.name.as_deref(),
            token.expires_at,
            grant,
            resource
        ],
    )
    .await
}

async fn revoke_grant(t: &impl Txn, grant: i64, now: i64) -> Result<(), StoreError> {
    t.execute(
        "UPDATE oauth_grants SET revoked_at = $2, refresh_hash = NULL
         WHERE id = $1 AND revoked_at IS NULL",
        args![grant, now],
    )
    .await?;
    t.execute(
        "UPDATE tokens SET revoked_at = $2 WHERE grant_id = $1 AND revoked_at IS NULL",
        args![grant, now],
    )
    .await?;
    Ok(())
}

/// Whether grant `id` is live, its row held to the transaction's end.
async fn grant_live<T: Txn>(t: &T, id: i64) -> Result<bool, StoreError> {
    let sql = format!(
        "SELECT 1 FROM oauth_grants WHERE id = $1 AND revoked_at IS NULL{}",
        T::LOCK
    );
    Ok(t.optional(&sql, args![id]).await?.is_some())
}

async fn redeem<T: Txn>(t: &T, hash: &str, now: i64) -> Result<Redeemed, StoreError> {
    let found = t
        .optional(
            &format!(
                "SELECT client, person, redirect_uri, challenge, resource, expires_at, used_at,
                        grant_id
                 FROM oauth_codes WHERE hash = $1{}",
                T::LOCK
            ),
            args![hash],
        )
        .await?;
    let Some(r) = found else {
        return Ok(Redeemed::Unknown);
    };
    let code = CodeRecord {
        client: r.get(0)?,
        person: r.get(1)?,
        redirect_uri: r.get(2)?,
        challenge: r.get(3)?,
        resource: r.get(4)?,
    };
    let (expires_at, used_at, grant): (i64, Option<i64>, Option<i64>) =
        (r.get(5)?, r.get(6)?, r.get(7)?);
    if used_at.is_some() {
        if let Some(grant) = grant {
            revoke_grant(t, grant, now).await?;
        }
        return Ok(Redeemed::Reused);
    }
    t.execute(
        "UPDATE oauth_codes SET used_at = $2 WHERE hash = $1",
        args![hash, now],
    )
    .await?;
    if expires_at <= now {
        return Ok(Redeemed::Expired);
    }
    Ok(Redeemed::Fresh(code))
}

async fn refresh<T: Txn>(
    t: &T,
    hash: &str,
    client_id: &str,
    access: &NewToken,
    new_refresh: &str,
    now: i64,
) -> Result<Refreshed, StoreError> {
    let spent = t
        .optional_as(
            "SELECT grant_id FROM oauth_spent_refresh WHERE hash = $1",
            args![hash],
        )
        .await?;
    if let Some(spent) = spent {
        revoke_grant(t, spent, now).await?;
        return Ok(Refreshed::Reused);
    }
    let live = t
        .optional(
            &format!(
                "SELECT id, client, resource FROM oauth_grants
                 WHERE refresh_hash = $1 AND revoked_at IS NULL AND person = $2{}",
                T::LOCK
            ),
            args![hash, &access.person],
        )
        .await?;
    let Some(live) = live else {
        return Ok(Refreshed::Unknown);
    };
    let (grant, client, resource): (i64, String, String) =
        (live.get(0)?, live.get(1)?, live.get(2)?);
    if client != client_id {
        return Ok(Refreshed::Unknown);
    }
    t.execute(
        "INSERT INTO oauth_spent_refresh(hash, grant_id) VALUES($1, $2)",
        args![hash, grant],
    )
    .await?;
    t.execute(
        "UPDATE oauth_grants SET refresh_hash = $2 WHERE id = $1",
        args![grant, new_refresh],
    )
    .await?;
    insert_token(t, access, Some((grant, &resource))).await?;
    Ok(Refreshed::Rotated { client, resource })
}

impl<B: Records> super::OAuth for B {
    async fn register_client(&self, client: ClientRecord, now: i64) -> Result<(), StoreError> {
        let uris = serde_json::to_string(&client.redirect_uris)
            .map_err(|e| StoreError::Internal(e.to_string()))?;
        super::write_statement(
            self,
            "INSERT INTO oauth_clients(id, name, redirect_uris, registered_at)
             VALUES($1, $2, $3, $4)
             ON CONFLICT(id) DO UPDATE
             SET name = excluded.name, redirect_uris = excluded.redirect_uris",
            args![&client.id, &client.name, &uris, now],
        )
        .await?;
        Ok(())
    }

    async fn forget_unused_clients(
        &self,
        registered_before: i64,
        now: i64,
    ) -> Result<u64, StoreError> {
        super::write_statement(
            self,
            "DELETE FROM oauth_clients WHERE registered_at < $1
             AND NOT EXISTS (SELECT 1 FROM oauth_grants g
                             WHERE g.client = oauth_clients.id AND g.revoked_at IS NULL)
             AND NOT EXISTS (SELECT 1 FROM oauth_codes k
                             WHERE k.client = oauth_clients.id AND k.expires_at > $2)",
            args![registered_before, now],
        )
        .await
    }

    async fn oauth_client(&self, id: &str) -> Result<Option<ClientRecord>, StoreError> {
        self.read_optional(
            "SELECT id, name, redirect_uris FROM oauth_clients WHERE id = $1",
            args![id],
        )
        .await
    }

    async fn add_code(&self, code: NewCode) -> Result<(), StoreError> {
        super::write_statement(
            self,
            "INSERT INTO oauth_codes(hash, client, person, redirect_uri, challenge, resource,
                                     expires_at)
             VALUES($1, $2, $3, $4, $5, $6, $7)",
            args![
                &code.hash,
                &code.client,
                &code.person,
                &code.redirect_uri,
                &code.challenge,
                &code.resource,
                code.expires_at
            ],
        )
        .await?;
        Ok(())
    }

    async fn redeem_code(&self, hash: &str, now: i64) -> Result<Redeemed, StoreError> {
        let hash = hash.to_string();
        self.write_records(async move |t| redeem(t, &hash, now).await)
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
        let (code_hash, refresh_hash) = (code_hash.to_string(), refresh_hash.to_string());
        self.write_records(async move |t| {
            let grant: i64 = t
                .one_as(
                    "INSERT INTO oauth_grants(client, person, resource, refresh_hash, created_at)
                     VALUES($1, $2, $3, $4, $5) RETURNING id",
                    args![
                        &code.client,
                        &code.person,
                        &code.resource,
                        &refresh_hash,
                        now
                    ],
                )
                .await?;
            t.execute(
                "UPDATE oauth_codes SET grant_id = $2 WHERE hash = $1",
                args![&code_hash, grant],
            )
            .await?;
            insert_token(t, &access, Some((grant, &code.resource))).await?;
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
        let [hash, client, new_refresh] = [hash, client, new_refresh].map(str::to_string);
        self.write_records(async move |t| {
            refresh(t, &hash, &client, &access, &new_refresh, now).await
        })
        .await
    }

    async fn refresh_person(&self, hash: &str) -> Result<Option<String>, StoreError> {
        self.read_optional(
            "SELECT person FROM oauth_grants WHERE refresh_hash = $1 AND revoked_at IS NULL
             UNION ALL
             SELECT g.person FROM oauth_spent_refresh s
             JOIN oauth_grants g ON g.id = s.grant_id WHERE s.hash = $1
             LIMIT 1",
            args![hash],
        )
        .await
    }

    async fn revoke_grant_of(&self, hash: &str, now: i64) -> Result<bool, StoreError> {
        let hash = hash.to_string();
        self.write_records(async move |t| {
            let Some(grant) = t
                .optional_as(
                    "SELECT id FROM oauth_grants WHERE refresh_hash = $1
                     UNION ALL SELECT grant_id FROM tokens WHERE hash = $1 AND grant_id IS NOT NULL
                     LIMIT 1",
                    args![&hash],
                )
                .await?
            else {
                return Ok(false);
            };
            revoke_grant(t, grant, now).await?;
            Ok(true)
        })
        .await
    }

    async fn grants(&self, person: Option<&str>) -> Result<Vec<TokenRecord>, StoreError> {
        self.read_records(async |t| {
            t.all(
                "SELECT g.id, COALESCE(c.name, g.client), p.eid, p.handle, p.name, g.created_at,
                        (SELECT MAX(t.last_used_at) FROM tokens t WHERE t.grant_id = g.id)
                 FROM oauth_grants g JOIN people p ON p.eid = g.person
                      LEFT JOIN oauth_clients c ON c.id = g.client
                 WHERE g.revoked_at IS NULL AND (CAST($1 AS TEXT) IS NULL OR g.person = $1)
                 ORDER BY g.id",
                args![person],
            )
            .await?
            .into_iter()
            .map(|r| {
                Ok(crate::oauth::grant_record(
                    r.get(0)?,
                    r.get(1)?,
                    person_at(&r, 2)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            })
            .collect()
        })
        .await
    }

    async fn revoke_grant(&self, id: i64, now: i64) -> Result<bool, StoreError> {
        self.write_records(async move |t| {
            let live = grant_live(t, id).await?;
            revoke_grant(t, id, now).await?;
            Ok(live)
        })
        .await
    }
}
