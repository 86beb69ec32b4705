//! The account page: passkeys (added by `static/passkeys.js`), tokens and
//! connected clients, sign-in sessions — each with its browser, when signed
//! in and last seen, and a sign-out of its own — and its forms: revoke,
//! remove a passkey, sign a session out, sign out everywhere.

use std::sync::Arc;

use axum::extract::rejection::FormRejection;
use axum::extract::{Form, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use shed_host::own::{TokenId, TokenRecord};
use shed_host::passkeys::NAME_CHARS;
use shed_host::sessions::SignInSession;
use shed_host::{Caller, HostError, Person};

use super::moments::{ago, when_seconds};
use super::{
    ACCOUNT_PATH, END_SESSION_PATH, Here, Outcome, Posted, REMOVE_PASSKEY_PATH, REVOKE_PATH,
    SIGN_OUT_PATH, Visited, fields, header_html, required,
};
use crate::PASSKEYS_JS_PATH;
use crate::browser::browser_words;
use crate::caller::cookie;
use crate::door::Door;
use crate::reply::{escape, product_page, see_other};

/// The account page: tokens, connected clients, sign-in sessions.
pub(super) async fn account(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    Visited {
        asking,
        person,
        said,
    }: Visited,
) -> Response {
    account_page(&door, &asking.caller, &person, &headers, said).await
}

/// The account page of `person`, asked with `headers` (whose session
/// cookie is "this browser").
async fn account_page(
    door: &Door,
    caller: &Caller,
    person: &Person,
    headers: &HeaderMap,
    said: Outcome,
) -> Response {
    let this_browser = cookie(headers, door.cookie);
    let sessions = match door.host.own_sessions(caller, None, this_browser).await {
        Ok(sessions) => sessions,
        Err(error) => return crate::reply::Refusal::page(error).into_response(),
    };
    let tokens = match door.host.own_tokens(caller).await {
        Ok(tokens) => tokens,
        Err(error) => return crate::reply::Refusal::page(error).into_response(),
    };
    let (grants, pasted): (Vec<&TokenRecord>, Vec<&TokenRecord>) = tokens
        .iter()
        .partition(|token| matches!(token.id, TokenId::Grant(_)));
    let mut body = said.html();
    body.push_str(&passkeys_section(door, caller).await);
    body.push_str("<section id=\"tokens\"><h2>Tokens</h2>\n");
    body.push_str(&token_rows(
        &pasted,
        "No tokens. Make one on your home page under Connect your agent.",
    ));
    body.push_str("</section>\n<section id=\"clients\"><h2>Connected clients</h2>\n");
    body.push_str(&token_rows(
        &grants,
        "No connected clients. A hosted client given this shed's MCP address signs in by itself and shows here.",
    ));
    body.push_str("</section>\n");
    body.push_str(&sessions_section(&sessions));
    product_page(
        said.status(),
        "Account",
        &header_html(person, Here::Account),
        &body,
    )
}

/// "Sign-in sessions": each browser signed in as the person — which
/// browser, when it signed in, when it was last seen, this one marked —
/// with a sign-out of its own, and signing out everywhere.
fn sessions_section(sessions: &[SignInSession]) -> String {
    let now = jiff::Timestamp::now().as_second();
    let mut html = String::from(
        "<section id=\"sessions\"><h2>Sign-in sessions</h2>\n\
         <p class=\"meta\">Each browser signed in as you. Signing one out ends it on this host \
         and every space's, at its next request.</p>\n",
    );
    if sessions.is_empty() {
        html.push_str("<p class=\"empty\">No browser is signed in as you.</p>\n");
    } else {
        html.push_str("<ul class=\"rows\">\n");
        for session in sessions {
            let id = escape(&session.id);
            let browser = escape(&browser_words(session.user_agent.as_deref()));
            let this = if session.this_browser {
                " <span class=\"tag this\">this browser</span>"
            } else {
                ""
            };
            let spaces = if session.spaces.is_empty() {
                String::new()
            } else {
                format!(
                    " · also on {}",
                    session
                        .spaces
                        .iter()
                        .map(|space| escape(space))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            html.push_str(&format!(
                "<li data-session=\"{id}\"><div class=\"what\"><strong title=\"{said}\">{browser}</strong>{this}\
                 <div class=\"meta\">signed in {signed} · last seen {seen}{spaces}</div></div>\
                 <form method=\"post\" action=\"{END_SESSION_PATH}\"><input type=\"hidden\" name=\"session\" value=\"{id}\">\
                 <button class=\"danger\" type=\"submit\" aria-label=\"Sign out {browser} ({id})\">Sign out</button></form></li>\n",
                said = escape(session.user_agent.as_deref().unwrap_or("")),
                signed = ago(session.signed_in_at, now),
                seen = ago(session.last_seen, now),
            ));
        }
        html.push_str("</ul>\n");
    }
    html.push_str(&format!(
        "<form class=\"everywhere\" method=\"post\" action=\"{SIGN_OUT_PATH}\"><button class=\"danger\" \
         type=\"submit\">Sign out everywhere</button></form>\n</section>\n"
    ));
    html
}

/// A passkey's or a token's id, as the account page lists it: what its
/// Remove or Revoke button posts.
#[derive(serde::Deserialize)]
pub(super) struct IdChoice {
    id: Option<String>,
}

/// A Remove button: on to the account page, the outcome on top.
pub(super) async fn remove_passkey(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    Posted {
        asking,
        person,
        notice,
    }: Posted,
    form: Result<Form<IdChoice>, FormRejection>,
) -> Response {
    let removed = async {
        let id = required(fields(form)?.id, "the passkey to remove")?;
        let name = door.host.remove_own_passkey(&asking.caller, &id).await?;
        Ok::<_, HostError>(format!(
            "Removed the passkey {}: it signs nobody in any more.",
            escape(&name)
        ))
    }
    .await;
    match removed {
        Ok(html) => notice.land(&door, ACCOUNT_PATH, &html, None),
        Err(error) => {
            let said = Outcome::Refused(error);
            account_page(&door, &asking.caller, &person, &headers, said).await
        }
    }
}

/// The account page's Passkeys section: the caller's passkeys with their
/// Remove buttons, and the form that adds one — or why passkeys are off.
async fn passkeys_section(door: &Door, caller: &Caller) -> String {
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
                     <form method=\"post\" action=\"{REMOVE_PASSKEY_PATH}\"><input type=\"hidden\" name=\"id\" value=\"{id}\">\
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

/// Tokens (or grants) as rows, each with its revoke button.
fn token_rows(tokens: &[&TokenRecord], empty: &str) -> String {
    if tokens.is_empty() {
        return format!("<p class=\"empty\">{}</p>\n", escape(empty));
    }
    let mut rows = String::from("<ul class=\"rows\">\n");
    for token in tokens {
        let name = token.name.as_deref().unwrap_or("(no name)");
        rows.push_str(&format!(
            "<li><div class=\"what\"><strong>{name}</strong> <span class=\"meta\">{id}</span>\
             <div class=\"meta\">made {made} · last used {used} · expires {expires}</div></div>\
             <form method=\"post\" action=\"{REVOKE_PATH}\"><input type=\"hidden\" name=\"id\" value=\"{id}\">\
             <button class=\"danger\" type=\"submit\" aria-label=\"Revoke {name}\">Revoke</button></form></li>\n",
            name = escape(name),
            id = escape(&token.id.to_string()),
            made = escape(token.created_at.get(..10).unwrap_or(&token.created_at)),
            used = when_seconds(token.last_used_at, "never"),
            expires = when_seconds(token.expires_at, "never"),
        ));
    }
    rows.push_str("</ul>\n");
    rows
}

/// A Revoke button: on to the account page, the outcome on top.
pub(super) async fn revoke(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    Posted {
        asking,
        person,
        notice,
    }: Posted,
    form: Result<Form<IdChoice>, FormRejection>,
) -> Response {
    let revoked = async {
        let id = required(fields(form)?.id, "the token to revoke")?;
        let id = door.host.revoke_own_token(&asking.caller, &id).await?;
        Ok(format!(
            "Revoked {}: it is refused from its next request on.",
            escape(&id.to_string())
        ))
    }
    .await;
    match revoked {
        Ok(html) => notice.land(&door, ACCOUNT_PATH, &html, None),
        Err(error) => {
            let said = Outcome::Refused(error);
            account_page(&door, &asking.caller, &person, &headers, said).await
        }
    }
}

/// A sign-in session to end, by its id as listed.
#[derive(serde::Deserialize)]
pub(super) struct SessionChoice {
    session: Option<String>,
}

/// Signing one sign-in session out, on every host: this browser's goes to
/// the front page signed out; another's goes on to the account page, the
/// outcome on top.
pub(super) async fn end_session(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    Posted {
        asking,
        person,
        notice,
    }: Posted,
    form: Result<Form<SessionChoice>, FormRejection>,
) -> Response {
    let ended = async {
        let id = required(fields(form)?.session, "the session to sign out")?;
        let this_browser = door
            .host
            .end_own_session(&asking.caller, &id, cookie(&headers, door.cookie))
            .await?;
        Ok((id, this_browser))
    }
    .await;
    match ended {
        Ok((_, true)) => see_other("/", [crate::caller::session_cookie_removed(&door)]),
        Ok((id, false)) => {
            let html = format!(
                "Signed out session {}: that browser is signed out at its next request.",
                escape(&id)
            );
            notice.land(&door, ACCOUNT_PATH, &html, None)
        }
        Err(error) => {
            let said = Outcome::Refused(error);
            account_page(&door, &asking.caller, &person, &headers, said).await
        }
    }
}

/// Signing out: every session of the person ends, and the browser goes to
/// the front page, signed out.
pub(super) async fn sign_out(
    State(door): State<Arc<Door>>,
    Posted { person, .. }: Posted,
) -> Response {
    if let Err(error) = door.host.end_sessions(&person.handle).await {
        return crate::reply::Refusal::page(error).into_response();
    }
    see_other("/", [crate::caller::session_cookie_removed(&door)])
}
