//! shed as its own OAuth 2.1 authorization server, for the MCP clients that
//! sign in through the browser: clients registered by Dynamic Client
//! Registration (RFC 7591) or named by a Client ID Metadata Document
//! (`documents`), the authorization code grant with PKCE S256 only, codes
//! single-use and short-lived, access tokens short-lived and bound to the
//! resource they were asked for (RFC 8707), refresh tokens rotated on every
//! use with reuse detection (a replayed one ends the whole grant), and
//! revocation (RFC 7009). The web door turns these into HTTP; the words of
//! each refusal are the RFCs' error codes and a sentence.
//!
//! Every secret — codes, access and refresh tokens — is 128 random bits
//! kept as its sha256 only; a PKCE verifier is compared in constant time.
//! Only public clients are taken (`token_endpoint_auth_method` none): a
//! client proves itself by its redirect URI and its PKCE verifier.
//! Registration needs no sign-in, so it is bounded: a client's size, a
//! rate by address and overall ([`crate::rate`]), and a client that never
//! got a grant is forgotten after [`UNUSED_CLIENT_SECONDS`].

mod addresses;
mod documents;
mod fetch;

use std::net::IpAddr;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use shed_store::oauth::{ClientRecord, CodeRecord, NewCode, Redeemed, Refreshed};
use shed_store::revocable::NewToken;
use subtle::ConstantTimeEq;

use crate::names::shown;
use crate::rate::{Rate, Reserve, Spent, Wait};
use crate::secrets::{hash, now, secret};
use crate::{Host, HostError, Person};

pub(crate) use documents::ClientDocuments;
pub use documents::MOST_CACHE_SECONDS;
pub use fetch::{
    FETCH_SECONDS, MOST_DOCUMENT_BYTES, MOST_DOCUMENT_FETCHES, MOST_DOCUMENT_FETCHES_PER_ADDRESS,
};

/// Where the MCP endpoint's protected resource metadata (RFC 9728) is, on
/// the platform's host.
pub const RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

/// The one scope shed grants: the MCP endpoint, as the person reaches it.
pub const SCOPE: &str = "mcp";

/// The MCP requests a client without a token is answered: the handshake,
/// and the lists whose answer is the same for everyone (the tools) or empty
/// for someone who reaches nothing. Any other is refused before the rule
/// book is asked ([`SIGN_IN_TO_MCP`], a 401 that starts the client's
/// OAuth sign-in), so a public app is read signed out on the web, not over MCP.
pub const SIGNED_OUT_METHODS: [&str; 6] = [
    "initialize",
    "ping",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
];

/// Whether an MCP client without a token is answered `method`; if not, it
/// is asked to sign in with [`SIGN_IN_TO_MCP`].
pub fn answered_signed_out(method: &str) -> bool {
    SIGNED_OUT_METHODS.contains(&method)
}

/// The sentence of an MCP request a client without a token is not answered.
pub const SIGN_IN_TO_MCP: &str = "sign in first — this MCP server signs clients in with OAuth (its metadata is named in WWW-Authenticate), or takes a bearer token from `shed token create <handle>`";

/// How long a code may wait for its exchange, in seconds.
pub const CODE_SECONDS: i64 = 60;
/// How long an access token lasts by default, in seconds (the
/// `SHED_OAUTH_ACCESS_SECONDS` environment variable sets another).
pub const ACCESS_SECONDS: i64 = 3600;
/// The most redirect URIs a client registers.
const MOST_REDIRECT_URIS: usize = 10;
/// The most characters of a client's name.
const MOST_NAME_CHARS: usize = 100;
/// The most bytes of one redirect URI: a real one is under 200; browsers
/// and proxies take addresses of a few KB.
pub const MOST_REDIRECT_URI_BYTES: usize = 2048;
/// The most bytes of a client as kept — its redirect URIs and its name
/// together — so every client registered costs the disk at most this.
pub const MOST_CLIENT_BYTES: usize = 4096;
/// Registrations from one address (IPv6 by its /64): a machine's few
/// clients at once, each set up again a few times, then ten an hour.
pub const REGISTRATIONS_PER_ADDRESS: Rate = Rate {
    burst: 10,
    every: Duration::from_secs(6 * 60),
};
/// Registrations from all addresses together: sixty at once, then sixty
/// an hour — with [`UNUSED_CLIENT_SECONDS`], at most ≈ 1,500 clients that
/// never got a grant are kept, ≈ 6 MB at [`MOST_CLIENT_BYTES`] each.
pub const REGISTRATIONS_OVERALL: Rate = Rate {
    burst: 60,
    every: Duration::from_secs(60),
};
/// The registrations of [`REGISTRATIONS_OVERALL`] kept for addresses that
/// registered none in the last hour: once all but these twenty are taken,
/// the addresses that took them are refused and newcomers still register —
/// and what refills goes to the reserve first. Emptying it takes twenty
/// addresses new within the hour, and keeping it empty sixty an hour.
pub const REGISTRATIONS_RESERVE: Reserve = Reserve {
    held: 20,
    window: Duration::from_secs(60 * 60),
};
// The reserve is a part of everyone's budget, not all of it.
const _: () = assert!(
    REGISTRATIONS_RESERVE.held > 0 && REGISTRATIONS_RESERVE.held < REGISTRATIONS_OVERALL.burst
);
/// How long a client that never got a grant is kept, in seconds: a day,
/// ample for a person to finish the sign-in its registration began. A
/// client with a live grant is kept as long as the grant.
pub const UNUSED_CLIENT_SECONDS: i64 = 24 * 60 * 60;

