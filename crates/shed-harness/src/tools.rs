//! The three command tools: their names, their effect classes (what the
//! policy judges a call by), and the descriptions and input schemas a model or
//! MCP client is shown — for a model, once it has been shown a listing that
//! fit its bound, the schemas that hold `command` to the listed names and,
//! where small enough, `args` to each command's own schema.

use serde_json::{Value, json};

use crate::calls::BATCH_MAX_CALLS;
use crate::catalog::CatalogRow;
use crate::listing::json_len;
use crate::schema::args_schema;

/// The most bytes of JSON a command tool's input schema may take once `args`
/// follows each listed command's schema (8 KiB; the tools go to the model
/// with every turn). Past it the schema holds `command` to the listed names
/// and leaves `args` an open object.
pub const TYPED_ARGS_BOUND_BYTES: usize = 8 * 1024;

const COMMAND_DESCRIPTION: &str = "A command name from list_commands.";

/// A tool's effect class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EffectClass {
    /// The tool only reads: `list_commands`, `run_read_command`.
    Read,
    /// The tool can change the person's data: `run_command`.
    Write,
}

impl EffectClass {
    /// The class as the policy trace's `effectClass` names it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EffectClass::Read => "read",
            EffectClass::Write => "write",
        }
    }
}

/// One of the harness's tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ToolName {
    /// `list_commands`: the commands this run may use, as signatures.
    ListCommands,
    /// `run_command`: runs one command, or a batch, as the agent.
    RunCommand,
    /// `run_read_command`: runs commands declared `read` that the broker
    /// granted read-only, and the host runs them read-only.
    RunReadCommand,
}

/// Every tool, in the order they are offered.
pub const ALL_TOOLS: [ToolName; 3] = [
    ToolName::ListCommands,
    ToolName::RunCommand,
    ToolName::RunReadCommand,
];

impl ToolName {
    /// The tool of this wire name (`run_command`); `None` for any other.
    pub(crate) fn parse(name: &str) -> Option<ToolName> {
        ALL_TOOLS.into_iter().find(|t| t.as_str() == name)
    }

