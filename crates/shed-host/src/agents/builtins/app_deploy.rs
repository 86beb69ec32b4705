//! `app.deploy`: the drafts of the `--loom` app deployed as its next version
//! (a developer's tool).

use serde_json::json;

use super::body::{BuiltinCommand, Invocation};
use super::row::{BuiltinRow, Declarations};
use crate::agents::command::{Effect, Scope};
use crate::{Access, Answer, HostError};

pub(super) struct AppDeploy;

impl BuiltinCommand for AppDeploy {
    const ROW: BuiltinRow = BuiltinRow {
        name: "app.deploy",
        title: "Deploy an app's drafts",
        description: "Deploys the drafts of the app --loom names as its next version.",
        effect: Effect::Write,
        scope: Scope::Loom,
        input: || {
            json!({ "type": "object", "properties": {
                "title": { "type": "string", "description": "the app's title, e.g. Run club" },
                "access": { "enum": ["private", "public", "open"] } } })
        },
        outputs: || json!({ "app": {}, "version": {}, "address": {}, "commands": {} }),
        declarations: Declarations {
            developer: true,
            ..Declarations::NONE
        },
        job_person: &[],
    };

    async fn run(invocation: &Invocation<'_>) -> Result<Answer, HostError> {
        let access = invocation
            .args
            .text("access")?
            .map(|word| {
                word.parse::<Access>()
                    .map_err(|e| HostError::BadInput(e.to_string()))
            })
            .transpose()?;
        let app = invocation.loom()?;
        let title = invocation.args.text("title")?;
        invocation
            .host
            .app_deploy(invocation.caller, &app.name, title, access)
            .await
            .map(Answer::widen)
    }
}