/// A refusal of the authorization server: the RFC's error code and a sentence.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    /// `invalid_request`: a token request that is not a form, or lacks a
    /// parameter it needs (`client_id`, `code`, `code_verifier`, …); the
    /// sentence names what is missing.
    #[error("{0}")]
    InvalidRequest(String),
    /// `invalid_client`: the client could not be authenticated (RFC 6749
    /// §5.2); the web door answers it with 401.
    #[error("{0}")]
    InvalidClient(String),
    /// `invalid_grant`: the code or refresh token presented is unknown,
    /// expired, used before (which revokes what it opened), or was issued
    /// to another client, redirect or PKCE verifier.
    #[error("{0}")]
    InvalidGrant(String),
    /// `unsupported_grant_type`: a `grant_type` other than
    /// `authorization_code` and `refresh_token`.
    #[error("{0}")]
    UnsupportedGrantType(String),
    /// `invalid_target` (RFC 8707): a `resource` other than the MCP
    /// endpoint, or than the one the code or grant was issued for.
    #[error("{0}")]
    InvalidTarget(String),
    /// `invalid_redirect_uri` (RFC 7591): a registration whose redirect
    /// URIs are none, too many, too long, or neither https nor http on
    /// loopback.
    #[error("{0}")]
    InvalidRedirectUri(String),
    /// `invalid_client_metadata` (RFC 7591): a registration asking what
    /// shed does not grant (a client secret, other grant or response
    /// types), or a name or client too large.
    #[error("{0}")]
    InvalidClientMetadata(String),
    /// Too many registrations lately: the sentence, and the seconds until
    /// one more is taken (`Retry-After`).
    #[error("{sentence}")]
    TooManyRegistrations {
        /// What happened and when to try again, for the `error_description`.
        sentence: String,
        /// Seconds until one more registration is taken.
        retry_after: u64,
    },
    /// `server_error`: the host failed (the store, say), not the request;
    /// its sentence is the host's.
    #[error(transparent)]
    Host(#[from] HostError),
}

impl OAuthError {
    /// The `error` code the RFCs give this refusal.
    pub fn code(&self) -> &'static str {
        match self {
            OAuthError::InvalidRequest(_) => "invalid_request",
            OAuthError::InvalidClient(_) => "invalid_client",
            OAuthError::InvalidGrant(_) => "invalid_grant",
            OAuthError::UnsupportedGrantType(_) => "unsupported_grant_type",
            OAuthError::InvalidTarget(_) => "invalid_target",
            OAuthError::InvalidRedirectUri(_) => "invalid_redirect_uri",
            OAuthError::InvalidClientMetadata(_) => "invalid_client_metadata",
            OAuthError::TooManyRegistrations { .. } => "temporarily_unavailable",
            OAuthError::Host(_) => "server_error",
        }
    }
}

impl From<shed_store::StoreError> for OAuthError {
    fn from(error: shed_store::StoreError) -> Self {
        OAuthError::Host(error.into())
    }
}

/// What an authorization request asks, as the consent page reads it.
#[derive(Debug, Clone, Default)]
pub struct AuthorizationAsk {
    /// What the client asks to be sent back; only `code` is answered.
    /// Empty when the request left it out, as for each text here.
    pub response_type: String,
    /// Who asks: the id of a client registered here, or the URL of the
    /// client's metadata document.
    pub client_id: String,
    /// Where the person is sent back with the code; must match one the
    /// client registered.
    pub redirect_uri: String,
    /// The PKCE challenge: base64url of the verifier's SHA-256, 43
    /// characters.
    pub code_challenge: String,
    /// How the challenge was made; only `S256` is taken.
    pub code_challenge_method: String,
    /// The resource (RFC 8707); the MCP endpoint when absent.
    pub resource: Option<String>,
}

