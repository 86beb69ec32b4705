//! The signed-in person's pages on the platform's host: home (their spaces'
//! apps, each with its last deploy and by whom, and connecting an agent),
//! account (passkeys — added by `static/passkeys.js` —, tokens and
//! connected clients; sign-in sessions, each with its
//! browser, when signed in and last seen, and a sign-out of its own), a
//! space (its members and their roles, and its apps — those in the trash
//! too, with Restore) and agents (their jobs). An app's own page (versions,
//! roll back, trash, restore, purge) is `app_page.rs`, at
//! `/spaces/<space>/apps/<app>`; home's and a space's app entries link
//! there. Server-rendered; the one script is the copy buttons'
//! (`static/pages.js`). Every action is a POST form, taken only from a page
//! of this host ([`WebCaller::writes_from_elsewhere`]); every decision and
//! every sentence is shed-host's (`own.rs`, `take_back.rs`, `apps.rs`,
//! `sessions.rs`), the same the CLI and MCP give. A post answers with its
//! page again, the outcome on top — a token or a sign-in link shown there
//! once.

use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::FormRejection;
use axum::extract::{Form, FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use shed_host::agents::Job;
use shed_host::answer::{AppOfMine, SpaceApp};
use shed_host::own::{TokenId, TokenRecord};
use shed_host::passkeys::NAME_CHARS;
use shed_host::sessions::SignInSession;
use shed_host::{Caller, HostError, Person, Role, SLUG_CHARS};

use crate::browser::browser_words;
use crate::caller::{WebCaller, cookie};
use crate::door::Door;
use crate::files::answer;
use crate::reply::{escape, product_page, see_other, sign_in_page, status_of};
use crate::{PAGES_JS_PATH, PASSKEYS_JS_PATH};

/// Where the account page is, and where its forms post.
pub const ACCOUNT_PATH: &str = "/account";
/// Where the agents page is.
pub const AGENTS_PATH: &str = "/agents";
const MAKE_TOKEN_PATH: &str = "/account/tokens";
const REVOKE_PATH: &str = "/account/tokens/revoke";
const SIGN_OUT_PATH: &str = "/account/sign-out";
const END_SESSION_PATH: &str = "/account/sessions/end";
const REMOVE_PASSKEY_PATH: &str = "/account/passkeys/remove";
const END_JOB_PATH: &str = "/agents/end";

pub(crate) fn router(door: Arc<Door>) -> Router {
    Router::new()
        .route(ACCOUNT_PATH, get(account))
        .route(MAKE_TOKEN_PATH, post(make_token))
        .route(REVOKE_PATH, post(revoke))
        .route(SIGN_OUT_PATH, post(sign_out))
        .route(END_SESSION_PATH, post(end_session))
        .route(REMOVE_PASSKEY_PATH, post(remove_passkey))
        .route("/spaces/{space}", get(space).post(change_member))
        .route("/spaces/{space}/remove", post(remove_member))
        .route(AGENTS_PATH, get(agents))
        .route(END_JOB_PATH, post(end_job))
        .route(PAGES_JS_PATH, get(pages_js))
        .with_state(door)
}

async fn pages_js(State(door): State<Arc<Door>>, headers: HeaderMap) -> Response {
    answer(&door.pages_js, &headers, false)
}

/// What a post came to, said on top of the page it answers with.
pub(crate) enum Outcome {
    /// A plain visit.
    Nothing,
    /// Done: HTML the page escaped.
    Done(String),
    /// Refused, with the host's sentence.
    Refused(HostError),
}

impl Outcome {
    pub(crate) fn of(result: Result<String, HostError>) -> Outcome {
        match result {
            Ok(html) => Outcome::Done(html),
            Err(error) => Outcome::Refused(error),
        }
    }

    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Outcome::Refused(error) => status_of(error),
            _ => StatusCode::OK,
        }
    }

    pub(crate) fn html(&self) -> String {
        match self {
            Outcome::Nothing => String::new(),
            Outcome::Done(html) => format!("<p class=\"note\" role=\"status\">{html}</p>\n"),
            Outcome::Refused(error) => format!(
                "<p class=\"refused\" role=\"alert\">{}</p>\n",
                escape(&error.to_string())
            ),
        }
    }
}

