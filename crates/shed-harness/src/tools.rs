//! The three command tools: their names, their effect classes (what the
//! policy judges a call by), and the descriptions and input schemas a model or
//! MCP client is shown.

use serde_json::{Value, json};

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
                let call = json!({
                    "type": "object",
                    "properties": {
                        "command": {"type": "string", "description": "A command name from list_commands."},
                        "args": {"type": "object", "description": "The command's arguments, as its signature says."},
                        "loomId": {"type": "string", "description": "The loom (app) the command acts on, for a command whose target is loom."},
                        "expectedVersion": {"type": "integer", "minimum": 0, "description": "Refuse unless the loom's data version is this one."}
                    },
                    "required": ["command"],
                    "additionalProperties": false
                });
                let mut schema = call.clone();
                schema["properties"]["calls"] = json!({
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 16,
                    "items": call,
                    "description": "A batch of independent calls, instead of `command`."
                });
                schema["required"] = json!([]);
                schema
            }
        }
    }
}
