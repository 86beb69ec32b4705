//! The server under a low limit of open files, black-box: `shed serve`
//! started with RLIMIT_NOFILE at [`FILES`] (soft and hard, so it cannot
//! raise it), a bounded flood of idle connections to the broker's queue,
//! and the HTTP door — `/healthz` and an MCP call — answering while they
//! are held; the idle ones are told their request took too long, and a
//! real command still gets through.

use std::io::Read;
use std::os::unix::net::UnixStream;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use crate::broker_support::{Served, serve_command, shed};
use crate::listening::{free_port, under_file_limit, wait_until_listening};
use crate::operating_support::{call, succeeded};

/// The server's limit of open files: room for 64 connections, 8 of them
/// the queue's.
const FILES: libc::rlim_t = 256;
/// Idle connections opened to the queue: more than the server's files.
const IDLE: usize = 300;
/// Idle connections kept open once the HTTP door has answered: the queue's
/// share, and no more, so the real command waits one deadline at most.
const HELD: usize = 8;
/// How long an answer may take before it counts as never coming (the
/// defect: the HTTP door out of files until idle queue connections close).
const ANSWER_BOUND: Duration = Duration::from_secs(15);

#[tokio::test]
async fn idle_queue_connections_leave_the_http_door_its_files() {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let served = Served::start_as(|data, queue| {
        let mut command = serve_command(data, queue, &listen);
        under_file_limit(&mut command, FILES)
            .env("RUST_LOG", "warn")
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    });
    wait_until_listening(port);
    let job = served.job(&["--person", "ada", "--allow", "demo/runs.*"]);
    let token = shed(&served.data(), &["token", "create", "ada"])
        .trim()
        .to_string();

    let mut idle: Vec<UnixStream> = (0..IDLE)
        .map(|_| UnixStream::connect(&served.queue).expect("a connection to the queue"))
        .collect();

    let http = reqwest::Client::builder()
        .timeout(ANSWER_BOUND)
        .build()
        .unwrap();
    let health = http
        .get(format!("http://{listen}/healthz"))
        .send()
        .await
        .expect("/healthz answers while the queue's connections are held");
    assert_eq!(health.status(), reqwest::StatusCode::OK);
    let spaces = call(
        &http,
        &format!("http://{listen}/mcp"),
        &token,
        "spaces",
        json!({}),
    )
    .await
    .expect("an MCP call answers while the queue's connections are held");
    succeeded(spaces);

    // The idle ones that stay are told, at the deadline, what to do.
    idle.truncate(HELD);
    for mut connection in idle {
        connection.set_read_timeout(Some(ANSWER_BOUND * 4)).unwrap();
        let mut answer = String::new();
        connection.read_to_string(&mut answer).unwrap();
        let answer: Value = serde_json::from_str(&answer).unwrap();
        let message = answer["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with(&format!(
                "the request took longer than {}s to arrive",
                shed_broker::REQUEST_TIMEOUT.as_secs()
            )),
            "{answer}"
        );
    }
    let outcome = served.run(&job, "demo/runs.leaderboard", json!({}), &[]);
    assert_eq!(outcome["code"], "ok", "{outcome}");
}