/// A Dynamic Client Registration request (RFC 7591), as far as shed reads it.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct Registration {
    /// Where the client may have a person sent back: 1 to 10
    /// (`MOST_REDIRECT_URIS`), each https or http on loopback. Empty when
    /// the request left them out, which is refused.
    #[serde(default)]
    pub(crate) redirect_uris: Vec<String>,
    /// The name the consent page shows; "an unnamed client" when `None`
    /// or blank.
    pub(crate) client_name: Option<String>,
    /// How the client proves itself at the token endpoint; only `none`
    /// (a public client, with PKCE) is taken, as is `None`.
    pub(crate) token_endpoint_auth_method: Option<String>,
    /// The grants the client will ask for; `None`, or only
    /// `authorization_code` and `refresh_token`.
    pub(crate) grant_types: Option<Vec<String>>,
    /// The `response_type`s it will ask for; `None`, or only `code`.
    pub(crate) response_types: Option<Vec<String>>,
}

/// The client an authorization request names, checked: shown on the
/// consent page by its name *and* its redirect's host.
#[derive(Debug, Clone)]
pub struct CheckedAsk {
    /// The client as registered here, or as its metadata document
    /// describes it.
    pub client: ClientRecord,
    /// The ask's redirect URI, as asked: it matched one the client
    /// registered (exactly, or on another port for a loopback one).
    pub redirect_uri: String,
    /// The host of that redirect URI, as the consent page shows it; empty
    /// when it has none.
    pub redirect_host: String,
    /// The host of the client's metadata document, when its `client_id` is one.
    pub document_host: Option<String>,
    /// The resource the code is granted for: always the MCP endpoint,
    /// `<public url>/mcp`.
    pub(crate) resource: String,
}

/// Why an authorization request is refused: a sentence for shed's own
/// page, never a redirect — the client is sent back only after the person
/// saw the consent page and chose (RFC 9700 §4.11.2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AskRefusal(pub String);

/// Tokens issued by the token endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedTokens {
    /// The bearer token the client sends to the MCP endpoint, in the
    /// clear (`shed_oauth_…`); the store keeps only its hash.
    pub access_token: String,
    /// The token that gets the next pair (`shed_refresh_…`), good once:
    /// presented a second time it revokes the whole grant.
    pub refresh_token: String,
    /// How long the access token lasts, in seconds.
    pub expires_in: i64,
}

/// Whether `uri` may be a redirect: https, or http on a loopback address
/// (RFC 8252), with no fragment.
fn acceptable_redirect(uri: &str) -> bool {
    let Ok(parsed) = uri.parse::<http::Uri>() else {
        return false;
    };
    if uri.contains('#') || parsed.host().is_none() {
        return false;
    }
    match parsed.scheme_str() {
        Some("https") => true,
        Some("http") => is_loopback(parsed.host().unwrap_or_default()),
        _ => false,
    }
}

/// The host of an absolute URI, as its address says it.
fn host_of(uri: &str) -> Option<String> {
    uri.parse::<http::Uri>()
        .ok()
        .and_then(|uri| uri.host().map(str::to_string))
}

