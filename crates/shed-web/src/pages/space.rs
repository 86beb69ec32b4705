//! A space's page: its apps, its members and their roles, and for an owner
//! the forms that invite, change and remove them.

use std::sync::Arc;

use axum::extract::rejection::FormRejection;
use axum::extract::{Form, Path, State};
use axum::response::{IntoResponse, Response};
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use shed_host::{Caller, HostError, Person, Role, SLUG_CHARS};

use super::apps::app_rows;
use super::notice::NoticeFor;
use super::{Here, Outcome, Posted, Visited, fields, header_html, required};
use crate::door::Door;
use crate::reply::{escape, product_page, status_of};

/// A space's page: its members, and for an owner the forms that change them.
pub(super) async fn space(
    State(door): State<Arc<Door>>,
    Path(space): Path<String>,
    Visited {
        asking,
        person,
        said,
    }: Visited,
) -> Response {
    space_page(
        &door,
        &asking.caller,
        &person,
        &space,
        said,
        &Typed::default(),
    )
    .await
}

/// What an invite form was sent with, kept in it when it is refused.
#[derive(Default)]
struct Typed {
    handle: String,
    role: Option<String>,
}

/// The page of `space`, `said` on top, its invite form holding `typed`.
async fn space_page(
    door: &Door,
    caller: &Caller,
    person: &Person,
    space: &str,
    said: Outcome,
    typed: &Typed,
) -> Response {
    let header = header_html(person, Here::Space);
    let seen = match door.host.space_members(caller, space).await {
        Ok(found) => found,
        Err(error) => {
            let status = status_of(&error);
            let body = Outcome::Refused(error).html();
            return product_page(status, space, &header, &body);
        }
    };
    let apps = match door.host.apps(caller).await {
        Ok(answer) => answer.data.apps,
        Err(error) => return crate::reply::Refusal::page(error).into_response(),
    };
    let owner = seen.may_manage;
    let action = format!("/spaces/{}", escape(space));
    let mut body = said.html();
    body.push_str(&format!(
        "<p class=\"meta\">Your role here: {} · <a href=\"{action}/activity\">Activity</a></p>\n<section id=\"apps\"><h2>Apps</h2>\n{}</section>\n\
         <section id=\"members\"><h2>Members</h2>\n<ul class=\"rows\">\n",
        seen.role.as_str(),
        app_rows(&apps, space)
    ));
    for member in &seen.members {
        let handle = escape(&member.person.handle);
        let their_role = member.role;
        body.push_str(&format!(
            "<li data-member=\"{handle}\"><div class=\"what\"><strong>{}</strong> <span class=\"meta\">@{handle}</span> \
             <span class=\"tag\">{}</span></div>",
            escape(&member.person.name),
            their_role.as_str()
        ));
        if owner && !member.may_change {
            body.push_str(
                "<div class=\"meta\">the last owner — make another owner before this one \
                 leaves or changes role</div>",
            );
        } else if owner {
            body.push_str(&format!(
                "<div class=\"acts\"><form class=\"inline\" method=\"post\" action=\"{action}\">\
                 <input type=\"hidden\" name=\"handle\" value=\"{handle}\">\
                 <select name=\"role\" aria-label=\"Role of {handle}\">{}</select>\
                 <button type=\"submit\">Change role</button></form>\
                 <form method=\"post\" action=\"{action}/remove\"><input type=\"hidden\" name=\"handle\" value=\"{handle}\">\
                 <button class=\"danger\" type=\"submit\" aria-label=\"Remove {handle}\">Remove</button></form></div>",
                role_options(their_role.as_str())
            ));
        }
        body.push_str("</li>\n");
    }
    body.push_str("</ul>\n</section>\n");
    if owner {
        let kept = if seen.members.iter().any(|m| m.person.handle == typed.handle) {
            &Typed::default()
        } else {
            typed
        };
        body.push_str(&format!(
            "<section id=\"invite\"><h2>Invite someone</h2>\n\
             <p>By handle. A handle new to this shed adds the person, and you get a one-time \
             sign-in link to send them.</p>\n\
             <form class=\"inline\" method=\"post\" action=\"{action}\">\
             <label>Handle <input name=\"handle\" required maxlength=\"{SLUG_CHARS}\" autocomplete=\"off\" \
             value=\"{}\"></label>\
             <label>Role <select name=\"role\">{}</select></label>\
             <button class=\"primary\" type=\"submit\">Invite</button></form>\n</section>\n",
            escape(&kept.handle),
            role_options(kept.role.as_deref().unwrap_or("editor"))
        ));
    } else {
        body.push_str(&format!(
            "<p class=\"empty\">Only an owner of {} invites people and changes their roles.</p>\n",
            escape(space)
        ));
    }
    product_page(said.status(), space, &header, &body)
}

