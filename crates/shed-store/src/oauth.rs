//! OAuth 2.1, as the platform's own authorization server keeps it: the
//! clients (registered by Dynamic Client Registration, or by a Client ID
//! Metadata Document, keyed by its URL), the authorization codes, and the
//! grants — a person's consent to one client for one resource, holding the
//! hash of its current refresh token. A grant's access tokens are rows of
//! `tokens` (src/revocable.rs) carrying the grant and the resource, so a
//! request reads them as it reads a pasted token. Every secret is kept as
//! its sha256 only. Plain storage: what is checked is decided in shed-host.
//!
//! The shapes callers see are here; their statements are written once for
//! both backends (`records/oauth.rs`), and so are their tables (migration 9:
//! `migrations/oauth.rs`).

/// A registered client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientRecord {
    /// The `client_id`: random for DCR, the document's URL for CIMD.
    pub id: String,
    /// The name the client gave (`client_name`), trimmed, shown on the
    /// consent page and in token lists; `an unnamed client` when it gave
    /// none.
    pub name: String,
    /// The redirect URIs the client registered, each https or http on a
    /// loopback address: a sign-in's redirect URI must be one of them (on
    /// loopback, at any port).
    pub redirect_uris: Vec<String>,
}

/// A code to keep until it is redeemed or expires.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewCode {
    /// The code's sha256 in lowercase hex ([`crate::secret_hash`]); the
    /// code itself goes to the client and is never kept.
    pub hash: String,
    /// The `client_id` of the client the code is issued to.
    pub client: String,
    /// The consenting person's eid.
    pub person: String,
    /// The redirect URI the code was sent to, which redeeming it must name
    /// again.
    pub redirect_uri: String,
    /// The PKCE S256 challenge.
    pub challenge: String,
    /// The resource (RFC 8707) the code grants: the platform's MCP
    /// endpoint, `<public url>/mcp`.
    pub resource: String,
    /// Unix seconds.
    pub expires_at: i64,
}

/// A code as it was issued, when it is redeemed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeRecord {
    /// The `client_id` the code was issued to; only that client may redeem
    /// it.
    pub client: String,
    /// The eid of the person who consented, whom the grant's tokens act
    /// for.
    pub person: String,
    /// The redirect URI the code was sent to; the redemption must name the
    /// same one.
    pub redirect_uri: String,
    /// The PKCE S256 challenge, which the redemption's verifier must hash
    /// to.
    pub challenge: String,
    /// The resource (RFC 8707) the code grants, and the grant it opens
    /// will hold.
    pub resource: String,
}

/// What redeeming a code found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Redeemed {
    /// Never issued, or forgotten.
    Unknown,
    /// Past its time.
    Expired,
    /// Used before: the grant it opened (if any) is now revoked.
    Reused,
    /// Issued and unused: now spent.
    Fresh(CodeRecord),
}

/// What presenting a refresh token found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refreshed {
    /// Not a refresh token of a live grant.
    Unknown,
    /// A refresh token already rotated away: the whole grant is now revoked.
    Reused,
    /// Rotated: the grant's client and resource, and its new tokens kept.
    Rotated {
        /// The `client_id` the grant was given to.
        client: String,
        /// The resource (RFC 8707) the grant is for.
        resource: String,
    },
}

/// A grant as `shed token list` shows it, beside the pasted tokens: its
/// client's name marked `(OAuth)`, created at `created_at` (Unix seconds),
/// never expiring by itself.
pub(crate) fn grant_record(
    id: i64,
    client: String,
    person: crate::Person,
    created_at: i64,
    last_used_at: Option<i64>,
) -> crate::revocable::TokenRecord {
    crate::revocable::TokenRecord {
        id: crate::revocable::TokenId::Grant(id),
        name: Some(format!("{client} (OAuth)")),
        person,
        created_at: jiff::Timestamp::from_second(created_at)
            .map(|at| at.to_string())
            .unwrap_or_default(),
        last_used_at,
        expires_at: None,
    }
}
