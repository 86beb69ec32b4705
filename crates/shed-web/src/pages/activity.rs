//! The activity pages: every write to an app's data the person may see,
//! newest first — when, who, which agent job or client, which door and
//! command, which app, how many entities and a link to each entity's page —
//! and the calls refused beside them. `/activity` covers every space of
//! the person, `/spaces/<space>/activity` one space, and
//! `/spaces/<space>/apps/<app>/activity` one app (a tab of its page). A
//! small form narrows by person, agent job, app and command (the query
//! `?person=ada&job=job-3&app=runs&command=log_run`); "Older" pages on by
//! the last write's id (`before=`). What is shown is `Host::activity`'s:
//! the rule book decides there.

use std::sync::Arc;

use axum::extract::rejection::{FormRejection, QueryRejection};
use axum::extract::{Form, Path, Query, RawQuery, State};
use axum::response::Response;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use shed_host::activity::{
    ActivityNarrow, ActivityPage, ActivityScope, RefusalRecord, Through, WriteRecord, job_of,
};
use shed_host::{Caller, HostError, Person, person_named};

use super::apps::app_page_path;
use super::moments::moment_text;
use super::{
    ACTIVITY_PATH, Here, Outcome, Posted, Visited, fields, header_html, refusal_page, required,
};
use crate::door::Door;
use crate::reply::{escape, product_page};

/// The most entities a row of activity links to; past it, how many more.
pub(crate) const ENTITY_LINKS_SHOWN: usize = 8;

/// An activity page's query: the narrowing and the cursor.
#[derive(serde::Deserialize, Default)]
pub(super) struct ActivityQuery {
    person: Option<String>,
    job: Option<String>,
    app: Option<String>,
    command: Option<String>,
    before: Option<String>,
}

/// `/activity`: everything the person reaches.
pub(super) async fn everything(
    State(door): State<Arc<Door>>,
    visited: Visited,
    query: Result<Query<ActivityQuery>, QueryRejection>,
) -> Response {
    visit(&door, visited, ActivityScope::Everything, query).await
}

/// `/spaces/<space>/activity`.
pub(super) async fn of_space(
    State(door): State<Arc<Door>>,
    Path(space): Path<String>,
    visited: Visited,
    query: Result<Query<ActivityQuery>, QueryRejection>,
) -> Response {
    visit(&door, visited, ActivityScope::Space(&space), query).await
}

/// `/spaces/<space>/apps/<app>/activity`.
pub(super) async fn of_app(
    State(door): State<Arc<Door>>,
    Path((space, app)): Path<(String, String)>,
    visited: Visited,
    query: Result<Query<ActivityQuery>, QueryRejection>,
) -> Response {
    let name = format!("{space}/{app}");
    visit(&door, visited, ActivityScope::App(&name), query).await
}

/// An Undo posted from `/activity`: on to the page again, the sentence on top.
pub(super) async fn undo_everything(
    State(door): State<Arc<Door>>,
    posted: Posted,
    RawQuery(raw): RawQuery,
    query: Result<Query<ActivityQuery>, QueryRejection>,
    form: Result<Form<UndoChoice>, FormRejection>,
) -> Response {
    let scope = ActivityScope::Everything;
    undo_then_show(&door, posted, scope, raw, query, form).await
}

/// An Undo posted from `/spaces/<space>/activity`.
pub(super) async fn undo_of_space(
    State(door): State<Arc<Door>>,
    Path(space): Path<String>,
    posted: Posted,
    RawQuery(raw): RawQuery,
    query: Result<Query<ActivityQuery>, QueryRejection>,
    form: Result<Form<UndoChoice>, FormRejection>,
) -> Response {
    let scope = ActivityScope::Space(&space);
    undo_then_show(&door, posted, scope, raw, query, form).await
}

/// An Undo posted from `/spaces/<space>/apps/<app>/activity`.
pub(super) async fn undo_of_app(
    State(door): State<Arc<Door>>,
    Path((space, app)): Path<(String, String)>,
    posted: Posted,
    RawQuery(raw): RawQuery,
    query: Result<Query<ActivityQuery>, QueryRejection>,
    form: Result<Form<UndoChoice>, FormRejection>,
) -> Response {
    let name = format!("{space}/{app}");
    let scope = ActivityScope::App(&name);
    undo_then_show(&door, posted, scope, raw, query, form).await
}

