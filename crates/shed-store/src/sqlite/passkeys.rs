//! Passkeys and their ceremonies' states on SQLite (`src/passkeys.rs`).

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::Sqlite;
use crate::StoreError;
use crate::passkeys::{
    CeremonyCaps, CeremonyKept, CeremonyKind, CeremonyRecord, NewCeremony, NewPasskey,
    PasskeyRecord,
};

/// The tables, appended to the store's migrations.
pub(crate) const MIGRATION: &str = r#"
    CREATE TABLE passkeys(
        id INTEGER PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        credential TEXT NOT NULL UNIQUE,
        passkey TEXT NOT NULL,
        name TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        last_used_at INTEGER
    );
    CREATE INDEX passkeys_person ON passkeys(person);
    CREATE TABLE passkey_ceremonies(
        hash TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK(kind IN ('register', 'sign-in')),
        person TEXT REFERENCES people(eid),
        name TEXT,
        state TEXT NOT NULL,
        expires_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX passkey_ceremonies_expiry ON passkey_ceremonies(expires_at);
"#;

/// Where a ceremony was started from, appended to the store's migrations.
pub(crate) const ADDRESS_MIGRATION: &str =
    "ALTER TABLE passkey_ceremonies ADD COLUMN address TEXT;";

const PASSKEY_COLUMNS: &str =
    "id, person, credential, passkey, name, created_at, last_used_at FROM passkeys";

fn passkey(r: &Row<'_>) -> rusqlite::Result<PasskeyRecord> {
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

fn add_passkey(conn: &Connection, new: &NewPasskey) -> Result<Option<i64>, StoreError> {
    Ok(conn
        .query_row(
            "INSERT INTO passkeys(person, credential, passkey, name, created_at)
             VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(credential) DO NOTHING RETURNING id",
            params![
                new.person,
                new.credential,
                new.passkey,
                new.name,
                new.created_at
            ],
            |r| r.get(0),
        )
        .optional()?)
}

fn add_ceremony(
    conn: &Connection,
    new: &NewCeremony,
    now: i64,
    caps: Option<CeremonyCaps>,
) -> Result<CeremonyKept, StoreError> {
    conn.execute(
        "DELETE FROM passkey_ceremonies WHERE expires_at <= ?1",
        [now],
    )?;
    if caps.is_some() {
        let (live, from_address): (i64, i64) = conn
            .prepare_cached(
                "SELECT COUNT(*), COALESCE(SUM(address IS ?2), 0)
                 FROM passkey_ceremonies WHERE kind = ?1",
            )?
            .query_row(params![new.kind.as_str(), new.address], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
        let kept = CeremonyKept::under(caps, live, from_address);
        if kept != CeremonyKept::Kept {
            return Ok(kept);
        }
    }
    conn.execute(
        "INSERT INTO passkey_ceremonies(hash, kind, person, name, state, expires_at, address)
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            new.hash,
            new.kind.as_str(),
            new.person,
            new.name,
            new.state,
            new.expires_at,
            new.address
        ],
    )?;
    Ok(CeremonyKept::Kept)
}

fn take_ceremony(
    conn: &Connection,
    hash: &str,
    kind: CeremonyKind,
    now: i64,
) -> Result<Option<CeremonyRecord>, StoreError> {
    Ok(conn
        .query_row(
            "DELETE FROM passkey_ceremonies WHERE hash = ?1 AND kind = ?2 AND expires_at > ?3
             RETURNING person, name, state",
            params![hash, kind.as_str(), now],
            |r| {
                Ok(CeremonyRecord {
                    person: r.get(0)?,
                    name: r.get(1)?,
                    state: r.get(2)?,
                })
            },
        )
        .optional()?)
}

/// Forgets a person's passkeys and ceremonies: part of removing them.
pub(super) fn remove_persons_passkeys(conn: &Connection, person: &str) -> Result<(), StoreError> {
    conn.execute("DELETE FROM passkeys WHERE person = ?1", [person])?;
    conn.execute("DELETE FROM passkey_ceremonies WHERE person = ?1", [person])?;
    Ok(())
}

impl crate::records::Passkeys for Sqlite {
    async fn add_passkey(&self, passkey: NewPasskey) -> Result<Option<i64>, StoreError> {
        self.write(move |txn| add_passkey(txn, &passkey)).await
    }

    async fn passkeys(&self, person: &str) -> Result<Vec<PasskeyRecord>, StoreError> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {PASSKEY_COLUMNS} WHERE person = ?1 ORDER BY id"
            ))?;
            let rows = stmt.query_map([person], passkey)?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }

    async fn passkey_by_credential(
        &self,
        credential: &str,
    ) -> Result<Option<PasskeyRecord>, StoreError> {
        self.read(|conn| {
            let mut stmt =
                conn.prepare_cached(&format!("SELECT {PASSKEY_COLUMNS} WHERE credential = ?1"))?;
            Ok(stmt.query_row([credential], passkey).optional()?)
        })
        .await
    }

    async fn passkey_used(&self, id: i64, passkey: &str, now: i64) -> Result<bool, StoreError> {
        let passkey = passkey.to_string();
        self.write(move |txn| {
            Ok(txn.execute(
                "UPDATE passkeys SET passkey = ?2, last_used_at = ?3 WHERE id = ?1",
                params![id, passkey, now],
            )? == 1)
        })
        .await
    }

    async fn remove_passkey(&self, person: &str, id: i64) -> Result<bool, StoreError> {
        let person = person.to_string();
        self.write(move |txn| {
            Ok(txn.execute(
                "DELETE FROM passkeys WHERE id = ?1 AND person = ?2",
                params![id, person],
            )? == 1)
        })
        .await
    }

    async fn add_ceremony(
        &self,
        ceremony: NewCeremony,
        now: i64,
        caps: Option<CeremonyCaps>,
    ) -> Result<CeremonyKept, StoreError> {
        self.write(move |txn| add_ceremony(txn, &ceremony, now, caps))
            .await
    }

    async fn take_ceremony(
        &self,
        hash: &str,
        kind: CeremonyKind,
        now: i64,
    ) -> Result<Option<CeremonyRecord>, StoreError> {
        let hash = hash.to_string();
        self.write(move |txn| take_ceremony(txn, &hash, kind, now))
            .await
    }
}
