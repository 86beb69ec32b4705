//! The model loop: an OpenAI-compatible chat-completions client with tool
//! calling that drives a run until the model answers.

use serde_json::{Value, json};

use crate::harness::Harness;
use crate::policy::TaskSlot;

/// Where the model is and how long the loop may go.
#[derive(Clone, Debug)]
pub struct ModelSettings {
    pub base_url: String,
    pub model: String,
    pub api_key: Option<String>,
    pub max_turns: usize,
}

/// A finished run.
#[derive(Debug)]
pub struct Finished {
    pub answer: String,
    pub messages: Vec<Value>,
}

/// A run that stopped without an answer, with the messages so far.
#[derive(Debug)]
pub struct Failed {
    pub error: ModelError,
    pub messages: Vec<Value>,
}

/// Why the model loop stopped without an answer.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error(
        "cannot reach the model at {url}: {detail} — check --base-url and that the endpoint is up"
    )]
    Unreachable { url: String, detail: String },
    #[error("the model endpoint answered HTTP {status}: {body}")]
    Status { status: u16, body: String },
    #[error("the model endpoint answered something that is not a chat completion: {0}")]
    Malformed(String),
    #[error(
        "the model made tool calls for {0} turns without answering — raise --max-turns or simplify the task"
    )]
    TooManyTurns(usize),
}

const SYSTEM_PROMPT: &str = "You act for a person on their host through the host's commands. Call list_commands to see the commands this run may use, each as a typed signature, then run_command (or run_read_command for granted reads) to run them. Never invent a command. When a command is not granted, tell the person rather than retrying. When you are done, answer in plain text.";

/// Runs `task` until the model answers with text.
pub async fn run_task(
    harness: &Harness,
    settings: &ModelSettings,
    task: &str,
    slot: TaskSlot,
) -> Result<Finished, Failed> {
    let mut messages = vec![
        json!({"role": "system", "content": format!("{SYSTEM_PROMPT} The task below is bound as {}.", slot.as_str())}),
        json!({"role": "user", "content": task}),
    ];
    let tools: Vec<Value> = harness
        .tools()
        .iter()
        .map(|tool| {
            json!({"type": "function", "function": {
                "name": tool.as_str(),
                "description": tool.description(),
                "parameters": tool.input_schema(),
            }})
        })
        .collect();
    let client = reqwest::Client::new();
    let url = format!(
        "{}/chat/completions",
        settings.base_url.trim_end_matches('/')
    );
    for _ in 0..settings.max_turns {
        let mut body = json!({"model": settings.model, "messages": messages});
        if !tools.is_empty() {
            body["tools"] = json!(tools);
        }
        let message = match complete(&client, &url, settings, &body).await {
            Ok(message) => message,
            Err(error) => return Err(Failed { error, messages }),
        };
        let calls = message
            .get("tool_calls")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        messages.push(message.clone());
        if calls.is_empty() {
            let answer = message
                .get("content")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            return Ok(Finished { answer, messages });
        }
        for call in calls {
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let name = call
                .pointer("/function/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            let arguments = call
                .pointer("/function/arguments")
                .and_then(Value::as_str)
                .unwrap_or("{}");
            let result = match serde_json::from_str::<Value>(if arguments.trim().is_empty() {
                "{}"
            } else {
                arguments
            }) {
                Ok(input) => harness.call(name, input).await,
                Err(e) => json!({
                    "status": "failed_to_deliver",
                    "landed": "no",
                    "reason": "invalid_input",
                    "message": format!("the tool call's arguments are not JSON ({e}) — send a JSON object"),
                }),
            };
            messages.push(json!({
                "role": "tool",
                "tool_call_id": id,
                "content": result.to_string(),
            }));
        }
    }
    Err(Failed {
        error: ModelError::TooManyTurns(settings.max_turns),
        messages,
    })
}

async fn complete(
    client: &reqwest::Client,
    url: &str,
    settings: &ModelSettings,
    body: &Value,
) -> Result<Value, ModelError> {
    let mut request = client.post(url).json(body);
    if let Some(key) = &settings.api_key {
        request = request.bearer_auth(key);
    }
    let response = request.send().await.map_err(|e| ModelError::Unreachable {
        url: url.to_string(),
        detail: e.to_string(),
    })?;
    let status = response.status();
    let text = response
        .text()
        .await
        .map_err(|e| ModelError::Malformed(e.to_string()))?;
    if !status.is_success() {
        return Err(ModelError::Status {
            status: status.as_u16(),
            body: text.chars().take(300).collect(),
        });
    }
    let value: Value =
        serde_json::from_str(&text).map_err(|e| ModelError::Malformed(e.to_string()))?;
    value
        .pointer("/choices/0/message")
        .filter(|m| m.is_object())
        .cloned()
        .ok_or_else(|| ModelError::Malformed("no choices[0].message".into()))
}
