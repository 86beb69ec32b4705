//! Passkeys on the web: the ceremonies' JSON endpoints under
//! `/_shed/passkeys/…` on the platform's host, the script that hands their
//! options to `navigator.credentials` (`static/passkeys.js`), the Passkeys
//! section of the account page with its Remove forms, and the "Sign in
//! with a passkey" button of the sign-in page and of the signed-out consent
//! page. Every decision and sentence is shed-host's (`passkeys.rs`); this
//! door translates HTTP.
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
use axum::extract::rejection::{FormRejection, JsonRejection};
use axum::extract::{Form, Json, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use shed_host::passkeys::{Ceremony, NAME_CHARS};
use shed_host::{Caller, HostError};

use crate::caller::{WebCaller, foreign_origin};
use crate::door::Door;
use crate::files::answer;
use crate::pages::{Outcome, account_page, fields, poster, required, when_seconds};
use crate::reply::{Refusal, escape, json, json_sentence, page, script_page, sign_in_words};

/// Where the passkeys' script is served, on the platform's host.
pub const PASSKEYS_JS_PATH: &str = "/_shed/passkeys.js";
/// Starts adding a passkey: `{"name"}` → `{"ceremony", "options"}`.
const ADD_START_PATH: &str = "/_shed/passkeys/add/start";
/// Finishes adding one: `{"ceremony", "credential"}` → `{"passkey"}`.
const ADD_FINISH_PATH: &str = "/_shed/passkeys/add/finish";
/// Starts a passkey sign-in: `{}` → `{"ceremony", "options"}`.
const SIGN_IN_START_PATH: &str = "/_shed/passkeys/sign-in/start";
/// Finishes one: `{"ceremony", "credential"}` → the sessions' cookies and `{"go"}`.
const SIGN_IN_FINISH_PATH: &str = "/_shed/passkeys/sign-in/finish";
/// The account page's Remove buttons post here.
const REMOVE_PATH: &str = "/account/passkeys/remove";

/// The script of the passkeys' buttons.
const PASSKEYS_JS: &str = include_str!("../static/passkeys.js");

pub(crate) fn router(door: Arc<Door>) -> Router {
    Router::new()
        .route(ADD_START_PATH, post(add_start))
        .route(ADD_FINISH_PATH, post(add_finish))
        .route(SIGN_IN_START_PATH, post(sign_in_start))
        .route(SIGN_IN_FINISH_PATH, post(sign_in_finish))
        .route(REMOVE_PATH, post(remove))
        .route(PASSKEYS_JS_PATH, get(passkeys_js))
        .with_state(door)
}

/// The script, as the door's other assets are served.
pub(crate) fn script() -> crate::page::Rendered {
    crate::page::Rendered::asset(
        0,
        PASSKEYS_JS.as_bytes().to_vec(),
        "text/javascript; charset=utf-8",
    )
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
    headers: HeaderMap,
    empty: Result<Json<serde_json::Value>, JsonRejection>,
) -> Response {
    if let Err(refused) = sign_in_from_home(&door, &headers).and_then(|()| body(empty).map(drop)) {
        return refused.into_response();
    }
    match door.host.start_passkey_sign_in().await {
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
    let signed = match door.host.sign_in_with_passkey(&ceremony, credential).await {
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

/// A passkey's id, as the account page lists it.
#[derive(serde::Deserialize)]
struct PasskeyChoice {
    id: Option<String>,
}

/// A Remove button: the account page again, the outcome on top.
async fn remove(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    asking: WebCaller,
    form: Result<Form<PasskeyChoice>, FormRejection>,
) -> Response {
    let person = match poster(&door, &asking, &headers) {
        Ok(person) => person,
        Err(refused) => return refused.into_response(),
    };
    let removed = async {
        let id = required(fields(form)?.id, "the passkey to remove")?;
        let name = door.host.remove_own_passkey(&asking.caller, &id).await?;
        Ok::<_, HostError>(format!(
            "Removed the passkey {}: it signs nobody in any more.",
            escape(&name)
        ))
    }
    .await;
    account_page(&door, &asking.caller, &person, Outcome::of(removed)).await
}

/// The account page's Passkeys section: the caller's passkeys with their
/// Remove buttons, and the form that adds one — or why passkeys are off.
pub(crate) async fn account_section(door: &Door, caller: &Caller) -> String {
    let mut section = String::from("<section id=\"passkeys\"><h2>Passkeys</h2>\n");
    if let Some(why) = door.host.passkeys_off() {
        section.push_str(&format!(
            "<p class=\"empty\">{}</p>\n</section>\n",
            escape(why)
        ));
        return section;
    }
    section.push_str(
        "<p>A passkey signs you in on this shed's sign-in page with your device's lock \
         (fingerprint, face, PIN) — no link needed.</p>\n",
    );
    match door.host.own_passkeys(caller).await {
        Ok(passkeys) if passkeys.is_empty() => section
            .push_str("<p class=\"empty\">No passkeys yet. Add one for this device below.</p>\n"),
        Ok(passkeys) => {
            section.push_str("<ul class=\"rows\">\n");
            for passkey in passkeys {
                section.push_str(&format!(
                    "<li><div class=\"what\"><strong>{name}</strong>\
                     <div class=\"meta\">added {added} · last used {used}</div></div>\
                     <form method=\"post\" action=\"{REMOVE_PATH}\"><input type=\"hidden\" name=\"id\" value=\"{id}\">\
                     <button class=\"danger\" type=\"submit\" aria-label=\"Remove {name}\">Remove</button></form></li>\n",
                    name = escape(&passkey.name),
                    added = when_seconds(Some(passkey.created_at), "never"),
                    used = when_seconds(passkey.last_used_at, "never"),
                    id = passkey.id,
                ));
            }
            section.push_str("</ul>\n");
        }
        Err(error) => section.push_str(&format!(
            "<p class=\"refused\" role=\"alert\">{}</p>\n",
            escape(&error.to_string())
        )),
    }
    section.push_str(&format!(
        "<form class=\"inline\" data-passkey-add>\
         <label>Passkey name <input name=\"name\" maxlength=\"{NAME_CHARS}\" placeholder=\"laptop\" autocomplete=\"off\"></label>\
         <button class=\"primary\" type=\"submit\">Add a passkey</button></form>\n\
         <p id=\"passkey-said\" role=\"status\" hidden></p>\n\
         <script src=\"{PASSKEYS_JS_PATH}\" defer></script>\n</section>\n"
    ));
    section
}

/// The button that signs in with a passkey, its sentence's place, and its
/// script.
fn sign_in_section() -> String {
    format!(
        "<section id=\"passkey\"><h2>Sign in with a passkey</h2>\n\
         <p>Added a passkey on your account page? Use it here instead of a link.</p>\n\
         <button type=\"button\" data-passkey-sign-in>Sign in with a passkey</button>\n\
         <p id=\"passkey-said\" role=\"status\" hidden></p>\n\
         <script src=\"{PASSKEYS_JS_PATH}\" defer></script>\n</section>"
    )
}

/// One of the platform's small pages, with the passkey sign-in button
/// after `body` — when passkeys are on; else the page as it is.
pub(crate) fn with_passkey_sign_in(
    door: &Door,
    status: StatusCode,
    title: &str,
    body: &str,
) -> Response {
    if door.host.passkeys_off().is_some() {
        return page(status, title, body);
    }
    script_page(status, title, &format!("{body}\n{}", sign_in_section()))
}

/// The platform host's sign-in page, after `why`: a link, or a passkey.
pub(crate) fn sign_in_page(door: &Door, status: StatusCode, why: &str) -> Response {
    with_passkey_sign_in(door, status, "Sign in", &sign_in_words(why))
}