/// A client as a registration or a metadata document describes it, checked:
/// 1 to [`MOST_REDIRECT_URIS`] redirect URIs, each https or http on
/// loopback and of up to [`MOST_REDIRECT_URI_BYTES`], and a plain name of up
/// to [`MOST_NAME_CHARS`] characters, all together up to [`MOST_CLIENT_BYTES`].
fn checked_client(
    id: String,
    name: Option<&str>,
    redirect_uris: Vec<String>,
) -> Result<ClientRecord, OAuthError> {
    if redirect_uris.is_empty() || redirect_uris.len() > MOST_REDIRECT_URIS {
        return Err(OAuthError::InvalidRedirectUri(format!(
            "a client registers 1 to {MOST_REDIRECT_URIS} redirect_uris"
        )));
    }
    if let Some(long) = redirect_uris
        .iter()
        .find(|uri| uri.len() > MOST_REDIRECT_URI_BYTES)
    {
        return Err(OAuthError::InvalidRedirectUri(format!(
            "the redirect URI {} is {} bytes long, and shed takes redirect URIs of up to {MOST_REDIRECT_URI_BYTES} bytes — register a shorter one",
            shown(long),
            long.len()
        )));
    }
    if let Some(bad) = redirect_uris.iter().find(|uri| !acceptable_redirect(uri)) {
        return Err(OAuthError::InvalidRedirectUri(format!(
            "the redirect URI {} is neither https nor http on a loopback address (127.0.0.1, [::1], localhost) — register one that is",
            shown(bad)
        )));
    }
    let name = name.map(str::trim).filter(|n| !n.is_empty());
    if name.is_some_and(|n| {
        n.chars().count() > MOST_NAME_CHARS || !n.chars().all(crate::texts::is_plain)
    }) {
        return Err(OAuthError::InvalidClientMetadata(format!(
            "client_name is up to {MOST_NAME_CHARS} plain characters"
        )));
    }
    let bytes = redirect_uris.iter().map(String::len).sum::<usize>() + name.map_or(0, str::len);
    if bytes > MOST_CLIENT_BYTES {
        return Err(OAuthError::InvalidClientMetadata(format!(
            "this client's redirect URIs and name come to {bytes} bytes, and shed keeps up to {MOST_CLIENT_BYTES} bytes of a client — register fewer or shorter redirect URIs"
        )));
    }
    Ok(ClientRecord {
        id,
        name: name.unwrap_or("an unnamed client").to_string(),
        redirect_uris,
    })
}

/// The refusal of a registration past a budget of [`REGISTRATIONS_PER_ADDRESS`]
/// or [`REGISTRATIONS_OVERALL`] — or of the latter's [`REGISTRATIONS_RESERVE`],
/// kept from an address that registered lately — with the seconds until one
/// more is taken.
fn too_many_registrations(wait: Wait) -> OAuthError {
    let rate_of = |rate: Rate| {
        let hourly = 3600 / rate.every.as_secs().max(1);
        format!("shed takes {} at once, then {hourly} an hour", rate.burst)
    };
    let (what, budget) = match wait.spent {
        Spent::Address => (
            "from your address lately",
            rate_of(REGISTRATIONS_PER_ADDRESS),
        ),
        Spent::Everyone => (
            "here by everyone together lately",
            rate_of(REGISTRATIONS_OVERALL),
        ),
        Spent::Reserve => (
            "here lately, and one from your address within the hour",
            format!(
                "shed keeps the last {} of the {} it takes at once for addresses that registered none",
                REGISTRATIONS_RESERVE.held, REGISTRATIONS_OVERALL.burst
            ),
        ),
    };
    OAuthError::TooManyRegistrations {
        sentence: format!(
            "too many clients were registered {what} ({budget}) — nothing was registered; try again in {} seconds",
            wait.seconds
        ),
        retry_after: wait.seconds,
    }
}

