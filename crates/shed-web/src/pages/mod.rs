//! The signed-in person's pages on the platform's host: home (their spaces'
//! apps, each with its last deploy and by whom, and connecting an agent),
//! account (passkeys — added by `static/passkeys.js` —, tokens and
//! connected clients; sign-in sessions, each with its
//! browser, when signed in and last seen, and a sign-out of its own), a
//! space (its members and their roles, and its apps — those in the trash
//! too, with Restore), agents (their jobs, each linked to what it did),
//! activity (every write the person may see, of everything, a space or an
//! app, and the calls refused), an app's data (its kinds and rows) and an
//! entity (now, edges, history, Undo). An app's own page (versions,
//! roll back, trash, restore, purge) is `app_page.rs`, at
//! `/spaces/<space>/apps/<app>`; home's and a space's app entries link
//! there. Server-rendered; the one script is the copy buttons'
//! (`static/pages.js`). Every action is a POST form, taken only from a page
//! of this host ([`WebCaller::writes_from_elsewhere`]); every decision and
//! every sentence is shed-host's (`own.rs`, `take_back.rs`, `apps.rs`,
//! `sessions.rs`), the same the CLI and MCP give. A post that did
//! something goes on (`303`) to its page, the outcome on top once — a token
//! or a sign-in link shown there once (`notice`); a refused one answers its
//! page at once; a visit to a form's own address says what it is for
//! ([`form_only`]).
//!
//! One module per page: `home` (with making a token), `account` (passkeys,
//! tokens, sessions, signing out), `space` (its members), `agents` (their
//! jobs), `activity`, `data` and `entity` (with Undo); `apps` draws the app rows home and a space's page share, and
//! `moments` says when; `notice` carries a form's outcome to its page. This module holds what every page shares: the
//! routes, the header, the outcome on top, and the extractors: [`Visited`]
//! for a visit, [`Posted`] for a form.

mod account;
mod activity;
mod agents;
pub(crate) mod approvals;
pub(crate) mod apps;
mod data;
mod entity;
pub(crate) mod home;
pub(crate) mod moments;
pub(crate) mod notice;
pub(crate) mod space;

use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::FormRejection;
use axum::extract::{Form, FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use shed_host::{HostError, Person};

use crate::PAGES_JS_PATH;
use crate::caller::WebCaller;
use crate::door::Door;
use crate::files::answer;
use crate::reply::{escape, product_page, sign_in_page, status_of};
use account::{account, end_session, remove_passkey, revoke, sign_out};
use agents::{agents, end_job};
use home::make_token;
use space::{change_member, remove_member, space};

/// Where the account page is, and where its forms post.
pub const ACCOUNT_PATH: &str = "/account";
/// Where the agents page is.
pub const AGENTS_PATH: &str = "/agents";
/// Where the activity of everything the person reaches is.
pub const ACTIVITY_PATH: &str = "/activity";
const MAKE_TOKEN_PATH: &str = "/account/tokens";
const REVOKE_PATH: &str = "/account/tokens/revoke";
const SIGN_OUT_PATH: &str = "/account/sign-out";
const END_SESSION_PATH: &str = "/account/sessions/end";
const REMOVE_PASSKEY_PATH: &str = "/account/passkeys/remove";
const END_JOB_PATH: &str = "/agents/end";

pub(crate) fn router(door: Arc<Door>) -> Router {
    Router::new()
        .route(ACCOUNT_PATH, get(account))
        .route(
            MAKE_TOKEN_PATH,
            post(make_token).get(form_only("makes a token", Back::To("/", "Home"))),
        )
        .route(
            REVOKE_PATH,
            post(revoke).get(form_only(
                "revokes a token",
                Back::To(ACCOUNT_PATH, "Your account"),
            )),
        )
        .route(
            SIGN_OUT_PATH,
            post(sign_out).get(form_only("signs you out everywhere", Back::To("/", "Home"))),
        )
        .route(
            END_SESSION_PATH,
            post(end_session).get(form_only(
                "signs one sign-in session out",
                Back::To(ACCOUNT_PATH, "Your account"),
            )),
        )
        .route(
            REMOVE_PASSKEY_PATH,
            post(remove_passkey).get(form_only(
                "removes a passkey",
                Back::To(ACCOUNT_PATH, "Your account"),
            )),
        )
        .route("/spaces/{space}", get(space).post(change_member))
        .route(
            "/spaces/{space}/remove",
            post(remove_member).get(form_only(
                "takes a member out of a space",
                Back::Up("The space's page"),
            )),
        )
        .route(AGENTS_PATH, get(agents))
        .route(
            ACTIVITY_PATH,
            get(activity::everything).post(activity::undo_everything),
        )
        .route(
            "/spaces/{space}/activity",
            get(activity::of_space).post(activity::undo_of_space),
        )
        .route(
            "/spaces/{space}/apps/{app}/activity",
            get(activity::of_app).post(activity::undo_of_app),
        )
        .route("/spaces/{space}/apps/{app}/data", get(data::data))
        .route("/spaces/{space}/apps/{app}/data/{eid}", get(entity::entity))
        .route(
            "/spaces/{space}/apps/{app}/data/{eid}/undo",
            post(entity::undo).get(form_only(
                "undoes a write to an entity",
                Back::Up("The entity's page"),
            )),
        )
        .route(
            END_JOB_PATH,
            post(end_job).get(form_only(
                "ends a job",
                Back::To(AGENTS_PATH, "Your agents"),
            )),
        )
        .route(approvals::APPROVALS_PATH, get(approvals::approvals))
        .route(
            "/approvals/{id}",
            get(approvals::approval).post(approvals::decide),
        )
        .route(PAGES_JS_PATH, get(pages_js))
        .route_layer(axum::middleware::from_fn_with_state(
            door.clone(),
            approvals::count_waiting,
        ))
        .with_state(door)
}

async fn pages_js(State(door): State<Arc<Door>>, headers: HeaderMap) -> Response {
    answer(&door.pages_js, &headers, false)
}

/// Where the page a form-only address belongs to is.
#[derive(Clone, Copy)]
pub(crate) enum Back {
    /// At this address, in these words.
    To(&'static str, &'static str),
    /// The address asked, less its last segment, in these words.
    Up(&'static str),
}

/// A visit to an address that only takes a form (a reload after a post
/// leaves none in the bar, but a typed or shared one can): `405` with
/// `Allow: POST`, and a page saying what the address does and linking to
/// the page whose form it is — nothing done.
pub(crate) fn form_only(what: &'static str, back: Back) -> MethodRouter<Arc<Door>> {
    get(move |uri: Uri| async move {
        let (to, words) = match back {
            Back::To(to, words) => (to.to_string(), words),
            Back::Up(words) => (
                uri.path()
                    .rsplit_once('/')
                    .map_or("/", |(up, _)| up)
                    .to_string(),
                words,
            ),
        };
        let mut page = crate::reply::plain_product_page(
            StatusCode::METHOD_NOT_ALLOWED,
            "A form's address",
            &format!(
                "<p>This address {what} when its button is pressed; a visit does nothing.</p>\n\
                 <p><a href=\"{}\">{words}</a></p>",
                escape(&to)
            ),
        );
        page.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        page
    })
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
                refusal_html(error)
            ),
        }
    }
}

