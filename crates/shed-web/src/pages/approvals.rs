//! The approvals pages: `/approvals`, what the signed-in person's agents
//! asked that waits for them (who asked — a job, a client —, the command,
//! its arguments as they will run, when it expires), and
//! `/approvals/<id>`, one of them with Approve and Deny. A decision is a
//! POST answered by a redirect to the approval's page (a reload repeats
//! nothing); the host decides it once ([`shed_host::Host::decide_approval`]),
//! and to anybody but its person an approval is what a missing one is (404).
//! Also the header's badge: [`count_waiting`] counts the person's waiting
//! approvals once a request, and [`badge`] draws it.

use std::sync::Arc;

use axum::extract::rejection::FormRejection;
use axum::extract::{Form, FromRequestParts, Path, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use shed_host::approvals::ApprovalShown;

use super::moments::moment_seconds;
use super::{Here, Outcome, Posted, Visited, fields, header_html, refusal_page, required};
use crate::caller::WebCaller;
use crate::door::Door;
use crate::reply::{escape, product_page};

/// Where the person's approvals are listed.
pub const APPROVALS_PATH: &str = "/approvals";

tokio::task_local! {
    /// The signed-in person's approvals waiting, for this request's header.
    static WAITING: i64;
}

/// Counts the signed-in person's waiting approvals for the header every
/// page of theirs draws ([`badge`]) — not for the pages' script, which
/// draws none; nobody signed in has none.
pub(crate) async fn count_waiting(
    State(door): State<Arc<Door>>,
    request: Request,
    next: Next,
) -> Response {
    // The pages' script draws no header: no caller read, no count.
    if request.uri().path() == crate::PAGES_JS_PATH {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    let waiting = match WebCaller::from_request_parts(&mut parts, &door).await {
        Ok(asking) => door
            .host
            .approvals_waiting(&asking.caller)
            .await
            .unwrap_or(0),
        Err(_) => 0,
    };
    let request = Request::from_parts(parts, body);
    WAITING.scope(waiting, next.run(request)).await
}

/// The header's link to the approvals, with the count waiting when any.
pub(crate) fn badge() -> String {
    let waiting = WAITING.try_with(|n| *n).unwrap_or(0);
    let count = if waiting > 0 {
        format!(" <span class=\"badge\" aria-label=\"{waiting} waiting\">{waiting}</span>")
    } else {
        String::new()
    };
    format!("Approvals{count}")
}

/// `/approvals`: what waits for the signed-in person.
pub(super) async fn approvals(
    State(door): State<Arc<Door>>,
    Visited { asking, person, .. }: Visited,
) -> Response {
    let header = header_html(&person, Here::Approvals);
    let waiting = match door.host.pending_approvals(&asking.caller).await {
        Ok(waiting) => waiting,
        Err(error) => return refusal_page("Approvals", &header, Outcome::Nothing, error, None),
    };
    let mut body = String::from("<section id=\"approvals\"><h2>Waiting for you</h2>\n");
    if waiting.is_empty() {
        body.push_str(
            "<p class=\"empty\">Nothing waits for your approval. When an agent asks to run a \
             command that needs it, it waits here until you approve or deny it.</p>\n",
        );
    } else {
        body.push_str("<ul class=\"rows\">\n");
        for approval in &waiting {
            body.push_str(&row(approval));
        }
        body.push_str("</ul>\n");
    }
    body.push_str("</section>\n");
    product_page(StatusCode::OK, "Approvals", &header, &body)
}

fn row(approval: &ApprovalShown) -> String {
    format!(
        "<li data-approval=\"{id}\"><div class=\"what\"><a href=\"{APPROVALS_PATH}/{id}\"><strong>{command}</strong></a> in <code>{app}</code>\
         <div class=\"meta\">asked by {by} · expires {expires}</div>\
         <pre>{args}</pre></div>{decide}</li>\n",
        id = approval.id,
        command = escape(&approval.command),
        app = escape(&approval.app),
        by = escape(&approval.asked_by),
        expires = moment_seconds(approval.expires_at),
        args = escape(&approval.args),
        decide = decide_form(approval.id),
    )
}

fn decide_form(id: i64) -> String {
    format!(
        "<form class=\"acts\" method=\"post\" action=\"{APPROVALS_PATH}/{id}\">\
         <button class=\"primary\" type=\"submit\" name=\"decision\" value=\"approve\">Approve</button>\
         <button class=\"danger\" type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></form>"
    )
}

/// `/approvals/<id>`: one approval, decided or not.
pub(super) async fn approval(
    State(door): State<Arc<Door>>,
    Visited { asking, person, .. }: Visited,
    Path(id): Path<i64>,
) -> Response {
    let header = header_html(&person, Here::Approvals);
    let title = format!("Approval {id}");
    let approval = match door.host.approval(&asking.caller, id).await {
        Ok(approval) => approval,
        Err(error) => {
            let back = Some((APPROVALS_PATH, "Your approvals"));
            return refusal_page(&title, &header, Outcome::Nothing, error, back);
        }
    };
    let state = approval.state;
    let now = match (state, &approval.outcome) {
        ("pending", _) => decide_form(id),
        ("approved", Some(outcome)) => format!(
            "<p class=\"note\" role=\"status\">Approved — {}</p>",
            escape(outcome)
        ),
        ("approved", None) => "<p class=\"note\" role=\"status\">Approved.</p>".to_string(),
        ("denied", _) => {
            "<p class=\"note\" role=\"status\">Denied: nothing was written.</p>".to_string()
        }
        _ => "<p class=\"empty\">It expired before you answered: nothing was written.</p>"
            .to_string(),
    };
    // Only a pending approval has an expiry still to come.
    let expires = match state {
        "pending" => format!(" · expires {}", moment_seconds(approval.expires_at)),
        _ => String::new(),
    };
    let body = format!(
        "<section><h2>{command} in <code>{app}</code> <span class=\"tag {state}\">{state}</span></h2>\
         <p class=\"meta\">asked by {by} · asked {asked}{expires}</p>\
         <pre>{args}</pre>{now}</section>\n<p><a href=\"{APPROVALS_PATH}\">Your approvals</a></p>\n",
        command = escape(&approval.command),
        app = escape(&approval.app),
        by = escape(&approval.asked_by),
        asked = moment_seconds(approval.created_at),
        args = escape(&approval.args),
    );
    product_page(StatusCode::OK, &title, &header, &body)
}

/// A decision: approve or deny.
#[derive(serde::Deserialize)]
pub(super) struct Decision {
    decision: Option<String>,
}

/// A POST to `/approvals/<id>`: approved or denied, then back to its page
/// (a redirect, so a reload repeats nothing); refused with its sentence.
pub(super) async fn decide(
    State(door): State<Arc<Door>>,
    Posted { asking, person, .. }: Posted,
    Path(id): Path<i64>,
    form: Result<Form<Decision>, FormRejection>,
) -> Response {
    let decided = async {
        let decision = required(fields(form)?.decision, "approve or deny")?;
        let approve = match decision.as_str() {
            "approve" => true,
            "deny" => false,
            other => {
                return Err(shed_host::HostError::BadInput(format!(
                    "the decision is approve or deny, not {other} — press one of the buttons"
                )));
            }
        };
        door.host.decide_approval(&asking.caller, id, approve).await
    }
    .await;
    match decided {
        Ok(_) => Redirect::to(&format!("{APPROVALS_PATH}/{id}")).into_response(),
        Err(error) => {
            let header = header_html(&person, Here::Approvals);
            let back = Some((APPROVALS_PATH, "Your approvals"));
            refusal_page(
                &format!("Approval {id}"),
                &header,
                Outcome::Nothing,
                error,
                back,
            )
        }
    }
}
