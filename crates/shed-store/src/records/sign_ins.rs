//! The web's sign-in records (the shapes: `src/web_sessions.rs`), written
//! once for both backends ([`Records`]): one-time sign-in links, the
//! one-time hops that carry a sign-in to each space's host, and web
//! sessions (one per host a browser signed in on: `""` for the platform's
//! own host, else a space's slug). A hop is bound to the browser that
//! pressed the sign-in button: it keeps the hash of that browser's
//! hand-off cookie on the platform's host, then the hash of the cookie the
//! space's host gave the browser that brought the code, and signs in only
//! once the platform's host has seen its hand-off cookie come back with it.
//! Only the sha256 of each secret is kept, and a cookie's hash is compared
//! in constant time; times are Unix seconds. Plain storage: the lifetimes
//! and who may sign in are decided in shed-host.

use super::{FromRow, ReadRows, Statement};
use crate::StoreError;
use crate::secret::same_hash;
use crate::txn::{Records, Row, Txn, args};
use crate::web_sessions::{HopUsed, NewWebSession, SessionSeen, WebSessionRecord};

/// Ends a person's sessions, and the links and hops not used yet: how many
/// sessions ended.
pub(crate) async fn end_sessions(t: &impl Txn, person: &str) -> Result<usize, StoreError> {
    t.execute("DELETE FROM web_links WHERE person = $1", args![person])
        .await?;
    t.execute("DELETE FROM web_hops WHERE person = $1", args![person])
        .await?;
    let ended = t
        .execute("DELETE FROM web_sessions WHERE person = $1", args![person])
        .await?;
    Ok(ended as usize)
}

/// The platform's host confirms a bound hop when the browser that brought
/// it sent the hand-off cookie it was made for; a hop brought by another
/// browser is let go.
async fn confirm_hop<T: Txn>(
    t: &T,
    space: &str,
    hash: &str,
    handoff: Option<&str>,
    now: i64,
) -> Result<bool, StoreError> {
    let sql = format!(
        "SELECT handoff FROM web_hops WHERE hash = $1 AND space = $2
         AND browser IS NOT NULL AND confirmed = 0 AND expires_at > $3{}",
        T::LOCK
    );
    let Some(kept) = t
        .optional_as::<String>(&sql, args![hash, space, now])
        .await?
    else {
        return Ok(false);
    };
    let confirmed = same_hash(Some(&kept), handoff);
    let sql = if confirmed {
        "UPDATE web_hops SET confirmed = 1 WHERE hash = $1"
    } else {
        "DELETE FROM web_hops WHERE hash = $1"
    };
    t.execute(sql, args![hash]).await?;
    Ok(confirmed)
}

/// Uses a hop on its space's host: its person, once, while it lives, if it
/// was confirmed and `browser` is the cookie's hash it was bound to; used up
/// either way.
async fn use_hop(
    t: &impl Txn,
    space: &str,
    hash: &str,
    browser: Option<&str>,
    now: i64,
) -> Result<Option<HopUsed>, StoreError> {
    let Some(taken) = t
        .optional(
            "DELETE FROM web_hops WHERE hash = $1 AND space = $2 AND expires_at > $3
             RETURNING person, browser, confirmed, sign_in",
            args![hash, space, now],
        )
        .await?
    else {
        return Ok(None);
    };
    let kept: Option<String> = taken.get(1)?;
    let confirmed: bool = taken.get(2)?;
    if !(confirmed && same_hash(kept.as_deref(), browser)) {
        return Ok(None);
    }
    Ok(Some(HopUsed {
        person: taken.get(0)?,
        sign_in: taken.get(3)?,
    }))
}

impl FromRow for SessionSeen {
    fn from_row(r: Row) -> Result<SessionSeen, StoreError> {
        Ok(SessionSeen {
            person: r.get(0)?,
            sign_in: r.get(1)?,
            last_seen: r.get(2)?,
        })
    }
}

impl FromRow for WebSessionRecord {
    fn from_row(r: Row) -> Result<WebSessionRecord, StoreError> {
        Ok(WebSessionRecord {
            sign_in: r.get(0)?,
            space: r.get(1)?,
            user_agent: r.get(2)?,
            signed_in_at: r.get(3)?,
            last_seen: r.get(4)?,
            expires_at: r.get(5)?,
        })
    }
}

impl<B: Records> super::SignIns for B {
    async fn add_login_link(
        &self,
        person_eid: &str,
        hash: &str,
        expires_at: i64,
        now: i64,
    ) -> Result<(), StoreError> {
        let (person, hash) = (person_eid.to_string(), hash.to_string());
        self.write_records(async move |t| {
            // Forgets every link, hop and session expired by now.
            for table in ["web_links", "web_hops", "web_sessions"] {
                t.execute(
                    &format!("DELETE FROM {table} WHERE expires_at <= $1"),
                    args![now],
                )
                .await?;
            }
            t.execute(
                "INSERT INTO web_links(hash, person, expires_at) VALUES($1, $2, $3)",
                args![&hash, &person, expires_at],
            )
            .await?;
            Ok(())
        })
        .await
    }

