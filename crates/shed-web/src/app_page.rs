//! An app's page on the platform's host, `/spaces/<space>/apps/<app>`: its
//! title, access and the version answering; its versions, newest first —
//! who deployed each (name and handle) and when, the version a roll back
//! brought back, the commands each added and removed against the one before
//! (`Host::app_overview`) — and the acts on its life, each a POST form
//! going on to this page, the host's sentence on top (`pages/notice.rs`): **Roll back** to a
//! version (`Host::app_rollback`, the CLI's `shed app rollback`), **Trash**
//! and, in the trash, **Restore** (`app_trash`, `app_restore`), and
//! **Purge**, only in the trash, which asks the person to type the app's
//! full name (`space/slug`, as `shed app purge --confirm` does) and is
//! refused without it (`app_purge`). The buttons shown are those the rule
//! book allows the caller (`AppOfMine::may`); a viewer sees the versions
//! and none; the host refuses a post all the same.

use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::FormRejection;
use axum::extract::{Form, Path, State};
use axum::response::Response;
use axum::routing::{get, post};
use shed_host::answer::{AppOverview, AppVersion};
use shed_host::{Caller, HostError, Person};

use crate::door::Door;
use crate::pages::apps::{app_page_path, code_list};
use crate::pages::moments::ago_text;
use crate::pages::space::space_path;
use crate::pages::{
    Back, Here, Outcome, Posted, Visited, fields, form_only, header_html, refusal_page, required,
};
use crate::reply::{escape, product_page};

/// The words of the link back to an app's page.
const APP_PAGE: &str = "The app's page";

/// The app page's routes; its forms post under its own address.
pub(crate) fn router(door: Arc<Door>) -> Router {
    Router::new()
        .route("/spaces/{space}/apps/{app}", get(app))
        .route(
            "/spaces/{space}/apps/{app}/rollback",
            post(rollback).get(form_only(
                "rolls an app back to a version",
                Back::Up(APP_PAGE),
            )),
        )
        .route(
            "/spaces/{space}/apps/{app}/trash",
            post(trash).get(form_only("puts an app in the trash", Back::Up(APP_PAGE))),
        )
        .route(
            "/spaces/{space}/apps/{app}/restore",
            post(restore).get(form_only(
                "restores an app from the trash",
                Back::Up(APP_PAGE),
            )),
        )
        .route(
            "/spaces/{space}/apps/{app}/purge",
            post(purge).get(form_only("deletes an app for good", Back::Up(APP_PAGE))),
        )
        .route(
            "/spaces/{space}/apps/{app}/approvals",
            post(set_approvals).get(form_only(
                "sets whether writes by agents need approval",
                Back::Up(APP_PAGE),
            )),
        )
        .route_layer(axum::middleware::from_fn_with_state(
            door.clone(),
            crate::pages::approvals::count_waiting,
        ))
        .with_state(door)
}

async fn app(
    State(door): State<Arc<Door>>,
    Path((space, app)): Path<(String, String)>,
    Visited {
        asking,
        person,
        said,
    }: Visited,
) -> Response {
    app_page(&door, &asking.caller, &person, &space, &app, said).await
}

/// The page of `space`/`app` as the caller sees it, `said` on top.
async fn app_page(
    door: &Door,
    caller: &Caller,
    person: &Person,
    space: &str,
    app: &str,
    said: Outcome,
) -> Response {
    let header = header_html(person, Here::Space);
    let name = format!("{space}/{app}");
    let overview = match door.host.app_overview(caller, &name).await {
        Ok(overview) => overview,
        Err(error) => {
            let back = (format!("/spaces/{space}"), format!("Back to {space}"));
            return refusal_page(&name, &header, said, error, Some((&back.0, &back.1)));
        }
    };
    let needs = overview.agent_writes_need_approval;
    let body = format!(
        "{}{}{}",
        said.html(),
        overview_html(&overview),
        approvals_html(&app_page_path(&name), needs)
    );
    product_page(said.status(), &overview.app.app.title, &header, &body)
}

/// The app's setting "writes by agents need approval", and the form an
/// owner changes it with (the host refuses anyone else, with its sentence).
fn approvals_html(page: &str, needs: bool) -> String {
    let (now, change, value) = if needs {
        (
            "on: every write an agent (an MCP client, a job) asks waits for its person's approval",
            "Turn off",
            "off",
        )
    } else {
        (
            "off: only commands that say <code>confirm</code> wait for approval when an agent asks",
            "Turn on",
            "on",
        )
    };
    format!(
        "<section id=\"agent-approvals\"><h2>Writes by agents need approval</h2>\n\
         <p>{now}.</p>\n<form method=\"post\" action=\"{page}/approvals\">\
         <input type=\"hidden\" name=\"need\" value=\"{value}\">\
         <button type=\"submit\">{change}</button></form></section>\n"
    )
}

/// The setting asked: `on` or `off`.
#[derive(serde::Deserialize)]
struct NeedApproval {
    need: Option<String>,
}

