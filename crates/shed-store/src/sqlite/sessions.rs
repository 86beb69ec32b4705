//! The web's sign-in records: one-time sign-in links, the one-time hops that
//! carry a sign-in to each space's host, and web sessions (one per host a
//! browser signed in on: `""` for the platform's own host, else a space's
//! slug). A hop is bound to the browser that pressed the sign-in button: it
//! keeps the hash of that browser's hand-off cookie on the platform's host,
//! then the hash of the cookie the space's host gave the browser that
//! brought the code, and signs in only once the platform's host has seen its
//! hand-off cookie come back with it. Only the sha256 of each secret is kept,
//! and a cookie's hash is compared in constant time; times are Unix seconds.
//! Plain storage: the lifetimes and who may sign in are decided in shed-host.

use rusqlite::{Connection, OptionalExtension, params};

use super::Sqlite;
use crate::StoreError;
use crate::secret::same_hash;

/// The tables, appended to the store's migrations.
pub(crate) const MIGRATION: &str = r#"
    CREATE TABLE web_links(
        hash TEXT PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        expires_at INTEGER NOT NULL,
        used INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID;
    CREATE TABLE web_hops(
        hash TEXT PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        space TEXT NOT NULL,
        expires_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE web_sessions(
        hash TEXT PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        space TEXT NOT NULL,
        expires_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX web_sessions_person ON web_sessions(person);
"#;

/// Hops bound to a browser (appended after [`MIGRATION`]): `hash` is the
/// hop's code, then the code the space's host hands back; `handoff` the hash
/// of the platform host's hand-off cookie; `browser` the hash of the space
/// host's own cookie, once it has seen the code; `confirmed` set once the
/// platform's host saw its hand-off cookie with it. Hops live two minutes,
/// so the unbound ones of an older database are let go.
pub(crate) const BOUND_HOPS_MIGRATION: &str = r#"
    DROP TABLE web_hops;
    CREATE TABLE web_hops(
        hash TEXT PRIMARY KEY,
        person TEXT NOT NULL REFERENCES people(eid),
        space TEXT NOT NULL,
        handoff TEXT NOT NULL,
        browser TEXT,
        confirmed INTEGER NOT NULL DEFAULT 0,
        expires_at INTEGER NOT NULL
    ) WITHOUT ROWID;
"#;

/// Forgets every link, hop and session that has expired by `now`.
fn sweep(conn: &Connection, now: i64) -> Result<(), StoreError> {
    for table in ["web_links", "web_hops", "web_sessions"] {
        conn.execute(
            &format!("DELETE FROM {table} WHERE expires_at <= ?1"),
            [now],
        )?;
    }
    Ok(())
}

/// A fresh sign-in link.
fn add_link(
    conn: &Connection,
    person: &str,
    hash: &str,
    expires_at: i64,
    now: i64,
) -> Result<(), StoreError> {
    sweep(conn, now)?;
    conn.execute(
        "INSERT INTO web_links(hash, person, expires_at) VALUES(?1, ?2, ?3)",
        params![hash, person, expires_at],
    )?;
    Ok(())
}

/// Uses a link: its person, once, while it lives; `None` after.
fn use_link(conn: &Connection, hash: &str, now: i64) -> Result<Option<String>, StoreError> {
    Ok(conn
        .query_row(
            "UPDATE web_links SET used = 1 WHERE hash = ?1 AND used = 0 AND expires_at > ?2 RETURNING person",
            params![hash, now],
            |r| r.get(0),
        )
        .optional()?)
}

/// The person of a link that still works at `now`, leaving it unused.
fn live_link(conn: &Connection, hash: &str, now: i64) -> Result<Option<String>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT person FROM web_links WHERE hash = ?1 AND used = 0 AND expires_at > ?2",
            params![hash, now],
            |r| r.get(0),
        )
        .optional()?)
}

