//! An app's data page, `/spaces/<space>/apps/<app>/data`: the kinds its
//! vocabulary declares, and for one (`?kind=jog`, the first by default)
//! its rows in a table — the title, a column per field (a ref shown as the
//! name it points at, linked to its page; a long value cut, linked to the
//! entity's page of it whole), and to those who see the app's history who
//! created and last changed each row and via what — each row linked to its
//! entity's page, paged by the store's keyset cursor (`after=`, the
//! listing's `next`), drawn until the page holds `MOST_PAGE_BYTES` (the
//! rest of the page's rows listed as links to their entities). A search
//! box (`filter=`) takes words and clauses of a filter line (the grammar
//! `graph_query` takes) joined by `&`, mixed freely: a piece with no `.`
//! and no `=` is words, searched in the titles and bodies (`q=`); a line
//! the store refuses shows its sentence. What is read, and whether
//! it may be, is `Host::app_data`'s.

use std::sync::Arc;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use percent_encoding::{AsciiSet, CONTROLS, NON_ALPHANUMERIC, utf8_percent_encode};
use shed_host::HostError;
use shed_host::app_data::{AppData, Cell, DataKind, DataRow, DataRows, RowStamp};

use super::activity::entity_path;
use super::apps::app_page_path;
use super::entity::{MOST_PAGE_BYTES, cell_html, whole_path};
use super::moments::moment_text;
use super::{Here, Outcome, Visited, header_html, refusal_page};
use crate::door::Door;
use crate::reply::{escape, product_page, status_of};

/// The data page's query: the kind, the filter line, the cursor.
#[derive(serde::Deserialize, Default)]
pub(super) struct DataQuery {
    kind: Option<String>,
    filter: Option<String>,
    after: Option<String>,
}

/// `/spaces/<space>/apps/<app>/data`.
pub(super) async fn data(
    State(door): State<Arc<Door>>,
    Path((space, app)): Path<(String, String)>,
    Visited { asking, person, .. }: Visited,
    query: Result<Query<DataQuery>, QueryRejection>,
) -> Response {
    let name = format!("{space}/{app}");
    let header = header_html(&person, Here::Space);
    let title = format!("Data of {name}");
    let read = async {
        let Query(query) = query.map_err(|rejection| {
            HostError::BadInput(format!(
                "the address's query could not be read ({rejection}) — search with the page's form"
            ))
        })?;
        let filter = query.filter.unwrap_or_default();
        let answer = door
            .host
            .app_data(
                &asking.caller,
                &name,
                query.kind.as_deref(),
                &filter_line(&filter),
                query.after.as_deref(),
            )
            .await?;
        Ok::<_, HostError>((filter, answer.data))
    }
    .await;
    match read {
        Ok((filter, data)) => {
            let status = match &data.rows {
                Ok(_) => StatusCode::OK,
                Err(refused) => status_of(refused),
            };
            let body = page_html(&data, &filter);
            product_page(status, &format!("Data of {}", data.title), &header, &body)
        }
        Err(error) => {
            let back = (app_page_path(&name), format!("Back to {name}"));
            refusal_page(
                &title,
                &header,
                Outcome::Nothing,
                error,
                Some((&back.0, &back.1)),
            )
        }
    }
}

/// What a words piece's `%` is written as in the filter line, so the
/// store's percent-decoding gives the words back as typed.
const IN_WORDS: &AsciiSet = &CONTROLS.add(b'%');

/// The filter line the search box's text asks for: of its `&`-separated
/// pieces, each with no `.` and no `=` is words — all of them one
/// full-text search, `q=`, where the first stood — and every other a
/// clause, as written.
fn filter_line(searched: &str) -> String {
    let mut clauses: Vec<String> = Vec::new();
    let mut words: Vec<&str> = Vec::new();
    let mut words_at = None;
    for piece in searched.split('&').map(str::trim).filter(|p| !p.is_empty()) {
        if piece.contains('.') || piece.contains('=') {
            clauses.push(piece.to_string());
        } else {
            words_at.get_or_insert(clauses.len());
            words.push(piece);
        }
    }
    if let Some(at) = words_at {
        let words = utf8_percent_encode(&words.join(" "), IN_WORDS).to_string();
        clauses.insert(at, format!("q={words}"));
    }
    clauses.join("&")
}

