//! Who is asking: a bearer token (`Authorization: Bearer …`, as the MCP door
//! takes it — a browser never sends one by itself), else the session cookie
//! of the host asked, else nobody. The session cookie is host-only,
//! `HttpOnly`, `SameSite=Lax`, and `Secure` (named `__Host-…`) over https;
//! so is the short-lived sign-in cookie that binds a sign-in's hops to the
//! browser that pressed the button.

use axum::http::{HeaderMap, HeaderValue, header};
pub(crate) use shed_host::credentials::cookie;
use shed_host::credentials::{Credentials, Told};
use shed_host::sessions::{HOP_SECONDS, SESSION_SECONDS};
use shed_host::{Caller, HostError};

use crate::door::Door;

/// The caller of a request to `space`'s host (`None`: the platform's own),
/// as the host reads the request's credentials (its bearer token, else this
/// host's session cookie).
pub(crate) async fn caller(
    door: &Door,
    headers: &HeaderMap,
    space: Option<&str>,
) -> Result<(Caller, Told), HostError> {
    let credentials = Credentials::of_headers(headers, Some(door.cookie));
    door.host.caller_of(credentials, space).await
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
