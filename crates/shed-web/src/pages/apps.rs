//! The app rows home and a space's page list: each app's title (to its own
//! page), access, version, last deploy and commands, or the trash mark and
//! Restore; and [`code_list`], words as code, which the agents page
//! and an app's page use too.

use shed_host::answer::{AppOfMine, SpaceApp};

use super::moments::ago_text;
use crate::reply::escape;

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
            format!("Commands: {}", code_list(&app.commands)),
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

/// Words as code, one `<code>` each, space-separated; `none` when there
/// are none: an app's commands, a job's globs.
pub(crate) fn code_list(words: &[String]) -> String {
    if words.is_empty() {
        return "none".to_string();
    }
    words
        .iter()
        .map(|word| format!("<code>{}</code>", escape(word)))
        .collect::<Vec<_>>()
        .join(" ")
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
