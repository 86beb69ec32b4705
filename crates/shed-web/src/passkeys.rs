//! Passkeys on the web: the ceremonies' JSON endpoints under
//! `/_shed/passkeys/…` on the platform's host, and the script that hands
//! their options to `navigator.credentials` (`static/passkeys.js`). (The
//! account page's Passkeys section is `pages/account.rs`'s; the "Sign in with a
//! passkey" button of the sign-in and signed-out consent pages is
//! `reply.rs`'s.) Every decision and sentence is shed-host's
//! (`passkeys.rs`); this door translates HTTP.
//!
//! The endpoints take only POSTs with a JSON body (`Content-Type:
//! application/json`, which no form of another site can send without the
//! browser asking first) from a page of this host's own origin: adding
//! one goes by the pages' rule on the session cookie
//! ([`WebCaller::writes_from_elsewhere`]), a sign-in — which has no session
//! yet — by the sign-in link's ([`foreign_origin`]); another origin is a
//! 403 and nothing is kept. A passkey sign-in answers with the sessions'
//! cookies and the address to go on to — the same walk through the space
//! hosts a sign-in link's button starts ([`crate::platform::walk_of`]),
//! ending on the front page, which sends a browser that set out to allow
//! an app back to its consent page.

use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Json, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use shed_host::passkeys::Ceremony;

use crate::PASSKEYS_JS_PATH;
use crate::caller::{WebCaller, foreign_origin};
use crate::client_address::ClientAddress;
use crate::door::Door;
use crate::files::answer;
use crate::reply::{Refusal, json, json_sentence};

/// Starts adding a passkey: `{"name"}` → `{"ceremony", "options"}`.
const ADD_START_PATH: &str = "/_shed/passkeys/add/start";
/// Finishes adding one: `{"ceremony", "credential"}` → `{"passkey"}`.
const ADD_FINISH_PATH: &str = "/_shed/passkeys/add/finish";
/// Starts a passkey sign-in: `{}` → `{"ceremony", "options"}`.
const SIGN_IN_START_PATH: &str = "/_shed/passkeys/sign-in/start";
/// Finishes one: `{"ceremony", "credential"}` → the sessions' cookies and `{"go"}`.
const SIGN_IN_FINISH_PATH: &str = "/_shed/passkeys/sign-in/finish";

pub(crate) fn router(door: Arc<Door>) -> Router {
    Router::new()
        .route(ADD_START_PATH, post(add_start))
        .route(ADD_FINISH_PATH, post(add_finish))
        .route(SIGN_IN_START_PATH, post(sign_in_start))
        .route(SIGN_IN_FINISH_PATH, post(sign_in_finish))
        .route(PASSKEYS_JS_PATH, get(passkeys_js))
        .with_state(door)
}

async fn passkeys_js(State(door): State<Arc<Door>>, headers: HeaderMap) -> Response {
    answer(&door.passkeys_js, &headers, false)
}

/// A passkey's name, to start adding it.
#[derive(serde::Deserialize)]
struct Naming {
    name: Option<String>,
}

/// A ceremony's id and the browser's answer to it.
#[derive(serde::Deserialize)]
struct Finish {
    ceremony: Option<String>,
    credential: Option<serde_json::Value>,
}

/// A step the door refuses before asking the host: its status and
/// sentence, answered as the page api answers one.
struct StepRefused(StatusCode, String);

impl IntoResponse for StepRefused {
    fn into_response(self) -> Response {
        json_sentence(self.0, &self.1)
    }
}

/// A JSON body, or the sentence (and status: 415 for another content type,
/// else 400) saying it did not arrive as one.
fn body<T>(body: Result<Json<T>, JsonRejection>) -> Result<T, StepRefused> {
    body.map(|Json(body)| body).map_err(|rejection| {
        StepRefused(
            rejection.status(),
            format!(
                "a passkey step is JSON sent by this page's script ({}) — reload the page and press the button again",
                rejection.body_text()
            ),
        )
    })
}

/// The ceremony and the browser's answer a finish carries.
fn finish_parts(finish: Finish) -> Result<(String, serde_json::Value), StepRefused> {
    match (finish.ceremony, finish.credential) {
        (Some(ceremony), Some(credential)) => Ok((ceremony, credential)),
        _ => Err(StepRefused(
            StatusCode::BAD_REQUEST,
            "a passkey step's finish carries its ceremony and the browser's credential — reload the page and press the button again"
                .to_string(),
        )),
    }
}

