//! What the operating tests share: `shed up` run as an operator runs it —
//! its stdout read as it prints, its stderr (the logs) written to a file,
//! stopped by a signal — and an MCP client that calls tools the way a
//! 2026-07-28 client does (one sessionless POST to /mcp per call).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::data_place::DataIn;
use crate::listening::{free_port, wait_until_listening};

pub const SHED: &str = env!("CARGO_BIN_EXE_shed");

/// The protocol of sessionless requests.
const PROTOCOL: &str = "2026-07-28";

/// How long a signalled shed may take to exit: its drain bound (10 s) and
/// closing the database, with room for a loaded machine.
const EXIT_BOUND: Duration = Duration::from_secs(60);

/// A running `shed up`, killed when dropped unless stopped.
pub struct Shed {
    child: Child,
    pub port: u16,
    stdout: Arc<Mutex<Vec<String>>>,
}

impl Drop for Shed {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Shed {
    /// `shed up` on `data` on a free loopback port, with `env` set, its
    /// stderr appended to `logs`; waits until it listens.
    pub fn up(data: &Path, logs: &Path, env: &[(&str, &str)]) -> Shed {
        Shed::up_on(
            data,
            shed_test_database::for_folder(data).as_deref(),
            logs,
            env,
        )
    }

    /// [`Shed::up`] keeping its data in the database `database` names, or
    /// in the folder's SQLite file when none, whatever the tests run on.
    pub fn up_on(data: &Path, database: Option<&str>, logs: &Path, env: &[(&str, &str)]) -> Shed {
        Shed::on_a_free_port("up", data, database, logs, env)
    }

    /// `shed serve` on `data` (made already), as [`Shed::up`] starts `up`.
    pub fn serve(data: &Path, logs: &Path, env: &[(&str, &str)]) -> Shed {
        let database = shed_test_database::for_folder(data);
        Shed::on_a_free_port("serve", data, database.as_deref(), logs, env)
    }

    /// `shed <subcommand>` (`up` or `serve`) on a free loopback port.
    fn on_a_free_port(
        subcommand: &str,
        data: &Path,
        database: Option<&str>,
        logs: &Path,
        env: &[(&str, &str)],
    ) -> Shed {
        let port = free_port();
        let listen = format!("127.0.0.1:{port}");
        let url = format!("http://localhost:{port}");
        let args = [subcommand, "--listen", &listen, "--public-url", &url];
        Shed::start(data, database, &args, port, logs, env)
    }

    /// `shed <args>` on `data` (in the database `database` names, or the
    /// folder's SQLite file), a server the args make listen on loopback
    /// `port`, with `env` set, its stderr appended to `logs`; waits until
    /// it listens.
    pub fn start(
        data: &Path,
        database: Option<&str>,
        args: &[&str],
        port: u16,
        logs: &Path,
        env: &[(&str, &str)],
    ) -> Shed {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(logs)
            .unwrap();
        let mut command = Command::new(SHED);
        command
            .args(args)
            .data_on(data, database)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log);
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().unwrap();
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let kept = stdout.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                kept.lock().unwrap().push(line);
            }
        });
        wait_until_listening(port);
        Shed {
            child,
            port,
            stdout,
        }
    }

    pub fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).unwrap()
    }

    /// `http://localhost:<port>` + `path`
    pub fn url(&self, path: &str) -> String {
        format!("http://localhost:{}{path}", self.port)
    }

    /// What it printed on stdout so far.
    pub fn printed(&self) -> Vec<String> {
        self.stdout.lock().unwrap().clone()
    }

    /// The token a first `shed up` printed.
    pub fn token(&self) -> String {
        self.printed_line("Token:")
            .expect("shed up prints a token on a new data folder")
    }

    /// What follows `prefix` on the first line `shed up` printed starting
    /// with it, trimmed. It prints before the server listens, but the
    /// thread reading stdout may not have taken the line yet on a busy
    /// machine: waits up to 10 s for it; `None` when it never came.
    pub fn printed_line(&self, prefix: &str) -> Option<String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let found = self
                .printed()
                .iter()
                .find_map(|line| line.strip_prefix(prefix).map(|t| t.trim().to_string()));
            match found {
                Some(found) => return Some(found),
                None if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                None => return None,
            }
        }
    }

    /// Sends `signal` and waits for the process to exit: how it exited, and
    /// everything it printed.
    pub fn stop(mut self, signal: i32) -> (ExitStatus, Vec<String>) {
        // SAFETY: kill only sends a signal to the process this test started.
        assert_eq!(unsafe { libc::kill(self.pid(), signal) }, 0);
        let deadline = Instant::now() + EXIT_BOUND;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "shed did not exit within {EXIT_BOUND:?} of the signal"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        // The reader thread has what was printed once the pipe closes.
        let deadline = Instant::now() + Duration::from_secs(5);
        while Arc::strong_count(&self.stdout) > 1 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        (status, self.printed())
    }
}

