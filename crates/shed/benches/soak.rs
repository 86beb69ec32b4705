//! The soak: a real `shed up` under mixed MCP load for a long while
//! (`SHED_SOAK_MINUTES`, default 30), to see whether its memory levels off
//! and whether anything fails that should not. Four clients, each a loop
//! over: `command log_run` (writes), `command find_jog` (50-row reads),
//! `commands`, and opening a legacy MCP session (`initialize`,
//! `notifications/initialized`, `tools/list`) that is then dropped without
//! being closed — half with the token, half signed out. A deployer
//! changes a file of demo/runs and redeploys it (`app_files`, `app_deploy`)
//! every minute. The server's RSS is sampled every 10 s.
//!
//! It prints the RSS series, whether memory plateaued (the mean of the
//! last third of the run within 10 % of the middle third's — minutes 20–30
//! against 10–20 for the default run), the calls made by kind, and every
//! answer that was neither a success nor an expected refusal (a 503 with
//! the session caps' sentence for an `initialize` past them).
//!
//! `cargo bench -p shed --bench soak` (release build). Not run by CI.

// A bench stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{PROTOCOL, Server, call, start, tool_call};

/// The clients loading the server.
const CLIENTS: u64 = 4;

/// How often the server's memory is sampled.
const SAMPLE_EVERY: Duration = Duration::from_secs(10);

/// How often demo/runs is redeployed.
const DEPLOY_EVERY: Duration = Duration::from_secs(60);

/// The protocol a legacy client names in its `initialize`.
const LEGACY: &str = "2025-06-18";

/// The failures kept to print, of each client.
const KEPT_FAILURES: usize = 5;

/// What the clients counted.
#[derive(Default)]
struct Tally {
    writes: AtomicU64,
    reads: AtomicU64,
    listings: AtomicU64,
    sessions: AtomicU64,
    deploys: AtomicU64,
    refused_sessions: AtomicU64,
    failures: AtomicU64,
    kept: std::sync::Mutex<Vec<String>>,
}

impl Tally {
    fn failed(&self, what: &str, detail: String) {
        self.failures.fetch_add(1, Ordering::Relaxed);
        let mut kept = self.kept.lock().expect("the failures");
        if kept.len() < KEPT_FAILURES * CLIENTS as usize {
            kept.push(format!("{what}: {detail}"));
        }
    }
}

/// The server's resident memory, in MiB, from /proc.
fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let kib: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmRSS line");
    kib / 1024.0
}

/// POSTs one JSON-RPC message: the status, the session it opened, the body.
async fn post(
    http: &reqwest::Client,
    url: &str,
    token: Option<&str>,
    session: Option<&str>,
    message: &Value,
) -> Result<(reqwest::StatusCode, Option<String>, String), reqwest::Error> {
    let method = message["method"].as_str().unwrap_or_default();
    let mut request = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(message);
    request = match session {
        Some(session) => request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", LEGACY),
        None if method == "initialize" => request,
        None => request
            .header("mcp-protocol-version", PROTOCOL)
            .header("mcp-method", method)
            .header(
                "mcp-name",
                message["params"]["name"].as_str().unwrap_or_default(),
            ),
    };
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await?;
    let status = response.status();
    let opened = response
        .headers()
        .get("mcp-session-id")
        .and_then(|id| id.to_str().ok())
        .map(str::to_string);
    Ok((status, opened, response.text().await?))
}

/// Whether a body is a JSON-RPC result that is not a tool's error.
fn succeeded(body: &str) -> bool {
    let json = if body.trim_start().starts_with('{') {
        body
    } else {
        body.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(str::trim)
            .rfind(|data| data.starts_with('{'))
            .unwrap_or_default()
    };
    serde_json::from_str::<Value>(json).is_ok_and(|message| {
        message["result"].is_object() && message["result"]["isError"] != json!(true)
    })
}

