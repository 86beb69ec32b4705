//! Who is calling, as a request says it: the one reading of credentials
//! every door uses. A door hands over what the request carried; this says
//! which person (or nobody) it is.
//!
//! - `Authorization: Bearer <token>`: the token's person (an unknown token is
//!   the sign-in sentence). A pasted token (`shed token create`) is taken by
//!   every door; an OAuth access token only by the MCP endpoint, the one
//!   resource it is issued for (RFC 8707). Another scheme (`Basic`, from a
//!   proxy in front of shed) is not shed's and is ignored.
//! - else, where the door reads cookies (the web), the session cookie of the
//!   host asked;
//! - else nobody.

use http::{HeaderMap, header};

use crate::{Caller, Host, HostError};

/// What a request carried that says who is calling, and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Credentials<'r> {
    /// The token of an `Authorization: Bearer` header.
    pub bearer: Option<&'r str>,
    /// The value of the session cookie, where the door reads one.
    pub session: Option<&'r str>,
    /// The resource the request asks.
    pub to: Presented,
}

/// The resource a request's token is presented to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Presented {
    /// The MCP endpoint, `<public url>/mcp`: OAuth access tokens are for it.
    ToMcp,
    /// The web door (pages, the page api): pasted tokens and cookies only.
    ToWeb,
}

/// How the caller was told: a write on a session cookie must also come from
/// the page's own origin, since a browser sends a cookie by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Told {
    /// No credential came with the request: the caller is nobody.
    Nothing,
    /// The web session cookie, which a browser sends by itself: a write
    /// must also come from the page's own origin.
    Session,
    /// An `Authorization: Bearer` token, which a browser never sends by
    /// itself; read before a cookie when both come.
    Bearer,
}

impl<'r> Credentials<'r> {
    /// What the MCP door reads: the bearer token of `headers`, never a
    /// cookie (a page could make a browser send one).
    pub fn for_mcp(headers: &'r HeaderMap) -> Credentials<'r> {
        Credentials {
            bearer: bearer(headers),
            session: None,
            to: Presented::ToMcp,
        }
    }

    /// What the web door reads: the bearer token of `headers`, and the
    /// cookie named `session_cookie`.
    pub fn for_web(headers: &'r HeaderMap, session_cookie: &str) -> Credentials<'r> {
        Credentials {
            bearer: bearer(headers),
            session: cookie(headers, session_cookie),
            to: Presented::ToWeb,
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
            let caller = self.caller_for_token_to(token, credentials.to).await?;
            return Ok((caller, Told::Bearer));
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
        let read = Credentials::for_web(&h, "shed_session");
        assert_eq!(read.bearer, Some("shed_abc"));
        assert_eq!(read.session, Some("s3"));
        assert_eq!(read.to, Presented::ToWeb);
        let mcp = Credentials::for_mcp(&h);
        assert_eq!((mcp.session, mcp.to), (None, Presented::ToMcp));
        let basic = headers(&[("authorization", "Basic dXNlcjpwYXNz")]);
        assert_eq!(Credentials::for_mcp(&basic).bearer, None);
        let bare = headers(&[("authorization", "shed_abc")]);
        assert_eq!(Credentials::for_mcp(&bare).bearer, None);
        let lower = headers(&[("authorization", "bearer shed_x")]);
        assert_eq!(Credentials::for_mcp(&lower).bearer, Some("shed_x"));
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
