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
use crate::web_sessions::{HopUsed, NewWebSession, SessionSeen, WebSessionRecord};

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

/// Sessions a person can tell apart (appended after [`BOUND_HOPS_MIGRATION`]):
/// the sign-in each belongs to (shared by the platform host's session and
/// those its hops made on the space hosts; a hop carries it), the browser's
/// `User-Agent` at sign-in, when it was made and when it was last seen.
/// Sessions kept before get a sign-in each, made thirty days before they end
/// and seen then.
pub(crate) const SESSIONS_SEEN_MIGRATION: &str = r#"
    ALTER TABLE web_sessions ADD COLUMN sign_in TEXT NOT NULL DEFAULT '';
    ALTER TABLE web_sessions ADD COLUMN user_agent TEXT;
    ALTER TABLE web_sessions ADD COLUMN created_at INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE web_sessions ADD COLUMN last_seen INTEGER NOT NULL DEFAULT 0;
    UPDATE web_sessions SET sign_in = lower(hex(randomblob(8))),
        created_at = expires_at - 2592000, last_seen = expires_at - 2592000;
    CREATE INDEX web_sessions_sign_in ON web_sessions(person, sign_in);
    ALTER TABLE web_hops ADD COLUMN sign_in TEXT;
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
    sign_in: &str,
    expires_at: i64,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO web_hops(hash, person, space, handoff, sign_in, expires_at) \
         VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
        params![hash, person, space, handoff, sign_in, expires_at],
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
) -> Result<Option<HopUsed>, StoreError> {
    type Taken = (String, Option<String>, bool, Option<String>);
    let taken: Option<Taken> = conn
        .query_row(
            "DELETE FROM web_hops WHERE hash = ?1 AND space = ?2 AND expires_at > ?3 \
             RETURNING person, browser, confirmed, sign_in",
            params![hash, space, now],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?;
    Ok(taken.and_then(|(person, kept, confirmed, sign_in)| {
        (confirmed && same_hash(kept.as_deref(), browser)).then_some(HopUsed { person, sign_in })
    }))
}

fn add_session(conn: &Connection, session: &NewWebSession) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO web_sessions(hash, person, space, expires_at, sign_in, user_agent, created_at, last_seen) \
         VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7)",
        params![
            session.hash,
            session.person,
            session.space,
            session.expires_at,
            session.sign_in,
            session.user_agent,
            session.at
        ],
    )?;
    Ok(())
}

fn session(
    conn: &Connection,
    space: &str,
    hash: &str,
    now: i64,
) -> Result<Option<SessionSeen>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT person, sign_in, last_seen FROM web_sessions \
         WHERE hash = ?1 AND space = ?2 AND expires_at > ?3",
    )?;
    Ok(stmt
        .query_row(params![hash, space, now], |r| {
            Ok(SessionSeen {
                person: r.get(0)?,
                sign_in: r.get(1)?,
                last_seen: r.get(2)?,
            })
        })
        .optional()?)
}