/// The roles as a select's options, the one named `chosen` selected.
fn role_options(chosen: &str) -> String {
    Role::ALL
        .iter()
        .map(|role| {
            let selected = if role.as_str() == chosen {
                " selected"
            } else {
                ""
            };
            format!("<option{selected}>{}</option>", role.as_str())
        })
        .collect()
}

/// A member and, to make or change them, a role.
#[derive(serde::Deserialize)]
pub(super) struct MemberForm {
    handle: Option<String>,
    role: Option<String>,
}

/// Invite by handle, or change a member's role.
pub(super) async fn change_member(
    State(door): State<Arc<Door>>,
    Path(space): Path<String>,
    Posted {
        asking,
        person,
        notice,
    }: Posted,
    form: Result<Form<MemberForm>, FormRejection>,
) -> Response {
    let form = fields(form);
    let typed = match &form {
        Ok(form) => Typed {
            handle: form.handle.clone().unwrap_or_default(),
            role: form.role.clone(),
        },
        Err(_) => Typed::default(),
    };
    let changed = async {
        let form = form?;
        let handle = required(form.handle, "the person's handle")?;
        let role: Role = required(form.role, "the role")?
            .parse()
            .map_err(|e: shed_host::NotARole| HostError::BadInput(e.to_string()))?;
        let invited = door
            .host
            .invite_with_link(&asking.caller, &space, &handle, role)
            .await?;
        tracing::info!(by = %person.handle, space = %space, role = role.as_str(), "a member set on a space's page");
        let handle = escape(&invited.handle);
        Ok(match invited.link {
            Some(link) => format!(
                "@{handle} is new here, added as {role} — send them this sign-in link; it works \
                 once, for ten minutes:</p>\n<div class=\"copyable once\"><code id=\"invite-link\">{}</code>\
                 <button type=\"button\" data-copy=\"invite-link\">Copy</button></div><p class=\"meta\">\
                 Once signed in, they can add a passkey on their account page and sign in with it from then on.",
                escape(&link.url),
                role = role.as_str()
            ),
            None => format!(
                "@{handle} is now {} of {}.",
                role.as_str(),
                escape(&space)
            ),
        })
    }
    .await;
    let caller = &asking.caller;
    landed_on_space(&door, caller, &person, &space, &notice, changed, &typed).await
}

/// A member to take out.
#[derive(serde::Deserialize)]
pub(super) struct MemberChoice {
    handle: Option<String>,
}

pub(super) async fn remove_member(
    State(door): State<Arc<Door>>,
    Path(space): Path<String>,
    Posted {
        asking,
        person,
        notice,
    }: Posted,
    form: Result<Form<MemberChoice>, FormRejection>,
) -> Response {
    let removed = async {
        let handle = required(fields(form)?.handle, "the member to remove")?;
        let role = door
            .host
            .remove_member(Some(&asking.caller), &space, &handle)
            .await?;
        Ok(format!(
            "@{} ({}) is no longer a member of {}.",
            escape(&handle),
            role.as_str(),
            escape(&space)
        ))
    }
    .await;
    let (caller, typed) = (&asking.caller, &Typed::default());
    landed_on_space(&door, caller, &person, &space, &notice, removed, typed).await
}

/// A member form's answer: done, on to the space's page with what it did;
/// refused, the page at once with the sentence, the invite form holding
/// what was `typed`.
async fn landed_on_space(
    door: &Door,
    caller: &Caller,
    person: &Person,
    space: &str,
    notice: &NoticeFor,
    done: Result<String, HostError>,
    typed: &Typed,
) -> Response {
    match done {
        Ok(html) => notice.land(door, &space_path(space), &html, None),
        Err(error) => {
            let said = Outcome::Refused(error);
            space_page(door, caller, person, space, said, typed).await
        }
    }
}

/// The address of a space's page.
pub(crate) fn space_path(space: &str) -> String {
    format!("/spaces/{}", utf8_percent_encode(space, NON_ALPHANUMERIC))
}