/// A visit to the activity of `scope`.
async fn visit(
    door: &Door,
    Visited {
        asking,
        person,
        said,
    }: Visited,
    scope: ActivityScope<'_>,
    query: Result<Query<ActivityQuery>, QueryRejection>,
) -> Response {
    activity_page(door, &asking.caller, &person, scope, query, said).await
}

/// The write an Undo form posted on the activity of `scope` undone, then on
/// to that page, as narrowed (`raw`, its query), the host's sentence on
/// top; refused, the page at once with the sentence.
async fn undo_then_show(
    door: &Door,
    Posted {
        asking,
        person,
        notice,
    }: Posted,
    scope: ActivityScope<'_>,
    raw: Option<String>,
    query: Result<Query<ActivityQuery>, QueryRejection>,
    form: Result<Form<UndoChoice>, FormRejection>,
) -> Response {
    match undo_posted(door, &asking.caller, &person, form).await {
        Ok(html) => {
            let (path, _) = place(scope);
            let to = match raw {
                Some(raw) => format!("{path}?{raw}"),
                None => path,
            };
            notice.land(door, &to, &html, None)
        }
        Err(error) => {
            let said = Outcome::Refused(error);
            activity_page(door, &asking.caller, &person, scope, query, said).await
        }
    }
}

/// Where a scope's page is, and its title.
fn place(scope: ActivityScope<'_>) -> (String, String) {
    match scope {
        ActivityScope::Everything => (ACTIVITY_PATH.to_string(), "Activity".to_string()),
        ActivityScope::Space(space) => (
            format!("/spaces/{}/activity", escape(space)),
            format!("Activity of {space}"),
        ),
        ActivityScope::App(app) => (
            format!("{}/activity", app_page_path(app)),
            format!("Activity of {app}"),
        ),
    }
}

/// The activity `scope` covers as the caller sees it, narrowed and paged
/// as `query` says, `said` on top.
async fn activity_page(
    door: &Door,
    caller: &Caller,
    person: &Person,
    scope: ActivityScope<'_>,
    query: Result<Query<ActivityQuery>, QueryRejection>,
    said: Outcome,
) -> Response {
    let (path, title) = place(scope);
    let header = header_html(
        person,
        match scope {
            ActivityScope::Everything => Here::Activity,
            _ => Here::Space,
        },
    );
    let read = async {
        let Query(query) = query.map_err(|rejection| {
            HostError::BadInput(format!(
                "the address's query could not be read ({rejection}) — narrow the page with its form"
            ))
        })?;
        let before = match query.before.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(before) => Some(before.parse::<i64>().map_err(|_| {
                HostError::BadInput(format!(
                    "before takes the number an Older link carries, not {} — open the page again \
                     and follow its Older link",
                    before.chars().take(40).collect::<String>()
                ))
            })?),
        };
        let narrow = ActivityNarrow {
            person: query.person.clone(),
            job: query.job.clone(),
            app: query.app.clone(),
            command: query.command.clone(),
        };
        let page = door
            .host
            .activity(caller, scope, &narrow, before)
            .await?;
        Ok::<_, HostError>((narrow, page.data))
    }
    .await;
    match read {
        Ok((narrow, page)) => {
            let body = format!("{}{}", said.html(), page_html(scope, &path, &narrow, &page));
            product_page(said.status(), &title, &header, &body)
        }
        Err(error) => refusal_page(&title, &header, said, error, None),
    }
}

/// The page's body: the narrowing form, the writes, Older, the refusals.
fn page_html(
    scope: ActivityScope<'_>,
    path: &str,
    narrow: &ActivityNarrow,
    page: &ActivityPage,
) -> String {
    let mut html = narrow_form(scope, path, narrow);
    html.push_str("<section id=\"writes\"><h2>Writes</h2>\n");
    if page.writes.is_empty() {
        html.push_str("<p class=\"empty\">No writes here yet");
        if narrowed(narrow) {
            html.push_str(" that match — clear the form to see every one");
        }
        html.push_str(".</p>\n");
    } else {
        html.push_str("<ul class=\"rows\">\n");
        let action = format!("{path}?{}", escape(&query_of(narrow, None)));
        for write in &page.writes {
            let undo = page
                .may_undo
                .contains(&write.app)
                .then_some(action.as_str());
            html.push_str(&write_row(write, undo));
        }
        html.push_str("</ul>\n");
    }
    if let Some(older) = page.older {
        html.push_str(&format!(
            "<p><a rel=\"next\" href=\"{path}?{}\">Older</a></p>\n",
            escape(&query_of(narrow, Some(older)))
        ));
    }
    html.push_str("</section>\n");
    if !page.refusals.is_empty() {
        html.push_str(
            "<section id=\"refused\"><h2>Refused</h2>\n<p class=\"meta\">Calls the rule book or \
             a job's scope did not let through, with the sentence each got (what they asked \
             with is not kept).</p>\n<ul class=\"rows\">\n",
        );
        for refusal in &page.refusals {
            html.push_str(&refusal_row(refusal));
        }
        html.push_str("</ul>\n</section>\n");
    }
    html
}

