//! One chat-completions request to an OpenAI-compatible model server: the
//! POST, bounded retries with backoff for 429 and 5xx, and every way it can
//! fail as one sentence naming the server and what it said.
//!
//! What real servers answer differs from the spec's happy path; the tests
//! below replay what `llama-cpp-python`'s server sent (recorded by
//! `scripts/test-model`, kept in `tests/recorded/`): validation failures as
//! HTTP 500 with a multi-line message, an empty message for an unsupported
//! `tool_choice`, FastAPI's `{"detail": …}` for a wrong path.

use std::time::Duration;

use serde_json::Value;

use crate::progress::Progress;

/// How often a request is tried and how long to wait between tries.
#[derive(Clone, Copy, Debug)]
pub struct Retries {
    /// Tries in all, the first included.
    pub tries: u32,
    /// The wait before the second try; each later wait doubles it.
    pub first_wait: Duration,
    /// The longest wait, whatever the server's `Retry-After` asks.
    pub longest_wait: Duration,
}

/// Four tries, waiting 1 s, 2 s, 4 s: a server that is overloaded or
/// restarting gets seven seconds, and a run that cannot go on ends soon.
pub const RETRIES: Retries = Retries {
    tries: 4,
    first_wait: Duration::from_secs(1),
    longest_wait: Duration::from_secs(30),
};

/// The longest part of a server's own words kept in a sentence.
const SAID_MAX_CHARS: usize = 300;

/// Why a request got no chat completion.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    /// The request got no HTTP answer: the connection was refused or reset,
    /// the name did not resolve, or the like.
    #[error(
        "cannot reach the model server at {url}: {detail} — check --base-url and that the server is up"
    )]
    Unreachable {
        /// The endpoint's URL, `<base-url>/chat/completions`.
        url: String,
        /// The innermost cause the HTTP client gave (`Connection refused`).
        detail: String,
    },
    /// The server did not answer within the request timeout.
    #[error(
        "the model server at {url} did not answer within {seconds} s — raise --request-timeout, or give it a smaller task"
    )]
    TimedOut {
        /// The endpoint's URL, `<base-url>/chat/completions`.
        url: String,
        /// The request timeout that passed, in seconds.
        seconds: u64,
    },
    /// The server answered an HTTP status other than 2xx (a 429 or 5xx only
    /// once the tries ran out).
    #[error("the model server at {url} answered HTTP {status}{tries}: {said} — {hint}")]
    Status {
        /// The endpoint's URL, `<base-url>/chat/completions`.
        url: String,
        /// The HTTP status of the last answer.
        status: u16,
        /// ` (4 tries)` when it was tried more than once.
        tries: String,
        /// The server's own words, on one line and cut to 300 characters:
        /// its error message where the body holds one, else the body, or
        /// `an empty body`.
        said: String,
        /// What to check for this status (the API key for 401 and 403,
        /// `--base-url` for 404, …).
        hint: String,
    },
    /// The server answered 2xx with a body that is not a chat completion
    /// (not JSON, an error object, or no `choices[0].message`).
    #[error(
        "the model server at {url} answered something that is not a chat completion ({why}): {start}"
    )]
    NotACompletion {
        /// The endpoint's URL, `<base-url>/chat/completions`.
        url: String,
        /// What is wrong with the body, as a clause (`it is not JSON: …`).
        why: String,
        /// The body's start, on one line and cut to 300 characters.
        start: String,
    },
}

/// A chat-completions endpoint: `<base-url>/chat/completions`.
pub struct Endpoint {
    client: reqwest::Client,
    url: String,
    api_key: Option<String>,
    timeout: Duration,
    retries: Retries,
}

/// One try's failure: retried when the server asked for it (429, 5xx).
enum Failure {
    Retry {
        status: u16,
        body: String,
        retry_after: Option<Duration>,
    },
    Final(EndpointError),
}

impl Endpoint {
    /// The endpoint under `base_url`, each request bounded by `timeout`.
    pub fn new(
        base_url: &str,
        api_key: Option<String>,
        timeout: Duration,
        retries: Retries,
    ) -> Endpoint {
        Endpoint {
            client: reqwest::Client::new(),
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            api_key,
            timeout,
            retries,
        }
    }

