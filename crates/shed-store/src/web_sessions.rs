//! The shapes of web sessions as the records keep them (`SignIns`): a
//! session made, a session seen, and a person's sessions listed. A browser
//! signed in once holds a session on the platform's host and one on each of
//! the person's space hosts; they share the id of that sign-in (`sign_in`),
//! which is public — it is how a person names a session to end — while the
//! session's secret is kept only as its hash.

/// A web session to keep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewWebSession {
    /// The person's eid.
    pub person: String,
    /// The host it is for: `""` for the platform's own, else a space slug.
    pub space: String,
    /// The sha256 of the session's secret.
    pub hash: String,
    /// The id of the sign-in it belongs to.
    pub sign_in: String,
    /// The browser's `User-Agent` at sign-in, as it said it.
    pub user_agent: Option<String>,
    /// Unix seconds: when it was made (its first sighting too).
    pub at: i64,
    /// Unix seconds: when it ends; it is not found from then on.
    pub expires_at: i64,
}

/// A live session found by its secret's hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionSeen {
    /// The person's eid.
    pub person: String,
    /// The public id of the sign-in the session belongs to, shared by its
    /// sessions on every host.
    pub sign_in: String,
    /// Unix seconds: the last request it was seen on (as recorded, at most
    /// once a minute).
    pub last_seen: i64,
}

/// One live session of a person, as listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebSessionRecord {
    /// The public id of the sign-in it belongs to: what a person names to
    /// end it.
    pub sign_in: String,
    /// `""` for the platform's host, else a space slug.
    pub space: String,
    /// The browser's `User-Agent` at sign-in; `None` when it sent none.
    pub user_agent: Option<String>,
    /// Unix seconds.
    pub signed_in_at: i64,
    /// Unix seconds: the last request it was seen on (as recorded, at most
    /// once a minute).
    pub last_seen: i64,
    /// Unix seconds: when it ends.
    pub expires_at: i64,
}

/// A hop used on its space's host: the person's eid and the sign-in it
/// carries (none for a hop made before sign-ins had ids).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HopUsed {
    /// The eid of the person the hop signs in.
    pub person: String,
    /// The public id of the sign-in the hop carries on to the space's
    /// host; `None` for a hop made before sign-ins had ids.
    pub sign_in: Option<String>,
}
