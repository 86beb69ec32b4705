//! The fixed tool list: the seven tools, in their order, with their
//! titles, descriptions, input schemas and annotations (the title again, and
//! all four hints, set) — the same bytes for every caller — and its
//! fingerprint, which moves only with a release.

use std::sync::{Arc, LazyLock};

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The tools' names, in the order `tools/list` gives them.
pub const TOOL_NAMES: [&str; 7] = [
    "commands",
    "command",
    "graph_query",
    "graph_apply",
    "app_files",
    "app_deploy",
    "spaces",
];

/// The one tool list, built once.
static TOOLS: LazyLock<Vec<Tool>> = LazyLock::new(build_tools);

/// Its fingerprint: sha256 of the list's JSON, in hex.
static FINGERPRINT: LazyLock<String> = LazyLock::new(|| {
    let json = serde_json::to_vec(&*TOOLS).unwrap_or_default();
    hex::encode(Sha256::digest(&json))
});

/// The tool list every caller gets.
pub fn tools() -> Vec<Tool> {
    TOOLS.clone()
}

/// The fingerprint of the tool list this build serves.
pub fn fingerprint() -> &'static str {
    &FINGERPRINT
}

/// The sentence a caller who listed under an older fingerprint reads on a reply.
pub const TOOLS_CHANGED_LINE: &str = "shed's tools changed since you listed them — list them again (tools/list) before the next call";

const APP_ARG: &str =
    "The app: its slug (runs), or <space>/<app> (jeff/runs) where two spaces spell one slug.";

fn build_tools() -> Vec<Tool> {
    vec![
        tool(
            "commands",
            "List commands",
            "List the commands of every app you can reach, grouped by app: each one's \
             arguments as `command` takes them (an optional one carries a ?), what it does, \
             the app's title and address, and the view its answer draws itself in. Call it \
             first whenever someone asks for something an app here might do — an app's own \
             verbs are listed here, never as tools of their own.",
            json!({
                "type": "object",
                "properties": {
                    "app": { "type": "string", "description": "Narrow the listing to one app: its slug, or <space>/<app> where two spaces spell one slug. Leave it out for every app in reach." }
                },
                "additionalProperties": false
            }),
            Effect::Reads,
        ),
        tool(
            "command",
            "Run a command",
            "Run one of an app's commands: log a run, add a recipe, read the leaderboard. \
             Give its name and its arguments exactly as `commands` spells them; the answer \
             says what was written or read, with the ids or rows as structured content. \
             Reach for it to act on an app once `commands` has shown the verb; say `app` \
             only where two apps in reach spell the same command. A write your person must \
             approve answers with the address where they approve it and an approval id: \
             call again with that `approval` (and the same name) to learn whether it ran.",
            json!({
                "type": "object",
                "properties": {
                    "name": { "type": "string", "description": "The command's name, as `commands` lists it (log_run)." },
                    "args": { "type": "object", "description": "The command's own arguments, as `commands` spells them ({\"who\": \"Ada\", \"miles\": 5}).", "additionalProperties": true },
                    "app": { "type": "string", "description": "Only where two apps spell the command: its slug, or <space>/<app>." },
                    "approval": { "type": "integer", "description": "The approval id a waiting answer gave: asks whether it ran, was denied or expired, and runs nothing." }
                },
                "required": ["name"],
                "additionalProperties": false
            }),
            Effect::Writes,
        ),
        tool(
            "graph_query",
            "Query an app's data",
            "Read an app's rows with a filter line — `.jog!&.created!&limit=20` carries the \
             jog and the byline of every run, `q=words` searches titles and bodies, \
             `.jog.miles>=5` compares a column. Reach for it when no command of the app \
             answers the question.",
            json!({
                "type": "object",
                "properties": {
                    "app": { "type": "string", "description": APP_ARG },
                    "filter": { "type": "string", "description": "A filter line: clauses joined by &, such as .jog!&.created!&order=-.jog.miles&limit=10." }
                },
                "required": ["app", "filter"],
                "additionalProperties": false
            }),
            Effect::Reads,
        ),
        tool(
            "graph_apply",
            "Write an app's data",
            "Write to an app's data: an entity bundle, or a list of them, committed all or \
             nothing — `{\"entity\": {\"eid\": \"$run\"}, \"jog\": {\"who\": \"Ada\", \"miles\": 5}}` \
             mints a row, an eid patches one, `tombstone` deletes, `was` guards against a \
             change you did not read. Reach for it when no command of the app writes what \
             is needed.",
            json!({
                "type": "object",
                "properties": {
                    "app": { "type": "string", "description": APP_ARG },
                    "bundle": {
                        "description": "An entity bundle or a list of them: entity {eid, alias?}, components by name, edges, tombstone, was.",
                        "anyOf": [ { "type": "object" }, { "type": "array", "items": { "type": "object" } } ]
                    }
                },
                "required": ["app", "bundle"],
                "additionalProperties": false
            }),
            Effect::Writes,
        ),
        // A write (drafts of the next deploy, kept in the database), not a
        // read: its `write` overwrites a path's draft or deletes the file
        // from the next deploy (destructive); the same map again leaves the
        // same drafts (idempotent). Its `read` alone changes nothing, but
        // the hints are the tool's, not one call's.
        tool(
            "app_files",
            "Edit an app's files",
            "Write and read an app's files before a deploy: its pages, style, vocab.json and \
             tools.json. `write` maps a path to its new text (null deletes the file); `read` \
             names paths to read back. Reach for it to build a new app or change one, then \
             call `app_deploy`.",
            json!({
                "type": "object",
                "properties": {
                    "app": { "type": "string", "description": APP_ARG },
                    "write": {
                        "type": "object",
                        "description": "Path → the file's whole new text, or null to delete it ({\"index.html\": \"<!doctype html>…\"}).",
                        "additionalProperties": { "type": ["string", "null"] }
                    },
                    "read": { "type": "array", "items": { "type": "string" }, "description": "Paths to read back (tools.json)." }
                },
                "required": ["app"],
                "additionalProperties": false
            }),
            Effect::Sets,
        ),
        // Replaces the app's live files and commands with its drafts (its
        // earlier versions stay, to roll back to), may change its title and
        // access, and clears the drafts: destructive. Each call makes a new
        // version, so not idempotent.
        tool(
            "app_deploy",
            "Deploy an app",
            "Deploy an app's files as its next version: vocab.json and tools.json are checked \
             whole, the commands are planted and the answer names them — or every problem \
             comes back in one sentence and nothing changes. Reach for it after `app_files`, \
             to make a change live.",
            json!({
                "type": "object",
                "properties": {
                    "app": { "type": "string", "description": APP_ARG },
                    "title": { "type": "string", "description": "What the person calls the app (Run club)." },
                    "access": { "type": "string", "enum": ["private", "public", "open"], "description": "private: members read, owners and editors write; public: anyone reads on the web; open: anyone who can reach it writes." }
                },
                "required": ["app"],
                "additionalProperties": false
            }),
            Effect::Writes,
        ),
        tool(
            "spaces",
            "List spaces",
            "List the spaces you belong to, your role in each, and their apps with their \
             titles and addresses. Reach for it to find where an app lives, or whether you \
             may change it.",
            json!({ "type": "object", "properties": {}, "additionalProperties": false }),
            Effect::Reads,
        ),
    ]
}

