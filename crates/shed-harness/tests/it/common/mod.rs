//! What the black-box tests share: a fixture directory served by the fake
//! host CLI, a host configuration pointing at it, and a way to run the real
//! `shed-harness` binary.

pub mod model_server;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

pub const HARNESS: &str = env!("CARGO_BIN_EXE_shed-harness");
pub const FAKE_HOST: &str = env!("CARGO_BIN_EXE_shed-harness-fake-host");

/// The flags that bind a task the person typed: a run may write only so.
pub const TYPED_TASK: [&str; 2] = ["--task-slot", "direct-command"];

/// A host the harness can reach: a fixture directory (the "queue") and a
/// configuration file naming the fake host CLI.
pub struct Host {
    pub dir: tempfile::TempDir,
}

impl Host {
    /// A host with `commands` as its listing and `LOOM_COMMAND_JOB_ID` as the job variable.
    pub fn new(commands: Value) -> Host {
        Host::with_config(commands, |c| c)
    }

    pub fn with_config(commands: Value, edit: impl FnOnce(Value) -> Value) -> Host {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::create_dir_all(dir.path().join("queue/outcomes")).expect("fixture dirs");
        let host = Host { dir };
        host.set_listing(commands);
        let config = edit(json!({
            "cliPath": FAKE_HOST,
            "jobIdEnvVar": "LOOM_COMMAND_JOB_ID",
            "transport": {"kind": "broker", "queuePath": host.queue()},
        }));
        std::fs::write(host.config(), config.to_string()).expect("config written");
        host
    }

    pub fn queue(&self) -> PathBuf {
        self.dir.path().join("queue")
    }

    pub fn config(&self) -> PathBuf {
        self.dir.path().join("host.json")
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A file named `name` holding `text`, with `mode`; its path.
    pub fn file_with_mode(&self, name: &str, text: &str, mode: u32) -> String {
        use std::os::unix::fs::PermissionsExt;
        let path = self.path(name);
        std::fs::write(&path, text).expect("file written");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("mode set");
        path.to_str().expect("utf-8 path").to_string()
    }

    /// A job id file as the harness takes it (`--command-job-id-file`):
    /// mode 0600, holding `id`.
    pub fn job_id_file(&self, id: &str) -> String {
        self.file_with_mode("job-id", &format!("{id}\n"), 0o600)
    }

    pub fn set_listing(&self, commands: Value) {
        std::fs::write(
            self.queue().join("listing.json"),
            json!({ "commands": commands }).to_string(),
        )
        .expect("listing written");
    }

    pub fn set_raw_listing(&self, text: &str) {
        std::fs::write(self.queue().join("listing.json"), text).expect("listing written");
    }

    pub fn fail_listing(&self, status: i32) {
        std::fs::write(self.queue().join("list-exit"), status.to_string())
            .expect("list-exit written");
    }

    /// The outcome `command run <name>` answers.
    pub fn set_outcome(&self, name: &str, outcome: Value) {
        let file: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        std::fs::write(
            self.queue().join("outcomes").join(format!("{file}.json")),
            outcome.to_string(),
        )
        .expect("outcome written");
    }

    pub fn set_delay_ms(&self, ms: u64) {
        std::fs::write(self.queue().join("delay-ms"), ms.to_string()).expect("delay written");
    }

    /// Every invocation the host saw, in order.
    pub fn invocations(&self) -> Vec<Value> {
        std::fs::read_to_string(self.queue().join("invocations.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("an invocation line"))
            .collect()
    }

    pub fn runs(&self) -> Vec<Value> {
        self.invocations()
            .into_iter()
            .filter(|i| i["argv"][1] == "run")
            .collect()
    }

    pub fn lists(&self) -> usize {
        self.invocations()
            .iter()
            .filter(|i| i["argv"][1] == "list")
            .count()
    }

    pub fn max_in_flight(&self) -> u64 {
        std::fs::read_to_string(self.queue().join("max-inflight"))
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0)
    }

    /// `shed-harness --loom-commands-config <config> <args>`.
    pub fn harness(&self, args: &[&str]) -> Output {
        let config = self.config();
        let mut full = vec![
            "--loom-commands-config",
            config.to_str().expect("utf-8 path"),
        ];
        full.extend_from_slice(args);
        harness(&full)
    }

    /// `shed-harness <before> run --task <task> --model m --base-url <model_url>`.
    pub fn run(&self, before: &[&str], task: &str, model_url: &str) -> Output {
        let mut args = before.to_vec();
        args.extend([
            "run",
            "--task",
            task,
            "--model",
            "m",
            "--base-url",
            model_url,
        ]);
        self.harness(&args)
    }

    /// `shed-harness run --task list` against `model_url` on a terminal:
    /// `script` (util-linux) gives it one, and records what the terminal
    /// showed — stdout and stderr as one screen.
    pub fn run_on_a_terminal(&self, model_url: &str) -> String {
        let config = self.config();
        let line = [
            HARNESS,
            "--loom-commands-config",
            config.to_str().expect("utf-8 path"),
            "run",
            "--task",
            "list",
            "--model",
            "m",
            "--base-url",
            model_url,
        ]
        .join(" ");
        let out = Command::new("script")
            .args(["--quiet", "--return", "--command", &line, "/dev/null"])
            .env_remove("CF_HARNESS_LOOM_COMMANDS_CONFIG")
            .output()
            .expect("`script` (util-linux) runs");
        assert!(out.status.success(), "{}", stderr(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs one tool and reads its printed result.
    pub fn tool(&self, name: &str, input: Value, extra: &[&str]) -> Value {
        let input = input.to_string();
        let mut args: Vec<&str> = extra.to_vec();
        args.extend(["tool", name, "--input", &input]);
        let out = self.harness(&args);
        assert!(
            out.status.success(),
            "tool {name} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("the tool prints JSON")
    }
}

/// Runs the harness binary with an ambient environment that must not leak:
/// a job id variable and a secret of the harness's own.
pub fn harness(args: &[&str]) -> Output {
    Command::new(HARNESS)
        .args(args)
        .env_remove("CF_HARNESS_LOOM_COMMANDS_CONFIG")
        .env("LOOM_COMMAND_JOB_ID", "ambient-job-must-not-leak")
        .env("HARNESS_AMBIENT_SECRET", "must-not-leak")
        .stdin(Stdio::null())
        .output()
        .expect("shed-harness runs")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A command row as the host lists it.
pub fn row(name: &str, effect: &str) -> Value {
    json!({
        "name": name,
        "title": format!("The {name} command."),
        "description": format!("What {name} does, at some length."),
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        "outputs": {"rows": {}},
        "effect": effect,
        "scope": "app",
        "readOnlyGranted": effect == "read",
    })
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("file exists")).expect("JSON file")
}
