//! The MCP door's sessions, black-box: the real `shed up` on a fresh data
//! folder, asked over loopback HTTP as legacy clients (`initialize`, then
//! requests with `Mcp-Session-Id`) and as 2026-07-28 clients (sessionless).
//! A flood of signed-out `initialize`s must not grow the server's memory
//! nor keep a signed-in caller out; past the per-address cap an `initialize`
//! is a 503 with a sentence; a session that asks nothing is closed soon.

use crate::listening::shed_up;
use std::{
    process::Child,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use reqwest::{StatusCode, header};
use serde_json::{Value, json};
use shed_mcp::{MAX_SIGNED_OUT_SESSIONS_PER_ADDRESS, SessionRefusal, UNUSED_SESSION_TIMEOUT};

/// The protocol of sessionless (2026-07-28) requests.
const SESSIONLESS: &str = "2026-07-28";

/// The protocol a legacy client names in its `initialize`.
const LEGACY: &str = "2025-06-18";

/// The signed-out `initialize`s of the flood.
const FLOOD: usize = 5_000;

/// The flood's clients, each one keep-alive connection sending one at a time.
const FLOOD_CLIENTS: usize = 8;

/// The most the flood may take: uncapped, it took under 15 s on a loaded machine.
const FLOOD_TIME: Duration = Duration::from_secs(180);

/// How much the server's memory may grow over the flood: uncapped, 5,000
/// sessions took ≈680 MB (≈136 KB each); the per-address cap keeps 16.
const RSS_GROWTH_BYTES: u64 = 64 * 1024 * 1024;

/// A `shed up` serving a fresh data folder, and the token it printed.
struct Served {
    child: Child,
    url: String,
    token: String,
    _data: tempfile::TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `shed up` on a free loopback port and reads the token it prints.
fn start() -> Served {
    start_with(&[])
}

/// As [`start`], with `extra` flags.
fn start_with(extra: &[&str]) -> Served {
    let data = tempfile::tempdir().unwrap();
    let (child, port, token) = shed_up(data.path(), extra, &[]);
    Served {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
        token,
        _data: data,
    }
}

/// The server's resident memory, in bytes, from /proc.
fn rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .expect("a VmRSS line");
    let kib: u64 = line.trim().trim_end_matches("kB").trim().parse().unwrap();
    kib * 1024
}

/// An answer: its status, its `Mcp-Session-Id`, and its body.
struct Answer {
    status: StatusCode,
    session: Option<String>,
    body: String,
}

impl Answer {
    /// The JSON-RPC message of a JSON or SSE body.
    fn message(&self) -> Value {
        let json = if self.body.trim_start().starts_with('{') {
            self.body.as_str()
        } else {
            self.body
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(str::trim)
                .rfind(|data| data.starts_with('{'))
                .unwrap_or_else(|| panic!("no message in {:?}", self.body))
        };
        serde_json::from_str(json).unwrap()
    }

    /// The result of a request that was answered (a refusal of the host's
    /// included), not turned away.
    fn result(&self) -> Value {
        assert_eq!(self.status, StatusCode::OK, "{}", self.body);
        let message = self.message();
        assert!(message["result"].is_object(), "{message}");
        message["result"].clone()
    }

    /// The structured answer of a `tools/call` that succeeded.
    fn tool_answer(&self) -> Value {
        let result = self.result();
        assert_eq!(result["isError"], json!(false), "{result}");
        result["structuredContent"].clone()
    }
}

/// POSTs one JSON-RPC message to /mcp, with the bearer `token` and in `session`.
async fn post(
    served: &Served,
    http: &reqwest::Client,
    token: Option<&str>,
    session: Option<&str>,
    message: Value,
) -> Answer {
    post_with(http.post(&served.url), token, session, message).await
}

/// A signed-out `initialize` with forwarding `headers` (name, value).
async fn initialize_forwarded(
    served: &Served,
    http: &reqwest::Client,
    headers: &[(&str, &str)],
) -> Answer {
    let request = headers
        .iter()
        .fold(http.post(&served.url), |request, (name, value)| {
            request.header(*name, *value)
        });
    post_with(request, None, None, initialize()).await
}

/// As [`post`], on `request` (with headers of its own).
async fn post_with(
    request: reqwest::RequestBuilder,
    token: Option<&str>,
    session: Option<&str>,
    message: Value,
) -> Answer {
    let mut request = request
        .header(header::ACCEPT, "application/json, text/event-stream")
        .json(&message);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", LEGACY);
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|id| id.to_str().unwrap().to_string());
    let body = response.text().await.unwrap();
    Answer {
        status,
        session,
        body,
    }
}