    async fn use_login_link(&self, hash: &str, now: i64) -> Result<Option<String>, StoreError> {
        super::write_optional(
            self,
            "UPDATE web_links SET used = 1 WHERE hash = $1 AND used = 0 AND expires_at > $2
             RETURNING person",
            args![hash, now],
        )
        .await
    }

    async fn live_login_link(&self, hash: &str, now: i64) -> Result<Option<String>, StoreError> {
        self.read_optional(
            "SELECT person FROM web_links WHERE hash = $1 AND used = 0 AND expires_at > $2",
            args![hash, now],
        )
        .await
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
        super::write_statement(
            self,
            "INSERT INTO web_hops(hash, person, space, handoff, sign_in, expires_at)
             VALUES($1, $2, $3, $4, $5, $6)",
            args![hash, person_eid, space, handoff, sign_in, expires_at],
        )
        .await?;
        Ok(())
    }

    async fn bind_web_hop(
        &self,
        space: &str,
        hash: &str,
        back: &str,
        browser: &str,
        now: i64,
    ) -> Result<bool, StoreError> {
        let bound = super::write_statement(
            self,
            "UPDATE web_hops SET hash = $3, browser = $4
                 WHERE hash = $1 AND space = $2 AND browser IS NULL AND expires_at > $5",
            args![hash, space, back, browser, now],
        )
        .await?;
        Ok(bound == 1)
    }

    async fn confirm_web_hop(
        &self,
        space: &str,
        hash: &str,
        handoff: Option<&str>,
        now: i64,
    ) -> Result<bool, StoreError> {
        let (space, hash) = (space.to_string(), hash.to_string());
        let handoff = handoff.map(str::to_string);
        self.write_records(async move |t| {
            confirm_hop(t, &space, &hash, handoff.as_deref(), now).await
        })
        .await
    }

    async fn use_web_hop(
        &self,
        space: &str,
        hash: &str,
        browser: Option<&str>,
        now: i64,
    ) -> Result<Option<HopUsed>, StoreError> {
        let (space, hash) = (space.to_string(), hash.to_string());
        let browser = browser.map(str::to_string);
        self.write_records(async move |t| use_hop(t, &space, &hash, browser.as_deref(), now).await)
            .await
    }

    async fn add_web_session(&self, session: NewWebSession) -> Result<(), StoreError> {
        super::write_statement(
            self,
            "INSERT INTO web_sessions(hash, person, space, expires_at, sign_in, user_agent,
                                      created_at, last_seen)
             VALUES($1, $2, $3, $4, $5, $6, $7, $7)",
            args![
                &session.hash,
                &session.person,
                &session.space,
                session.expires_at,
                &session.sign_in,
                session.user_agent.as_deref(),
                session.at
            ],
        )
        .await?;
        Ok(())
    }

    async fn web_session(
        &self,
        space: &str,
        hash: &str,
        now: i64,
    ) -> Result<Option<SessionSeen>, StoreError> {
        self.read_optional(
            "SELECT person, sign_in, last_seen FROM web_sessions
             WHERE hash = $1 AND space = $2 AND expires_at > $3",
            args![hash, space, now],
        )
        .await
    }

    async fn touch_web_session(&self, hash: &str, now: i64) -> Result<(), StoreError> {
        let sql = "UPDATE web_sessions SET last_seen = $2 WHERE hash = $1";
        super::write_statement(self, sql, args![hash, now]).await?;
        Ok(())
    }

    async fn web_sessions_of(
        &self,
        person_eid: &str,
        now: i64,
    ) -> Result<Vec<WebSessionRecord>, StoreError> {
        self.read_all(
            "SELECT sign_in, space, user_agent, created_at, last_seen, expires_at
             FROM web_sessions WHERE person = $1 AND expires_at > $2
             ORDER BY created_at DESC, sign_in, space",
            args![person_eid, now],
        )
        .await
    }

    async fn end_web_sign_in(&self, person_eid: &str, sign_in: &str) -> Result<usize, StoreError> {
        let ended = super::write_statement(
            self,
            "DELETE FROM web_sessions WHERE person = $1 AND sign_in = $2",
            args![person_eid, sign_in],
        )
        .await?;
        Ok(ended as usize)
    }

    async fn end_web_sessions(&self, person_eid: &str) -> Result<usize, StoreError> {
        let person = person_eid.to_string();
        self.write_records(async move |t| end_sessions(t, &person).await)
            .await
    }
}
