//! The Streamable HTTP door at `/mcp`: an axum router other doors' routes
//! can be merged into, refusing with 403 a request whose `Host` or `Origin`
//! is not the public URL's (or loopback, when serving on loopback) — a DNS
//! rebinding page cannot reach a local shed — and with 503 an `initialize`
//! past the session caps of [`crate::sessions`]. The peer address of a
//! signed-out `initialize` is axum's `ConnectInfo<SocketAddr>`, when the
//! server was started with it.
//!
//! Who is calling is read once a request, before rmcp, by the host
//! (`Host::caller_of`), and handed to the handler in the request's
//! extensions. The MCP authorization spec's answers are made here, on HTTP:
//! a bearer token the host refuses (unknown, expired, revoked, or an OAuth
//! token of another resource) is a 401 with `error="invalid_token"`; signed
//! out, a request the host answers signed out
//! (`shed_host::oauth::answered_signed_out`: the handshake and the lists) is
//! answered as ever, and any other is a 401 whose `WWW-Authenticate` names
//! the protected resource's metadata, so a client starts the OAuth flow and
//! tries again. A POST's body is read (within rmcp's own bound) only when
//! the door must know its methods — signed out, or when it may open a
//! session — and parsed once for both questions.

use std::{net::SocketAddr, sync::Arc};

use axum::{
    Router,
    body::{Body, Bytes},
    extract::{ConnectInfo, Request, State},
    response::{IntoResponse, Response},
    routing::any,
};
use http::{Method, StatusCode, request::Parts};
use rmcp::model::ProtocolVersion;
use rmcp::transport::{
    common::http_header::{HEADER_MCP_METHOD, HEADER_MCP_PROTOCOL_VERSION, HEADER_SESSION_ID},
    streamable_http_server::{SessionId, StreamableHttpServerConfig, StreamableHttpService},
};
use shed_host::oauth::{RESOURCE_METADATA_PATH, SCOPE, SIGN_IN_TO_MCP, answered_signed_out};
use shed_host::{Caller, Host, HostError};

use crate::{
    door::{Door, ListedTools, Resolved, caller_of},
    sessions::{Owner, Reservation, Sessions},
};

/// The path of the MCP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// Why the HTTP door could not be built.
#[derive(Debug, thiserror::Error)]
pub enum HttpDoorError {
    /// The host's public URL is not an absolute http(s) URL.
    #[error(
        "the public URL {0} is not an http:// or https:// address such as http://localhost:7700"
    )]
    PublicUrl(String),
}

/// Which `Host` and `Origin` values the endpoint answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedCallers {
    /// `Host` header values: `host` or `host:port`.
    pub hosts: Vec<String>,
    /// `Origin` values: `scheme://host:port`.
    pub origins: Vec<String>,
}

impl AllowedCallers {
    /// The public URL's host and origin, and the loopback names at the
    /// listening port when `listen` is a loopback address.
    pub fn for_server(public_url: &str, listen: SocketAddr) -> Result<Self, HttpDoorError> {
        let bad = || HttpDoorError::PublicUrl(public_url.to_string());
        let uri: http::Uri = public_url.parse().map_err(|_| bad())?;
        let scheme = uri.scheme_str().ok_or_else(bad)?.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return Err(bad()),
        };
        let authority = uri.authority().ok_or_else(bad)?;
        let host = authority.host().to_ascii_lowercase();
        let port = authority.port_u16().unwrap_or(default_port);
        let mut hosts = vec![match authority.port_u16() {
            Some(port) => format!("{host}:{port}"),
            None => host.clone(),
        }];
        let mut origins = vec![format!("{scheme}://{host}:{port}")];
        if listen.ip().is_loopback() {
            let port = listen.port();
            for name in ["localhost", "127.0.0.1", "[::1]"] {
                let host = format!("{name}:{port}");
                if !hosts.contains(&host) {
                    hosts.push(host);
                }
                let origin = format!("http://{name}:{port}");
                if !origins.contains(&origin) {
                    origins.push(origin);
                }
            }
        }
        Ok(AllowedCallers { hosts, origins })
    }
}