/// A POST of the setting: the app page, the host's sentence on top.
async fn set_approvals(
    State(door): State<Arc<Door>>,
    Path((space, app)): Path<(String, String)>,
    posted: Posted,
    form: Result<Form<NeedApproval>, FormRejection>,
) -> Response {
    let name = format!("{space}/{app}");
    let done = async {
        let need = required(fields(form)?.need, "on or off")?;
        door.host
            .set_agent_writes_need_approval(&posted.asking.caller, &name, need == "on")
            .await
    }
    .await;
    landed_on_app(&door, &space, &app, &posted, done.map(|text| escape(&text))).await
}

/// The page's body below the outcome: the app, its life's acts, its versions.
fn overview_html(overview: &AppOverview) -> String {
    let mine = &overview.app;
    let app = &mine.app;
    let page = app_page_path(&app.at);
    let at = escape(&app.at);
    let (space, _) = app.at.split_once('/').unwrap_or((&app.at, ""));
    let role = mine.role.unwrap_or("not a member");
    let mut html = format!(
        "<p class=\"meta\"><a href=\"/spaces/{space}\">{space}</a> / {slug} · {access} · \
         v{version} answers · your role: {role}</p>\n\
         <nav class=\"tabs\" aria-label=\"{at}\"><a href=\"{page}/data\">Data</a> \
         <a href=\"{page}/activity\">Activity</a></nav>\n",
        space = escape(space),
        slug = escape(&app.slug),
        access = escape(app.access),
        version = app.version,
    );
    match &app.trashed {
        Some(trashed) => {
            html.push_str(&format!(
                "<section id=\"trash\" class=\"trashed\"><h2>In the trash</h2>\n\
                 <p>Put in the trash {} by {} (@{}). Its commands, pages, views and data are out \
                 of reach through every door, and its name stays taken; its data is kept.</p>\n",
                ago_text(&trashed.at),
                escape(&trashed.name),
                escape(&trashed.handle)
            ));
            if mine.may.trash {
                html.push_str(&format!(
                    "<form method=\"post\" action=\"{page}/restore\"><button class=\"primary\" \
                     type=\"submit\">Restore</button></form>\n"
                ));
            }
            if mine.may.purge {
                html.push_str(&format!(
                    "<h3>Purge</h3>\n<p>Deletes {at} for good — every version and all its data. \
                     It cannot be undone.</p>\n\
                     <form class=\"inline\" method=\"post\" action=\"{page}/purge\">\
                     <label><span>Type <code>{at}</code> to purge it</span><input name=\"confirm\" \
                     autocomplete=\"off\" spellcheck=\"false\" maxlength=\"200\"></label>\
                     <button class=\"danger\" type=\"submit\">Purge</button></form>\n"
                ));
            }
            html.push_str("</section>\n");
        }
        None if app.index_page => {
            html.push_str(&format!(
                "<p><a class=\"open\" href=\"{}\">Open {}</a></p>\n",
                escape(&app.address),
                escape(&app.address)
            ));
        }
        None => html.push_str(
            "<p class=\"meta\">It has no pages: its deploy holds no <code>index.html</code>, \
             so there is nothing to open; its commands answer over MCP.</p>\n",
        ),
    }
    html.push_str("<section id=\"versions\"><h2>Versions</h2>\n<ul class=\"rows\">\n");
    let may_roll_back = mine.may.rollback && app.trashed.is_none();
    // In the trash, no version answers.
    let answering = app.trashed.is_none().then_some(overview.versions.current);
    for version in &overview.versions.versions {
        html.push_str(&version_row(
            version,
            answering,
            may_roll_back.then_some(page.as_str()),
        ));
    }
    html.push_str("</ul>\n");
    if !mine.may.rollback && !mine.may.trash {
        html.push_str(&format!(
            "<p class=\"empty\">As {role} of {}, you see its versions; an editor or owner rolls \
             it back and puts it in the trash.</p>\n",
            escape(space)
        ));
    }
    html.push_str("</section>\n");
    if app.trashed.is_none() && mine.may.trash {
        html.push_str(&format!(
            "<section id=\"trash\"><h2>Trash</h2>\n<p>Puts {at} out of reach through every door — \
             MCP, its pages, the broker — until it is restored; its data is kept, and its name \
             stays taken.</p>\n<form method=\"post\" action=\"{page}/trash\"><button \
             class=\"danger\" type=\"submit\">Trash</button></form>\n</section>\n"
        ));
    }
    html
}

