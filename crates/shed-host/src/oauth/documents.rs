//! Client ID Metadata Documents: a `client_id` that is a URL names the JSON
//! document describing the client, which shed fetches ([`fetch`]: https
//! only, from a public address only — plain http and loopback only when
//! `shed serve --oauth-allow-loopback-documents` says so, for development —
//! bounded in size, time and how many at once, no redirect followed) and
//! takes only when its own `client_id` is that URL. A document is kept as
//! long as its `Cache-Control: max-age` says, at most [`MOST_CACHE_SECONDS`];
//! one that says nothing, `no-store` or `no-cache` is fetched again when
//! next named.
//!
//! The fetch is made on a stranger's say-so, so it must not become a way to
//! read other addresses or tell which of them answer: a document's body is
//! never repeated in a refusal, and every way a fetch fails — no connection,
//! an HTTP status, an answer too slow, too large, not JSON, or JSON that is
//! not this document — is refused with the one sentence of [`unreadable`].
//!
//! Extra root certificates for these fetches (a private CA's, say) come from
//! `shed serve --oauth-extra-ca FILE`, added to the system's roots.
//!
//! [`fetch`]: super::fetch

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use shed_store::oauth::ClientRecord;

use super::addresses::{Reach, literal_of, reach};
use super::checked_client;
use super::fetch::{FETCH_SECONDS, FetchRefusal, Fetches, MOST_DOCUMENT_BYTES};
use crate::HostError;
use crate::names::shown;

/// The longest a document is kept, whatever its `max-age` says, in seconds.
pub const MOST_CACHE_SECONDS: u64 = 24 * 60 * 60;
/// The most documents kept at once.
const MOST_CACHED: usize = 256;

/// The documents fetched, and their fetcher.
#[derive(Default)]
pub(crate) struct ClientDocuments {
    fetches: Fetches,
    cache: Mutex<HashMap<String, Kept>>,
}

struct Kept {
    client: ClientRecord,
    until: Instant,
}

/// Whether a `client_id` names a metadata document (a URL) rather than a
/// client registered here.
pub(crate) fn names_a_document(client_id: &str) -> bool {
    client_id.starts_with("https://") || client_id.starts_with("http://")
}

/// The document URL's refusal, or `None` when shed may fetch it: https (or
/// http on a loopback host, when `loopback` allows), a path beyond `/`, no
/// fragment, no user name, no dot segments.
fn unfit_url(url: &str, loopback: bool) -> Option<&'static str> {
    let Ok(uri) = url.parse::<http::Uri>() else {
        return Some("it is not a URL");
    };
    match uri.scheme_str() {
        Some("https") => {}
        Some("http") if loopback && names_loopback(url) => {}
        _ if loopback => return Some("it is neither https nor http on a loopback address"),
        _ => return Some("it is not https"),
    }
    let path = uri.path();
    if url.contains('#') || uri.authority().is_some_and(|a| a.as_str().contains('@')) {
        return Some("it carries a fragment or a user name");
    }
    if path.is_empty() || path == "/" {
        return Some("it has no path");
    }
    if path
        .split('/')
        .any(|segment| segment == "." || segment == "..")
    {
        return Some("its path has . or .. segments");
    }
    None
}

/// Whether the URL's host is `localhost` or a loopback address, however
/// written.
fn names_loopback(url: &str) -> bool {
    reqwest::Url::parse(url).is_ok_and(|parsed| {
        parsed.host_str() == Some("localhost")
            || literal_of(&parsed).is_some_and(|address| reach(address) == Reach::Loopback)
    })
}

/// The one refusal of a document that could not be read, whatever the
/// reason (logged at debug level).
fn unreadable(url: &str) -> String {
    format!(
        "the client metadata document at {} could not be read — shed reads one only from a public address, \
         answered 200 within {FETCH_SECONDS} s with a JSON object of at most {MOST_DOCUMENT_BYTES} bytes \
         whose client_id is that very URL; the app asking must serve it so",
        shown(url)
    )
}

