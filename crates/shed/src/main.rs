//! The `shed` binary: runs the host (`up`, `serve`, `mcp`) and administers it.

mod activity_cli;
mod app_cli;
mod backup_cli;
mod command_cli;
mod example;
mod forwarded;
mod health;
mod http;
mod job_cli;
mod login_cli;
mod migrate_cli;
mod serve;
mod table;
mod telemetry;
mod up;
// Written by the host crate's owner: `person add`, `space add`, `member add`,
// `token create`, `deploy`.
mod admin;

use std::io::IsTerminal;
use std::time::Duration;
use std::{net::SocketAddr, path::PathBuf, process::ExitCode};

use anyhow::Context;
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};

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
    /// The folder holding shed's database and apps. `up` and `serve` make
    /// it when missing; every other command needs it there.
    #[arg(long, global = true, env = "SHED_DATA", default_value = serve::DEFAULT_DATA)]
    data: PathBuf,

    /// Keep the data in a PostgreSQL database instead of the data folder's
    /// SQLite file: postgres://user[:password]@host[:port]/database. Several
    /// shed servers may share one.
    #[arg(long, global = true, env = "SHED_DATABASE_URL", value_name = "URL")]
    database: Option<String>,

    /// The address people and MCP clients reach the server at, such as
    /// https://shed.example.org — where the links and app addresses shed
    /// prints point. `serve` and `up` default to http://localhost:<listen
    /// port>; every other command to the address the last `shed serve` or
    /// `shed up` on this data served at.
    #[arg(long, global = true, env = "SHED_PUBLIC_URL", value_name = "URL")]
    public_url: Option<String>,

    /// How log lines are written to stderr: `text` (coloured only when
    /// stderr is a terminal and NO_COLOR is unset) or `json` (one object a
    /// line). RUST_LOG picks what is logged.
    #[arg(
        long,
        global = true,
        env = "SHED_LOG_FORMAT",
        value_enum,
        default_value_t = LogFormat::Text
    )]
    log_format: LogFormat,

    #[command(subcommand)]
    command: Command,
}

/// The two ways log lines are written.
#[derive(Clone, Copy, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Print shed's version.
    Version,
    /// Start here. On a new data folder: make the person `you`, the space
    /// `demo` and its run club app, print the MCP address, a token, a
    /// one-time sign-in link and a client configuration to paste; then
    /// serve. On an existing one: print the configuration, and serve.
    Up(ServeArgs),
    /// Serve the MCP door (Streamable HTTP at /mcp) for the data folder.
    Serve(ServeCommandArgs),
    /// Copy the database to a new FILE while shed serves: a consistent copy
    /// as of the moment it starts, holding everything shed serves (people,
    /// spaces, apps and their files, data, tokens, jobs).
    Backup(backup_cli::BackupArgs),
    /// Make a new data folder (--data, new or empty) from a FILE `shed
    /// backup` made; a folder holding anything is refused.
    Restore(backup_cli::RestoreArgs),
    /// Copy the data folder's SQLite database — people, spaces, apps and
    /// their files, data with its history, tokens, sessions, jobs — into an
    /// empty PostgreSQL database (--to URL), check the rows of every table
    /// on both and print them. All or nothing; the folder is not changed.
    Migrate(migrate_cli::MigrateArgs),
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
    /// Apps: `list` them, see an app's `versions`, `rollback` to one, put it
    /// in the `trash`, `restore` it, `purge` it for good.
    #[command(subcommand)]
    App(app_cli::AppCommand),
    /// What happened in your spaces: every write to the apps you may read,
    /// newest first — when, which write, who, which agent or client,
    /// through which door and command, which entities — and the calls
    /// refused.
    ///
    /// Example: shed activity --as ada --job job-3
    Activity(activity_cli::ActivityArgs),
    /// Undo one write to an app's data (an owner or editor of its space):
    /// each entity it changed back as it was, what it made tombstoned,
    /// what it tombstoned back — as a new write, itself undoable.
    ///
    /// Example: shed undo demo/runs@12 --as ada
    Undo(activity_cli::UndoArgs),
    /// Show an entity of an app: its version, edges, and each version of
    /// its history newest first — who, via what, and what changed.
    Entity(activity_cli::EntityArgs),
    #[command(flatten)]
    Admin(admin::AdminCommand),
    #[command(flatten)]
    Web(login_cli::WebCommand),
}

