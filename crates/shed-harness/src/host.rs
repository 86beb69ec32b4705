//! Reaching the host: each call is one process of the host's CLI over a
//! cleared environment (`PATH`, `LOOM_PAGE_RPC_QUEUE`, and the job id variable
//! when the embedder supplied an id), arguments on stdin. Text the model
//! chose goes in the same word as its flag (`--loom=<app>`), so it cannot
//! become a flag of its own, and the CLI's usage error (exit 2) means nothing was sent.

use std::ffi::OsString;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use crate::config::{HostConfig, QUEUE_ENV_VAR};

/// How long one host process may take before its answer counts as lost.
const HOST_TIMEOUT: Duration = Duration::from_secs(300);
/// The `PATH` given to the host when the harness has none.
const FALLBACK_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// The exit status of the host CLI's usage error: it refused its own
/// command line, and sent nothing to the broker.
const USAGE_ERROR_STATUS: i32 = 2;
/// The exit status of a call the host answered with a refusal (shed's
/// `command` exits so, with the outcome on stdout): an answer, read as one.
/// A host that exits 0 on a refusal is read the same way.
const REFUSED_STATUS: i32 = 3;
/// The longest space or app slug the host takes (its `names.rs`).
const SLUG_MAX_CHARS: usize = 40;

/// Whether `name` is an app's name as the host's `--loom` takes it:
/// `<space>/<app>`, each a slug of a-z, 0-9 and `-` starting with a letter,
/// at most `SLUG_MAX_CHARS` (40) characters each. The host's rule
/// (shed-host `names.rs`), restated because the harness links no host crate.
pub fn is_app_name(name: &str) -> bool {
    let is_slug = |s: &str| {
        s.len() <= SLUG_MAX_CHARS
            && s.starts_with(|c: char| c.is_ascii_lowercase())
            && s.bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
    };
    name.split_once('/')
        .is_some_and(|(space, app)| is_slug(space) && is_slug(app))
}

/// One call as sent to the host.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRequest {
    /// The command's name, as `command run <command>` takes it.
    pub command: String,
    /// The command's arguments, written to the CLI's stdin as JSON
    /// (`--args-json -`).
    pub args: Value,
    /// The app the command acts on, passed as `--loom=<space>/<app>`; `None`
    /// passes no `--loom`.
    pub loom_id: Option<String>,
    /// The app data version the host must find, passed as `--expect <n>`;
    /// `None` passes no `--expect`.
    pub expected_version: Option<u64>,
    /// The call came through `run_read_command`: `--read-only` is passed,
    /// and the host runs the command read-only.
    pub read_only: bool,
}

/// Why the listing could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// The CLI did not start, did not answer in time, failed, or refused
    /// to list; it holds what happened.
    #[error("the host's CLI could not list its commands: {0}")]
    CommandFailed(String),
    /// The CLI answered, with something that is not JSON or not a listing
    /// the catalog can read; it holds why.
    #[error("the host's CLI answered the listing with something that is not a listing: {0}")]
    MalformedPayload(String),
    /// The host answered the listing with a refusal — an outcome (`ok:
    /// false`) where the rows would be, as the broker answers for an ended
    /// job; it holds the outcome's code and sentence.
    #[error("the host refused the listing — {}", refused_sentence(.0, .1))]
    Refused(String, String),
}

/// A refused listing's code and sentence as one, cut to 300 characters.
fn refused_sentence(code: &str, message: &str) -> String {
    format!("{code}: {message}").chars().take(300).collect()
}

impl ListError {
    /// The `failed_to_deliver` reason the model sees.
    pub fn reason(&self) -> &'static str {
        match self {
            ListError::CommandFailed(_) | ListError::Refused(..) => "command_failed",
            ListError::MalformedPayload(_) => "malformed_payload",
        }
    }
}

/// Why a run has no answer.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Nothing was sent: the process never started, or the CLI refused its
    /// own command line (a usage error).
    #[error("nothing was sent: {0}")]
    NotSent(String),
    /// The command was sent and the answer was lost.
    #[error("the command was sent but its answer was lost: {0}")]
    Lost(String),
}

/// The host's CLI as configured, with the job id of this invocation.
#[derive(Clone, Debug)]
pub struct HostCli {
    config: HostConfig,
    job_id: Option<String>,
    path: OsString,
}

impl HostCli {
    /// `job_id` comes from the embedder (`deps.command_job_id`) or the
    /// binary's `--command-job-id-file` / `--command-job-id-fd`, never from
    /// the ambient environment.
    pub fn new(config: HostConfig, job_id: Option<String>) -> HostCli {
        let path = std::env::var_os("PATH").unwrap_or_else(|| OsString::from(FALLBACK_PATH));
        HostCli {
            config,
            job_id,
            path,
        }
    }

