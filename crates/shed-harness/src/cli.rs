//! The command line: `shed-harness run | tool | mcp` with the common flags,
//! and the embedder's entry point [`run_cli`]. What the model wrote reaches
//! the terminal only escaped (`progress::escaped`): the answer keeps its
//! newlines and tabs, an error sentence nothing.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use serde_json::{Value, json};

use crate::config;
use crate::ending::{
    EXIT_ANSWERED, EXIT_CODES_HELP, EXIT_FAILED, EXIT_JOB_OVER, EXIT_NOTHING_WRITTEN, EXIT_USAGE,
};
use crate::harness::{DEFAULT_OUTPUT_BOUND, Harness, RunSettings};
use crate::labels::Ceiling;
use crate::model::{ModelError, ModelSettings, ToolChoice, run_task};
use crate::policy::{Mode, PolicyTrace, TaskSlot};
use crate::progress::{Keep, Progress, escaped, json_escaped};
use crate::tools::{ALL_TOOLS, ToolName};
use crate::transcript;

const AFTER_FLAGS: &str = "\
Without a host configuration (--loom-commands-config or CF_HARNESS_LOOM_COMMANDS_CONFIG)
the command tools are absent, and naming one with --allow-tool is refused.

The observation ceiling is the most a run may see of the host's answers. Give it as a
comma list of readers (e.g. `space:jeff,person:ada`, or `public`), or as a JSON label
`{\"readers\": [\"space:jeff\"], \"integrity\": \"trusted\"}` (a trusted ceiling also withholds
untrusted answers). An answer whose readers do not include every reader of the ceiling is
withheld: the model sees only its outcome. Without a ceiling every answer is shown.

The task slot says how the task reached the run, and so what it may do. It is `absent`
unless you say otherwise: under the default policy such a run reads but never writes. When
the person typed the task themselves, bind it so: `--task-slot direct-command`; a task that
arrived with other content (a request a pattern submitted, a message) is `--task-slot context`.

The job id (the secret `shed job create` printed) is read from a file only you may read,
`--command-job-id-file PATH` (mode 0600), or from a descriptor the harness inherits,
`--command-job-id-fd N` (e.g. `3<job-id`) — never from the command line, which `ps` shows.
The --transcript and --policy-trace files are made readable by you alone (0600).";

/// shed-harness: put a host's commands in front of a model.
///
/// The three tools are `list_commands` (what this run may run, as typed
/// signatures), `run_command` (run one command or a batch of up to 16, as the
/// agent) and `run_read_command` (run broker-granted reads). The harness
/// reaches the host only through its command CLI, as the host configuration
/// file says.
#[derive(Debug, Parser)]
#[command(
    name = "shed-harness",
    version,
    after_help = format!("{AFTER_FLAGS}\n\n{EXIT_CODES_HELP}")
)]
struct Cli {
    /// The flags every subcommand takes.
    #[command(flatten)]
    pub common: CommonArgs,
    /// The subcommand: `run`, `tool` or `mcp`.
    #[command(subcommand)]
    pub command: Command,
}

/// Flags every subcommand takes.
#[derive(Debug, Args)]
struct CommonArgs {
    /// The host configuration file, an absolute path (JSON: cliPath,
    /// jobIdEnvVar, transport {kind: "broker", queuePath}).
    #[arg(
        long,
        global = true,
        env = "CF_HARNESS_LOOM_COMMANDS_CONFIG",
        value_name = "ABSOLUTE_PATH"
    )]
    pub loom_commands_config: Option<PathBuf>,
    /// Offer only this tool (repeat for more): list_commands, run_command,
    /// run_read_command. Without it, every available tool is offered.
    #[arg(long = "allow-tool", global = true, value_name = "TOOL")]
    pub allow_tool: Vec<String>,
    /// The policy mode: `off` runs every call; `enforce-explicit` runs
    /// run_command only for a direct-command task; `enforce-strict` also runs
    /// read tools only for a direct-command task, except list_commands and
    /// run_read_command for a context task.
    #[arg(long, global = true, value_enum, default_value = "enforce-explicit")]
    pub policy: Mode,
    /// How the task is bound: direct-command (the person typed it: pass this
    /// to let the run write), context (it arrived with other content),
    /// quoted, or absent (no authority: the default).
    #[arg(long, global = true, value_enum, default_value = "absent")]
    pub task_slot: TaskSlot,
    /// The most this run may observe: a comma list of readers or a JSON label
    /// (see below). Without it every answer is shown.
    #[arg(long, global = true, value_name = "CEILING")]
    pub observation_ceiling: Option<String>,
    /// A file holding the host job id for this invocation (mode 0600, yours),
    /// handed to the host CLI in the variable the configuration's jobIdEnvVar
    /// names.
    #[arg(
        long,
        global = true,
        value_name = "PATH",
        conflicts_with = "command_job_id_fd"
    )]
    pub command_job_id_file: Option<PathBuf>,
    /// An inherited descriptor to read the host job id from, to its end
    /// (e.g. `3<job-id` with `--command-job-id-fd 3`, or a pipe).
    #[arg(long, global = true, value_name = "N")]
    pub command_job_id_fd: Option<u32>,
    /// Refused: a job id on the command line is shown by `ps` to every
    /// account on the machine.
    #[arg(long, global = true, hide = true, value_name = "JOB_ID")]
    pub command_job_id: Option<String>,
    /// The most bytes of JSON one tool result may show the model.
    #[arg(long, global = true, value_name = "BYTES", default_value_t = DEFAULT_OUTPUT_BOUND)]
    pub tool_output_bound: usize,
    /// Append every policy decision to this file as JSON lines.
    #[arg(long, global = true, value_name = "PATH")]
    pub policy_trace: Option<PathBuf>,
    /// Write the run's record (messages, referents, observations) to this
    /// JSON file when the run ends (after every call under `mcp`).
    #[arg(long, global = true, value_name = "PATH")]
    pub transcript: Option<PathBuf>,
}