/// Sends `message` sessionless and counts it in `counter` or as a failure.
async fn ask(
    http: &reqwest::Client,
    server: (&str, &str),
    message: &Value,
    counter: &AtomicU64,
    tally: &Tally,
) {
    let (url, token) = server;
    match post(http, url, Some(token), None, message).await {
        Ok((status, _, body)) if status.is_success() && succeeded(&body) => {
            counter.fetch_add(1, Ordering::Relaxed);
        }
        Ok((status, _, body)) => tally.failed("a call", format!("{status}: {body}")),
        Err(error) => tally.failed("a call", error.to_string()),
    }
}

/// Opens a legacy session, lists the tools in it, and drops it unclosed.
async fn open_and_drop_a_session(
    http: &reqwest::Client,
    url: &str,
    token: Option<&str>,
    tally: &Tally,
) {
    let initialize = json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {},
        "clientInfo": { "name": "soak", "version": "0" } } });
    let session = match post(http, url, token, None, &initialize).await {
        Ok((status, Some(session), _)) if status.is_success() => session,
        Ok((reqwest::StatusCode::SERVICE_UNAVAILABLE, _, body))
            if body.contains("MCP sessions") =>
        {
            tally.refused_sessions.fetch_add(1, Ordering::Relaxed);
            return;
        }
        Ok((status, _, body)) => return tally.failed("initialize", format!("{status}: {body}")),
        Err(error) => return tally.failed("initialize", error.to_string()),
    };
    let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
    let listed = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" });
    for message in [&initialized, &listed] {
        match post(http, url, token, Some(&session), message).await {
            Ok((status, _, body))
                if status.is_success() && (status.as_u16() == 202 || succeeded(&body)) => {}
            Ok((status, _, body)) => {
                return tally.failed("in a session", format!("{status}: {body}"));
            }
            Err(error) => return tally.failed("in a session", error.to_string()),
        }
    }
    tally.sessions.fetch_add(1, Ordering::Relaxed);
}

/// One client's loop until `stop`.
async fn client(
    server: Arc<(String, String)>,
    lane: u64,
    stop: Arc<AtomicBool>,
    tally: Arc<Tally>,
) {
    let http = reqwest::Client::new();
    let (url, token) = (server.0.as_str(), server.1.as_str());
    let mut i = lane * 1_000_000_000;
    while !stop.load(Ordering::Relaxed) {
        i += 1;
        match i % 10 {
            0..=4 => {
                let run = json!({ "who": format!("runner {}", i % 97), "miles": (i % 26) as f64 / 2.0, "at": "2026-09-01T07:00:00Z" });
                ask(
                    &http,
                    (url, token),
                    &call(i, "log_run", run),
                    &tally.writes,
                    &tally,
                )
                .await;
            }
            5..=7 => {
                ask(
                    &http,
                    (url, token),
                    &call(i, "find_jog", json!({ "limit": 50 })),
                    &tally.reads,
                    &tally,
                )
                .await;
            }
            8 => {
                ask(
                    &http,
                    (url, token),
                    &tool_call(1, "commands", json!({})),
                    &tally.listings,
                    &tally,
                )
                .await;
            }
            _ => {
                let signed_in = (i / 10).is_multiple_of(2);
                open_and_drop_a_session(&http, url, signed_in.then_some(token), &tally).await;
            }
        }
    }
}

/// Changes a file of demo/runs and deploys it, every [`DEPLOY_EVERY`].
async fn deployer(server: Arc<(String, String)>, stop: Arc<AtomicBool>, tally: Arc<Tally>) {
    let http = reqwest::Client::new();
    let (url, token) = (server.0.as_str(), server.1.as_str());
    let mut minute = 0;
    while !stop.load(Ordering::Relaxed) {
        tokio::time::sleep(DEPLOY_EVERY).await;
        minute += 1;
        let draft = tool_call(
            1,
            "app_files",
            json!({ "app": "demo/runs", "write": { "note.txt": format!("minute {minute}") } }),
        );
        let deploy = tool_call(1, "app_deploy", json!({ "app": "demo/runs" }));
        ask(&http, (url, token), &draft, &AtomicU64::new(0), &tally).await;
        ask(&http, (url, token), &deploy, &tally.deploys, &tally).await;
    }
}