/// A one-time hop for one space's host, bound to a hand-off cookie's hash.
fn add_hop(
    conn: &Connection,
    person: &str,
    space: &str,
    hash: &str,
    handoff: &str,
    expires_at: i64,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO web_hops(hash, person, space, handoff, expires_at) VALUES(?1, ?2, ?3, ?4, ?5)",
        params![hash, person, space, handoff, expires_at],
    )?;
    Ok(())
}

/// The space's host has seen a hop's code: the hop is now known by `back`
/// and belongs to the browser whose cookie hashes to `browser`. Once, while
/// it lives; `false` after.
fn bind_hop(
    conn: &Connection,
    space: &str,
    hash: &str,
    back: &str,
    browser: &str,
    now: i64,
) -> Result<bool, StoreError> {
    Ok(conn.execute(
        "UPDATE web_hops SET hash = ?3, browser = ?4 \
         WHERE hash = ?1 AND space = ?2 AND browser IS NULL AND expires_at > ?5",
        params![hash, space, back, browser, now],
    )? == 1)
}

/// The platform's host confirms a bound hop when the browser that brought
/// it sent the hand-off cookie it was made for; a hop brought by another
/// browser is let go.
fn confirm_hop(
    conn: &Connection,
    space: &str,
    hash: &str,
    handoff: Option<&str>,
    now: i64,
) -> Result<bool, StoreError> {
    let kept: Option<String> = conn
        .query_row(
            "SELECT handoff FROM web_hops WHERE hash = ?1 AND space = ?2 \
             AND browser IS NOT NULL AND confirmed = 0 AND expires_at > ?3",
            params![hash, space, now],
            |r| r.get(0),
        )
        .optional()?;
    let Some(kept) = kept else {
        return Ok(false);
    };
    if same_hash(Some(&kept), handoff) {
        conn.execute("UPDATE web_hops SET confirmed = 1 WHERE hash = ?1", [hash])?;
        Ok(true)
    } else {
        conn.execute("DELETE FROM web_hops WHERE hash = ?1", [hash])?;
        Ok(false)
    }
}

/// Uses a hop on its space's host: its person, once, while it lives, if it
/// was confirmed and `browser` is the cookie's hash it was bound to; used up
/// either way.
fn use_hop(
    conn: &Connection,
    space: &str,
    hash: &str,
    browser: Option<&str>,
    now: i64,
) -> Result<Option<String>, StoreError> {
    let taken: Option<(String, Option<String>, bool)> = conn
        .query_row(
            "DELETE FROM web_hops WHERE hash = ?1 AND space = ?2 AND expires_at > ?3 \
             RETURNING person, browser, confirmed",
            params![hash, space, now],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    Ok(taken.and_then(|(person, kept, confirmed)| {
        (confirmed && same_hash(kept.as_deref(), browser)).then_some(person)
    }))
}

fn add_session(
    conn: &Connection,
    person: &str,
    space: &str,
    hash: &str,
    expires_at: i64,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO web_sessions(hash, person, space, expires_at) VALUES(?1, ?2, ?3, ?4)",
        params![hash, person, space, expires_at],
    )?;
    Ok(())
}

fn session(
    conn: &Connection,
    space: &str,
    hash: &str,
    now: i64,
) -> Result<Option<String>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT person FROM web_sessions WHERE hash = ?1 AND space = ?2 AND expires_at > ?3",
    )?;
    Ok(stmt
        .query_row(params![hash, space, now], |r| r.get(0))
        .optional()?)
}

/// Ends a person's sessions, and the links and hops not used yet: how many
/// sessions ended.
pub(super) fn end_sessions(conn: &Connection, person: &str) -> Result<usize, StoreError> {
    conn.execute("DELETE FROM web_links WHERE person = ?1", [person])?;
    conn.execute("DELETE FROM web_hops WHERE person = ?1", [person])?;
    Ok(conn.execute("DELETE FROM web_sessions WHERE person = ?1", [person])?)
}

