//! Passkeys and their ceremonies' states (the shapes: `src/passkeys.rs`),
//! written once for both backends ([`Records`]). A ceremony is taken with
//! one `DELETE … RETURNING`, so a state finished twice at once, on two
//! servers, is taken once; one kept under caps is counted and kept under a
//! lock of the ceremonies' table, so servers keeping them at once cannot
//! pass the caps together.

use super::{FromRow, ReadRows, Statement};
use crate::StoreError;
use crate::passkeys::{
    CeremonyCaps, CeremonyKept, CeremonyKind, CeremonyRecord, NewCeremony, NewPasskey,
    PasskeyRecord,
};
use crate::txn::{Records, Row, Txn, args};

const PASSKEY_COLUMNS: &str =
    "id, person, credential, passkey, name, created_at, last_used_at FROM passkeys";

impl FromRow for PasskeyRecord {
    fn from_row(r: Row) -> Result<PasskeyRecord, StoreError> {
        Ok(PasskeyRecord {
            id: r.get(0)?,
            person: r.get(1)?,
            credential: r.get(2)?,
            passkey: r.get(3)?,
            name: r.get(4)?,
            created_at: r.get(5)?,
            last_used_at: r.get(6)?,
        })
    }
}

impl FromRow for CeremonyRecord {
    fn from_row(r: Row) -> Result<CeremonyRecord, StoreError> {
        Ok(CeremonyRecord {
            person: r.get(0)?,
            name: r.get(1)?,
            state: r.get(2)?,
        })
    }
}

/// Forgets a person's passkeys and ceremonies: part of removing them.
pub(crate) async fn remove_persons_passkeys(t: &impl Txn, person: &str) -> Result<(), StoreError> {
    t.execute("DELETE FROM passkeys WHERE person = $1", args![person])
        .await?;
    t.execute(
        "DELETE FROM passkey_ceremonies WHERE person = $1",
        args![person],
    )
    .await?;
    Ok(())
}

async fn add_ceremony(
    t: &impl Txn,
    new: &NewCeremony,
    now: i64,
    caps: Option<CeremonyCaps>,
) -> Result<CeremonyKept, StoreError> {
    if caps.is_some() {
        // Self-excluding, and excluding every other writer of the table:
        // one count-then-keep at a time, on every server.
        t.lock_table("passkey_ceremonies").await?;
    }
    t.execute(
        "DELETE FROM passkey_ceremonies WHERE expires_at <= $1",
        args![now],
    )
    .await?;
    if caps.is_some() {
        let (all, from_address) = t
            .one_as(
                "SELECT COUNT(*), COUNT(*) FILTER (WHERE address IS NOT DISTINCT FROM $2)
                 FROM passkey_ceremonies WHERE kind = $1",
                args![new.kind.as_str(), new.address.as_deref()],
            )
            .await?;
        let kept = CeremonyKept::under(caps, all, from_address);
        if kept != CeremonyKept::Kept {
            return Ok(kept);
        }
    }
    t.execute(
        "INSERT INTO passkey_ceremonies(hash, kind, person, name, state, expires_at, address)
         VALUES($1, $2, $3, $4, $5, $6, $7)",
        args![
            &new.hash,
            new.kind.as_str(),
            new.person.as_deref(),
            new.name.as_deref(),
            &new.state,
            new.expires_at,
            new.address.as_deref()
        ],
    )
    .await?;
    Ok(CeremonyKept::Kept)
}

impl<B: Records> super::Passkeys for B {
    async fn add_passkey(&self, new: NewPasskey) -> Result<Option<i64>, StoreError> {
        super::write_optional(
            self,
            "INSERT INTO passkeys(person, credential, passkey, name, created_at)
             VALUES($1, $2, $3, $4, $5) ON CONFLICT(credential) DO NOTHING RETURNING id",
            args![
                &new.person,
                &new.credential,
                &new.passkey,
                &new.name,
                new.created_at
            ],
        )
        .await
    }

    async fn passkeys(&self, person: &str) -> Result<Vec<PasskeyRecord>, StoreError> {
        let sql = format!("SELECT {PASSKEY_COLUMNS} WHERE person = $1 ORDER BY id");
        self.read_all(&sql, args![person]).await
    }

    async fn passkey_by_credential(
        &self,
        credential: &str,
    ) -> Result<Option<PasskeyRecord>, StoreError> {
        let sql = format!("SELECT {PASSKEY_COLUMNS} WHERE credential = $1");
        self.read_optional(&sql, args![credential]).await
    }

    async fn passkey_used(&self, id: i64, passkey: &str, now: i64) -> Result<bool, StoreError> {
        let sql = "UPDATE passkeys SET passkey = $2, last_used_at = $3 WHERE id = $1";
        Ok(super::write_statement(self, sql, args![id, passkey, now]).await? == 1)
    }

    async fn remove_passkey(&self, person: &str, id: i64) -> Result<bool, StoreError> {
        let sql = "DELETE FROM passkeys WHERE id = $1 AND person = $2";
        Ok(super::write_statement(self, sql, args![id, person]).await? == 1)
    }

    async fn add_ceremony(
        &self,
        ceremony: NewCeremony,
        now: i64,
        caps: Option<CeremonyCaps>,
    ) -> Result<CeremonyKept, StoreError> {
        self.write_records(async move |t| add_ceremony(t, &ceremony, now, caps).await)
            .await
    }

    async fn take_ceremony(
        &self,
        hash: &str,
        kind: CeremonyKind,
        now: i64,
    ) -> Result<Option<CeremonyRecord>, StoreError> {
        super::write_optional(
            self,
            "DELETE FROM passkey_ceremonies WHERE hash = $1 AND kind = $2 AND expires_at > $3
             RETURNING person, name, state",
            args![hash, kind.as_str(), now],
        )
        .await
    }
}
