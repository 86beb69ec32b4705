//! `apps.list`: the apps of the caller's spaces, for the person the job acts
//! for only (its `person` input is filled by the host from the job, and
//! checked here).

use serde_json::json;

use super::body::{BuiltinCommand, Invocation};
use super::row::{BuiltinRow, Declarations};
use crate::HostError;
use crate::access::sign_in_first;
use crate::agents::command::{Effect, Scope};
use crate::answer::Answer;
use crate::names::shown;

pub(super) struct AppsList;

impl BuiltinCommand for AppsList {
    const ROW: BuiltinRow = BuiltinRow {
        name: "apps.list",
        title: "The apps in your spaces",
        description: "Every app in the spaces you belong to: its name for --loom, title, access, address, version, last deploy, commands, your role, and whether it is in the trash. Ask for it to find the app a request is about.",
        effect: Effect::Read,
        scope: Scope::Global,
        input: || {
            json!({ "type": "object", "properties": {
                "person": { "type": "string",
                            "description": "whose apps: filled by the host from the job" } },
                "required": ["person"] })
        },
        outputs: || json!({ "apps": { "type": "array", "description": "at, title, access, address, version, last_deploy, commands, trashed, role" } }),
        declarations: Declarations::NONE,
        job_person: &["person"],
    };

    async fn run(invocation: &Invocation<'_>) -> Result<Answer, HostError> {
        let person = invocation.args.required_text("person")?;
        let me = invocation.caller.person().ok_or_else(sign_in_first)?;
        if person.trim_start_matches('@') != me.handle {
            return Err(HostError::Refused(format!(
                "apps.list lists your own apps, {}'s — not {}'s",
                me.handle,
                shown(&person)
            )));
        }
        let apps = invocation.host.apps(invocation.caller).await?;
        Ok(Answer {
            text: format!("apps.list: {}", apps.text),
            data: apps.data.into(),
        })
    }
}
