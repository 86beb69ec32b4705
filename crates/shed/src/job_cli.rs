//! `shed job create|end|list`: the jobs an agent runs under. A job is for
//! one person, scoped by globs over command names, and ends when ended or
//! when its time is up. Its secret (printed alone on stdout by `create`) is
//! what a harness passes as `LOOM_COMMAND_JOB_ID`; its public name
//! (`job-3`, which `create` says on stderr) is what `list`, rows, answers
//! and logs show.

use std::io::IsTerminal;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, Subcommand};
use shed_broker::jobs::{self, DEFAULT_TTL};

/// Jobs: what an agent may run, for whom, and until when.
#[derive(Subcommand)]
pub enum JobCommand {
    /// Make a job for a person and print its secret alone (keep it: only
    /// its hash is stored; the job's public name is said on stderr).
    Create(CreateArgs),
    /// End a job now: its agent runs nothing more.
    End(EndArgs),
    /// List the jobs: name, person, state, until when, scope.
    List(ListArgs),
}

#[derive(Args)]
pub struct CreateArgs {
    /// The handle of the person the agent acts for.
    #[arg(long, value_name = "HANDLE")]
    person: String,
    /// A glob of the commands the job may list and run, e.g. 'demo/runs.*' or
    /// graph.query (repeat for more). With no --allow and no --read-only,
    /// every command the person reaches.
    #[arg(long, value_name = "GLOB")]
    allow: Vec<String>,
    /// A glob of read commands the job may run read-only (repeat for more):
    /// they are stamped readOnlyGranted in the listing.
    #[arg(long = "read-only", value_name = "GLOB")]
    read_only: Vec<String>,
    /// How long the job lasts: 90s, 30m, 2h, 1h30m, 7d.
    #[arg(long, value_name = "DURATION", default_value = DEFAULT_TTL)]
    ttl: String,
    /// Also write the host configuration shed-harness reads
    /// (`--loom-commands-config`) to FILE: this shed binary as cliPath,
    /// LOOM_COMMAND_JOB_ID as jobIdEnvVar, and the broker's queue. It holds
    /// no secret: the harness reads the job's from a file of its own. Made
    /// mode 0600; a file of yours there is replaced, a symbolic link or
    /// another account's file refused (and no job made).
    #[arg(long, value_name = "FILE")]
    host_config: Option<PathBuf>,
    /// The broker's queue the host configuration names, when `shed serve`
    /// was given --queue. Default: <data>/command-queue.sock.
    #[arg(long, value_name = "PATH", requires = "host_config")]
    queue: Option<PathBuf>,
}

#[derive(Args)]
pub struct EndArgs {
    /// The job's name, as `shed job list` shows it (job-3), or its secret,
    /// as `shed job create` printed it.
    job: String,
}

#[derive(Args)]
pub struct ListArgs {
    /// Print a JSON list instead of lines.
    #[arg(long)]
    json: bool,
}

/// Runs `shed job …` on the data folder.
pub async fn run(command: JobCommand, place: &crate::serve::Place) -> anyhow::Result<()> {
    let open = || crate::serve::open_for_cli(place);
    match command {
        JobCommand::Create(args) => {
            let ttl = jobs::parse_ttl(&args.ttl)?;
            if let Some(file) = &args.host_config {
                // Refused before a job is made, so a refusal leaves none.
                ours_to_replace(file)?;
            }
            let host = open().await?;
            let made = jobs::create(&host, &args.person, args.allow, args.read_only, ttl).await?;
            if let Some(file) = &args.host_config {
                let queue = args
                    .queue
                    .clone()
                    .unwrap_or_else(|| place.data.join(shed_broker::DEFAULT_QUEUE_NAME));
                if let Err(error) = write_host_config(file, &queue) {
                    // No job whose secret was never shown stays running.
                    host.end_job(&made.job.name).await?;
                    return Err(error);
                }
                eprintln!(
                    "wrote shed-harness's host configuration to {} — pass it as --loom-commands-config",
                    file.display()
                );
            }
            println!("{}", made.secret);
            // Where the secret went: above, on a terminal; else wherever
            // standard output was sent (a file, a pipe) — not on screen.
            let went = if std::io::stdout().is_terminal() {
                "the line above is its secret"
            } else {
                "its secret went to standard output (where it was sent, not this screen)"
            };
            eprintln!(
                "made {} for {} — {went}, shown this once (only its hash is kept); rows and `shed job list` name the job {}",
                made.job.name, made.job.person.handle, made.job.name
            );
        }
        JobCommand::End(args) => {
            let job = open().await?.end_job(args.job.trim()).await?;
            println!("{}", jobs::line(&job));
        }
        JobCommand::List(args) => {
            let all = open().await?.jobs().await?;
            if args.json {
                let list: Vec<serde_json::Value> = all.iter().map(jobs::to_json).collect();
                println!("{}", serde_json::Value::Array(list));
            } else {
                println!("{}", job_table(&all));
            }
        }
    }
    Ok(())
}