/// A refusal's sentence as HTML: escaped, and the moment an undo's
/// changed-since names shown as the pages show one (how long ago, the exact
/// time on hover).
fn refusal_html(error: &HostError) -> String {
    if let HostError::ChangedSince(changed) = error
        // The moment is said last, after the entity's title, which may hold
        // the same words.
        && let Some((before, after)) = changed.sentence.rsplit_once(&changed.when)
    {
        return format!(
            "{}{}{}",
            escape(before),
            moments::moment_text(&changed.at),
            escape(after)
        );
    }
    escape(&error.to_string())
}

/// A page the host refused to show: what a form did first (`said`) on
/// top, the refusal's sentence, and — where there is one — a link `back`
/// (its address and words); its status is the refusal's.
pub(crate) fn refusal_page(
    title: &str,
    header: &str,
    said: Outcome,
    error: HostError,
    back: Option<(&str, &str)>,
) -> Response {
    let status = status_of(&error);
    let mut body = said.html();
    body.push_str(&Outcome::Refused(error).html());
    if let Some((address, words)) = back {
        body.push_str(&format!(
            "<p><a href=\"{}\">{}</a></p>\n",
            escape(address),
            escape(words)
        ));
    }
    product_page(status, title, header, &body)
}

/// Which page a header marks as the one shown.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Here {
    Home,
    Account,
    Agents,
    Activity,
    Approvals,
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
        "<header><a class=\"brand\" href=\"/\">shed</a>\n<nav>{}{}{}{}{}</nav>\n\
         <span class=\"who\">{} (@{})</span>\n\
         <form method=\"post\" action=\"{SIGN_OUT_PATH}\"><button type=\"submit\">Sign out</button></form></header>",
        link("/", "Home", Here::Home),
        link(ACCOUNT_PATH, "Account", Here::Account),
        link(AGENTS_PATH, "Agents", Here::Agents),
        link(ACTIVITY_PATH, "Activity", Here::Activity),
        link(
            approvals::APPROVALS_PATH,
            &approvals::badge(),
            Here::Approvals
        ),
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
fn signed_in(asking: &WebCaller) -> Result<Person, NotTaken> {
    asking.caller.person().cloned().ok_or(NotTaken::SignedOut)
}

/// A visit to one of the person's pages: who is asking, the person signed
/// in, and what a form they posted just did (`notice.rs`). An extractor,
/// so no page forgets the rule: someone signed in sees it, anyone else the
/// sign-in page — before the handler runs.
pub(crate) struct Visited {
    pub(crate) asking: WebCaller,
    pub(crate) person: Person,
    /// What the form that led here did, shown on top once; `Nothing` on a
    /// plain visit.
    pub(crate) said: Outcome,
}

impl FromRequestParts<Arc<Door>> for Visited {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, door: &Arc<Door>) -> Result<Self, Response> {
        let asking = WebCaller::from_request_parts(parts, door)
            .await
            .map_err(IntoResponse::into_response)?;
        let person = signed_in(&asking).map_err(IntoResponse::into_response)?;
        let (said, _) = notice::shown(door, &parts.headers);
        Ok(Visited {
            asking,
            person,
            said,
        })
    }
}

/// A form posted to the person's pages: who is asking, the person signed
/// in, and whom its notice is for. An extractor, so no handler forgets the
/// rule: a post must come from a page of this host, and from someone signed
/// in — refused otherwise, before the handler runs.
pub(crate) struct Posted {
    pub(crate) asking: WebCaller,
    pub(crate) person: Person,
    /// Whom what the form did is carried to ([`notice::NoticeFor::land`]).
    pub(crate) notice: notice::NoticeFor,
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
        let notice = notice::NoticeFor::of(door, &parts.headers);
        Ok(Posted {
            asking,
            person,
            notice,
        })
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