fn initialize() -> Value {
    json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {},
        "clientInfo": { "name": "mcp_sessions", "version": "0" } } })
}

fn initialized() -> Value {
    json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })
}

fn tools_list() -> Value {
    json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" })
}

fn commands() -> Value {
    json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": { "name": "commands", "arguments": {} } })
}

/// `commands` as a 2026-07-28 client asks it: no session, per-request `_meta`.
async fn sessionless_commands(
    served: &Served,
    http: &reqwest::Client,
    token: Option<&str>,
) -> Answer {
    let mut call = commands();
    call["params"]["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": SESSIONLESS,
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let mut request = http
        .post(&served.url)
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header("mcp-protocol-version", SESSIONLESS)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "commands")
        .json(&call);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("the server answers");
    Answer {
        status: response.status(),
        session: None,
        body: response.text().await.unwrap(),
    }
}

/// A legacy session of `token` (or signed out): `initialize`, then `initialized`.
async fn open_session(served: &Served, http: &reqwest::Client, token: Option<&str>) -> String {
    let answer = post(served, http, token, None, initialize()).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    let session = answer.session.expect("an Mcp-Session-Id");
    let notified = post(served, http, token, Some(&session), initialized()).await;
    assert_eq!(notified.status, StatusCode::ACCEPTED, "{}", notified.body);
    session
}

/// The names of the commands an answer of `commands` lists.
fn command_names(answer: &Value) -> Vec<String> {
    answer["commands"]
        .as_array()
        .unwrap_or_else(|| panic!("no commands in {answer}"))
        .iter()
        .map(|command| command["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_signed_out_sessions_leaves_memory_and_signed_in_calls_alone() {
    let served = Arc::new(start());
    let http = reqwest::Client::new();
    // Warm up: the first calls of each kind, so the baseline holds what
    // any served process holds.
    let token = served.token.clone();
    assert!(
        !command_names(
            &sessionless_commands(&served, &http, Some(&token))
                .await
                .tool_answer()
        )
        .is_empty()
    );
    let session = open_session(&served, &http, None).await;
    post(&served, &http, None, Some(&session), tools_list()).await;
    let before = rss_bytes(served.child.id());

    let sent = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut clients = Vec::new();
    for _ in 0..FLOOD_CLIENTS {
        let (served, sent) = (served.clone(), sent.clone());
        clients.push(tokio::spawn(async move {
            let http = reqwest::Client::new();
            let mut statuses = Vec::new();
            while sent.fetch_add(1, Ordering::Relaxed) < FLOOD && started.elapsed() < FLOOD_TIME {
                let answer = post(&served, &http, None, None, initialize()).await;
                statuses.push(answer.status);
            }
            statuses
        }));
    }
    let mut statuses = Vec::new();
    for client in clients {
        statuses.extend(client.await.unwrap());
    }
    assert_eq!(
        statuses.len(),
        FLOOD,
        "the flood did not finish within {FLOOD_TIME:?}"
    );
    assert!(
        statuses
            .iter()
            .all(|status| [StatusCode::OK, StatusCode::SERVICE_UNAVAILABLE].contains(status)),
        "an initialize was answered neither 200 nor 503"
    );
    let after = rss_bytes(served.child.id());
    let grown = after.saturating_sub(before);
    assert!(
        grown < RSS_GROWTH_BYTES,
        "{FLOOD} signed-out initializes grew the server from {} MB to {} MB",
        before >> 20,
        after >> 20
    );

    // A signed-in caller still gets answers: sessionless, and in a session.
    let names = command_names(
        &sessionless_commands(&served, &http, Some(&token))
            .await
            .tool_answer(),
    );
    assert!(names.contains(&"log_run".to_string()), "{names:?}");
    let session = open_session(&served, &http, Some(&token)).await;
    let answer = post(&served, &http, Some(&token), Some(&session), commands()).await;
    assert_eq!(command_names(&answer.tool_answer()), names);
}

#[tokio::test]
async fn past_the_cap_a_signed_out_initialize_is_a_503_with_a_sentence() {
    let served = start();
    let http = reqwest::Client::new();
    let mut sessions = Vec::new();
    for _ in 0..MAX_SIGNED_OUT_SESSIONS_PER_ADDRESS {
        sessions.push(open_session(&served, &http, None).await);
    }
    let refused = post(&served, &http, None, None, initialize()).await;
    assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.body, SessionRefusal::AddressFull.to_string());
    assert_eq!(
        refused.body,
        "your address already holds 16 MCP sessions opened signed out, the most shed keeps \
         for one address; close one (HTTP DELETE /mcp with its Mcp-Session-Id), wait a few \
         minutes for an idle one to end, or sign in with a token from `shed token create <handle>`"
    );
    // An initialize whose headers name another method skips the door's read
    // of its body, so it must open no session either: rmcp refuses it.
    let disguised = http
        .post(&served.url)
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header("mcp-protocol-version", SESSIONLESS)
        .header("mcp-method", "tools/list")
        .json(
            &json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": SESSIONLESS, "capabilities": {},
            "clientInfo": { "name": "mcp_sessions", "version": "0" } } }),
        )
        .send()
        .await
        .unwrap();
    assert!(
        disguised.status().is_client_error() && !disguised.headers().contains_key("mcp-session-id"),
        "a disguised initialize was answered {} {:?}",
        disguised.status(),
        disguised.headers()
    );

    // The sessions held still answer; a signed-in caller, and any sessionless
    // call, are not counted against the address.
    let answer = post(&served, &http, None, Some(&sessions[0]), tools_list()).await;
    answer.result();
    let token = served.token.clone();
    open_session(&served, &http, Some(&token)).await;
    let signed_out_call = sessionless_commands(&served, &http, None).await;
    assert_eq!(
        signed_out_call.status,
        StatusCode::UNAUTHORIZED,
        "signed out, a call is the 401 that starts a sign-in, never the cap's 503: {}",
        signed_out_call.body
    );

    // Closing one makes room for one.
    let closed = http
        .delete(&served.url)
        .header("mcp-session-id", &sessions[0])
        .header("mcp-protocol-version", LEGACY)
        .send()
        .await
        .unwrap();
    assert!(closed.status().is_success(), "{}", closed.status());
    open_session(&served, &http, None).await;
    let refused = post(&served, &http, None, None, initialize()).await;
    assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
}