/// Which page a header marks as the one shown.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Here {
    Home,
    Account,
    Agents,
    Space,
}

/// The header of every page: the links, the person, and signing out.
pub(crate) fn header_html(person: &Person, here: Here) -> String {
    let link = |to: &str, words: &str, page: Here| {
        let current = if page == here {
            " aria-current=\"page\""
        } else {
            ""
        };
        format!("<a href=\"{to}\"{current}>{words}</a>")
    };
    format!(
        "<header><a class=\"brand\" href=\"/\">shed</a>\n<nav>{}{}{}</nav>\n\
         <span class=\"who\">{} (@{})</span>\n\
         <form method=\"post\" action=\"{SIGN_OUT_PATH}\"><button type=\"submit\">Sign out</button></form></header>",
        link("/", "Home", Here::Home),
        link(ACCOUNT_PATH, "Account", Here::Account),
        link(AGENTS_PATH, "Agents", Here::Agents),
        escape(&person.name),
        escape(&person.handle),
    )
}

/// Why a request was not taken before any page was drawn.
pub(crate) enum NotTaken {
    /// Nobody is signed in: the sign-in page.
    SignedOut,
    /// A post from a page elsewhere, with the sentence saying so.
    FromElsewhere(String),
}

impl IntoResponse for NotTaken {
    fn into_response(self) -> Response {
        match self {
            NotTaken::SignedOut => sign_in_page(
                StatusCode::UNAUTHORIZED,
                "Sign in to see your spaces, account and agents.",
            ),
            NotTaken::FromElsewhere(sentence) => crate::reply::page(
                StatusCode::FORBIDDEN,
                "Not taken",
                &format!("<p>{}</p>", escape(&sentence)),
            ),
        }
    }
}

/// The person of a page's request.
pub(crate) fn signed_in(asking: &WebCaller) -> Result<Person, NotTaken> {
    asking.caller.person().cloned().ok_or(NotTaken::SignedOut)
}

/// A form posted to the person's pages: who is asking and the person
/// signed in. An extractor, so no handler forgets the rule: a post must
/// come from a page of this host, and from someone signed in — refused
/// otherwise, before the handler runs.
pub(crate) struct Posted {
    pub(crate) asking: WebCaller,
    pub(crate) person: Person,
}

impl FromRequestParts<Arc<Door>> for Posted {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, door: &Arc<Door>) -> Result<Self, Response> {
        let asking = WebCaller::from_request_parts(parts, door)
            .await
            .map_err(IntoResponse::into_response)?;
        let own = door.host.public_url();
        if let Some(from) = asking.writes_from_elsewhere(&parts.headers, own) {
            return Err(NotTaken::FromElsewhere(format!(
                "shed's pages take a form only from their own pages at {own}, and this came from {from} \
                 — nothing was changed; open {own}/ and use the form there"
            ))
            .into_response());
        }
        let person = signed_in(&asking).map_err(IntoResponse::into_response)?;
        Ok(Posted { asking, person })
    }
}

/// A form's fields, or the sentence saying it did not arrive as one.
pub(crate) fn fields<T>(form: Result<Form<T>, FormRejection>) -> Result<T, HostError> {
    form.map(|Form(fields)| fields).map_err(|rejection| {
        HostError::BadInput(format!(
            "the form did not arrive as a form ({rejection}) — reload the page and send it again"
        ))
    })
}

/// A field the form must fill, or the sentence naming it.
pub(crate) fn required(value: Option<String>, what: &str) -> Result<String, HostError> {
    value
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .ok_or_else(|| HostError::BadInput(format!("the form is missing {what} — fill it in")))
}