/// What a tool does to this host's data, as its four hints say it. No tool
/// reaches past this host (`openWorldHint` is false for every one), and
/// every writer here may overwrite or delete (`destructiveHint`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    /// Reads only: changes nothing, so calling it again changes nothing.
    Reads,
    /// Writes by key: the same arguments again write the same state again
    /// (idempotent).
    Sets,
    /// Writes anew on each call: a row minted, a version made (not
    /// idempotent).
    Writes,
}

/// One tool: its title goes both on the tool (2025-06-18 and later) and in
/// its annotations (2025-03-26, where the tool had no title of its own).
fn tool(
    name: &'static str,
    title: &'static str,
    description: &'static str,
    schema: Value,
    effect: Effect,
) -> Tool {
    let schema: JsonObject = match schema {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    };
    let reads = effect == Effect::Reads;
    let hints = ToolAnnotations::with_title(title)
        .read_only(reads)
        .destructive(!reads)
        .idempotent(effect != Effect::Writes)
        .open_world(false);
    Tool::new(name, description, Arc::new(schema))
        .with_title(title)
        .with_annotations(hints)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_the_seven_tools_in_order() {
        let names: Vec<String> = tools().iter().map(|t| t.name.to_string()).collect();
        assert_eq!(names, TOOL_NAMES);
    }

    #[test]
    fn only_the_readers_are_read_only() {
        for tool in tools() {
            let read_only = tool.annotations.and_then(|a| a.read_only_hint);
            let expected = matches!(&*tool.name, "commands" | "graph_query" | "spaces");
            assert_eq!(read_only, Some(expected), "{}", tool.name);
        }
    }

    #[test]
    fn every_tool_has_a_title_and_its_four_hints() {
        for tool in tools() {
            let title = tool.title.clone().unwrap_or_default();
            assert!(!title.trim().is_empty(), "{}", tool.name);
            let hints = tool.annotations.unwrap_or_default();
            assert_eq!(hints.title.as_deref(), Some(&*title), "{}", tool.name);
            let read_only = hints.read_only_hint == Some(true);
            let idempotent = !matches!(&*tool.name, "command" | "graph_apply" | "app_deploy");
            assert_eq!(hints.destructive_hint, Some(!read_only), "{}", tool.name);
            assert_eq!(hints.idempotent_hint, Some(idempotent), "{}", tool.name);
            assert_eq!(hints.open_world_hint, Some(false), "{}", tool.name);
        }
    }

    #[test]
    fn the_fingerprint_is_a_sha256_of_the_list() {
        assert_eq!(fingerprint().len(), 64);
        let again = hex::encode(Sha256::digest(serde_json::to_vec(&tools()).unwrap()));
        assert_eq!(fingerprint(), again);
    }
}