/// The router serving the MCP door at [`MCP_PATH`] for a server listening on `listen`.
pub fn router(host: Host, listen: SocketAddr) -> Result<Router, HttpDoorError> {
    let allowed = AllowedCallers::for_server(host.public_url(), listen)?;
    tracing::debug!(?allowed, "the MCP door answers these hosts and origins");
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(allowed.hosts)
        .with_allowed_origins(allowed.origins)
        .enforce_origin_validation()
        .with_json_response(true);
    let max_body = config.max_request_body_bytes;
    let listed = ListedTools::default();
    let sessions = Sessions::default();
    let door_host = host.clone();
    let service = StreamableHttpService::new(
        move || Ok(Door::over_http(door_host.clone(), listed.clone())),
        Arc::new(sessions.clone()),
        config,
    );
    let door = HttpDoor {
        host,
        sessions,
        service,
        max_body,
    };
    Ok(Router::new()
        .route(MCP_PATH, any(answer))
        .with_state(Arc::new(door)))
}

/// The JSON-RPC error code of a 401's body: a server error of JSON-RPC's
/// implementation-defined range (-32000 to -32099), which neither the MCP
/// spec nor rmcp names for a request not signed in.
pub const UNAUTHORIZED_CODE: i32 = -32001;

/// rmcp's service, and the session ledger it shares with the door.
struct HttpDoor {
    host: Host,
    sessions: Sessions,
    service: StreamableHttpService<Door, Sessions>,
    /// rmcp's own bound on a request body, kept when the door reads one first.
    max_body: usize,
}

/// One request to [`MCP_PATH`]: its caller read, admitted (holding a place
/// when it opens a session), answered by rmcp, and the place bound to the
/// session opened.
async fn answer(State(door): State<Arc<HttpDoor>>, request: Request) -> Response {
    let caller = match caller_of(&door.host, request.headers()).await {
        Ok(caller) => caller,
        Err(HostError::SignIn(sentence)) => {
            // Read to its end (within rmcp's bound), so the connection stays
            // open and a client reads the answer rather than a reset.
            let _ = axum::body::to_bytes(request.into_body(), door.max_body).await;
            return door.unauthorized(Some(&sentence), &sentence);
        }
        Err(error) => {
            tracing::error!(%error, "could not read who is calling the MCP door");
            return (StatusCode::INTERNAL_SERVER_ERROR, error.to_string()).into_response();
        }
    };
    let (mut request, reservation) = match door.admit(request, &caller).await {
        Ok(admitted) => admitted,
        Err(refusal) => return refusal,
    };
    request.extensions_mut().insert(Resolved(caller));
    let ends_a_session = request.method() == Method::DELETE;
    let mut response = door.service.handle(request).await;
    // rmcp answers a session's DELETE 202 Accepted once the session is
    // closed; clients (the official Python SDK) take only 200 or 204 as done.
    if ends_a_session && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    if let Some(reservation) = reservation
        && let Some(id) = session_id(response.headers())
    {
        door.sessions.bind(reservation, id).await;
    }
    response.map(Body::new)
}

impl HttpDoor {
    /// The request again, with a place taken when it may open a session (a
    /// POST without `Mcp-Session-Id` whose body is an `initialize`, or is
    /// not readable JSON-RPC); or the 503 saying which cap it would pass; or,
    /// signed out, the 401 for a request the host does not answer signed out.
    async fn admit(
        &self,
        request: Request,
        caller: &Caller,
    ) -> Result<(Request, Option<Reservation>), Response> {
        let signed_out = matches!(caller, Caller::Nobody);
        let may_open = !request.headers().contains_key(HEADER_SESSION_ID)
            && !says_it_is_no_initialize(request.headers());
        if request.method() != Method::POST || !(signed_out || may_open) {
            return Ok((request, None));
        }
        let (parts, body) = request.into_parts();
        let body = axum::body::to_bytes(body, self.max_body)
            .await
            .map_err(|_| too_large(self.max_body))?;
        let sent = Sent::read(&body);
        if signed_out && sent.asks_beyond_signed_out() {
            return Err(self.unauthorized(None, SIGN_IN_TO_MCP));
        }
        let owner = if may_open && sent.opens_a_session() {
            Some(self.owner(&parts, caller))
        } else {
            None
        };
        let request = Request::from_parts(parts, Body::from(body));
        let Some(owner) = owner else {
            return Ok((request, None));
        };
        match self.sessions.reserve(owner) {
            Ok(reservation) => Ok((request, Some(reservation))),
            Err(refusal) => {
                tracing::debug!(%refusal, "refused a new MCP session");
                Err((StatusCode::SERVICE_UNAVAILABLE, refusal.to_string()).into_response())
            }
        }
    }

