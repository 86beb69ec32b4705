//! Who is asking: a bearer token (`Authorization: Bearer …`, as the MCP door
//! takes it — a browser never sends one by itself), else the session cookie
//! of the host asked, else nobody. The session cookie is host-only,
//! `HttpOnly`, `SameSite=Lax`, and `Secure` (named `__Host-…`) over https;
//! so is the short-lived sign-in cookie that binds a sign-in's hops to the
//! browser that pressed the button.

use axum::http::{HeaderMap, HeaderValue, header};
use shed_host::sessions::{HOP_SECONDS, SESSION_SECONDS};
use shed_host::{Caller, HostError};

use crate::door::Door;

/// How the caller was told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Told {
    Nothing,
    Session,
    Bearer,
}

/// The caller of a request to `space`'s host (`None`: the platform's own).
pub(crate) async fn caller(
    door: &Door,
    headers: &HeaderMap,
    space: Option<&str>,
) -> Result<(Caller, Told), HostError> {
    if let Some(token) = bearer(headers) {
        return Ok((door.host.caller_for_token(token).await?, Told::Bearer));
    }
    match cookie(headers, door.cookie) {
        Some(session) => Ok((
            door.host.caller_for_session(space, session).await?,
            Told::Session,
        )),
        None => Ok((Caller::Nobody, Told::Nothing)),
    }
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// The value of the cookie `name`, from every `Cookie` header.
pub(crate) fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.trim_matches('"'))
        .filter(|value| !value.is_empty())
}

/// Where a request came from, when it is not `own` (an origin such as
/// `http://demo.localhost:7700`): the words for its `Origin`, or for its
/// having none. `None` when it came from `own`. A write on a cookie must
/// come from its own origin, or any site could make the browser send it.
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

/// The `Set-Cookie` of the host answering's sign-in secret (the hand-off
/// on the platform's host, a hop's own on a space's), as long as a hop lives.
pub(crate) fn sign_in_cookie(door: &Door, secret: &str) -> Option<HeaderValue> {
    set_cookie(door, door.sign_in_cookie, secret, HOP_SECONDS)
}

fn set_cookie(door: &Door, name: &str, value: &str, seconds: i64) -> Option<HeaderValue> {
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
    fn the_cookie_is_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.append(
            header::COOKIE,
            HeaderValue::from_static("a=1; shed_session=abc ; b=2"),
        );
        assert_eq!(cookie(&headers, "shed_session"), Some("abc"));
        assert_eq!(cookie(&headers, "shed"), None);
        headers.insert(header::COOKIE, HeaderValue::from_static("shed_session="));
        assert_eq!(cookie(&headers, "shed_session"), None);
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

    #[test]
    fn a_bearer_token_is_read_in_any_case() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer shed_x"),
        );
        assert_eq!(bearer(&headers), Some("shed_x"));
        headers.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic x"));
        assert_eq!(bearer(&headers), None);
    }
}