impl crate::records::SignIns for Sqlite {
    async fn add_login_link(
        &self,
        person_eid: &str,
        hash: &str,
        expires_at: i64,
        now: i64,
    ) -> Result<(), StoreError> {
        let (person, hash) = (person_eid.to_string(), hash.to_string());
        self.write(move |txn| add_link(txn, &person, &hash, expires_at, now))
            .await
    }

    async fn use_login_link(&self, hash: &str, now: i64) -> Result<Option<String>, StoreError> {
        let hash = hash.to_string();
        self.write(move |txn| use_link(txn, &hash, now)).await
    }

    async fn live_login_link(&self, hash: &str, now: i64) -> Result<Option<String>, StoreError> {
        self.read(|conn| live_link(conn, hash, now)).await
    }

    async fn add_web_hop(
        &self,
        person_eid: &str,
        space: &str,
        hash: &str,
        handoff: &str,
        expires_at: i64,
    ) -> Result<(), StoreError> {
        let (person, space, hash, handoff) = (
            person_eid.to_string(),
            space.to_string(),
            hash.to_string(),
            handoff.to_string(),
        );
        self.write(move |txn| add_hop(txn, &person, &space, &hash, &handoff, expires_at))
            .await
    }

    async fn bind_web_hop(
        &self,
        space: &str,
        hash: &str,
        back: &str,
        browser: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        let (space, hash, back, browser) = (
            space.to_string(),
            hash.to_string(),
            back.to_string(),
            browser.to_string(),
        );
        self.write(move |txn| bind_hop(txn, &space, &hash, &back, &browser, now))
            .await
    }

    async fn confirm_web_hop(
        &self,
        space: &str,
        hash: &str,
        handoff: Option<&str>,
        now: i64,
    ) -> Result<bool, StoreError> {
        let (space, hash, handoff) = (
            space.to_string(),
            hash.to_string(),
            handoff.map(str::to_string),
        );
        self.write(move |txn| confirm_hop(txn, &space, &hash, handoff.as_deref(), now))
            .await
    }

    async fn use_web_hop(
        &self,
        space: &str,
        hash: &str,
        browser: Option<&str>,
        now: i64,
    ) -> Result<Option<String>, StoreError> {
        let (space, hash, browser) = (
            space.to_string(),
            hash.to_string(),
            browser.map(str::to_string),
        );
        self.write(move |txn| use_hop(txn, &space, &hash, browser.as_deref(), now))
            .await
    }

    async fn add_web_session(
        &self,
        person_eid: &str,
        space: &str,
        hash: &str,
        expires_at: i64,
    ) -> Result<(), StoreError> {
        let (person, space, hash) = (person_eid.to_string(), space.to_string(), hash.to_string());
        self.write(move |txn| add_session(txn, &person, &space, &hash, expires_at))
            .await
    }

    async fn web_session(
        &self,
        space: &str,
        hash: &str,
        now: i64,
    ) -> Result<Option<String>, StoreError> {
        self.read(|conn| session(conn, space, hash, now)).await
    }

    async fn end_web_sessions(&self, person_eid: &str) -> Result<usize, StoreError> {
        let person = person_eid.to_string();
        self.write(move |txn| end_sessions(txn, &person)).await
    }
}

#[cfg(test)]
mod tests {
    use crate::Store;

