//! An entity's page, `/spaces/<space>/apps/<app>/data/<eid>`: its
//! components now and, to those the rule book lets see the app's history
//! (its space's members), its edges both ways and its history newest
//! first — each version with its write (`demo/runs@12`), when, who, which
//! agent or door, command and client, and what it changed, field by field
//! (before → after). To those the rule book lets undo (the app's owners
//! and editors) each version carries an Undo button: a POST form to
//! `…/<eid>/undo`, taken only from this host's own pages (`Posted`),
//! going on to this page with the host's sentence on top. What is shown,
//! and whether an undo may be made, is `Host::entity`'s and `Host::undo`'s.
//!
//! A value longer than `SHOWN_VALUE_CHARS` is cut, says its length and
//! links to itself whole: `?whole=<field>` (now) or `?whole=<field>&
//! version=<n>` (what version n changed of it), a page of that one value.
//! `?version=<n>` shows one version alone. The history draws versions
//! until the page holds [`MOST_PAGE_BYTES`]; past it the rest are listed
//! as links to each alone.

use std::sync::Arc;

use axum::extract::rejection::{FormRejection, QueryRejection};
use axum::extract::{Form, Path, Query, State};
use axum::response::Response;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::Value;
use shed_host::app_data::{Cell, Changed, Edge, Version, cell, components_of};
use shed_host::entity::{EntityView, Whole, entity_title, short_eid, whole_text};
use shed_host::{Caller, HostError, Person, person_named};

use super::activity::{UndoChoice, entity_path, undo_button, undo_posted};
use super::apps::app_page_path;
use super::moments::moment_text;
use super::{Here, Outcome, Posted, Visited, header_html, refusal_page};
use crate::door::Door;
use crate::reply::{escape, product_page};
use shed_host::activity::job_of;

/// The most bytes of HTML an entity's page or an app's data page draws of
/// its versions or rows: a long page a browser opens at once (a version of
/// cut values is a few KB); past it the rest are listed as links, each to
/// its own page.
pub(crate) const MOST_PAGE_BYTES: usize = 256 * 1024;

/// An entity page's query: one value whole, one version alone.
#[derive(serde::Deserialize, Default)]
pub(super) struct EntityQuery {
    /// The field to show whole: `jog.who`, or any field a version changed.
    whole: Option<String>,
    /// The version: the one shown alone, or whose change `whole` shows.
    version: Option<u64>,
}

/// `GET /spaces/<space>/apps/<app>/data/<eid>`.
pub(super) async fn entity(
    State(door): State<Arc<Door>>,
    Path((space, app, eid)): Path<(String, String, String)>,
    Visited {
        asking,
        person,
        said,
    }: Visited,
    query: Result<Query<EntityQuery>, QueryRejection>,
) -> Response {
    let app = format!("{space}/{app}");
    let (query, said) = match query {
        Ok(Query(query)) => (query, said),
        Err(rejection) => (
            EntityQuery::default(),
            Outcome::Refused(HostError::BadInput(format!(
                "the address's query could not be read ({rejection}) — follow a link of the \
                 entity's page"
            ))),
        ),
    };
    let page = Page {
        door: &door,
        caller: &asking.caller,
        person: &person,
        app: &app,
        eid: &eid,
    };
    page.draw(&query, said).await
}

/// `POST /spaces/<space>/apps/<app>/data/<eid>/undo`: undo the write the
/// form names, then on to the entity's page with the host's sentence on
/// top (refused: the page at once, the sentence on top).
pub(super) async fn undo(
    State(door): State<Arc<Door>>,
    Path((space, app, eid)): Path<(String, String, String)>,
    Posted {
        asking,
        person,
        notice,
    }: Posted,
    form: Result<Form<UndoChoice>, FormRejection>,
) -> Response {
    let app = format!("{space}/{app}");
    let error = match undo_posted(&door, &asking.caller, &person, form).await {
        Ok(html) => return notice.land(&door, &entity_path(&app, &eid), &html, None),
        Err(error) => error,
    };
    let page = Page {
        door: &door,
        caller: &asking.caller,
        person: &person,
        app: &app,
        eid: &eid,
    };
    page.draw(&EntityQuery::default(), Outcome::Refused(error))
        .await
}

/// An entity's page being drawn: for whom, of what.
struct Page<'a> {
    door: &'a Door,
    caller: &'a Caller,
    person: &'a Person,
    app: &'a str,
    eid: &'a str,
}

