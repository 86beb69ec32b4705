//! Post, redirect, get. A form that did something answers `303 See Other`
//! to the page it belongs to, and what it did rides there once in a
//! short-lived cookie (`shed_notice`): the page shows it on top and the
//! answer drops the cookie — so a reload repeats nothing, and a token or a
//! sign-in link a form made is shown once, on the page it lands on. A
//! refused form changed nothing: it answers with its page at once, the
//! sentence on top and the refusal's status (and what was typed kept).
//!
//! The cookie is bound to the credential the form came on: it carries a tag
//! (a hash of the session cookie, or of the bearer token) and is shown only
//! to a request on that same credential. A page on another host of the
//! same site — an app's page on a space's host can set a cookie for a
//! parent domain over http — cannot plant a notice, nor a token for the
//! person to paste into their agent.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::Response;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use subtle::ConstantTimeEq;

use super::Outcome;
use crate::caller::{cookie, set_cookie};
use crate::door::Door;
use crate::reply::see_other;

/// How long a notice waits for the page it was sent to, in seconds: the
/// browser asks for it at once; a notice not shown by then is dropped.
pub const NOTICE_SECONDS: i64 = 60;

/// The most bytes of a notice's HTML carried to the page (a cookie holds
/// about 4 KiB, and a byte may take three once encoded): a longer one —
/// only ever an undo's sentence; tokens and sign-in links are far shorter
/// — is cut at a character, with "…".
pub const MOST_NOTICE_BYTES: usize = 1_200;

/// What the cookie's parts may hold as they are: the rest is
/// percent-encoded (`~` separates the parts).
const KEPT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.');

/// Who a notice is for: the tag of the credential a form came on, `None`
/// when it came on none (a notice then is not carried).
#[derive(Debug, Clone)]
pub(crate) struct NoticeFor(Option<String>);

impl NoticeFor {
    /// The tag of the request's credential: its session cookie, else its
    /// bearer token.
    pub(crate) fn of(door: &Door, headers: &HeaderMap) -> NoticeFor {
        let credential = cookie(headers, door.cookie).or_else(|| {
            headers
                .get(header::AUTHORIZATION)
                .and_then(|value| value.to_str().ok())
        });
        NoticeFor(credential.map(tag))
    }

    /// The answer of a form that did something: `303` to `to`, `html` (the
    /// page's words, escaped as it built them) and the `token` it made, if
    /// any, carried there once.
    pub(crate) fn land(&self, door: &Door, to: &str, html: &str, token: Option<&str>) -> Response {
        let carried = self.0.as_ref().map(|tag| {
            format!(
                "{tag}~{}~{}",
                utf8_percent_encode(token.unwrap_or(""), KEPT),
                utf8_percent_encode(&cut(html), KEPT)
            )
        });
        let notice =
            carried.and_then(|value| set_cookie(door, door.notice_cookie, &value, NOTICE_SECONDS));
        see_other(to, [notice])
    }
}

/// A notice waiting for this request, if it is one for its credential:
/// what the form did, and the token it made.
pub(crate) fn shown(door: &Door, headers: &HeaderMap) -> (Outcome, Option<String>) {
    let nothing = (Outcome::Nothing, None);
    let (Some(value), NoticeFor(Some(ours))) = (
        cookie(headers, door.notice_cookie),
        NoticeFor::of(door, headers),
    ) else {
        return nothing;
    };
    let mut parts = value.splitn(3, '~');
    let (Some(theirs), Some(token), Some(html)) = (parts.next(), parts.next(), parts.next()) else {
        return nothing;
    };
    if !bool::from(theirs.as_bytes().ct_eq(ours.as_bytes())) {
        return nothing;
    }
    let decode = |part: &str| {
        percent_decode_str(part)
            .decode_utf8()
            .ok()
            .map(String::from)
    };
    match (decode(token), decode(html)) {
        (Some(token), Some(html)) if !html.is_empty() => (
            Outcome::Done(html),
            Some(token).filter(|token| !token.is_empty()),
        ),
        _ => nothing,
    }
}

/// A layer over the platform's pages: an answer to a request that carried
/// a notice drops it, so it is shown once.
pub(crate) async fn dropped_once_shown(
    State(door): State<Arc<Door>>,
    request: Request,
    next: Next,
) -> Response {
    let carried = cookie(request.headers(), door.notice_cookie).is_some();
    let mut response = next.run(request).await;
    if carried && let Some(removal) = set_cookie(&door, door.notice_cookie, "", 0) {
        response.headers_mut().append(header::SET_COOKIE, removal);
    }
    response
}

/// The tag of a credential: not the credential, and not its stored hash.
fn tag(credential: &str) -> String {
    hex::encode(Sha256::digest(format!("shed notice\n{credential}")))
}

/// `html`, at most [`MOST_NOTICE_BYTES`]: cut at a character and before a
/// character reference it would split, with "…".
fn cut(html: &str) -> std::borrow::Cow<'_, str> {
    if html.len() <= MOST_NOTICE_BYTES {
        return html.into();
    }
    let mut end = MOST_NOTICE_BYTES - '…'.len_utf8();
    while !html.is_char_boundary(end) {
        end -= 1;
    }
    let kept = &html[..end];
    let kept = match (kept.rfind('&'), kept.rfind(';')) {
        (Some(amp), semicolon) if semicolon.is_none_or(|at| at < amp) => &kept[..amp],
        _ => kept,
    };
    format!("{kept}…").into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_long_notice_is_cut_before_a_reference_it_would_split() {
        let html = format!(
            "{}&amp;{}",
            "a".repeat(MOST_NOTICE_BYTES - 4),
            "b".repeat(50)
        );
        let kept = cut(&html);
        assert!(kept.len() <= MOST_NOTICE_BYTES, "{}", kept.len());
        assert!(kept.ends_with("a…"), "{kept}");
        assert_eq!(cut("short &amp; whole"), "short &amp; whole");
    }

    proptest! {
        #[test]
        fn any_notice_cut_fits_and_encodes_into_a_cookie(html in ".{0,3000}", token in "[ -~]{0,80}") {
            let kept = cut(&html);
            prop_assert!(kept.len() <= MOST_NOTICE_BYTES);
            let value = format!(
                "{}~{}~{}",
                tag("secret"),
                utf8_percent_encode(&token, KEPT),
                utf8_percent_encode(&kept, KEPT)
            );
            prop_assert!(value.len() < 4000, "{}", value.len());
            prop_assert!(axum::http::HeaderValue::from_str(&value).is_ok());
        }
    }
}
