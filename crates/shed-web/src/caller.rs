//! Who is asking, as an axum extractor ([`WebCaller`]): the host reads the
//! request's credentials — a bearer token (`Authorization: Bearer …`, as
//! the MCP door takes it; a browser never sends one by itself), else the
//! session cookie of the host asked, else nobody — with the same function
//! the MCP door calls. The session cookie is host-only, `HttpOnly`,
//! `SameSite=Lax`, and `Secure` (named `__Host-…`) over https; so is the
//! short-lived sign-in cookie that binds a sign-in's hops to the browser
//! that pressed the button.
//!
//! The transport's one rule lives here too: a write a browser sends on its
//! cookie must come from a page of the host's own origin
//! ([`foreign_origin`], [`WebCaller::writes_from_elsewhere`]), or any site
//! could make the browser send it.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, header};
use shed_host::Caller;
pub(crate) use shed_host::credentials::cookie;
use shed_host::credentials::{Credentials, Told};
use shed_host::sessions::{HOP_SECONDS, LOGIN_LINK_SECONDS, SESSION_SECONDS};

use crate::door::Door;
use crate::reply::Refusal;

/// The caller of a request, on the host it asked (a space's, or the
/// platform's own), and what told the host who they are.
#[derive(Debug)]
pub(crate) struct WebCaller {
    pub caller: Caller,
    pub told: Told,
}

impl FromRequestParts<Arc<Door>> for WebCaller {
    type Rejection = Refusal;

    async fn from_request_parts(parts: &mut Parts, door: &Arc<Door>) -> Result<Self, Refusal> {
        let space = door.space_of(&parts.headers, &parts.uri);
        let credentials = Credentials::for_web(&parts.headers, door.cookie);
        let (caller, told) = door.host.caller_of(credentials, space.as_deref()).await?;
        Ok(WebCaller { caller, told })
    }
}

impl WebCaller {
    /// Where a write came from, when the browser sent it on its cookie from
    /// a page not of `own`: the words for its `Origin`. `None` for a write
    /// on a bearer token (a browser never sends one by itself) or from home.
    pub(crate) fn writes_from_elsewhere(&self, headers: &HeaderMap, own: &str) -> Option<String> {
        match self.told {
            Told::Session => foreign_origin(headers, own),
            _ => None,
        }
    }
}

/// Where a request came from, when it is not `own` (an origin such as
/// `http://demo.localhost:7700`): the words for its `Origin`, or for its
/// having none. `None` when it came from `own`.
pub(crate) fn foreign_origin(headers: &HeaderMap, own: &str) -> Option<String> {
    let origin = headers
        .get(header::ORIGIN)
        .and_then(|value| value.to_str().ok());
    match origin {
        Some(origin) if origin == own => None,
        Some(origin) => Some(format!(
            "a page of {}",
            origin.chars().take(100).collect::<String>()
        )),
        None => Some("a page that did not say where it is".to_string()),
    }
}

/// The `Set-Cookie` that holds a session on the host answering.
pub(crate) fn session_cookie(door: &Door, session: &str) -> Option<HeaderValue> {
    set_cookie(door, door.cookie, session, SESSION_SECONDS)
}

/// The `Set-Cookie` that drops the session cookie of the host answering.
pub(crate) fn session_cookie_removed(door: &Door) -> Option<HeaderValue> {
    set_cookie(door, door.cookie, "", 0)
}

/// The `Set-Cookie` of the host answering's sign-in secret (the hand-off
/// on the platform's host, a hop's own on a space's), as long as a hop lives.
pub(crate) fn sign_in_cookie(door: &Door, secret: &str) -> Option<HeaderValue> {
    set_cookie(door, door.sign_in_cookie, secret, HOP_SECONDS)
}

/// The `Set-Cookie` of the platform host's return cookie: the
/// authorization request to come back to after signing in (as long as a
/// sign-in link lives), or, with `None`, its removal.
pub(crate) fn return_cookie(door: &Door, query: Option<&str>) -> Option<HeaderValue> {
    match query {
        Some(query) => set_cookie(door, door.return_cookie, query, LOGIN_LINK_SECONDS),
        None => set_cookie(door, door.return_cookie, "", 0),
    }
}

/// The `Set-Cookie` of the cookie `name` on the host answering: `value` for
/// `seconds` (0: its removal), host-only, `HttpOnly`, `SameSite=Lax`,
/// `Secure` over https.
pub(crate) fn set_cookie(
    door: &Door,
    name: &str,
    value: &str,
    seconds: i64,
) -> Option<HeaderValue> {
    let secure = if door.secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{name}={value}; Path=/; Max-Age={seconds}; HttpOnly; SameSite=Lax{secure}"
    ))
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_write_on_a_cookie_must_come_from_home() {
        let own = "http://demo.localhost:7700";
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ORIGIN,
            HeaderValue::from_static("http://evil.localhost:7700"),
        );
        let asking = |told| WebCaller {
            caller: Caller::Nobody,
            told,
        };
        assert_eq!(
            asking(Told::Session).writes_from_elsewhere(&headers, own),
            Some("a page of http://evil.localhost:7700".to_string())
        );
        assert_eq!(
            asking(Told::Bearer).writes_from_elsewhere(&headers, own),
            None
        );
        assert_eq!(
            asking(Told::Nothing).writes_from_elsewhere(&headers, own),
            None
        );
    }

    #[test]
    fn only_the_own_origin_is_at_home() {
        let own = "http://localhost:7700";
        let mut headers = HeaderMap::new();
        assert_eq!(
            foreign_origin(&headers, own).as_deref(),
            Some("a page that did not say where it is")
        );
        headers.insert(header::ORIGIN, HeaderValue::from_static(own));
        assert_eq!(foreign_origin(&headers, own), None);
        for other in [
            "http://evil.localhost:7700",
            "null",
            "http://localhost:7701",
        ] {
            headers.insert(header::ORIGIN, HeaderValue::from_static(other));
            assert_eq!(
                foreign_origin(&headers, own),
                Some(format!("a page of {other}"))
            );
        }
    }
}
