//! Client ID Metadata Documents: a `client_id` that is a URL names the JSON
//! document describing the client, which shed fetches — https only (plain
//! http only on a loopback host), at most [`MOST_DOCUMENT_BYTES`], within
//! [`FETCH_SECONDS`], no redirect followed — and takes only when its own
//! `client_id` is that URL. A document is kept as long as its
//! `Cache-Control: max-age` says, at most [`MOST_CACHE_SECONDS`]; one that
//! says nothing, `no-store` or `no-cache` is fetched again when next named.
//! A document's body is never repeated in a refusal (the fetch is made on a
//! stranger's say-so, so it must not become a way to read other addresses).
//!
//! Extra root certificates for these fetches (a private CA's, say) come from
//! `shed serve --oauth-extra-ca FILE`, added to the system's roots.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use shed_store::oauth::ClientRecord;

use super::{checked_client, is_loopback};
use crate::HostError;
use crate::names::shown;

/// The most bytes of a metadata document.
pub const MOST_DOCUMENT_BYTES: usize = 5 * 1024;
/// The longest a fetch of a document may take, in seconds.
pub const FETCH_SECONDS: u64 = 5;
/// The longest a document is kept, whatever its `max-age` says, in seconds.
pub const MOST_CACHE_SECONDS: u64 = 24 * 60 * 60;
/// The most documents kept at once.
const MOST_CACHED: usize = 256;

/// The documents fetched, and the client that fetches them.
#[derive(Default)]
pub(crate) struct ClientDocuments {
    fetcher: OnceLock<reqwest::Client>,
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
/// http on loopback), a path beyond `/`, no fragment, no user name, no dot
/// segments.
fn unfit_url(url: &str) -> Option<&'static str> {
    let Ok(uri) = url.parse::<http::Uri>() else {
        return Some("it is not a URL");
    };
    let host = uri.host().unwrap_or_default();
    match uri.scheme_str() {
        Some("https") => {}
        Some("http") if is_loopback(host) => {}
        _ => return Some("it is neither https nor http on a loopback address"),
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
    /// the fetches, besides the system's; before the first fetch only.
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
        let fetcher = fetcher(roots)?;
        self.fetcher.set(fetcher).map_err(|_| {
            HostError::Internal("the metadata documents' roots were set twice".to_string())
        })
    }

    /// The client the document at `url` describes: kept, or fetched and
    /// checked now. The refusal is a sentence for the page.
    pub(crate) async fn client_of(&self, url: &str) -> Result<ClientRecord, String> {
        if let Some(why) = unfit_url(url) {
            return Err(format!(
                "the client_id {} cannot name a client metadata document: {why} — a client names an https URL with a path",
                shown(url)
            ));
        }
        if let Some(kept) = self.kept(url) {
            return Ok(kept);
        }
        let (client, keep) = self.fetch(url).await?;
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

    async fn fetch(&self, url: &str) -> Result<(ClientRecord, Duration), String> {
        let fetcher = match self.fetcher.get() {
            Some(fetcher) => fetcher,
            None => {
                let made = fetcher(Vec::new()).map_err(|e| e.to_string())?;
                self.fetcher.get_or_init(|| made)
            }
        };
        let shown_url = shown(url);
        let unreachable = |why: String| {
            format!(
                "the client metadata document at {shown_url} could not be read ({why}) — the app asking must serve it there"
            )
        };
        let mut response = fetcher
            .get(url)
            .header(http::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| unreachable(fetch_failure(&e)))?;
        if response.status() != reqwest::StatusCode::OK {
            return Err(unreachable(format!(
                "it answered HTTP {}",
                response.status().as_u16()
            )));
        }
        let too_large = || {
            format!(
                "the client metadata document at {shown_url} is larger than {MOST_DOCUMENT_BYTES} bytes — a client's document is small"
            )
        };
        if response
            .content_length()
            .is_some_and(|length| length > MOST_DOCUMENT_BYTES as u64)
        {
            return Err(too_large());
        }
        let keep = kept_for(
            response
                .headers()
                .get(http::header::CACHE_CONTROL)
                .and_then(|value| value.to_str().ok()),
        );
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| unreachable(fetch_failure(&e)))?
        {
            body.extend_from_slice(&chunk);
            if body.len() > MOST_DOCUMENT_BYTES {
                return Err(too_large());
            }
        }
        Ok((read_document(url, &body)?, keep))
    }
}

/// A fetch's failure, in words that name no address it reached.
fn fetch_failure(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        format!("it took longer than {FETCH_SECONDS} s")
    } else if error.is_connect() {
        "no connection could be made, or its certificate is not trusted".to_string()
    } else {
        "the answer broke off".to_string()
    }
}

fn fetcher(roots: Vec<reqwest::Certificate>) -> Result<reqwest::Client, HostError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(FETCH_SECONDS))
        .user_agent(concat!("shed/", env!("CARGO_PKG_VERSION")))
        .tls_certs_merge(roots)
        .build()
        .map_err(|e| {
            HostError::Internal(format!(
                "could not make the client that reads metadata documents: {e}"
            ))
        })
}

/// The client a fetched document describes, checked: JSON whose `client_id`
/// is `url`, public (no secret, `token_endpoint_auth_method` none), and
/// redirect URIs as a registration needs them.
fn read_document(url: &str, body: &[u8]) -> Result<ClientRecord, String> {
    let shown_url = shown(url);
    let document: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(body)
        .map_err(|_| {
            format!("the client metadata document at {shown_url} is not a JSON object — the app asking must serve one")
        })?;
    if document.get("client_id").and_then(|id| id.as_str()) != Some(url) {
        return Err(format!(
            "the client metadata document at {shown_url} does not name itself: its client_id must be that very URL"
        ));
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
    fn only_https_or_loopback_urls_with_a_path_name_documents() {
        assert_eq!(unfit_url("https://app.example/client.json"), None);
        assert_eq!(unfit_url("http://127.0.0.1:8123/client.json"), None);
        for bad in [
            "http://app.example/client.json",
            "https://app.example/",
            "https://app.example",
            "https://user@app.example/c.json",
            "https://app.example/c.json#x",
            "https://app.example/a/../c.json",
            "ftp://app.example/c.json",
        ] {
            assert!(unfit_url(bad).is_some(), "{bad}");
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
        assert!(
            refused(
                serde_json::json!({ "client_id": "https://other.example/c.json",
            "redirect_uris": ["http://127.0.0.1/cb"] })
            )
            .contains("does not name itself")
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
        assert!(
            read_document(url, b"<html>")
                .unwrap_err()
                .contains("not a JSON object")
        );
    }
}