/// Where to listen, and how to serve.
#[derive(Args, Clone)]
pub struct ServeArgs {
    /// The address and port to listen on: 127.0.0.1:7700 (the default),
    /// localhost:7700, or 0.0.0.0:7700 for every address (then give
    /// --public-url too, the address others reach).
    #[arg(long, value_name = "ADDRESS:PORT", value_parser = listen_address, conflicts_with = "port")]
    listen: Option<SocketAddr>,
    /// The port to listen on, on 127.0.0.1: the same as --listen
    /// localhost:PORT.
    #[arg(long, value_name = "PORT")]
    port: Option<u16>,
    /// The broker's queue for `shed command …`: a Unix socket, made mode
    /// 0600. Default: <data>/command-queue.sock.
    #[arg(long, value_name = "PATH")]
    queue: Option<PathBuf>,
    #[command(flatten)]
    telemetry: telemetry::TelemetryArgs,
    /// On SIGTERM or SIGINT, how long calls in flight may take to finish
    /// before their connections are closed, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    drain_seconds: u64,
    /// Root certificates (PEM) to trust besides the system's when fetching
    /// an OAuth client's metadata document (a `client_id` that is an https
    /// URL) — for clients served under a private CA.
    #[arg(long, value_name = "FILE", env = "SHED_OAUTH_EXTRA_CA")]
    oauth_extra_ca: Option<PathBuf>,
    /// A reverse proxy in front of shed, by address or CIDR block: from it,
    /// the header --trusted-proxy-header names says who the client is,
    /// whose address the per-address caps count. Repeat for more (commas in
    /// the variable). Without it the forwarding headers are ignored.
    #[arg(
        long = "trusted-proxy",
        value_name = "ADDRESS|CIDR",
        env = "SHED_TRUSTED_PROXY",
        value_delimiter = ',',
        value_parser = forwarded::trusted_proxy
    )]
    trusted_proxies: Vec<ipnet::IpNet>,
    /// The one forwarding header the trusted proxies keep, and the only one
    /// read: the other is ignored, since a proxy passes a client's own copy
    /// of it on untouched and it names whatever address the client likes.
    /// The client is the right-most address in it that is not a trusted
    /// proxy.
    #[arg(
        long = "trusted-proxy-header",
        value_name = "HEADER",
        env = "SHED_TRUSTED_PROXY_HEADER",
        value_enum,
        default_value = "x-forwarded-for"
    )]
    trusted_proxy_header: forwarded::ProxyHeader,
    /// The address of this shed's privacy policy: linked from the sign-in
    /// and consent pages, and named in the OAuth metadata — as a directory
    /// listing a connector asks. https (http only on localhost).
    #[arg(long, value_name = "URL", env = "SHED_PRIVACY_URL", value_parser = shed_web::PageAddress::parse)]
    privacy_url: Option<shed_web::PageAddress>,
    /// The address of this shed's terms of service: linked and named as
    /// --privacy-url is.
    #[arg(long, value_name = "URL", env = "SHED_TERMS_URL", value_parser = shed_web::PageAddress::parse)]
    terms_url: Option<shed_web::PageAddress>,
    /// A file a directory asks to find on this shed's address, such as a
    /// domain's verification token: serves FILE's bytes at
    /// /.well-known/NAME on the public URL's host (as JSON for a NAME ending
    /// .json, else as text). Read once, at start; at most 64 KiB. Repeat for
    /// more (the variable holds one).
    #[arg(
        long = "well-known-file",
        value_name = "NAME=FILE",
        env = "SHED_WELL_KNOWN_FILE",
        value_parser = shed_web::WellKnownFile::parse
    )]
    well_known_files: Vec<shed_web::WellKnownFile>,
}

/// `shed serve`'s arguments: [`ServeArgs`], and what only development and
/// tests ask (`shed up` never does).
#[derive(Args, Clone)]
pub struct ServeCommandArgs {
    #[command(flatten)]
    serving: ServeArgs,
    /// For development and tests only: fetch OAuth client metadata
    /// documents from loopback addresses, over plain http too. Off by
    /// default; never on a shed others reach.
    #[arg(long, env = "SHED_OAUTH_ALLOW_LOOPBACK_DOCUMENTS")]
    oauth_allow_loopback_documents: bool,
}

/// Where a server listens when given neither --listen nor --port.
const DEFAULT_LISTEN: SocketAddr = SocketAddr::V4(std::net::SocketAddrV4::new(
    std::net::Ipv4Addr::LOCALHOST,
    7700,
));

/// `--listen`'s value: an address and port (`127.0.0.1:7700`,
/// `[::1]:7700`), or `localhost:PORT`, read as 127.0.0.1.
fn listen_address(value: &str) -> Result<SocketAddr, String> {
    let localhost = value
        .strip_prefix("localhost:")
        .and_then(|port| port.parse::<u16>().ok());
    match localhost {
        Some(port) => Ok(SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port))),
        None => value.parse().map_err(|_| {
            format!(
                "{value} is not an address to listen on — give an address and port, like 127.0.0.1:7700, localhost:7700 or 0.0.0.0:7700 (or just --port 7700)"
            )
        }),
    }
}