/// A ceremony started, as its JSON answer.
fn started(ceremony: Ceremony) -> Response {
    json(
        StatusCode::OK,
        serde_json::json!({ "ceremony": ceremony.id, "options": ceremony.options }),
    )
}

/// An add's step may go on: it comes from a page of this host (on its
/// session cookie).
fn from_home(door: &Door, asking: &WebCaller, headers: &HeaderMap) -> Result<(), StepRefused> {
    let own = door.host.public_url();
    match asking.writes_from_elsewhere(headers, own) {
        Some(from) => Err(from_elsewhere(own, &from)),
        None => Ok(()),
    }
}

fn from_elsewhere(own: &str, from: &str) -> StepRefused {
    StepRefused(
        StatusCode::FORBIDDEN,
        format!(
            "a passkey step is taken only from shed's own pages at {own}, and this came from {from} \
             — nothing was kept; open {own}/ and use the button there"
        ),
    )
}

async fn add_start(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    asking: WebCaller,
    naming: Result<Json<Naming>, JsonRejection>,
) -> Response {
    if let Err(refused) = from_home(&door, &asking, &headers) {
        return refused.into_response();
    }
    let naming = match body(naming) {
        Ok(naming) => naming,
        Err(refused) => return refused.into_response(),
    };
    let name = naming.name.unwrap_or_default();
    match door.host.start_adding_passkey(&asking.caller, &name).await {
        Ok(ceremony) => started(ceremony),
        Err(error) => Refusal::json(error).into_response(),
    }
}

async fn add_finish(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    asking: WebCaller,
    finish: Result<Json<Finish>, JsonRejection>,
) -> Response {
    if let Err(refused) = from_home(&door, &asking, &headers) {
        return refused.into_response();
    }
    let (ceremony, credential) = match body(finish).and_then(finish_parts) {
        Ok(parts) => parts,
        Err(refused) => return refused.into_response(),
    };
    match door
        .host
        .finish_adding_passkey(&asking.caller, &ceremony, credential)
        .await
    {
        Ok(added) => json(
            StatusCode::OK,
            serde_json::json!({ "passkey": { "id": added.id, "name": added.name } }),
        ),
        Err(error) => Refusal::json(error).into_response(),
    }
}

/// A sign-in's step may go on: it comes from a page of this host (there
/// is no session to go by yet).
fn sign_in_from_home(door: &Door, headers: &HeaderMap) -> Result<(), StepRefused> {
    let own = door.host.public_url();
    match foreign_origin(headers, own) {
        Some(from) => Err(from_elsewhere(own, &from)),
        None => Ok(()),
    }
}

async fn sign_in_start(
    State(door): State<Arc<Door>>,
    ClientAddress(from): ClientAddress,
    headers: HeaderMap,
    empty: Result<Json<serde_json::Value>, JsonRejection>,
) -> Response {
    if let Err(refused) = sign_in_from_home(&door, &headers).and_then(|()| body(empty).map(drop)) {
        return refused.into_response();
    }
    match door.host.start_passkey_sign_in(from).await {
        Ok(ceremony) => started(ceremony),
        Err(error) => Refusal::json(error).into_response(),
    }
}

async fn sign_in_finish(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    finish: Result<Json<Finish>, JsonRejection>,
) -> Response {
    if let Err(refused) = sign_in_from_home(&door, &headers) {
        return refused.into_response();
    }
    let (ceremony, credential) = match body(finish).and_then(finish_parts) {
        Ok(parts) => parts,
        Err(refused) => return refused.into_response(),
    };
    let signed = match door
        .host
        .sign_in_with_passkey(&ceremony, credential, crate::platform::user_agent(&headers))
        .await
    {
        Ok(signed) => signed,
        Err(error) => return Refusal::json(error).into_response(),
    };
    let (go, cookies) = crate::platform::walk_of(&door, &signed);
    let mut response = json(StatusCode::OK, serde_json::json!({ "go": go }));
    for cookie in cookies.into_iter().flatten() {
        response.headers_mut().append(header::SET_COOKIE, cookie);
    }
    response
}
