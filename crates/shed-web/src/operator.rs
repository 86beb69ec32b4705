//! What the operator of a shed publishes for the people who use it and for
//! the directories that list it: the addresses of its privacy policy and
//! terms of service — linked from the pages where a person signs in or
//! allows an app, and named in both OAuth metadata documents (RFC 8414's
//! `op_policy_uri` and `op_tos_uri`, RFC 9728's `resource_policy_uri` and
//! `resource_tos_uri`) — and the files a directory asks to find under
//! `/.well-known/` on the platform's host, such as a domain's verification
//! token. Each is checked when it is made, at start: what was not given is
//! neither linked, named nor served.

use std::io::Read;
use std::net::Ipv4Addr;
use std::path::Path;

use axum::Router;
use axum::body::Bytes;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::Value;

use crate::reply::escape;

/// The most bytes a file served under `/.well-known/` may hold: a
/// verification token is a line, a directory's document a few hundred
/// bytes. Each is read once, at start, and kept in memory.
pub const MOST_WELL_KNOWN_FILE_BYTES: usize = 64 * 1024;

/// Where the operator's files are served, on the platform's host.
const WELL_KNOWN: &str = "/.well-known/";

/// What the operator gave that shed will not link or serve: each a
/// sentence saying what to write instead.
#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    /// A page's address that is not an absolute https one.
    #[error(
        "write an absolute https address, such as https://example.org/policies (http only for localhost, 127.0.0.1 or [::1])"
    )]
    NotAnAddress,
    /// A file given without its name, or a name without its file.
    #[error(
        "write NAME=FILE: the name it is served at under /.well-known/, then the file whose bytes it serves, such as domain-verification.txt=./token.txt"
    )]
    NotNameAndFile,
    /// A name that is not one plain path segment.
    #[error(
        "{0} is not one path segment to serve under /.well-known/ — write letters, digits, '-', '_', '.' or '~', not beginning with '.'"
    )]
    NotASegment(String),
    /// A name where clients read shed's own OAuth metadata.
    #[error(
        "/.well-known/{0} is where clients read shed's own OAuth metadata, which no file may stand in for — write the name the directory gives"
    )]
    ShedsOwn(String),
    /// A file that could not be read.
    #[error("could not read {path}: {why} — write the path of the file the directory gives")]
    Unreadable {
        /// The file, as given.
        path: String,
        /// Why it could not be read.
        why: std::io::Error,
    },
    /// A file past [`MOST_WELL_KNOWN_FILE_BYTES`].
    #[error(
        "{0} holds more than {kib} KiB — a verification file is a token or a small document: write the file the directory gives",
        kib = MOST_WELL_KNOWN_FILE_BYTES / 1024
    )]
    TooLarge(String),
    /// The same name given twice.
    #[error("/.well-known/{0} is given twice — give each name once")]
    Twice(String),
}

/// The address of one of the operator's pages: absolute and https, or
/// http on a loopback host (a shed tried on one machine).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageAddress(String);

impl PageAddress {
    /// `given`, when it is such an address.
    pub fn parse(given: &str) -> Result<PageAddress, OperatorError> {
        let uri: http::Uri = given.parse().map_err(|_| OperatorError::NotAnAddress)?;
        let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
            return Err(OperatorError::NotAnAddress);
        };
        let host = authority.host();
        let loopback = host == "localhost"
            || host.trim_start_matches('[').trim_end_matches(']') == "::1"
            || host.parse::<Ipv4Addr>().is_ok_and(|ip| ip.is_loopback());
        let plain = !host.is_empty() && !authority.as_str().contains('@');
        match scheme {
            "https" if plain => Ok(PageAddress(given.to_string())),
            "http" if plain && loopback => Ok(PageAddress(given.to_string())),
            _ => Err(OperatorError::NotAnAddress),
        }
    }

    /// The address, as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A file served at `/.well-known/<name>` on the platform's host, its bytes
/// read once.
#[derive(Debug, Clone)]
pub struct WellKnownFile {
    name: String,
    bytes: Bytes,
}

impl WellKnownFile {
    /// `NAME=FILE`: the name checked — one plain path segment, never one
    /// where clients read shed's own metadata — and the file read, at most
    /// [`MOST_WELL_KNOWN_FILE_BYTES`].
    pub fn parse(given: &str) -> Result<WellKnownFile, OperatorError> {
        let (name, path) = given
            .split_once('=')
            .filter(|(name, path)| !name.is_empty() && !path.is_empty())
            .ok_or(OperatorError::NotNameAndFile)?;
        Ok(WellKnownFile {
            name: checked_name(name)?,
            bytes: read_bounded(Path::new(path))?,
        })
    }

    /// The name it is served at under `/.well-known/`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its bytes as read, JSON for a name ending `.json`, else plain text.
    fn answer(&self) -> Response {
        let kind = if self.name.ends_with(".json") {
            "application/json"
        } else {
            "text/plain; charset=utf-8"
        };
        let mut response = self.bytes.clone().into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
        headers.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        response
    }
}

/// `name`, when it is one path segment of RFC 3986's unreserved characters
/// not beginning with `.` (so never `.` or `..`), and not where clients
/// read shed's own metadata: `oauth-…` (shed's, and any a later shed may
/// add) or `openid-configuration` (which MCP clients read when they find no
/// OAuth metadata).
fn checked_name(name: &str) -> Result<String, OperatorError> {
    let plain = name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    if name.is_empty() || !plain || name.starts_with('.') {
        return Err(OperatorError::NotASegment(name.to_string()));
    }
    let lower = name.to_ascii_lowercase();
    if lower.starts_with("oauth-") || lower == "openid-configuration" {
        return Err(OperatorError::ShedsOwn(name.to_string()));
    }
    Ok(name.to_string())
}

