//! `graph.apply`: one bundle, or a list of them, written to the `--loom` app
//! as the caller, all or nothing.

use serde_json::json;

use super::body::{BuiltinCommand, Invocation};
use super::row::{BuiltinRow, Declarations, applied_outputs};
use crate::agents::command::{Effect, Scope};
use crate::{Answer, HostError};

pub(super) struct GraphApply;

impl BuiltinCommand for GraphApply {
    const ROW: BuiltinRow = BuiltinRow {
        name: "graph.apply",
        title: "Write a bundle to an app",
        description: "Writes one entity bundle, or a list of them, to the app --loom names, all or nothing: {\"entity\": {\"eid\": \"$new\"}, \"doc\": {\"title\": \"…\"}}. Ask for it when no command of the app writes what you need.",
        effect: Effect::Write,
        scope: Scope::Loom,
        input: || {
            json!({ "type": "object", "properties": {
                "bundle": { "type": ["object", "array"], "description": "a bundle or a list of bundles, as apply() takes them" } },
                "required": ["bundle"] })
        },
        outputs: applied_outputs,
        declarations: Declarations::NONE,
        job_person: &[],
    };

    async fn run(invocation: &Invocation<'_>) -> Result<Answer, HostError> {
        let app = invocation.loom()?;
        let bundle = invocation.args.required("bundle")?;
        invocation.write(app, bundle).await
    }
}
