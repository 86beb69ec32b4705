//! `apps.list`: the apps of the caller's spaces, for the person the job acts
//! for only (its `person` input is filled by the host from the job, and
//! checked here).

use serde_json::{Value, json};

use super::body::{BuiltinCommand, Invocation};
use super::row::{BuiltinRow, Declarations};
use crate::access::sign_in_first;
use crate::agents::command::{Effect, Scope};
use crate::names::shown;
use crate::texts::count;
use crate::{Answer, HostError};

pub(super) struct AppsList;

impl BuiltinCommand for AppsList {
    const ROW: BuiltinRow = BuiltinRow {
        name: "apps.list",
        title: "The apps in your spaces",
        description: "Every app in the spaces you belong to: its name for --loom, title, access, address and your role. Ask for it to find the app a request is about.",
        effect: Effect::Read,
        scope: Scope::Global,
        input: || {
            json!({ "type": "object", "properties": {
                "person": { "type": "string", "x-source": "job.person",
                            "description": "whose apps: filled by the host from the job" } },
                "required": ["person"] })
        },
        outputs: || json!({ "apps": { "type": "array", "description": "at, title, access, address, role, version" } }),
        declarations: Declarations::NONE,
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
        let spaces = invocation.host.spaces(invocation.caller).await?;
        let mut apps = Vec::new();
        for space in spaces
            .data
            .get("spaces")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            for app in space
                .get("apps")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let mut app = app.clone();
                if let (Some(fields), Some(role)) = (app.as_object_mut(), space.get("role")) {
                    fields.insert("role".into(), role.clone());
                }
                apps.push(app);
            }
        }
        let lines: Vec<String> = apps
            .iter()
            .map(|app| {
                let field = |key: &str| {
                    app.get(key)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string()
                };
                format!(
                    "{} — {}, {}, you are {}",
                    field("at"),
                    field("title"),
                    field("access"),
                    field("role")
                )
            })
            .collect();
        let mut text = format!(
            "apps.list: {} in your spaces",
            count(apps.len(), "app", "apps")
        );
        for line in lines {
            text.push('\n');
            text.push_str(&line);
        }
        Ok(Answer {
            text,
            data: json!({ "apps": apps }),
        })
    }
}