/// A clause of `kind` for the search box's hint: on its first column, a
/// comparison its type takes; on a kind with no columns, its time made.
fn example_clause(kind: &DataKind) -> String {
    let Some((column, ty)) = kind.columns.first() else {
        return ".created.at>=2026-01-01".to_string();
    };
    let test = match *ty {
        "number" => ">=1",
        "bool" => "=true",
        "time" => ">=2026-01-01",
        "ref" => return format!(".{}!&.created.by=@you", kind.name),
        _ => "~a",
    };
    format!(".{}.{column}{test}", kind.name)
}

/// The address of the data page of `app` showing `kind` under `filter`,
/// after `after`.
fn data_path(app: &str, kind: &str, filter: &str, after: Option<&str>) -> String {
    let mut path = format!(
        "{}/data?kind={}",
        app_page_path(app),
        utf8_percent_encode(kind, NON_ALPHANUMERIC)
    );
    if !filter.trim().is_empty() {
        path.push_str(&format!(
            "&filter={}",
            utf8_percent_encode(filter.trim(), NON_ALPHANUMERIC)
        ));
    }
    if let Some(after) = after {
        path.push_str(&format!(
            "&after={}",
            utf8_percent_encode(after, NON_ALPHANUMERIC)
        ));
    }
    path
}

/// The page's body: where it is, the kinds, the search box, the table.
fn page_html(data: &AppData, filter: &str) -> String {
    let page = app_page_path(&data.app);
    let mut html = format!(
        "<p class=\"meta\"><a href=\"{page}\">{app}</a> · <a href=\"{page}/activity\">Activity</a></p>\n",
        app = escape(&data.app)
    );
    let Some(shown) = data
        .kind
        .as_deref()
        .and_then(|kind| data.kinds.iter().find(|k| k.name == kind))
    else {
        html.push_str(&format!(
            "<p class=\"empty\">{} declares no kinds in its <code>vocab.json</code>, so it keeps \
             no rows to show.</p>\n",
            escape(&data.app)
        ));
        return html;
    };
    html.push_str("<nav class=\"kinds\" aria-label=\"Kinds\">Kinds: ");
    for kind in &data.kinds {
        let current = if kind.name == shown.name {
            " aria-current=\"page\""
        } else {
            ""
        };
        html.push_str(&format!(
            "<a href=\"{}\"{current}><code>{}</code></a> ",
            escape(&data_path(&data.app, &kind.name, "", None)),
            escape(&kind.name)
        ));
    }
    html.push_str("</nav>\n");
    html.push_str(&format!(
        "<form class=\"inline\" method=\"get\" action=\"{page}/data\">\
         <input type=\"hidden\" name=\"kind\" value=\"{kind}\">\
         <label>Words or filter line <input name=\"filter\" value=\"{filter}\" placeholder=\"Ada &amp; {example}\" \
         aria-describedby=\"filter-hint\" autocomplete=\"off\" spellcheck=\"false\" maxlength=\"2000\"></label>\
         <button type=\"submit\">Search</button></form>\n\
         <p class=\"meta\" id=\"filter-hint\">A word searches the titles and bodies (<code>Ada</code>); \
         a clause filters (<code>{example}</code>); mix them with <code>&amp;</code>: \
         <code>Ada &amp; {example}</code>.</p>\n",
        kind = escape(&shown.name),
        filter = escape(filter),
        example = escape(&example_clause(shown)),
    ));
    match &data.rows {
        Err(refused) => html.push_str(&format!(
            "<p class=\"refused\" role=\"alert\">{}</p>\n",
            escape(&refused.to_string())
        )),
        Ok(rows) => html.push_str(&table(data, shown, filter, rows)),
    }
    html
}