    fn command(&self, args: &[String]) -> Command {
        let mut cmd = Command::new(&self.config.cli_path);
        cmd.args(args)
            .env_clear()
            .env("PATH", &self.path)
            .env(QUEUE_ENV_VAR, &self.config.queue_path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let (Some(var), Some(id)) = (&self.config.job_id_env_var, &self.job_id) {
            cmd.env(var, id);
        }
        cmd
    }

    /// `command list --json`.
    pub async fn list(&self) -> Result<Value, ListError> {
        let args = ["command", "list", "--json"].map(String::from);
        let mut child = self.command(&args).spawn().map_err(|e| {
            ListError::CommandFailed(format!("{} did not start ({e})", self.shown()))
        })?;
        drop(child.stdin.take());
        let output = tokio::time::timeout(HOST_TIMEOUT, child.wait_with_output())
            .await
            .map_err(|_| ListError::CommandFailed("it did not answer in time".into()))?
            .map_err(|e| ListError::CommandFailed(e.to_string()))?;
        if !answered(&output) {
            return Err(ListError::CommandFailed(failure(&output)));
        }
        let listing: Value = serde_json::from_slice(&output.stdout)
            .map_err(|e| ListError::MalformedPayload(format!("not JSON ({e})")))?;
        match refused_listing(&listing) {
            Some((code, message)) => Err(ListError::Refused(code, message)),
            None => Ok(listing),
        }
    }

    /// `command run <id> --args-json - --json [--loom=<app>] [--expect <n>] [--read-only]`.
    pub async fn run(&self, request: &RunRequest) -> Result<Value, RunError> {
        let mut args: Vec<String> = [
            "command",
            "run",
            &request.command,
            "--args-json",
            "-",
            "--json",
        ]
        .map(String::from)
        .to_vec();
        if let Some(loom) = &request.loom_id {
            args.push(format!("--loom={loom}"));
        }
        if let Some(version) = request.expected_version {
            args.extend(["--expect".to_string(), version.to_string()]);
        }
        if request.read_only {
            args.push("--read-only".to_string());
        }
        let stdin_bytes =
            serde_json::to_vec(&request.args).map_err(|e| RunError::NotSent(e.to_string()))?;
        let mut child = self
            .command(&args)
            .spawn()
            .map_err(|e| RunError::NotSent(format!("{} did not start ({e})", self.shown())))?;
        if let Some(mut stdin) = child.stdin.take() {
            // A host that exits without reading its arguments shows up below
            // as a lost answer.
            let _ = stdin.write_all(&stdin_bytes).await;
            drop(stdin);
        }
        let output = tokio::time::timeout(HOST_TIMEOUT, child.wait_with_output())
            .await
            .map_err(|_| RunError::Lost("the host's CLI did not answer in time".into()))?
            .map_err(|e| RunError::Lost(e.to_string()))?;
        if output.status.code() == Some(USAGE_ERROR_STATUS) {
            return Err(RunError::NotSent(format!(
                "the host's CLI refused the call's command line ({})",
                failure(&output)
            )));
        }
        if !answered(&output) {
            return Err(RunError::Lost(failure(&output)));
        }
        let value: Value = serde_json::from_slice(&output.stdout).map_err(|e| {
            RunError::Lost(format!(
                "the host's CLI printed something that is not JSON ({e})"
            ))
        })?;
        if !value.is_object() {
            return Err(RunError::Lost(
                "the host's CLI printed JSON that is not an outcome object".into(),
            ));
        }
        Ok(value)
    }

    fn shown(&self) -> String {
        self.config.cli_path.display().to_string()
    }
}

/// The host's code and sentence when it answered the listing with a
/// refusal — an outcome (`ok: false`, a `code` and a `message`) where the
/// rows would be, as the broker answers for an ended job — rather than a
/// listing.
fn refused_listing(answer: &Value) -> Option<(String, String)> {
    if answer.get("commands").is_some() || answer.get("ok") != Some(&Value::Bool(false)) {
        return None;
    }
    let text = |key: &str| {
        answer
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    Some((text("code"), text("message")))
}

/// Whether the host answered: it exited 0, or [`REFUSED_STATUS`] with its
/// outcome on stdout.
fn answered(output: &std::process::Output) -> bool {
    output.status.success() || output.status.code() == Some(REFUSED_STATUS)
}

fn failure(output: &std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let last: String = last.chars().take(300).collect();
    match output.status.code() {
        Some(code) if last.is_empty() => format!("it exited with status {code}"),
        Some(code) => format!("it exited with status {code}: {last}"),
        None => "it was stopped by a signal".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_app_name_is_space_slash_app_of_slugs() {
        for good in [
            "demo/runs",
            "jeff/run-club-2",
            &format!("a/{}", "b".repeat(40)),
        ] {
            assert!(is_app_name(good), "{good}");
        }
        for bad in [
            "",
            "runs",
            "--read-only",
            "-a/b",
            "a/-b",
            "Demo/runs",
            "demo/runs/x",
            "demo/",
            "/runs",
            "demo/runs ",
            "demo/1runs",
            "démo/runs",
            &format!("a/{}", "b".repeat(41)),
        ] {
            assert!(!is_app_name(bad), "{bad:?}");
        }
    }
}
