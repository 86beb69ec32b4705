//! The platform's own pages on its bare host: the front page (who you are
//! and your spaces' apps, or how to sign in), the page that says how to sign
//! in, and the sign-in link's landing. Opening a link (GET) only asks "Sign
//! in to shed as …?" with one button, so a link preview or a scanner that
//! fetches it spends nothing; the button posts the key from this host's own
//! page (`Origin` checked, so another site cannot sign a browser in as
//! someone else). The post uses the link: a session on this host, then a
//! walk through each of the person's space hosts
//! (`/_shed/hop?hops=<space>:<code>,…`), each trading its one-time code for a
//! cookie of its own, ending on the front page.

use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::FormRejection;
use axum::extract::{Form, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use shed_host::HostError;
use shed_host::sessions::LOGIN_PATH;

use crate::caller::{caller, foreign_origin, session_cookie};
use crate::door::Door;
use crate::files::answer;
use crate::reply::{escape, form_page, page, page_refusal, sign_in_page};
use crate::{APP_JS_PATH, HOP_PATH, SIGN_IN_PATH};

pub(crate) fn router(door: Arc<Door>) -> Router {
    Router::new()
        .route("/", get(front))
        .route(SIGN_IN_PATH, get(sign_in))
        .route(LOGIN_PATH, get(confirm_login).post(login))
        .route(APP_JS_PATH, get(app_js))
        .with_state(door)
}

async fn app_js(State(door): State<Arc<Door>>, headers: HeaderMap) -> Response {
    answer(&door.app_js, &headers, false)
}

async fn sign_in() -> Response {
    sign_in_page(StatusCode::OK, "You are not signed in on this browser.")
}

/// Who you are and the apps of your spaces; or how to sign in.
async fn front(State(door): State<Arc<Door>>, headers: HeaderMap) -> Response {
    let caller = match caller(&door, &headers, None).await {
        Ok((caller, _)) => caller,
        Err(error) => return page_refusal(&error),
    };
    let Some(person) = caller.person().cloned() else {
        return sign_in_page(
            StatusCode::OK,
            "This is shed: spaces of small apps, and the commands they give your agent.",
        );
    };
    let spaces = match door.host.spaces(&caller).await {
        Ok(answer) => answer.data,
        Err(error) => return page_refusal(&error),
    };
    let mut body = format!(
        "<p>You are signed in as {} (@{}).</p>",
        escape(&person.name),
        escape(&person.handle)
    );
    let listed = spaces
        .get("spaces")
        .and_then(|s| s.as_array())
        .cloned()
        .unwrap_or_default();
    if listed.is_empty() {
        body.push_str("<p>You belong to no space yet — an owner of a space can add you.</p>");
    }
    for space in listed {
        let text = |value: &serde_json::Value, key: &str| {
            value
                .get(key)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_string()
        };
        body.push_str(&format!(
            "<h2>{} <small>({})</small></h2>\n<ul>",
            escape(&text(&space, "space")),
            escape(&text(&space, "role"))
        ));
        for app in space
            .get("apps")
            .and_then(|a| a.as_array())
            .cloned()
            .unwrap_or_default()
        {
            body.push_str(&format!(
                "<li><a href=\"{}\">{}</a> — {}</li>",
                escape(&text(&app, "address")),
                escape(&text(&app, "title")),
                escape(&text(&app, "access"))
            ));
        }
        body.push_str("</ul>\n");
    }
    page(StatusCode::OK, "shed", &body)
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
        Err(error) => return link_refused(&error),
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
            return link_refused(&HostError::SignIn(format!(
                "the sign-in form did not arrive as a form ({rejection}) — open the link again and press its button"
            )));
        }
    };
    let signed = match door.host.sign_in_with_link(&key).await {
        Ok(signed) => signed,
        Err(error) => return link_refused(&error),
    };
    tracing::info!(person = %signed.person.handle, spaces = signed.hops.len(), "signed in with a link");
    let chain: Vec<String> = signed
        .hops
        .iter()
        .map(|(space, code)| format!("{space}:{code}"))
        .collect();
    let next = next_stop(&door, &chain);
    redirect_with_session(&door, &next, &signed.session)
}

/// `/_shed/hop` on a space's host: the first hop of the chain is this
/// space's; trade it for a session here and go on.
pub(crate) async fn hop(door: &Door, space: &str, query: Option<&str>) -> Response {
    let hops = query
        .and_then(|q| q.split('&').find_map(|pair| pair.strip_prefix("hops=")))
        .unwrap_or_default();
    let chain: Vec<String> = hops
        .split(',')
        .filter(|h| !h.is_empty())
        .map(str::to_string)
        .collect();
    let Some((first_space, code)) = chain.first().and_then(|first| first.split_once(':')) else {
        return link_refused(&HostError::SignIn(
            "this sign-in step carries no code".to_string(),
        ));
    };
    if first_space != space {
        return link_refused(&HostError::SignIn(format!(
            "this sign-in step is for {}, not {space}",
            first_space.chars().take(40).collect::<String>()
        )));
    }
    match door.host.sign_in_with_hop(space, code).await {
        Ok((_, session)) => {
            let next = next_stop(door, chain.get(1..).unwrap_or_default());
            redirect_with_session(door, &next, &session)
        }
        Err(error) => link_refused(&error),
    }
}

/// Where the chain goes next: the next space's hop, or the front page.
fn next_stop(door: &Door, chain: &[String]) -> String {
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
    format!("{origin}{HOP_PATH}?hops={}", chain.join(","))
}

fn redirect_with_session(door: &Door, to: &str, session: &str) -> Response {
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    if let Ok(location) = HeaderValue::from_str(to) {
        headers.insert(header::LOCATION, location);
    }
    if let Some(cookie) = session_cookie(door, session) {
        headers.insert(header::SET_COOKIE, cookie);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    without_referrer(response)
}

fn link_refused(error: &HostError) -> Response {
    without_referrer(match error {
        HostError::SignIn(sentence) => page(
            StatusCode::BAD_REQUEST,
            "Sign in",
            &format!("<p>{}</p>", escape(sentence)),
        ),
        other => page_refusal(other),
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
