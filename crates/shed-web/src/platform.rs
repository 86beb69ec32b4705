//! The platform's own pages on its bare host: the front page (who you are
//! and your spaces' apps, or how to sign in), the page that says how to sign
//! in, and the sign-in link's landing. Opening a link (GET) only asks "Sign
//! in to shed as …?" with one button, so a link preview or a scanner that
//! fetches it spends nothing; the button posts the key from this host's own
//! page (`Origin` checked, so another site cannot sign a browser in as
//! someone else). The post uses the link: a session on this host, a
//! hand-off cookie here, then a walk through each of the person's space
//! hosts, ending on the front page. The codes of the walk are known to
//! whoever pressed the button, who could send them on as a link (login
//! CSRF), so each space takes three steps, all plain redirects:
//! `<space>/_shed/hop?hops=<space>:<code>,…` binds the code to a cookie of
//! the space's host and sends the browser back here with a fresh code;
//! `/_shed/hop` here vouches for it only with the hand-off cookie it was made
//! for; `<space>/_shed/hop/end` signs in only the browser holding its cookie.

use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::FormRejection;
use axum::extract::{Form, Query, RawQuery, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use shed_host::HostError;
use shed_host::sessions::{LOGIN_PATH, SignedIn};

use crate::caller::{
    WebCaller, cookie, foreign_origin, return_cookie, session_cookie, sign_in_cookie,
};
use crate::door::Door;
use crate::files::answer;
use crate::oauth::pending_ask;
use crate::reply::{
    Refusal, escape, form_page, page, passkey_sign_in_page, plain_product_page, see_other,
    sentence_html,
};
use crate::{APP_JS_PATH, FAVICON_PATH, HOP_END_PATH, HOP_PATH, SIGN_IN_PATH};

pub(crate) fn router(door: Arc<Door>) -> Router {
    Router::new()
        // The front page, signed in, draws the header with its approvals badge.
        .route(
            "/",
            get(front).layer(axum::middleware::from_fn_with_state(
                door.clone(),
                crate::pages::approvals::count_waiting,
            )),
        )
        .route(SIGN_IN_PATH, get(sign_in))
        .route(LOGIN_PATH, get(confirm_login).post(login))
        .route(HOP_PATH, get(vouch_for_hop))
        .route(APP_JS_PATH, get(app_js))
        .route(FAVICON_PATH, get(favicon))
        .with_state(door)
}

/// shed's icon, on the platform's host as on every space's.
pub(crate) async fn favicon(State(door): State<Arc<Door>>, headers: HeaderMap) -> Response {
    answer(&door.favicon, &headers, false)
}

/// The page a browser gets at the MCP address, when it asks for a page
/// (`Accept: text/html`, not `text/event-stream`) and names no MCP session:
/// what the address is for and how to connect a client. Every other request
/// there — an MCP client's POSTs, and its GETs of a session's stream — is
/// the MCP door's, unchanged.
pub(crate) fn browser_at_mcp(door: &Door, request: &Request) -> Option<Response> {
    // Most requests here are MCP clients' POSTs: they leave at the method.
    if !matches!(*request.method(), Method::GET | Method::HEAD) {
        return None;
    }
    let path = door.mcp_path.as_deref()?;
    let headers = request.headers();
    let accepts = |kind: &str| {
        headers
            .get_all(header::ACCEPT)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .any(|value| value.contains(kind))
    };
    let wants_a_page = request.uri().path() == path
        && !headers.contains_key(MCP_SESSION_HEADER)
        && accepts("text/html")
        && !accepts("text/event-stream");
    wants_a_page.then(|| {
        let mcp = door.host.mcp_resource();
        page(
            StatusCode::OK,
            "shed's MCP address",
            &format!(
                "<p>This address, <code id=\"mcp-url\">{mcp}</code>, is where an MCP client — \
                 your agent — reaches the commands of this shed's apps. There is nothing here \
                 for a browser to show.</p>\n\
                 <p><strong>A hosted client</strong> (one that adds a remote MCP server by its \
                 URL): give it this address. It signs in by itself — you confirm it on this \
                 shed once.</p>\n\
                 <p><strong>A client that takes a token</strong>: make one on your home page, \
                 under <a href=\"/#connect\">Connect your agent</a>, with the configuration \
                 to paste into it.</p>",
                mcp = escape(&mcp)
            ),
        )
    })
}

/// The header an MCP client names its session with: a request carrying it
/// is the MCP door's.
const MCP_SESSION_HEADER: &str = "mcp-session-id";

async fn app_js(State(door): State<Arc<Door>>, headers: HeaderMap) -> Response {
    answer(&door.app_js, &headers, false)
}

async fn sign_in(State(door): State<Arc<Door>>) -> Response {
    passkey_sign_in_page(
        door.host.passkeys_off().is_none(),
        StatusCode::OK,
        "You are not signed in on this browser.",
        &door.operator.links(),
    )
}

/// The person's home page (`pages/home.rs`); or how to sign in. A browser
/// that set out to allow an app before it signed in goes back to that
/// app's consent page.
async fn front(State(door): State<Arc<Door>>, headers: HeaderMap, asking: WebCaller) -> Response {
    let caller = asking.caller;
    if caller.person().is_some()
        && let Some(back) = pending_ask(&door, &headers)
    {
        return see_other(&back, [return_cookie(&door, None)]);
    }
    let Some(person) = caller.person().cloned() else {
        return passkey_sign_in_page(
            door.host.passkeys_off().is_none(),
            StatusCode::OK,
            "This is shed: spaces of small apps, and the commands they give your agent.",
            &door.operator.links(),
        );
    };
    let (said, token) = crate::pages::notice::shown(&door, &headers);
    crate::pages::home::home(&door, &caller, &person, said, token.as_deref()).await
}

/// The sign-in link's key, in its query (GET) or its form (POST).
#[derive(serde::Deserialize)]
struct LoginKey {
    key: Option<String>,
}

/// Opening the sign-in link: who it signs in and a button that does, the
/// link left unused; or, for a link that no longer works, why.
async fn confirm_login(State(door): State<Arc<Door>>, Query(query): Query<LoginKey>) -> Response {
    let key = query.key.unwrap_or_default();
    let person = match door.host.login_link_person(&key).await {
        Ok(person) => person,
        Err(error) => return link_refused(error),
    };
    let body = format!(
        "<p>Sign in to shed as {} (@{}) on this browser?</p>\n\
         <form method=\"post\" action=\"{LOGIN_PATH}\">\
         <input type=\"hidden\" name=\"key\" value=\"{}\">\
         <button type=\"submit\">Sign in</button></form>\n\
         <p>The link works once: after this it is used up.</p>",
        escape(&person.name),
        escape(&person.handle),
        escape(&key)
    );
    let mut response = form_page(
        StatusCode::OK,
        "Sign in",
        &body,
        &format!("'self' {}", door.host.space_origin("*")),
    );
    // Not `no-referrer`: under it a browser sends `Origin: null` with the
    // form, and the post could not be told from another site's. Other
    // origins still never see this address, key and all.
    response.headers_mut().insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    response
}

/// The sign-in link's button: from this host's own page only, it uses the
/// link — a session here, then the hops through every space.
async fn login(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    form: Result<Form<LoginKey>, FormRejection>,
) -> Response {
    let own = door.host.public_url();
    if let Some(from) = foreign_origin(&headers, own) {
        return without_referrer(page(
            StatusCode::FORBIDDEN,
            "Sign in",
            &format!(
                "<p>{}</p>",
                escape(&format!(
                    "a sign-in link is used from its own page at {own}, and this request came from {from} — \
                     open the link in the browser to sign in on, and press its button"
                ))
            ),
        ));
    }
    let key = match form {
        Ok(Form(form)) => form.key.unwrap_or_default(),
        Err(rejection) => {
            return link_refused(HostError::SignIn(format!(
                "the sign-in form did not arrive as a form ({rejection}) — open the link again and press its button"
            )));
        }
    };
    let signed = match door
        .host
        .sign_in_with_link(&key, user_agent(&headers))
        .await
    {
        Ok(signed) => signed,
        Err(error) => return link_refused(error),
    };
    tracing::info!(person = %signed.person.handle, spaces = signed.hops.len(), "signed in with a link");
    let (next, cookies) = walk_of(&door, &signed);
    see_other(&next, cookies)
}

/// Where a browser just signed in goes — the first space host's hop, or
/// the front page — and the cookies it takes along: the session here, and
/// the hand-off the hops confirm with. A sign-in link's button and a
/// passkey sign-in both send the browser this way.
pub(crate) fn walk_of(door: &Door, signed: &SignedIn) -> (String, [Option<HeaderValue>; 2]) {
    let chain: Vec<String> = signed
        .hops
        .iter()
        .map(|(space, code)| format!("{space}:{code}"))
        .collect();
    let handoff = (!chain.is_empty())
        .then(|| sign_in_cookie(door, &signed.handoff))
        .flatten();
    (
        space_stop(door, &chain, HOP_PATH),
        [session_cookie(door, &signed.session), handoff],
    )
}

/// `/_shed/hop` on a space's host: the first hop of the chain is this
/// space's. Its code is bound to a cookie of this host, and the browser
/// goes back to the platform's host with a fresh code, to be vouched for.
pub(crate) async fn see_hop(door: &Door, space: &str, query: Option<&str>) -> Response {
    let mut chain = chain_of(query);
    let code = match first_hop(&chain, Some(space)) {
        Ok((_, code)) => code,
        Err(error) => return link_refused(error),
    };
    match door.host.see_hop(space, code).await {
        Ok(seen) => {
            chain[0] = format!("{space}:{}", seen.back);
            let back = format!(
                "{}{HOP_PATH}?hops={}",
                door.host.public_url(),
                chain.join(",")
            );
            see_other(&back, [sign_in_cookie(door, &seen.browser)])
        }
        Err(error) => link_refused(error),
    }
}

/// `/_shed/hop` on the platform's host: a hop back from its space's host is
/// vouched for only in the browser holding the hand-off cookie it was made
/// for — the one that pressed the button — then the browser goes on to the
/// space host's last step.
async fn vouch_for_hop(
    State(door): State<Arc<Door>>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let chain = chain_of(query.as_deref());
    let (space, back) = match first_hop(&chain, None) {
        Ok(first) => first,
        Err(error) => return link_refused(error),
    };
    let handoff = cookie(&headers, door.sign_in_cookie);
    match door.host.confirm_hop(space, back, handoff).await {
        Ok(()) => see_other(&space_stop(&door, &chain, HOP_END_PATH), []),
        Err(error) => link_refused(error),
    }
}

/// `/_shed/hop/end` on a space's host: a vouched-for hop of this space,
/// brought by the browser holding this host's cookie for it, is traded for
/// a session here; then on to the next space, or the front page.
pub(crate) async fn end_hop(
    door: &Door,
    space: &str,
    query: Option<&str>,
    headers: &HeaderMap,
) -> Response {
    let chain = chain_of(query);
    let back = match first_hop(&chain, Some(space)) {
        Ok((_, back)) => back,
        Err(error) => return link_refused(error),
    };
    let browser = cookie(headers, door.sign_in_cookie);
    match door
        .host
        .sign_in_with_hop(space, back, browser, user_agent(headers))
        .await
    {
        Ok((_, session)) => {
            let next = space_stop(door, chain.get(1..).unwrap_or_default(), HOP_PATH);
            see_other(&next, [session_cookie(door, &session)])
        }
        Err(error) => link_refused(error),
    }
}

/// The browser's `User-Agent`, kept with the session it signs in.
pub(crate) fn user_agent(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::USER_AGENT)
        .and_then(|value| value.to_str().ok())
}

