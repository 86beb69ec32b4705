//! The door's shared state: the host, the cookies' names and flags (from the
//! public URL's scheme), and the cache of files ready to serve.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, Uri};
use shed_host::Host;
use shed_host::web::WebFile;

use crate::operator::Operator;
use crate::page::{Rendered, render};

/// How many rendered files the cache keeps before it starts over.
const CACHE_ENTRIES: usize = 512;

/// The web door, shared by every request.
pub(crate) struct Door {
    pub host: Host,
    /// `__Host-shed_session` over https (host-only, Secure, Path=/), else `shed_session`.
    pub cookie: &'static str,
    /// `__Host-shed_signin` over https, else `shed_signin`: a sign-in's
    /// short-lived secret on each host its hops pass.
    pub sign_in_cookie: &'static str,
    /// `__Host-shed_return` over https, else `shed_return`: on the
    /// platform's host, the authorization request a signed-out browser set
    /// out to answer, to come back to once it has signed in.
    pub return_cookie: &'static str,
    /// `__Host-shed_notice` over https, else `shed_notice`: what a form did,
    /// carried once to the page it answered with (`pages/notice.rs`).
    pub notice_cookie: &'static str,
    /// The public URL is https: cookies carry `Secure`.
    pub secure: bool,
    /// The path of the MCP address (`/mcp`), where a browser asking for a
    /// page gets one: made once, as the public URL never changes. `None`
    /// when the address does not read as a URI.
    pub mcp_path: Option<String>,
    /// The page script, ready to serve.
    pub app_js: Arc<Rendered>,
    /// The script of the person's pages, ready to serve.
    pub pages_js: Arc<Rendered>,
    /// The passkeys' script, ready to serve.
    pub passkeys_js: Arc<Rendered>,
    /// shed's icon, at [`crate::FAVICON_PATH`] on every host.
    pub favicon: Arc<Rendered>,
    /// The pages the operator links from the sign-in and consent pages and
    /// the OAuth metadata.
    pub operator: Operator,
    /// The live streams open, for their bounds.
    pub streams: crate::streams::Streams,
    /// Files of deploys, rendered: a deploy never changes, so (deploy, path)
    /// names one answer for good.
    rendered: Mutex<HashMap<(i64, String), Arc<Rendered>>>,
}

impl Door {
    pub(crate) fn new(host: Host, operator: Operator) -> Door {
        let secure = host.public_url().starts_with("https://");
        let mcp_path = host
            .mcp_resource()
            .parse::<Uri>()
            .ok()
            .map(|mcp| mcp.path().to_string());
        Door {
            host,
            cookie: if secure {
                "__Host-shed_session"
            } else {
                "shed_session"
            },
            sign_in_cookie: if secure {
                "__Host-shed_signin"
            } else {
                "shed_signin"
            },
            return_cookie: if secure {
                "__Host-shed_return"
            } else {
                "shed_return"
            },
            notice_cookie: if secure {
                "__Host-shed_notice"
            } else {
                "shed_notice"
            },
            secure,
            mcp_path,
            app_js: Arc::new(Rendered::asset(
                0,
                crate::APP_JS.as_bytes().to_vec(),
                "text/javascript; charset=utf-8",
            )),
            pages_js: Arc::new(Rendered::asset(
                0,
                crate::PAGES_JS.as_bytes().to_vec(),
                "text/javascript; charset=utf-8",
            )),
            passkeys_js: Arc::new(Rendered::asset(
                0,
                crate::PASSKEYS_JS.as_bytes().to_vec(),
                "text/javascript; charset=utf-8",
            )),
            favicon: Arc::new(Rendered::asset(0, crate::FAVICON.to_vec(), "image/x-icon")),
            operator,
            streams: crate::streams::Streams::default(),
            rendered: Mutex::new(HashMap::new()),
        }
    }

    /// The space a request's host name is, if it is one.
    pub(crate) fn space_of(&self, headers: &HeaderMap, uri: &Uri) -> Option<String> {
        self.host.space_of_host(host_name(headers, uri)?)
    }

    /// A file of a deploy, ready to serve: from the cache, or read and rendered.
    pub(crate) async fn rendered(
        &self,
        file: &WebFile,
    ) -> Result<Arc<Rendered>, shed_host::HostError> {
        let key = (file.deploy, file.path.clone());
        if let Some(hit) = self
            .rendered
            .lock()
            .ok()
            .and_then(|cache| cache.get(&key).cloned())
        {
            return Ok(hit);
        }
        let bytes = self.host.web_file_bytes(file).await?;
        let rendered = Arc::new(render(file, bytes));
        if let Ok(mut cache) = self.rendered.lock() {
            if cache.len() >= CACHE_ENTRIES {
                cache.clear();
            }
            cache.insert(key, rendered.clone());
        }
        Ok(rendered)
    }
}

/// The host a request was sent to: the `Host` header (HTTP/1.1), else the
/// URI's authority (HTTP/2).
fn host_name<'r>(headers: &'r HeaderMap, uri: &'r Uri) -> Option<&'r str> {
    headers
        .get(http::header::HOST)
        .and_then(|value| value.to_str().ok())
        .or_else(|| uri.authority().map(|authority| authority.as_str()))
}