    /// Who opens a session: the person of the bearer token, else the peer address.
    fn owner(&self, parts: &Parts, caller: &Caller) -> Owner {
        if let Some(person) = caller.person() {
            return Owner::Person(person.eid.clone());
        }
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(peer)| peer.ip());
        Owner::address(peer)
    }
}

impl HttpDoor {
    /// A 401 whose `WWW-Authenticate` names the resource's metadata and
    /// scope — with `error="invalid_token"` and its sentence when a token
    /// was refused (RFC 6750 §3) — and whose body is a JSON-RPC error
    /// ([`UNAUTHORIZED_CODE`], `id` null) holding the sentence, which an MCP
    /// client shows as its request's error (the authorization spec asks
    /// only for the status and the challenge, and leaves the body free).
    fn unauthorized(&self, invalid_token: Option<&str>, sentence: &str) -> Response {
        let mut challenge = format!(
            "Bearer resource_metadata=\"{}{RESOURCE_METADATA_PATH}\", scope=\"{SCOPE}\"",
            self.host.public_url()
        );
        if let Some(why) = invalid_token {
            let why: String = why
                .chars()
                // A quoted-string of plain ASCII (RFC 6750 §3).
                .map(|c| match c {
                    '"' | '\\' => '\'',
                    c if c.is_ascii_control() => ' ',
                    c if !c.is_ascii() => '-',
                    c => c,
                })
                .collect();
            challenge.push_str(&format!(
                ", error=\"invalid_token\", error_description=\"{why}\""
            ));
        }
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": { "code": UNAUTHORIZED_CODE, "message": sentence },
        });
        let mut response = (StatusCode::UNAUTHORIZED, axum::Json(body)).into_response();
        if let Ok(value) = http::HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(http::header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

/// A POST's body as the door reads it before rmcp: the ids and methods of
/// its JSON-RPC messages, read once for both of the door's questions.
enum Sent {
    One(Message),
    Batch(Vec<Message>),
    /// Not JSON-RPC the door can read; rmcp answers it.
    Unreadable,
}

#[derive(serde::Deserialize)]
struct Message {
    id: Option<serde_json::Value>,
    method: Option<String>,
}

impl Sent {
    fn read(body: &Bytes) -> Sent {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Read {
            One(Message),
            Batch(Vec<Message>),
        }
        match serde_json::from_slice::<Read>(body) {
            Ok(Read::One(message)) => Sent::One(message),
            Ok(Read::Batch(messages)) => Sent::Batch(messages),
            Err(_) => Sent::Unreadable,
        }
    }

    /// Whether it asks what a signed-out caller may not: a JSON-RPC request
    /// (one with an `id`), alone or in a batch, whose method the host does
    /// not answer signed out. Notifications, answers and what is not
    /// JSON-RPC pass, for rmcp to answer.
    fn asks_beyond_signed_out(&self) -> bool {
        let beyond = |message: &Message| {
            message.id.is_some()
                && message
                    .method
                    .as_deref()
                    .is_some_and(|method| !answered_signed_out(method))
        };
        match self {
            Sent::One(message) => beyond(message),
            Sent::Batch(messages) => messages.iter().any(beyond),
            Sent::Unreadable => false,
        }
    }

    /// Whether it may open a session: any but a readable JSON-RPC message
    /// whose method is not `initialize` (rmcp answers the unreadable ones).
    fn opens_a_session(&self) -> bool {
        match self {
            Sent::One(message) => message.method.as_deref() == Some("initialize"),
            Sent::Batch(_) | Sent::Unreadable => true,
        }
    }
}

/// Whether the headers alone say the request is no `initialize`: a
/// 2026-07-28 client names its method in one `Mcp-Method` header, and rmcp
/// refuses an `initialize` whose `Mcp-Method` says otherwise once the
/// `Mcp-Protocol-Version` is 2026-07-28 or later — so such a request opens
/// no session, and its body need not be read here (the MCP door's hot path).
fn says_it_is_no_initialize(headers: &http::HeaderMap) -> bool {
    let standard_headers = headers
        .get(HEADER_MCP_PROTOCOL_VERSION)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|version| version >= ProtocolVersion::STANDARD_HEADERS.as_str());
    let mut methods = headers.get_all(HEADER_MCP_METHOD).iter();
    match (methods.next(), methods.next()) {
        (Some(method), None) => standard_headers && method != "initialize",
        _ => false,
    }
}