    /// The tool's wire name, as the model and an MCP client call it.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ToolName::ListCommands => "list_commands",
            ToolName::RunCommand => "run_command",
            ToolName::RunReadCommand => "run_read_command",
        }
    }

    /// `run_command` is a write for every call, a batch included, whatever
    /// the host declares; the other two are reads.
    pub fn effect_class(self) -> EffectClass {
        match self {
            ToolName::RunCommand => EffectClass::Write,
            ToolName::ListCommands | ToolName::RunReadCommand => EffectClass::Read,
        }
    }

    /// The host-broker reads that `enforce-strict` admits for a context task.
    pub fn is_host_command_read(self) -> bool {
        matches!(self, ToolName::ListCommands | ToolName::RunReadCommand)
    }

    /// The tool's description, as a model or an MCP client is shown it.
    pub(crate) fn description(self) -> &'static str {
        match self {
            ToolName::ListCommands => {
                "List the commands the host lets this run use, each as a typed signature `name(args) -> {fields}  [effect, target]`. Pass `detail` (up to 16 names) to get those commands' full input schemas."
            }
            ToolName::RunCommand => {
                "Run one host command as the agent, or a batch of 1 to 16 independent calls (`calls`). Each call names a command list_commands showed, its `args` object, and optionally `loomId` and `expectedVersion`. This tool can change the person's data."
            }
            ToolName::RunReadCommand => {
                "Run host commands that are declared `read` and marked readOnlyGranted in list_commands, the same inputs as run_command. The host runs them read-only."
            }
        }
    }

    /// The tool's input schema.
    pub fn input_schema(self) -> Value {
        match self {
            ToolName::ListCommands => json!({
                "type": "object",
                "properties": {
                    "detail": {
                        "type": "array",
                        "items": {"type": "string"},
                        "maxItems": 16,
                        "description": "Command names whose full input schema you want."
                    }
                },
                "additionalProperties": false
            }),
            ToolName::RunCommand | ToolName::RunReadCommand => {
                command_tool_schema(json!({"type": "string", "description": COMMAND_DESCRIPTION}))
            }
        }
    }

    /// The tool's input schema once the model was shown `listed`, the rows
    /// of a listing that fit its bound, in its order. `run_command`'s
    /// `command` is an `enum` of their names, and `run_read_command`'s of
    /// those it may run (effect `read` and `readOnlyGranted`); where the
    /// schema stays within [`TYPED_ARGS_BOUND_BYTES`], an `anyOf` beside it
    /// holds each call to one `{command: const, args: <its schema>}` per
    /// command, alone or in a batch. A tool none of them may go through, and
    /// `list_commands`, keep [`ToolName::input_schema`].
    pub fn listed_input_schema(self, listed: &[&CatalogRow]) -> Value {
        let runnable: Vec<&CatalogRow> = match self {
            ToolName::ListCommands => Vec::new(),
            ToolName::RunCommand => listed.to_vec(),
            ToolName::RunReadCommand => listed
                .iter()
                .copied()
                .filter(|row| row.effect.as_deref() == Some("read") && row.read_only_granted)
                .collect(),
        };
        if runnable.is_empty() {
            return self.input_schema();
        }
        let names: Vec<&str> = runnable.iter().map(|row| row.name.as_str()).collect();
        let mut schema = command_tool_schema(
            json!({"type": "string", "description": COMMAND_DESCRIPTION, "enum": names}),
        );
        let branches: Vec<Value> = runnable
            .iter()
            .map(|row| {
                call_schema(
                    json!({"const": row.name}),
                    args_schema(&row.input_schema),
                    &["command", "args"],
                    Described::No,
                )
            })
            .collect();
        let batch = json!({
            "type": "object",
            "properties": {"calls": calls_schema(json!({"anyOf": branches}))},
            "required": ["calls"],
            "additionalProperties": false
        });
        let mut alternatives = branches;
        alternatives.push(batch);
        let open = schema.clone();
        schema["anyOf"] = Value::Array(alternatives);
        if json_len(&schema) > TYPED_ARGS_BOUND_BYTES {
            return open;
        }
        schema
    }
}

/// A command tool's input schema: one call whose `command` is `command`, or
/// a batch of such calls.
fn command_tool_schema(command: Value) -> Value {
    let call = call_schema(
        command,
        json!({"type": "object", "description": "The command's arguments, as its signature says."}),
        &["command"],
        Described::Yes,
    );
    let mut schema = call.clone();
    schema["properties"]["calls"] = calls_schema(call);
    schema["required"] = json!([]);
    schema
}

/// Whether a call's optional fields carry their descriptions: the open
/// schema's do; the per-command alternatives beside it leave them out, as
/// the open schema already says them once.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Described {
    Yes,
    No,
}

/// One call: its `command` and `args` as given, the optional `loomId` and
/// `expectedVersion`, and nothing else.
fn call_schema(command: Value, args: Value, required: &[&str], described: Described) -> Value {
    let mut loom_id = json!({"type": "string"});
    let mut expected_version = json!({"type": "integer", "minimum": 0});
    if described == Described::Yes {
        loom_id["description"] =
            json!("The loom (app) the command acts on, for a command whose target is loom.");
        expected_version["description"] =
            json!("Refuse unless the loom's data version is this one.");
    }
    json!({
        "type": "object",
        "properties": {
            "command": command,
            "args": args,
            "loomId": loom_id,
            "expectedVersion": expected_version
        },
        "required": required,
        "additionalProperties": false
    })
}

/// A batch's `calls`: 1 to 16 calls of `call`'s shape.
fn calls_schema(call: Value) -> Value {
    json!({
        "type": "array",
        "minItems": 1,
        "maxItems": BATCH_MAX_CALLS,
        "items": call,
        "description": "A batch of independent calls, instead of `command`."
    })
}
