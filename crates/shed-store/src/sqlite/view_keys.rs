//! View keys: what lets a view, drawn off-origin with no cookie, load its
//! private app's own files (`./style.css`, images) through its `<base href>`.
//! A key is made for one person and one app when the person reads the view;
//! only its sha256 is kept, with an expiry. Plain storage: who may have a
//! key, and what it opens, is decided in shed-host.

use rusqlite::{Connection, OptionalExtension, params};

use super::Sqlite;
use crate::{StoreError, ViewKey};

/// The table, appended to the store's migrations.
pub(crate) const MIGRATION: &str = r#"
    CREATE TABLE view_keys(
        hash TEXT PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        space TEXT NOT NULL,
        slug TEXT NOT NULL,
        expires_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX view_keys_expiry ON view_keys(expires_at);
"#;

fn add_key(
    conn: &Connection,
    key: &ViewKey<'_>,
    expires_at: i64,
    now: i64,
) -> Result<(), StoreError> {
    conn.execute("DELETE FROM view_keys WHERE expires_at <= ?1", [now])?;
    conn.execute(
        "INSERT INTO view_keys(hash, person, space, slug, expires_at) VALUES(?1, ?2, ?3, ?4, ?5)",
        params![key.hash, key.person, key.space, key.slug, expires_at],
    )?;
    Ok(())
}

fn key_person(
    conn: &Connection,
    hash: &str,
    space: &str,
    slug: &str,
    now: i64,
) -> Result<Option<String>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT person FROM view_keys WHERE hash = ?1 AND space = ?2 AND slug = ?3 AND expires_at > ?4",
    )?;
    Ok(stmt
        .query_row(params![hash, space, slug, now], |r| r.get(0))
        .optional()?)
}

impl crate::records::ViewKeys for Sqlite {
    async fn add_view_key(
        &self,
        key: ViewKey<'_>,
        expires_at: i64,
        now: i64,
    ) -> Result<(), StoreError> {
        let (hash, person, space, slug) = (
            key.hash.to_string(),
            key.person.to_string(),
            key.space.to_string(),
            key.slug.to_string(),
        );
        self.write(move |txn| {
            let key = ViewKey {
                hash: &hash,
                person: &person,
                space: &space,
                slug: &slug,
            };
            add_key(txn, &key, expires_at, now)
        })
        .await
    }

    async fn view_key_person(
        &self,
        hash: &str,
        space: &str,
        slug: &str,
        now: i64,
    ) -> Result<Option<String>, StoreError> {
        self.read(|conn| key_person(conn, hash, space, slug, now))
            .await
    }
}