    async fn store_with_ada() -> (tempfile::TempDir, Store, String) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("shed.db")).await.unwrap();
        let ada = store.add_person("ada", "Ada").await.unwrap();
        (dir, store, ada.eid)
    }

    #[tokio::test]
    async fn a_link_works_once_and_only_while_it_lives() {
        let (_dir, store, ada) = store_with_ada().await;
        store.add_login_link(&ada, "h1", 100, 0).await.unwrap();
        store.add_login_link(&ada, "h2", 100, 0).await.unwrap();
        for _ in 0..2 {
            assert_eq!(
                store.live_login_link("h1", 50).await.unwrap(),
                Some(ada.clone()),
                "looking does not use it"
            );
        }
        assert_eq!(
            store.use_login_link("h1", 50).await.unwrap(),
            Some(ada.clone())
        );
        assert_eq!(
            store.use_login_link("h1", 51).await.unwrap(),
            None,
            "used twice"
        );
        assert_eq!(
            store.use_login_link("h2", 100).await.unwrap(),
            None,
            "expired"
        );
        assert_eq!(store.use_login_link("nope", 0).await.unwrap(), None);
        assert_eq!(store.live_login_link("h1", 51).await.unwrap(), None);
        assert_eq!(store.live_login_link("h2", 100).await.unwrap(), None);
    }

    #[tokio::test]
    async fn a_hop_works_once_on_its_own_space_in_its_own_browser() {
        let (_dir, store, ada) = store_with_ada().await;
        store
            .add_web_hop(&ada, "demo", "h", "hand", 100)
            .await
            .unwrap();
        assert!(
            !store.bind_web_hop("club", "h", "b", "br", 1).await.unwrap(),
            "another space"
        );
        assert!(
            !store
                .confirm_web_hop("demo", "h", Some("hand"), 1)
                .await
                .unwrap(),
            "not seen by its space's host yet"
        );
        assert!(store.bind_web_hop("demo", "h", "b", "br", 1).await.unwrap());
        assert!(
            !store
                .bind_web_hop("demo", "h", "b2", "br2", 1)
                .await
                .unwrap(),
            "its code is seen once"
        );
        assert_eq!(
            store.use_web_hop("demo", "b", Some("br"), 2).await.unwrap(),
            None,
            "not confirmed: used up all the same"
        );

        store
            .add_web_hop(&ada, "demo", "h", "hand", 100)
            .await
            .unwrap();
        store.bind_web_hop("demo", "h", "b", "br", 1).await.unwrap();
        assert!(
            store
                .confirm_web_hop("demo", "b", Some("hand"), 2)
                .await
                .unwrap()
        );
        assert!(
            !store
                .confirm_web_hop("demo", "b", Some("hand"), 2)
                .await
                .unwrap(),
            "confirmed once"
        );
        assert_eq!(
            store.use_web_hop("demo", "b", Some("br"), 3).await.unwrap(),
            Some(ada.clone())
        );
        assert_eq!(
            store.use_web_hop("demo", "b", Some("br"), 3).await.unwrap(),
            None
        );

        // Another browser's hand-off cookie, or none, lets the hop go;
        // another browser's cookie at the end uses it up.
        for (handoff, browser) in [(Some("other"), "br"), (None, "br"), (Some("hand"), "other")] {
            store
                .add_web_hop(&ada, "demo", "h", "hand", 100)
                .await
                .unwrap();
            store.bind_web_hop("demo", "h", "b", "br", 1).await.unwrap();
            if store
                .confirm_web_hop("demo", "b", handoff, 2)
                .await
                .unwrap()
            {
                assert_eq!(
                    store
                        .use_web_hop("demo", "b", Some(browser), 3)
                        .await
                        .unwrap(),
                    None
                );
            }
            assert!(
                !store
                    .confirm_web_hop("demo", "b", Some("hand"), 2)
                    .await
                    .unwrap()
            );
            assert_eq!(
                store.use_web_hop("demo", "b", Some("br"), 3).await.unwrap(),
                None
            );
        }
    }

    #[tokio::test]
    async fn a_session_answers_on_its_host_until_it_ends() {
        let (_dir, store, ada) = store_with_ada().await;
        store.add_web_session(&ada, "demo", "s", 100).await.unwrap();
        store.add_web_session(&ada, "", "p", 100).await.unwrap();
        assert_eq!(
            store.web_session("demo", "s", 1).await.unwrap(),
            Some(ada.clone())
        );
        assert_eq!(store.web_session("club", "s", 1).await.unwrap(), None);
        assert_eq!(
            store.web_session("demo", "s", 100).await.unwrap(),
            None,
            "expired"
        );
        assert_eq!(store.end_web_sessions(&ada).await.unwrap(), 2);
        assert_eq!(store.web_session("demo", "s", 1).await.unwrap(), None);
    }
}
