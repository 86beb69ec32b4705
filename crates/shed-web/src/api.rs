//! The page api of an app, on its space's host: `./api/query?<filter line>`
//! (GET), `./api/apply` (POST, a JSON bundle) and `./api/watch?filter=<filter
//! line>` (GET, a stream of the app's writes: `watch.rs`). Each is one call of
//! [`shed_host::Host::graph_query`] / [`shed_host::Host::graph_apply`] as the
//! caller, answering the same data and the same refusal sentences as the MCP
//! door's `graph_query` and `graph_apply`: data as JSON, a refusal as
//! `{"error": "<sentence>"}` with 401, 403, 400, 404 or 409.
//!
//! The filter line is passed as it arrived — still percent-encoded — since
//! the store splits it at `&` and the operators before decoding each value.
//! A write on a session cookie must come from a page of the app's own space
//! (`Origin`) and be JSON, so a page elsewhere — a cross-site form above all
//! — cannot write as the person.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use shed_host::Data;

use crate::caller::WebCaller;
use crate::client_address::ClientAddress;
use crate::door::Door;
use crate::reply::{Refusal, json, json_sentence};

/// The largest bundle a page may send.
const MAX_BUNDLE: usize = 1024 * 1024;

/// Answers `<method> /<slug>/api/<what>?<query>` on `space`'s host.
pub(crate) async fn answer(
    door: &Arc<Door>,
    request: &mut Parts,
    body: Body,
    space: &str,
    slug: &str,
    what: &str,
) -> Response {
    let app = format!("{space}/{slug}");
    match (what, &request.method) {
        ("query", &Method::GET | &Method::HEAD) => {
            let asking = match WebCaller::from_request_parts(request, door).await {
                Ok(asking) => asking,
                Err(refusal) => return refusal.into_json().into_response(),
            };
            let filter = request.uri.query().unwrap_or_default();
            let ClientAddress(from) = ClientAddress::of(request);
            answered(
                door.host
                    .graph_query(&asking.caller, from, &app, filter)
                    .await,
            )
        }
        ("apply", &Method::POST) => {
            let asking = match WebCaller::from_request_parts(request, door).await {
                Ok(asking) => asking,
                Err(refusal) => return refusal.into_json().into_response(),
            };
            apply(door, &asking, &request.headers, body, space, &app).await
        }
        ("watch", &Method::GET) => crate::watch::answer(door, request, space, slug).await,
        ("watch", _) => wrong_method(
            "./api/watch",
            "GET",
            "a filter line after ?filter=, such as ./api/watch?filter=.jog!",
        ),
        ("query", _) => wrong_method(
            "./api/query",
            "GET",
            "a filter line after ?, such as ./api/query?.jog!&limit=10",
        ),
        ("apply", _) => wrong_method("./api/apply", "POST", "a JSON bundle as the body"),
        _ => json_sentence(
            StatusCode::NOT_FOUND,
            &format!(
                "no page api {} — an app's pages have ./api/query (GET, a filter line), ./api/apply (POST, a JSON bundle) and ./api/watch (GET, ?filter= a filter line)",
                what.chars().take(60).collect::<String>()
            ),
        ),
    }
}

/// The host's answer as the page api's JSON: the data, or the refusal.
fn answered<T: Into<Data>>(answer: Result<shed_host::Answer<T>, shed_host::HostError>) -> Response {
    match answer {
        Ok(answer) => json(StatusCode::OK, answer.data.into().into_json()),
        Err(error) => Refusal::json(error).into_response(),
    }
}

async fn apply(
    door: &Door,
    asking: &WebCaller,
    headers: &HeaderMap,
    body: Body,
    space: &str,
    app: &str,
) -> Response {
    let own = door.host.space_origin(space);
    if let Some(from) = asking.writes_from_elsewhere(headers, &own) {
        return json_sentence(
            StatusCode::FORBIDDEN,
            &format!(
                "{app} takes writes from its own pages at {own}, and this one came from {from} — \
                 write from the app's page, or send a bearer token"
            ),
        );
    }
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|kind| kind.trim().eq_ignore_ascii_case("application/json"));
    if !is_json {
        return json_sentence(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "./api/apply takes a bundle as JSON — send it with Content-Type: application/json",
        );
    }
    let bytes = match axum::body::to_bytes(body, MAX_BUNDLE).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return json_sentence(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the bundle is larger than 1 MiB — send fewer entities at a time",
            );
        }
    };
    let bundle: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(bundle) => bundle,
        Err(error) => {
            return json_sentence(
                StatusCode::BAD_REQUEST,
                &format!(
                    "the body of ./api/apply is not JSON ({error}) — send a bundle such as \
                     {{\"entity\": {{\"eid\": \"$run\"}}, \"jog\": {{\"who\": \"Ada\"}}}}"
                ),
            );
        }
    };
    answered(door.host.graph_apply(&asking.caller, app, bundle).await)
}

fn wrong_method(api: &str, method: &'static str, takes: &str) -> Response {
    let mut response = json_sentence(
        StatusCode::METHOD_NOT_ALLOWED,
        &format!("{api} answers {method} only, with {takes}"),
    );
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(method));
    response
}