/// The three ways to drive a run: with a model, one tool by hand, or as an
/// MCP server.
#[derive(Debug, Subcommand)]
enum Command {
    /// Run a task with a model until it answers; print the answer.
    ///
    /// The model is any OpenAI-compatible chat-completions endpoint with tool
    /// calling. The harness offers it the allowed tools and runs each tool call
    /// it makes, under the run's policy.
    Run(RunArgs),
    /// Run one tool by hand, with no model, and print its result as JSON.
    ///
    /// Example: shed-harness --loom-commands-config /etc/host.json tool
    /// run_command --input '{"command": "apps.list"}'
    Tool(ToolArgs),
    /// Serve the allowed tools over MCP on stdin/stdout.
    ///
    /// Point an MCP client at `shed-harness --loom-commands-config … mcp`.
    Mcp,
}

/// The flags of `run`: the task and the model server that works it.
#[derive(Debug, Args)]
struct RunArgs {
    /// The task, as the person or the submitting content gave it.
    #[arg(long)]
    pub task: String,
    /// The model's name, as the endpoint knows it.
    #[arg(long, env = "SHED_HARNESS_MODEL")]
    pub model: String,
    /// The endpoint's base URL; requests go to <base-url>/chat/completions.
    #[arg(long, env = "SHED_HARNESS_BASE_URL")]
    pub base_url: String,
    /// The environment variable holding the endpoint's API key, if it needs one.
    #[arg(long, default_value = "OPENAI_API_KEY", value_name = "VAR")]
    pub api_key_env: String,
    /// The most model turns before the run gives up with a sentence and exit
    /// code 1.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_turns: u32,
    /// What the first turn asks of the model: auto (it chooses), required
    /// (some tool), none (no tool), or a tool's name (that tool). Later turns
    /// ask auto, so a forced first turn can still end in an answer.
    #[arg(long, default_value = "auto", value_name = "auto|required|none|TOOL")]
    pub tool_choice: String,
    /// The most seconds one request to the model server may take.
    #[arg(long, default_value_t = 120, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub request_timeout: u64,
    /// The sampling temperature sent with every request, from 0 to 2; left
    /// out, the server's own default holds (llama-cpp-python's is 0.8, at
    /// which a small model's arguments wander).
    #[arg(long, value_name = "T", value_parser = temperature)]
    pub temperature: Option<f64>,
}

/// Reads `--temperature`: a number from 0 to 2, as OpenAI takes it.
fn temperature(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(t) if (0.0..=2.0).contains(&t) => Ok(t),
        _ => Err(format!(
            "--temperature must be from 0 to 2, and {text} is not"
        )),
    }
}

/// The arguments of `tool`: which tool, and its input.
#[derive(Debug, Args)]
struct ToolArgs {
    /// The tool: list_commands, run_command or run_read_command.
    pub name: String,
    /// The tool's input, as JSON.
    #[arg(long, default_value = "{}")]
    pub input: String,
}

/// What the embedder supplies for one invocation.
#[derive(Clone, Debug, Default)]
pub struct RunCliDependencies {
    /// The host job id of this invocation; nothing else can set it.
    pub command_job_id: Option<String>,
}

/// The embedder's entry point: runs the CLI with `args` (the first is the
/// program name) and returns the exit code. The job id comes from
/// `deps.command_job_id` only; the binary's job id flags in `args` are
/// refused.
pub async fn run_cli<I, T>(args: I, deps: RunCliDependencies) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    let common = &cli.common;
    let refused = if common.command_job_id.is_some() {
        Some(ArgumentError::JobIdOnCommandLine)
    } else if common.command_job_id_file.is_some() || common.command_job_id_fd.is_some() {
        Some(ArgumentError::JobIdFlagOfTheBinary)
    } else {
        None
    };
    if let Some(refused) = refused {
        say_error(refused);
        return EXIT_USAGE;
    }
    execute(cli, deps).await
}