/// How long a `Cache-Control` header lets a document be kept.
fn kept_for(cache_control: Option<&str>) -> Duration {
    let mut seconds = 0;
    for directive in cache_control.unwrap_or_default().split(',') {
        let directive = directive.trim().to_ascii_lowercase();
        if directive == "no-store" || directive == "no-cache" {
            return Duration::ZERO;
        }
        if let Some(age) = directive.strip_prefix("max-age=") {
            seconds = age.trim_matches('"').parse().unwrap_or(0);
        }
    }
    Duration::from_secs(seconds.min(MOST_CACHE_SECONDS))
}

impl ClientDocuments {
    /// Trusts the root certificates of `pem` (one or more PEM blocks) for
    /// the fetches, besides the system's.
    pub(crate) fn trust(&self, pem: &[u8]) -> Result<(), HostError> {
        let roots = reqwest::Certificate::from_pem_bundle(pem).map_err(|e| {
            HostError::BadInput(format!(
                "the extra root certificates are not PEM certificates ({e}) — give a file of -----BEGIN CERTIFICATE----- blocks"
            ))
        })?;
        if roots.is_empty() {
            return Err(HostError::BadInput(
                "the extra root certificates file holds no certificate — give a file of -----BEGIN CERTIFICATE----- blocks".to_string(),
            ));
        }
        self.fetches.trust(roots)
    }

    /// Lets documents be read from loopback addresses, over plain http
    /// too: for development and tests only.
    pub(crate) fn allow_loopback(&self) -> Result<(), HostError> {
        self.fetches.allow_loopback()
    }

    /// The client the document at `url` describes: kept, or fetched for
    /// `asker` (the address that asked) and checked now. The refusal is a
    /// sentence for the page.
    pub(crate) async fn client_of(
        &self,
        url: &str,
        asker: Option<IpAddr>,
    ) -> Result<ClientRecord, String> {
        if let Some(why) = unfit_url(url, self.fetches.loopback_allowed()) {
            return Err(format!(
                "the client_id {} cannot name a client metadata document: {why} — a client names an https URL with a path",
                shown(url)
            ));
        }
        if let Some(kept) = self.kept(url) {
            return Ok(kept);
        }
        let fetched = self
            .fetches
            .fetch(url, asker)
            .await
            .map_err(|refusal| match refusal {
                FetchRefusal::Unreadable => unreadable(url),
                busy => busy.to_string(),
            })?;
        let client = read_document(url, &fetched.body)?;
        let keep = kept_for(fetched.cache_control.as_deref());
        if !keep.is_zero()
            && let Ok(mut cache) = self.cache.lock()
        {
            let at = Instant::now();
            if cache.len() >= MOST_CACHED {
                cache.retain(|_, kept| kept.until > at);
                if cache.len() >= MOST_CACHED {
                    cache.clear();
                }
            }
            cache.insert(
                url.to_string(),
                Kept {
                    client: client.clone(),
                    until: at + keep,
                },
            );
        }
        Ok(client)
    }

    fn kept(&self, url: &str) -> Option<ClientRecord> {
        let cache = self.cache.lock().ok()?;
        cache
            .get(url)
            .filter(|kept| kept.until > Instant::now())
            .map(|kept| kept.client.clone())
    }
}

