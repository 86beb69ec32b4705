//! A shed with the run club deployed as demo/runs, served with its broker's
//! queue, and the `shed command` CLI run the way a harness runs it: over a
//! cleared environment holding only the queue and the job id.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::data_place::{DataIn, make_private};
use serde_json::Value;

pub const SHED: &str = env!("CARGO_BIN_EXE_shed");

pub struct Served {
    pub dir: tempfile::TempDir,
    pub queue: PathBuf,
    server: Child,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// `shed <args>` on the data folder, asserting it succeeds; its stdout.
pub fn shed(data: &Path, args: &[&str]) -> String {
    String::from_utf8(shed_with(data, args, &[]).stdout).unwrap()
}

/// `shed <args>` on the data folder with these variables set, asserting it
/// succeeds; all it said.
pub fn shed_with(data: &Path, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let out = Command::new(SHED)
        .args(args)
        .data_in(data)
        .envs(vars.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "shed {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

impl Served {
    /// Ada owns the space demo with the run club at demo/runs; Bob exists and
    /// belongs nowhere. The server is up with its queue.
    pub fn start() -> Served {
        Served::start_logging(None)
    }

    /// As [`Served::start`]; with `log`, the server logs everything it says
    /// (`RUST_LOG=debug`) to that file instead of warnings to a pipe.
    pub fn start_logging(log: Option<&Path>) -> Served {
        Served::start_as(|data, queue| match log {
            None => serve(data, queue),
            Some(log) => serve_logging(data, queue, log),
        })
    }

    /// As [`Served::start`], the server started by `serve` on the data
    /// folder and the queue's path.
    pub fn start_as(serve: impl FnOnce(&Path, &Path) -> Child) -> Served {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("d");
        make_private(&data);
        shed(&data, &["person", "add", "ada", "--name", "Ada"]);
        shed(&data, &["person", "add", "bob", "--name", "Bob"]);
        shed(&data, &["space", "add", "demo", "--owner", "ada"]);
        deploy_run_club(&data, "demo/runs", &["--as", "ada", "--title", "Run club"]);
        let queue = dir.path().join("q.sock");
        let server = serve(&data, &queue);
        wait_for(&queue);
        Served { dir, queue, server }
    }

    /// Stops the server (SIGKILL, as a crash would), keeping its folder.
    pub fn stop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }

    pub fn data(&self) -> PathBuf {
        self.dir.path().join("d")
    }

    /// `shed job create …`: the secret it printed.
    pub fn job(&self, args: &[&str]) -> String {
        self.named_job(args).0
    }

    /// `shed job create …`: the secret it printed, and the job's public name
    /// as `shed job list --json` shows it (the newest job).
    pub fn named_job(&self, args: &[&str]) -> (String, String) {
        let mut all = vec!["job", "create"];
        all.extend_from_slice(args);
        let secret = shed(&self.data(), &all).trim().to_string();
        assert_eq!(
            secret.len(),
            32,
            "a job's secret is 128 bits in hex: {secret}"
        );
        let list: Value = serde_json::from_str(&shed(&self.data(), &["job", "list", "--json"]))
            .expect("`shed job list --json` is JSON");
        let newest = list
            .as_array()
            .and_then(|jobs| jobs.last())
            .unwrap_or_else(|| panic!("no job listed: {list}"));
        let name = newest["name"].as_str().expect("a job's name").to_string();
        (secret, name)
    }

    /// `shed command <args>` as the harness runs it: a cleared environment
    /// with the queue and, when given, the job id; `stdin` as the args.
    pub fn cli(&self, job: Option<&str>, args: &[&str], stdin: &str) -> Output {
        cli(&self.queue, job, args, stdin)
    }

    /// `shed command run <name> --args-json - --json [extra…]`, asserting the
    /// host answered (exit 0, or 3 for a refusal); the outcome.
    pub fn run(&self, job: &str, name: &str, args: Value, extra: &[&str]) -> Value {
        answered(&self.run_output(job, name, args, extra))
    }

    /// `shed command run <name> --args-json - --json [extra…]`: all it said.
    pub fn run_output(&self, job: &str, name: &str, args: Value, extra: &[&str]) -> Output {
        let mut all = vec!["command", "run", name, "--args-json", "-", "--json"];
        all.extend_from_slice(extra);
        self.cli(Some(job), &all, &args.to_string())
    }

    /// `shed command list --json` for the job: the rows' names.
    pub fn list(&self, job: &str) -> Vec<Value> {
        let out = self.cli(Some(job), &["command", "list", "--json"], "");
        let listing = answered(&out);
        listing["commands"]
            .as_array()
            .unwrap_or_else(|| panic!("not a listing: {listing}"))
            .clone()
    }

    /// The run club's data version, read through a job that may read it.
    pub fn version(&self, job: &str) -> u64 {
        let outcome = self.run(job, "demo/runs.leaderboard", serde_json::json!({}), &[]);
        outcome["version"]
            .as_u64()
            .unwrap_or_else(|| panic!("no version: {outcome}"))
    }
}

/// `shed deploy examples/run-club --to <app> [flags…]` on the data folder.
pub fn deploy_run_club(data: &Path, app: &str, flags: &[&str]) {
    let run_club = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/run-club");
    let mut args = vec!["deploy", run_club.to_str().unwrap(), "--to", app];
    args.extend_from_slice(flags);
    shed(data, &args);
}

pub fn serve(data: &Path, queue: &Path) -> Child {
    serve_command(data, queue, "127.0.0.1:0")
        .env("RUST_LOG", "warn")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `shed serve` logging at debug level, stdout and stderr, to `log`.
pub fn serve_logging(data: &Path, queue: &Path, log: &Path) -> Child {
    let file = std::fs::File::create(log).unwrap();
    serve_command(data, queue, "127.0.0.1:0")
        .env("RUST_LOG", "debug")
        .env("NO_COLOR", "1")
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .unwrap()
}

/// `shed serve` on the data folder, its queue at `queue`, listening on `listen`.
pub fn serve_command(data: &Path, queue: &Path, listen: &str) -> Command {
    let mut command = Command::new(SHED);
    command
        .args([
            "serve",
            "--listen",
            listen,
            "--queue",
            queue.to_str().unwrap(),
        ])
        .data_in(data)
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    command
}

/// Waits for the queue's socket to answer.
pub fn wait_for(queue: &Path) {
    let start = Instant::now();
    while std::os::unix::net::UnixStream::connect(queue).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the queue never opened at {}",
            queue.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn cli(queue: &Path, job: Option<&str>, args: &[&str], stdin: &str) -> Output {
    let mut command = Command::new(SHED);
    command
        .args(args)
        .env_clear()
        .env("LOOM_PAGE_RPC_QUEUE", queue)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(job) = job {
        command.env("LOOM_COMMAND_JOB_ID", job);
    }
    let mut child = command.spawn().unwrap();
    if let Some(mut input) = child.stdin.take() {
        let _ = input.write_all(stdin.as_bytes());
    }
    child.wait_with_output().unwrap()
}

/// The exit status of `shed command` when the host answered with a refusal.
pub const REFUSED_STATUS: i32 = 3;

/// The host answered with JSON: that JSON. The CLI exited 0 when it ran,
/// [`REFUSED_STATUS`] when the answer is a refusal (`ok: false`).
pub fn answered(out: &Output) -> Value {
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {} (stderr: {})",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let refused = answer["ok"] == Value::Bool(false);
    assert_eq!(
        out.status.code(),
        Some(if refused { REFUSED_STATUS } else { 0 }),
        "the CLI's exit status does not match its answer {answer}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    answer
}

pub fn names(rows: &[Value]) -> Vec<String> {
    rows.iter()
        .map(|r| r["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

pub fn a_run() -> Value {
    serde_json::json!({ "who": "Ada", "miles": 5, "at": "2026-09-01" })
}