/// Whether anything narrows the page.
fn narrowed(narrow: &ActivityNarrow) -> bool {
    [&narrow.person, &narrow.job, &narrow.app, &narrow.command]
        .iter()
        .any(|word| word.as_deref().is_some_and(|w| !w.trim().is_empty()))
}

/// The form that narrows the page (a GET of the page itself).
fn narrow_form(scope: ActivityScope<'_>, path: &str, narrow: &ActivityNarrow) -> String {
    let field = |name: &str, label: &str, value: &Option<String>, hint: &str| {
        format!(
            "<label>{label} <input name=\"{name}\" value=\"{}\" placeholder=\"{hint}\" \
             autocomplete=\"off\" spellcheck=\"false\" maxlength=\"200\"></label>",
            escape(value.as_deref().unwrap_or_default())
        )
    };
    let app = match scope {
        ActivityScope::App(_) => String::new(),
        _ => field("app", "App", &narrow.app, "runs"),
    };
    let clear = if narrowed(narrow) {
        format!(" <a href=\"{path}\">Clear</a>")
    } else {
        String::new()
    };
    format!(
        "<form class=\"inline narrow\" method=\"get\" action=\"{path}\">{}{}{app}{}\
         <button type=\"submit\">Narrow</button>{clear}</form>\n",
        field("person", "Person", &narrow.person, "handle"),
        field("job", "Agent job", &narrow.job, "job-3"),
        field("command", "Command", &narrow.command, "log_run"),
    )
}

/// The query of a page narrowed as `narrow`, before the write `before`.
fn query_of(narrow: &ActivityNarrow, before: Option<i64>) -> String {
    let mut pairs: Vec<String> = [
        ("person", &narrow.person),
        ("job", &narrow.job),
        ("app", &narrow.app),
        ("command", &narrow.command),
    ]
    .into_iter()
    .filter_map(|(name, value)| {
        let value = value.as_deref()?.trim();
        (!value.is_empty())
            .then(|| format!("{name}={}", utf8_percent_encode(value, NON_ALPHANUMERIC)))
    })
    .collect();
    if let Some(before) = before {
        pairs.push(format!("before={before}"));
    }
    pairs.join("&")
}

/// Who acted, as a row's sentence starts: the agent job, else the person
/// ([`person_named`]).
fn actor(by: &shed_host::Person, via: Option<&str>) -> String {
    match job_of(via) {
        Some(job) => job.to_string(),
        None => person_named(by),
    }
}

/// How it came: the person an agent's write was for (a person's own is
/// named by the row's sentence), the door, the client, and a `via` that
/// is not an agent's (`undo of demo/runs@12`).
fn came(by: &shed_host::Person, via: Option<&str>, through: &Through) -> String {
    let mut parts = Vec::new();
    if job_of(via).is_some() {
        parts.push(format!("for {}", escape(&person_named(by))));
    }
    parts.push(format!("door {}", escape(&through.door)));
    if let Some(client) = through.client.as_deref()
        && job_of(via) != Some(client)
    {
        parts.push(format!("client {}", escape(client)));
    }
    if let Some(via) = via.filter(|via| job_of(Some(via)).is_none()) {
        parts.push(escape(via));
    }
    parts.join(" · ")
}

/// The write an Undo button names.
#[derive(serde::Deserialize)]
pub(super) struct UndoChoice {
    write: Option<String>,
}

/// An Undo button for `write` (`demo/runs@12`), posting to `action`.
pub(super) fn undo_button(action: &str, write: &str) -> String {
    format!(
        "<form method=\"post\" action=\"{action}\"><input type=\"hidden\" name=\"write\" value=\"{write}\">\
         <button type=\"submit\" aria-label=\"Undo {write}\">Undo</button></form>",
        write = escape(write),
    )
}