/// Whether a PKCE S256 challenge has its shape: 43 characters of base64url.
fn challenge_shaped(challenge: &str) -> bool {
    challenge.len() == 43
        && challenge
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn is_loopback(host: &str) -> bool {
    matches!(host, "127.0.0.1" | "[::1]" | "localhost")
}

/// Whether the redirect asked matches one registered: exactly, except that
/// a loopback redirect may name any port (RFC 8252 §7.3).
fn redirect_matches(registered: &str, asked: &str) -> bool {
    if registered == asked {
        return true;
    }
    let (Ok(r), Ok(a)) = (registered.parse::<http::Uri>(), asked.parse::<http::Uri>()) else {
        return false;
    };
    r.scheme_str() == Some("http")
        && a.scheme_str() == Some("http")
        && r.host().is_some_and(is_loopback)
        && r.host() == a.host()
        && r.path_and_query() == a.path_and_query()
}

/// The S256 challenge of a PKCE verifier.
pub fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

fn access_seconds() -> i64 {
    std::env::var("SHED_OAUTH_ACCESS_SECONDS")
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .filter(|s| *s > 0)
        .unwrap_or(ACCESS_SECONDS)
}

/// A new access token and refresh token for the person (eid) `person`'s
/// grant to `client`: what the client is sent, the access token's row to
/// keep (expiring when `expires_in` says), and the refresh token's hash.
fn issue(person: &str, client: &str) -> (IssuedTokens, NewToken, String) {
    let expires_in = access_seconds();
    let access_token = format!("shed_oauth_{}", secret());
    let refresh_token = format!("shed_refresh_{}", secret());
    let access = NewToken {
        person: person.to_string(),
        hash: hash(&access_token),
        name: Some(format!("OAuth: {}", shown(client))),
        expires_at: Some(now() + expires_in),
    };
    let refresh_hash = hash(&refresh_token);
    let issued = IssuedTokens {
        access_token,
        refresh_token,
        expires_in,
    };
    (issued, access, refresh_hash)
}

impl Host {
    /// The resource the MCP endpoint is: `<public url>/mcp`.
    pub fn mcp_resource(&self) -> String {
        format!("{}/mcp", self.public_url())
    }

    /// The refusal of a `resource` (RFC 8707) that is not the MCP endpoint,
    /// the one resource shed grants; `None` for the endpoint.
    fn other_resource(&self, resource: &str) -> Option<String> {
        let mcp = self.mcp_resource();
        (resource.trim_end_matches('/') != mcp)
            .then(|| format!("this server grants access to {mcp} only"))
    }

    /// Trusts the root certificates of `pem` for fetching client metadata
    /// documents, besides the system's (`shed serve --oauth-extra-ca`).
    pub fn trust_for_client_documents(&self, pem: &[u8]) -> Result<(), HostError> {
        self.inner.client_documents.trust(pem)
    }

    /// Lets client metadata documents be fetched from loopback addresses,
    /// and over plain http there (`shed serve
    /// --oauth-allow-loopback-documents`): for development and tests only.
    pub fn allow_loopback_client_documents(&self) -> Result<(), HostError> {
        self.inner.client_documents.allow_loopback()
    }

    /// Registers a public client (RFC 7591): its redirect URIs must each be
    /// https, or http on loopback; it authenticates with nothing but PKCE.
    /// Answers the client with its new id. Registrations from the address
    /// `from` (the peer's; unknown counts as one address for all) and from
    /// everyone are rate-limited; clients registered more than
    /// [`UNUSED_CLIENT_SECONDS`] ago that never got a grant are forgotten.
    pub async fn register_client(
        &self,
        registration: Registration,
        from: Option<IpAddr>,
    ) -> Result<ClientRecord, OAuthError> {
        if registration
            .token_endpoint_auth_method
            .as_deref()
            .is_some_and(|method| method != "none")
        {
            return Err(OAuthError::InvalidClientMetadata(
                "shed registers public clients only: token_endpoint_auth_method none, with PKCE"
                    .to_string(),
            ));
        }
        let supported = |asked: &Option<Vec<String>>, known: &[&str]| {
            asked
                .as_ref()
                .is_none_or(|asked| asked.iter().all(|one| known.contains(&one.as_str())))
        };
        if !supported(
            &registration.grant_types,
            &["authorization_code", "refresh_token"],
        ) || !supported(&registration.response_types, &["code"])
        {
            return Err(OAuthError::InvalidClientMetadata(
                "shed grants authorization_code (with refresh_token) and answers response_type code only".to_string(),
            ));
        }
        let client = checked_client(
            format!("shed_client_{}", secret()),
            registration.client_name.as_deref(),
            registration.redirect_uris,
        )?;
        self.inner
            .registrations
            .take(from, Instant::now())
            .map_err(too_many_registrations)?;
        let at = now();
        self.inner
            .store
            .forget_unused_clients(at - UNUSED_CLIENT_SECONDS, at)
            .await?;
        self.inner.store.register_client(client.clone(), at).await?;
        Ok(client)
    }

    /// The client a `client_id` names: one registered here, or the one its
    /// metadata document describes, fetched for `asker` (the address that
    /// asked). The refusal is a sentence for a page.
    async fn client(&self, client_id: &str, asker: Option<IpAddr>) -> Result<ClientRecord, String> {
        if documents::names_a_document(client_id) {
            return self
                .inner
                .client_documents
                .client_of(client_id, asker)
                .await;
        }
        self.inner
            .store
            .oauth_client(client_id)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| {
                format!(
                    "no client {} is registered here — the app asking should register first",
                    shown(client_id)
                )
            })
    }

    /// Checks an authorization request, asked from the address `asker`,
    /// before the consent page shows it.
    /// Every refusal is a sentence for shed's own page: the request is
    /// checked before its client is looked up, so a malformed one fetches
    /// no metadata document.
    pub async fn check_ask(
        &self,
        ask: &AuthorizationAsk,
        asker: Option<IpAddr>,
    ) -> Result<CheckedAsk, AskRefusal> {
        if ask.response_type != "code" {
            return Err(AskRefusal(format!(
                "this sign-in asks for response_type {}, and shed answers response_type=code only",
                shown(&ask.response_type)
            )));
        }
        if ask.code_challenge_method != "S256" || !challenge_shaped(&ask.code_challenge) {
            return Err(AskRefusal(format!(
                "this sign-in has no PKCE code_challenge made with code_challenge_method=S256 (it says {}), and shed requires one",
                shown(&ask.code_challenge_method)
            )));
        }
        if let Some(resource) = &ask.resource
            && let Some(refused) = self.other_resource(resource)
        {
            return Err(AskRefusal(format!(
                "this sign-in asks for the resource {}, and {refused}",
                shown(resource)
            )));
        }
        let client = self
            .client(&ask.client_id, asker)
            .await
            .map_err(AskRefusal)?;
        let redirect_uri = client
            .redirect_uris
            .iter()
            .find(|registered| redirect_matches(registered, &ask.redirect_uri))
            .map(|_| ask.redirect_uri.clone())
            .ok_or_else(|| {
                AskRefusal(format!(
                    "the redirect URI {} is not one {} registered — nothing was sent to it",
                    shown(&ask.redirect_uri),
                    shown(&client.name)
                ))
            })?;
        let document_host = documents::names_a_document(&client.id)
            .then(|| host_of(&client.id))
            .flatten();
        Ok(CheckedAsk {
            redirect_host: host_of(&redirect_uri).unwrap_or_default(),
            document_host,
            client,
            redirect_uri,
            resource: self.mcp_resource(),
        })
    }

    /// The person allowed the ask: a code for its redirect, kept hashed for
    /// [`CODE_SECONDS`]. A client named by its metadata document is kept
    /// too, as read now, so its grant is listed under its name.
    pub async fn grant_code(
        &self,
        person: &Person,
        ask: &AuthorizationAsk,
        checked: &CheckedAsk,
    ) -> Result<String, HostError> {
        if checked.document_host.is_some() {
            self.inner
                .store
                .register_client(checked.client.clone(), now())
                .await?;
        }
        let code = secret();
        self.inner
            .store
            .add_code(NewCode {
                hash: hash(&code),
                client: checked.client.id.clone(),
                person: person.eid.clone(),
                redirect_uri: checked.redirect_uri.clone(),
                challenge: ask.code_challenge.clone(),
                resource: checked.resource.clone(),
                expires_at: now() + CODE_SECONDS,
            })
            .await?;
        Ok(code)
    }

    /// The token endpoint's `authorization_code` grant.
    pub async fn exchange_code(
        &self,
        code: &str,
        verifier: &str,
        client_id: &str,
        redirect_uri: &str,
        resource: Option<&str>,
    ) -> Result<IssuedTokens, OAuthError> {
        let at = now();
        let code_hash = hash(code.trim());
        let issued = match self.inner.store.redeem_code(&code_hash, at).await? {
            Redeemed::Fresh(issued) => issued,
            Redeemed::Unknown | Redeemed::Expired => {
                return Err(OAuthError::InvalidGrant(
                    "that code is unknown or has expired — start the sign-in again".to_string(),
                ));
            }
            Redeemed::Reused => {
                return Err(OAuthError::InvalidGrant(
                    "that code was used before, so the tokens it gave are revoked — start the sign-in again"
                        .to_string(),
                ));
            }
        };
        check_redeemed(&issued, verifier, client_id, redirect_uri)?;
        if let Some(resource) = resource
            && resource.trim_end_matches('/') != issued.resource
        {
            return Err(OAuthError::InvalidTarget(format!(
                "that code was granted for {} only",
                issued.resource
            )));
        }
        let (tokens, access, refresh_hash) = issue(&issued.person, client_id);
        self.inner
            .store
            .open_grant(&code_hash, issued, access, &refresh_hash, at)
            .await?;
        Ok(tokens)
    }

    /// The token endpoint's `refresh_token` grant: the refresh token is
    /// rotated; one presented again ends the whole grant. A `resource`, when
    /// sent, must be the grant's.
    pub async fn refresh(
        &self,
        refresh: &str,
        client_id: &str,
        resource: Option<&str>,
    ) -> Result<IssuedTokens, OAuthError> {
        if let Some(refused) = resource.and_then(|r| self.other_resource(r)) {
            return Err(OAuthError::InvalidTarget(refused));
        }
        let at = now();
        let refresh_hash = hash(refresh.trim());
        let unknown = || {
            OAuthError::InvalidGrant(
                "that refresh token is unknown or revoked — sign in again".to_string(),
            )
        };
        let person = self
            .inner
            .store
            .refresh_person(&refresh_hash)
            .await?
            .ok_or_else(unknown)?;
        let (tokens, access, new_refresh_hash) = issue(&person, client_id);
        match self
            .inner
            .store
            .refresh_grant(&refresh_hash, client_id, access, &new_refresh_hash, at)
            .await?
        {
            Refreshed::Rotated { .. } => Ok(tokens),
            Refreshed::Unknown => Err(unknown()),
            Refreshed::Reused => Err(OAuthError::InvalidGrant(
                "that refresh token was used before, so the whole grant is revoked — sign in again"
                    .to_string(),
            )),
        }
    }

    /// Revokes the grant of an access or refresh token (RFC 7009: an
    /// unknown token is no error).
    pub async fn revoke_oauth_token(&self, token: &str) -> Result<(), HostError> {
        self.inner
            .store
            .revoke_grant_of(&hash(token.trim()), now())
            .await?;
        Ok(())
    }
}