impl ServeArgs {
    /// The address to listen on: --listen, else 127.0.0.1:--port, else
    /// [`DEFAULT_LISTEN`].
    pub fn listen(&self) -> SocketAddr {
        match (self.listen, self.port) {
            (Some(listen), _) => listen,
            (None, Some(port)) => SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port)),
            (None, None) => DEFAULT_LISTEN,
        }
    }

    /// The public URL `--public-url` gives, else http://localhost:<listen
    /// port>.
    pub fn public_url(&self, given: Option<&str>) -> String {
        match given {
            Some(url) => url.to_string(),
            None => format!("http://localhost:{}", self.listen().port()),
        }
    }

    /// The longest a stop waits for calls in flight.
    pub fn drain(&self) -> Duration {
        Duration::from_secs(self.drain_seconds)
    }

    /// What the operator publishes (--privacy-url, --terms-url,
    /// --well-known-file), each name given once.
    pub fn operator(&self) -> anyhow::Result<shed_web::Operator> {
        shed_web::Operator::new(
            self.privacy_url.clone(),
            self.terms_url.clone(),
            self.well_known_files.clone(),
        )
        .context("--well-known-file")
    }
}

#[derive(Args)]
struct McpArgs {
    /// The handle of the person every request is made as (see `shed person add`).
    #[arg(long = "as", value_name = "HANDLE")]
    handle: String,
}

fn main() -> ExitCode {
    let cli = Cli::try_parse().unwrap_or_else(|error| with_near_subcommand(error).exit());
    if ends_with_its_reader(&cli.command) {
        restore_sigpipe();
    }
    if let Command::Protocol(command) = &cli.command {
        return command_cli::run(command); // no runtime, no logs: it starts fast
    }
    let serving = match &cli.command {
        Command::Up(args) => Some(args),
        Command::Serve(args) => Some(&args.serving),
        _ => None,
    };
    let otlp = serving.and_then(|args| args.telemetry.otlp_endpoint.clone());
    let traces = match logs(
        if serving.is_some() { "info" } else { "warn" },
        cli.log_format,
        otlp.as_deref(),
    ) {
        Ok(traces) => traces,
        Err(error) => {
            eprintln!("shed: {error:#}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("shed: could not start its runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let format = cli.log_format;
    let ran = runtime.block_on(run(cli));
    drop(runtime);
    // Sends the spans not yet exported, outside the runtime (the exporter's
    // client blocks).
    if let Some(traces) = traces
        && let Err(error) = traces.shutdown()
    {
        eprintln!("shed: the last traces could not be sent: {error}");
    }
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            // Every line in the chosen format: JSON logs say it as an event.
            match format {
                LogFormat::Text => eprintln!("shed: {error:#}"),
                LogFormat::Json => tracing::error!("shed: {error:#}"),
            }
            ExitCode::FAILURE
        }
    }
}

/// The most edits a typed subcommand may be from one of shed's for clap's
/// refusal to suggest it, where clap's own likeness found none: one, so
/// `shed uo` suggests `up`.
const SUBCOMMAND_EDITS: usize = 1;

/// clap's refusal of an unknown subcommand, suggesting the one at most
/// [`SUBCOMMAND_EDITS`] away where clap suggested none (its measure misses
/// a short word's typo); any other refusal as it is.
fn with_near_subcommand(mut error: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let typed = match error.get(ContextKind::InvalidSubcommand) {
        Some(ContextValue::String(typed)) if error.kind() == ErrorKind::InvalidSubcommand => {
            typed.clone()
        }
        _ => return error,
    };
    if error.get(ContextKind::SuggestedSubcommand).is_some() {
        return error;
    }
    let command = Cli::command();
    let near = command
        .get_subcommands()
        .map(|sub| sub.get_name())
        .map(|name| (strsim::levenshtein(&typed, name), name))
        .filter(|(edits, _)| *edits <= SUBCOMMAND_EDITS)
        .min();
    if let Some((_, name)) = near {
        error.insert(
            ContextKind::SuggestedSubcommand,
            ContextValue::Strings(vec![name.to_string()]),
        );
    }
    error
}

/// Whether `command` ends, quietly, when the reader of what it prints goes
/// away (`shed activity | head -1`): every command but those that keep
/// sockets or pipes of others open — `up` and `serve` (each client's
/// connection), `mcp` (its client's stdio) — which must see a write to a
/// closed one as an error to answer, not end; and `command`, whose socket
/// to the broker says, when it breaks, that the answer was lost (exit 1,
/// as the README says) — its reader is the harness, which reads it whole.
fn ends_with_its_reader(command: &Command) -> bool {
    !matches!(
        command,
        Command::Up(_) | Command::Serve(_) | Command::Mcp(_) | Command::Protocol(_)
    )
}

/// Gives SIGPIPE back its default disposition, which Rust's runtime sets
/// to ignored before `main`: a write to a pipe whose reader has gone then
/// ends the process as it ends `cat` (status 141 in a shell), where
/// `println!` would panic (exit 101).
fn restore_sigpipe() {
    // SAFETY: signal() with SIG_DFL installs no handler of ours; it runs
    // first thing in main, before any other thread is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let place = serve::Place {
        data: cli.data,
        database: cli.database,
        public_url: cli.public_url,
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
        Command::App(command) => app_cli::run(command, &place).await,
        Command::Activity(args) => activity_cli::activity(args, &place).await,
        Command::Undo(args) => activity_cli::undo(args, &place).await,
        Command::Entity(args) => activity_cli::entity(args, &place).await,
        Command::Backup(args) => backup_cli::backup(&place, &args).await,
        Command::Restore(args) => backup_cli::restore(&place, &args).await,
        Command::Migrate(args) => migrate_cli::migrate(&place, &args).await,
        Command::Mcp(args) => serve::stdio(&place, &args.handle).await,
        Command::Admin(command) => admin::run(command, &place).await,
        Command::Web(command) => login_cli::run(command, &place).await,
    }
}

