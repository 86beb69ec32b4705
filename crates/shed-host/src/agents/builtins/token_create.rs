//! `token.create`: a bearer token that signs in as the caller's person,
//! shown once (only over the person's consent grant).

use serde_json::json;

use super::body::{BuiltinCommand, Invocation};
use super::row::{BuiltinRow, Declarations};
use crate::access::sign_in_first;
use crate::agents::command::{Effect, Scope};
use crate::answer::NewToken;
use crate::{Answer, HostError};

pub(super) struct TokenCreate;

impl BuiltinCommand for TokenCreate {
    const ROW: BuiltinRow = BuiltinRow {
        name: "token.create",
        title: "Make a bearer token",
        description: "Makes a bearer token that signs in as you, shown once.",
        effect: Effect::Write,
        scope: Scope::Global,
        input: || json!({ "type": "object", "properties": {} }),
        outputs: || json!({ "token": {} }),
        declarations: Declarations {
            grant: Some("a token that signs in as you"),
            ..Declarations::NONE
        },
        job_person: &[],
    };

    async fn run(invocation: &Invocation<'_>) -> Result<Answer, HostError> {
        let person = invocation.caller.person().ok_or_else(sign_in_first)?;
        let token = invocation
            .host
            .create_token(&person.handle, Default::default())
            .await?;
        Ok(Answer {
            text: format!(
                "token.create: a new token for {} (shown once)",
                person.handle
            ),
            data: NewToken { token }.into(),
        })
    }
}
