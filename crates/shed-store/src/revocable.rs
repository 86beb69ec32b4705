//! What can be taken back: bearer tokens (named, expiring, revoked, with when
//! each was last used; an OAuth grant's access tokens among them), a
//! person's place in a space, and a person's place on the platform. Plain storage, as the host asks: who may take what back is
//! decided in shed-host.
//!
//! A token is read on every request that carries it (one lookup by its
//! unique hash, joined to its person), so whatever is revoked here is refused
//! at the very next request of every process on the database. A removed
//! person keeps their row, so what they wrote stays attributed to them; their
//! handle is not given out again.
//!
//! The shapes callers see are here; their statements, written once for
//! both backends, are `records/revocable.rs`.

use crate::Person;

/// What came of changing a member's place in a space: the check that a
/// space keeps an owner is made in the same transaction as the change, so
/// two owners demoting each other at once cannot leave it with none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemberChange {
    Done,
    /// They were no member of the space (a removal only).
    NotAMember,
    /// They are its only owner, and the change would leave it none: nothing
    /// was changed.
    LastOwner,
}

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

/// What came of removing a person: the check that no space is left without
/// an owner is made in the same transaction as the removal, as for
/// [`MemberChange`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PersonRemoval {
    Done(Removed),
    /// They are the only owner of these spaces (slugs, sorted): nothing was
    /// changed.
    LastOwnerOf(Vec<String>),
}

/// What removing a person ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Removed {
    pub tokens: usize,
    pub memberships: usize,
    pub sessions: usize,
    pub jobs: usize,
}
