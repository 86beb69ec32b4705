//! Live pages under load: starts a real `shed up` on a fresh data folder
//! (the run club deployed as demo/runs), opens 1,000 streams of
//! `./api/watch?filter=.jog!` on that one app — signed in as 32 people, a
//! token each, as `MOST_WATCHES_PER_PERSON` lets — then logs 100 runs
//! through MCP (`command log_run`, one after another) and checks that every
//! stream got every write's event. It prints the p50 and p99, over the
//! writes, of the time from a write's acknowledgement (MCP's answer) to
//! the last stream's event for it (an event before the answer counts 0),
//! and the server's memory per open stream: its RSS before and after the
//! streams opened, over their count.
//!
//! `cargo bench -p shed --bench live` (release build). Knobs:
//! SHED_BENCH_STREAMS (default 1,000), SHED_BENCH_WRITES (default 100),
//! SHED_BENCH_BINARY (another `shed`).

// A bench stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::net::SocketAddr;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use support::{binary, call};

/// The people the streams are opened as: 1,000 streams within each one's bound.
const PEOPLE: usize = 32;

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `shed <args> --data <data>` beside the running server: its stdout.
fn shed(data: &std::path::Path, args: &[&str]) -> String {
    let output = Command::new(binary())
        .args(args)
        .arg("--data")
        .arg(data)
        .env_remove("SHED_DATABASE_URL")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "shed {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// The server's resident memory, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

/// When each stream saw each version it saw.
type Seen = Arc<Mutex<Vec<Vec<(u64, Instant)>>>>;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at]
}

#[tokio::main]
async fn main() {
    let streams = knob("SHED_BENCH_STREAMS", 1_000);
    let writes = knob("SHED_BENCH_WRITES", 100);
    let server = support::start(None);
    let port: u16 = server
        .url
        .trim_start_matches("http://localhost:")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let data = server.data.path();
    let mut tokens = Vec::new();
    for n in 0..PEOPLE {
        let handle = format!("watcher{n}");
        shed(data, &["person", "add", &handle, "--name", &handle]);
        shed(data, &["member", "add", "demo", &handle, "--role", "viewer"]);
        tokens.push(shed(data, &["token", "create", &handle]));
    }
    let pid = server.child.id();
    let before = rss_kib(pid);
    let at: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let watch = format!("http://demo.localhost:{port}/runs/api/watch?filter=.jog%21");
    let seen: Seen = Arc::new(Mutex::new(vec![Vec::new(); streams]));
    let opened = Instant::now();
    let mut readers = Vec::new();
    for s in 0..streams {
        // A client each: a page's own connection.
        let http = reqwest::Client::builder()
            .resolve("demo.localhost", at)
            .build()
            .unwrap();
        let mut response = http
            .get(&watch)
            .bearer_auth(&tokens[s % PEOPLE])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "stream {s}");
        let seen = seen.clone();
        readers.push(tokio::spawn(async move {
            let mut buffer = String::new();
            let mut got = 0;
            while got < writes {
                let Ok(Some(chunk)) = response.chunk().await else {
                    break;
                };
                let now = Instant::now();
                buffer.push_str(&String::from_utf8_lossy(&chunk));
                while let Some(end) = buffer.find("\n\n") {
                    let block: String = buffer.drain(..end + 2).collect();
                    let id = block
                        .lines()
                        .find_map(|l| l.strip_prefix("id:"))
                        .and_then(|id| id.trim().parse::<u64>().ok());
                    if let Some(version) = id {
                        seen.lock().unwrap()[s].push((version, now));
                        got += 1;
                    }
                }
            }
            drop(http);
        }));
    }
    let open_took = opened.elapsed();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = rss_kib(pid);
    println!(
        "{streams} streams open in {:.2} s; server RSS {before} KiB before, {after} KiB after: {:.1} KiB per stream",
        open_took.as_secs_f64(),
        (after.saturating_sub(before)) as f64 / streams as f64
    );
    let mcp = reqwest::Client::new();
    let mut acknowledged = Vec::with_capacity(writes);
    for i in 0..writes {
        let body = call(
            i as u64,
            "log_run",
            json!({ "who": format!("Runner {i}"), "miles": 5, "at": "2026-12-01T07:00:00Z" }),
        );
        let answer = mcp
            .post(&server.url)
            .bearer_auth(&server.token)
            .header("accept", "application/json, text/event-stream")
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(answer.status().is_success());
        let text = answer.text().await.unwrap();
        assert!(!text.contains("\"isError\":true"), "{text}");
        acknowledged.push(Instant::now());
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    for reader in readers {
        let left = deadline.saturating_duration_since(Instant::now());
        let _ = tokio::time::timeout(left, reader).await;
    }
    let seen = seen.lock().unwrap();
    // No write but the bench's: the versions are consecutive from the first.
    let first = seen.iter().flatten().map(|(v, _)| *v).min().unwrap();
    let mut latest = vec![None::<Instant>; writes];
    let mut events = 0;
    for stream in seen.iter() {
        let mut versions: Vec<u64> = stream.iter().map(|(v, _)| *v).collect();
        versions.sort();
        let expected: Vec<u64> = (first..first + writes as u64).collect();
        assert_eq!(versions, expected, "a stream did not get every write once");
        for (version, at) in stream {
            let i = (version - first) as usize;
            latest[i] = latest[i].max(Some(*at));
            events += 1;
        }
    }
    let mut last: Vec<Duration> = latest
        .iter()
        .zip(&acknowledged)
        .map(|(latest, acked)| latest.unwrap().saturating_duration_since(*acked))
        .collect();
    last.sort();
    println!(
        "{writes} writes, every stream got every event ({events} events): acknowledgement → last stream's event p50 {:.1} ms, p99 {:.1} ms",
        percentile(&last, 0.5).as_secs_f64() * 1e3,
        percentile(&last, 0.99).as_secs_f64() * 1e3,
    );
}
