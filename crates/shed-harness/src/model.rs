//! The model loop: an OpenAI-compatible chat-completions client with tool
//! calling that drives a run until the model answers, or the turns run out.
//!
//! Every tool call the model makes is answered to it, whatever it sent: a
//! call whose arguments are not JSON, that names a tool the run does not
//! offer, or whose input does not fit the tool's schema gets a sentence
//! saying so, and nothing reaches the host. The request itself goes through
//! [`crate::endpoint`].

use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::endpoint::{Endpoint, EndpointError, RETRIES};
use crate::harness::Harness;
use crate::policy::TaskSlot;
use crate::progress::Progress;
use crate::tools::ToolName;

/// Where the model is and how long the loop may go.
#[derive(Clone, Debug)]
pub struct ModelSettings {
    /// The server's base URL; requests go to `<base_url>/chat/completions`.
    pub base_url: String,
    /// The model's name as the server knows it, sent as each request's
    /// `model`.
    pub model: String,
    /// The bearer token sent with each request; `None` sends none.
    pub api_key: Option<String>,
    /// The most turns (one chat completion each, retries aside) the loop
    /// takes before it gives up with [`ModelError::TooManyTurns`].
    pub max_turns: usize,
    /// What the first turn asks of the model's tool use; later turns ask
    /// `auto`, so a run whose first turn is forced can still end in an answer.
    pub tool_choice: ToolChoice,
    /// How long one request may take.
    pub request_timeout: Duration,
    /// The sampling temperature sent with every request; `None` sends none,
    /// and the server's default holds.
    pub temperature: Option<f64>,
}

/// OpenAI's `tool_choice`: whether and which tool the model must call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model chooses.
    Auto,
    /// The model must call some tool.
    Required,
    /// The model may call none.
    None,
    /// The model must call this tool.
    Tool(ToolName),
}

/// Why a `--tool-choice` was refused.
#[derive(Debug, thiserror::Error)]
pub enum ToolChoiceError {
    /// The text is none of `auto`, `required`, `none` or a tool's name; it
    /// holds the text.
    #[error(
        "--tool-choice {0} is neither auto, required, none nor a tool — the tools are list_commands, run_command and run_read_command"
    )]
    Unknown(String),
    /// The choice needs a tool the run does not offer (or, for `required`,
    /// the run offers none); it holds the text, then the offered tools as
    /// the sentence lists them.
    #[error(
        "--tool-choice {0} names a tool this run does not offer ({1}) — offer it with --allow-tool, or choose another"
    )]
    NotOffered(String, String),
}

impl ToolChoice {
    /// Reads `auto`, `required`, `none` or a tool's name; a tool (or
    /// `required`) must be among `offered`.
    pub fn parse(text: &str, offered: &[ToolName]) -> Result<ToolChoice, ToolChoiceError> {
        let choice = match text {
            "auto" => ToolChoice::Auto,
            "required" => ToolChoice::Required,
            "none" => ToolChoice::None,
            name => ToolChoice::Tool(
                ToolName::parse(name).ok_or_else(|| ToolChoiceError::Unknown(name.to_string()))?,
            ),
        };
        let missing = match choice {
            ToolChoice::Tool(tool) => !offered.contains(&tool),
            ToolChoice::Required => offered.is_empty(),
            ToolChoice::Auto | ToolChoice::None => false,
        };
        if missing {
            let offered: Vec<&str> = offered.iter().map(|t| t.as_str()).collect();
            let offered = if offered.is_empty() {
                "none: it has no host configuration".to_string()
            } else {
                offered.join(", ")
            };
            return Err(ToolChoiceError::NotOffered(text.to_string(), offered));
        }
        Ok(choice)
    }

    /// The request's `tool_choice`.
    pub fn to_json(self) -> Value {
        match self {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::Required => json!("required"),
            ToolChoice::None => json!("none"),
            ToolChoice::Tool(tool) => {
                json!({"type": "function", "function": {"name": tool.as_str()}})
            }
        }
    }
}

/// A finished run.
#[derive(Debug)]
pub struct Finished {
    /// The model's closing text, as it wrote it (not yet escaped for a
    /// terminal).
    pub answer: String,
    /// Every chat message of the run, the system prompt first: what the
    /// transcript records.
    pub messages: Vec<Value>,
}

/// A run that stopped without an answer, with the messages so far.
#[derive(Debug)]
pub struct Failed {
    /// Why the loop stopped.
    pub error: ModelError,
    /// The chat messages up to where it stopped, the system prompt first.
    pub messages: Vec<Value>,
}