/// The bytes of the file at `path`, when it holds at most
/// [`MOST_WELL_KNOWN_FILE_BYTES`]; never more than one byte past them read.
fn read_bounded(path: &Path) -> Result<Bytes, OperatorError> {
    let unreadable = |why| OperatorError::Unreadable {
        path: path.display().to_string(),
        why,
    };
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let mut bytes = Vec::new();
    file.take(MOST_WELL_KNOWN_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() > MOST_WELL_KNOWN_FILE_BYTES {
        return Err(OperatorError::TooLarge(path.display().to_string()));
    }
    Ok(Bytes::from(bytes))
}

/// What the operator publishes: the addresses of the privacy policy and
/// the terms of service, and the files under `/.well-known/`. The default
/// publishes nothing.
#[derive(Debug, Clone, Default)]
pub struct Operator {
    privacy: Option<PageAddress>,
    terms: Option<PageAddress>,
    files: Vec<WellKnownFile>,
}

impl Operator {
    /// The operator's pages and files, each name given once.
    pub fn new(
        privacy: Option<PageAddress>,
        terms: Option<PageAddress>,
        files: Vec<WellKnownFile>,
    ) -> Result<Operator, OperatorError> {
        for (at, file) in files.iter().enumerate() {
            if files[..at].iter().any(|before| before.name == file.name) {
                return Err(OperatorError::Twice(file.name.clone()));
            }
        }
        Ok(Operator {
            privacy,
            terms,
            files,
        })
    }

    /// `document` with the pages given under `policy` and `terms` — the
    /// names a metadata document gives them; a page not given, no key.
    pub(crate) fn named_in(&self, mut document: Value, policy: &str, terms: &str) -> Value {
        if let Some(fields) = document.as_object_mut() {
            for (key, page) in [(policy, &self.privacy), (terms, &self.terms)] {
                if let Some(page) = page {
                    fields.insert(key.to_string(), Value::from(page.as_str()));
                }
            }
        }
        document
    }

    /// The pages given, as the last paragraph of a page where a person
    /// signs in or allows an app; empty when none was given.
    pub(crate) fn links(&self) -> String {
        let links: Vec<String> = [
            (&self.privacy, "privacy-policy", "privacy policy"),
            (&self.terms, "terms-of-service", "terms of service"),
        ]
        .into_iter()
        .filter_map(|(page, rel, words)| {
            page.as_ref().map(|page| {
                format!(
                    "<a rel=\"{rel}\" href=\"{}\">{words}</a>",
                    escape(page.as_str())
                )
            })
        })
        .collect();
        if links.is_empty() {
            return String::new();
        }
        format!(
            "\n<p><small>This shed's {}.</small></p>",
            links.join(" and ")
        )
    }

    /// The routes of the files given, one each at `/.well-known/<name>`;
    /// none when none was given, so every other name is a 404.
    pub(crate) fn router(&self) -> Router {
        self.files.iter().fold(Router::new(), |router, file| {
            let file = file.clone();
            router.route(
                &format!("{WELL_KNOWN}{}", file.name),
                get(move || {
                    let answered = file.answer();
                    async move { answered }
                }),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_https_or_http_on_a_loopback_host() {
        for taken in [
            "https://example.org/privacy",
            "https://example.org/legal#terms",
            "https://example.org:8443/p?lang=en",
            "http://localhost:8080/terms",
            "http://127.0.0.1/terms",
            "http://[::1]:7700/terms",
        ] {
            assert_eq!(PageAddress::parse(taken).unwrap().as_str(), taken);
        }
        for refused in [
            "http://example.org/privacy",
            "ftp://example.org/privacy",
            "/privacy",
            "example.org/privacy",
            "https://someone@example.org/privacy",
            "https://exa mple.org/",
            "javascript:alert(1)",
            "",
        ] {
            assert!(
                matches!(
                    PageAddress::parse(refused),
                    Err(OperatorError::NotAnAddress)
                ),
                "{refused}"
            );
        }
    }

    #[test]
    fn a_name_is_one_plain_segment_and_never_sheds_own() {
        for taken in ["example-verification", "site.json", "a_b~c", "x.txt"] {
            assert_eq!(checked_name(taken).unwrap(), taken);
        }
        for refused in ["..", ".", ".hidden", "a/b", "a%2Fb", "a b", "{x}", "*", ""] {
            assert!(
                matches!(checked_name(refused), Err(OperatorError::NotASegment(_))),
                "{refused}"
            );
        }
        for own in [
            "oauth-authorization-server",
            "oauth-protected-resource",
            "OAuth-Anything",
            "openid-configuration",
        ] {
            assert!(
                matches!(checked_name(own), Err(OperatorError::ShedsOwn(_))),
                "{own}"
            );
        }
    }

    #[test]
    fn nothing_given_is_nothing_linked() {
        assert_eq!(Operator::default().links(), "");
        let document = serde_json::json!({ "issuer": "x" });
        assert_eq!(
            Operator::default().named_in(document.clone(), "op_policy_uri", "op_tos_uri"),
            document
        );
    }
}
