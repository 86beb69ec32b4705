//! What can be taken back: bearer tokens (named, expiring, revoked, with when
//! each was last used; an OAuth grant's access tokens among them), a person's place in a space, and a person's place on
//! the platform. Plain storage, as the host asks: who may take what back is
//! decided in shed-host.
//!
//! A token is read on every request that carries it (one lookup by its
//! unique hash, joined to its person), so whatever is revoked here is refused
//! at the very next request of every process on the database. A removed
//! person keeps their row, so what they wrote stays attributed to them; their
//! handle is not given out again.

use rusqlite::{Connection, OptionalExtension, params};

use crate::people::person_at;
use crate::{Person, Store, StoreError};

/// The columns and table, appended to the store's migrations.
pub(crate) const MIGRATION: &str = r#"
    ALTER TABLE tokens ADD COLUMN name TEXT;
    ALTER TABLE tokens ADD COLUMN expires_at INTEGER;
    ALTER TABLE tokens ADD COLUMN last_used_at INTEGER;
    ALTER TABLE tokens ADD COLUMN revoked_at INTEGER;
    CREATE INDEX tokens_person ON tokens(person);
    CREATE TABLE removed_people(
        eid TEXT PRIMARY KEY REFERENCES people(eid),
        at INTEGER NOT NULL
    ) WITHOUT ROWID;
"#;

/// A token to keep: whose, what it is called, when it expires.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewToken {
    /// The person's eid.
    pub person: String,
    /// The sha256 (hex) of the secret.
    pub hash: String,
    pub name: Option<String>,
    /// Unix seconds; `None` never expires.
    pub expires_at: Option<i64>,
}

/// A live token, as a request's lookup finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveToken {
    pub id: i64,
    pub person: Person,
    /// Unix seconds, `None` before its first use.
    pub last_used_at: Option<i64>,
    /// The resource an OAuth grant's token was issued for; `None` for a
    /// pasted token, which every resource of the host takes.
    pub resource: Option<String>,
}

/// What `shed token list` names and `shed token revoke` takes: a pasted
/// token (`12`) or an OAuth grant (`oauth-3`), whose access tokens come and
/// go with its refreshes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TokenId {
    Pasted(i64),
    Grant(i64),
}

/// How a grant's id is written, before its number.
const GRANT_PREFIX: &str = "oauth-";

impl std::fmt::Display for TokenId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenId::Pasted(id) => write!(f, "{id}"),
            TokenId::Grant(id) => write!(f, "{GRANT_PREFIX}{id}"),
        }
    }
}

/// The words were not a token's id.
#[derive(Debug, thiserror::Error)]
#[error(
    "{0} is not a token's id — `shed token list` shows them (a number, or oauth-<number> for a sign-in of an app)"
)]
pub struct NotATokenId(String);

impl std::str::FromStr for TokenId {
    type Err = NotATokenId;
    fn from_str(words: &str) -> Result<Self, Self::Err> {
        let not = || NotATokenId(words.chars().take(40).collect());
        match words.strip_prefix(GRANT_PREFIX) {
            Some(grant) => grant.parse().map(TokenId::Grant).map_err(|_| not()),
            None => words.parse().map(TokenId::Pasted).map_err(|_| not()),
        }
    }
}

/// A token as `shed token list` shows it: never its secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenRecord {
    pub id: TokenId,
    pub name: Option<String>,
    pub person: Person,
    /// RFC 3339.
    pub created_at: String,
    /// Unix seconds.
    pub last_used_at: Option<i64>,
    /// Unix seconds.
    pub expires_at: Option<i64>,
}

/// A space and how many members it has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpaceRecord {
    pub slug: String,
    pub members: i64,
    pub apps: i64,
}

/// One member of a space and their role (`owner`, `editor`, `viewer`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberRecord {
    pub person: Person,
    pub role: String,
}

/// What removing a person ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Removed {
    pub tokens: usize,
    pub memberships: usize,
    pub sessions: usize,
    pub jobs: usize,
}

