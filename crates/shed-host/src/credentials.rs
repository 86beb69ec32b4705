//! Who is calling, as a request says it: the one reading of credentials
//! every door uses. A door hands over what the request carried; this says
//! which person (or nobody) it is.
//!
//! - `Authorization: Bearer <token>`: the token's person (an unknown token is
//!   the sign-in sentence). Another scheme (`Basic`, from a proxy in front of
//!   shed) is not shed's and is ignored.
//! - else, where the door reads cookies (the web), the session cookie of the
//!   host asked;
//! - else nobody.

use http::{HeaderMap, header};

use crate::{Caller, Host, HostError};

/// What a request carried that says who is calling.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Credentials<'r> {
    /// The token of an `Authorization: Bearer` header.
    pub bearer: Option<&'r str>,
    /// The value of the session cookie, where the door reads one.
    pub session: Option<&'r str>,
}

/// How the caller was told: a write on a session cookie must also come from
/// the page's own origin, since a browser sends a cookie by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Told {
    Nothing,
    Session,
    Bearer,
}

impl<'r> Credentials<'r> {
    /// The bearer token of `headers`, and the cookie named `session_cookie`
    /// when the door reads one (`None`: a door that takes tokens only).
    pub fn of_headers(headers: &'r HeaderMap, session_cookie: Option<&str>) -> Credentials<'r> {
        Credentials {
            bearer: bearer(headers),
            session: session_cookie.and_then(|name| cookie(headers, name)),
        }
    }
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// The value of the cookie `name`, from every `Cookie` header.
pub fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
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

impl Host {
    /// The caller `credentials` stand for on `space`'s host (`None`: the
    /// platform's own, or a door with no hosts), and how it was told.
    pub async fn caller_of(
        &self,
        credentials: Credentials<'_>,
        space: Option<&str>,
    ) -> Result<(Caller, Told), HostError> {
        if let Some(token) = credentials.bearer {
            return Ok((self.caller_for_token(token).await?, Told::Bearer));
        }
        match credentials.session {
            Some(session) => Ok((
                self.caller_for_session(space, session).await?,
                Told::Session,
            )),
            None => Ok((Caller::Nobody, Told::Nothing)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        map
    }

    #[test]
    fn a_bearer_token_and_a_session_cookie_are_read_and_other_schemes_are_not() {
        let h = headers(&[
            ("authorization", "Bearer  shed_abc "),
            ("cookie", "a=1; shed_session=s3"),
        ]);
        let read = Credentials::of_headers(&h, Some("shed_session"));
        assert_eq!(read.bearer, Some("shed_abc"));
        assert_eq!(read.session, Some("s3"));
        assert_eq!(Credentials::of_headers(&h, None).session, None);
        let basic = headers(&[("authorization", "Basic dXNlcjpwYXNz")]);
        assert_eq!(Credentials::of_headers(&basic, None).bearer, None);
        let bare = headers(&[("authorization", "shed_abc")]);
        assert_eq!(Credentials::of_headers(&bare, None).bearer, None);
        let lower = headers(&[("authorization", "bearer shed_x")]);
        assert_eq!(Credentials::of_headers(&lower, None).bearer, Some("shed_x"));
    }

    #[test]
    fn the_cookie_is_found_among_others() {
        let h = headers(&[("cookie", "a=1; shed_session=abc ; b=2")]);
        assert_eq!(cookie(&h, "shed_session"), Some("abc"));
        assert_eq!(cookie(&h, "shed"), None);
        assert_eq!(
            cookie(&headers(&[("cookie", "shed_session=")]), "shed_session"),
            None
        );
    }
}