/// The rows of `kind` as a table, and the link to the next page.
fn table(data: &AppData, kind: &DataKind, filter: &str, rows: &DataRows) -> String {
    if rows.rows.is_empty() {
        return format!(
            "<p class=\"empty\">No {} rows{}.</p>\n",
            escape(&kind.name),
            if filter.trim().is_empty() {
                ""
            } else {
                " match this line"
            }
        );
    }
    // A region of its own that takes the keyboard's focus, so a table wider
    // than the screen scrolls with the arrow keys too.
    let mut html = format!(
        "<div class=\"table\" role=\"region\" tabindex=\"0\" aria-label=\"{} rows\"><table>\n\
         <thead><tr><th scope=\"col\">#</th><th scope=\"col\">title</th>",
        escape(&kind.name)
    );
    for (column, ty) in &kind.columns {
        html.push_str(&format!(
            "<th scope=\"col\" title=\"{ty}\">{}</th>",
            escape(column)
        ));
    }
    let stamped = rows.rows.iter().any(|row| row.stamps.is_some());
    if stamped {
        html.push_str("<th scope=\"col\">created</th><th scope=\"col\">updated</th>");
    }
    html.push_str("</tr></thead>\n<tbody>\n");
    let mut rest: &[DataRow] = &[];
    for (at, row) in rows.rows.iter().enumerate() {
        if html.len() > MOST_PAGE_BYTES {
            rest = &rows.rows[at..];
            break;
        }
        html.push_str(&row_html(&data.app, kind, row));
    }
    html.push_str("</tbody></table></div>\n");
    if !rest.is_empty() {
        let links: Vec<String> = rest
            .iter()
            .map(|row| {
                format!(
                    "<a href=\"{}\">#{}</a>",
                    entity_path(&data.app, &row.eid),
                    row.num
                )
            })
            .collect();
        html.push_str(&format!(
            "<p class=\"meta\">{} more rows of this page, their values not drawn here (a page \
             draws at most {} KB): {}</p>\n",
            rest.len(),
            MOST_PAGE_BYTES / 1024,
            links.join(" ")
        ));
    }
    if let Some(next) = &rows.next {
        html.push_str(&format!(
            "<p><a rel=\"next\" href=\"{}\">Next page</a></p>\n",
            escape(&data_path(&data.app, &kind.name, filter, Some(next)))
        ));
    }
    html
}

/// One row: its number and title linked to its entity page, its cells
/// (a long one linked to its entity's page of it whole), its stamps.
fn row_html(app: &str, kind: &DataKind, row: &DataRow) -> String {
    let page = entity_path(app, &row.eid);
    let mut html = format!(
        "<tr data-eid=\"{eid}\"><td><a href=\"{page}\">#{num}</a></td><td>{title}</td>",
        eid = escape(&row.eid),
        num = row.num,
        title = row
            .title
            .as_deref()
            .map_or_else(String::new, |title| format!(
                "<a href=\"{page}\">{}</a>",
                escape(title)
            )),
    );
    for (cell, (column, _)) in row.cells.iter().zip(&kind.columns) {
        let shown = match cell {
            Cell::Empty => String::new(),
            cell => {
                let field = format!("{}.{column}", kind.name);
                cell_html(app, cell, &whole_path(app, &row.eid, &field, None))
            }
        };
        html.push_str(&format!("<td>{shown}</td>"));
    }
    if let Some((created, updated)) = &row.stamps {
        html.push_str(&format!(
            "<td class=\"stamp\">{}</td><td class=\"stamp\">{}</td>",
            stamp(created),
            stamp(updated)
        ));
    }
    html.push_str("</tr>\n");
    html
}

/// A stamp: when, who, and via what.
fn stamp(stamp: &RowStamp) -> String {
    let via = stamp
        .via
        .as_deref()
        .map(|via| format!(" via {}", escape(via)))
        .unwrap_or_default();
    format!(
        "{}<br><span class=\"meta\">by {}{via}</span>",
        moment_text(&stamp.at),
        escape(&stamp.by),
    )
}