/// The hops of a sign-in step's query, `hops=<space>:<code>,…`.
fn chain_of(query: Option<&str>) -> Vec<String> {
    query
        .and_then(|q| q.split('&').find_map(|pair| pair.strip_prefix("hops=")))
        .unwrap_or_default()
        .split(',')
        .filter(|h| !h.is_empty())
        .map(str::to_string)
        .collect()
}

/// The space and code of a chain's first hop — on a space's host, refused
/// unless it is that space's.
fn first_hop<'c>(chain: &'c [String], here: Option<&str>) -> Result<(&'c str, &'c str), HostError> {
    let Some((space, code)) = chain.first().and_then(|first| first.split_once(':')) else {
        return Err(HostError::SignIn(
            "this sign-in step carries no code — open your sign-in link again".to_string(),
        ));
    };
    match here {
        Some(here) if here != space => Err(HostError::SignIn(format!(
            "this sign-in step is for {}, not {here}",
            space.chars().take(40).collect::<String>()
        ))),
        _ => Ok((space, code)),
    }
}

/// Where the chain goes next: `path` on the first space's host, or the
/// front page when there is none.
fn space_stop(door: &Door, chain: &[String], path: &str) -> String {
    let front = format!("{}/", door.host.public_url());
    let Some((space, _)) = chain.first().and_then(|first| first.split_once(':')) else {
        return front;
    };
    // Only a space this platform's host names may be the next stop: a chain
    // cannot send the browser anywhere else.
    let origin = door.host.space_origin(space);
    let host = origin.split_once("://").map_or("", |(_, host)| host);
    if door.host.space_of_host(host).as_deref() != Some(space) {
        return front;
    }
    format!("{origin}{path}?hops={}", chain.join(","))
}

fn link_refused(error: HostError) -> Response {
    without_referrer(match error {
        HostError::SignIn(sentence) => plain_product_page(
            StatusCode::BAD_REQUEST,
            "Sign in",
            &format!(
                "{}\n<p><a href=\"/\">shed's front page</a></p>",
                sentence_html(&sentence)
            ),
        ),
        other => Refusal::page(other).into_response(),
    })
}

/// An answer at an address that may carry a key or a code: no page it leads
/// to learns that address.
fn without_referrer(mut response: Response) -> Response {
    response.headers_mut().insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// Any other address on the platform's host: shed's own not-found page,
/// naming the address and linking home.
pub(crate) async fn not_found(uri: axum::http::Uri) -> Response {
    let path: String = uri.path().chars().take(200).collect();
    plain_product_page(
        StatusCode::NOT_FOUND,
        "Not found",
        &format!(
            "<p>shed has no page at <code>{}</code>.</p>\n\
             <p><a href=\"/\">Home</a> lists your spaces and their apps.</p>",
            escape(&path)
        ),
    )
}
