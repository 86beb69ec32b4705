//! `doc.comment`: a comment written on an entity of the `--loom` app (a
//! piece's verb, run through the page that shows the entity).

use serde_json::json;

use super::body::{BuiltinCommand, Invocation};
use super::row::{BuiltinRow, Declarations, applied_outputs};
use crate::agents::command::{Effect, Scope};
use crate::{Answer, HostError};

pub(super) struct DocComment;

impl BuiltinCommand for DocComment {
    const ROW: BuiltinRow = BuiltinRow {
        name: "doc.comment",
        title: "Comment on an entity",
        description: "Writes a comment on an entity of the app --loom names, from the page that shows it.",
        effect: Effect::Write,
        scope: Scope::Loom,
        input: || {
            json!({ "type": "object", "properties": {
                "target": { "type": "string", "description": "the eid or alias commented on" },
                "body": { "type": "string" } },
                "required": ["target", "body"] })
        },
        outputs: applied_outputs,
        declarations: Declarations {
            origin: Some("pattern"),
            ..Declarations::NONE
        },
        job_person: &[],
    };

    async fn run(invocation: &Invocation<'_>) -> Result<Answer, HostError> {
        let bundle = json!({
            "entity": { "eid": "$comment" },
            "doc": { "body": invocation.args.required_text("body")? },
            "comment": { "target": invocation.args.required_text("target")? },
        });
        invocation.write(invocation.loom()?, bundle).await
    }
}