/// Why the model loop stopped without an answer.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// A request to the model server got no chat completion.
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
    /// Every one of the allowed turns ended in tool calls; it holds how many
    /// turns were allowed.
    #[error(
        "the model made tool calls for {0} turns without answering — raise --max-turns or simplify the task"
    )]
    TooManyTurns(usize),
    /// A call's decision could not be recorded: the call was not made.
    #[error("{0}")]
    PolicyTrace(String),
    /// The host said the job the run acts for is ended, expired or unknown
    /// ([`crate::ending::job_over`]): nothing more can run. It holds the
    /// host's sentence.
    #[error("{0}")]
    JobOver(String),
}

const SYSTEM_PROMPT: &str = "You act for a person on their host through the host's commands. Call list_commands to see the commands this run may use, each as a typed signature, then run_command (or run_read_command for granted reads) to run them. Never invent a command. When a command is not granted, tell the person rather than retrying. When you are done, answer in plain text.";

/// The system prompt: what the run is, the date and time `now` in UTC — a
/// model has no clock, and a command's time wants one; written as commands
/// take a time (`2026-09-01T10:00:00Z`), for a model to copy — and the
/// task's slot.
fn system_prompt(slot: TaskSlot, now: jiff::Timestamp) -> String {
    let now = now.to_zoned_datetime(jiff::tz::TimeZone::UTC);
    format!(
        "{SYSTEM_PROMPT} It is now {} ({}, UTC). The task below is bound as {}.",
        now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        now.strftime("%A"),
        slot.as_str()
    )
}

/// Runs `task` until the model answers with text, or until an answer of the
/// host says the job is over.
pub async fn run_task(
    harness: &Harness,
    settings: &ModelSettings,
    task: &str,
    slot: TaskSlot,
    progress: &Progress,
) -> Result<Finished, Failed> {
    let mut messages = vec![
        json!({"role": "system", "content": system_prompt(slot, jiff::Timestamp::now())}),
        json!({"role": "user", "content": task}),
    ];
    let endpoint = Endpoint::new(
        &settings.base_url,
        settings.api_key.clone(),
        settings.request_timeout,
        RETRIES,
    );
    for turn in 0..settings.max_turns {
        progress.turn(turn + 1, settings.max_turns);
        let mut body = json!({"model": settings.model, "messages": messages});
        if let Some(temperature) = settings.temperature {
            body["temperature"] = json!(temperature);
        }
        // Built each turn: the command tools' schemas follow the listing
        // the model was last shown.
        let tools: Vec<Value> = harness
            .input_schemas()
            .await
            .into_iter()
            .map(|(tool, schema)| {
                json!({"type": "function", "function": {
                    "name": tool.as_str(),
                    "description": tool.description(),
                    "parameters": schema,
                }})
            })
            .collect();
        // The listing the tools show may be the host saying the job is
        // over: then no turn is asked for.
        if let Some(sentence) = harness.job_over() {
            return Err(Failed {
                error: ModelError::JobOver(sentence),
                messages,
            });
        }
        if !tools.is_empty() {
            body["tools"] = json!(tools);
            let choice = if turn == 0 {
                settings.tool_choice
            } else {
                ToolChoice::Auto
            };
            body["tool_choice"] = choice.to_json();
        }
        let message = match endpoint.complete(&body, progress).await {
            Ok(message) => message,
            Err(error) => {
                return Err(Failed {
                    error: error.into(),
                    messages,
                });
            }
        };
        let calls = message
            .get("tool_calls")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let content = message
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        messages.push(sent_back(&content, &calls));
        if calls.is_empty() {
            progress.answered();
            return Ok(Finished {
                answer: content,
                messages,
            });
        }
        for call in calls {
            let id = call.get("id").and_then(Value::as_str).unwrap_or("");
            let name = call
                .pointer("/function/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            let result = match arguments_of(&call) {
                Ok(input) => harness.call(name, input).await,
                Err(message) => json!({
                    "status": "failed_to_deliver",
                    "landed": "no",
                    "reason": "invalid_input",
                    "message": message,
                }),
            };
            progress.tool(
                name,
                result.get("status").and_then(Value::as_str).unwrap_or("?"),
            );
            messages.push(json!({
                "role": "tool",
                "tool_call_id": id,
                "content": result.to_string(),
            }));
            if let Some(sentence) = harness.trace_failure() {
                return Err(Failed {
                    error: ModelError::PolicyTrace(sentence),
                    messages,
                });
            }
            if let Some(sentence) = harness.job_over() {
                return Err(Failed {
                    error: ModelError::JobOver(sentence),
                    messages,
                });
            }
        }
    }
    Err(Failed {
        error: ModelError::TooManyTurns(settings.max_turns),
        messages,
    })
}

/// The assistant's turn as it is sent back: its role, its text, and its
/// tool calls where it made any. The text is a string even where the server
/// sent `null` beside tool calls — llama-cpp-python's server refuses a
/// `null` it sent itself (HTTP 500) — and whatever else the server added
/// (`function_call`, `logprobs`) is left out.
fn sent_back(content: &str, calls: &[Value]) -> Value {
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    message.insert("content".into(), json!(content));
    if !calls.is_empty() {
        message.insert("tool_calls".into(), json!(calls));
    }
    Value::Object(message)
}

