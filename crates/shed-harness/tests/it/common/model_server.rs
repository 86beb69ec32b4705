//! An OpenAI-compatible chat-completions endpoint for the tests: it answers
//! each request with the next reply of its script — a message (as a 200
//! completion), a raw HTTP answer (a recorded one, an error), silence, or
//! obedience — and keeps every request body with its path.
//!
//! An obedient turn ([`Reply::Obey`]) is the injectable model of the attack
//! tests: it reads what the model was just given (the messages after its
//! last turn: tool results, or the task) and makes each tool call an
//! instruction marker there asks for — `DO: <tool> <json arguments>`
//! ([`marker`]) anywhere in a message's text, or in any string inside a tool
//! result's JSON, as a row's text carries it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// One answer of the script.
pub enum Reply {
    /// A 200 chat completion whose `choices[0].message` is this.
    Message(Value),
    /// This status, extra header lines and body, as sent.
    Raw {
        status: u16,
        headers: &'static str,
        body: String,
    },
    /// No answer: the connection is held open past any client's patience.
    Silence,
    /// The tool calls the markers in what the model was just given ask for,
    /// in the order they appear; an answer saying so when there is none.
    Obey,
}

/// The text of an instruction an obedient turn follows: call `tool` with `args`.
pub fn marker(tool: &str, args: &Value) -> String {
    format!("{MARKER}{tool} {args}")
}

const MARKER: &str = "DO: ";

/// What an obedient turn answers to `request`.
fn obey(request: &Value) -> Value {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    let since_last_turn = messages
        .iter()
        .rposition(|m| m["role"] == "assistant")
        .map_or(0, |i| i + 1);
    let mut texts = Vec::new();
    for message in &messages[since_last_turn..] {
        let Some(content) = message["content"].as_str() else {
            continue;
        };
        match serde_json::from_str::<Value>(content) {
            Ok(value) => strings_in(&value, &mut texts),
            Err(_) => texts.push(content.to_string()),
        }
    }
    let calls: Vec<(String, Value)> = texts.iter().flat_map(|t| instructions(t)).collect();
    if calls.is_empty() {
        return json!({"role": "assistant", "content": "I found nothing to do."});
    }
    let calls: Vec<(&str, Value)> = calls.iter().map(|(t, a)| (t.as_str(), a.clone())).collect();
    tool_calls(&calls)
}

/// Every string inside a JSON value.
fn strings_in(value: &Value, into: &mut Vec<String>) {
    match value {
        Value::String(text) => into.push(text.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings_in(v, into)),
        Value::Object(fields) => fields.values().for_each(|v| strings_in(v, into)),
        _ => {}
    }
}

/// The `DO: <tool> <json>` markers in a text, in order.
fn instructions(text: &str) -> Vec<(String, Value)> {
    text.match_indices(MARKER)
        .filter_map(|(at, _)| {
            let rest = &text[at + MARKER.len()..];
            let (tool, args) = rest.split_once(' ')?;
            let args = serde_json::Deserializer::from_str(args)
                .into_iter::<Value>()
                .next()?
                .ok()?;
            Some((tool.to_string(), args))
        })
        .collect()
}

impl Reply {
    /// A recorded answer of llama-cpp-python's server
    /// (`tests/recorded/llama-cpp-python/<name>`), with its status.
    pub fn recorded(status: u16, name: &str) -> Reply {
        let path = format!(
            "{}/tests/recorded/llama-cpp-python/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        Reply::Raw {
            status,
            headers: "",
            body: std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}")),
        }
    }
}

pub struct ScriptedModel {
    pub url: String,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl ScriptedModel {
    /// A server answering with these messages, in order.
    pub fn start(script: Vec<Value>) -> ScriptedModel {
        ScriptedModel::replying(script.into_iter().map(Reply::Message).collect())
    }

    /// A server answering with these replies, in order.
    pub fn replying(script: Vec<Reply>) -> ScriptedModel {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        std::thread::spawn(move || {
            for reply in script {
                let Ok((stream, _)) = listener.accept() else {
                    return;
                };
                let (request, stream) = read_request(stream);
                seen.lock().unwrap().push(request.clone());
                answer(stream, reply, &request);
            }
        });
        ScriptedModel { url, requests }
    }

    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

fn read_request(stream: TcpStream) -> (Value, TcpStream) {
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    let mut request_line = String::new();
    let _ = reader.read_line(&mut request_line);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    let mut request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    request["path"] = json!(request_line.split_whitespace().nth(1).unwrap_or(""));
    (request, reader.into_inner())
}

fn answer(mut stream: TcpStream, reply: Reply, request: &Value) {
    let completion = |message: Value| {
        json!({"id": "c", "object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}).to_string()
    };
    let (status, headers, body) = match reply {
        Reply::Message(message) => (200, "", completion(message)),
        Reply::Obey => (200, "", completion(obey(request))),
        Reply::Raw {
            status,
            headers,
            body,
        } => (status, headers, body),
        Reply::Silence => {
            std::thread::sleep(Duration::from_secs(30));
            return;
        }
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n{body}",
        body.len()
    );
}

/// An assistant turn calling these tools with these arguments.
pub fn tool_calls(calls: &[(&str, Value)]) -> Value {
    let calls: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, args))| json!({"id": format!("call-{i}"), "type": "function", "function": {"name": name, "arguments": args.to_string()}}))
        .collect();
    json!({"role": "assistant", "content": null, "tool_calls": calls})
}

/// The tool results a request carries, read as JSON.
pub fn tool_messages(request: &Value) -> Vec<Value> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect()
}