/// Unix seconds as a date and time (UTC), or `never`.
fn when_seconds(at: Option<i64>, never: &str) -> String {
    at.and_then(|at| jiff::Timestamp::from_second(at).ok())
        .map_or_else(|| never.to_string(), minutes)
}

/// Unix milliseconds as a date and time (UTC), or `never`.
fn when_millis(at: Option<i64>, never: &str) -> String {
    at.and_then(|at| jiff::Timestamp::from_millisecond(at).ok())
        .map_or_else(|| never.to_string(), minutes)
}

fn minutes(at: jiff::Timestamp) -> String {
    at.strftime("%Y-%m-%d %H:%M UTC").to_string()
}

/// How long ago a moment was, as a person says it: "just now", "5 minutes
/// ago", "2 hours ago", "3 days ago", or past a week the date — `at` in Unix
/// seconds, `now` too.
pub(crate) fn ago(at: i64, now: i64) -> String {
    let seconds = (now - at).max(0);
    let plural = |n: i64, one: &str| {
        if n == 1 {
            format!("1 {one} ago")
        } else {
            format!("{n} {one}s ago")
        }
    };
    match seconds {
        0..60 => "just now".to_string(),
        60..3_600 => plural(seconds / 60, "minute"),
        3_600..86_400 => plural(seconds / 3_600, "hour"),
        86_400..604_800 => plural(seconds / 86_400, "day"),
        _ => jiff::Timestamp::from_second(at).map_or_else(
            |_| "long ago".to_string(),
            |at| format!("on {}", at.strftime("%Y-%m-%d")),
        ),
    }
}

/// [`ago`] of an RFC 3339 moment, as the host's stamps keep one; the text
/// itself when it does not read as one.
pub(crate) fn ago_text(at: &str) -> String {
    match at.parse::<jiff::Timestamp>() {
        Ok(then) => ago(then.as_second(), jiff::Timestamp::now().as_second()),
        Err(_) => at.to_string(),
    }
}

/// The page of `app` (`space/slug`) on this host.
pub(crate) fn app_page_path(at: &str) -> String {
    let (space, slug) = at.split_once('/').unwrap_or((at, ""));
    format!("/spaces/{}/apps/{}", escape(space), escape(slug))
}