impl Page<'_> {
    /// The page of the entity as the caller sees it, `said` on top: whole,
    /// one version of it, or one value whole, as `query` asks.
    async fn draw(&self, query: &EntityQuery, said: Outcome) -> Response {
        let header = header_html(self.person, Here::Space);
        let app = self.app;
        let read = self.door.host.entity(self.caller, app, self.eid).await;
        let shown = read.and_then(|answer| {
            let view = &answer.data;
            if let Some(field) = &query.whole {
                let body = whole_html(view, field, query.version)?;
                return Ok((format!("{field} of {}", short_eid(&view.eid)), body));
            }
            let versions = match view.versions(query.version) {
                Ok(versions) => versions,
                // No history to show this caller: the entity now.
                Err(_) if query.version.is_none() => &[],
                Err(refused) => return Err(refused),
            };
            Ok((title(view), entity_html(view, versions)))
        });
        match shown {
            Ok((title, body)) => {
                let body = format!("{}{body}", said.html());
                product_page(said.status(), &title, &header, &body)
            }
            Err(error) => {
                let back = (
                    format!("{}/data", app_page_path(app)),
                    format!("Back to the data of {app}"),
                );
                refusal_page(
                    &format!("Entity of {app}"),
                    &header,
                    said,
                    error,
                    Some((&back.0, &back.1)),
                )
            }
        }
    }
}

/// The page's title: [`entity_title`].
fn title(view: &EntityView) -> String {
    entity_title(view.now.as_ref(), view.alias.as_deref(), &view.eid)
}

/// The entity's page: where it is, it now, its edges and `versions`.
fn entity_html(view: &EntityView, versions: &[Version]) -> String {
    let components = view.now.as_ref().map(components_of).unwrap_or_default();
    let mut body = summary_html(view);
    body.push_str(&now_html(view, &components));
    if view.history.is_some() {
        body.push_str(&edges_html(view));
    }
    body.push_str(&history_html(view, versions, body.len()));
    body
}

/// The address of `field` of entity `eid` of `app` shown whole: now, or
/// as version `version` changed it.
pub(super) fn whole_path(app: &str, eid: &str, field: &str, version: Option<u64>) -> String {
    let mut path = format!(
        "{}?whole={}",
        entity_path(app, eid),
        utf8_percent_encode(field, NON_ALPHANUMERIC)
    );
    if let Some(version) = version {
        path.push_str(&format!("&version={version}"));
    }
    path
}

/// One value of the entity whole, on a page of its own: `field` now, or
/// before and after version `version` (refused as `EntityView::whole`).
fn whole_html(view: &EntityView, field: &str, version: Option<u64>) -> Result<String, HostError> {
    let whole = view.whole(field, version)?;
    let back = entity_path(&view.app, &view.eid);
    let mut html = format!(
        "<p class=\"meta\"><a href=\"{back}\">Back to {}</a> · <code>{}</code></p>\n",
        escape(&title(view)),
        escape(field)
    );
    let block = |label: &str, value: &Value| {
        let text = whole_text(value);
        format!(
            "<h2>{label}</h2>\n<p class=\"meta\">{} characters</p>\n<pre class=\"whole\">{}</pre>\n",
            text.chars().count(),
            escape(&text)
        )
    };
    match whole {
        Whole::Now(value) => html.push_str(&block("Now", value)),
        Whole::Changed(changed) => {
            let before = format!("Before version {}", version.unwrap_or_default());
            if changed.before_unread {
                html.push_str(&format!(
                    "<h2>{before}</h2>\n<p class=\"meta\">{}</p>\n",
                    shed_host::entity::UNREAD_BEFORE
                ));
            } else {
                html.push_str(&block(&before, &changed.before));
            }
            html.push_str(&block(
                &format!("After version {}", version.unwrap_or_default()),
                &changed.after,
            ));
        }
    }
    Ok(html)
}