/// The session rmcp opened, from its answer's `Mcp-Session-Id`.
fn session_id(headers: &http::HeaderMap) -> Option<SessionId> {
    let id = headers.get(HEADER_SESSION_ID)?.to_str().ok()?;
    Some(SessionId::from(id))
}

/// The answer to a body the door could not read whole.
fn too_large(max_body: usize) -> Response {
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "the request body could not be read whole; the MCP door reads at most {max_body} bytes of JSON-RPC a request — send a smaller one"
        ),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_serving_answers_its_public_url_and_the_loopback_names() {
        let allowed =
            AllowedCallers::for_server("http://localhost:7700", "127.0.0.1:7700".parse().unwrap())
                .unwrap();
        assert_eq!(
            allowed.hosts,
            ["localhost:7700", "127.0.0.1:7700", "[::1]:7700"]
        );
        assert_eq!(
            allowed.origins,
            [
                "http://localhost:7700",
                "http://127.0.0.1:7700",
                "http://[::1]:7700"
            ]
        );
    }

    #[test]
    fn a_public_server_answers_only_its_public_url() {
        let allowed =
            AllowedCallers::for_server("https://shed.example.org", "0.0.0.0:7700".parse().unwrap())
                .unwrap();
        assert_eq!(allowed.hosts, ["shed.example.org"]);
        assert_eq!(allowed.origins, ["https://shed.example.org:443"]);
    }

    #[test]
    fn only_a_single_standard_mcp_method_header_spares_the_body() {
        let headers = |pairs: &[(&str, &str)]| {
            let mut map = http::HeaderMap::new();
            for (name, value) in pairs {
                map.append(
                    http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                    value.parse().unwrap(),
                );
            }
            map
        };
        let current = ("mcp-protocol-version", "2026-07-28");
        assert!(says_it_is_no_initialize(&headers(&[
            current,
            ("mcp-method", "tools/call")
        ])));
        for unsure in [
            headers(&[current, ("mcp-method", "initialize")]),
            headers(&[current]),
            headers(&[("mcp-method", "tools/call")]),
            headers(&[
                ("mcp-protocol-version", "2025-06-18"),
                ("mcp-method", "tools/call"),
            ]),
            headers(&[
                current,
                ("mcp-method", "tools/call"),
                ("mcp-method", "tools/list"),
            ]),
        ] {
            assert!(!says_it_is_no_initialize(&unsure), "{unsure:?}");
        }
    }

    #[test]
    fn only_an_initialize_or_an_unreadable_body_may_open_a_session() {
        let opens = |body: &str| Sent::read(&Bytes::from(body.to_string())).opens_a_session();
        assert!(opens(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#
        ));
        assert!(opens("not json"));
        assert!(!opens(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#
        ));
        assert!(!opens(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        ));
    }

    #[test]
    fn signed_out_only_the_handshake_and_the_lists_pass() {
        let beyond =
            |body: &str| Sent::read(&Bytes::from(body.to_string())).asks_beyond_signed_out();
        for free in shed_host::oauth::SIGNED_OUT_METHODS {
            assert!(!beyond(&format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"{free}"}}"#
            )));
        }
        assert!(beyond(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#));
        assert!(beyond(
            r#"{"jsonrpc":"2.0","id":"a","method":"resources/read"}"#
        ));
        assert!(beyond(
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"prompts/get"}]"#
        ));
        assert!(!beyond(
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]"#
        ));
        assert!(!beyond(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
        ));
        assert!(!beyond(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#));
        assert!(!beyond("not json"));
    }

    #[test]
    fn a_public_url_without_a_scheme_is_a_sentence() {
        let error = AllowedCallers::for_server("localhost:7700", "127.0.0.1:7700".parse().unwrap())
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "the public URL localhost:7700 is not an http:// or https:// address such as http://localhost:7700"
        );
    }
}