/// An app as a list row, on home and a space's page: its title (to its
/// page), where it is, access, version, the last deploy and by whom, its
/// commands; in the trash, marked so, with Restore when the rule book lets
/// the caller take it out.
pub(crate) fn app_row(mine: &AppOfMine) -> String {
    let app = &mine.app;
    let page = app_page_path(&app.at);
    let deployed = format!(
        "v{} · deployed {} by @{}",
        app.version,
        ago_text(&app.last_deploy.at),
        escape(&app.last_deploy.handle)
    );
    let (mark, detail, act) = match &app.trashed {
        Some(trashed) => (
            " <span class=\"tag trashed\">in the trash</span>",
            format!(
                "Trashed {} by @{}: its commands, pages and data are out of reach until it is restored.",
                ago_text(&trashed.at),
                escape(&trashed.handle)
            ),
            if mine.may.trash {
                format!(
                    "<form method=\"post\" action=\"{page}/restore\"><button type=\"submit\" \
                     aria-label=\"Restore {at}\">Restore</button></form>",
                    at = escape(&app.at)
                )
            } else {
                String::new()
            },
        ),
        None => (
            "",
            if app.commands.is_empty() {
                "Commands: none".to_string()
            } else {
                format!(
                    "Commands: {}",
                    app.commands
                        .iter()
                        .map(|name| format!("<code>{}</code>", escape(name)))
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            },
            open_link(app),
        ),
    };
    format!(
        "<li data-app=\"{at}\"><div class=\"what\"><a href=\"{page}\"><strong>{title}</strong></a>{mark}\
         <div class=\"meta\">{at} · {access} · {deployed}</div>\
         <div class=\"meta\">{detail}</div></div>{act}</li>\n",
        at = escape(&app.at),
        title = escape(&app.title),
        access = escape(app.access),
    )
}

/// An app's Open link to its address; for an app whose deploy has no
/// `index.html` (nothing to open), the words saying so.
fn open_link(app: &SpaceApp) -> String {
    if app.index_page {
        format!(
            "<a class=\"open\" href=\"{}\">Open</a>",
            escape(&app.address)
        )
    } else {
        "<span class=\"meta\">no pages</span>".to_string()
    }
}

/// The home page, signed in: the person's spaces and their apps, and how
/// to connect an agent (with `token`, just made, once).
pub(crate) async fn home(
    door: &Door,
    caller: &Caller,
    person: &Person,
    said: Outcome,
    token: Option<&str>,
) -> Response {
    let spaces = match door.host.spaces(caller).await {
        Ok(answer) => answer.data,
        Err(error) => return crate::reply::Refusal::page(error).into_response(),
    };
    // Every app of the person's spaces, those in the trash too (restoring
    // one needs a way in).
    let apps = match door.host.apps(caller).await {
        Ok(answer) => answer.data.apps,
        Err(error) => return crate::reply::Refusal::page(error).into_response(),
    };
    let mut body = format!(
        "<p class=\"meta\">You are signed in as {} (@{}).</p>\n{}",
        escape(&person.name),
        escape(&person.handle),
        said.html()
    );
    body.push_str("<section id=\"spaces\"><h2>Your spaces</h2>\n");
    if spaces.spaces.is_empty() {
        body.push_str(
            "<p class=\"empty\">You belong to no space yet. An owner of a space can invite you \
             from its page here; whoever runs this shed can make you one with \
             <code>shed space add &lt;slug&gt; --owner &lt;your handle&gt;</code>.</p>\n",
        );
    }
    for space in &spaces.spaces {
        body.push_str(&format!(
            "<div class=\"card\"><h3><a href=\"/spaces/{slug}\">{slug}</a> <span class=\"tag\">{role}</span></h3>\n",
            slug = escape(&space.space),
            role = escape(space.role)
        ));
        body.push_str(&app_rows(&apps, &space.space));
        body.push_str("</div>\n");
    }
    body.push_str("</section>\n");
    body.push_str(&connect_section(door, token));
    product_page(
        said.status(),
        "Home",
        &header_html(person, Here::Home),
        &body,
    )
}

/// The rows of `space`'s apps, or what to do when it has none.
pub(crate) fn app_rows(apps: &[AppOfMine], space: &str) -> String {
    let prefix = format!("{space}/");
    let rows: String = apps
        .iter()
        .filter(|mine| mine.app.at.starts_with(&prefix))
        .map(app_row)
        .collect();
    if rows.is_empty() {
        "<p class=\"empty\">No apps here yet. Connect your agent (on your home page) and ask it \
         to build one: it deploys into this space with <code>app_deploy</code>.</p>\n"
            .to_string()
    } else {
        format!("<ul class=\"rows apps\">\n{rows}</ul>\n")
    }
}

/// "Connect your agent": the MCP address, the line for a hosted client,
/// and a client configuration — with the token just made, if one was.
fn connect_section(door: &Door, token: Option<&str>) -> String {
    let mcp = door.host.mcp_resource();
    let bearer = token.map_or_else(|| "&lt;your token&gt;".to_string(), escape);
    let config = format!(
        "{{\n  \"mcpServers\": {{\n    \"shed\": {{\n      \"type\": \"http\",\n      \"url\": \"{mcp}\",\n      \
         \"headers\": {{\n        \"Authorization\": \"Bearer {bearer}\"\n      }}\n    }}\n  }}\n}}",
        mcp = escape(&mcp)
    );
    format!(
        "<section id=\"connect\"><h2>Connect your agent</h2>\n\
         <p>The MCP address of this shed:</p>\n\
         <div class=\"copyable\"><code id=\"mcp-url\">{mcp}</code>\
         <button type=\"button\" data-copy=\"mcp-url\">Copy</button></div>\n\
         <p><strong>A hosted client</strong> (one that adds a remote MCP server by its URL): give it \
         this address. It signs in by itself — you confirm it here once, and it shows under \
         connected clients on your account.</p>\n\
         <p><strong>A client that takes a token</strong>: make one, named for the client, and \
         paste this configuration into it.</p>\n\
         <form class=\"inline\" method=\"post\" action=\"{MAKE_TOKEN_PATH}\">\
         <label>Token name <input name=\"name\" required maxlength=\"100\" placeholder=\"laptop claude\"></label>\
         <button class=\"primary\" type=\"submit\">Make a token</button></form>\n\
         <div class=\"copyable\"><pre id=\"client-config\">{config}</pre>\
         <button type=\"button\" data-copy=\"client-config\">Copy</button></div>\n</section>\n",
        mcp = escape(&mcp),
    )
}

/// The name of a token to make.
#[derive(serde::Deserialize)]
struct TokenName {
    name: Option<String>,
}

/// "Make a token": the home page again, the token on it once.
async fn make_token(
    State(door): State<Arc<Door>>,
    Posted { asking, person }: Posted,
    form: Result<Form<TokenName>, FormRejection>,
) -> Response {
    let made = async {
        let name = required(fields(form)?.name, "the token's name")?;
        let token = door.host.make_own_token(&asking.caller, &name).await?;
        tracing::info!(person = %person.handle, "made a token on the home page");
        Ok((name, token))
    }
    .await;
    match made {
        Ok((name, token)) => {
            let said = Outcome::Done(format!(
                "Your token {} — copy it now; it is shown this once:</p>\n\
                 <div class=\"copyable once\"><code id=\"token\">{}</code>\
                 <button type=\"button\" data-copy=\"token\">Copy</button></div><p class=\"meta\">\
                 The client configuration under Connect your agent carries it.",
                escape(&name),
                escape(&token)
            ));
            home(&door, &asking.caller, &person, said, Some(&token)).await
        }
        Err(error) => {
            home(
                &door,
                &asking.caller,
                &person,
                Outcome::Refused(error),
                None,
            )
            .await
        }
    }
}

/// The account page: tokens, connected clients, sign-in sessions.
async fn account(State(door): State<Arc<Door>>, headers: HeaderMap, asking: WebCaller) -> Response {
    match signed_in(&asking) {
        Ok(person) => {
            account_page(&door, &asking.caller, &person, &headers, Outcome::Nothing).await
        }
        Err(refused) => refused.into_response(),
    }
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

/// A passkey's id, as the account page lists it.
#[derive(serde::Deserialize)]
struct PasskeyChoice {
    id: Option<String>,
}

/// A Remove button: the account page again, the outcome on top.
async fn remove_passkey(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    Posted { asking, person }: Posted,
    form: Result<Form<PasskeyChoice>, FormRejection>,
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
    account_page(
        &door,
        &asking.caller,
        &person,
        &headers,
        Outcome::of(removed),
    )
    .await
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

/// A token's id, as listed.
#[derive(serde::Deserialize)]
struct TokenChoice {
    id: Option<String>,
}

async fn revoke(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    Posted { asking, person }: Posted,
    form: Result<Form<TokenChoice>, FormRejection>,
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
    account_page(
        &door,
        &asking.caller,
        &person,
        &headers,
        Outcome::of(revoked),
    )
    .await
}

/// A sign-in session to end, by its id as listed.
#[derive(serde::Deserialize)]
struct SessionChoice {
    session: Option<String>,
}

/// Signing one sign-in session out, on every host: this browser's goes to
/// the front page signed out; another's answers the account page, the
/// outcome on top.
async fn end_session(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    Posted { asking, person }: Posted,
    form: Result<Form<SessionChoice>, FormRejection>,
) -> Response {
    let ended = async {
        let id = required(fields(form)?.session, "the session to sign out")?;
        let this_browser = door
            .host
            .own_sessions(&asking.caller, None, cookie(&headers, door.cookie))
            .await?
            .iter()
            .any(|session| session.this_browser && session.id == id);
        door.host.end_own_session(&asking.caller, &id).await?;
        Ok((id, this_browser))
    }
    .await;
    match ended {
        Ok((_, true)) => see_other("/", [crate::caller::session_cookie_removed(&door)]),
        Ok((id, false)) => {
            let said = Outcome::Done(format!(
                "Signed out session {}: that browser is signed out at its next request.",
                escape(&id)
            ));
            account_page(&door, &asking.caller, &person, &headers, said).await
        }
        Err(error) => {
            let said = Outcome::Refused(error);
            account_page(&door, &asking.caller, &person, &headers, said).await
        }
    }
}

/// Signing out: every session of the person ends, and the browser goes to
/// the front page, signed out.
async fn sign_out(State(door): State<Arc<Door>>, Posted { person, .. }: Posted) -> Response {
    if let Err(error) = door.host.end_sessions(&person.handle).await {
        return crate::reply::Refusal::page(error).into_response();
    }
    see_other("/", [crate::caller::session_cookie_removed(&door)])
}

/// A space's page: its members, and for an owner the forms that change them.
async fn space(
    State(door): State<Arc<Door>>,
    Path(space): Path<String>,
    asking: WebCaller,
) -> Response {
    match signed_in(&asking) {
        Ok(person) => space_page(&door, &asking.caller, &person, &space, Outcome::Nothing).await,
        Err(refused) => refused.into_response(),
    }
}

pub(crate) async fn space_page(
    door: &Door,
    caller: &Caller,
    person: &Person,
    space: &str,
    said: Outcome,
) -> Response {
    let header = header_html(person, Here::Space);
    let seen = match door.host.space_members(caller, space).await {
        Ok(found) => found,
        Err(error) => {
            let status = status_of(&error);
            let body = Outcome::Refused(error).html();
            return product_page(status, space, &header, &body);
        }
    };
    let apps = match door.host.apps(caller).await {
        Ok(answer) => answer.data.apps,
        Err(error) => return crate::reply::Refusal::page(error).into_response(),
    };
    let owner = seen.may_manage;
    let action = format!("/spaces/{}", escape(space));
    let mut body = said.html();
    body.push_str(&format!(
        "<p class=\"meta\">Your role here: {}.</p>\n<section id=\"apps\"><h2>Apps</h2>\n{}</section>\n\
         <section id=\"members\"><h2>Members</h2>\n<ul class=\"rows\">\n",
        seen.role.as_str(),
        app_rows(&apps, space)
    ));
    for member in &seen.members {
        let handle = escape(&member.person.handle);
        let their_role = member.role;
        body.push_str(&format!(
            "<li data-member=\"{handle}\"><div class=\"what\"><strong>{}</strong> <span class=\"meta\">@{handle}</span> \
             <span class=\"tag\">{}</span></div>",
            escape(&member.person.name),
            their_role.as_str()
        ));
        if owner && !member.may_change {
            body.push_str(
                "<div class=\"meta\">the last owner — make another owner before this one \
                 leaves or changes role</div>",
            );
        } else if owner {
            body.push_str(&format!(
                "<div class=\"acts\"><form class=\"inline\" method=\"post\" action=\"{action}\">\
                 <input type=\"hidden\" name=\"handle\" value=\"{handle}\">\
                 <select name=\"role\" aria-label=\"Role of {handle}\">{}</select>\
                 <button type=\"submit\">Change role</button></form>\
                 <form method=\"post\" action=\"{action}/remove\"><input type=\"hidden\" name=\"handle\" value=\"{handle}\">\
                 <button class=\"danger\" type=\"submit\" aria-label=\"Remove {handle}\">Remove</button></form></div>",
                role_options(their_role.as_str())
            ));
        }
        body.push_str("</li>\n");
    }
    body.push_str("</ul>\n</section>\n");
    if owner {
        body.push_str(&format!(
            "<section id=\"invite\"><h2>Invite someone</h2>\n\
             <p>By handle. A handle new to this shed adds the person, and you get a one-time \
             sign-in link to send them.</p>\n\
             <form class=\"inline\" method=\"post\" action=\"{action}\">\
             <label>Handle <input name=\"handle\" required maxlength=\"{SLUG_CHARS}\" autocomplete=\"off\"></label>\
             <label>Role <select name=\"role\">{}</select></label>\
             <button class=\"primary\" type=\"submit\">Invite</button></form>\n</section>\n",
            role_options("editor")
        ));
    } else {
        body.push_str(&format!(
            "<p class=\"empty\">Only an owner of {} invites people and changes their roles.</p>\n",
            escape(space)
        ));
    }
    product_page(said.status(), space, &header, &body)
}

/// The roles as a select's options, the one named `chosen` selected.
fn role_options(chosen: &str) -> String {
    Role::ALL
        .iter()
        .map(|role| {
            let selected = if role.as_str() == chosen {
                " selected"
            } else {
                ""
            };
            format!("<option{selected}>{}</option>", role.as_str())
        })
        .collect()
}

/// A member and, to make or change them, a role.
#[derive(serde::Deserialize)]
struct MemberForm {
    handle: Option<String>,
    role: Option<String>,
}

/// Invite by handle, or change a member's role.
async fn change_member(
    State(door): State<Arc<Door>>,
    Path(space): Path<String>,
    Posted { asking, person }: Posted,
    form: Result<Form<MemberForm>, FormRejection>,
) -> Response {
    let changed = async {
        let form = fields(form)?;
        let handle = required(form.handle, "the person's handle")?;
        let role: Role = required(form.role, "the role")?
            .parse()
            .map_err(|e: shed_host::NotARole| HostError::BadInput(e.to_string()))?;
        let invited = door
            .host
            .invite_with_link(&asking.caller, &space, &handle, role)
            .await?;
        tracing::info!(by = %person.handle, space = %space, role = role.as_str(), "a member set on a space's page");
        let handle = escape(handle.trim().trim_start_matches('@'));
        Ok(match invited.link {
            Some(link) => format!(
                "@{handle} is new here, added as {role} — send them this sign-in link; it works \
                 once, for ten minutes:</p>\n<div class=\"copyable once\"><code id=\"invite-link\">{}</code>\
                 <button type=\"button\" data-copy=\"invite-link\">Copy</button></div><p class=\"meta\">\
                 Once signed in, they can add a passkey on their account page and sign in with it from then on.",
                escape(&link.url),
                role = role.as_str()
            ),
            None => format!(
                "@{handle} is now {} of {}.",
                role.as_str(),
                escape(&space)
            ),
        })
    }
    .await;
    space_page(&door, &asking.caller, &person, &space, Outcome::of(changed)).await
}

/// A member to take out.
#[derive(serde::Deserialize)]
struct MemberChoice {
    handle: Option<String>,
}

async fn remove_member(
    State(door): State<Arc<Door>>,
    Path(space): Path<String>,
    Posted { asking, person }: Posted,
    form: Result<Form<MemberChoice>, FormRejection>,
) -> Response {
    let removed = async {
        let handle = required(fields(form)?.handle, "the member to remove")?;
        let role = door
            .host
            .remove_member(Some(&asking.caller), &space, &handle)
            .await?;
        Ok(format!(
            "@{} ({}) is no longer a member of {}.",
            escape(&handle),
            role.as_str(),
            escape(&space)
        ))
    }
    .await;
    space_page(&door, &asking.caller, &person, &space, Outcome::of(removed)).await
}

/// The agents page: the person's jobs, each running one with End.
async fn agents(State(door): State<Arc<Door>>, asking: WebCaller) -> Response {
    match signed_in(&asking) {
        Ok(person) => agents_page(&door, &asking.caller, &person, Outcome::Nothing).await,
        Err(refused) => refused.into_response(),
    }
}

async fn agents_page(door: &Door, caller: &Caller, person: &Person, said: Outcome) -> Response {
    let jobs = match door.host.own_jobs(caller).await {
        Ok(jobs) => jobs,
        Err(error) => return crate::reply::Refusal::page(error).into_response(),
    };
    let mut body = said.html();
    body.push_str("<section id=\"jobs\"><h2>Jobs</h2>\n");
    if jobs.is_empty() {
        body.push_str(&format!(
            "<p class=\"empty\">No jobs. A job lets an agent run commands for you, within a scope \
             and until a time; whoever runs this shed starts one with \
             <code>shed job create --person {} --allow '&lt;space&gt;/&lt;app&gt;.*'</code>.</p>\n",
            escape(&person.handle)
        ));
    } else {
        body.push_str("<ul class=\"rows\">\n");
        let now = shed_host::agents::now_millis();
        for job in jobs.iter().rev() {
            body.push_str(&job_row(job, now));
        }
        body.push_str("</ul>\n");
    }
    body.push_str("</section>\n");
    product_page(
        said.status(),
        "Agents",
        &header_html(person, Here::Agents),
        &body,
    )
}

fn job_row(job: &Job, now: i64) -> String {
    let state = job.state(now).as_str();
    let globs = |globs: &[String]| {
        if globs.is_empty() {
            "none".to_string()
        } else {
            globs
                .iter()
                .map(|glob| format!("<code>{}</code>", escape(glob)))
                .collect::<Vec<_>>()
                .join(" ")
        }
    };
    let scope = if job.allow.is_empty() && job.read_only.is_empty() {
        "every command you reach".to_string()
    } else {
        globs(&job.allow)
    };
    let name = escape(&job.name);
    let end = if state == "running" {
        format!(
            "<form method=\"post\" action=\"{END_JOB_PATH}\"><input type=\"hidden\" name=\"job\" value=\"{name}\">\
             <button class=\"danger\" type=\"submit\" aria-label=\"End {name}\">End</button></form>"
        )
    } else {
        String::new()
    };
    format!(
        "<li data-job=\"{name}\"><div class=\"what\"><strong>{name}</strong> <span class=\"tag {state}\">{state}</span>\
         <div class=\"meta\">Scope: {scope} · read-only grants: {read_only}</div>\
         <div class=\"meta\">started {started} · until {until}{ended}</div></div>{end}</li>\n",
        read_only = globs(&job.read_only),
        started = when_millis(Some(job.created_at), "never"),
        until = when_millis(job.expires_at, "no end"),
        ended = job
            .ended_at
            .map(|at| format!(" · ended {}", when_millis(Some(at), "")))
            .unwrap_or_default(),
    )
}

/// A job to end.
#[derive(serde::Deserialize)]
struct JobChoice {
    job: Option<String>,
}

async fn end_job(
    State(door): State<Arc<Door>>,
    Posted { asking, person }: Posted,
    form: Result<Form<JobChoice>, FormRejection>,
) -> Response {
    let ended = async {
        let name = required(fields(form)?.job, "the job to end")?;
        let job = door.host.end_own_job(&asking.caller, &name).await?;
        Ok(format!(
            "Ended {}: its agent runs nothing more.",
            escape(&job.name)
        ))
    }
    .await;
    agents_page(&door, &asking.caller, &person, Outcome::of(ended)).await
}
