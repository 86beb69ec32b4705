//! `shed command list|run`: the host-command protocol's CLI, the one a
//! harness runs. It reads only `LOOM_PAGE_RPC_QUEUE` (the broker's queue) and
//! `LOOM_COMMAND_JOB_ID` (the job), sends one request and prints the answer.
//! It needs no data folder and no runtime: it starts, asks and exits.
//!
//! It runs inside a job: a harness (or a person trying the protocol) sets
//! the two variables; without the queue it says what a job is and how to
//! make one.
//!
//! Exit status: 0 when the host answered and ran it; 3 when the host
//! answered with a refusal (the outcome, `ok: false` and its `code`, still
//! on stdout); 1 when the queue could not be reached or the answer was
//! lost; 2 for a call this CLI could not even send (bad flags, args that
//! are not JSON).
//!
//! What it prints carries app data (rows, titles, messages): a control or
//! bidirectional formatting character in it is written as an escape —
//! `--json` as JSON's own (`\u009b`, still the same JSON), else `\u{9b}`.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::Value;
use shed_broker::client::{self, ClientError};
use shed_broker::protocol::{Request, RunRequest};
use shed_broker::{JOB_ENV_VAR, QUEUE_ENV_VAR};
use shed_host::app_data::{plain, plain_json};

const ENVIRONMENT: &str = "\
`shed command` runs inside a job: what an agent may run for a person, and until
when. `shed job create --person you --allow 'demo/runs.*'` makes one and prints
its secret; an agent's harness (shed-harness) then runs `shed command` with:
  LOOM_PAGE_RPC_QUEUE   the broker's queue: the socket `shed serve` or `shed up`
                        opened (default <data>/command-queue.sock)
  LOOM_COMMAND_JOB_ID   the job's secret, as `shed job create` printed it

Nothing else is read: shed's global flags (--data, --database, --public-url,
--log-format) are taken and ignored here, and no data folder is opened.

Exit status: 0 when the host ran it; 3 when the host refused it (the outcome,
with `ok: false` and its `code`, still on stdout); 1 when the queue could not be
reached or the answer was lost; 2 when nothing could be sent.";

/// The exit status of a call the host answered with a refusal: its outcome
/// is on stdout all the same. shed-harness reads it as an answer.
const REFUSED_STATUS: u8 = 3;

/// Run an app's commands as an agent, through the broker of `shed serve`.
#[derive(Subcommand)]
pub enum CommandCommand {
    /// List the commands the job may run, as the protocol's rows.
    #[command(after_help = ENVIRONMENT)]
    List(ListArgs),
    /// Run one command for the job and print its outcome.
    #[command(after_help = ENVIRONMENT)]
    Run(RunArgs),
}