#[tokio::test]
async fn a_browser_at_the_mcp_address_gets_a_page_and_a_client_its_stream() {
    let served = start();
    let http = reqwest::Client::new();
    let html = |response: &reqwest::Response| {
        response
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|kind| kind.to_str().unwrap().starts_with("text/html"))
    };
    // A browser's GET: a page saying what the address is and how to connect.
    let browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    let page = http
        .get(&served.url)
        .header(header::ACCEPT, browser)
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(html(&page));
    let page = page.text().await.unwrap();
    for said in ["/mcp</code>", "signs in by itself", "href=\"/#connect\""] {
        assert!(page.contains(said), "{said} in {page}");
    }
    // A client's GET in its session still opens the stream.
    let token = Some(served.token.as_str());
    let session = open_session(&served, &http, token).await;
    let stream = http
        .get(&served.url)
        .bearer_auth(&served.token)
        .header(header::ACCEPT, "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", LEGACY)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    assert_eq!(stream.headers()[header::CONTENT_TYPE], "text/event-stream");
    drop(stream);
    // A GET naming a session, or asking for a stream, is never the page.
    for (accept, session) in [
        (browser, Some(session.as_str())),
        ("text/event-stream", None),
    ] {
        let mut request = http.get(&served.url).header(header::ACCEPT, accept);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        let answer = request.send().await.unwrap();
        assert!(!html(&answer), "{accept} {session:?}: {answer:?}");
    }
    // POSTs are answered as ever.
    let listed = post(&served, &http, token, Some(&session), tools_list()).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    listed.result();
}

