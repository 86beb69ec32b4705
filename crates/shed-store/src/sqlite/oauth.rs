//! OAuth's clients, codes and grants on SQLite (the shapes:
//! `src/oauth.rs`).

use rusqlite::{Connection, OptionalExtension, params};

use super::Sqlite;
use super::people::person_at;
use super::revocable::insert_token;
use crate::StoreError;
use crate::oauth::{ClientRecord, CodeRecord, NewCode, Redeemed, Refreshed};
use crate::revocable::{NewToken, TokenRecord};

/// The tables, appended to the store's migrations.
pub(crate) const MIGRATION: &str = r#"
    CREATE TABLE oauth_clients(
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        redirect_uris TEXT NOT NULL,
        registered_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE oauth_grants(
        id INTEGER PRIMARY KEY,
        client TEXT NOT NULL,
        person TEXT NOT NULL REFERENCES people(eid),
        resource TEXT NOT NULL,
        refresh_hash TEXT UNIQUE,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
    );
    CREATE INDEX oauth_grants_person ON oauth_grants(person);
    CREATE TABLE oauth_codes(
        hash TEXT PRIMARY KEY,
        client TEXT NOT NULL,
        person TEXT NOT NULL REFERENCES people(eid),
        redirect_uri TEXT NOT NULL,
        challenge TEXT NOT NULL,
        resource TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER,
        grant_id INTEGER REFERENCES oauth_grants(id)
    ) WITHOUT ROWID;
    CREATE TABLE oauth_spent_refresh(
        hash TEXT PRIMARY KEY,
        grant_id INTEGER NOT NULL REFERENCES oauth_grants(id)
    ) WITHOUT ROWID;
    ALTER TABLE tokens ADD COLUMN grant_id INTEGER REFERENCES oauth_grants(id);
    ALTER TABLE tokens ADD COLUMN resource TEXT;
"#;

fn client(conn: &Connection, id: &str) -> Result<Option<ClientRecord>, StoreError> {
    let mut stmt =
        conn.prepare_cached("SELECT id, name, redirect_uris FROM oauth_clients WHERE id = ?1")?;
    let found: Option<(String, String, String)> = stmt
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    found
        .map(|(id, name, uris)| {
            let redirect_uris = serde_json::from_str(&uris)
                .map_err(|e| StoreError::Internal(format!("a client's redirect URIs: {e}")))?;
            Ok(ClientRecord {
                id,
                name,
                redirect_uris,
            })
        })
        .transpose()
}

fn revoke_grant(conn: &Connection, grant: i64, now: i64) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE oauth_grants SET revoked_at = ?2, refresh_hash = NULL WHERE id = ?1 AND revoked_at IS NULL",
        params![grant, now],
    )?;
    conn.execute(
        "UPDATE tokens SET revoked_at = ?2 WHERE grant_id = ?1 AND revoked_at IS NULL",
        params![grant, now],
    )?;
    Ok(())
}