/// A tool call's input: its `arguments` — a string of JSON, as OpenAI sends
/// them, or an object, as some servers do; none or an empty string is `{}`.
/// Else the sentence the model reads.
fn arguments_of(call: &Value) -> Result<Value, String> {
    match call.pointer("/function/arguments") {
        None | Some(Value::Null) => Ok(json!({})),
        Some(Value::String(text)) if text.trim().is_empty() => Ok(json!({})),
        Some(Value::String(text)) => serde_json::from_str(text).map_err(|e| {
            format!("the tool call's arguments are not JSON ({e}) — send the arguments as one JSON object")
        }),
        Some(object @ Value::Object(_)) => Ok(object.clone()),
        Some(other) => Err(format!(
            "the tool call's arguments are {other}, not a JSON object — send the arguments as one JSON object"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endpoint::message_of;
    use crate::tools::ALL_TOOLS;

    fn recorded(name: &str) -> Value {
        let path = format!(
            "{}/tests/recorded/llama-cpp-python/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        message_of(&text).unwrap()
    }

    #[test]
    fn the_system_prompt_says_the_date_and_time_in_utc() {
        let now: jiff::Timestamp = "2026-12-01T23:50:12+02:00".parse().unwrap();
        let prompt = system_prompt(TaskSlot::DirectCommand, now);
        assert!(
            prompt.ends_with(
                " It is now 2026-12-01T21:50:12Z (Tuesday, UTC). The task below is bound as direct-command."
            ),
            "{prompt}"
        );
    }

    // llama-cpp-python sends `content: null` beside its tool calls, and the
    // legacy `function_call` (here named ""), and refuses that `null` when it
    // comes back: the harness sends back "" and only the tool calls.
    #[test]
    fn a_recorded_tool_call_turn_is_sent_back_as_the_server_accepts_it() {
        let message = recorded("malformed-arguments.json");
        assert!(message["content"].is_null());
        assert_eq!(message["function_call"]["name"], "");
        let calls = message["tool_calls"].as_array().unwrap();
        let back = sent_back("", calls);
        assert_eq!(
            back,
            json!({"role": "assistant", "content": "", "tool_calls": message["tool_calls"]})
        );
    }

    // The recorded call's arguments hold raw newlines inside a string: not
    // JSON. The model reads why, and nothing is run.
    #[test]
    fn recorded_arguments_that_are_not_json_get_a_sentence() {
        let message = recorded("malformed-arguments.json");
        let error = arguments_of(&message["tool_calls"][0]).unwrap_err();
        assert!(
            error.starts_with("the tool call's arguments are not JSON (control character"),
            "{error}"
        );
        assert!(error.ends_with("send the arguments as one JSON object"));
        let forced = recorded("forced-tool-call.json");
        assert_eq!(
            arguments_of(&forced["tool_calls"][0]).unwrap(),
            json!({"command": "log_runner_5"})
        );
    }

    #[test]
    fn arguments_given_as_an_object_or_left_out_are_read() {
        let call = |arguments: Value| json!({"function": {"name": "x", "arguments": arguments}});
        assert_eq!(
            arguments_of(&call(json!({"command": "a"}))).unwrap(),
            json!({"command": "a"})
        );
        assert_eq!(arguments_of(&call(json!(""))).unwrap(), json!({}));
        assert_eq!(arguments_of(&json!({"function": {}})).unwrap(), json!({}));
        assert!(
            arguments_of(&call(json!([1])))
                .unwrap_err()
                .contains("[1], not a JSON object")
        );
    }

    #[test]
    fn a_tool_choice_is_read_and_checked_against_the_tools_offered() {
        let all = ALL_TOOLS.to_vec();
        assert_eq!(ToolChoice::parse("auto", &[]).unwrap(), ToolChoice::Auto);
        assert_eq!(ToolChoice::parse("none", &[]).unwrap(), ToolChoice::None);
        assert_eq!(
            ToolChoice::parse("required", &all).unwrap().to_json(),
            json!("required")
        );
        assert_eq!(
            ToolChoice::parse("list_commands", &all).unwrap().to_json(),
            json!({"type": "function", "function": {"name": "list_commands"}})
        );
        assert_eq!(
            ToolChoice::parse("run_command", &[ToolName::ListCommands])
                .unwrap_err()
                .to_string(),
            "--tool-choice run_command names a tool this run does not offer (list_commands) — offer it with --allow-tool, or choose another"
        );
        assert!(
            ToolChoice::parse("required", &[])
                .unwrap_err()
                .to_string()
                .contains("does not offer (none: it has no host configuration)")
        );
        assert!(
            ToolChoice::parse("anything", &all)
                .unwrap_err()
                .to_string()
                .starts_with("--tool-choice anything is neither auto, required, none nor a tool")
        );
    }
}