#[tokio::test]
async fn a_session_that_asks_nothing_after_initialize_is_closed() {
    let served = start();
    let http = reqwest::Client::new();
    let unused = open_session(&served, &http, None).await;
    let used = open_session(&served, &http, None).await;
    let listed = post(&served, &http, None, Some(&used), tools_list()).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);

    tokio::time::sleep(UNUSED_SESSION_TIMEOUT + Duration::from_secs(3)).await;

    let gone = post(&served, &http, None, Some(&unused), tools_list()).await;
    assert_eq!(
        gone.status,
        StatusCode::NOT_FOUND,
        "a session that asked nothing for {UNUSED_SESSION_TIMEOUT:?} still answers"
    );
    let answer = post(&served, &http, None, Some(&used), tools_list()).await;
    answer.result();
}

#[tokio::test]
async fn behind_a_trusted_proxy_each_forwarded_address_has_its_own_cap() {
    let served = start_with(&["--trusted-proxy", "127.0.0.1"]);
    let http = reqwest::Client::new();
    for _ in 0..MAX_SIGNED_OUT_SESSIONS_PER_ADDRESS {
        let answer =
            initialize_forwarded(&served, &http, &[("x-forwarded-for", "203.0.113.7")]).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    }
    // The same client whatever it wrote left of the address the proxy
    // appended, and whatever `Forwarded` it sent (the proxy passed it on;
    // shed reads only X-Forwarded-For by default).
    for forwarded in [
        &[("x-forwarded-for", "203.0.113.7")][..],
        &[("x-forwarded-for", "198.51.100.1, 203.0.113.7")],
        &[
            ("forwarded", "for=198.51.100.2;proto=https"),
            ("x-forwarded-for", "203.0.113.7"),
        ],
    ] {
        let refused = initialize_forwarded(&served, &http, forwarded).await;
        assert_eq!(
            refused.status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{forwarded:?}"
        );
        assert_eq!(refused.body, SessionRefusal::AddressFull.to_string());
    }
    // Another client behind the same proxy is counted apart.
    let answer = initialize_forwarded(&served, &http, &[("x-forwarded-for", "203.0.113.9")]).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    // A hop shed must read and cannot, or `Forwarded` alone, counts as the proxy.
    for unreadable in [
        &[("x-forwarded-for", "unknown")][..],
        &[("forwarded", "for=203.0.113.7")],
    ] {
        let answer = initialize_forwarded(&served, &http, unreadable).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    }
}

// A proxy that appends to `Forwarded` instead: named by
// SHED_TRUSTED_PROXY_HEADER, shed reads that header only.
#[tokio::test]
async fn behind_a_proxy_that_keeps_forwarded_only_forwarded_is_read() {
    let data = tempfile::tempdir().unwrap();
    let extra = ["--trusted-proxy", "127.0.0.1"];
    let (child, port, token) = shed_up(
        data.path(),
        &extra,
        &[("SHED_TRUSTED_PROXY_HEADER", "forwarded")],
    );
    let served = Served {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
        token,
        _data: data,
    };
    let http = reqwest::Client::new();
    for n in 0..MAX_SIGNED_OUT_SESSIONS_PER_ADDRESS {
        let made_up = format!("198.51.100.{n}");
        let headers = [
            ("forwarded", "for=203.0.113.7;proto=https"),
            ("x-forwarded-for", made_up.as_str()),
        ];
        let answer = initialize_forwarded(&served, &http, &headers).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    }
    let refused = initialize_forwarded(
        &served,
        &http,
        &[("forwarded", "for=198.51.100.1, for=\"203.0.113.7:4711\"")],
    )
    .await;
    assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.body, SessionRefusal::AddressFull.to_string());
    let answer = initialize_forwarded(&served, &http, &[("forwarded", "for=203.0.113.8")]).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
}

#[tokio::test]
async fn without_a_trusted_proxy_forwarding_headers_are_ignored() {
    let served = start();
    let http = reqwest::Client::new();
    for n in 0..MAX_SIGNED_OUT_SESSIONS_PER_ADDRESS {
        let address = format!("203.0.113.{n}");
        let header = if n % 2 == 0 {
            "x-forwarded-for"
        } else {
            "forwarded"
        };
        let value = if n % 2 == 0 {
            address
        } else {
            format!("for={address}")
        };
        let answer = initialize_forwarded(&served, &http, &[(header, &value)]).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    }
    let refused =
        initialize_forwarded(&served, &http, &[("x-forwarded-for", "198.51.100.200")]).await;
    assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.body, SessionRefusal::AddressFull.to_string());
}
