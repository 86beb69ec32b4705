//! A space's host, `http://<space>.<public host>/`: the page script, the
//! sign-in hop, and every app of the space at `/<app>/` — its files and its
//! page api at `/<app>/api/` — and, for a private app's view, its files at
//! `/_shed/view/<key>/<app>/` (read as the person the key was made for).

use std::sync::Arc;

use axum::Router;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::caller::WebCaller;
use crate::door::Door;
use crate::files::{self, answer};
use crate::path::{AppPath, split_app_path};
use crate::reply::{Refusal, escape, page};
use crate::{APP_JS_PATH, FAVICON_PATH, HOP_END_PATH, HOP_PATH, SIGN_IN_PATH, api, platform};
use shed_host::HostError;
use shed_host::view_keys::VIEW_KEY_PATH;

pub(crate) fn router(door: Arc<Door>) -> Router {
    Router::new().fallback(handle).with_state(door)
}

async fn handle(State(door): State<Arc<Door>>, request: Request) -> Response {
    let Some(space) = door.space_of(request.headers(), request.uri()) else {
        return StatusCode::MISDIRECTED_REQUEST.into_response();
    };
    let (mut parts, body) = request.into_parts();
    let uri = parts.uri.clone();
    let (raw_path, query) = (uri.path(), uri.query());
    if raw_path == HOP_PATH {
        return platform::see_hop(&door, &space, query).await;
    }
    if raw_path == HOP_END_PATH {
        return platform::end_hop(&door, &space, query, &parts.headers).await;
    }
    let reading = matches!(parts.method, Method::GET | Method::HEAD);
    if raw_path == APP_JS_PATH && reading {
        return answer(&door.app_js, &parts.headers, false);
    }
    if raw_path == FAVICON_PATH && reading {
        return answer(&door.favicon, &parts.headers, false);
    }
    if let Some(keyed) = raw_path.strip_prefix(VIEW_KEY_PATH) {
        return view_file(&door, &parts, &space, keyed, reading).await;
    }
    match split_app_path(raw_path) {
        AppPath::File { app, path } if path.starts_with("api/") || path == "api" => {
            let what = path.strip_prefix("api/").unwrap_or_default();
            api::answer(&door, &mut parts, body, &space, &app, what).await
        }
        _ if !reading => {
            let mut response = page(
                StatusCode::METHOD_NOT_ALLOWED,
                "Not here",
                "<p>An app's files are read with GET.</p>",
            );
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            response
        }
        AppPath::File { app, path } => {
            let caller = match WebCaller::from_request_parts(&mut parts, &door).await {
                Ok(asking) => asking.caller,
                Err(refusal) => return refusal.into_response(),
            };
            files::serve(
                &door,
                &parts.headers,
                &caller,
                (&space, &app),
                &path,
                raw_path,
            )
            .await
        }
        AppPath::AppWithoutSlash(_) => {
            let target = match query {
                Some(query) => format!("{raw_path}/?{query}"),
                None => format!("{raw_path}/"),
            };
            match HeaderValue::from_str(&target) {
                Ok(location) => (
                    StatusCode::PERMANENT_REDIRECT,
                    [(header::LOCATION, location)],
                )
                    .into_response(),
                Err(_) => Refusal::page(HostError::NotFound("no such page".into())).into_response(),
            }
        }
        AppPath::Space => space_root(&door, &mut parts, &space).await,
        AppPath::Unreadable => page(
            StatusCode::NOT_FOUND,
            "Not here",
            "<p>No file of an app has this address — a path may not step out of its app.</p>",
        ),
    }
}

/// `GET /` on a space's host: the apps of the space the caller may read
/// (`Host::space_front`), each linked to its pages — one whose deploy has no
/// `index.html` listed without a link — and, signed out, how to sign in. A
/// space the caller may read nothing of answers as one nobody made: a 404.
async fn space_root(door: &Arc<Door>, parts: &mut Parts, space: &str) -> Response {
    let caller = match WebCaller::from_request_parts(parts, door).await {
        Ok(asking) => asking.caller,
        Err(refusal) => return refusal.into_response(),
    };
    let public = escape(door.host.public_url());
    let sign_in = match caller.person() {
        Some(_) => String::new(),
        None => format!(
            "<p>You are not signed in here: <a href=\"{public}{SIGN_IN_PATH}\">sign in</a> to \
             see the apps of the spaces you belong to.</p>\n"
        ),
    };
    let front = match door.host.space_front(&caller, space).await {
        Ok(front) => front,
        Err(HostError::NotFound(_)) => {
            return page(
                StatusCode::NOT_FOUND,
                &format!("Space {space}"),
                &format!(
                    "<p>This is the space {}. Its apps live at <code>/&lt;app&gt;/</code>; the \
                     platform's page is at <a href=\"{public}/\">{public}</a>.</p>\n{sign_in}",
                    escape(space),
                ),
            );
        }
        Err(error) => return Refusal::page(error).into_response(),
    };
    let mut body = sign_in;
    match front.role {
        Some(role) => body.push_str(&format!(
            "<p>You are {} of {}; its members and versions are on \
             <a href=\"{public}/spaces/{space}\">its page on shed</a>.</p>\n",
            role.with_article(),
            escape(space),
            space = escape(space),
        )),
        None if caller.person().is_some() => body.push_str(&format!(
            "<p>You are not a member of {}: these are the apps of it anybody may read.</p>\n",
            escape(space)
        )),
        None => {}
    }
    if front.apps.is_empty() {
        body.push_str("<p>No apps here yet.</p>\n");
    } else {
        body.push_str("<ul>\n");
        for app in &front.apps {
            let title = escape(&app.title);
            let named = if app.index_page {
                format!("<a href=\"{}\">{title}</a>", escape(&app.address))
            } else {
                format!("{title} (no pages: its commands answer over MCP)")
            };
            body.push_str(&format!(
                "<li>{named} — <code>{}</code>, {}</li>\n",
                escape(&app.at),
                escape(app.access)
            ));
        }
        body.push_str("</ul>\n");
    }
    page(StatusCode::OK, &format!("Space {space}"), &body)
}

/// `GET /_shed/view/<key>/<app>/<path>`: a file of a private app's view, read
/// as the person the key was made for. Files only: no page api, no writes.
async fn view_file(
    door: &Door,
    parts: &axum::http::request::Parts,
    space: &str,
    keyed: &str,
    reading: bool,
) -> Response {
    let not_here = || {
        page(
            StatusCode::NOT_FOUND,
            "Not here",
            "<p>A view's address reads the files of its app, nothing else.</p>",
        )
    };
    let Some((key, rest)) = keyed.split_once('/') else {
        return not_here();
    };
    let (app, path) = match split_app_path(&format!("/{rest}")) {
        AppPath::File { app, path } if reading && !(path == "api" || path.starts_with("api/")) => {
            (app, path)
        }
        _ => return not_here(),
    };
    let caller = match door.host.caller_for_view_key(key, space, &app).await {
        Ok(caller) => caller,
        Err(error) => return Refusal::page(error).into_response(),
    };
    files::serve(
        door,
        &parts.headers,
        &caller,
        (space, &app),
        &path,
        parts.uri.path(),
    )
    .await
}