/// `shed <args> --data <data>`: whether it succeeded, its stdout and stderr.
pub fn shed(data: &Path, args: &[&str]) -> (bool, String, String) {
    shed_on(data, shed_test_database::for_folder(data).as_deref(), args)
}

/// [`shed`] keeping its data in the database `database` names, or in the
/// folder's SQLite file when none, whatever the tests run on.
pub fn shed_on(data: &Path, database: Option<&str>, args: &[&str]) -> (bool, String, String) {
    let output = Command::new(SHED)
        .args(args)
        .data_on(data, database)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    (
        output.status.success(),
        text(output.stdout),
        text(output.stderr),
    )
}

/// A temporary folder and the data folder inside it (not made yet).
pub fn data_folder() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    (dir, data)
}

/// One `tools/call` of `tool` with `arguments`, as a 2026-07-28 client
/// sends it: the HTTP status and the JSON-RPC message answered, or the
/// error of a request that got no answer.
pub async fn call(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    tool: &str,
    arguments: Value,
) -> Result<(reqwest::StatusCode, Value), reqwest::Error> {
    let message = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": { "name": tool, "arguments": arguments, "_meta": {
            "io.modelcontextprotocol/protocolVersion": PROTOCOL,
            "io.modelcontextprotocol/clientCapabilities": {} } }
    });
    let response = http
        .post(url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", PROTOCOL)
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .json(&message)
        .send()
        .await?;
    let status = response.status();
    let body = response.bytes().await?;
    let message = serde_json::from_slice(&body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&body).into_owned()));
    Ok((status, message))
}

/// The structured answer of a tool call that succeeded; panics with the
/// answer otherwise.
pub fn succeeded(answered: (reqwest::StatusCode, Value)) -> Value {
    let (status, message) = answered;
    assert_eq!(status, reqwest::StatusCode::OK, "{message}");
    assert_eq!(message["result"]["isError"], json!(false), "{message}");
    message["result"]["structuredContent"].clone()
}

/// `command log_run` for `who`: the eid of the run it wrote.
pub async fn log_run(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    who: &str,
) -> Result<(reqwest::StatusCode, Value), reqwest::Error> {
    call(
        http,
        url,
        token,
        "command",
        json!({ "name": "log_run", "args": { "who": who, "miles": 1, "at": "2026-09-01" } }),
    )
    .await
}

/// The eid a successful write's answer names.
pub fn written_eid(answer: &Value) -> String {
    answer["entities"][0]
        .as_str()
        .unwrap_or_else(|| panic!("no entity in {answer}"))
        .to_string()
}

/// Every run in demo/runs, read a thousand at a time: eid → who.
pub async fn every_run(
    http: &reqwest::Client,
    url: &str,
    token: &str,
) -> std::collections::HashMap<String, String> {
    let mut runs = std::collections::HashMap::new();
    let mut after: Option<String> = None;
    loop {
        let mut filter = ".jog!&limit=1000".to_string();
        if let Some(cursor) = &after {
            filter.push_str(&format!("&after={cursor}"));
        }
        let page = succeeded(
            call(
                http,
                url,
                token,
                "graph_query",
                json!({ "app": "demo/runs", "filter": filter }),
            )
            .await
            .unwrap(),
        );
        for row in page["rows"].as_array().unwrap() {
            runs.insert(
                row["entity"]["eid"].as_str().unwrap().to_string(),
                row["jog"]["who"].as_str().unwrap_or_default().to_string(),
            );
        }
        match page["next"].as_str() {
            Some(next) => after = Some(next.to_string()),
            None => return runs,
        }
    }
}

/// Every run in demo/runs through `url`, as [`every_run`] reads them; each
/// write in `acknowledged` (eid → who) is among them.
pub async fn every_run_holding(
    url: &str,
    token: &str,
    acknowledged: &std::collections::HashMap<String, String>,
) -> std::collections::HashMap<String, String> {
    let runs = every_run(&reqwest::Client::new(), url, token).await;
    for (eid, who) in acknowledged {
        assert_eq!(
            runs.get(eid),
            Some(who),
            "the acknowledged write {who} ({eid})"
        );
    }
    runs
}

/// Waits until `count` reaches `at_least`, at most `bound`; `what` names
/// the wait when it fails.
pub async fn until_counted(
    count: &std::sync::atomic::AtomicUsize,
    at_least: usize,
    bound: Duration,
    what: &str,
) {
    let deadline = Instant::now() + bound;
    while count.load(std::sync::atomic::Ordering::Relaxed) < at_least {
        assert!(Instant::now() < deadline, "{what}: not within {bound:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