fn grants(conn: &Connection, person: Option<&str>) -> Result<Vec<TokenRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT g.id, COALESCE(c.name, g.client), p.eid, p.handle, p.name, g.created_at,
                (SELECT MAX(t.last_used_at) FROM tokens t WHERE t.grant_id = g.id)
         FROM oauth_grants g JOIN people p ON p.eid = g.person
              LEFT JOIN oauth_clients c ON c.id = g.client
         WHERE g.revoked_at IS NULL AND (?1 IS NULL OR g.person = ?1)
         ORDER BY g.id",
    )?;
    let rows = stmt.query_map(params![person], |r| {
        Ok(crate::oauth::grant_record(
            r.get(0)?,
            r.get(1)?,
            person_at(r, 2)?,
            r.get(5)?,
            r.get(6)?,
        ))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn redeem(conn: &Connection, hash: &str, now: i64) -> Result<Redeemed, StoreError> {
    type Row = (CodeRecord, i64, Option<i64>, Option<i64>);
    let found: Option<Row> = conn
        .query_row(
            "SELECT client, person, redirect_uri, challenge, resource, expires_at, used_at, grant_id
             FROM oauth_codes WHERE hash = ?1",
            [hash],
            |r| {
                Ok((
                    CodeRecord {
                        client: r.get(0)?,
                        person: r.get(1)?,
                        redirect_uri: r.get(2)?,
                        challenge: r.get(3)?,
                        resource: r.get(4)?,
                    },
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                ))
            },
        )
        .optional()?;
    let Some((code, expires_at, used_at, grant)) = found else {
        return Ok(Redeemed::Unknown);
    };
    if used_at.is_some() {
        if let Some(grant) = grant {
            revoke_grant(conn, grant, now)?;
        }
        return Ok(Redeemed::Reused);
    }
    conn.execute(
        "UPDATE oauth_codes SET used_at = ?2 WHERE hash = ?1",
        params![hash, now],
    )?;
    if expires_at <= now {
        return Ok(Redeemed::Expired);
    }
    Ok(Redeemed::Fresh(code))
}

fn open_grant(
    conn: &Connection,
    code_hash: &str,
    code: &CodeRecord,
    access: &NewToken,
    refresh_hash: &str,
    now: i64,
) -> Result<i64, StoreError> {
    conn.execute(
        "INSERT INTO oauth_grants(client, person, resource, refresh_hash, created_at)
         VALUES(?1, ?2, ?3, ?4, ?5)",
        params![code.client, code.person, code.resource, refresh_hash, now],
    )?;
    let grant = conn.last_insert_rowid();
    conn.execute(
        "UPDATE oauth_codes SET grant_id = ?2 WHERE hash = ?1",
        params![code_hash, grant],
    )?;
    insert_token(conn, access, Some((grant, &code.resource)))?;
    Ok(grant)
}

fn refresh(
    conn: &Connection,
    hash: &str,
    client_id: &str,
    access: &NewToken,
    new_refresh: &str,
    now: i64,
) -> Result<Refreshed, StoreError> {
    let spent: Option<i64> = conn
        .query_row(
            "SELECT grant_id FROM oauth_spent_refresh WHERE hash = ?1",
            [hash],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(grant) = spent {
        revoke_grant(conn, grant, now)?;
        return Ok(Refreshed::Reused);
    }
    let live: Option<(i64, String, String)> = conn
        .query_row(
            "SELECT id, client, resource FROM oauth_grants
             WHERE refresh_hash = ?1 AND revoked_at IS NULL AND person = ?2",
            params![hash, access.person],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let Some((grant, client, resource)) = live.filter(|(_, client, _)| client == client_id) else {
        return Ok(Refreshed::Unknown);
    };
    conn.execute(
        "INSERT INTO oauth_spent_refresh(hash, grant_id) VALUES(?1, ?2)",
        params![hash, grant],
    )?;
    conn.execute(
        "UPDATE oauth_grants SET refresh_hash = ?2 WHERE id = ?1",
        params![grant, new_refresh],
    )?;
    insert_token(conn, access, Some((grant, &resource)))?;
    Ok(Refreshed::Rotated { client, resource })
}

impl crate::records::OAuth for Sqlite {
    async fn register_client(&self, client: ClientRecord, now: i64) -> Result<(), StoreError> {
        self.write(move |txn| {
            let uris = serde_json::to_string(&client.redirect_uris)
                .map_err(|e| StoreError::Internal(e.to_string()))?;
            txn.execute(
                "INSERT INTO oauth_clients(id, name, redirect_uris, registered_at) VALUES(?1, ?2, ?3, ?4)
                 ON CONFLICT(id) DO UPDATE SET name = excluded.name, redirect_uris = excluded.redirect_uris",
                params![client.id, client.name, uris, now],
            )?;
            Ok(())
        })
        .await
    }

    async fn forget_unused_clients(
        &self,
        registered_before: i64,
        now: i64,
    ) -> Result<u64, StoreError> {
        self.write(move |txn| {
            let forgotten = txn.execute(
                "DELETE FROM oauth_clients WHERE registered_at < ?1
                 AND NOT EXISTS (SELECT 1 FROM oauth_grants g
                                 WHERE g.client = oauth_clients.id AND g.revoked_at IS NULL)
                 AND NOT EXISTS (SELECT 1 FROM oauth_codes k
                                 WHERE k.client = oauth_clients.id AND k.expires_at > ?2)",
                params![registered_before, now],
            )?;
            Ok(forgotten as u64)
        })
        .await
    }

    async fn oauth_client(&self, id: &str) -> Result<Option<ClientRecord>, StoreError> {
        self.read(|conn| client(conn, id)).await
    }

    async fn add_code(&self, code: NewCode) -> Result<(), StoreError> {
        self.write(move |txn| {
            txn.execute(
                "INSERT INTO oauth_codes(hash, client, person, redirect_uri, challenge, resource, expires_at)
                 VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    code.hash,
                    code.client,
                    code.person,
                    code.redirect_uri,
                    code.challenge,
                    code.resource,
                    code.expires_at
                ],
            )?;
            Ok(())
        })
        .await
    }

    async fn redeem_code(&self, hash: &str, now: i64) -> Result<Redeemed, StoreError> {
        let hash = hash.to_string();
        self.write(move |txn| redeem(txn, &hash, now)).await
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
        self.write(move |txn| open_grant(txn, &code_hash, &code, &access, &refresh_hash, now))
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
        let (hash, client, new_refresh) = (
            hash.to_string(),
            client.to_string(),
            new_refresh.to_string(),
        );
        self.write(move |txn| refresh(txn, &hash, &client, &access, &new_refresh, now))
            .await
    }

    async fn refresh_person(&self, hash: &str) -> Result<Option<String>, StoreError> {
        self.read(|conn| {
            Ok(conn
                .query_row(
                    "SELECT person FROM oauth_grants WHERE refresh_hash = ?1 AND revoked_at IS NULL
                     UNION ALL
                     SELECT g.person FROM oauth_spent_refresh s JOIN oauth_grants g ON g.id = s.grant_id
                     WHERE s.hash = ?1
                     LIMIT 1",
                    [hash],
                    |r| r.get(0),
                )
                .optional()?)
        })
        .await
    }

    async fn revoke_grant_of(&self, hash: &str, now: i64) -> Result<bool, StoreError> {
        let hash = hash.to_string();
        self.write(move |txn| {
            let grant: Option<i64> = txn
                .query_row(
                    "SELECT id FROM oauth_grants WHERE refresh_hash = ?1
                     UNION ALL SELECT grant_id FROM tokens WHERE hash = ?1 AND grant_id IS NOT NULL
                     LIMIT 1",
                    [&hash],
                    |r| r.get(0),
                )
                .optional()?;
            match grant {
                Some(grant) => {
                    revoke_grant(txn, grant, now)?;
                    Ok(true)
                }
                None => Ok(false),
            }
        })
        .await
    }

    async fn grants(&self, person: Option<&str>) -> Result<Vec<TokenRecord>, StoreError> {
        self.read(|conn| grants(conn, person)).await
    }

    async fn revoke_grant(&self, id: i64, now: i64) -> Result<bool, StoreError> {
        self.write(move |txn| {
            let live: bool = txn.query_row(
                "SELECT EXISTS(SELECT 1 FROM oauth_grants WHERE id = ?1 AND revoked_at IS NULL)",
                [id],
                |r| r.get(0),
            )?;
            revoke_grant(txn, id, now)?;
            Ok(live)
        })
        .await
    }
}
