//! The agents page: the person's jobs, each linked to what it did (its
//! activity), each running one with End.

use std::sync::Arc;

use axum::extract::rejection::FormRejection;
use axum::extract::{Form, State};
use axum::response::{IntoResponse, Response};
use shed_host::agents::Job;
use shed_host::{Caller, Person};

use super::apps::code_list;
use super::moments::when_millis;
use super::{
    ACTIVITY_PATH, AGENTS_PATH, END_JOB_PATH, Here, Outcome, Posted, Visited, fields, header_html,
    required,
};
use crate::door::Door;
use crate::reply::{escape, product_page};

/// The agents page: the person's jobs, each running one with End.
pub(super) async fn agents(
    State(door): State<Arc<Door>>,
    Visited {
        asking,
        person,
        said,
    }: Visited,
) -> Response {
    agents_page(&door, &asking.caller, &person, said).await
}

async fn agents_page(door: &Door, caller: &Caller, person: &Person, said: Outcome) -> Response {
    let jobs = match door.host.own_jobs(caller).await {
        Ok(jobs) => jobs,
        Err(error) => return crate::reply::Refusal::page(error).into_response(),
    };
    let mut body = said.html();
    body.push_str("<section id=\"jobs\"><h2>Jobs</h2>\n");
    if jobs.is_empty() {
        body.push_str(&format!(
            "<p class=\"empty\">No jobs. A job lets an agent run commands for you, within a scope \
             and until a time; whoever runs this shed starts one with \
             <code>shed job create --person {} --allow '&lt;space&gt;/&lt;app&gt;.*'</code>.</p>\n",
            escape(&person.handle)
        ));
    } else {
        body.push_str("<ul class=\"rows\">\n");
        let now = shed_host::agents::now_millis();
        for job in jobs.iter().rev() {
            body.push_str(&job_row(job, now));
        }
        body.push_str("</ul>\n");
    }
    body.push_str("</section>\n");
    product_page(
        said.status(),
        "Agents",
        &header_html(person, Here::Agents),
        &body,
    )
}

fn job_row(job: &Job, now: i64) -> String {
    let state = job.state(now).as_str();
    let scope = if job.allow.is_empty() && job.read_only.is_empty() {
        "every command you reach".to_string()
    } else {
        code_list(&job.allow)
    };
    let name = escape(&job.name);
    let end = if state == "running" {
        format!(
            "<form method=\"post\" action=\"{END_JOB_PATH}\"><input type=\"hidden\" name=\"job\" value=\"{name}\">\
             <button class=\"danger\" type=\"submit\" aria-label=\"End {name}\">End</button></form>"
        )
    } else {
        String::new()
    };
    format!(
        "<li data-job=\"{name}\"><div class=\"what\"><strong>{name}</strong> <span class=\"tag {state}\">{state}</span>\
         <div class=\"meta\">Scope: {scope} · read-only grants: {read_only}</div>\
         <div class=\"meta\">started {started} · until {until}{ended}</div>\
         <div class=\"meta\"><a href=\"{ACTIVITY_PATH}?job={name}\">What {name} did</a></div></div>{end}</li>\n",
        read_only = code_list(&job.read_only),
        started = when_millis(Some(job.created_at), "never"),
        until = when_millis(job.expires_at, "no end"),
        ended = job
            .ended_at
            .map(|at| format!(" · ended {}", when_millis(Some(at), "")))
            .unwrap_or_default(),
    )
}

/// A job to end.
#[derive(serde::Deserialize)]
pub(super) struct JobChoice {
    job: Option<String>,
}

pub(super) async fn end_job(
    State(door): State<Arc<Door>>,
    Posted {
        asking,
        person,
        notice,
    }: Posted,
    form: Result<Form<JobChoice>, FormRejection>,
) -> Response {
    let ended = async {
        let name = required(fields(form)?.job, "the job to end")?;
        let job = door.host.end_own_job(&asking.caller, &name).await?;
        Ok(format!(
            "Ended {}: its agent runs nothing more.",
            escape(&job.name)
        ))
    }
    .await;
    match ended {
        Ok(html) => notice.land(&door, AGENTS_PATH, &html, None),
        Err(error) => agents_page(&door, &asking.caller, &person, Outcome::Refused(error)).await,
    }
}
