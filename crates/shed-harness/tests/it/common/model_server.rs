//! An OpenAI-compatible chat-completions endpoint for the tests: it answers
//! each request with the next reply of its script — a message (as a 200
//! completion), a raw HTTP answer (a recorded one, an error), or silence —
//! and keeps every request body with its path.

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
                seen.lock().unwrap().push(request);
                answer(stream, reply);
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

fn answer(mut stream: TcpStream, reply: Reply) {
    let (status, headers, body) = match reply {
        Reply::Message(message) => (
            200,
            "",
            json!({"id": "c", "object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}).to_string(),
        ),
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