    /// Posts `body` and answers the completion's `choices[0].message`,
    /// trying again after a 429 or a 5xx until the tries run out.
    pub async fn complete(
        &self,
        body: &Value,
        progress: &Progress,
    ) -> Result<Value, EndpointError> {
        let mut wait = self.retries.first_wait;
        let mut tried = 0;
        loop {
            tried += 1;
            let (status, body, retry_after) = match self.try_once(body).await {
                Ok(message) => return Ok(message),
                Err(Failure::Final(error)) => return Err(error),
                Err(Failure::Retry {
                    status,
                    body,
                    retry_after,
                }) => (status, body, retry_after),
            };
            if tried >= self.retries.tries {
                return Err(status_error(&self.url, status, &body, tried));
            }
            let pause = retry_after.unwrap_or(wait).min(self.retries.longest_wait);
            progress.retrying(status, pause, tried + 1, self.retries.tries);
            tokio::time::sleep(pause).await;
            wait = wait.saturating_mul(2);
        }
    }

    async fn try_once(&self, body: &Value) -> Result<Value, Failure> {
        let mut request = self.client.post(&self.url).json(body).timeout(self.timeout);
        if let Some(key) = &self.api_key {
            request = request.bearer_auth(key);
        }
        let response = request
            .send()
            .await
            .map_err(|e| Failure::Final(self.transport_error(&e)))?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = response
            .text()
            .await
            .map_err(|e| Failure::Final(self.transport_error(&e)))?;
        if status == 429 || (500..600).contains(&status) {
            return Err(Failure::Retry {
                status,
                body: text,
                retry_after,
            });
        }
        if !(200..300).contains(&status) {
            return Err(Failure::Final(status_error(&self.url, status, &text, 1)));
        }
        message_of(&text).map_err(|why| {
            Failure::Final(EndpointError::NotACompletion {
                url: self.url.clone(),
                why,
                start: cut(&one_line(&text)),
            })
        })
    }

    fn transport_error(&self, error: &reqwest::Error) -> EndpointError {
        if error.is_timeout() {
            return EndpointError::TimedOut {
                url: self.url.clone(),
                seconds: self.timeout.as_secs(),
            };
        }
        // reqwest's own text names only the outermost error ("error sending
        // request"); the cause (connection refused, reset) is what helps.
        let mut detail = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(cause) = source {
            detail = cause.to_string();
            source = cause.source();
        }
        EndpointError::Unreachable {
            url: self.url.clone(),
            detail,
        }
    }
}

/// The completion's first message, or why the text is not a completion.
pub fn message_of(text: &str) -> Result<Value, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("it is not JSON: {e}"))?;
    if let Some(message) = value
        .pointer("/choices/0/message")
        .filter(|m| m.is_object())
    {
        return Ok(message.clone());
    }
    match said(&value) {
        Some(said) => Err(format!("it holds an error instead: {said}")),
        None => Err("it has no choices[0].message".to_string()),
    }
}

/// The sentence for an HTTP error, after `tries` tries.
fn status_error(url: &str, status: u16, body: &str, tries: u32) -> EndpointError {
    let said = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|value| said(&value))
        .unwrap_or_else(|| {
            if body.trim().is_empty() {
                "an empty body".to_string()
            } else {
                one_line(body)
            }
        });
    EndpointError::Status {
        url: url.to_string(),
        status,
        tries: if tries > 1 {
            format!(" ({tries} tries)")
        } else {
            String::new()
        },
        said: cut(&said),
        hint: hint(status, url),
    }
}

/// What a server's error body says: OpenAI's `{"error": {"message", "type"}}`
/// (a message, else its type), FastAPI's `{"detail": …}`, or a bare
/// `{"error": "…"}` / `{"message": "…"}`; on one line.
fn said(value: &Value) -> Option<String> {
    if let Some(error) = value.get("error") {
        if let Some(text) = error.as_str() {
            return Some(one_line(text));
        }
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .map(one_line)
            .filter(|m| !m.is_empty());
        let kind = error.get("type").and_then(Value::as_str);
        return match (message, kind) {
            (Some(message), _) => Some(message),
            (None, Some(kind)) => Some(format!("{kind}, with no message")),
            (None, None) => Some(one_line(&error.to_string())),
        };
    }
    for key in ["detail", "message"] {
        match value.get(key) {
            Some(Value::String(text)) => return Some(one_line(text)),
            Some(other) if !other.is_null() => return Some(one_line(&other.to_string())),
            _ => {}
        }
    }
    None
}

