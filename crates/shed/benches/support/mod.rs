//! What the benches that load a real `shed up` share: starting it on a
//! fresh data folder and reading the token it prints, and a `tools/call`
//! of `command` as a 2026-07-28 client sends it.

use std::{
    io::{BufRead, BufReader},
    net::TcpListener,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

/// The protocol of sessionless requests.
pub const PROTOCOL: &str = "2026-07-28";

/// A running `shed up`, killed when dropped: its MCP address and token.
pub struct Server {
    pub child: Child,
    pub url: String,
    pub token: String,
    pub data: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port nothing listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port")
}

/// Runs `shed up` on a fresh data folder — keeping its data in the
/// PostgreSQL database `database` names (empty), or else in the folder's
/// SQLite file — and reads the token it prints.
pub fn start(database: Option<&str>) -> Server {
    let data = tempfile::tempdir().expect("a temp dir");
    let port = free_port();
    let mut command = Command::new(binary());
    command
        .args(["up", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--data")
        .arg(data.path())
        .env_remove("SHED_DATABASE_URL");
    if let Some(url) = database {
        command.args(["--database", url]);
    }
    let mut child = command
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .expect("shed up starts");
    let stdout = child.stdout.take().expect("shed up's stdout");
    let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
    let token = lines
        .find_map(|line| line.strip_prefix("Token:").map(|t| t.trim().to_string()))
        .expect("shed up prints a token");
    // Keep reading what it prints, so it never writes into a closed pipe.
    std::thread::spawn(move || lines.for_each(drop));
    let url = format!("http://localhost:{port}/mcp");
    wait_until_listening(port, "shed up");
    Server {
        child,
        url,
        token,
        data,
    }
}

/// One `tools/call` of `command`, as a JSON-RPC request.
pub fn call(id: u64, name: &str, args: Value) -> Value {
    tool_call(id, "command", json!({ "name": name, "args": args }))
}

/// One sessionless `tools/call` of `tool`, as a JSON-RPC request.
pub fn tool_call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id,
        "method": "tools/call",
        "params": {
            "name": tool,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": PROTOCOL,
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }
    })
}

/// The `shed` binary the benches run: SHED_BENCH_BINARY, else this build's.
pub fn binary() -> String {
    std::env::var("SHED_BENCH_BINARY").unwrap_or_else(|_| env!("CARGO_BIN_EXE_shed").into())
}

/// Waits (up to 20 s) until something listens on the loopback `port`.
pub fn wait_until_listening(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} did not start listening");
        std::thread::sleep(Duration::from_millis(50));
    }
}
