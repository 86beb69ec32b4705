//! What an operator watches, black-box: the real `shed up` with
//! `--metrics-listen` is scraped after MCP calls and a broker run, and every
//! series the issue names has moved, while the public address has no
//! `/metrics`; with `--otlp-endpoint` it sends its spans to a small OTLP/HTTP
//! receiver of this test's own (JSON), which finds a span per request, MCP
//! call, command run and store write, with the app and command, and neither
//! an argument's value nor the token anywhere.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::header;
use serde_json::{Value, json};

use crate::broker_support::{answered, cli, shed};
use crate::data_place::DataIn;
use crate::listening::{free_port, shed_up, wait_until_listening};

const SHED: &str = env!("CARGO_BIN_EXE_shed");

/// An argument value no span and no series may carry.
const SECRET_WHO: &str = "Whistler-7c1d";

/// How long spans may take to reach the receiver (the batch is sent every
/// 200 ms here, `OTEL_BSP_SCHEDULE_DELAY`).
const SPANS_BOUND: Duration = Duration::from_secs(20);

/// A `shed up` on a fresh data folder, with the token it printed.
struct Served {
    child: Child,
    port: u16,
    token: String,
    data: tempfile::TempDir,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    /// `shed up` on a free port with `extra` flags.
    fn start(extra: &[&str]) -> Served {
        let data = tempfile::tempdir().unwrap();
        let (child, port, token) = shed_up(
            &data.path().join("d"),
            extra,
            &[("OTEL_BSP_SCHEDULE_DELAY", "200")],
        );
        Served {
            child,
            port,
            token,
            data,
        }
    }

    fn data(&self) -> PathBuf {
        self.data.path().join("d")
    }

