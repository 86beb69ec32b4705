//! shed's OAuth 2.1 endpoints on the platform's host, for MCP clients that
//! sign in through the browser — HTTP only: every check and every secret is
//! shed-host's (`shed_host::oauth`).
//!
//! - `/.well-known/oauth-protected-resource` (and `…/mcp`, RFC 9728): the MCP
//!   endpoint as a protected resource, and who authorizes it;
//! - `/.well-known/oauth-authorization-server` (RFC 8414): the endpoints
//!   below, PKCE S256 only, public clients, Client ID Metadata Documents;
//! - `/oauth/register` (RFC 7591, JSON), with the peer's address for the
//!   host's rate limit (429 with `Retry-After` past it);
//! - `/oauth/authorize`: GET is the consent page — which client asks (its
//!   name *and* the host of its redirect URI), as whom it will act, what it
//!   will reach — with Allow and Deny; signed out, how to sign in, and a
//!   cookie that brings the browser back here after the sign-in. POST is the
//!   decision: from this host's own pages only (`WebCaller::writes_from_elsewhere`),
//!   as for the sign-in button. Every refusal of the request is shed's own
//!   page, never a redirect: the client is sent back only after the person
//!   pressed Allow or Deny (RFC 9700 §4.11.2);
//! - `/oauth/token` (form: `authorization_code` with PKCE, `refresh_token`),
//!   answered `Cache-Control: no-store`;
//! - `/oauth/revoke` (RFC 7009: 200 for a token it does not know too).
//!
//! The metadata, registration, token and revocation answers may be read by
//! any page (`Access-Control-Allow-Origin: *`): they take no cookie, so a
//! page gains nothing a program could not.