/// Undoes the write an Undo form posted, as `caller`: the host's sentence.
pub(super) async fn undo_posted(
    door: &Door,
    caller: &Caller,
    person: &Person,
    form: Result<Form<UndoChoice>, FormRejection>,
) -> Result<String, HostError> {
    let write = required(fields(form)?.write, "the write to undo")?;
    let answer = door.host.undo(caller, &write).await?;
    tracing::info!(by = %person.handle, write = %answer.data.write, "a write undone on a page");
    Ok(escape(&answer.text))
}

/// `1 entity`, `3 entities`.
fn entities(n: usize) -> String {
    if n == 1 {
        "1 entity".to_string()
    } else {
        format!("{n} entities")
    }
}

/// The address of an entity's page in `app` (`space/slug`).
pub(crate) fn entity_path(app: &str, eid: &str) -> String {
    format!(
        "{}/data/{}",
        app_page_path(app),
        utf8_percent_encode(eid, NON_ALPHANUMERIC)
    )
}

/// One write as a row: "job-3 ran log_run in demo/runs — 1 entity", how it
/// came, a link to each entity it wrote, and — given where its Undo posts,
/// for those the rule book lets undo — its Undo button.
fn write_row(write: &WriteRecord, undo: Option<&str>) -> String {
    let name = format!("{}@{}", write.app, write.version);
    let command = write.through.command.as_deref().unwrap_or("a write");
    let said = format!(
        "{} ran {command} in {} — {}",
        actor(&write.by, write.via.as_deref()),
        write.app,
        entities(write.entities.len())
    );
    let mut links: Vec<String> = write
        .entities
        .iter()
        .take(ENTITY_LINKS_SHOWN)
        .map(|eid| {
            format!(
                "<a href=\"{}\"><code>{}</code></a>",
                entity_path(&write.app, eid),
                escape(shed_host::entity::short_eid(eid))
            )
        })
        .collect();
    if write.entities.len() > ENTITY_LINKS_SHOWN {
        links.push(format!(
            "and {} more",
            write.entities.len() - ENTITY_LINKS_SHOWN
        ));
    }
    // Undone already: marked, naming the undo, and no Undo (which would
    // only be refused, naming it too).
    let (undone, undo) = match write.undone_by {
        Some(by) => (
            format!(
                " <span class=\"tag undone\">undone by {}@{by}</span>",
                escape(&write.app)
            ),
            None,
        ),
        None => (String::new(), undo),
    };
    // `app@N` opens the write: of one entity, that entity's page at the
    // write (`?version=N`, the change alone); of several, the app's data.
    let opens = match write.entities.as_slice() {
        [eid] => format!("{}?version={}", entity_path(&write.app, eid), write.version),
        _ => format!("{}/data", app_page_path(&write.app)),
    };
    format!(
        "<li data-write=\"{name}\"><div class=\"what\"><span class=\"said\">{}</span>{undone}\
         <div class=\"meta\">{} · {} · <a href=\"{opens}\">{}</a></div>\
         <div class=\"meta\">{}</div></div>{}</li>\n",
        escape(&said),
        moment_text(&write.at),
        came(&write.by, write.via.as_deref(), &write.through),
        escape(&name),
        links.join(" "),
        undo.map(|action| undo_button(action, &name))
            .unwrap_or_default(),
        name = escape(&name),
    )
}

/// One refused call as a row: who asked what, and the sentence they got.
fn refusal_row(refusal: &RefusalRecord) -> String {
    let command = refusal.through.command.as_deref().unwrap_or("a call");
    let said = format!(
        "{} was refused {command} in {}",
        actor(&refusal.by, refusal.via.as_deref()),
        refusal.app
    );
    format!(
        "<li data-refusal=\"{}\"><div class=\"what\"><span class=\"said\">{}</span>\
         <div class=\"meta\">{} · {}</div><div class=\"meta\">It was told: “{}”</div></div></li>\n",
        refusal.id,
        escape(&said),
        moment_text(&refusal.at),
        came(&refusal.by, refusal.via.as_deref(), &refusal.through),
        escape(&refusal.sentence),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_older_link_keeps_the_narrowing() {
        let narrow = ActivityNarrow {
            person: Some("ada".into()),
            job: Some(" ".into()),
            app: None,
            command: Some("log run&x".into()),
        };
        assert_eq!(
            query_of(&narrow, Some(41)),
            "person=ada&command=log%20run%26x&before=41"
        );
        assert_eq!(query_of(&ActivityNarrow::default(), None), "");
    }
}