    /// One MCP session (legacy `initialize`), then `commands`, two
    /// `log_run`s and a `leaderboard` through it.
    async fn mcp_calls(&self) {
        let http = reqwest::Client::new();
        let url = format!("http://127.0.0.1:{}/mcp", self.port);
        let send = |session: Option<String>, message: Value| {
            let mut request = http
                .post(&url)
                .header(header::ACCEPT, "application/json, text/event-stream")
                .header(header::HOST, format!("localhost:{}", self.port))
                .bearer_auth(&self.token)
                .json(&message);
            if let Some(session) = session {
                request = request
                    .header("mcp-session-id", session)
                    .header("mcp-protocol-version", "2025-06-18");
            }
            request.send()
        };
        let opened = send(
            None,
            json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": { "name": "telemetry", "version": "0" } } }),
        )
        .await
        .unwrap();
        let session = opened.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_string();
        send(
            Some(session.clone()),
            json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        )
        .await
        .unwrap();
        let calls = [
            json!({ "name": "commands", "arguments": {} }),
            json!({ "name": "command", "arguments": { "name": "log_run",
                    "args": { "who": SECRET_WHO, "miles": 5, "at": "2026-09-01" } } }),
            json!({ "name": "command", "arguments": { "name": "log_run",
                    "args": { "who": SECRET_WHO, "miles": 7, "at": "2026-09-02" } } }),
            json!({ "name": "command", "arguments": { "name": "leaderboard" } }),
        ];
        for (id, params) in calls.into_iter().enumerate() {
            let answer = send(
                Some(session.clone()),
                json!({ "jsonrpc": "2.0", "id": id + 1, "method": "tools/call", "params": params }),
            )
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
            assert!(answer.contains(r#""isError":false"#), "{answer}");
        }
    }

    /// A run of `demo/runs.leaderboard` through the broker, as a harness does.
    fn broker_run(&self) {
        let job = shed(
            &self.data(),
            &["job", "create", "--person", "you", "--allow", "demo/runs.*"],
        );
        let queue = self.data().join("command-queue.sock");
        let out = cli(
            &queue,
            Some(job.trim()),
            &[
                "command",
                "run",
                "demo/runs.leaderboard",
                "--args-json",
                "-",
                "--json",
            ],
            "{}",
        );
        assert_eq!(answered(&out)["code"], "ok");
    }
}

/// The series of a Prometheus text page: each line's name and labels, and
/// its value.
fn series(page: &str) -> HashMap<String, f64> {
    page.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .filter_map(|line| {
            let (name, value) = line.rsplit_once(' ')?;
            Some((name.to_string(), value.parse().ok()?))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_metrics_move_after_calls_and_are_not_served_on_the_public_address() {
    let metrics_port = free_port();
    let metrics_listen = format!("127.0.0.1:{metrics_port}");
    let served = Served::start(&["--metrics-listen", &metrics_listen]);
    wait_until_listening(metrics_port);
    served.mcp_calls().await;
    served.broker_run();

    let public = reqwest::get(format!("http://127.0.0.1:{}/metrics", served.port))
        .await
        .unwrap();
    assert_eq!(public.status(), reqwest::StatusCode::NOT_FOUND);

    let page = reqwest::get(format!("http://{metrics_listen}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let seen = series(&page);
    let at_least = |name: &str, least: f64| {
        let value = seen.get(name).copied().unwrap_or_else(|| {
            panic!("no series {name} in:\n{page}");
        });
        assert!(value >= least, "{name} is {value}, wanted ≥ {least}");
    };
    at_least(r#"shed_requests_total{door="mcp"}"#, 6.0);
    at_least(r#"shed_requests_total{door="broker"}"#, 1.0);
    at_least(r#"shed_request_duration_seconds_count{door="mcp"}"#, 6.0);
    at_least(
        r#"shed_mcp_requests_total{method="tools/call",tool="command"}"#,
        3.0,
    );
    at_least(
        r#"shed_mcp_request_duration_seconds_count{method="tools/call",tool="commands"}"#,
        1.0,
    );
    at_least(
        r#"shed_command_calls_total{app="demo/runs",outcome="ok"}"#,
        4.0,
    );
    at_least("shed_store_write_group_size_count", 2.0);
    at_least("shed_store_commit_seconds_count", 2.0);
    if !crate::data_place::on_server() {
        // SQLite's own WAL; a database server keeps its WAL to itself.
        at_least("shed_store_wal_pages", 1.0);
    }
    at_least("shed_mcp_sessions_open", 1.0);
    at_least(r#"shed_broker_jobs_total{code="ok"}"#, 1.0);
    assert_eq!(seen.get("shed_broker_queue_depth"), Some(&0.0), "{page}");
    assert!(
        !page.contains(SECRET_WHO),
        "an argument's value in the metrics"
    );
    assert!(!page.contains(&served.token), "the token in the metrics");
}

#[test]
fn metrics_on_the_public_address_are_refused_with_a_sentence() {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let data = tempfile::tempdir().unwrap();
    let out = Command::new(SHED)
        .args(["serve", "--listen", &listen, "--metrics-listen", &listen])
        .data_in(data.path())
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!(
            "--metrics-listen {listen} is the address shed serves people on — give metrics an address of their own"
        )),
        "{said}"
    );
}

/// A receiver of OTLP/HTTP posts: every body it was sent.
#[derive(Clone, Default)]
struct Receiver {
    bodies: Arc<Mutex<Vec<String>>>,
}

impl Receiver {
    /// Listens on a free loopback port, answering each post `{}`.
    fn start() -> (Receiver, u16) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let receiver = Receiver::default();
        let kept = receiver.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().map_while(Result::ok) {
                let kept = kept.clone();
                std::thread::spawn(move || kept.serve(stream));
            }
        });
        (receiver, port)
    }

    /// Reads posts off one connection until it closes.
    fn serve(&self, stream: TcpStream) {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut writer = stream;
        loop {
            let mut length = 0;
            let mut line = String::new();
            loop {
                line.clear();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                if line == "\r\n" {
                    break;
                }
                if let Some((name, value)) = line.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_err() {
                return;
            }
            self.bodies
                .lock()
                .unwrap()
                .push(String::from_utf8_lossy(&body).into_owned());
            let answer =
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
            if writer.write_all(answer.as_bytes()).is_err() {
                return;
            }
        }
    }

    /// Every span received so far: (name, attributes as strings).
    fn spans(&self) -> Vec<(String, HashMap<String, String>)> {
        let bodies = self.bodies.lock().unwrap().clone();
        let mut spans = Vec::new();
        for body in bodies {
            let export: Value = serde_json::from_str(&body)
                .unwrap_or_else(|e| panic!("an OTLP post that is not JSON ({e}): {body}"));
            for resource in export["resourceSpans"].as_array().into_iter().flatten() {
                for scope in resource["scopeSpans"].as_array().into_iter().flatten() {
                    for span in scope["spans"].as_array().into_iter().flatten() {
                        let attributes = span["attributes"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|kv| {
                                let value = &kv["value"];
                                let text = value["stringValue"]
                                    .as_str()
                                    .map(str::to_string)
                                    .unwrap_or_else(|| value.to_string());
                                (kv["key"].as_str().unwrap_or_default().to_string(), text)
                            })
                            .collect();
                        spans.push((
                            span["name"].as_str().unwrap_or_default().to_string(),
                            attributes,
                        ));
                    }
                }
            }
        }
        spans
    }

    fn everything(&self) -> String {
        self.bodies.lock().unwrap().join("\n")
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn spans_reach_an_otlp_receiver_with_the_app_and_command_and_no_argument() {
    let (receiver, port) = Receiver::start();
    let endpoint = format!("http://127.0.0.1:{port}");
    let served = Served::start(&["--otlp-endpoint", &endpoint]);
    served.mcp_calls().await;
    served.broker_run();

    let wanted = |spans: &[(String, HashMap<String, String>)]| {
        let named = |name: &str| spans.iter().any(|(n, _)| n == name);
        let command_run = spans.iter().any(|(name, attributes)| {
            name == "command run"
                && attributes.get("app").map(String::as_str) == Some("demo/runs")
                && attributes.get("command").map(String::as_str) == Some("log_run")
        });
        let broker_run = spans.iter().any(|(name, attributes)| {
            name == "command run"
                && attributes.get("command").map(String::as_str) == Some("leaderboard")
        });
        let tool_call = spans.iter().any(|(name, attributes)| {
            name == "mcp call"
                && attributes.get("method").map(String::as_str) == Some("tools/call")
                && attributes.get("tool").map(String::as_str) == Some("command")
        });
        let mcp_request = spans.iter().any(|(name, attributes)| {
            name == "request" && attributes.get("door").map(String::as_str) == Some("mcp")
        });
        let store_write = spans.iter().any(|(name, attributes)| {
            name == "store apply" && attributes.get("app").map(String::as_str) == Some("demo/runs")
        });
        command_run && broker_run && tool_call && mcp_request && store_write && named("store write")
    };
    let deadline = Instant::now() + SPANS_BOUND;
    while !wanted(&receiver.spans()) {
        assert!(
            Instant::now() < deadline,
            "the spans never all arrived: {:#?}",
            receiver.spans()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let sent = receiver.everything();
    assert!(!sent.contains(SECRET_WHO), "an argument's value in a span");
    assert!(!sent.contains(&served.token), "the token in a span");
}
