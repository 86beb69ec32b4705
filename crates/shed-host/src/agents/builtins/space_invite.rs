//! `space.invite`: an owner of a space makes a person a member of it, with a
//! role (run by a person, not by an agent acting for them).

use serde_json::json;

use super::body::{BuiltinCommand, Invocation};
use super::row::{BuiltinRow, Declarations};
use crate::agents::command::{Effect, Scope};
use crate::answer::Invited;
use crate::{Answer, HostError, Role};

pub(super) struct SpaceInvite;

impl BuiltinCommand for SpaceInvite {
    const ROW: BuiltinRow = BuiltinRow {
        name: "space.invite",
        title: "Invite a person into a space",
        description: "Makes a person a member of a space you own, with a role.",
        effect: Effect::Write,
        scope: Scope::Global,
        input: || {
            json!({ "type": "object", "properties": {
                "space": { "type": "string" },
                "handle": { "type": "string" },
                "role": { "enum": ["owner", "editor", "viewer"] } },
                "required": ["space", "handle", "role"] })
        },
        outputs: || json!({ "space": {}, "handle": {}, "role": {} }),
        declarations: Declarations {
            actors: Some(&["person"]),
            ..Declarations::NONE
        },
        job_person: &[],
    };

    async fn run(invocation: &Invocation<'_>) -> Result<Answer, HostError> {
        let role = invocation
            .args
            .required_text("role")?
            .parse::<Role>()
            .map_err(|e| HostError::BadInput(e.to_string()))?;
        let space = invocation.args.required_text("space")?;
        let handle = invocation.args.required_text("handle")?;
        invocation
            .host
            .invite(invocation.caller, &space, &handle, role)
            .await?;
        Ok(Answer {
            text: format!(
                "space.invite: {handle} is now {} of {space}",
                role.with_article()
            ),
            data: Invited {
                space,
                handle,
                role: role.as_str(),
            }
            .into(),
        })
    }
}