/// The binary's entry point: the job id is read from `--command-job-id-file`
/// or `--command-job-id-fd` and becomes the dependency.
pub async fn binary_main() -> i32 {
    let cli = Cli::parse();
    match job_id(&cli.common) {
        Ok(command_job_id) => execute(cli, RunCliDependencies { command_job_id }).await,
        Err(refused) => {
            say_error(refused);
            EXIT_USAGE
        }
    }
}

/// The job id the binary's flags give, if any.
fn job_id(common: &CommonArgs) -> Result<Option<String>, ArgumentError> {
    if common.command_job_id.is_some() {
        return Err(ArgumentError::JobIdOnCommandLine);
    }
    let read = match (&common.command_job_id_file, common.command_job_id_fd) {
        (Some(path), _) => config::job_id_from_file(path)?,
        (None, Some(fd)) => config::job_id_from_descriptor(fd)?,
        (None, None) => return Ok(None),
    };
    Ok(Some(read))
}

/// Writes `error: <sentence>` on stderr, its controls escaped: a sentence
/// may quote what a model server or the model wrote.
fn say_error(sentence: impl std::fmt::Display) {
    eprintln!("error: {}", escaped(&sentence.to_string(), Keep::OneLine));
}

/// A refusal at argument parsing (exit 2).
#[derive(Debug, thiserror::Error)]
enum ArgumentError {
    /// The host configuration file was refused.
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    /// The job id file or descriptor was refused.
    #[error(transparent)]
    JobId(#[from] config::JobIdError),
    /// The job id was given on the command line (`--command-job-id`).
    #[error(
        "--command-job-id is refused: every account on this machine can read a command line with `ps` — put the job id in a file only you may read and pass --command-job-id-file PATH, or pass it on a descriptor with --command-job-id-fd N"
    )]
    JobIdOnCommandLine,
    /// An embedder's arguments carry the binary's own job id flags.
    #[error(
        "--command-job-id-file and --command-job-id-fd are the shed-harness binary's flags; an embedder supplies the job id as deps.command_job_id"
    )]
    JobIdFlagOfTheBinary,
    /// A tool name (of `--allow-tool`, or `tool`'s) names no tool; it holds
    /// the name.
    #[error(
        "--allow-tool {0} is not a tool — the tools are list_commands, run_command and run_read_command"
    )]
    UnknownTool(String),
    /// A command tool was asked for without a host configuration; it holds
    /// what asked (`--allow-tool run_command`, `tool list_commands`).
    #[error(
        "{0} needs a host configuration — pass --loom-commands-config /absolute/host-config.json or set CF_HARNESS_LOOM_COMMANDS_CONFIG"
    )]
    NeedsConfig(String),
    /// `tool` names a tool the run does not offer; it holds the name, then
    /// the offered tools joined with commas.
    #[error("tool {0} is not among this run's allowed tools ({1})")]
    NotAllowed(String, String),
    /// `--observation-ceiling` did not read.
    #[error("--observation-ceiling: {0}")]
    Ceiling(#[from] crate::labels::LabelError),
    /// `--tool-output-bound` is below 1024 bytes; it holds the bound given.
    #[error("--tool-output-bound must be at least 1024 bytes, and {0} is less")]
    Bound(usize),
    /// `tool`'s `--input` is not JSON; it holds the parser's account.
    #[error("--input is not JSON ({0}) — pass the tool's input as a JSON object")]
    Input(String),
    /// `--tool-choice` was refused.
    #[error(transparent)]
    ToolChoice(#[from] crate::model::ToolChoiceError),
    /// The `--policy-trace` file could not be opened.
    #[error(transparent)]
    Trace(#[from] crate::policy::TraceError),
}

/// Reads the common flags into a run's settings.
fn settings(common: &CommonArgs, deps: &RunCliDependencies) -> Result<RunSettings, ArgumentError> {
    let host = match &common.loom_commands_config {
        Some(path) => Some(config::load(path)?),
        None => None,
    };
    let mut allowed = Vec::new();
    for name in &common.allow_tool {
        let tool = ToolName::parse(name).ok_or_else(|| ArgumentError::UnknownTool(name.clone()))?;
        if host.is_none() {
            return Err(ArgumentError::NeedsConfig(format!("--allow-tool {name}")));
        }
        if !allowed.contains(&tool) {
            allowed.push(tool);
        }
    }
    if common.allow_tool.is_empty() && host.is_some() {
        allowed = ALL_TOOLS.to_vec();
    }
    let ceiling = common
        .observation_ceiling
        .as_deref()
        .map(Ceiling::parse)
        .transpose()?;
    if common.tool_output_bound < 1024 {
        return Err(ArgumentError::Bound(common.tool_output_bound));
    }
    Ok(RunSettings {
        host,
        command_job_id: deps.command_job_id.clone(),
        allowed,
        mode: common.policy,
        task_slot: common.task_slot,
        ceiling,
        output_bound: common.tool_output_bound,
        trace: PolicyTrace::open(common.policy_trace.as_deref())?,
    })
}

async fn execute(cli: Cli, deps: RunCliDependencies) -> i32 {
    let settings = match settings(&cli.common, &deps) {
        Ok(settings) => settings,
        Err(e) => {
            say_error(e);
            return EXIT_USAGE;
        }
    };
    let transcript_path = cli.common.transcript.clone();
    match cli.command {
        Command::Tool(args) => tool(settings, args, transcript_path.as_deref()).await,
        Command::Mcp => {
            let harness = Arc::new(Harness::new(settings));
            match crate::mcp::serve(harness, transcript_path).await {
                Ok(()) => EXIT_ANSWERED,
                Err(e) => {
                    say_error(e);
                    EXIT_FAILED
                }
            }
        }
        Command::Run(args) => run(settings, args, transcript_path.as_deref()).await,
    }
}

async fn tool(settings: RunSettings, args: ToolArgs, transcript_path: Option<&Path>) -> i32 {
    let checked = (|| {
        let tool = ToolName::parse(&args.name)
            .ok_or_else(|| ArgumentError::UnknownTool(args.name.clone()))?;
        if settings.host.is_none() {
            return Err(ArgumentError::NeedsConfig(format!("tool {}", args.name)));
        }
        if !settings.allowed.contains(&tool) {
            let offered: Vec<&str> = settings.allowed.iter().map(|t| t.as_str()).collect();
            return Err(ArgumentError::NotAllowed(
                args.name.clone(),
                offered.join(", "),
            ));
        }
        let input: Value =
            serde_json::from_str(&args.input).map_err(|e| ArgumentError::Input(e.to_string()))?;
        Ok((tool, input))
    })();
    let (tool, input) = match checked {
        Ok(checked) => checked,
        Err(e) => {
            say_error(e);
            return EXIT_USAGE;
        }
    };
    let harness = Harness::new(settings);
    let result = harness.call(tool.as_str(), input).await;
    // A host's rows may hold what a terminal acts on: shown as JSON escapes.
    println!(
        "{}",
        json_escaped(&serde_json::to_string_pretty(&result).unwrap_or_default())
    );
    let written = transcript::write(
        transcript_path,
        json!({ "journal": harness.journal_json() }),
    );
    if let Some(sentence) = harness.trace_failure() {
        eprintln!("error: {sentence}");
        return EXIT_FAILED;
    }
    if let Some(sentence) = harness.job_over() {
        say_error(sentence);
        return EXIT_JOB_OVER;
    }
    written
}

async fn run(settings: RunSettings, args: RunArgs, transcript_path: Option<&Path>) -> i32 {
    let tool_choice = match ToolChoice::parse(&args.tool_choice, &settings.allowed) {
        Ok(choice) => choice,
        Err(e) => {
            say_error(ArgumentError::from(e));
            return EXIT_USAGE;
        }
    };
    let slot = settings.task_slot;
    let harness = Harness::new(settings);
    let model = ModelSettings {
        base_url: args.base_url,
        model: args.model,
        api_key: std::env::var(&args.api_key_env).ok(),
        max_turns: args.max_turns as usize,
        tool_choice,
        request_timeout: Duration::from_secs(args.request_timeout),
        temperature: args.temperature,
    };
    let progress = Progress::on_terminal();
    let outcome = run_task(&harness, &model, &args.task, slot, &progress).await;
    let (code, messages) = match outcome {
        Ok(done) => {
            // Escaped on a terminal and in a pipe alike: a pager shows a
            // pipe's escape sequences too, and a program reading the
            // answer wants its text, not a terminal's commands.
            println!("{}", escaped(&done.answer, Keep::LinesAndTabs));
            match harness.nothing_written() {
                Some(line) => {
                    println!("{}", escaped(&line, Keep::OneLine));
                    (EXIT_NOTHING_WRITTEN, done.messages)
                }
                None => (EXIT_ANSWERED, done.messages),
            }
        }
        Err(failure) => {
            let code = match failure.error {
                ModelError::JobOver(_) => EXIT_JOB_OVER,
                _ => EXIT_FAILED,
            };
            say_error(failure.error);
            (code, failure.messages)
        }
    };
    let record = json!({
        "task": args.task,
        "taskSlot": slot.as_str(),
        "messages": messages,
        "journal": harness.journal_json(),
    });
    let written = transcript::write(transcript_path, record);
    if code == EXIT_ANSWERED { written } else { code }
}