use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::{FormRejection, JsonRejection, QueryRejection};
use axum::extract::{Form, Json, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use serde_json::{Value, json};
use shed_host::credentials::Told;
use shed_host::oauth::{
    AskRefusal, AuthorizationAsk, CheckedAsk, IssuedTokens, OAuthError, RESOURCE_METADATA_PATH,
    Registration, SCOPE,
};
use shed_host::{Caller, HostError, Person};

use crate::caller::{WebCaller, cookie, return_cookie};
use crate::client_address::ClientAddress;
use crate::door::Door;
use crate::pages::ACCOUNT_PATH;
use crate::reply::{Refusal, escape, form_page, json, page, see_other};

/// Where the consent page is.
pub const AUTHORIZE_PATH: &str = "/oauth/authorize";
/// The token endpoint.
pub const TOKEN_PATH: &str = "/oauth/token";
/// Dynamic Client Registration.
pub const REGISTER_PATH: &str = "/oauth/register";
/// Token revocation.
pub const REVOKE_PATH: &str = "/oauth/revoke";
/// The authorization server's metadata.
pub const SERVER_METADATA_PATH: &str = "/.well-known/oauth-authorization-server";
/// The protected resource's metadata at the host's root.
pub const ROOT_RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// What a query value keeps as it is: RFC 3986's unreserved characters.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

pub(crate) fn router(door: Arc<Door>) -> Router {
    Router::new()
        .route(ROOT_RESOURCE_METADATA_PATH, get(resource_metadata))
        .route(RESOURCE_METADATA_PATH, get(resource_metadata))
        .route(SERVER_METADATA_PATH, get(server_metadata))
        .route(
            REGISTER_PATH,
            axum::routing::post(register).options(preflight),
        )
        .route(AUTHORIZE_PATH, get(ask).post(decide))
        .route(TOKEN_PATH, axum::routing::post(token).options(preflight))
        .route(REVOKE_PATH, axum::routing::post(revoke).options(preflight))
        .with_state(door)
}

/// JSON any page may read.
fn open_json(status: StatusCode, body: Value) -> Response {
    let mut response = json(status, body);
    response.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    response
}

/// The answer to a page's CORS preflight for the endpoints any page may call.
async fn preflight() -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    for (name, value) in [
        (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
        (header::ACCESS_CONTROL_ALLOW_METHODS, "POST, OPTIONS"),
        (
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            "content-type, mcp-protocol-version",
        ),
        (header::ACCESS_CONTROL_MAX_AGE, "600"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

async fn resource_metadata(State(door): State<Arc<Door>>) -> Response {
    let host = &door.host;
    let document = json!({
        "resource": host.mcp_resource(),
        "authorization_servers": [host.public_url()],
        "scopes_supported": [SCOPE],
        "bearer_methods_supported": ["header"],
        "resource_name": "shed",
    });
    open_json(
        StatusCode::OK,
        door.operator
            .named_in(document, "resource_policy_uri", "resource_tos_uri"),
    )
}

async fn server_metadata(State(door): State<Arc<Door>>) -> Response {
    let url = door.host.public_url();
    let document = json!({
            "issuer": url,
            "authorization_endpoint": format!("{url}{AUTHORIZE_PATH}"),
            "token_endpoint": format!("{url}{TOKEN_PATH}"),
            "registration_endpoint": format!("{url}{REGISTER_PATH}"),
            "revocation_endpoint": format!("{url}{REVOKE_PATH}"),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "revocation_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": [SCOPE],
            "client_id_metadata_document_supported": true,
    });
    open_json(
        StatusCode::OK,
        door.operator
            .named_in(document, "op_policy_uri", "op_tos_uri"),
    )
}

/// An OAuth error body, `{"error", "error_description"}`, with its status:
/// 401 for `invalid_client`, 429 with `Retry-After` for too many
/// registrations, 500 for `server_error`, else 400.
fn oauth_error(error: &OAuthError) -> Response {
    let status = match error {
        OAuthError::InvalidClient(_) => StatusCode::UNAUTHORIZED,
        OAuthError::TooManyRegistrations { .. } => StatusCode::TOO_MANY_REQUESTS,
        OAuthError::Host(HostError::Internal(why)) => {
            tracing::error!(%why, "the host failed answering an OAuth request");
            StatusCode::INTERNAL_SERVER_ERROR
        }
        _ => StatusCode::BAD_REQUEST,
    };
    let mut response = open_json(
        status,
        json!({ "error": error.code(), "error_description": error.to_string() }),
    );
    if let OAuthError::TooManyRegistrations { retry_after, .. } = error {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(*retry_after));
    }
    response
}

/// `POST /oauth/register`: the host decides, by the peer's address, whether
/// it takes one more registration.
async fn register(
    State(door): State<Arc<Door>>,
    ClientAddress(from): ClientAddress,
    body: Result<Json<Registration>, JsonRejection>,
) -> Response {
    let registration = match body {
        Ok(Json(registration)) => registration,
        Err(rejection) => {
            return oauth_error(&OAuthError::InvalidClientMetadata(format!(
                "the registration is not the JSON object RFC 7591 describes ({}) — send redirect_uris and client_name",
                rejection.body_text()
            )));
        }
    };
    match door.host.register_client(registration, from).await {
        Ok(client) => open_json(
            StatusCode::CREATED,
            json!({
                "client_id": client.id,
                "client_id_issued_at": std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |since| since.as_secs()),
                "client_name": client.name,
                "redirect_uris": client.redirect_uris,
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
                "scope": SCOPE,
            }),
        ),
        Err(error) => oauth_error(&error),
    }
}

/// An authorization request's parameters (the query of GET, the consent
/// form's hidden fields on POST), and on POST the button pressed.
#[derive(Debug, Default, serde::Deserialize)]
struct AskForm {
    response_type: Option<String>,
    client_id: Option<String>,
    redirect_uri: Option<String>,
    code_challenge: Option<String>,
    code_challenge_method: Option<String>,
    resource: Option<String>,
    scope: Option<String>,
    state: Option<String>,
    decision: Option<String>,
}

impl AskForm {
    fn ask(&self) -> AuthorizationAsk {
        let text = |field: &Option<String>| field.clone().unwrap_or_default();
        AuthorizationAsk {
            response_type: text(&self.response_type),
            client_id: text(&self.client_id),
            redirect_uri: text(&self.redirect_uri),
            code_challenge: text(&self.code_challenge),
            code_challenge_method: text(&self.code_challenge_method),
            resource: self.resource.clone(),
        }
    }

    /// The request's parameters that are present, by name.
    fn fields(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [
            ("response_type", &self.response_type),
            ("client_id", &self.client_id),
            ("redirect_uri", &self.redirect_uri),
            ("code_challenge", &self.code_challenge),
            ("code_challenge_method", &self.code_challenge_method),
            ("resource", &self.resource),
            ("scope", &self.scope),
            ("state", &self.state),
        ]
        .into_iter()
        .filter_map(|(name, value)| value.as_deref().map(|value| (name, value)))
    }

    /// The request again, as a query string (what the sign-in brings back).
    fn query(&self) -> String {
        self.fields()
            .map(|(name, value)| format!("{name}={}", utf8_percent_encode(value, UNRESERVED)))
            .collect::<Vec<_>>()
            .join("&")
    }
}

/// `uri` with `params` added to its query, each percent-encoded.
fn with_params(uri: &str, params: &[(&str, Option<&str>)]) -> String {
    let mut out = uri.to_string();
    let mut separator = if uri.contains('?') { '&' } else { '?' };
    for (name, value) in params {
        if let Some(value) = value {
            out.push(separator);
            out.push_str(name);
            out.push('=');
            out.push_str(&utf8_percent_encode(value, UNRESERVED).to_string());
            separator = '&';
        }
    }
    out
}

/// A 303 to the client's redirect URI `to`, or the page saying it cannot be sent.
fn to_client(to: &str) -> Response {
    if HeaderValue::from_str(to).is_err() {
        return refused_page(
            "the redirect URI cannot be sent as an address — the app asking must register a plain one",
        );
    }
    see_other(to, [])
}

fn refused_page(sentence: &str) -> Response {
    page(
        StatusCode::BAD_REQUEST,
        "This app cannot sign in here",
        &format!(
            "<p>{}</p>\n<p>Nothing was sent to the app. Tell whoever makes it.</p>",
            escape(sentence)
        ),
    )
}

/// `GET /oauth/authorize`: the consent page, or how to sign in first.
async fn ask(
    State(door): State<Arc<Door>>,
    ClientAddress(asker): ClientAddress,
    asking: WebCaller,
    query: Result<Query<AskForm>, QueryRejection>,
) -> Response {
    let form = match query {
        Ok(Query(form)) => form,
        Err(rejection) => {
            return refused_page(&format!(
                "this sign-in request could not be read ({}) — the app asking must send each parameter once",
                rejection.body_text()
            ));
        }
    };
    let checked = match door.host.check_ask(&form.ask(), asker).await {
        Ok(checked) => checked,
        Err(AskRefusal(sentence)) => return refused_page(&sentence),
    };
    match asking.caller.person() {
        Some(person) => consent_page(&door, &asking.caller, person, &checked, &form).await,
        None => sign_in_first(&door, &checked, &form),
    }
}

/// Who the client is, as the page shows it: its name, where it sends you
/// back, and where its metadata document is.
fn client_words(checked: &CheckedAsk) -> String {
    let mut words = format!(
        "<strong>{}</strong> (it sends you back to <code>{}</code>",
        escape(&checked.client.name),
        escape(&checked.redirect_host)
    );
    if let Some(host) = &checked.document_host {
        words.push_str(&format!(
            "; it is described by a document at <code>{}</code>",
            escape(host)
        ));
    }
    words.push(')');
    words
}

/// Signed out: how to sign in, and a cookie that brings this browser back
/// to this very request once it has.
fn sign_in_first(door: &Door, checked: &CheckedAsk, form: &AskForm) -> Response {
    let body = format!(
        "<p>{} asks to use shed as you.</p>\n\
         <p>Sign in first: shed signs you in with a one-time link. Ask whoever runs this shed \
         to run <code>shed login &lt;your handle&gt;</code> on the server, open the link it prints \
         <em>in this browser</em> and press its button. You come back to this page afterwards, \
         to allow or deny the app.</p>",
        client_words(checked)
    );
    let mut response = crate::reply::with_passkey_sign_in(
        door.host.passkeys_off().is_none(),
        StatusCode::OK,
        "Sign in to allow an app",
        &body,
        &door.operator.links(),
    );
    let encoded = utf8_percent_encode(&form.query(), UNRESERVED).to_string();
    if let Some(cookie) = return_cookie(door, Some(&encoded)) {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    response
}

/// The query of the authorization request a browser set out to answer
/// before it signed in, if its return cookie holds one.
pub(crate) fn pending_ask(door: &Door, headers: &HeaderMap) -> Option<String> {
    let kept = cookie(headers, door.return_cookie)?;
    let query = percent_decode_str(kept).decode_utf8().ok()?;
    (!query.is_empty()).then(|| format!("{AUTHORIZE_PATH}?{query}"))
}

/// The consent page: who asks, as whom it acts, what it reaches; Allow, Deny.
async fn consent_page(
    door: &Door,
    caller: &Caller,
    person: &Person,
    checked: &CheckedAsk,
    form: &AskForm,
) -> Response {
    let spaces = match door.host.spaces(caller).await {
        Ok(answer) => answer.data.spaces,
        Err(error) => return Refusal::page(error).into_response(),
    };
    let reach = if spaces.is_empty() {
        "<p>You belong to no space yet, so it reaches only the public and open apps anyone may read.</p>"
            .to_string()
    } else {
        let items: String = spaces
            .iter()
            .map(|space| {
                let apps = match space.apps.len() {
                    1 => "1 app".to_string(),
                    n => format!("{n} apps"),
                };
                format!(
                    "<li>{} — as {} ({apps})</li>",
                    escape(&space.space),
                    escape(space.role),
                )
            })
            .collect();
        format!("<p>It will reach what you reach, in these spaces:</p>\n<ul>{items}</ul>")
    };
    let hidden: String = form
        .fields()
        .map(|(name, value)| {
            format!(
                "<input type=\"hidden\" name=\"{name}\" value=\"{}\">",
                escape(value)
            )
        })
        .collect();
    let body = format!(
        "<p>{client} asks to use shed's MCP server as you, {name} (@{handle}): to run your apps' commands and \
         read and write their data as you may.</p>\n{reach}\n\
         <p>It stays allowed until you revoke it: it is listed under <a href=\"{ACCOUNT_PATH}#clients\">Connected \
         clients</a> on your account page, with a Revoke button.</p>\n\
         <form method=\"post\" action=\"{AUTHORIZE_PATH}\">{hidden}\
         <button type=\"submit\" name=\"decision\" value=\"allow\">Allow</button> \
         <button class=\"secondary\" type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></form>{links}",
        client = client_words(checked),
        links = door.operator.links(),
        name = escape(&person.name),
        handle = escape(&person.handle),
    );
    // The form's answer is a redirect to the client, which a browser holds
    // to `form-action` too: its origin is named beside this host's.
    let Some(origin) = origin_of(&checked.redirect_uri) else {
        return refused_page("the redirect URI has no origin a page may name");
    };
    let mut response = form_page(
        StatusCode::OK,
        &format!("Allow {}?", checked.client.name),
        &body,
        &format!("'self' {origin}"),
    );
    // As on the sign-in page: under `no-referrer` the form's Origin is `null`.
    response.headers_mut().insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    response
}

/// `scheme://host[:port]` of a checked redirect URI, when it is plain
/// enough to name in a Content-Security-Policy.
fn origin_of(uri: &str) -> Option<String> {
    let uri: http::Uri = uri.parse().ok()?;
    let origin = format!("{}://{}", uri.scheme_str()?, uri.authority()?.as_str());
    origin
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b".-:/[]".contains(&b))
        .then_some(origin)
}

/// `POST /oauth/authorize`: Allow or Deny, from this host's own page only.
async fn decide(
    State(door): State<Arc<Door>>,
    ClientAddress(asker): ClientAddress,
    headers: HeaderMap,
    asking: WebCaller,
    form: Result<Form<AskForm>, FormRejection>,
) -> Response {
    let own = door.host.public_url();
    if let Some(from) = asking.writes_from_elsewhere(&headers, own) {
        return page(
            StatusCode::FORBIDDEN,
            "Not allowed",
            &format!(
                "<p>{}</p>",
                escape(&format!(
                    "an app is allowed from shed's own page at {own}, and this request came from {from} — nothing was granted"
                ))
            ),
        );
    }
    let person = match (asking.told, asking.caller.person()) {
        (Told::Session, Some(person)) => person.clone(),
        _ => {
            return page(
                StatusCode::UNAUTHORIZED,
                "Sign in to allow an app",
                "<p>An app is allowed by a person signed in to shed in this browser — nothing was granted. \
                 Open the app's sign-in again after signing in with a <code>shed login</code> link.</p>",
            );
        }
    };
    let form = match form {
        Ok(Form(form)) => form,
        Err(rejection) => {
            return refused_page(&format!(
                "the consent form did not arrive whole ({}) — start the app's sign-in again",
                rejection.body_text()
            ));
        }
    };
    let ask = form.ask();
    let checked = match door.host.check_ask(&ask, asker).await {
        Ok(checked) => checked,
        Err(AskRefusal(sentence)) => return refused_page(&sentence),
    };
    let state = form.state.as_deref();
    match form.decision.as_deref() {
        Some("allow") => match door.host.grant_code(&person, &ask, &checked).await {
            Ok(code) => {
                tracing::info!(person = %person.handle, client = %checked.client.name, "allowed an OAuth client");
                to_client(&with_params(
                    &checked.redirect_uri,
                    &[("code", Some(&code)), ("state", state)],
                ))
            }
            Err(error) => Refusal::page(error).into_response(),
        },
        Some("deny") => to_client(&with_params(
            &checked.redirect_uri,
            &[
                ("error", Some("access_denied")),
                ("error_description", Some("the person denied the request")),
                ("state", state),
            ],
        )),
        _ => {
            refused_page("the consent form said neither allow nor deny — press one of its buttons")
        }
    }
}

/// The token endpoint's form.
#[derive(Debug, Default, serde::Deserialize)]
struct TokenForm {
    grant_type: Option<String>,
    code: Option<String>,
    redirect_uri: Option<String>,
    code_verifier: Option<String>,
    client_id: Option<String>,
    refresh_token: Option<String>,
    resource: Option<String>,
}

fn missing(name: &str) -> OAuthError {
    OAuthError::InvalidRequest(format!("{name} is required"))
}

/// `POST /oauth/token`.
async fn token(
    State(door): State<Arc<Door>>,
    form: Result<Form<TokenForm>, FormRejection>,
) -> Response {
    let form = match form {
        Ok(Form(form)) => form,
        Err(rejection) => {
            return oauth_error(&OAuthError::InvalidRequest(format!(
                "the token request is not a form of single parameters ({})",
                rejection.body_text()
            )));
        }
    };
    let issued = exchange(&door, form).await;
    match issued {
        Ok(tokens) => {
            let mut response = open_json(
                StatusCode::OK,
                json!({
                    "access_token": tokens.access_token,
                    "token_type": "Bearer",
                    "expires_in": tokens.expires_in,
                    "refresh_token": tokens.refresh_token,
                    "scope": SCOPE,
                }),
            );
            response
                .headers_mut()
                .insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
            response
        }
        Err(error) => oauth_error(&error),
    }
}

async fn exchange(door: &Door, form: TokenForm) -> Result<IssuedTokens, OAuthError> {
    let client_id = form.client_id.as_deref().ok_or_else(|| {
        OAuthError::InvalidRequest(
            "client_id is required: shed's clients are public and name themselves".to_string(),
        )
    })?;
    let host = &door.host;
    match form.grant_type.as_deref() {
        Some("authorization_code") => {
            let code = form.code.as_deref().ok_or_else(|| missing("code"))?;
            let verifier = form.code_verifier.as_deref().ok_or_else(|| {
                OAuthError::InvalidRequest(
                    "code_verifier is required: shed takes PKCE (S256) only".to_string(),
                )
            })?;
            let redirect_uri = form
                .redirect_uri
                .as_deref()
                .ok_or_else(|| missing("redirect_uri"))?;
            host.exchange_code(
                code,
                verifier,
                client_id,
                redirect_uri,
                form.resource.as_deref(),
            )
            .await
        }
        Some("refresh_token") => {
            let refresh = form
                .refresh_token
                .as_deref()
                .ok_or_else(|| missing("refresh_token"))?;
            host.refresh(refresh, client_id, form.resource.as_deref())
                .await
        }
        Some(other) => Err(OAuthError::UnsupportedGrantType(format!(
            "grant_type {} is not one shed grants — use authorization_code or refresh_token",
            other.chars().take(40).collect::<String>()
        ))),
        None => Err(missing("grant_type")),
    }
}

/// The revocation endpoint's form.
#[derive(Debug, Default, serde::Deserialize)]
struct RevokeForm {
    token: Option<String>,
}

/// `POST /oauth/revoke`: 200 whether or not the token was one of shed's
/// (RFC 7009 §2.2).
async fn revoke(
    State(door): State<Arc<Door>>,
    form: Result<Form<RevokeForm>, FormRejection>,
) -> Response {
    let Some(token) = form.ok().and_then(|Form(form)| form.token) else {
        return oauth_error(&missing("token"));
    };
    match door.host.revoke_oauth_token(&token).await {
        Ok(()) => open_json(StatusCode::OK, json!({})),
        Err(error) => oauth_error(&OAuthError::Host(error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_are_added_to_a_redirect_encoded() {
        assert_eq!(
            with_params(
                "http://127.0.0.1:5000/cb",
                &[("code", Some("abc")), ("state", Some("a b&c"))]
            ),
            "http://127.0.0.1:5000/cb?code=abc&state=a%20b%26c"
        );
        assert_eq!(
            with_params(
                "https://app.example/cb?x=1",
                &[("error", Some("access_denied")), ("state", None)]
            ),
            "https://app.example/cb?x=1&error=access_denied"
        );
    }

    #[test]
    fn only_a_plain_origin_is_named_in_the_policy() {
        assert_eq!(
            origin_of("http://127.0.0.1:5000/cb?x=1").as_deref(),
            Some("http://127.0.0.1:5000")
        );
        assert_eq!(
            origin_of("https://app.example/cb").as_deref(),
            Some("https://app.example")
        );
    }
}