/// The client a fetched document describes, checked: JSON whose `client_id`
/// is `url`, public (no secret, `token_endpoint_auth_method` none), and
/// redirect URIs as a registration needs them.
fn read_document(url: &str, body: &[u8]) -> Result<ClientRecord, String> {
    let shown_url = shown(url);
    let not_this_document = |why: &str| {
        tracing::debug!(url = %shown_url, why, "a client metadata document was not read");
        unreadable(url)
    };
    let document: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(body).map_err(|_| not_this_document("it is not a JSON object"))?;
    if document.get("client_id").and_then(|id| id.as_str()) != Some(url) {
        return Err(not_this_document("its client_id is not its URL"));
    }
    if document.contains_key("client_secret")
        || document
            .get("token_endpoint_auth_method")
            .is_some_and(|method| method.as_str() != Some("none"))
    {
        return Err(format!(
            "the client metadata document at {shown_url} describes a client with a secret — shed takes public clients only (token_endpoint_auth_method none)"
        ));
    }
    let redirect_uris = document
        .get("redirect_uris")
        .and_then(|uris| uris.as_array())
        .map(|uris| {
            uris.iter()
                .map(|uri| uri.as_str().map(str::to_string))
                .collect::<Option<Vec<String>>>()
        })
        .unwrap_or_default()
        .ok_or_else(|| {
            format!("the client metadata document at {shown_url} lists redirect_uris that are not strings")
        })?;
    let name = document.get("client_name").and_then(|name| name.as_str());
    checked_client(url.to_string(), name, redirect_uris).map_err(|refusal| {
        format!("the client metadata document at {shown_url} is refused: {refusal}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_urls_with_a_path_name_documents_and_http_only_on_loopback_when_allowed() {
        assert_eq!(unfit_url("https://app.example/client.json", false), None);
        for loopback in [
            "http://127.0.0.1:8123/client.json",
            "http://127.1:8123/client.json",
            "http://[::1]:8123/client.json",
            "http://localhost:8123/client.json",
        ] {
            assert_eq!(unfit_url(loopback, false), Some("it is not https"));
            assert_eq!(unfit_url(loopback, true), None, "{loopback}");
        }
        for not_loopback in [
            "http://app.example/client.json",
            "http://0.0.0.0:8123/client.json",
            "http://[::ffff:127.0.0.1]:8123/client.json",
        ] {
            assert_eq!(
                unfit_url(not_loopback, true),
                Some("it is neither https nor http on a loopback address"),
                "{not_loopback}"
            );
        }
        for bad in [
            "https://app.example/",
            "https://app.example",
            "https://user@app.example/c.json",
            "https://app.example/c.json#x",
            "https://app.example/a/../c.json",
            "ftp://app.example/c.json",
        ] {
            assert!(unfit_url(bad, true).is_some(), "{bad}");
        }
    }

    #[test]
    fn max_age_is_kept_bounded_and_no_store_is_not() {
        assert_eq!(
            kept_for(Some("public, max-age=600")),
            Duration::from_secs(600)
        );
        assert_eq!(
            kept_for(Some("max-age=99999999")),
            Duration::from_secs(MOST_CACHE_SECONDS)
        );
        assert_eq!(kept_for(Some("max-age=600, no-store")), Duration::ZERO);
        assert_eq!(kept_for(Some("no-cache")), Duration::ZERO);
        assert_eq!(kept_for(None), Duration::ZERO);
        assert_eq!(kept_for(Some("max-age=soon")), Duration::ZERO);
    }

    #[test]
    fn a_document_names_itself_is_public_and_lists_fit_redirects() {
        let url = "https://app.example/client.json";
        let good = serde_json::json!({ "client_id": url, "client_name": "App",
            "redirect_uris": ["http://127.0.0.1/cb"] });
        let client = read_document(url, good.to_string().as_bytes()).unwrap();
        assert_eq!((client.id.as_str(), client.name.as_str()), (url, "App"));
        let refused =
            |doc: serde_json::Value| read_document(url, doc.to_string().as_bytes()).unwrap_err();
        assert_eq!(
            refused(
                serde_json::json!({ "client_id": "https://other.example/c.json",
            "redirect_uris": ["http://127.0.0.1/cb"] })
            ),
            unreadable(url),
            "JSON that is not this document is refused as any unreadable one"
        );
        assert!(
            refused(serde_json::json!({ "client_id": url, "client_secret": "x",
            "redirect_uris": ["http://127.0.0.1/cb"] }))
            .contains("public clients only")
        );
        assert!(
            refused(serde_json::json!({ "client_id": url,
            "redirect_uris": ["http://evil.example/cb"] }))
            .contains("neither https nor http")
        );
        assert_eq!(read_document(url, b"<html>").unwrap_err(), unreadable(url));
    }
}