/// What to do about an HTTP status.
fn hint(status: u16, url: &str) -> String {
    match status {
        401 | 403 => "check the API key: --api-key-env names the variable that holds it".into(),
        404 => format!(
            "check --base-url: requests go to {url}, and most servers want the base URL to end in /v1"
        ),
        429 => "the server is limiting requests; wait and run again".into(),
        500..=599 => "the server failed at this request; its log says more".into(),
        _ => "the server refused the request".into(),
    }
}

/// Text on one line: runs of whitespace (newlines included) made one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// At most [`SAID_MAX_CHARS`] characters, `…` where cut.
fn cut(text: &str) -> String {
    if text.chars().count() <= SAID_MAX_CHARS {
        return text.to_string();
    }
    let mut kept: String = text.chars().take(SAID_MAX_CHARS - 1).collect();
    kept.push('…');
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "http://127.0.0.1:9/v1/chat/completions";

    fn recorded(name: &str) -> String {
        let path = format!(
            "{}/tests/recorded/llama-cpp-python/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    // llama-cpp-python answers a forced tool call as a completion whose
    // message carries `tool_calls` and, beside them, the legacy
    // `function_call` (whose name may differ: `run_command:`).
    #[test]
    fn a_recorded_completion_reads_as_its_message() {
        let message = message_of(&recorded("forced-tool-call.json")).unwrap();
        assert_eq!(message["role"], "assistant");
        assert!(message["content"].is_null());
        assert_eq!(message["tool_calls"][0]["function"]["name"], "run_command");
    }

    // `tool_choice: "required"`: HTTP 500 whose error has a type and an
    // empty message.
    #[test]
    fn an_error_with_an_empty_message_names_its_type() {
        let error = status_error(URL, 500, &recorded("required-500.json"), 4);
        assert_eq!(
            error.to_string(),
            "the model server at http://127.0.0.1:9/v1/chat/completions answered HTTP 500 (4 tries): internal_server_error, with no message — the server failed at this request; its log says more"
        );
    }

    // A request body the server's schema refuses: HTTP 500 (not 400) whose
    // message runs over many lines with Python's reprs — kept on one line
    // and cut.
    #[test]
    fn a_long_validation_error_is_one_cut_line() {
        let sentence = status_error(URL, 500, &recorded("validation-500.json"), 1).to_string();
        assert!(
            sentence.starts_with(
                "the model server at http://127.0.0.1:9/v1/chat/completions answered HTTP 500: 7 validation errors: {'type': 'literal_error'"
            ),
            "{sentence}"
        );
        assert!(!sentence.contains('\n'), "{sentence}");
        assert!(sentence.contains("… — the server failed"), "{sentence}");
        assert!(
            sentence.chars().count() < SAID_MAX_CHARS + 200,
            "{sentence}"
        );
    }

    // A base URL without /v1: FastAPI's 404 `{"detail": "Not Found"}`.
    #[test]
    fn a_wrong_path_says_where_requests_go() {
        let error = status_error(URL, 404, &recorded("not-found-404.json"), 1);
        assert_eq!(
            error.to_string(),
            "the model server at http://127.0.0.1:9/v1/chat/completions answered HTTP 404: Not Found — check --base-url: requests go to http://127.0.0.1:9/v1/chat/completions, and most servers want the base URL to end in /v1"
        );
    }

    #[test]
    fn bodies_that_are_not_completions_say_why() {
        assert!(
            message_of("<html>")
                .unwrap_err()
                .starts_with("it is not JSON")
        );
        assert_eq!(
            message_of(r#"{"choices": []}"#).unwrap_err(),
            "it has no choices[0].message"
        );
        assert_eq!(
            message_of(r#"{"error": {"message": "model not loaded"}}"#).unwrap_err(),
            "it holds an error instead: model not loaded"
        );
        let error = status_error(URL, 502, "", 1).to_string();
        assert!(error.contains("HTTP 502: an empty body"), "{error}");
        let error = status_error(URL, 400, "plain\ntext", 1).to_string();
        assert!(
            error.contains("HTTP 400: plain text — the server refused"),
            "{error}"
        );
    }
}
