//! An app's files on its space's host: the host decides which file and
//! whether the caller may have it; this answers with its content type, an
//! ETag (a matching `If-None-Match` gets 304), `nosniff`, and for a page its
//! Content-Security-Policy. Files are revalidated on every use
//! (`no-cache`), since the next deploy changes them at the same address.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use shed_host::{Caller, HostError};

use crate::door::Door;
use crate::page::Rendered;
use crate::reply::Refusal;

/// Answers `GET /<slug>/<path>` on `space`'s host for `caller`; `raw_path`
/// is the request's path as sent, to send a folder's browser on to its
/// trailing slash.
pub(crate) async fn serve(
    door: &Door,
    headers: &HeaderMap,
    caller: &Caller,
    (space, slug): (&str, &str),
    path: &str,
    raw_path: &str,
) -> Response {
    let file = match door.host.web_file(caller, space, slug, path).await {
        Ok(file) => file,
        Err(error) => return Refusal::page(error).into_response(),
    };
    match door.rendered(&file).await {
        Ok(rendered) => answer(&rendered, headers, file.private),
        Err(HostError::NotFound(sentence)) => match door.host.web_is_folder(&file).await {
            Ok(true) => folder_redirect(raw_path),
            _ => Refusal::page(HostError::NotFound(sentence)).into_response(),
        },
        Err(error) => Refusal::page(error).into_response(),
    }
}

/// A rendered file, or 304 when the browser has it already.
pub(crate) fn answer(rendered: &Rendered, request: &HeaderMap, private: bool) -> Response {
    let unchanged = request
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(|tag| tag.trim().trim_start_matches("W/"))
        .any(|tag| tag == "*" || tag == rendered.etag);
    let mut response = if unchanged {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        rendered.body.clone().into_response()
    };
    let headers = response.headers_mut();
    if !unchanged {
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(rendered.content_type),
        );
    }
    if let Ok(etag) = HeaderValue::from_str(&rendered.etag) {
        headers.insert(header::ETAG, etag);
    }
    let cache = if private {
        "private, no-cache"
    } else {
        "no-cache"
    };
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if let Some(csp) = rendered
        .csp
        .as_deref()
        .and_then(|csp| HeaderValue::from_str(csp).ok())
    {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
        headers.insert(
            header::REFERRER_POLICY,
            HeaderValue::from_static("same-origin"),
        );
    }
    response
}

/// `/runs/sub` → `/runs/sub/`, so the folder's relative addresses resolve.
fn folder_redirect(raw_path: &str) -> Response {
    match HeaderValue::from_str(&format!("{raw_path}/")) {
        Ok(location) => (
            StatusCode::PERMANENT_REDIRECT,
            [(header::LOCATION, location)],
        )
            .into_response(),
        Err(_) => StatusCode::NOT_FOUND.into_response(),
    }
}
