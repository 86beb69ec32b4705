//! `graph.query`: the rows of the `--loom` app a filter line matches, read
//! as the caller.

use serde_json::json;

use super::body::{BuiltinCommand, Invocation};
use super::row::{BuiltinRow, Declarations};
use crate::agents::command::{Effect, Scope};
use crate::{Answer, HostError};

pub(super) struct GraphQuery;

impl BuiltinCommand for GraphQuery {
    const ROW: BuiltinRow = BuiltinRow {
        name: "graph.query",
        title: "Read an app's rows with a filter line",
        description: "Rows of the app --loom names, read with a filter line such as .jog!&.created!&limit=20. Ask for it when no command of the app reads what you need.",
        effect: Effect::Read,
        scope: Scope::Loom,
        input: || {
            json!({ "type": "object", "properties": {
                "filter": { "type": "string", "description": "a filter line: clauses joined by &, like .jog!&.jog.miles>=5" } },
                "required": ["filter"] })
        },
        outputs: || json!({ "rows": { "type": "array" }, "next": { "type": "string" } }),
        declarations: Declarations::NONE,
        job_person: &[],
    };

    async fn run(invocation: &Invocation<'_>) -> Result<Answer, HostError> {
        let app = invocation.loom()?;
        let filter = invocation.args.required_text("filter")?;
        invocation
            .host
            .graph_query(invocation.caller, None, &app.name, &filter)
            .await
            .map(Answer::widen)
    }
}