fn add_token(conn: &Connection, token: &NewToken) -> Result<i64, StoreError> {
    conn.execute(
        "INSERT INTO tokens(person, hash, created_at, name, expires_at) VALUES(?1, ?2, ?3, ?4, ?5)",
        params![
            token.person,
            token.hash,
            jiff::Timestamp::now().to_string(),
            token.name,
            token.expires_at
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

fn live_token(conn: &Connection, hash: &str, now: i64) -> Result<Option<LiveToken>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT t.id, t.last_used_at, p.eid, p.handle, p.name, t.resource
         FROM tokens t JOIN people p ON p.eid = t.person
         WHERE t.hash = ?1 AND t.revoked_at IS NULL
           AND (t.expires_at IS NULL OR t.expires_at > ?2)",
    )?;
    Ok(stmt
        .query_row(params![hash, now], |r| {
            Ok(LiveToken {
                id: r.get(0)?,
                last_used_at: r.get(1)?,
                person: person_at(r, 2)?,
                resource: r.get(5)?,
            })
        })
        .optional()?)
}

fn tokens(
    conn: &Connection,
    person: Option<&str>,
    now: i64,
) -> Result<Vec<TokenRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT t.id, t.name, p.eid, p.handle, p.name, t.created_at, t.last_used_at, t.expires_at
         FROM tokens t JOIN people p ON p.eid = t.person
         WHERE t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?2)
           AND t.grant_id IS NULL AND (?1 IS NULL OR t.person = ?1)
         ORDER BY t.id",
    )?;
    let rows = stmt.query_map(params![person, now], |r| {
        Ok(TokenRecord {
            id: TokenId::Pasted(r.get(0)?),
            name: r.get(1)?,
            person: person_at(r, 2)?,
            created_at: r.get(5)?,
            last_used_at: r.get(6)?,
            expires_at: r.get(7)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn present_person(conn: &Connection, handle: &str) -> Result<Option<Person>, StoreError> {
    let handle = handle.strip_prefix('@').unwrap_or(handle);
    let mut stmt = conn.prepare_cached(
        "SELECT eid, handle, name FROM people
         WHERE handle = ?1 AND eid NOT IN (SELECT eid FROM removed_people)",
    )?;
    Ok(stmt.query_row([handle], |r| person_at(r, 0)).optional()?)
}

fn people(conn: &Connection) -> Result<Vec<Person>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT eid, handle, name FROM people
         WHERE eid NOT IN (SELECT eid FROM removed_people) ORDER BY handle",
    )?;
    let rows = stmt.query_map([], |r| person_at(r, 0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn spaces(conn: &Connection) -> Result<Vec<SpaceRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.slug,
                (SELECT COUNT(*) FROM members m WHERE m.space = s.id),
                (SELECT COUNT(*) FROM apps a WHERE a.space = s.id)
         FROM spaces s ORDER BY s.slug",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(SpaceRecord {
            slug: r.get(0)?,
            members: r.get(1)?,
            apps: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn members(conn: &Connection, space: &str) -> Result<Option<Vec<MemberRecord>>, StoreError> {
    let found: Option<i64> = conn
        .query_row("SELECT id FROM spaces WHERE slug = ?1", [space], |r| {
            r.get(0)
        })
        .optional()?;
    let Some(space) = found else {
        return Ok(None);
    };
    let mut stmt = conn.prepare_cached(
        "SELECT p.eid, p.handle, p.name, m.role FROM members m JOIN people p ON p.eid = m.person
         WHERE m.space = ?1
         ORDER BY CASE m.role WHEN 'owner' THEN 0 WHEN 'editor' THEN 1 ELSE 2 END, p.handle",
    )?;
    let rows = stmt.query_map([space], |r| {
        Ok(MemberRecord {
            person: person_at(r, 0)?,
            role: r.get(3)?,
        })
    })?;
    Ok(Some(rows.collect::<Result<_, _>>()?))
}

fn remove_member(conn: &Connection, space: &str, person: &str) -> Result<bool, StoreError> {
    Ok(conn.execute(
        "DELETE FROM members WHERE person = ?2
           AND space = (SELECT id FROM spaces WHERE slug = ?1)",
        params![space, person],
    )? > 0)
}

fn remove_person(conn: &Connection, person: &str, now: i64) -> Result<Removed, StoreError> {
    conn.execute(
        "INSERT OR IGNORE INTO removed_people(eid, at) VALUES(?1, ?2)",
        params![person, now],
    )?;
    let tokens = conn.execute(
        "UPDATE tokens SET revoked_at = ?2 WHERE person = ?1 AND revoked_at IS NULL",
        params![person, now],
    )?;
    conn.execute(
        "UPDATE oauth_grants SET revoked_at = ?2, refresh_hash = NULL
         WHERE person = ?1 AND revoked_at IS NULL",
        params![person, now],
    )?;
    let memberships = conn.execute("DELETE FROM members WHERE person = ?1", [person])?;
    conn.execute("DELETE FROM web_links WHERE person = ?1", [person])?;
    conn.execute("DELETE FROM web_hops WHERE person = ?1", [person])?;
    let sessions = conn.execute("DELETE FROM web_sessions WHERE person = ?1", [person])?;
    let jobs = conn.execute(
        "UPDATE jobs SET ended_at = ?2 WHERE person = ?1 AND ended_at IS NULL",
        params![person, now * 1000],
    )?;
    Ok(Removed {
        tokens,
        memberships,
        sessions,
        jobs,
    })
}

impl Store {
    /// Keeps a bearer token's hash; answers the token's id.
    pub async fn add_token(&self, token: NewToken) -> Result<i64, StoreError> {
        self.write(move |txn| add_token(txn, &token)).await
    }

    /// The token with this hash, if it is neither revoked nor expired at
    /// `now` (Unix seconds), with its person: one indexed read.
    pub async fn live_token(&self, hash: &str, now: i64) -> Result<Option<LiveToken>, StoreError> {
        self.read(|conn| live_token(conn, hash, now)).await
    }

    /// Records that the token was used at `now` (Unix seconds).
    pub async fn token_used(&self, id: i64, now: i64) -> Result<(), StoreError> {
        self.write(move |txn| {
            txn.execute(
                "UPDATE tokens SET last_used_at = ?2 WHERE id = ?1",
                params![id, now],
            )?;
            Ok(())
        })
        .await
    }

    /// The live pasted tokens, of one person (eid) or of everyone, oldest
    /// first (an OAuth grant's access tokens are listed as their grant, by
    /// [`Store::grants`]).
    pub async fn tokens(
        &self,
        person: Option<&str>,
        now: i64,
    ) -> Result<Vec<TokenRecord>, StoreError> {
        self.read(|conn| tokens(conn, person, now)).await
    }

    /// Revokes the pasted token `id` at `now`: whether it was live.
    pub async fn revoke_token(&self, id: i64, now: i64) -> Result<bool, StoreError> {
        self.write(move |txn| {
            Ok(txn.execute(
                "UPDATE tokens SET revoked_at = ?2 WHERE id = ?1 AND grant_id IS NULL AND revoked_at IS NULL",
                params![id, now],
            )? > 0)
        })
        .await
    }

    /// The person with this handle, unless they were removed.
    pub async fn present_person(&self, handle: &str) -> Result<Option<Person>, StoreError> {
        self.read(|conn| present_person(conn, handle)).await
    }

    /// Everyone not removed, by handle.
    pub async fn people(&self) -> Result<Vec<Person>, StoreError> {
        self.read(people).await
    }

    /// Every space, by slug, with how many members and apps it has.
    pub async fn spaces(&self) -> Result<Vec<SpaceRecord>, StoreError> {
        self.read(spaces).await
    }

    /// The members of a space, owners first (`None`: no such space).
    pub async fn members(&self, space: &str) -> Result<Option<Vec<MemberRecord>>, StoreError> {
        self.read(|conn| members(conn, space)).await
    }

    /// Takes the person (eid) out of the space: whether they were in it.
    pub async fn remove_member(&self, space: &str, person: &str) -> Result<bool, StoreError> {
        let (space, person) = (space.to_string(), person.to_string());
        self.write(move |txn| remove_member(txn, &space, &person))
            .await
    }

    /// Removes the person (eid) at `now` (Unix seconds): their tokens are
    /// revoked, their memberships, sessions and sign-in links gone, their
    /// jobs ended; their row stays, for what they wrote.
    pub async fn remove_person(&self, person: &str, now: i64) -> Result<Removed, StoreError> {
        let person = person.to_string();
        self.write(move |txn| remove_person(txn, &person, now))
            .await
    }
}
