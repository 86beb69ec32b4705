//! `app.files`: the files of the `--loom` app's next deploy, read or listed
//! (not from a session: the person reads them where they work on the app).

use std::collections::BTreeMap;

use serde_json::json;

use super::body::{BuiltinCommand, Invocation};
use super::row::{BuiltinRow, Declarations};
use crate::agents::command::{Effect, Scope};
use crate::{Answer, HostError};

pub(super) struct AppFiles;

impl BuiltinCommand for AppFiles {
    const ROW: BuiltinRow = BuiltinRow {
        name: "app.files",
        title: "Read an app's files",
        description: "Reads files of the next deploy of the app --loom names (tools.json and vocab.json too), or lists them.",
        effect: Effect::Read,
        scope: Scope::Loom,
        input: || {
            json!({ "type": "object", "properties": {
                "paths": { "type": "array", "items": { "type": "string" } } } })
        },
        outputs: || json!({ "files": {} }),
        declarations: Declarations {
            origins_refused: &["session"],
            ..Declarations::NONE
        },
        job_person: &[],
    };

    async fn run(invocation: &Invocation<'_>) -> Result<Answer, HostError> {
        let app = invocation.loom()?;
        let paths = invocation.args.texts("paths")?;
        invocation
            .host
            .app_files(invocation.caller, &app.name, BTreeMap::new(), paths)
            .await
            .map(Answer::widen)
    }
}
