//! The home page, signed in: the person's spaces and their apps, and how to
//! connect an agent — and making a token, shown there once.

use std::sync::Arc;

use axum::extract::rejection::FormRejection;
use axum::extract::{Form, State};
use axum::response::{IntoResponse, Response};
use shed_host::{Caller, Person, person_named};

use super::apps::app_rows;
use super::{Here, MAKE_TOKEN_PATH, Outcome, Posted, fields, header_html, required};
use crate::door::Door;
use crate::reply::{escape, product_page};

/// The home page, signed in: the person's spaces and their apps, and how
/// to connect an agent (with `token`, just made, once).
pub(crate) async fn home(
    door: &Door,
    caller: &Caller,
    person: &Person,
    said: Outcome,
    token: Option<&str>,
) -> Response {
    let spaces = match door.host.spaces(caller).await {
        Ok(answer) => answer.data,
        Err(error) => return crate::reply::Refusal::page(error).into_response(),
    };
    // Every app of the person's spaces, those in the trash too (restoring
    // one needs a way in).
    let apps = match door.host.apps(caller).await {
        Ok(answer) => answer.data.apps,
        Err(error) => return crate::reply::Refusal::page(error).into_response(),
    };
    let mut body = format!(
        "<p class=\"meta\">You are signed in as {}.</p>\n{}",
        escape(&person_named(person)),
        said.html()
    );
    body.push_str("<section id=\"spaces\"><h2>Your spaces</h2>\n");
    if spaces.spaces.is_empty() {
        body.push_str(
            "<p class=\"empty\">You belong to no space yet. An owner of a space can invite you \
             from its page here; whoever runs this shed can make you one with \
             <code>shed space add &lt;slug&gt; --owner &lt;your handle&gt;</code>.</p>\n",
        );
    }
    for space in &spaces.spaces {
        body.push_str(&format!(
            "<div class=\"card\"><h3><a href=\"/spaces/{slug}\">{slug}</a> <span class=\"tag\">{role}</span></h3>\n",
            slug = escape(&space.space),
            role = escape(space.role)
        ));
        body.push_str(&app_rows(&apps, &space.space));
        body.push_str("</div>\n");
    }
    body.push_str("</section>\n");
    body.push_str(&connect_section(door, token));
    product_page(
        said.status(),
        "Home",
        &header_html(person, Here::Home),
        &body,
    )
}

/// "Connect your agent": the MCP address, the line for a hosted client,
/// and a client configuration — with the token just made, if one was.
fn connect_section(door: &Door, token: Option<&str>) -> String {
    let mcp = door.host.mcp_resource();
    let bearer = token.map_or_else(|| "&lt;your token&gt;".to_string(), escape);
    let config = format!(
        "{{\n  \"mcpServers\": {{\n    \"shed\": {{\n      \"type\": \"http\",\n      \"url\": \"{mcp}\",\n      \
         \"headers\": {{\n        \"Authorization\": \"Bearer {bearer}\"\n      }}\n    }}\n  }}\n}}",
        mcp = escape(&mcp)
    );
    format!(
        "<section id=\"connect\"><h2>Connect your agent</h2>\n\
         <p>The MCP address of this shed:</p>\n\
         <div class=\"copyable\"><code id=\"mcp-url\">{mcp}</code>\
         <button type=\"button\" data-copy=\"mcp-url\">Copy</button></div>\n\
         <p><strong>A hosted client</strong> (one that adds a remote MCP server by its URL): give it \
         this address. It signs in by itself — you confirm it here once, and it shows under \
         connected clients on your account.</p>\n\
         <p><strong>A client that takes a token</strong>: make one, named for the client, and \
         paste this configuration into it.</p>\n\
         <form class=\"inline\" method=\"post\" action=\"{MAKE_TOKEN_PATH}\">\
         <label>Token name <input name=\"name\" required maxlength=\"100\" placeholder=\"laptop claude\"></label>\
         <button class=\"primary\" type=\"submit\">Make a token</button></form>\n\
         <div class=\"copyable\"><pre id=\"client-config\">{config}</pre>\
         <button type=\"button\" data-copy=\"client-config\">Copy</button></div>\n</section>\n",
        mcp = escape(&mcp),
    )
}

/// The name of a token to make.
#[derive(serde::Deserialize)]
pub(super) struct TokenName {
    name: Option<String>,
}

/// "Make a token": on to the home page, the token on it once.
pub(super) async fn make_token(
    State(door): State<Arc<Door>>,
    Posted {
        asking,
        person,
        notice,
    }: Posted,
    form: Result<Form<TokenName>, FormRejection>,
) -> Response {
    let made = async {
        let name = required(fields(form)?.name, "the token's name")?;
        let token = door.host.make_own_token(&asking.caller, &name).await?;
        tracing::info!(person = %person.handle, "made a token on the home page");
        Ok((name, token))
    }
    .await;
    match made {
        Ok((name, token)) => {
            let html = format!(
                "Your token {} — copy it now; it is shown this once:</p>\n\
                 <div class=\"copyable once\"><code id=\"token\">{}</code>\
                 <button type=\"button\" data-copy=\"token\">Copy</button></div><p class=\"meta\">\
                 The client configuration under Connect your agent carries it.",
                escape(&name),
                escape(&token)
            );
            notice.land(&door, "/", &html, Some(&token))
        }
        Err(error) => {
            home(
                &door,
                &asking.caller,
                &person,
                Outcome::Refused(error),
                None,
            )
            .await
        }
    }
}
