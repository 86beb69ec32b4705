//! Passkeys and their ceremonies' states on PostgreSQL (the shapes:
//! `src/passkeys.rs`) — SQLite's statements (`sqlite/passkeys.rs`) in
//! PostgreSQL's words. A ceremony is taken with one `DELETE … RETURNING`,
//! so a state finished twice at once, on two servers, is taken once; one
//! kept under caps is counted and kept under a lock of the ceremonies'
//! table, so servers keeping them at once cannot pass the caps together.

use deadpool_postgres::GenericClient;
use tokio_postgres::Row;

use super::Postgres;
use crate::StoreError;
use crate::passkeys::{
    CeremonyCaps, CeremonyKept, CeremonyKind, CeremonyRecord, NewCeremony, NewPasskey,
    PasskeyRecord,
};
use crate::records::Passkeys;

/// The tables, appended to the store's migrations.
pub(super) const MIGRATION: &str = r#"
    CREATE TABLE passkeys(
        id BIGSERIAL PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        credential TEXT NOT NULL UNIQUE,
        passkey TEXT NOT NULL,
        name TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        last_used_at BIGINT
    );
    CREATE INDEX passkeys_person ON passkeys(person);
    CREATE TABLE passkey_ceremonies(
        hash TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK(kind IN ('register', 'sign-in')),
        person TEXT REFERENCES people(eid),
        name TEXT,
        state TEXT NOT NULL,
        expires_at BIGINT NOT NULL
    );
    CREATE INDEX passkey_ceremonies_expiry ON passkey_ceremonies(expires_at);
"#;

/// Where a ceremony was started from, appended to the store's migrations.
pub(super) const ADDRESS_MIGRATION: &str =
    "ALTER TABLE passkey_ceremonies ADD COLUMN address TEXT;";

const PASSKEY_COLUMNS: &str =
    "id, person, credential, passkey, name, created_at, last_used_at FROM passkeys";

fn passkey(r: &Row) -> PasskeyRecord {
    PasskeyRecord {
        id: r.get(0),
        person: r.get(1),
        credential: r.get(2),
        passkey: r.get(3),
        name: r.get(4),
        created_at: r.get(5),
        last_used_at: r.get(6),
    }
}

/// Forgets a person's passkeys and ceremonies: part of removing them.
pub(super) async fn remove_persons_passkeys(
    c: &impl GenericClient,
    person: &str,
) -> Result<(), StoreError> {
    c.execute("DELETE FROM passkeys WHERE person = $1", &[&person])
        .await?;
    c.execute(
        "DELETE FROM passkey_ceremonies WHERE person = $1",
        &[&person],
    )
    .await?;
    Ok(())
}

impl Passkeys for Postgres {
    async fn add_passkey(&self, new: NewPasskey) -> Result<Option<i64>, StoreError> {
        self.write(async |txn| {
            Ok(txn
                .query_opt(
                    "INSERT INTO passkeys(person, credential, passkey, name, created_at)
                     VALUES($1, $2, $3, $4, $5) ON CONFLICT(credential) DO NOTHING RETURNING id",
                    &[
                        &new.person,
                        &new.credential,
                        &new.passkey,
                        &new.name,
                        &new.created_at,
                    ],
                )
                .await?
                .map(|r| r.get(0)))
        })
        .await
    }

    async fn passkeys(&self, person: &str) -> Result<Vec<PasskeyRecord>, StoreError> {
        let c = self.client().await?;
        let stmt = c
            .prepare_cached(&format!(
                "SELECT {PASSKEY_COLUMNS} WHERE person = $1 ORDER BY id"
            ))
            .await?;
        Ok(c.query(&stmt, &[&person])
            .await?
            .iter()
            .map(passkey)
            .collect())
    }

    async fn passkey_by_credential(
        &self,
        credential: &str,
    ) -> Result<Option<PasskeyRecord>, StoreError> {
        let c = self.client().await?;
        let stmt = c
            .prepare_cached(&format!("SELECT {PASSKEY_COLUMNS} WHERE credential = $1"))
            .await?;
        Ok(c.query_opt(&stmt, &[&credential])
            .await?
            .as_ref()
            .map(passkey))
    }

    async fn passkey_used(&self, id: i64, passkey: &str, now: i64) -> Result<bool, StoreError> {
        self.write(async |txn| {
            Ok(txn
                .execute(
                    "UPDATE passkeys SET passkey = $2, last_used_at = $3 WHERE id = $1",
                    &[&id, &passkey, &now],
                )
                .await?
                == 1)
        })
        .await
    }

    async fn remove_passkey(&self, person: &str, id: i64) -> Result<bool, StoreError> {
        self.write(async |txn| {
            Ok(txn
                .execute(
                    "DELETE FROM passkeys WHERE id = $1 AND person = $2",
                    &[&id, &person],
                )
                .await?
                == 1)
        })
        .await
    }

    async fn add_ceremony(
        &self,
        new: NewCeremony,
        now: i64,
        caps: Option<CeremonyCaps>,
    ) -> Result<CeremonyKept, StoreError> {
        self.write(async |txn| {
            if caps.is_some() {
                // Self-excluding, and excluding every other writer of the
                // table: one count-then-keep at a time, on every server.
                txn.batch_execute("LOCK TABLE passkey_ceremonies IN SHARE ROW EXCLUSIVE MODE")
                    .await?;
            }
            txn.execute(
                "DELETE FROM passkey_ceremonies WHERE expires_at <= $1",
                &[&now],
            )
            .await?;
            if caps.is_some() {
                let counted = txn
                    .query_one(
                        "SELECT COUNT(*), COUNT(*) FILTER (WHERE address IS NOT DISTINCT FROM $2)
                         FROM passkey_ceremonies WHERE kind = $1",
                        &[&new.kind.as_str(), &new.address],
                    )
                    .await?;
                let kept = CeremonyKept::under(caps, counted.get(0), counted.get(1));
                if kept != CeremonyKept::Kept {
                    return Ok(kept);
                }
            }
            txn.execute(
                "INSERT INTO passkey_ceremonies(hash, kind, person, name, state, expires_at, address)
                 VALUES($1, $2, $3, $4, $5, $6, $7)",
                &[
                    &new.hash,
                    &new.kind.as_str(),
                    &new.person,
                    &new.name,
                    &new.state,
                    &new.expires_at,
                    &new.address,
                ],
            )
            .await?;
            Ok(CeremonyKept::Kept)
        })
        .await
    }

    async fn take_ceremony(
        &self,
        hash: &str,
        kind: CeremonyKind,
        now: i64,
    ) -> Result<Option<CeremonyRecord>, StoreError> {
        self.write(async |txn| {
            Ok(txn
                .query_opt(
                    "DELETE FROM passkey_ceremonies WHERE hash = $1 AND kind = $2 AND expires_at > $3
                     RETURNING person, name, state",
                    &[&hash, &kind.as_str(), &now],
                )
                .await?
                .map(|r| CeremonyRecord {
                    person: r.get(0),
                    name: r.get(1),
                    state: r.get(2),
                }))
        })
        .await
    }
}