/// Where it is, its version, and to those who see its history who made it
/// and who changed it last.
fn summary_html(view: &EntityView) -> String {
    let page = app_page_path(&view.app);
    let tombstone = if view.history.as_ref().is_some_and(|h| h.tombstoned) {
        " <span class=\"tag trashed\">tombstoned</span>"
    } else {
        ""
    };
    let alias = view
        .alias
        .as_deref()
        .map(|alias| format!(" · alias <code>{}</code>", escape(alias)))
        .unwrap_or_default();
    let via = |via: &Option<String>| {
        via.as_deref()
            .map(|via| format!(" via {}", escape(via)))
            .unwrap_or_default()
    };
    let made = view
        .history
        .as_ref()
        .map(|record| {
            format!(
                "<p class=\"meta\">Made {} by {}{} · changed last {} by {}{}</p>\n",
                moment_text(&record.created.at),
                escape(&person_named(&record.created.by)),
                via(&record.created.via),
                moment_text(&record.updated.at),
                escape(&person_named(&record.updated.by)),
                via(&record.updated.via),
            )
        })
        .unwrap_or_default();
    format!(
        "<p class=\"meta\"><a href=\"{page}\">{app}</a> · <a href=\"{page}/data\">Data</a> · \
         <a href=\"{page}/activity\">Activity</a></p>\n\
         <p class=\"meta\"><code>{eid}</code>{alias} · version {version}{tombstone}</p>\n{made}",
        app = escape(&view.app),
        eid = escape(&view.eid),
        version = view.version,
    )
}

/// A cell as HTML: nothing, a ref linked to its entity by name, text, or
/// the start of a long text linked to `whole`, the page of it whole.
pub(super) fn cell_html(app: &str, shown: &Cell, whole: &str) -> String {
    match shown {
        Cell::Empty => "<span class=\"meta\">—</span>".to_string(),
        Cell::Value(value) => escape(value),
        Cell::Cut { shown, chars } => format!(
            "{}… <a class=\"whole\" href=\"{}\">whole ({chars} characters)</a>",
            escape(shown),
            escape(whole)
        ),
        Cell::Ref { eid, name } => format!(
            "<a href=\"{}\">{}</a>",
            entity_path(app, eid),
            escape(name.as_deref().unwrap_or(eid))
        ),
    }
}

/// Its components now, a small table each; or that it is tombstoned.
fn now_html(view: &EntityView, components: &[(String, Vec<(String, Cell)>)]) -> String {
    let mut html = String::from("<section id=\"now\"><h2>Now</h2>\n");
    if view.now.is_none() {
        // Only those who see its history read a tombstoned entity.
        html.push_str(
            "<p class=\"empty\">Tombstoned: it is deleted, and its history below is kept.</p>\n",
        );
    } else if components.is_empty() {
        html.push_str("<p class=\"empty\">It wears no component.</p>\n");
    }
    for (name, cells) in components {
        html.push_str(&format!(
            "<h3><code>{}</code></h3>\n<div class=\"table\"><table>\n<tbody>\n",
            escape(name)
        ));
        for (column, shown) in cells {
            let whole = whole_path(&view.app, &view.eid, &format!("{name}.{column}"), None);
            html.push_str(&format!(
                "<tr><th scope=\"row\">{}</th><td>{}</td></tr>\n",
                escape(column),
                cell_html(&view.app, shown, &whole)
            ));
        }
        html.push_str("</tbody></table></div>\n");
    }
    html.push_str("</section>\n");
    html
}

/// Its edges out and in, each linked to the entity at its other end.
fn edges_html(view: &EntityView) -> String {
    let list = |edges: &[Edge], arrow: &str| -> String {
        if edges.is_empty() {
            return "<p class=\"empty\">None.</p>\n".to_string();
        }
        let rows: String = edges
            .iter()
            .map(|edge| {
                format!(
                    "<li><div class=\"what\"><code>{}</code> {arrow} <a href=\"{}\"><code>{}</code></a></div></li>\n",
                    escape(&edge.rel),
                    entity_path(&view.app, &edge.eid),
                    escape(short_eid(&edge.eid))
                )
            })
            .collect();
        format!("<ul class=\"rows\">\n{rows}</ul>\n")
    };
    let (out, into) = view
        .history
        .as_ref()
        .map_or((&[][..], &[][..]), |h| (&h.edges_out[..], &h.edges_in[..]));
    format!(
        "<section id=\"edges\"><h2>Edges</h2>\n<h3>Out</h3>\n{}<h3>In</h3>\n{}</section>\n",
        list(out, "→"),
        list(into, "←"),
    )
}

