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
    /// The change is made and announced to every server's watchers.
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
    /// The name `shed token list` shows it by, as its maker gave it (an
    /// OAuth access token: `OAuth: <client_id>`); `None` when none was given.
    pub name: Option<String>,
    /// Unix seconds; `None` never expires.
    pub expires_at: Option<i64>,
}

/// A live token, as a request's lookup finds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveToken {
    /// The token's row id, which [`Store::token_used`](crate::Store::token_used)
    /// marks.
    pub id: i64,
    /// The person the token acts for: the request is theirs.
    pub person: Person,
    /// Unix seconds, `None` before its first use.
    pub last_used_at: Option<i64>,
    /// The resource an OAuth grant's token was issued for; `None` for a
    /// pasted token, which every resource of the host takes.
    pub resource: Option<String>,
    /// The OAuth client a grant's token was issued to, by its registered
    /// name (its id where it registered none); `None` for a pasted token.
    pub client: Option<String>,
    /// The person's spaces and roles, read in the same statement as the
    /// token (what [`Store::memberships_and_generation`](crate::Store::memberships_and_generation)
    /// answers), so a request's first look at its caller's reach costs no
    /// second trip to the database.
    pub memberships: Vec<crate::platform::Membership>,
    /// The registry's generation as of that same statement.
    pub generation: crate::lifecycle::Generation,
}

/// What `shed token list` names and `shed token revoke` takes: a pasted
/// token (`12`) or an OAuth grant (`oauth-3`), whose access tokens come and
/// go with its refreshes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TokenId {
    /// A token made to be pasted (`shed token create`), by its row id;
    /// written as the bare number.
    Pasted(i64),
    /// An OAuth grant, by its row id; written `oauth-<id>`.
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
    /// What `shed token revoke` takes to revoke it.
    pub id: TokenId,
    /// The name it was made with; a grant's is its client's name marked
    /// `(OAuth)`. `None` for a pasted token made without one.
    pub name: Option<String>,
    /// The person it acts for.
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
    /// The space's slug, its name on the platform.
    pub slug: String,
    /// How many people are members of it, whatever their role.
    pub members: i64,
    /// How many apps it holds, those in the trash included.
    pub apps: i64,
}

/// One member of a space and their role (`owner`, `editor`, `viewer`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberRecord {
    /// The member.
    pub person: Person,
    /// Their role in the space: `owner`, `editor` or `viewer`.
    pub role: String,
}

/// What came of removing a person: the check that no space is left without
/// an owner is made in the same transaction as the removal, as for
/// [`MemberChange`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PersonRemoval {
    /// They are removed: what the removal ended.
    Done(Removed),
    /// They are the only owner of these spaces (slugs, sorted): nothing was
    /// changed.
    LastOwnerOf(Vec<String>),
}

/// What removing a person ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Removed {
    /// Their live tokens revoked, pasted ones and OAuth access tokens both
    /// (their OAuth grants are revoked too, uncounted).
    pub tokens: usize,
    /// The spaces they were a member of, left.
    pub memberships: usize,
    /// Their browser sign-ins ended (web sessions; their sign-in links and
    /// hops not used yet go too, uncounted).
    pub sessions: usize,
    /// Their jobs that had not ended, ended now.
    pub jobs: usize,
}
