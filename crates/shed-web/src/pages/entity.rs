//! An entity's page, `/spaces/<space>/apps/<app>/data/<eid>`: its
//! components now, its edges both ways, and its history newest first —
//! each version with its write (`demo/runs@12`), when, who, which agent
//! or door, command and client, and what it changed, field by field
//! (before → after). To those the rule book lets undo (the app's owners
//! and editors) each version carries an Undo button: a POST form to
//! `…/<eid>/undo`, taken only from this host's own pages (`Posted`),
//! answered with this page and the host's sentence on top. What is shown,
//! and whether an undo may be made, is `Host::entity`'s and `Host::undo`'s.

use std::sync::Arc;

use axum::extract::rejection::FormRejection;
use axum::extract::{Form, Path, State};
use axum::response::Response;
use shed_host::app_data::{Cell, Changed, Edge, Version, cell, components_of};
use shed_host::entity::EntityView;
use shed_host::{Caller, Person};

use super::activity::{UndoChoice, entity_path, moment, undo_button, undo_posted};
use super::apps::app_page_path;
use super::{Here, Outcome, Posted, Visited, header_html, refusal_page};
use crate::door::Door;
use crate::reply::{escape, product_page};
use shed_host::activity::job_of;

/// `GET /spaces/<space>/apps/<app>/data/<eid>`.
pub(super) async fn entity(
    State(door): State<Arc<Door>>,
    Path((space, app, eid)): Path<(String, String, String)>,
    Visited { asking, person }: Visited,
) -> Response {
    let app = format!("{space}/{app}");
    entity_page(&door, &asking.caller, &person, &app, &eid, Outcome::Nothing).await
}

/// `POST /spaces/<space>/apps/<app>/data/<eid>/undo`: undo the write the
/// form names, then the entity's page with the host's sentence on top.
pub(super) async fn undo(
    State(door): State<Arc<Door>>,
    Path((space, app, eid)): Path<(String, String, String)>,
    Posted { asking, person }: Posted,
    form: Result<Form<UndoChoice>, FormRejection>,
) -> Response {
    let app = format!("{space}/{app}");
    let undone = undo_posted(&door, &asking.caller, &person, form).await;
    entity_page(
        &door,
        &asking.caller,
        &person,
        &app,
        &eid,
        Outcome::of(undone),
    )
    .await
}

/// The page of entity `eid` of `app` as the caller sees it, `said` on top.
async fn entity_page(
    door: &Door,
    caller: &Caller,
    person: &Person,
    app: &str,
    eid: &str,
    said: Outcome,
) -> Response {
    let header = header_html(person, Here::Space);
    let view = match door.host.entity(caller, app, eid).await {
        Ok(answer) => answer.data,
        Err(error) => {
            let back = (
                format!("{}/data", app_page_path(app)),
                format!("Back to the data of {app}"),
            );
            return refusal_page(
                &format!("Entity of {app}"),
                &header,
                said,
                error,
                Some((&back.0, &back.1)),
            );
        }
    };
    let components = view.now.as_ref().map(components_of).unwrap_or_default();
    let title = components
        .iter()
        .find(|(name, _)| name == "doc")
        .and_then(|(_, cells)| cells.iter().find(|(column, _)| column == "title"))
        .and_then(|(_, title)| match title {
            Cell::Value(title) => Some(title.clone()),
            _ => None,
        })
        .or_else(|| view.record.alias.clone())
        .unwrap_or_else(|| format!("Entity {}", short(&view.record.eid)));
    let mut body = said.html();
    body.push_str(&summary_html(&view));
    body.push_str(&now_html(&view, &components));
    body.push_str(&edges_html(&view));
    body.push_str(&history_html(&view));
    product_page(said.status(), &title, &header, &body)
}

/// The first eight digits of an eid, as a link's words.
fn short(eid: &str) -> &str {
    eid.get(..8).unwrap_or(eid)
}

/// Where it is, its version, who made it and who changed it last.
fn summary_html(view: &EntityView) -> String {
    let record = &view.record;
    let page = app_page_path(&view.app);
    let tombstone = if record.tombstoned {
        " <span class=\"tag trashed\">tombstoned</span>"
    } else {
        ""
    };
    let alias = record
        .alias
        .as_deref()
        .map(|alias| format!(" · alias <code>{}</code>", escape(alias)))
        .unwrap_or_default();
    let via = |via: &Option<String>| {
        via.as_deref()
            .map(|via| format!(" via {}", escape(via)))
            .unwrap_or_default()
    };
    format!(
        "<p class=\"meta\"><a href=\"{page}\">{app}</a> · <a href=\"{page}/data\">Data</a> · \
         <a href=\"{page}/activity\">Activity</a></p>\n\
         <p class=\"meta\"><code>{eid}</code>{alias} · version {version}{tombstone}</p>\n\
         <p class=\"meta\">Made {} by {} (@{}){} · changed last {} by {} (@{}){}</p>\n",
        moment(&record.created.at),
        escape(&record.created.by.name),
        escape(&record.created.by.handle),
        via(&record.created.via),
        moment(&record.updated.at),
        escape(&record.updated.by.name),
        escape(&record.updated.by.handle),
        via(&record.updated.via),
        app = escape(&view.app),
        eid = escape(&record.eid),
        version = record.version,
    )
}

/// A cell as HTML: nothing, a ref linked to its entity by name, or text.
fn cell_html(app: &str, shown: &Cell) -> String {
    match shown {
        Cell::Empty => "<span class=\"meta\">—</span>".to_string(),
        Cell::Value(value) => escape(value),
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
            html.push_str(&format!(
                "<tr><th scope=\"row\">{}</th><td>{}</td></tr>\n",
                escape(column),
                cell_html(&view.app, shown)
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
                    escape(short(&edge.eid))
                )
            })
            .collect();
        format!("<ul class=\"rows\">\n{rows}</ul>\n")
    };
    format!(
        "<section id=\"edges\"><h2>Edges</h2>\n<h3>Out</h3>\n{}<h3>In</h3>\n{}</section>\n",
        list(&view.record.edges_out, "→"),
        list(&view.record.edges_in, "←"),
    )
}

/// Its history, newest first: each version's write, who and how, what it
/// changed, and its Undo button where the caller may undo.
fn history_html(view: &EntityView) -> String {
    let mut html = String::from("<section id=\"history\"><h2>History</h2>\n<ul class=\"rows\">\n");
    for version in &view.record.versions {
        html.push_str(&version_row(view, version));
    }
    html.push_str("</ul>\n");
    if view.record.older_versions > 0 {
        html.push_str(&format!(
            "<p class=\"meta\">and {} older versions, not shown.</p>\n",
            view.record.older_versions
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
        "{} by {} (@{})",
        moment(&stamp.at),
        escape(&stamp.by.name),
        escape(&stamp.by.handle)
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
        .map(|change| change_html(&view.app, change))
        .collect();
    let button = if view.may_undo {
        let action = format!("{}/undo", entity_path(&view.app, &view.record.eid));
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

/// One field it changed: `jog.miles: 3 → 5`.
fn change_html(app: &str, change: &Changed) -> String {
    format!(
        "<li><code>{}</code>: {} → {}</li>",
        escape(&change.field),
        cell_html(app, &cell(&change.before)),
        cell_html(app, &cell(&change.after)),
    )
}