/// Its history, newest first: each of `versions` with its write, who and
/// how, what it changed, and its Undo button where the caller may undo —
/// drawn until the page (`drawn` bytes before it) holds
/// [`MOST_PAGE_BYTES`], the rest listed as links to each alone. To one who
/// sees no history, whose it is.
fn history_html(view: &EntityView, versions: &[Version], drawn: usize) -> String {
    let mut html = String::from("<section id=\"history\"><h2>History</h2>\n");
    let Some(record) = &view.history else {
        html.push_str(&format!(
            "<p class=\"empty\">Its history is shown to the members of {}.</p>\n</section>\n",
            escape(&view.space)
        ));
        return html;
    };
    let one = versions.len() == 1 && record.versions.len() > 1;
    if one {
        html.push_str(&format!(
            "<p class=\"meta\">One version alone · <a href=\"{}\">All versions</a></p>\n",
            entity_path(&view.app, &view.eid)
        ));
    }
    html.push_str("<ul class=\"rows\">\n");
    let mut rest: &[Version] = &[];
    for (at, version) in versions.iter().enumerate() {
        if drawn + html.len() > MOST_PAGE_BYTES {
            rest = &versions[at..];
            break;
        }
        html.push_str(&version_row(view, version));
    }
    html.push_str("</ul>\n");
    if !rest.is_empty() {
        html.push_str(&format!(
            "<p class=\"meta\">{} more versions, their changes not drawn here (a page draws at \
             most {} KB): open one alone.</p>\n<ul class=\"rows\">\n",
            rest.len(),
            MOST_PAGE_BYTES / 1024
        ));
        for version in rest {
            html.push_str(&format!(
                "<li data-version=\"{number}\"><div class=\"what\"><a href=\"{path}?version={number}\">\
                 v{number}</a> · {write} · {at}</div></li>\n",
                number = version.version,
                path = entity_path(&view.app, &view.eid),
                write = escape(&version.write),
                at = moment_text(&version.stamp.at),
            ));
        }
        html.push_str("</ul>\n");
    }
    if record.older_versions > 0 && !one {
        html.push_str(&format!(
            "<p class=\"meta\">and {} older versions, not shown.</p>\n",
            record.older_versions
        ));
    }
    if !view.may_undo {
        html.push_str(
            "<p class=\"empty\">An owner or editor of this app's space can undo a write here.</p>\n",
        );
    }
    html.push_str("</section>\n");
    html
}

/// One version as a row.
fn version_row(view: &EntityView, version: &Version) -> String {
    let stamp = &version.stamp;
    let mut how = vec![format!(
        "{} by {}",
        moment_text(&stamp.at),
        escape(&person_named(&stamp.by))
    )];
    if let Some(via) = &stamp.via {
        how.push(escape(via));
    }
    if let Some(through) = &version.through {
        how.push(format!("door {}", escape(&through.door)));
        if let Some(command) = &through.command {
            how.push(format!("command {}", escape(command)));
        }
        // A job's client is the job its `via` already names.
        if let Some(client) = &through.client
            && job_of(stamp.via.as_deref()) != Some(client)
        {
            how.push(format!("client {}", escape(client)));
        }
    }
    let changes: String = version
        .changed
        .iter()
        .map(|change| change_html(view, version.version, change))
        .collect();
    let button = if view.may_undo {
        let action = format!("{}/undo", entity_path(&view.app, &view.eid));
        undo_button(&action, &version.write)
    } else {
        String::new()
    };
    format!(
        "<li data-version=\"{number}\"><div class=\"what\"><strong>v{number}</strong> · {write}\
         <div class=\"meta\">{how}</div><ul class=\"changes\">{changes}</ul></div>{button}</li>\n",
        number = version.version,
        write = escape(&version.write),
        how = how.join(" · "),
    )
}

/// One field version `version` changed: `jog.miles: 3 → 5`.
fn change_html(view: &EntityView, version: u64, change: &Changed) -> String {
    let whole = whole_path(&view.app, &view.eid, &change.field, Some(version));
    format!(
        "<li><code>{}</code>: {} → {}</li>",
        escape(&change.field),
        if change.before_unread {
            format!(
                "<span class=\"meta\">{}</span>",
                shed_host::entity::UNREAD_BEFORE
            )
        } else {
            cell_html(&view.app, &cell(&change.before), &whole)
        },
        cell_html(&view.app, &cell(&change.after), &whole),
    )
}