/// A fresh code's client, redirect and PKCE verifier, as issued.
fn check_redeemed(
    issued: &CodeRecord,
    verifier: &str,
    client_id: &str,
    redirect_uri: &str,
) -> Result<(), OAuthError> {
    if issued.client != client_id {
        return Err(OAuthError::InvalidGrant(
            "that code was issued to another client".to_string(),
        ));
    }
    if issued.redirect_uri != redirect_uri {
        return Err(OAuthError::InvalidGrant(
            "redirect_uri differs from the one the code was issued for".to_string(),
        ));
    }
    let verifier_ok = (43..=128).contains(&verifier.len())
        && bool::from(s256(verifier).as_bytes().ct_eq(issued.challenge.as_bytes()));
    if !verifier_ok {
        return Err(OAuthError::InvalidGrant(
            "the code_verifier does not match the code_challenge — the code is spent; start again"
                .to_string(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    // A flooder refused the reserve reads which budget and when to come back.
    #[test]
    fn a_flooder_refused_the_reserve_is_told_so() {
        let refused = too_many_registrations(Wait {
            spent: Spent::Reserve,
            seconds: 42,
        });
        assert_eq!(
            refused.to_string(),
            "too many clients were registered here lately, and one from your address within the hour (shed keeps the last 20 of the 60 it takes at once for addresses that registered none) — nothing was registered; try again in 42 seconds"
        );
    }

    // A client's name is shown on the activity, the consent page and the
    // terminal: one that holds a control or a reordering character, or is
    // too long, is refused with the sentence that says what to send.
    #[test]
    fn a_client_name_is_plain_and_bounded() {
        let register = |name: &str| {
            checked_client("c".into(), Some(name), vec!["https://a.example/cb".into()])
                .map(|client| client.name)
                .map_err(|refusal| refusal.to_string())
        };
        assert_eq!(register("  Claude  ").as_deref(), Ok("Claude"));
        for bad in ["Evil\u{1b}[2J", "Good\u{202e}dab", &"a".repeat(101)] {
            let refused = register(bad).unwrap_err();
            assert!(
                refused.contains("client_name is up to 100 plain characters"),
                "{refused}"
            );
        }
    }

    #[test]
    fn redirects_are_https_or_loopback_and_match_exactly_but_a_loopback_port() {
        assert!(acceptable_redirect("https://claude.example/cb"));
        assert!(acceptable_redirect("http://127.0.0.1:3000/cb"));
        assert!(!acceptable_redirect("http://evil.example/cb"));
        assert!(!acceptable_redirect("https://x.example/cb#frag"));
        assert!(!acceptable_redirect("javascript:alert(1)"));
        assert!(redirect_matches(
            "http://127.0.0.1/cb",
            "http://127.0.0.1:5555/cb"
        ));
        assert!(!redirect_matches(
            "http://127.0.0.1/cb",
            "http://127.0.0.1:5555/other"
        ));
        assert!(!redirect_matches(
            "https://a.example/cb",
            "https://a.example/cb2"
        ));
        assert!(!redirect_matches(
            "https://a.example/cb",
            "https://a.example:444/cb"
        ));
    }

    async fn host_with_ada() -> (tempfile::TempDir, Host, Person) {
        let dir = tempfile::tempdir().unwrap();
        let host = Host::open(crate::HostConfig {
            data_dir: dir.path().to_path_buf(),
            public_url: "http://localhost:7700".into(),
            database: shed_test_database::for_folder(dir.path()),
        })
        .await
        .unwrap();
        let ada = host.add_person("ada", Some("Ada")).await.unwrap();
        (dir, host, ada)
    }

    const VERIFIER: &str = "dBjftJeZ4CVP-mJ92K3OdADkWJW-7gD3AVcgq3ivp8M";

    #[tokio::test]
    async fn a_code_once_with_its_verifier_then_refreshes_rotate_and_a_replay_ends_the_grant() {
        let (_dir, host, ada) = host_with_ada().await;
        let registration = |name: &str, uri: &str| Registration {
            client_name: Some(name.into()),
            redirect_uris: vec![uri.into()],
            ..Registration::default()
        };
        let refused = host
            .register_client(registration("Evil", "http://evil.example/cb"), None)
            .await
            .unwrap_err();
        assert_eq!(refused.code(), "invalid_redirect_uri");
        let secretive = Registration {
            token_endpoint_auth_method: Some("client_secret_basic".into()),
            ..registration("Chat", "http://127.0.0.1/cb")
        };
        let refused = host.register_client(secretive, None).await.unwrap_err();
        assert_eq!(refused.code(), "invalid_client_metadata");
        let client = host
            .register_client(registration("Chat", "http://127.0.0.1/cb"), None)
            .await
            .unwrap();
        let mut ask = AuthorizationAsk {
            response_type: "code".into(),
            client_id: client.id.clone(),
            redirect_uri: "http://127.0.0.1:4321/cb".into(),
            code_challenge: s256(VERIFIER),
            code_challenge_method: "plain".into(),
            resource: None,
        };
        let refused = host.check_ask(&ask, None).await.unwrap_err();
        assert!(
            refused.0.contains("code_challenge_method=S256"),
            "{refused}"
        );
        ask.code_challenge_method = "S256".into();
        let checked = host.check_ask(&ask, None).await.unwrap();
        assert_eq!(checked.redirect_host, "127.0.0.1");
        let other = AuthorizationAsk {
            redirect_uri: "https://elsewhere.example/cb".into(),
            ..ask.clone()
        };
        assert!(host.check_ask(&other, None).await.is_err());

        let code = host.grant_code(&ada, &ask, &checked).await.unwrap();
        let wrong = "x".repeat(43);
        let refused = host
            .exchange_code(&code, &wrong, &client.id, &ask.redirect_uri, None)
            .await
            .unwrap_err();
        assert_eq!(refused.code(), "invalid_grant", "a wrong verifier");

        let code = host.grant_code(&ada, &ask, &checked).await.unwrap();
        let tokens = host
            .exchange_code(&code, VERIFIER, &client.id, &ask.redirect_uri, None)
            .await
            .unwrap();
        assert!(host.caller_for_token(&tokens.access_token).await.is_ok());
        let again = host
            .exchange_code(&code, VERIFIER, &client.id, &ask.redirect_uri, None)
            .await
            .unwrap_err();
        assert_eq!(again.code(), "invalid_grant");
        assert!(
            host.caller_for_token(&tokens.access_token).await.is_err(),
            "a code used twice revokes what it gave"
        );

        let code = host.grant_code(&ada, &ask, &checked).await.unwrap();
        let first = host
            .exchange_code(&code, VERIFIER, &client.id, &ask.redirect_uri, None)
            .await
            .unwrap();
        let second = host
            .refresh(&first.refresh_token, &client.id, None)
            .await
            .unwrap();
        assert!(host.caller_for_token(&second.access_token).await.is_ok());
        let replay = host
            .refresh(&first.refresh_token, &client.id, None)
            .await
            .unwrap_err();
        assert_eq!(replay.code(), "invalid_grant");
        assert!(host.caller_for_token(&second.access_token).await.is_err());
        assert!(
            host.refresh(&second.refresh_token, &client.id, None)
                .await
                .is_err()
        );

        let code = host.grant_code(&ada, &ask, &checked).await.unwrap();
        let third = host
            .exchange_code(&code, VERIFIER, &client.id, &ask.redirect_uri, None)
            .await
            .unwrap();
        host.revoke_oauth_token(&third.refresh_token).await.unwrap();
        assert!(host.caller_for_token(&third.access_token).await.is_err());
    }

    #[test]
    fn s256_is_base64url_of_sha256_unpadded() {
        // Computed apart: base64.urlsafe_b64encode(sha256(verifier)) in Python, '=' stripped.
        assert_eq!(
            s256("dBjftJeZ4CVP-mJ92K3OdADkWJW-7gD3AVcgq3ivp8M"),
            "YpufkTFi3rca7K9heR3Rw4S55uX_EjflC3Rx4HCLc8c"
        );
    }
}