/// One version as a row: number, who deployed it and when, what it brought
/// back, the commands it added and removed, whether it is the one
/// `answering` — and, given the page's address to post to, its Roll back
/// button (none for the version answering).
fn version_row(version: &AppVersion, answering: Option<i64>, roll_back_at: Option<&str>) -> String {
    let number = version.version;
    let is_answering = answering == Some(number);
    let answering = if is_answering {
        " <span class=\"tag running\">answering</span>"
    } else {
        ""
    };
    let back = version
        .rolls_back_to
        .map(|earlier| format!(" · a roll back to v{earlier}"))
        .unwrap_or_default();
    let changes = match (version.added.is_empty(), version.removed.is_empty()) {
        (true, true) => "Commands unchanged".to_string(),
        (false, true) => format!("Added {}", code_list(&version.added)),
        (true, false) => format!("Removed {}", code_list(&version.removed)),
        (false, false) => format!(
            "Added {} · removed {}",
            code_list(&version.added),
            code_list(&version.removed)
        ),
    };
    let button = match roll_back_at {
        Some(page) if !is_answering => format!(
            "<form method=\"post\" action=\"{page}/rollback\"><input type=\"hidden\" name=\"version\" \
             value=\"{number}\"><button type=\"submit\">Roll back to v{number}</button></form>"
        ),
        _ => String::new(),
    };
    format!(
        "<li data-version=\"{number}\"><div class=\"what\"><strong>v{number}</strong>{answering}\
         <div class=\"meta\">deployed {when} by {name} (@{handle}){back}</div>\
         <div class=\"meta\">{changes}</div></div>{button}</li>\n",
        when = ago_text(&version.deployed.at),
        name = escape(&version.deployed.name),
        handle = escape(&version.deployed.handle),
    )
}

/// The host's answer as the page's outcome: its lines, escaped.
fn said(text: &str) -> String {
    text.lines().map(escape).collect::<Vec<_>>().join("<br>")
}

/// The version to roll back to.
#[derive(serde::Deserialize)]
struct VersionChoice {
    version: Option<String>,
}

async fn rollback(
    State(door): State<Arc<Door>>,
    Path((space, app)): Path<(String, String)>,
    posted: Posted,
    form: Result<Form<VersionChoice>, FormRejection>,
) -> Response {
    let rolled = async {
        let version =
            shed_host::parse_version(&required(fields(form)?.version, "the version")?)?;
        let answer = door
            .host
            .app_rollback(&posted.asking.caller, &format!("{space}/{app}"), version)
            .await?;
        tracing::info!(by = %posted.person.handle, app = %answer.data.app, version, "rolled back on its page");
        Ok(said(&answer.text))
    }
    .await;
    landed_on_app(&door, &space, &app, &posted, rolled).await
}

/// Which of the acts without fields a form posted.
#[derive(Clone, Copy)]
enum LifeAct {
    Trash,
    Restore,
}

async fn trash(
    State(door): State<Arc<Door>>,
    Path((space, app)): Path<(String, String)>,
    posted: Posted,
) -> Response {
    life_act(&door, &space, &app, posted, LifeAct::Trash).await
}

async fn restore(
    State(door): State<Arc<Door>>,
    Path((space, app)): Path<(String, String)>,
    posted: Posted,
) -> Response {
    life_act(&door, &space, &app, posted, LifeAct::Restore).await
}

/// Trash or restore `space`/`app`: on to the app page, the host's sentence
/// on top.
async fn life_act(door: &Door, space: &str, app: &str, posted: Posted, act: LifeAct) -> Response {
    let name = format!("{space}/{app}");
    let caller = &posted.asking.caller;
    let done = match act {
        LifeAct::Trash => door.host.app_trash(caller, &name).await,
        LifeAct::Restore => door.host.app_restore(caller, &name).await,
    };
    // The host names this page by its address; here it is this page.
    let here = format!(
        " on its page, {}{}",
        door.host.public_url(),
        app_page_path(&name)
    );
    let done = done.map(|answer| said(&answer.text.replace(&here, " on this page")));
    landed_on_app(door, space, app, &posted, done).await
}

/// An act's answer: done, on to the app's page with the host's sentence;
/// refused, the page at once with it.
async fn landed_on_app(
    door: &Door,
    space: &str,
    app: &str,
    posted: &Posted,
    done: Result<String, HostError>,
) -> Response {
    match done {
        Ok(html) => {
            let to = app_page_path(&format!("{space}/{app}"));
            posted.notice.land(door, &to, &html, None)
        }
        Err(error) => {
            let said = Outcome::Refused(error);
            app_page(
                door,
                &posted.asking.caller,
                &posted.person,
                space,
                app,
                said,
            )
            .await
        }
    }
}

/// The name typed to purge.
#[derive(serde::Deserialize)]
struct PurgeConfirm {
    confirm: Option<String>,
}

/// Purge: refused, with the host's sentence and nothing deleted, unless the
/// app's full name was typed; done, the space's page with what was deleted.
async fn purge(
    State(door): State<Arc<Door>>,
    Path((space, app)): Path<(String, String)>,
    Posted {
        asking,
        person,
        notice,
    }: Posted,
    form: Result<Form<PurgeConfirm>, FormRejection>,
) -> Response {
    let purged = async {
        let typed = fields(form)?.confirm.unwrap_or_default();
        let answer = door
            .host
            .app_purge(&asking.caller, &format!("{space}/{app}"), typed.trim())
            .await?;
        Ok::<_, HostError>(said(&answer.text))
    }
    .await;
    match purged {
        Ok(html) => notice.land(&door, &space_path(&space), &html, None),
        Err(error) => {
            app_page(
                &door,
                &asking.caller,
                &person,
                &space,
                &app,
                Outcome::Refused(error),
            )
            .await
        }
    }
}