fn sessions_of(
    conn: &Connection,
    person: &str,
    now: i64,
) -> Result<Vec<WebSessionRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT sign_in, space, user_agent, created_at, last_seen, expires_at FROM web_sessions \
         WHERE person = ?1 AND expires_at > ?2 ORDER BY created_at DESC, sign_in, space",
    )?;
    let rows = stmt.query_map(params![person, now], |r| {
        Ok(WebSessionRecord {
            sign_in: r.get(0)?,
            space: r.get(1)?,
            user_agent: r.get(2)?,
            signed_in_at: r.get(3)?,
            last_seen: r.get(4)?,
            expires_at: r.get(5)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
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
        sign_in: &str,
        expires_at: i64,
    ) -> Result<(), StoreError> {
        let (person, space, hash, handoff, sign_in) = (
            person_eid.to_string(),
            space.to_string(),
            hash.to_string(),
            handoff.to_string(),
            sign_in.to_string(),
        );
        self.write(move |txn| add_hop(txn, &person, &space, &hash, &handoff, &sign_in, expires_at))
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
    ) -> Result<Option<HopUsed>, StoreError> {
        let (space, hash, browser) = (
            space.to_string(),
            hash.to_string(),
            browser.map(str::to_string),
        );
        self.write(move |txn| use_hop(txn, &space, &hash, browser.as_deref(), now))
            .await
    }

    async fn add_web_session(&self, session: NewWebSession) -> Result<(), StoreError> {
        self.write(move |txn| add_session(txn, &session)).await
    }

    async fn web_session(
        &self,
        space: &str,
        hash: &str,
        now: i64,
    ) -> Result<Option<SessionSeen>, StoreError> {
        self.read(|conn| session(conn, space, hash, now)).await
    }

    async fn touch_web_session(&self, hash: &str, now: i64) -> Result<(), StoreError> {
        let hash = hash.to_string();
        self.write(move |txn| {
            txn.execute(
                "UPDATE web_sessions SET last_seen = ?2 WHERE hash = ?1",
                params![hash, now],
            )?;
            Ok(())
        })
        .await
    }

    async fn web_sessions_of(
        &self,
        person_eid: &str,
        now: i64,
    ) -> Result<Vec<WebSessionRecord>, StoreError> {
        self.read(|conn| sessions_of(conn, person_eid, now)).await
    }

    async fn end_web_sign_in(&self, person_eid: &str, sign_in: &str) -> Result<usize, StoreError> {
        let (person, sign_in) = (person_eid.to_string(), sign_in.to_string());
        self.write(move |txn| {
            Ok(txn.execute(
                "DELETE FROM web_sessions WHERE person = ?1 AND sign_in = ?2",
                params![person, sign_in],
            )?)
        })
        .await
    }

    async fn end_web_sessions(&self, person_eid: &str) -> Result<usize, StoreError> {
        let person = person_eid.to_string();
        self.write(move |txn| end_sessions(txn, &person)).await
    }
}

#[cfg(test)]
mod tests {
    use crate::Store;
    use crate::web_sessions::{NewWebSession, SessionSeen};

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
            .add_web_hop(&ada, "demo", "h", "hand", "in-1", 100)
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
            .add_web_hop(&ada, "demo", "h", "hand", "in-1", 100)
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
            Some(crate::web_sessions::HopUsed {
                person: ada.clone(),
                sign_in: Some("in-1".into())
            })
        );
        assert_eq!(
            store.use_web_hop("demo", "b", Some("br"), 3).await.unwrap(),
            None
        );

        // Another browser's hand-off cookie, or none, lets the hop go;
        // another browser's cookie at the end uses it up.
        for (handoff, browser) in [(Some("other"), "br"), (None, "br"), (Some("hand"), "other")] {
            store
                .add_web_hop(&ada, "demo", "h", "hand", "in-1", 100)
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

    fn session(ada: &str, space: &str, hash: &str, sign_in: &str, at: i64) -> NewWebSession {
        NewWebSession {
            person: ada.to_string(),
            space: space.to_string(),
            hash: hash.to_string(),
            sign_in: sign_in.to_string(),
            user_agent: Some("Mozilla/5.0 (X11; Linux x86_64)".to_string()),
            at,
            expires_at: 100,
        }
    }

    #[tokio::test]
    async fn a_session_answers_on_its_host_until_it_ends() {
        let (_dir, store, ada) = store_with_ada().await;
        store
            .add_web_session(session(&ada, "demo", "s", "in-1", 1))
            .await
            .unwrap();
        store
            .add_web_session(session(&ada, "", "p", "in-1", 1))
            .await
            .unwrap();
        let seen = SessionSeen {
            person: ada.clone(),
            sign_in: "in-1".into(),
            last_seen: 1,
        };
        assert_eq!(
            store.web_session("demo", "s", 1).await.unwrap(),
            Some(seen.clone())
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

    #[tokio::test]
    async fn a_sign_in_is_listed_seen_and_ended_on_every_host_by_its_person_only() {
        let (_dir, store, ada) = store_with_ada().await;
        let bob = store.add_person("bob", "Bob").await.unwrap().eid;
        for (space, hash, sign_in, at) in [
            ("", "p1", "in-1", 1),
            ("demo", "d1", "in-1", 1),
            ("", "p2", "in-2", 5),
        ] {
            store
                .add_web_session(session(&ada, space, hash, sign_in, at))
                .await
                .unwrap();
        }
        store.touch_web_session("d1", 40).await.unwrap();
        assert_eq!(
            store
                .web_session("demo", "d1", 41)
                .await
                .unwrap()
                .map(|s| s.last_seen),
            Some(40)
        );
        let listed = store.web_sessions_of(&ada, 50).await.unwrap();
        let rows: Vec<(&str, &str, i64, i64)> = listed
            .iter()
            .map(|r| {
                (
                    r.sign_in.as_str(),
                    r.space.as_str(),
                    r.signed_in_at,
                    r.last_seen,
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("in-2", "", 5, 5),
                ("in-1", "", 1, 1),
                ("in-1", "demo", 1, 40)
            ],
            "newest sign-in first"
        );
        assert_eq!(
            listed[0].user_agent.as_deref(),
            Some("Mozilla/5.0 (X11; Linux x86_64)")
        );
        assert!(
            store.web_sessions_of(&ada, 100).await.unwrap().is_empty(),
            "expired"
        );
        assert_eq!(
            store.end_web_sign_in(&bob, "in-1").await.unwrap(),
            0,
            "not bob's"
        );
        assert_eq!(store.end_web_sign_in(&ada, "in-1").await.unwrap(), 2);
        assert_eq!(store.web_session("", "p1", 2).await.unwrap(), None);
        assert_eq!(store.web_session("demo", "d1", 2).await.unwrap(), None);
        assert!(
            store.web_session("", "p2", 6).await.unwrap().is_some(),
            "the other stays"
        );
    }
}