/// The mean of the samples taken in `[from, to)` of the run.
fn mean_between(samples: &[(Duration, f64)], from: Duration, to: Duration) -> f64 {
    let chosen: Vec<f64> = samples
        .iter()
        .filter(|(at, _)| *at >= from && *at < to)
        .map(|(_, mib)| *mib)
        .collect();
    chosen.iter().sum::<f64>() / chosen.len().max(1) as f64
}

fn main() {
    // `cargo test --benches` passes no --bench: a short smoke run.
    let benching = std::env::args().any(|arg| arg == "--bench");
    let minutes: f64 = std::env::var("SHED_SOAK_MINUTES")
        .ok()
        .and_then(|m| m.parse().ok())
        .unwrap_or(if benching { 30.0 } else { 0.25 });
    let length = Duration::from_secs_f64(minutes * 60.0);
    let server: Server = start(None);
    let pid = server.child.id();
    let shared = Arc::new((server.url.clone(), server.token.clone()));
    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Tally::default());
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    println!(
        "soak: {minutes} minutes of mixed MCP load from {CLIENTS} clients, RSS every {SAMPLE_EVERY:?}"
    );
    let samples = runtime.block_on(async {
        let mut tasks: Vec<_> = (0..CLIENTS)
            .map(|lane| tokio::spawn(client(shared.clone(), lane, stop.clone(), tally.clone())))
            .collect();
        let deploying = tokio::spawn(deployer(shared.clone(), stop.clone(), tally.clone()));
        let started = Instant::now();
        let mut samples = vec![(Duration::ZERO, rss_mib(pid))];
        while started.elapsed() < length {
            tokio::time::sleep(SAMPLE_EVERY.min(length)).await;
            let sample = (started.elapsed(), rss_mib(pid));
            println!(
                "{:>6.0} s  RSS {:>7.1} MiB  writes {} reads {} sessions {} deploys {} failures {}",
                sample.0.as_secs_f64(),
                sample.1,
                tally.writes.load(Ordering::Relaxed),
                tally.reads.load(Ordering::Relaxed),
                tally.sessions.load(Ordering::Relaxed),
                tally.deploys.load(Ordering::Relaxed),
                tally.failures.load(Ordering::Relaxed)
            );
            samples.push(sample);
        }
        stop.store(true, Ordering::Relaxed);
        deploying.abort();
        for task in tasks.drain(..) {
            task.await.expect("a client ran");
        }
        samples
    });
    let third = length / 3;
    let middle = mean_between(&samples, third, third * 2);
    let last = mean_between(&samples, third * 2, length + SAMPLE_EVERY);
    let change = (last - middle) / middle * 100.0;
    println!(
        "RSS: start {:.1} MiB, mean of the middle third {middle:.1} MiB, of the last third {last:.1} MiB ({change:+.1} %): {}",
        samples[0].1,
        if change.abs() <= 10.0 {
            "plateaued"
        } else {
            "did NOT plateau"
        }
    );
    println!(
        "calls: {} writes, {} 50-row reads, {} listings, {} sessions opened and dropped ({} refused at the caps, as expected), {} deploys",
        tally.writes.load(Ordering::Relaxed),
        tally.reads.load(Ordering::Relaxed),
        tally.listings.load(Ordering::Relaxed),
        tally.sessions.load(Ordering::Relaxed),
        tally.refused_sessions.load(Ordering::Relaxed),
        tally.deploys.load(Ordering::Relaxed),
    );
    let database = std::fs::metadata(server.data.path().join("shed.db"))
        .map(|meta| meta.len())
        .unwrap_or(0);
    println!(
        "the database is {:.1} MiB at the end",
        database as f64 / (1024.0 * 1024.0)
    );
    println!(
        "answers neither a success nor an expected refusal: {}",
        tally.failures.load(Ordering::Relaxed)
    );
    for failure in tally.kept.lock().expect("the failures").iter() {
        println!("  {failure}");
    }
}