/// Crates whose lines are capped at a level whatever RUST_LOG asks: rmcp's
/// debug and trace lines hold whole MCP messages — a command's answer, a
/// private view's page with the view key in its address — and a log must
/// never hold a secret.
const CAPPED: &[(&str, tracing::Level)] = &[("rmcp", tracing::Level::INFO)];

/// A crate whose info lines are shed's debug: rmcp logs each session's life
/// (and each sessionless request's) at info, as whole Rust `Debug`
/// structures, where shed logs one line as a session opens and one as it
/// closes. Its info lines show only when RUST_LOG asks it for debug.
const CHATTY: &str = "rmcp";

/// Logs go to stderr (stdout is the MCP stream of `shed mcp`), filtered by
/// RUST_LOG, else at `default` level, and never past [`CAPPED`], as
/// `format` says. Text carries colours only when stderr is a terminal and
/// NO_COLOR is unset, so a log written to a file or a pipe holds no escape
/// codes. With an OTLP endpoint, shed's own spans (debug level, so they
/// cost nothing without it) are exported too, whatever RUST_LOG says; the
/// trace provider is returned, to be shut down at exit.
fn logs(
    default: &str,
    format: LogFormat,
    otlp: Option<&str>,
) -> anyhow::Result<Option<opentelemetry_sdk::trace::SdkTracerProvider>> {
    use tracing_subscriber::{Layer, layer::SubscriberExt, util::SubscriberInitExt};
    let asked = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let capped = tracing_subscriber::filter::Targets::new()
        .with_default(tracing::Level::TRACE)
        .with_targets(CAPPED.iter().copied());
    let asked_of_chatty = std::env::var("RUST_LOG").unwrap_or_else(|_| default.to_string());
    let chatty = tracing_subscriber::filter::Targets::new()
        .with_default(tracing::Level::TRACE)
        .with_target(
            CHATTY,
            if asks_for_debug(&asked_of_chatty, CHATTY) {
                tracing::Level::TRACE
            } else {
                tracing::Level::WARN
            },
        );
    let no_colour = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let lines = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal() && !no_colour);
    let lines = match format {
        LogFormat::Text => lines.boxed(),
        LogFormat::Json => lines.json().boxed(),
    }
    .with_filter(asked)
    .with_filter(capped)
    .with_filter(chatty);
    let (provider, traces) = match otlp {
        Some(endpoint) => {
            let (provider, tracer) = telemetry::otlp(endpoint)?;
            // shed's spans only: a log line stays on stderr.
            let ours = tracing_subscriber::filter::filter_fn(|meta| {
                meta.is_span() && meta.target().starts_with("shed")
            });
            let layer = tracing_opentelemetry::layer()
                .with_tracer(tracer)
                .with_filter(ours);
            (Some(provider), Some(layer))
        }
        None => (None, None),
    };
    let _ = tracing_subscriber::registry()
        .with(lines)
        .with(traces)
        .try_init();
    Ok(provider)
}

/// Whether the RUST_LOG `directives` ask `target` for debug lines: read as
/// targets and levels, else (span or field directives) by the most verbose
/// level they ask of anything.
fn asks_for_debug(directives: &str, target: &str) -> bool {
    match directives.parse::<tracing_subscriber::filter::Targets>() {
        Ok(targets) => targets.would_enable(target, &tracing::Level::DEBUG),
        Err(_) => tracing_subscriber::EnvFilter::try_new(directives)
            .ok()
            .and_then(|filter| filter.max_level_hint())
            .is_some_and(|most| most >= tracing::Level::DEBUG),
    }
}
