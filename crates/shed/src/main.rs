//! The `shed` binary: runs the host (`up`, `serve`, `mcp`) and administers it.

mod command_cli;
mod example;
mod http;
mod job_cli;
mod login_cli;
mod serve;
mod up;
// Written by the host crate's owner: `person add`, `space add`, `member add`,
// `token create`, `deploy`.
mod admin;

use std::{net::SocketAddr, path::PathBuf, process::ExitCode};

use clap::{Args, Parser, Subcommand};

/// A server answer is built of many small strings and JSON values, made and
/// freed per call on several threads; mimalloc does that faster than the
/// system allocator (a fifth of the server's time went to glibc malloc).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// shed: a self-hosted platform of spaces and small apps whose commands reach
/// your AI agent — typed, listed, checked and attributed.
///
/// New here? Run `shed up`: it makes a person, a space and a demo app, prints
/// the MCP address and a token for your MCP client, and serves.
#[derive(Parser)]
#[command(name = "shed", version, about, long_about)]
struct Cli {
    /// The folder holding shed's database and apps. Created when missing.
    #[arg(long, global = true, env = "SHED_DATA", default_value = "shed-data")]
    data: PathBuf,

    /// Keep the data in a PostgreSQL database instead of the data folder's
    /// SQLite file: postgres://user[:password]@host[:port]/database. Several
    /// shed servers may share one.
    #[arg(long, global = true, env = "SHED_DATABASE_URL", value_name = "URL")]
    database: Option<String>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print shed's version.
    Version,
    /// Start here. On a new data folder: make the person `you`, the space
    /// `demo` and its run club app, print the MCP address, a token and a
    /// client configuration to paste; then serve. On an existing one: serve.
    Up(ServeArgs),
    /// Serve the MCP door (Streamable HTTP at /mcp) for the data folder.
    Serve(ServeArgs),
    /// Speak MCP on stdin/stdout as one person — for an MCP client that
    /// starts its servers as commands.
    Mcp(McpArgs),
    /// The host-command protocol's CLI, as a harness runs it: `list` the
    /// commands a job may run, `run` one. Reads only LOOM_PAGE_RPC_QUEUE and
    /// LOOM_COMMAND_JOB_ID.
    #[command(subcommand, name = "command")]
    Protocol(command_cli::CommandCommand),
    /// Jobs for agents: `create` one for a person with a scope, `end` it, `list` them.
    #[command(subcommand)]
    Job(job_cli::JobCommand),
    #[command(flatten)]
    Admin(admin::AdminCommand),
    #[command(flatten)]
    Web(login_cli::WebCommand),
}

/// Where to listen and the address people reach.
#[derive(Args, Clone)]
pub struct ServeArgs {
    /// The address and port to listen on.
    #[arg(long, default_value = "127.0.0.1:7700")]
    listen: SocketAddr,
    /// The address people and MCP clients use to reach this server, such as
    /// https://shed.example.org. Default: http://localhost:<listen port>.
    #[arg(long, env = "SHED_PUBLIC_URL")]
    public_url: Option<String>,
    /// The broker's queue for `shed command …`: a Unix socket, made mode
    /// 0600. Default: <data>/command-queue.sock.
    #[arg(long, value_name = "PATH")]
    queue: Option<PathBuf>,
}

impl ServeArgs {
    /// The public URL, without a trailing slash.
    pub fn public_url(&self) -> String {
        match &self.public_url {
            Some(url) => url.trim_end_matches('/').to_string(),
            None => format!("http://localhost:{}", self.listen.port()),
        }
    }
}

#[derive(Args)]
struct McpArgs {
    /// The handle of the person every request is made as (see `shed person add`).
    #[arg(long = "as", value_name = "HANDLE")]
    handle: String,
    /// The address the server is reached at, for the app addresses in answers.
    #[arg(long, env = "SHED_PUBLIC_URL", default_value = "http://localhost:7700")]
    public_url: String,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Protocol(command) = &cli.command {
        return command_cli::run(command); // no runtime, no logs: it starts fast
    }
    let serving = matches!(cli.command, Command::Up(_) | Command::Serve(_));
    logs(if serving { "info" } else { "warn" });
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("shed: could not start its runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("shed: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let place = serve::Place {
        data: cli.data,
        database: cli.database,
    };
    match cli.command {
        Command::Version => {
            println!("shed {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        Command::Up(args) => up::up(&place, &args).await,
        Command::Serve(args) => serve::serve(&place, &args).await,
        Command::Protocol(_) => Ok(()), // answered before the runtime started
        Command::Job(command) => job_cli::run(command, &place).await,
        Command::Mcp(args) => serve::stdio(&place, &args.handle, &args.public_url).await,
        Command::Admin(command) => admin::run(command, &place).await,
        Command::Web(command) => login_cli::run(command, &place).await,
    }
}

/// Logs go to stderr (stdout is the MCP stream of `shed mcp`), filtered by
/// RUST_LOG, else at `default` level.
fn logs(default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}