#[derive(Args)]
pub struct ListArgs {
    /// Print `{ "commands": [row, …] }` (without it: one line per command).
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct RunArgs {
    /// The command: `<space>/<app>.<command>` (e.g. demo/runs.log_run) or a
    /// built-in (apps.list, graph.query, graph.apply, …).
    name: String,
    /// The command's arguments as a JSON object, or `-` to read them from stdin.
    #[arg(long = "args-json", value_name = "JSON|-", default_value = "{}")]
    args_json: String,
    /// Print the outcome as JSON: { ok, id, code, mayHaveLanded, completed,
    /// body, ifc, version, message } (without it: the message).
    #[arg(long)]
    json: bool,
    /// The app a built-in acts on, as <space>/<app> (e.g. demo/runs).
    #[arg(long, value_name = "SPACE/APP")]
    loom: Option<String>,
    /// Refuse with code `conflict` unless the app's data version is this.
    #[arg(long, value_name = "VERSION")]
    expect: Option<u64>,
    /// Run only if the command reads and the job grants it a read-only run.
    #[arg(long)]
    read_only: bool,
}

/// Runs `shed command …` and says how it went.
pub fn run(command: &CommandCommand) -> ExitCode {
    match ask(command) {
        Ok(Answered::Ran) => ExitCode::SUCCESS,
        Ok(Answered::Refused) => ExitCode::from(REFUSED_STATUS),
        Err(Failure::NotSent(why)) => {
            eprintln!("shed command: {why}");
            ExitCode::from(2)
        }
        Err(Failure::NoAnswer(why)) => {
            eprintln!("shed command: {why}");
            ExitCode::FAILURE
        }
    }
}

/// How the host answered.
enum Answered {
    Ran,
    /// An outcome with `ok: false`: the broker or the command layer refused.
    Refused,
}

enum Failure {
    NotSent(String),
    NoAnswer(String),
}

fn ask(command: &CommandCommand) -> Result<Answered, Failure> {
    let queue = std::env::var_os(QUEUE_ENV_VAR).filter(|q| !q.is_empty()).ok_or_else(|| {
        Failure::NoAnswer(format!(
            "{QUEUE_ENV_VAR} is not set — `shed command` runs inside a job, as an agent's harness \
             runs it: a job is what an agent may run for a person, and `shed job create --person \
             <handle> --allow '<space>/<app>.*'` makes one and prints its secret; then set \
             {QUEUE_ENV_VAR} to the broker's queue, the socket `shed serve` or `shed up` opened \
             (<data>/command-queue.sock unless --queue said otherwise), and {JOB_ENV_VAR} to the \
             job's secret"
        ))
    })?;
    let queue = PathBuf::from(queue);
    let job = std::env::var(JOB_ENV_VAR).ok().filter(|j| !j.is_empty());
    let (request, json) = match command {
        CommandCommand::List(args) => (Request::List { job }, args.json),
        CommandCommand::Run(args) => {
            let request = RunRequest {
                job,
                command: args.name.clone(),
                args: read_args(&args.args_json)?,
                loom: args.loom.clone(),
                expect: args.expect,
                read_only: args.read_only,
                actor: None,
            };
            (Request::Run(Box::new(request)), args.json)
        }
    };
    let answer = client::ask(&queue, &request).map_err(|e| match e {
        ClientError::Unreachable(why) | ClientError::Lost(why) => Failure::NoAnswer(why),
    })?;
    // What an app holds reaches the terminal escaped: the JSON as JSON's
    // escapes (the same JSON to a program), the message as `\u{…}`.
    let shown = if json {
        plain_json(&answer.to_string())
    } else {
        plain(&human(&answer), true)
    };
    // SIGPIPE stays ignored here (a broker hanging up is exit 1 with a
    // sentence): a reader that has gone away ends the printing quietly.
    if let Err(error) = writeln!(std::io::stdout().lock(), "{shown}")
        && error.kind() != std::io::ErrorKind::BrokenPipe
    {
        eprintln!("shed command: could not print the answer: {error}");
    }
    Ok(if answer.get("ok") == Some(&Value::Bool(false)) {
        Answered::Refused
    } else {
        Answered::Ran
    })
}

/// `--args-json`: JSON text, or `-` for stdin.
fn read_args(given: &str) -> Result<Value, Failure> {
    let text = if given == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| Failure::NotSent(format!("could not read the args from stdin ({e})")))?;
        text
    } else {
        given.to_string()
    };
    if text.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    let args: Value = serde_json::from_str(&text).map_err(|e| {
        Failure::NotSent(format!(
            "the args are not JSON ({e}) — give an object, like {{\"who\": \"Ada\", \"miles\": 5}}"
        ))
    })?;
    if !args.is_object() {
        return Err(Failure::NotSent(
            "the args are JSON but not an object — give an object of the command's arguments, like {\"who\": \"Ada\"}"
                .to_string(),
        ));
    }
    Ok(args)
}

/// The answer as a person reads it: a listing's names, or an outcome's message.
fn human(answer: &Value) -> String {
    if let Some(rows) = answer.get("commands").and_then(Value::as_array) {
        if rows.is_empty() {
            return "this job may run no commands".to_string();
        }
        return rows
            .iter()
            .map(|row| {
                let text = |key: &str| row.get(key).and_then(Value::as_str).unwrap_or("");
                format!(
                    "{} [{}, {}] — {}",
                    text("name"),
                    text("effect"),
                    text("scope"),
                    text("title")
                )
            })
            .collect::<Vec<_>>()
            .join("\n");
    }
    let message = answer.get("message").and_then(Value::as_str).unwrap_or("");
    match answer.get("code").and_then(Value::as_str) {
        Some("ok") | None => message.to_string(),
        Some(code) => format!("{code}: {message}"),
    }
}

/// Starts the broker's queue for `shed serve`: at `queue`, or
/// `<data>/command-queue.sock`, under the data folder's serve lock, serving
/// at most `connections` at once.
pub fn start_queue(
    host: &shed_host::Host,
    data: &std::path::Path,
    queue: Option<&std::path::Path>,
    connections: u64,
) -> anyhow::Result<shed_broker::Queue> {
    let path = queue.map_or_else(
        || data.join(shed_broker::DEFAULT_QUEUE_NAME),
        std::path::Path::to_path_buf,
    );
    let broker = std::sync::Arc::new(shed_broker::Broker::new(host.clone()));
    let connections = usize::try_from(connections).unwrap_or(usize::MAX);
    Ok(shed_broker::Queue::start(broker, data, &path, connections)?)
}