/// Writes the host configuration shed-harness reads for a job on this shed:
/// this binary as `cliPath`, `LOOM_COMMAND_JOB_ID` as `jobIdEnvVar`, the
/// broker's `queue` — each path absolute, as the harness requires.
fn write_host_config(file: &Path, queue: &Path) -> anyhow::Result<()> {
    let cli = std::env::current_exe().context(
        "could not tell where this shed binary is, for the host configuration's cliPath",
    )?;
    let queue = std::path::absolute(queue)
        .with_context(|| format!("could not make {} an absolute path", queue.display()))?;
    let config = serde_json::json!({
        "cliPath": cli,
        "jobIdEnvVar": shed_broker::JOB_ENV_VAR,
        "transport": { "kind": "broker", "queuePath": queue },
    });
    let text = serde_json::to_string_pretty(&config)?;
    let could_not = || {
        format!(
            "could not write the host configuration to {} — no job was left running",
            file.display()
        )
    };
    if ours_to_replace(file)? {
        std::fs::remove_file(file).with_context(could_not)?;
    }
    // A new file, private, never through a link: whatever appeared at
    // FILE since it was looked at is refused, not written into.
    let mut made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(HOST_CONFIG_MODE)
        .custom_flags(libc::O_NOFOLLOW)
        .open(file)
        .with_context(could_not)?;
    made.write_all(format!("{text}\n").as_bytes())
        .with_context(could_not)
}

/// The mode a host configuration is made with: the account's alone. It
/// holds no secret, but it says where the broker's queue is, and what
/// shed binary runs for the job: nobody else's to read or change.
const HOST_CONFIG_MODE: u32 = 0o600;

/// Whether `file`, where a host configuration is to be written, is a file
/// of this account's to replace (`false`: nothing is there) — refused when
/// it is a symbolic link (its target would be written), not a regular
/// file, or another account's.
fn ours_to_replace(file: &Path) -> anyhow::Result<bool> {
    let shown = file.display();
    let found = match std::fs::symlink_metadata(file) {
        Ok(found) => found,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(error) => {
            anyhow::bail!(
                "could not look at {shown} ({error}) — name another path with --host-config"
            )
        }
    };
    if found.file_type().is_symlink() {
        anyhow::bail!(
            "{shown} is a symbolic link — shed writes the host configuration to a file of its own, never through a link; remove the link or name another path with --host-config"
        );
    }
    if !found.file_type().is_file() {
        anyhow::bail!(
            "{shown} is not a regular file — name a path for a new file with --host-config"
        );
    }
    // SAFETY: geteuid takes nothing, cannot fail and touches no memory of ours.
    let me = unsafe { libc::geteuid() };
    if found.uid() != me {
        anyhow::bail!(
            "{shown} belongs to another account (uid {}) — shed replaces only a file of its own; name another path with --host-config",
            found.uid()
        );
    }
    Ok(true)
}

/// `shed job list`: a row per job, by name — never a secret.
fn job_table(all: &[shed_host::agents::Job]) -> String {
    let now = shed_host::agents::now_millis();
    let rows: Vec<Vec<String>> = all
        .iter()
        .map(|job| {
            let until = match (job.ended_at, job.expires_at) {
                (Some(at), _) => format!("ended {}", crate::table::millis(at)),
                (None, Some(at)) => crate::table::millis(at),
                (None, None) => "-".to_string(),
            };
            vec![
                job.name.clone(),
                job.person.handle.clone(),
                job.state(now).as_str().to_string(),
                until,
                job.allow.join(" "),
                if job.read_only.is_empty() {
                    "-".to_string()
                } else {
                    job.read_only.join(" ")
                },
            ]
        })
        .collect();
    crate::table::table(
        &["JOB", "PERSON", "STATE", "UNTIL", "ALLOW", "READ-ONLY"],
        &rows,
        "no jobs yet — `shed job create --person <handle>` makes one",
    )
}
